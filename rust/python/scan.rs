//! Bindings of scan planning: `plan_scan` returns a `ScanPlan` holding the planned tasks in
//! Rust; Python sees them through `__len__` / `__getitem__` views, so no Python object is
//! made per manifest entry, and a task is materialised only when touched.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Arc;

use pyo3::exceptions::PyIndexError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use super::errors::PyResultExt;
use super::metadata::PyTableMetadata;
use crate::error::validation;
use crate::expr::{bind, parse_filter, Expression};
use crate::scan::{
    adjust_split_size, combine_tasks, identity_columns_in_file, plan_scan as core_plan_scan,
    tasks_from_rest_answer, BoundFilter, CombinedScanTask, FileScanTask, ManifestCache, PlannedTasks,
    ScanFilterRef, ScanMetrics, ScanOptions, ScanPlan, SnapshotSelection, SplitOptions,
};
use crate::spec::SnapshotRef;

/// Decoded manifests shared by the scans of one table object (keyed by path + length).
#[pyclass(name = "ManifestCache", module = "icefloe._native", frozen)]
pub struct PyManifestCache {
    inner: Arc<ManifestCache>,
}

#[pymethods]
impl PyManifestCache {
    #[new]
    #[pyo3(signature = (max_entries=250_000))]
    fn new(max_entries: usize) -> Self {
        PyManifestCache { inner: Arc::new(ManifestCache::new(max_entries)) }
    }

    /// (manifests cached, entries cached, hits, misses)
    fn stats(&self) -> (usize, usize, u64, u64) {
        self.inner.stats()
    }

    fn clear(&self) {
        self.inner.clear()
    }
}

/// The planned tasks of one scan, kept in Rust.
#[pyclass(name = "ScanPlan", module = "icefloe._native", frozen, sequence)]
pub struct PyScanPlan {
    tasks: Arc<PlannedTasks>,
    plan_snapshot_id: Option<i64>,
    metrics: crate::scan::ScanMetrics,
    split: SplitOptions,
}

fn index(len: usize, i: isize) -> PyResult<usize> {
    let j = if i < 0 { i + len as isize } else { i };
    if j < 0 || j as usize >= len {
        return Err(PyIndexError::new_err(format!("task index {i} out of range for {len} tasks")));
    }
    Ok(j as usize)
}

#[pymethods]
impl PyScanPlan {
    fn __len__(&self) -> usize {
        self.tasks.len()
    }

    fn __getitem__(&self, i: isize) -> PyResult<PyFileScanTask> {
        let i = index(self.tasks.len(), i)?;
        let task = self.tasks.get(i).map(Cow::into_owned);
        let task = task.ok_or_else(|| PyIndexError::new_err(format!("task index {i} out of range")))?;
        Ok(PyFileScanTask { task })
    }

    #[getter]
    fn snapshot_id(&self) -> Option<i64> {
        self.plan_snapshot_id
    }

    /// The scan metrics as a dict of counters (`planning_time_ns` included).
    #[getter]
    fn metrics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let v = serde_json::to_value(&self.metrics)
            .map_err(|e| crate::error::invalid_data("cannot serialize scan metrics").with_source(e))
            .py()?;
        if let serde_json::Value::Object(m) = v {
            for (k, v) in m {
                d.set_item(k, v.as_u64().unwrap_or(0))?;
            }
        }
        Ok(d)
    }

    /// Sum of the planned data files' record counts.
    fn record_count(&self) -> i64 {
        self.tasks.summaries().map(|t| t.record_count).sum()
    }

    /// Every task as JSON (one string per task).
    fn tasks_json(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let tasks = self.tasks.clone();
        py.detach(move || tasks.iter().map(|t| t.to_json()).collect::<crate::Result<Vec<_>>>()).py()
    }

    /// The plan split for an engine that reads plain Parquet files itself (see
    /// `FileScanTask::plain_parquet_blocker`): the (path, file size, record count) of each
    /// task such a reader reads as Iceberg does, and the other tasks as a plan of their own
    /// (same split settings). The paths in `refused` (files the engine cannot open) go with
    /// the other tasks. With `rows_filtered_after` (the caller filters the rows itself) a
    /// residual filter does not keep a file from the plain reader.
    #[pyo3(signature = (refused=None, rows_filtered_after=false))]
    fn split_plain_parquet(
        &self,
        refused: Option<HashSet<String>>,
        rows_filtered_after: bool,
    ) -> (Vec<(String, i64, i64)>, PyScanPlan) {
        let mut plain = Vec::new();
        let mut rest = PlannedTasks::new();
        for t in self.tasks.iter() {
            let refuse = refused.as_ref().is_some_and(|r| r.contains(&t.file.file_path));
            if t.plain_parquet_blocker_for(rows_filtered_after).is_none() && !refuse {
                plain.push((t.file.file_path.clone(), t.file.file_size_in_bytes, t.file.record_count));
            } else {
                rest.push(t.into_owned());
            }
        }
        let rest = PyScanPlan {
            tasks: Arc::new(rest),
            plan_snapshot_id: self.plan_snapshot_id,
            metrics: self.metrics.clone(),
            split: self.split,
        };
        (plain, rest)
    }

    /// (path, reason) of each task a plain Parquet reader would not read as Iceberg does
    /// (`rows_filtered_after`: as in `split_plain_parquet`).
    #[pyo3(signature = (rows_filtered_after=false))]
    fn plain_parquet_blockers(&self, rows_filtered_after: bool) -> Vec<(String, &'static str)> {
        self.tasks
            .iter()
            .filter_map(|t| {
                t.plain_parquet_blocker_for(rows_filtered_after).map(|why| (t.file.file_path.clone(), why))
            })
            .collect()
    }

    /// The bytes the tasks read (the sum of their lengths).
    fn size_in_bytes(&self) -> i64 {
        self.tasks.summaries().map(|t| t.length).sum()
    }

    /// Split and bin-pack into combined tasks (the table's `read.split.*` settings unless
    /// overridden). With `parallelism` (the engine's slots) and no explicit `target_size`,
    /// a scan too small to give every slot a split gets smaller splits, as Iceberg's Spark
    /// scans do (`read.split.adaptive-size.enabled`, default true).
    #[pyo3(signature = (target_size=None, open_file_cost=None, lookback=None, parallelism=None))]
    fn combined(
        &self,
        py: Python<'_>,
        target_size: Option<i64>,
        open_file_cost: Option<i64>,
        lookback: Option<usize>,
        parallelism: Option<usize>,
    ) -> PyResult<PyCombinedTasks> {
        let mut opts = self.split;
        match (target_size.filter(|v| *v > 0), parallelism) {
            (Some(v), _) => opts.target_size = v,
            (None, Some(p)) if opts.adaptive => {
                let scan_size: i64 = self.tasks.summaries().map(|t| t.size_bytes()).sum();
                opts.target_size = adjust_split_size(scan_size, p, opts.target_size);
            }
            _ => {}
        }
        if let Some(v) = open_file_cost.filter(|v| *v >= 0) {
            opts.open_file_cost = v;
        }
        if let Some(v) = lookback.filter(|v| *v > 0) {
            opts.lookback = v;
        }
        let tasks = self.tasks.clone();
        let combined = py.detach(move || combine_tasks(tasks.iter().map(Cow::into_owned), &opts));
        Ok(PyCombinedTasks { tasks: Arc::new(combined) })
    }
}

/// A view of one planned task.
#[pyclass(name = "FileScanTaskView", module = "icefloe._native", frozen)]
pub struct PyFileScanTask {
    task: FileScanTask,
}

impl PyFileScanTask {
    fn task(&self) -> &FileScanTask {
        &self.task
    }
}

#[pymethods]
impl PyFileScanTask {
    #[getter]
    fn file_path(&self) -> &str {
        &self.task().file.file_path
    }
    #[getter]
    fn record_count(&self) -> i64 {
        self.task().file.record_count
    }
    #[getter]
    fn file_size_in_bytes(&self) -> i64 {
        self.task().file.file_size_in_bytes
    }
    #[getter]
    fn start(&self) -> i64 {
        self.task().start
    }
    #[getter]
    fn length(&self) -> i64 {
        self.task().length
    }
    #[getter]
    fn data_sequence_number(&self) -> i64 {
        self.task().data_sequence_number
    }
    #[getter]
    fn spec_id(&self) -> i32 {
        self.task().file.spec_id
    }
    /// The data file's descriptor JSON (the core's serde form).
    fn file_json(&self) -> PyResult<String> {
        self.task().file.to_descriptor().py()
    }
    /// The attached delete files: (path, content 1 = position / 2 = equality, data seq).
    #[getter]
    fn deletes(&self) -> Vec<(String, i32, i64)> {
        self.task()
            .deletes
            .iter()
            .map(|d| (d.file.file_path.clone(), d.file.content as i32, d.data_sequence_number))
            .collect()
    }
    /// The attached delete files' descriptor JSONs.
    fn delete_files_json(&self) -> PyResult<Vec<String>> {
        self.task().deletes.iter().map(|d| d.file.to_descriptor().py()).collect()
    }
    /// The residual filter (bound expression JSON), `None` when nothing is left to apply.
    #[getter]
    fn residual(&self) -> Option<String> {
        self.task().residual.as_ref().map(|v| v.to_string())
    }
    fn to_json(&self) -> PyResult<String> {
        self.task().to_json().py()
    }
}

/// Combined tasks (one Spark partition each), kept in Rust.
#[pyclass(name = "CombinedTasks", module = "icefloe._native", frozen, sequence)]
pub struct PyCombinedTasks {
    tasks: Arc<Vec<CombinedScanTask>>,
}

#[pymethods]
impl PyCombinedTasks {
    fn __len__(&self) -> usize {
        self.tasks.len()
    }

    /// The combined task `i` as JSON bytes (`{"tasks": [FileScanTask, ...]}`).
    fn __getitem__<'py>(&self, py: Python<'py>, i: isize) -> PyResult<Bound<'py, PyBytes>> {
        let t = &self.tasks[index(self.tasks.len(), i)?];
        let s = serde_json::to_vec(t)
            .map_err(|e| crate::error::invalid_data("cannot serialize CombinedScanTask").with_source(e))
            .py()?;
        Ok(PyBytes::new(py, &s))
    }

    /// Number of file scan tasks in combined task `i`.
    fn task_count(&self, i: isize) -> PyResult<usize> {
        Ok(self.tasks[index(self.tasks.len(), i)?].tasks.len())
    }

    /// All combined tasks as JSON bytes, one per combined task.
    fn to_json_list<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        (0..self.tasks.len() as isize).map(|i| self.__getitem__(py, i)).collect()
    }
}

/// The tasks of a combined task's JSON, each as FileScanTask JSON (for `read_task`).
#[pyfunction]
fn split_combined_task(data: &[u8]) -> PyResult<Vec<String>> {
    let c: CombinedScanTask = serde_json::from_slice(data)
        .map_err(|e| crate::error::invalid_data("malformed CombinedScanTask").with_source(e))
        .py()?;
    c.tasks.iter().map(|t| t.to_json().py()).collect()
}

fn selection(
    snapshot_id: Option<i64>,
    ref_name: Option<String>,
    as_of_timestamp: Option<i64>,
    from_snapshot_id: Option<i64>,
    to_snapshot_id: Option<i64>,
    incremental: bool,
) -> crate::Result<SnapshotSelection> {
    let point =
        [snapshot_id.is_some(), ref_name.is_some(), as_of_timestamp.is_some()].iter().filter(|b| **b).count();
    let range = incremental || from_snapshot_id.is_some() || to_snapshot_id.is_some();
    if point > 1 || (point == 1 && range) {
        return Err(validation(
            "choose at most one of snapshot_id, ref, as_of_timestamp and an incremental from/to range",
        ));
    }
    Ok(if range {
        SnapshotSelection::Incremental { from_snapshot_id, to_snapshot_id }
    } else if let Some(id) = snapshot_id {
        SnapshotSelection::SnapshotId(id)
    } else if let Some(r) = ref_name {
        SnapshotSelection::Ref(r)
    } else if let Some(ts) = as_of_timestamp {
        SnapshotSelection::AsOfTimestamp(ts)
    } else {
        SnapshotSelection::Current
    })
}

/// Plans a scan. `row_filter` is SQL filter text, `row_filter_json` an unbound expression's
/// JSON (at most one); both bind to the scanned snapshot's schema.
#[pyfunction]
#[pyo3(signature = (
    metadata, *, snapshot_id=None, ref_name=None, as_of_timestamp=None, from_snapshot_id=None,
    to_snapshot_id=None, incremental=false, row_filter=None, row_filter_json=None,
    case_sensitive=true, include_column_stats=false, cache=None, threads=None
))]
#[allow(clippy::too_many_arguments)]
fn plan_scan(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    snapshot_id: Option<i64>,
    ref_name: Option<String>,
    as_of_timestamp: Option<i64>,
    from_snapshot_id: Option<i64>,
    to_snapshot_id: Option<i64>,
    incremental: bool,
    row_filter: Option<String>,
    row_filter_json: Option<String>,
    case_sensitive: bool,
    include_column_stats: bool,
    cache: Option<&PyManifestCache>,
    threads: Option<usize>,
) -> PyResult<PyScanPlan> {
    let md = metadata.inner.clone();
    let sel =
        selection(snapshot_id, ref_name, as_of_timestamp, from_snapshot_id, to_snapshot_id, incremental)
            .py()?;
    let cache = cache.map(|c| c.inner.clone());
    let plan: ScanPlan = py
        .detach(move || -> crate::Result<ScanPlan> {
            let expr: Option<Expression> = match (row_filter, row_filter_json) {
                (Some(_), Some(_)) => return Err(validation("give row_filter or row_filter_json, not both")),
                (Some(sql), None) => Some(parse_filter(&sql)?),
                (None, Some(j)) => Some(Expression::from_json_str(&j)?),
                (None, None) => None,
            };
            let mut options = ScanOptions { selection: sel, include_column_stats, ..ScanOptions::default() };
            if let Some(t) = threads.filter(|t| *t > 0) {
                options.threads = t;
            }
            if let Some(expr) = expr {
                // Bind to the schema of the snapshot a time travel reads; a scan of the current
                // table, of a branch (Java's `SnapshotUtil.schemaFor`) or an incremental one
                // reads with the current schema, so a filter may name a column added or
                // renamed since the last snapshot.
                let branch = |name: &str| {
                    name == SnapshotRef::MAIN_BRANCH || md.refs().get(name).is_some_and(|r| r.is_branch())
                };
                let schema = match &options.selection {
                    SnapshotSelection::Current | SnapshotSelection::Incremental { .. } => {
                        md.current_schema().clone()
                    }
                    SnapshotSelection::Ref(name) if branch(name) => md.current_schema().clone(),
                    s => match crate::scan::select(&md, s)? {
                        Some(snap) => md.schema_for_snapshot(snap).clone(),
                        None => md.current_schema().clone(),
                    },
                };
                let bound = bind(&expr, &schema, case_sensitive)?;
                let filter: ScanFilterRef = Arc::new(BoundFilter::new(bound, md.partition_specs())?);
                options.filter = filter;
            }
            core_plan_scan(&md, &options, cache.as_deref())
        })
        .py()?;
    Ok(PyScanPlan {
        tasks: Arc::new(plan.tasks),
        plan_snapshot_id: plan.snapshot_id,
        metrics: plan.metrics,
        split: SplitOptions::from_table(&metadata.inner),
    })
}

/// A plan of the tasks a REST catalog's server planned: `answers` are the planning answers
/// (PlanTableScan / FetchPlanningResult / FetchScanTasks JSON, each with its `file-scan-tasks`
/// and the `delete-files` they refer to), residuals bound to `schema_json` (the scan's). The
/// same plan object as `plan_scan`'s, so splitting, bin-packing and the Spark read paths
/// treat the tasks alike; its metrics count the tasks' files.
#[pyfunction]
#[pyo3(signature = (metadata, answers, schema_json, case_sensitive=true, snapshot_id=None, planning_time_ns=0))]
fn scan_plan_from_rest(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    answers: Vec<String>,
    schema_json: &str,
    case_sensitive: bool,
    snapshot_id: Option<i64>,
    planning_time_ns: u64,
) -> PyResult<PyScanPlan> {
    let md = metadata.inner.clone();
    let schema = crate::spec::Schema::from_json_str(schema_json).py()?;
    let (tasks, metrics) = py
        .detach(move || -> crate::Result<(Vec<FileScanTask>, ScanMetrics)> {
            let mut metrics = ScanMetrics { planning_time_ns, ..ScanMetrics::default() };
            let mut tasks = Vec::new();
            for text in &answers {
                let answer: serde_json::Value = serde_json::from_str(text).map_err(|e| {
                    crate::error::invalid_data("a scan planning answer is not JSON").with_source(e)
                })?;
                for mut t in tasks_from_rest_answer(&md, &answer, &schema, case_sensitive)? {
                    if let Some(spec) = md.spec_by_id(t.file.spec_id) {
                        t.identity_partition_fields = FileScanTask::identity_fields_of(spec);
                    }
                    t.identity_columns_in_file =
                        identity_columns_in_file(&t.file, &t.identity_partition_fields);
                    metrics.result_data_files += 1;
                    metrics.total_file_size_in_bytes += t.file.file_size_in_bytes.max(0) as u64;
                    metrics.result_delete_files += t.deletes.len() as u64;
                    metrics.total_delete_file_size_in_bytes +=
                        t.deletes.iter().map(|d| d.file.file_size_in_bytes.max(0) as u64).sum::<u64>();
                    tasks.push(t);
                }
            }
            Ok((tasks, metrics))
        })
        .py()?;
    Ok(PyScanPlan {
        tasks: Arc::new(tasks.into()),
        plan_snapshot_id: snapshot_id,
        metrics,
        split: SplitOptions::from_table(&metadata.inner),
    })
}

/// The snapshot id a point-in-time selection names (`None`: the table has no snapshot);
/// an unknown id, ref or time raises ValidationError listing what exists.
#[pyfunction]
#[pyo3(signature = (metadata, *, snapshot_id=None, ref_name=None, as_of_timestamp=None))]
fn resolve_snapshot(
    metadata: &PyTableMetadata,
    snapshot_id: Option<i64>,
    ref_name: Option<String>,
    as_of_timestamp: Option<i64>,
) -> PyResult<Option<i64>> {
    let sel = selection(snapshot_id, ref_name, as_of_timestamp, None, None, false).py()?;
    Ok(crate::scan::select(&metadata.inner, &sel).py()?.map(|s| s.snapshot_id))
}

/// Whole-file tasks of a snapshot as JSON (the first planner's entry point, kept for callers
/// that want plain strings).
#[pyfunction]
#[pyo3(signature = (metadata, snapshot_id=None))]
fn plan_files(py: Python<'_>, metadata: &PyTableMetadata, snapshot_id: Option<i64>) -> PyResult<Vec<String>> {
    let md = metadata.inner.clone();
    let tasks = py.detach(move || crate::scan::plan_files(&md, snapshot_id)).py()?;
    tasks.iter().map(|t| t.to_json().py()).collect()
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyManifestCache>()?;
    m.add_class::<PyScanPlan>()?;
    m.add_class::<PyFileScanTask>()?;
    m.add_class::<PyCombinedTasks>()?;
    m.add_function(wrap_pyfunction!(plan_scan, m)?)?;
    m.add_function(wrap_pyfunction!(plan_files, m)?)?;
    m.add_function(wrap_pyfunction!(split_combined_task, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_snapshot, m)?)?;
    m.add_function(wrap_pyfunction!(scan_plan_from_rest, m)?)?;
    Ok(())
}
