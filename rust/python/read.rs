//! Bindings of the executor's read path: `read_task` streams one FileScanTask's rows
//! (deletes applied) as an Arrow C stream.

use std::sync::Arc;

use arrow::pyarrow::PyArrowType;
use arrow::record_batch::{RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};
use pyo3::prelude::*;

use super::errors::PyResultExt;
use crate::arrow::ReadOptions;
use crate::scan::FileScanTask;
use crate::spec::{NameMapping, Schema};

/// Reads one task (its byte range, position and equality deletes applied) projected to
/// `projected_schema_json` (which may name `_file` / `_pos` by their reserved field ids),
/// `batch_size` rows per batch at most, stopping after `limit` rows when given. Data files
/// without Parquet field ids are read through `name_mapping` (the table's
/// `schema.name-mapping.default` JSON) when given.
#[pyfunction]
#[pyo3(signature = (task, projected_schema_json, batch_size=65536, limit=None, name_mapping=None))]
fn read_task(
    py: Python<'_>,
    task: &str,
    projected_schema_json: &str,
    batch_size: usize,
    limit: Option<usize>,
    name_mapping: Option<&str>,
) -> PyResult<PyArrowType<Box<dyn RecordBatchReader + Send>>> {
    let task = FileScanTask::from_json(task).py()?;
    let schema = Schema::from_json_str(projected_schema_json).py()?;
    let name_mapping = name_mapping.map(NameMapping::from_json).transpose().py()?.map(Arc::new);
    let opts = ReadOptions { batch_size: batch_size.max(1), limit, name_mapping, ..Default::default() };
    let reader = py.detach(move || crate::arrow::read_task(&task, &schema, opts)).py()?;
    let schema = reader.schema();
    Ok(PyArrowType(Box::new(TaskReader { inner: reader, schema })))
}

/// A core `TaskReader` as a `RecordBatchReader` for the C stream interface. A core error
/// mid-stream travels as an external Arrow error whose message keeps the file path.
struct TaskReader {
    inner: crate::arrow::TaskReader,
    schema: SchemaRef,
}

impl Iterator for TaskReader {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.inner.next().map(|r| r.map_err(|e| ArrowError::ExternalError(Box::new(e))))
    }
}

impl RecordBatchReader for TaskReader {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// The distinct non-null join keys of a MERGE source (every column of `keys` is a key
/// column), probed by the target scan on the executors: `semi_join` keeps the rows of a
/// batch whose key columns hold one of them.
#[pyclass(name = "KeySet", frozen)]
struct PyKeySet {
    inner: crate::arrow::key_set::KeySet,
}

#[pymethods]
impl PyKeySet {
    #[new]
    fn new(py: Python<'_>, keys: PyArrowType<RecordBatch>) -> PyResult<Self> {
        let batch = keys.0;
        let inner = py.detach(move || crate::arrow::key_set::KeySet::from_columns(batch.columns())).py()?;
        Ok(PyKeySet { inner })
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// The rows of `batch` whose columns `key_columns` (in the set's column order) hold a key.
    fn semi_join(
        &self,
        py: Python<'_>,
        batch: PyArrowType<RecordBatch>,
        key_columns: Vec<String>,
    ) -> PyResult<PyArrowType<RecordBatch>> {
        let batch = batch.0;
        let out = py.detach(|| self.inner.semi_join(&batch, &key_columns)).py()?;
        Ok(PyArrowType(out))
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyKeySet>()?;
    m.add_function(wrap_pyfunction!(read_task, m)?)?;
    Ok(())
}
