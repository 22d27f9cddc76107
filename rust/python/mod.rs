//! The pyo3 bindings: the only module that imports pyo3. Exposed as `icefloe._native`.
//!
//! Metadata crosses as JSON strings, data as Arrow through the C Data Interface.
//! Every core `Error` is mapped to a Python exception exactly once, in `errors.rs`.
//! Heavy calls (I/O, decoding, encoding) release the GIL.

mod commit;
mod errors;
mod expr;
mod metadata;
mod read;
mod scan;

use arrow::ffi_stream::RecordBatchStreamReader;
use arrow::pyarrow::PyArrowType;
use arrow_schema::Schema as ArrowSchema;
use pyo3::prelude::*;

use self::errors::PyResultExt;
use self::metadata::PyTableMetadata;
use crate::spec::Schema;

#[pyfunction]
fn schema_from_arrow(schema: PyArrowType<ArrowSchema>) -> PyResult<String> {
    let s = crate::arrow::schema_from_arrow(&schema.0).py()?;
    Ok(s.to_json_string())
}

#[pyfunction]
fn schema_to_arrow(schema_json: &str) -> PyResult<PyArrowType<ArrowSchema>> {
    let s = Schema::from_json_str(schema_json).py()?;
    Ok(PyArrowType(crate::arrow::schema_to_arrow(&s).py()?))
}

#[pyfunction]
fn check_arrow_schema(metadata: &PyTableMetadata, schema: PyArrowType<ArrowSchema>) -> PyResult<()> {
    crate::writer::check_arrow_schema(metadata.inner.current_schema(), &schema.0).py()
}

#[pyfunction]
fn write_data_files(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    batches: PyArrowType<RecordBatchStreamReader>,
    write_id: &str,
    task_id: u32,
) -> PyResult<Vec<String>> {
    let md = metadata.inner.clone();
    let reader = batches.0;
    let files = py
        .detach(move || {
            crate::writer::write_data_files(
                &md,
                reader.map(|r| {
                    r.map_err(|e| {
                        crate::error::invalid_data("cannot read the input Arrow stream").with_source(e)
                    })
                }),
                write_id,
                task_id,
            )
        })
        .py()?;
    files.iter().map(|f| f.to_descriptor().py()).collect()
}

#[pymodule]
#[pyo3(name = "_native")]
fn native_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    m.add_class::<PyTableMetadata>()?;
    m.add_function(wrap_pyfunction!(schema_from_arrow, m)?)?;
    m.add_function(wrap_pyfunction!(schema_to_arrow, m)?)?;
    m.add_function(wrap_pyfunction!(check_arrow_schema, m)?)?;
    m.add_function(wrap_pyfunction!(write_data_files, m)?)?;
    scan::register(m)?;
    read::register(m)?;
    commit::register(m)?;
    expr::register(m)?;
    Ok(())
}
