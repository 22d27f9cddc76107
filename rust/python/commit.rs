//! Bindings of the commit room (rust/commit/): snapshot producers, conflict validation, and
//! deleting the files of a failed attempt. Metadata crosses as `TableMetadata`, data files as
//! their JSON descriptors.

use std::collections::{BTreeMap, BTreeSet};

use pyo3::prelude::*;

use super::errors::PyResultExt;
use super::metadata::PyTableMetadata;
use crate::commit::{ConflictScope, RowFilter, Validation};
use crate::expr::{bind, Expression};
use crate::manifest::DataFile;
use crate::spec::TableMetadata;

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

fn parse_files(descriptors: &[String]) -> PyResult<Vec<DataFile>> {
    descriptors.iter().map(|d| DataFile::from_descriptor(d)).collect::<Result<Vec<_>, _>>().py()
}

type Produced = (PyTableMetadata, Vec<String>);

/// Runs a snapshot producer on the parsed descriptors with the GIL released: the shape
/// every commit binding shares.
fn produce(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    descriptors: &[String],
    snapshot_properties: Option<BTreeMap<String, String>>,
    producer: impl FnOnce(
            &TableMetadata,
            Vec<DataFile>,
            &BTreeMap<String, String>,
            i64,
        ) -> crate::Result<(TableMetadata, Vec<String>)>
        + Send,
) -> PyResult<Produced> {
    let files = parse_files(descriptors)?;
    let base = metadata.inner.clone();
    let props = snapshot_properties.unwrap_or_default();
    let (md, written) = py.detach(move || producer(&base, files, &props, now_ms())).py()?;
    Ok((PyTableMetadata::new(md), written))
}

#[pyfunction]
#[pyo3(signature = (metadata, data_files, snapshot_properties=None))]
fn fast_append(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    data_files: Vec<String>,
    snapshot_properties: Option<BTreeMap<String, String>>,
) -> PyResult<Produced> {
    produce(py, metadata, &data_files, snapshot_properties, crate::commit::fast_append)
}

#[pyfunction]
#[pyo3(signature = (metadata, data_files, snapshot_properties=None))]
fn merge_append(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    data_files: Vec<String>,
    snapshot_properties: Option<BTreeMap<String, String>>,
) -> PyResult<Produced> {
    produce(py, metadata, &data_files, snapshot_properties, crate::commit::merge_append)
}

#[pyfunction]
#[pyo3(signature = (metadata, added_files, removed_paths, snapshot_properties=None))]
fn overwrite_files(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    added_files: Vec<String>,
    removed_paths: Vec<String>,
    snapshot_properties: Option<BTreeMap<String, String>>,
) -> PyResult<Produced> {
    let removed: BTreeSet<String> = removed_paths.into_iter().collect();
    produce(py, metadata, &added_files, snapshot_properties, move |base, files, props, now| {
        crate::commit::overwrite_files(base, files, removed, props, now)
    })
}

#[pyfunction]
#[pyo3(signature = (metadata, added_files, snapshot_properties=None))]
fn replace_partitions(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    added_files: Vec<String>,
    snapshot_properties: Option<BTreeMap<String, String>>,
) -> PyResult<Produced> {
    produce(py, metadata, &added_files, snapshot_properties, crate::commit::replace_partitions)
}

/// A row delta: add data and delete files, remove whole data files (Java's `RowDelta`).
#[pyfunction]
#[pyo3(signature = (metadata, data_files, delete_files, removed_paths=None, snapshot_properties=None, removed_delete_paths=None))]
fn row_delta(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    data_files: Vec<String>,
    delete_files: Vec<String>,
    removed_paths: Option<Vec<String>>,
    snapshot_properties: Option<BTreeMap<String, String>>,
    removed_delete_paths: Option<Vec<String>>,
) -> PyResult<Produced> {
    let deletes = parse_files(&delete_files)?;
    let removed: BTreeSet<String> = removed_paths.unwrap_or_default().into_iter().collect();
    let removed_deletes: BTreeSet<String> = removed_delete_paths.unwrap_or_default().into_iter().collect();
    produce(py, metadata, &data_files, snapshot_properties, move |base, files, props, now| {
        let delta = crate::commit::RowDelta {
            added_data: files,
            added_deletes: deletes,
            removed_data_paths: removed,
            removed_delete_paths: removed_deletes,
            summary_properties: props.clone(),
        };
        crate::commit::row_delta(base, delta, now)
    })
}

/// Cherry-picks a snapshot onto `main` (Java's `CherryPickOperation`): a fast-forward, or a
/// new snapshot re-applying an append or dynamic overwrite.
#[pyfunction]
fn cherrypick(py: Python<'_>, metadata: &PyTableMetadata, snapshot_id: i64) -> PyResult<Produced> {
    let base = metadata.inner.clone();
    let (md, written) = py.detach(move || crate::commit::cherrypick(&base, snapshot_id, now_ms())).py()?;
    Ok((PyTableMetadata::new(md), written))
}

#[pyfunction]
fn partitions_of(metadata: &PyTableMetadata, data_files: Vec<String>) -> PyResult<Vec<String>> {
    let files = parse_files(&data_files)?;
    Ok(crate::commit::partitions_of(&metadata.inner, &files).py()?.into_iter().collect())
}

/// A row filter (unbound expression JSON) bound to `base`'s current schema, with its
/// evaluators for every partition spec.
fn row_filter(base: &TableMetadata, filter_json: &str, case_sensitive: bool) -> crate::Result<RowFilter> {
    let expr = Expression::from_json_str(filter_json)?;
    RowFilter::new(bind(&expr, base.current_schema(), case_sensitive)?, base.partition_specs())
}

/// `None` -> no conflicts, `True` -> everything, a str -> files that may match that row filter
/// (unbound expression JSON), a list of partition keys -> those.
fn scope(
    base: &TableMetadata,
    v: Option<&Bound<'_, PyAny>>,
    case_sensitive: bool,
) -> PyResult<ConflictScope> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(ConflictScope::Nothing);
    };
    if let Ok(b) = v.extract::<bool>() {
        return Ok(if b { ConflictScope::Everything } else { ConflictScope::Nothing });
    }
    if let Ok(filter_json) = v.extract::<String>() {
        return Ok(ConflictScope::Filter(row_filter(base, &filter_json, case_sensitive).py()?.shared()));
    }
    let keys: Vec<String> = v.extract()?;
    Ok(ConflictScope::Partitions(keys.into_iter().collect()))
}

#[pyfunction]
#[pyo3(signature = (metadata, start_snapshot_id, conflicting_data=None, conflicting_deletes=None, removed_paths=None, case_sensitive=true, required_paths=None))]
#[allow(clippy::too_many_arguments)] // the Python keyword arguments, one by one
fn validate_commit(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    start_snapshot_id: Option<i64>,
    conflicting_data: Option<&Bound<'_, PyAny>>,
    conflicting_deletes: Option<&Bound<'_, PyAny>>,
    removed_paths: Option<Vec<String>>,
    case_sensitive: bool,
    required_paths: Option<Vec<String>>,
) -> PyResult<()> {
    let v = Validation {
        start_snapshot_id,
        data: scope(&metadata.inner, conflicting_data, case_sensitive)?,
        deletes: scope(&metadata.inner, conflicting_deletes, case_sensitive)?,
        removed_paths: removed_paths.unwrap_or_default().into_iter().collect(),
        required_paths: required_paths.unwrap_or_default().into_iter().collect(),
    };
    let base = metadata.inner.clone();
    py.detach(move || crate::commit::validate(&base, &v)).py()
}

/// The live data files of the current snapshot removing a row filter's rows touches, from
/// metadata alone: `(paths removed whole, tasks (JSON) of the files to read and rewrite)`.
#[pyfunction]
#[pyo3(signature = (metadata, filter_json, case_sensitive=true))]
fn plan_row_removal(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    filter_json: String,
    case_sensitive: bool,
) -> PyResult<(Vec<String>, Vec<String>)> {
    let base = metadata.inner.clone();
    py.detach(move || -> crate::Result<(Vec<String>, Vec<String>)> {
        let expr = bind(&Expression::from_json_str(&filter_json)?, base.current_schema(), case_sensitive)?;
        let (whole, partial) = crate::commit::plan_row_removal(&base, expr)?;
        let tasks = partial.iter().map(|t| t.to_json()).collect::<crate::Result<Vec<_>>>()?;
        Ok((whole.into_iter().map(|f| f.file_path).collect(), tasks))
    })
    .py()
}

/// The paths of the files (descriptors) not proven, by partition or column stats, to hold
/// only rows matching the row filter (Java's `validateAddedFilesMatchOverwriteFilter`).
#[pyfunction]
#[pyo3(signature = (metadata, filter_json, data_files, case_sensitive=true))]
fn files_not_matching(
    metadata: &PyTableMetadata,
    filter_json: &str,
    data_files: Vec<String>,
    case_sensitive: bool,
) -> PyResult<Vec<String>> {
    let files = parse_files(&data_files)?;
    let filter = row_filter(&metadata.inner, filter_json, case_sensitive).py()?;
    Ok(files.into_iter().filter(|f| !filter.must_match(f)).map(|f| f.file_path).collect())
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fast_append, m)?)?;
    m.add_function(wrap_pyfunction!(merge_append, m)?)?;
    m.add_function(wrap_pyfunction!(overwrite_files, m)?)?;
    m.add_function(wrap_pyfunction!(replace_partitions, m)?)?;
    m.add_function(wrap_pyfunction!(row_delta, m)?)?;
    m.add_function(wrap_pyfunction!(cherrypick, m)?)?;
    m.add_function(wrap_pyfunction!(partitions_of, m)?)?;
    m.add_function(wrap_pyfunction!(validate_commit, m)?)?;
    m.add_function(wrap_pyfunction!(plan_row_removal, m)?)?;
    m.add_function(wrap_pyfunction!(files_not_matching, m)?)?;
    Ok(())
}
