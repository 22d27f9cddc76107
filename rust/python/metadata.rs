//! `TableMetadata` for Python: an immutable handle; nested parts cross as JSON.

use std::collections::BTreeMap;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyAny;
use serde_json::Value;

use super::errors::{NotFoundError, PyResultExt};
use crate::spec::{MetadataUpdate, Schema, SortOrder, TableMetadata};

#[pyclass(name = "TableMetadata", module = "icefloe._native", frozen)]
pub struct PyTableMetadata {
    pub(crate) inner: Arc<TableMetadata>,
}

impl PyTableMetadata {
    pub(crate) fn new(md: TableMetadata) -> Self {
        Self { inner: Arc::new(md) }
    }
}

/// JSON value -> Python object (dicts, lists, ints, strings) through the json module.
fn to_py_obj<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (v.to_string(),))
}

fn parse_json(text: &str, what: &str) -> crate::Result<Value> {
    serde_json::from_str(text)
        .map_err(|e| crate::error::validation(format!("{what} is not valid JSON")).with_source(e))
}

fn snapshot_json(s: &crate::spec::Snapshot) -> PyResult<Value> {
    serde_json::to_value(s).map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))
}

#[pymethods]
impl PyTableMetadata {
    #[staticmethod]
    #[pyo3(signature = (text, metadata_location=None))]
    fn from_json(text: &str, metadata_location: Option<String>) -> PyResult<Self> {
        let md = TableMetadata::from_json_str(text, metadata_location.clone())
            .map_err(|e| match metadata_location {
                Some(loc) => e.with_context("file", loc),
                None => e,
            })
            .py()?;
        Ok(Self::new(md))
    }

    #[staticmethod]
    #[pyo3(signature = (schema_json, partition_spec_json, sort_order_json, location, properties, format_version=2))]
    fn new_table(
        schema_json: &str,
        partition_spec_json: Option<&str>,
        sort_order_json: Option<&str>,
        location: &str,
        properties: BTreeMap<String, String>,
        format_version: i32,
    ) -> PyResult<Self> {
        let schema = Schema::from_json_str(schema_json).py()?;
        let spec = partition_spec_json
            .map(|j| parse_json(j, "partition spec").and_then(|v| crate::spec::PartitionSpec::from_json(&v)))
            .transpose()
            .py()?;
        let order = sort_order_json
            .map(|j| parse_json(j, "sort order").and_then(|v| SortOrder::from_json(&v)))
            .transpose()
            .py()?;
        let md = TableMetadata::new_table(schema, spec, order, location, properties, format_version).py()?;
        Ok(Self::new(md))
    }

    fn to_json(&self) -> PyResult<String> {
        self.inner.to_json_string().py()
    }

    #[getter]
    fn metadata_location(&self) -> Option<String> {
        self.inner.metadata_location().map(str::to_string)
    }

    /// This metadata as the version a catalog just wrote at `location` (its own JSON, so
    /// nothing to parse back: a 10,000-snapshot table's metadata takes ~60 ms to parse).
    fn at_location(&self, location: String) -> Self {
        Self::new(self.inner.as_ref().clone().with_metadata_location(location))
    }

    #[getter]
    fn format_version(&self) -> i32 {
        self.inner.format_version()
    }

    #[getter]
    fn table_uuid(&self) -> Option<String> {
        self.inner.table_uuid().map(str::to_string)
    }

    #[getter]
    fn location(&self) -> String {
        self.inner.location().to_string()
    }

    /// The folder under which new data and delete files go (`write.data.path`, ...).
    #[getter]
    fn data_location(&self) -> String {
        self.inner.location_provider().data_root().to_string()
    }

    /// The folder of new manifests, manifest lists and catalog metadata JSON
    /// (`write.metadata.path`, else `<location>/metadata`).
    #[getter]
    fn metadata_root(&self) -> String {
        self.inner.location_provider().metadata_root().to_string()
    }

    /// Where a new data file named `file_name` of the partition at `partition_path` goes.
    #[pyo3(signature = (file_name, partition_path=None))]
    fn new_data_location(&self, file_name: &str, partition_path: Option<&str>) -> String {
        self.inner.location_provider().new_data_location(partition_path, file_name)
    }

    #[getter]
    fn last_sequence_number(&self) -> i64 {
        self.inner.last_sequence_number()
    }

    #[getter]
    fn last_updated_ms(&self) -> i64 {
        self.inner.last_updated_ms()
    }

    #[getter]
    fn last_column_id(&self) -> i32 {
        self.inner.last_column_id()
    }

    #[getter]
    fn current_schema_id(&self) -> i32 {
        self.inner.current_schema_id()
    }

    #[getter]
    fn default_spec_id(&self) -> i32 {
        self.inner.default_spec_id()
    }

    #[getter]
    fn default_sort_order_id(&self) -> i32 {
        self.inner.default_sort_order_id()
    }

    #[getter]
    fn properties(&self) -> BTreeMap<String, String> {
        self.inner.properties().iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }

    /// Each leaf column's metrics mode (`none`, `counts`, `truncate(N)`, `full`) by field id, as
    /// the writers keep metrics for the current schema (Java's `MetricsConfig.forTable`).
    fn metrics_modes(&self) -> PyResult<BTreeMap<i32, String>> {
        let schema = self.inner.current_schema();
        let config = crate::writer::MetricsConfig::for_table(
            self.inner.properties(),
            schema,
            self.inner.default_sort_order(),
        )
        .py()?;
        Ok(crate::writer::metrics_leaf_ids(schema)
            .into_iter()
            .map(|id| (id, config.mode(id).to_string()))
            .collect())
    }

    #[getter]
    fn current_snapshot_id(&self) -> Option<i64> {
        self.inner.current_snapshot_id()
    }

    /// v3: the row id the next commit's new rows start at (None before v3).
    #[getter]
    fn next_row_id(&self) -> Option<i64> {
        self.inner.next_row_id()
    }

    #[pyo3(signature = (schema_id=None))]
    fn schema_json(&self, schema_id: Option<i32>) -> PyResult<String> {
        let s = match schema_id {
            None => Some(self.inner.current_schema()),
            Some(id) => self.inner.schema_by_id(id),
        };
        s.map(|s| s.to_json_string())
            .ok_or_else(|| NotFoundError::new_err(format!("schema id {schema_id:?} is not in the table")))
    }

    fn schemas_json(&self) -> Vec<String> {
        self.inner.schemas().iter().map(|s| s.to_json_string()).collect()
    }

    #[pyo3(signature = (spec_id=None))]
    fn spec_json(&self, spec_id: Option<i32>) -> PyResult<String> {
        let s = match spec_id {
            None => Some(self.inner.default_spec()),
            Some(id) => self.inner.spec_by_id(id),
        };
        match s {
            Some(s) => Ok(s.to_json().to_string()),
            None => Err(NotFoundError::new_err(format!("partition spec id {spec_id:?} is not in the table"))),
        }
    }

    fn specs_json(&self) -> PyResult<Vec<String>> {
        Ok(self.inner.partition_specs().iter().map(|s| s.to_json().to_string()).collect())
    }

    fn sort_orders_json(&self) -> PyResult<Vec<String>> {
        Ok(self.inner.sort_orders().iter().map(|s| s.to_json().to_string()).collect())
    }

    #[pyo3(signature = (order_id=None))]
    fn sort_order_json(&self, order_id: Option<i32>) -> PyResult<String> {
        let s = match order_id {
            None => Some(self.inner.default_sort_order()),
            Some(id) => self.inner.sort_order_by_id(id),
        };
        match s {
            Some(s) => Ok(s.to_json().to_string()),
            None => Err(NotFoundError::new_err(format!("sort order id {order_id:?} is not in the table"))),
        }
    }

    fn snapshots<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        self.inner.snapshots().iter().map(|s| to_py_obj(py, &snapshot_json(s)?)).collect()
    }

    fn snapshot_by_id<'py>(&self, py: Python<'py>, snapshot_id: i64) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.inner.snapshot_by_id(snapshot_id).map(|s| to_py_obj(py, &snapshot_json(s)?)).transpose()
    }

    fn refs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let v = serde_json::to_value(self.inner.refs())
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
        to_py_obj(py, &v)
    }

    fn snapshot_log<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let v = serde_json::to_value(self.inner.snapshot_log())
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
        to_py_obj(py, &v)
    }

    /// The `statistics` entries (one JSON object per statistics file).
    fn statistics<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        self.inner.statistics().iter().map(|v| to_py_obj(py, v)).collect()
    }

    /// The `partition-statistics` entries.
    fn partition_statistics<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        self.inner.partition_statistics().iter().map(|v| to_py_obj(py, v)).collect()
    }

    fn metadata_log<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let v = serde_json::to_value(self.inner.metadata_log())
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
        to_py_obj(py, &v)
    }

    fn with_properties(&self, updates: BTreeMap<String, String>, removals: Vec<String>) -> PyResult<Self> {
        Ok(Self::new(self.inner.with_properties(updates, removals).py()?))
    }

    fn with_location(&self, location: &str) -> PyResult<Self> {
        Ok(Self::new(self.inner.with_location(location).py()?))
    }

    /// This metadata as a write to `branch` sees it (its head as the current snapshot).
    fn branch_view(&self, branch: &str) -> PyResult<Self> {
        Ok(Self::new(self.inner.branch_view(branch).py()?))
    }

    /// The next version after a write on `branch_view(branch)` produced `produced`; with
    /// `branch=None` the new snapshot is staged (no ref moves; write-audit-publish).
    #[pyo3(signature = (produced, branch))]
    fn commit_to_branch(&self, produced: &PyTableMetadata, branch: Option<&str>) -> PyResult<Self> {
        let now = chrono::Utc::now().timestamp_millis();
        Ok(Self::new(self.inner.commit_to_branch(&produced.inner, branch, now).py()?))
    }

    /// The next version with REST-style metadata updates applied (a JSON array of
    /// `{"action": ...}` objects; see `spec::MetadataUpdate`).
    fn apply_updates(&self, updates_json: &str) -> PyResult<Self> {
        let updates = MetadataUpdate::list_from_json_str(updates_json).py()?;
        let now = chrono::Utc::now().timestamp_millis();
        Ok(Self::new(self.inner.apply_updates(&updates, now).py()?))
    }

    fn __repr__(&self) -> String {
        format!(
            "TableMetadata(location={:?}, format_version={}, current_snapshot_id={:?})",
            self.inner.location(),
            self.inner.format_version(),
            self.inner.current_snapshot_id()
        )
    }
}
