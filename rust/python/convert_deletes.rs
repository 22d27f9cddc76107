//! Bindings of `convert_equality_deletes` (rust/maintenance/convert_equality_deletes.rs and
//! `writer::convert_equality_deletes`): the plan, the per-task conversion (driver threads or
//! executors), and the validated row delta that commits it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use pyo3::prelude::*;

use super::errors::PyResultExt;
use super::metadata::PyTableMetadata;
use crate::error::invalid_data;
use crate::expr::{bind, Expression};
use crate::maintenance::convert_equality_deletes::{commit_conversion, plan_conversion, Conversion};
use crate::manifest::DataFile;
use crate::scan::{BoundFilter, DeleteFileRef, FileScanTask, ScanFilterRef};

/// What the commit needs of the plan (JSON, kept by the Python side between the two calls).
#[derive(serde::Serialize, serde::Deserialize)]
struct PlanState {
    removed: Vec<DeleteFileRef>,
    covered: BTreeSet<String>,
}

/// Plans the conversion of the current snapshot's equality deletes (those whose whole scope
/// the filter, unbound expression JSON, selects). Returns `(snapshot id, task JSONs, plan
/// state JSON, equality delete files kept)`; the plan state lists the removed equality
/// deletes (`removed`: `{file, data_sequence_number}`) and the covered data files.
#[pyfunction]
#[pyo3(signature = (metadata, filter_json=None, case_sensitive=true))]
fn plan_equality_delete_conversion(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    filter_json: Option<String>,
    case_sensitive: bool,
) -> PyResult<(Option<i64>, Vec<String>, String, usize)> {
    let md = metadata.inner.clone();
    py.detach(move || -> crate::Result<(Option<i64>, Vec<String>, String, usize)> {
        let filter: Option<ScanFilterRef> = match filter_json {
            None => None,
            Some(j) => {
                let bound = bind(&Expression::from_json_str(&j)?, md.current_schema(), case_sensitive)?;
                Some(Arc::new(BoundFilter::new(bound, md.partition_specs())?))
            }
        };
        let plan = plan_conversion(&md, filter)?;
        let tasks = plan.tasks.iter().map(FileScanTask::to_json).collect::<crate::Result<Vec<_>>>()?;
        let state = PlanState { removed: plan.removed, covered: plan.covered_data_files };
        let state = serde_json::to_string(&state)
            .map_err(|e| invalid_data("cannot serialize the conversion plan").with_source(e))?;
        Ok((plan.snapshot_id, tasks, state, plan.kept))
    })
    .py()
}

fn descriptors(files: &[DataFile]) -> PyResult<Vec<String>> {
    files.iter().map(|f| f.to_descriptor().py()).collect()
}

/// One conversion task: position deletes (deletion vectors on v3) for the rows the planned
/// tasks' equality deletes remove. Returns (delete file descriptors, rows deleted,
/// descriptors of the earlier position deletes merged in, which the commit removes).
#[pyfunction]
fn convert_equality_delete_rows(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    tasks: Vec<String>,
    write_id: &str,
    task_id: u32,
) -> PyResult<(Vec<String>, i64, Vec<String>)> {
    let md = metadata.inner.clone();
    let res = py
        .detach(move || {
            let tasks =
                tasks.iter().map(|t| FileScanTask::from_json(t)).collect::<crate::Result<Vec<_>>>()?;
            crate::writer::convert_equality_deletes(md, &tasks, write_id, task_id)
        })
        .py()?;
    Ok((descriptors(&res.delete_files)?, res.deleted_rows, descriptors(&res.replaced_deletes)?))
}

/// The row delta of a conversion on `metadata` (validated against the snapshots committed
/// since `start_snapshot_id` when the table moved): adds `delete_files`, removes the plan's
/// equality deletes and `replaced_delete_paths` (removal keys).
#[pyfunction]
#[pyo3(signature = (metadata, start_snapshot_id, plan_state, delete_files, replaced_delete_paths, snapshot_properties=None))]
fn commit_equality_delete_conversion(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    start_snapshot_id: Option<i64>,
    plan_state: &str,
    delete_files: Vec<String>,
    replaced_delete_paths: Vec<String>,
    snapshot_properties: Option<BTreeMap<String, String>>,
) -> PyResult<(PyTableMetadata, Vec<String>)> {
    let state: PlanState = serde_json::from_str(plan_state)
        .map_err(|e| invalid_data("malformed conversion plan state").with_source(e))
        .py()?;
    let added =
        delete_files.iter().map(|d| DataFile::from_descriptor(d)).collect::<Result<Vec<_>, _>>().py()?;
    let c = Conversion {
        start_snapshot_id,
        removed: state.removed,
        covered_data_files: state.covered,
        added,
        replaced: replaced_delete_paths.into_iter().collect(),
        summary_properties: snapshot_properties.unwrap_or_default(),
    };
    let base = metadata.inner.clone();
    let now = chrono::Utc::now().timestamp_millis();
    let (md, written) = py.detach(move || commit_conversion(&base, &c, now)).py()?;
    Ok((PyTableMetadata::new(md), written))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(plan_equality_delete_conversion, m)?)?;
    m.add_function(wrap_pyfunction!(convert_equality_delete_rows, m)?)?;
    m.add_function(wrap_pyfunction!(commit_equality_delete_conversion, m)?)?;
    Ok(())
}
