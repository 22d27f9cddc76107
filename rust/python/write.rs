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
use crate::spec::{PrimitiveType, SortOrder, Transform};
use crate::writer::zorder::ZOrder;
use crate::writer::{WriteOptions, WriterMode};

#[pyfunction]
fn check_arrow_schema(metadata: &PyTableMetadata, schema: PyArrowType<ArrowSchema>) -> PyResult<()> {
    let table = &metadata.inner;
    let target = crate::writer::data_writer::write_schema(table, &schema.0).py()?;
    crate::writer::check_arrow_schema(&target, &schema.0).py()
}

#[pyfunction]
#[pyo3(signature = (metadata, batches, write_id, task_id, *, mode=None, max_open_files=None, sort=None, sort_buffer_bytes=None, target_file_size_bytes=None, spec_id=None, sort_order=None, zorder=None))]
#[allow(clippy::too_many_arguments)]
fn write_data_files(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    batches: PyArrowType<RecordBatchStreamReader>,
    write_id: &str,
    task_id: u32,
    mode: Option<&str>,
    max_open_files: Option<usize>,
    sort: Option<bool>,
    sort_buffer_bytes: Option<usize>,
    target_file_size_bytes: Option<u64>,
    spec_id: Option<i32>,
    sort_order: Option<&str>,
    zorder: Option<&str>,
) -> PyResult<Vec<String>> {
    let sort_order = sort_order.map(|j| custom_sort_order(&metadata.inner, j)).transpose().py()?;
    let zorder = zorder.map(|j| checked_zorder(&metadata.inner, j)).transpose().py()?;
    let opts = WriteOptions {
        mode: mode.map(WriterMode::parse).transpose().py()?.unwrap_or_default(),
        max_open_files,
        sort: sort.unwrap_or_else(|| crate::writer::data_writer::sorts_by_default(&metadata.inner)),
        sort_buffer_bytes,
        target_file_size_bytes,
        spec_id,
        sort_order,
        zorder,
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

/// A sort order to write by instead of the table's default (a rewrite's `sort_order`,
/// JSON), checked against the current schema: its columns exist and are primitive, its
/// transforms apply to them. Its order id may be 0 with fields: the id files record for an
/// order that is none of the table's.
fn custom_sort_order(table: &crate::spec::TableMetadata, json: &str) -> crate::Result<SortOrder> {
    let value: serde_json::Value = serde_json::from_str(json)
        .map_err(|e| crate::error::invalid_data("expected a sort order as JSON").with_source(e))?;
    let order = SortOrder::from_json(&value)?;
    crate::writer::check_sort_order(table.current_schema(), &order)?;
    Ok(order)
}

/// Checks a custom sort order (JSON) as `write_data_files(sort_order=...)` will, before
/// anything is written: ValidationError / NotSupportedError naming the column otherwise.
#[pyfunction]
fn check_sort_order(metadata: &PyTableMetadata, sort_order: &str) -> PyResult<()> {
    custom_sort_order(&metadata.inner, sort_order).map(|_| ()).py()
}

/// A z-order (JSON: `{"source-ids": [...], "var-length-contribution": n, "max-output-size":
/// n}`) checked against the current schema: top-level columns of types Java can z-order.
fn checked_zorder(table: &crate::spec::TableMetadata, json: &str) -> crate::Result<ZOrder> {
    let z = ZOrder::from_json(json)?;
    z.bind(table.current_schema())?;
    Ok(z)
}

/// Checks a z-order (JSON) as `write_data_files(zorder=...)` will, before anything is written.
#[pyfunction]
fn check_zorder(metadata: &PyTableMetadata, zorder: &str) -> PyResult<()> {
    checked_zorder(&metadata.inner, zorder).map(|_| ()).py()
}

/// The z-values (binary) of rows whose columns are `arrays`, of Iceberg types `types`, as
/// Iceberg Java's z-order rewrite computes them (`writer::zorder`). Arrays of another Arrow
/// type than the Iceberg type's (large or view strings, say) are cast first.
#[pyfunction]
#[pyo3(signature = (arrays, types, var_length_contribution=8, max_output_size=2147483647))]
fn z_values(
    py: Python<'_>,
    arrays: Vec<PyArrowType<ArrayData>>,
    types: Vec<String>,
    var_length_contribution: i64,
    max_output_size: i64,
) -> PyResult<PyArrowType<ArrayData>> {
    if arrays.len() != types.len() {
        return Err(validation(format!(
            "z_values: expected a type per array ({} arrays), found {} types",
            arrays.len(),
            types.len()
        )))
        .py();
    }
    let types = types.iter().map(|t| PrimitiveType::parse(t)).collect::<crate::Result<Vec<_>>>().py()?;
    let arrays: Vec<_> = arrays.into_iter().map(|a| make_array(a.0)).collect();
    let out = py
        .detach(move || {
            // Options checked as the rewrite checks them (one column is enough here).
            let z = ZOrder::new(vec![0], var_length_contribution, max_output_size)?;
            let cast = arrays
                .iter()
                .zip(&types)
                .map(|(a, ty)| {
                    let want = match ty {
                        // Any timezone: a timestamptz's instant is what counts.
                        PrimitiveType::Timestamptz
                            if matches!(
                                a.data_type(),
                                arrow_schema::DataType::Timestamp(
                                    arrow_schema::TimeUnit::Microsecond,
                                    Some(_)
                                )
                            ) =>
                        {
                            return Ok(a.clone())
                        }
                        _ => crate::arrow::primitive_to_arrow(ty)?,
                    };
                    if a.data_type() == &want {
                        return Ok(a.clone());
                    }
                    arrow_cast::cast(a, &want).map_err(|e| {
                        validation(format!(
                            "z_values: cannot cast {} values to {want} for a {ty} column",
                            a.data_type()
                        ))
                        .with_source(e)
                    })
                })
                .collect::<crate::Result<Vec<_>>>()?;
            let columns: Vec<(&dyn Array, &PrimitiveType)> =
                cast.iter().map(|a| a.as_ref()).zip(&types).collect();
            crate::writer::zorder::z_values(&columns, z.var_length_contribution, z.max_output_size)
        })
        .py()?;
    Ok(PyArrowType(out.to_data()))
}

fn arrow_stream(
    reader: RecordBatchStreamReader,
) -> impl Iterator<Item = crate::Result<arrow::record_batch::RecordBatch>> {
    reader.map(|r| {
        r.map_err(|e| crate::error::invalid_data("cannot read the input Arrow stream").with_source(e))
    })
}

fn descriptors(files: &[crate::manifest::DataFile]) -> PyResult<Vec<String>> {
    files.iter().map(|f| f.to_descriptor().py()).collect()
}

/// Merge-on-read delete task: position deletes for the rows each planned task's residual
/// matches. Returns (delete file descriptors, rows deleted, descriptors of the file-scoped
/// delete files merged into the new ones, which the commit must remove).
#[pyfunction]
fn delete_rows(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    tasks: Vec<String>,
    write_id: &str,
    task_id: u32,
) -> PyResult<(Vec<String>, i64, Vec<String>)> {
    let md = metadata.inner.clone();
    let res = py
        .detach(move || {
            let tasks = tasks
                .iter()
                .map(|t| crate::scan::FileScanTask::from_json(t))
                .collect::<crate::Result<Vec<_>>>()?;
            crate::writer::delete_rows(md, &tasks, write_id, task_id)
        })
        .py()?;
    Ok((descriptors(&res.delete_files)?, res.deleted_rows, descriptors(&res.replaced_deletes)?))
}

/// Position-delete files from a stream of (file_path, pos) rows of the data files of the
/// planned tasks given as JSON. Returns (delete file descriptors, rows deleted, replaced
/// delete file descriptors).
#[pyfunction]
fn write_position_deletes(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    tasks: Vec<String>,
    rows: PyArrowType<RecordBatchStreamReader>,
    write_id: &str,
    task_id: u32,
) -> PyResult<(Vec<String>, i64, Vec<String>)> {
    let md = metadata.inner.clone();
    let tasks = tasks
        .iter()
        .map(|t| crate::scan::FileScanTask::from_json(t))
        .collect::<crate::Result<Vec<_>>>()
        .py()?;
    let reader = rows.0;
    let res = py
        .detach(move || {
            crate::writer::write_position_deletes(md, &tasks, arrow_stream(reader), write_id, task_id)
        })
        .py()?;
    Ok((descriptors(&res.delete_files)?, res.deleted_rows, descriptors(&res.replaced_deletes)?))
}

/// Equality-delete files on `equality_ids` from a stream of key rows, partitioned by the
/// default spec or, with `spec_ids`, one copy per spec (see `equality_delete_specs`).
#[pyfunction]
#[pyo3(signature = (metadata, equality_ids, keys, write_id, task_id, spec_ids=None))]
fn write_equality_deletes(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    equality_ids: Vec<i32>,
    keys: PyArrowType<RecordBatchStreamReader>,
    write_id: &str,
    task_id: u32,
    spec_ids: Option<Vec<i32>>,
) -> PyResult<Vec<String>> {
    let md = metadata.inner.clone();
    let reader = keys.0;
    let specs = spec_ids.unwrap_or_else(|| vec![md.default_spec_id()]);
    let files = py
        .detach(move || {
            crate::writer::write_equality_deletes_in(
                &md,
                &equality_ids,
                arrow_stream(reader),
                write_id,
                task_id,
                &specs,
            )
        })
        .py()?;
    descriptors(&files)
}

/// The specs equality deletes on `equality_ids` must be written under to reach every live
/// row of `snapshot_id`, or None when some live spec's rows cannot be reached by key.
#[pyfunction]
#[pyo3(signature = (metadata, snapshot_id, equality_ids))]
fn equality_delete_specs(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    snapshot_id: Option<i64>,
    equality_ids: Vec<i32>,
) -> PyResult<Option<Vec<i32>>> {
    let md = metadata.inner.clone();
    py.detach(move || crate::writer::equality_delete_specs(&md, snapshot_id, &equality_ids)).py()
}

/// The Arrow schema of equality-delete rows on `equality_ids` (refuses what Iceberg does).
#[pyfunction]
fn equality_delete_schema(
    metadata: &PyTableMetadata,
    equality_ids: Vec<i32>,
) -> PyResult<PyArrowType<ArrowSchema>> {
    let s = crate::writer::equality_delete_schema(&metadata.inner, &equality_ids).py()?;
    Ok(PyArrowType(crate::arrow::schema_to_arrow(&s).py()?))
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

/// DataFile descriptors for existing Parquet files (`table.add_files`): schema checked,
/// metrics from the footers, one partition tuple per file from its data, or from
/// `partitions` (each file's Hive-style path values, one text or None per partition field).
/// Up to four files at a time; the first failure (naming its file) fails the whole call.
#[pyfunction]
#[pyo3(signature = (metadata, paths, partitions=None, spec_id=None))]
fn import_parquet_files(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    paths: Vec<String>,
    partitions: Option<Vec<Vec<Option<String>>>>,
    spec_id: Option<i32>,
) -> PyResult<Vec<String>> {
    let md = metadata.inner.clone();
    if let Some(p) = &partitions {
        if p.len() != paths.len() {
            return Err(validation(format!(
                "expected one partition per file, found {} for {} files",
                p.len(),
                paths.len()
            )))
            .py();
        }
    }
    let jobs: Vec<(String, Option<Vec<Option<String>>>)> = match partitions {
        Some(p) => paths.into_iter().zip(p.into_iter().map(Some)).collect(),
        None => paths.into_iter().map(|path| (path, None)).collect(),
    };
    let files = py
        .detach(move || -> crate::Result<Vec<crate::manifest::DataFile>> {
            let workers = jobs.len().clamp(1, 4);
            let chunk = jobs.len().div_ceil(workers).max(1);
            std::thread::scope(|s| {
                let handles: Vec<_> = jobs
                    .chunks(chunk)
                    .map(|part| {
                        let md = &md;
                        s.spawn(move || {
                            part.iter()
                                .map(|(p, hive)| {
                                    crate::writer::parquet_import::import_parquet_file(
                                        md,
                                        p,
                                        hive.as_deref(),
                                        spec_id,
                                    )
                                })
                                .collect::<crate::Result<Vec<_>>>()
                        })
                    })
                    .collect();
                let mut out = Vec::with_capacity(jobs.len());
                for h in handles {
                    let part = h.join().map_err(|_| {
                        crate::error::Error::new(
                            crate::error::ErrorKind::Internal,
                            "an import thread panicked",
                        )
                    })??;
                    out.extend(part);
                }
                Ok(out)
            })
        })
        .py()?;
    descriptors(&files)
}

/// The name mapping `add_files` reads files without field ids with (the table's
/// `schema.name-mapping.default`, else one made from the current schema), as JSON.
#[pyfunction]
fn import_name_mapping(metadata: &PyTableMetadata) -> PyResult<String> {
    crate::writer::parquet_import::import_name_mapping(&metadata.inner).and_then(|m| m.to_json()).py()
}

/// `rows` copies of the `write-default` of the current schema's top-level field
/// `field_id` (as the writer stores it for input without the column), or `None` when the
/// field has no write default.
#[pyfunction]
fn write_default_array(
    metadata: &PyTableMetadata,
    field_id: i32,
    rows: usize,
) -> PyResult<Option<PyArrowType<ArrayData>>> {
    let schema = metadata.inner.current_schema();
    let field = schema
        .field_by_id(field_id)
        .ok_or_else(|| validation(format!("the table's current schema has no field with id {field_id}")))
        .py()?;
    let target = crate::arrow::field_to_arrow(field).py()?;
    let kind = crate::spec::DefaultKind::Write;
    let array =
        crate::arrow::defaults::default_array(field, kind, target.data_type(), rows, &field.name).py()?;
    Ok(array.map(|a| PyArrowType(a.to_data())))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(write_default_array, m)?)?;
    m.add_function(wrap_pyfunction!(import_parquet_files, m)?)?;
    m.add_function(wrap_pyfunction!(import_name_mapping, m)?)?;
    m.add_function(wrap_pyfunction!(check_arrow_schema, m)?)?;
    m.add_function(wrap_pyfunction!(write_data_files, m)?)?;
    m.add_function(wrap_pyfunction!(check_sort_order, m)?)?;
    m.add_function(wrap_pyfunction!(check_zorder, m)?)?;
    m.add_function(wrap_pyfunction!(z_values, m)?)?;
    m.add_function(wrap_pyfunction!(apply_transform, m)?)?;
    m.add_function(wrap_pyfunction!(delete_rows, m)?)?;
    m.add_function(wrap_pyfunction!(write_position_deletes, m)?)?;
    m.add_function(wrap_pyfunction!(write_equality_deletes, m)?)?;
    m.add_function(wrap_pyfunction!(equality_delete_schema, m)?)?;
    m.add_function(wrap_pyfunction!(equality_delete_specs, m)?)?;
    Ok(())
}
