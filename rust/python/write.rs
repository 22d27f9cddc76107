//! Bindings of the executor write path: the input schema check, the write task
//! (`write_data_files` with writer options) and transforms on Arrow arrays.

use arrow::array::{make_array, Array, ArrayData};
use arrow::ffi_stream::RecordBatchStreamReader;
use arrow::pyarrow::PyArrowType;
use arrow_schema::Schema as ArrowSchema;
use pyo3::prelude::*;

use super::errors::PyResultExt;
use super::metadata::PyTableMetadata;
use crate::error::validation;
use crate::spec::{PrimitiveType, Transform};
use crate::writer::{WriteOptions, WriterMode};

#[pyfunction]
fn check_arrow_schema(metadata: &PyTableMetadata, schema: PyArrowType<ArrowSchema>) -> PyResult<()> {
    crate::writer::check_arrow_schema(metadata.inner.current_schema(), &schema.0).py()
}

#[pyfunction]
#[pyo3(signature = (metadata, batches, write_id, task_id, *, mode=None, max_open_files=None, sort=false, sort_buffer_bytes=None))]
#[allow(clippy::too_many_arguments)]
fn write_data_files(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    batches: PyArrowType<RecordBatchStreamReader>,
    write_id: &str,
    task_id: u32,
    mode: Option<&str>,
    max_open_files: Option<usize>,
    sort: bool,
    sort_buffer_bytes: Option<usize>,
) -> PyResult<Vec<String>> {
    let opts = WriteOptions {
        mode: mode.map(WriterMode::parse).transpose().py()?.unwrap_or_default(),
        max_open_files,
        sort,
        sort_buffer_bytes,
    };
    let md = metadata.inner.clone();
    let reader = batches.0;
    let files = py
        .detach(move || {
            crate::writer::write_data_files_opts(
                &md,
                reader.map(|r| {
                    r.map_err(|e| {
                        crate::error::invalid_data("cannot read the input Arrow stream").with_source(e)
                    })
                }),
                write_id,
                task_id,
                &opts,
            )
        })
        .py()?;
    files.iter().map(|f| f.to_descriptor().py()).collect()
}

/// Applies a partition transform (`bucket[16]`, `day`, ...) to an Arrow array of values of
/// Iceberg type `source_type` (`long`, `decimal(9, 2)`, ...). The array is first cast to
/// the Arrow type icefloe uses for that Iceberg type.
#[pyfunction]
fn apply_transform(
    py: Python<'_>,
    transform: &str,
    source_type: &str,
    array: PyArrowType<ArrayData>,
) -> PyResult<PyArrowType<ArrayData>> {
    let t = Transform::parse(transform).py()?;
    let ty = PrimitiveType::parse(source_type).py()?;
    let input = make_array(array.0);
    let out = py
        .detach(move || {
            let want = crate::arrow::primitive_to_arrow(&ty)?;
            let input = if input.data_type() == &want
                || matches!((input.data_type(), &want), (arrow_schema::DataType::Timestamp(u1, Some(_)), arrow_schema::DataType::Timestamp(u2, Some(_))) if u1 == u2)
            {
                input
            } else {
                arrow_cast::cast_with_options(&input, &want, &arrow_cast::CastOptions { safe: false, ..Default::default() }).map_err(|e| {
                    validation(format!("cannot cast {} values to {want} for a {ty} source", input.data_type()))
                        .with_source(e)
                })?
            };
            crate::spec::apply_transform_array(&t, &ty, input.as_ref())
        })
        .py()?;
    Ok(PyArrowType(out.to_data()))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(check_arrow_schema, m)?)?;
    m.add_function(wrap_pyfunction!(write_data_files, m)?)?;
    m.add_function(wrap_pyfunction!(apply_transform, m)?)?;
    Ok(())
}
