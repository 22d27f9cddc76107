//! Bindings of the commit room (rust/commit/): snapshot producers, conflict validation, and
//! deleting the files of a failed attempt. Metadata crosses as `TableMetadata`, data files as
//! their JSON descriptors.

use std::collections::{BTreeMap, BTreeSet};

use pyo3::prelude::*;

use super::errors::{to_py, PyResultExt};
use super::metadata::PyTableMetadata;
use crate::commit::{ConflictScope, Validation};
use crate::manifest::DataFile;

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

fn parse_files(descriptors: &[String]) -> PyResult<Vec<DataFile>> {
    descriptors.iter().map(|d| DataFile::from_descriptor(d)).collect::<Result<Vec<_>, _>>().py()
}

type Produced = (PyTableMetadata, Vec<String>);

#[pyfunction]
#[pyo3(signature = (metadata, data_files, snapshot_properties=None))]
fn fast_append(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    data_files: Vec<String>,
    snapshot_properties: Option<BTreeMap<String, String>>,
) -> PyResult<Produced> {
    let files = parse_files(&data_files)?;
    let base = metadata.inner.clone();
    let props = snapshot_properties.unwrap_or_default();
    let (md, written) = py.detach(move || crate::commit::fast_append(&base, files, &props, now_ms())).py()?;
    Ok((PyTableMetadata::new(md), written))
}

#[pyfunction]
#[pyo3(signature = (metadata, data_files, snapshot_properties=None))]
fn merge_append(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    data_files: Vec<String>,
    snapshot_properties: Option<BTreeMap<String, String>>,
) -> PyResult<Produced> {
    let files = parse_files(&data_files)?;
    let base = metadata.inner.clone();
    let props = snapshot_properties.unwrap_or_default();
    let (md, written) =
        py.detach(move || crate::commit::merge_append(&base, files, &props, now_ms())).py()?;
    Ok((PyTableMetadata::new(md), written))
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
    let files = parse_files(&added_files)?;
    let base = metadata.inner.clone();
    let props = snapshot_properties.unwrap_or_default();
    let removed: BTreeSet<String> = removed_paths.into_iter().collect();
    let (md, written) =
        py.detach(move || crate::commit::overwrite_files(&base, files, removed, &props, now_ms())).py()?;
    Ok((PyTableMetadata::new(md), written))
}

#[pyfunction]
#[pyo3(signature = (metadata, added_files, snapshot_properties=None))]
fn replace_partitions(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    added_files: Vec<String>,
    snapshot_properties: Option<BTreeMap<String, String>>,
) -> PyResult<Produced> {
    let files = parse_files(&added_files)?;
    let base = metadata.inner.clone();
    let props = snapshot_properties.unwrap_or_default();
    let (md, written) =
        py.detach(move || crate::commit::replace_partitions(&base, files, &props, now_ms())).py()?;
    Ok((PyTableMetadata::new(md), written))
}

#[pyfunction]
fn partitions_of(metadata: &PyTableMetadata, data_files: Vec<String>) -> PyResult<Vec<String>> {
    let files = parse_files(&data_files)?;
    Ok(crate::commit::partitions_of(&metadata.inner, &files).py()?.into_iter().collect())
}

/// `None` -> no conflicts, `True` -> everything, a list of partition keys -> those.
fn scope(v: Option<&Bound<'_, PyAny>>) -> PyResult<ConflictScope> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(ConflictScope::Nothing);
    };
    if let Ok(b) = v.extract::<bool>() {
        return Ok(if b { ConflictScope::Everything } else { ConflictScope::Nothing });
    }
    let keys: Vec<String> = v.extract()?;
    Ok(ConflictScope::Partitions(keys.into_iter().collect()))
}

#[pyfunction]
#[pyo3(signature = (metadata, start_snapshot_id, conflicting_data=None, conflicting_deletes=None, removed_paths=None))]
fn validate_commit(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    start_snapshot_id: Option<i64>,
    conflicting_data: Option<&Bound<'_, PyAny>>,
    conflicting_deletes: Option<&Bound<'_, PyAny>>,
    removed_paths: Option<Vec<String>>,
) -> PyResult<()> {
    let v = Validation {
        start_snapshot_id,
        data: scope(conflicting_data)?,
        deletes: scope(conflicting_deletes)?,
        removed_paths: removed_paths.unwrap_or_default().into_iter().collect(),
    };
    let base = metadata.inner.clone();
    py.detach(move || crate::commit::validate(&base, &v)).py()
}

#[pyfunction]
fn delete_files(py: Python<'_>, paths: Vec<String>) -> PyResult<()> {
    py.detach(move || {
        for p in &paths {
            crate::io::delete_file(p)?;
        }
        Ok(())
    })
    .map_err(to_py)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fast_append, m)?)?;
    m.add_function(wrap_pyfunction!(merge_append, m)?)?;
    m.add_function(wrap_pyfunction!(overwrite_files, m)?)?;
    m.add_function(wrap_pyfunction!(replace_partitions, m)?)?;
    m.add_function(wrap_pyfunction!(partitions_of, m)?)?;
    m.add_function(wrap_pyfunction!(validate_commit, m)?)?;
    m.add_function(wrap_pyfunction!(delete_files, m)?)?;
    Ok(())
}
