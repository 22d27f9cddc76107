//! Bindings of the maintenance room (rust/maintenance/): snapshot expiry (the metadata step
//! and the files it frees), orphan-file search, and counted deletes. Every call releases the
//! GIL; the Python side (`icefloe.maintenance`) commits and decides when to delete.

use std::collections::HashMap;

use pyo3::prelude::*;

use super::errors::PyResultExt;
use super::metadata::PyTableMetadata;
use crate::maintenance::{self, ExpireOptions, OrphanOptions, PrefixMismatchMode};
use crate::spec::TableMetadata;

/// The expiry of `metadata` at `now_ms`: `(next metadata or None when nothing expires,
/// expired snapshot ids, removed ref names)`.
#[pyfunction]
#[pyo3(signature = (metadata, now_ms, older_than_ms=None, retain_last=None, snapshot_ids=None))]
fn expire_snapshots_apply(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    now_ms: i64,
    older_than_ms: Option<i64>,
    retain_last: Option<i32>,
    snapshot_ids: Option<Vec<i64>>,
) -> PyResult<(Option<PyTableMetadata>, Vec<i64>, Vec<String>)> {
    let opts =
        ExpireOptions { now_ms, older_than_ms, retain_last, snapshot_ids: snapshot_ids.unwrap_or_default() };
    let base = metadata.inner.clone();
    let got = py.detach(move || maintenance::expire(&base, &opts)).py()?;
    Ok(match got {
        None => (None, Vec::new(), Vec::new()),
        Some((md, sel)) => (Some(PyTableMetadata::new(md)), sel.expired_snapshot_ids, sel.removed_refs),
    })
}

/// Java's `cleanExpiredMetadata`: `metadata` without the partition specs and schemas no
/// snapshot of it uses (a new version at `now_ms` when given, else the same version, one an
/// expiry just produced), or `None` when every one is used.
#[pyfunction]
#[pyo3(signature = (metadata, now_ms=None))]
fn clean_expired_metadata(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    now_ms: Option<i64>,
) -> PyResult<Option<PyTableMetadata>> {
    let md = metadata.inner.clone();
    let got = py
        .detach(move || {
            let threads = maintenance::threads_for(md.location());
            maintenance::clean_expired_metadata(&md, now_ms, threads)
        })
        .py()?;
    Ok(got.map(PyTableMetadata::new))
}

/// The files freed by expiring `expired_ids` from `before`, given the versions kept
/// (`retained`): `[(kind, location, size in bytes)]`, content files first. Kinds: `data`,
/// `position_deletes`, `equality_deletes`, `manifest`, `manifest_list`, `statistics`.
#[pyfunction]
fn expired_snapshot_files(
    py: Python<'_>,
    before: &PyTableMetadata,
    expired_ids: Vec<i64>,
    retained: Vec<PyRef<'_, PyTableMetadata>>,
) -> PyResult<Vec<(&'static str, String, i64)>> {
    let before = before.inner.clone();
    let retained: Vec<std::sync::Arc<TableMetadata>> = retained.iter().map(|m| m.inner.clone()).collect();
    let files = py
        .detach(move || {
            let kept: Vec<&TableMetadata> = retained.iter().map(|m| m.as_ref()).collect();
            let threads = maintenance::threads_for(before.location());
            maintenance::expired_files(&before, &expired_ids, &kept, threads)
        })
        .py()?;
    Ok(files.into_iter().map(|f| (f.kind.as_str(), f.path, f.size)).collect())
}

/// The options of an orphan search from the bindings' arguments.
fn orphan_options(
    older_than_ms: i64,
    location: Option<String>,
    prefix_mismatch_mode: &str,
    equal_schemes: Option<HashMap<String, String>>,
    equal_authorities: Option<HashMap<String, String>>,
) -> PyResult<OrphanOptions> {
    Ok(OrphanOptions {
        location,
        older_than_ms,
        prefix_mismatch_mode: PrefixMismatchMode::parse(prefix_mismatch_mode).py()?,
        equal_schemes: equal_schemes.unwrap_or_default(),
        equal_authorities: equal_authorities.unwrap_or_default(),
        file_list: None,
    })
}

/// The orphan files of `metadata` under `location` (default: the table location) last
/// modified before `older_than_ms`: `[(location, size, checksum)]`, sorted (`checksum`: the
/// listing saw a hidden `.<name>.crc` that goes with the file). ValidationError when
/// `prefix_mismatch_mode` is `error` and references under another scheme or authority
/// were found (nothing to delete then). With `file_list` (`[(location, last modified epoch
/// ms)]`) those files are compared instead of a listing (Java's `compareToFileList`).
#[pyfunction]
#[pyo3(signature = (metadata, older_than_ms, location=None, prefix_mismatch_mode="error", equal_schemes=None, equal_authorities=None, file_list=None))]
#[allow(clippy::too_many_arguments)]
fn find_orphan_files(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    older_than_ms: i64,
    location: Option<String>,
    prefix_mismatch_mode: &str,
    equal_schemes: Option<HashMap<String, String>>,
    equal_authorities: Option<HashMap<String, String>>,
    file_list: Option<Vec<(String, i64)>>,
) -> PyResult<Vec<(String, u64, bool)>> {
    let mut opts =
        orphan_options(older_than_ms, location, prefix_mismatch_mode, equal_schemes, equal_authorities)?;
    opts.file_list = file_list;
    let md = metadata.inner.clone();
    let found = py.detach(move || maintenance::find_orphan_files(&md, &opts)).py()?;
    Ok(found.into_iter().map(|f| (f.location, f.size, f.checksum)).collect())
}

/// Finds and deletes the orphans of a local table at once, the deletes overlapping the
/// listing (see `maintenance::remove_orphan_files_overlapped`): `(orphans as
/// find_orphan_files gives them, [(location, error)] of those not deleted)`, or None when
/// that is not safe (a possible scheme/authority conflict) or not local: then find first
/// and delete after.
#[pyfunction]
#[pyo3(signature = (metadata, older_than_ms, location=None, prefix_mismatch_mode="error", equal_schemes=None, equal_authorities=None))]
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
fn remove_orphan_files_overlapped(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    older_than_ms: i64,
    location: Option<String>,
    prefix_mismatch_mode: &str,
    equal_schemes: Option<HashMap<String, String>>,
    equal_authorities: Option<HashMap<String, String>>,
) -> PyResult<Option<(Vec<(String, u64, bool)>, Vec<(String, String)>)>> {
    // The mode is checked although without conflicts it cannot matter: a bad value is refused alike.
    let opts =
        orphan_options(older_than_ms, location, prefix_mismatch_mode, equal_schemes, equal_authorities)?;
    let md = metadata.inner.clone();
    let done = py
        .detach(move || {
            let loc = opts.location.clone().unwrap_or_else(|| md.location().to_string());
            maintenance::remove_orphan_files_overlapped(&md, &opts, maintenance::delete_threads_for(&loc))
        })
        .py()?;
    Ok(done.map(|r| {
        (
            r.orphans.into_iter().map(|f| (f.location, f.size, f.checksum)).collect(),
            r.failures.into_iter().map(|f| (f.path, f.error.to_string())).collect(),
        )
    }))
}

/// Deletes the files (many in flight; missing ones count as deleted), locally with the
/// `.<name>.crc` checksum beside each unless `checksums` is false. Returns
/// `[(location, error message)]` of those that could not be deleted; never raises for one.
#[pyfunction]
#[pyo3(signature = (paths, checksums=true))]
fn delete_files_reporting(py: Python<'_>, paths: Vec<String>, checksums: bool) -> Vec<(String, String)> {
    py.detach(move || {
        let threads = paths.first().map_or(1, |p| maintenance::delete_threads_for(p));
        maintenance::delete_all(&paths, threads, checksums)
            .into_iter()
            .map(|f| (f.path, f.error.to_string()))
            .collect()
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(expire_snapshots_apply, m)?)?;
    m.add_function(wrap_pyfunction!(clean_expired_metadata, m)?)?;
    m.add_function(wrap_pyfunction!(expired_snapshot_files, m)?)?;
    m.add_function(wrap_pyfunction!(find_orphan_files, m)?)?;
    m.add_function(wrap_pyfunction!(remove_orphan_files_overlapped, m)?)?;
    m.add_function(wrap_pyfunction!(delete_files_reporting, m)?)?;
    Ok(())
}
