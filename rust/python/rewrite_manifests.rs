//! Bindings of `rewrite_manifests` (rust/commit/rewrite_manifests.rs): plan, write and build
//! the `replace` snapshot on a base; the Python commit loop swaps it in and rebuilds on a
//! lost race.

use std::collections::BTreeMap;

use pyo3::prelude::*;

use super::errors::PyResultExt;
use super::metadata::PyTableMetadata;
use crate::commit::RewriteManifests;
use crate::manifest::ManifestFile;

fn manifest_json(m: &ManifestFile) -> serde_json::Value {
    serde_json::json!({
        "path": m.manifest_path,
        "length": m.manifest_length,
        "content": m.content.as_str(),
        "spec_id": m.partition_spec_id,
        "live_files": m.added_files_count.unwrap_or(0) + m.existing_files_count.unwrap_or(0),
    })
}

/// The rewrite of `metadata`'s current snapshot: `None` when there is nothing to rewrite,
/// else `(uncommitted metadata, files written, outcome JSON)`; the outcome has `replaced`
/// and `added` (manifests: `path`, `length`, `content`, `spec_id`, `live_files`) and
/// `entries_processed`.
#[pyfunction]
#[pyo3(signature = (metadata, *, spec_id=None, snapshot_properties=None, sort_by=None))]
fn rewrite_manifests(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    spec_id: Option<i32>,
    snapshot_properties: Option<BTreeMap<String, String>>,
    sort_by: Option<Vec<String>>,
) -> PyResult<Option<(PyTableMetadata, Vec<String>, String)>> {
    let rw =
        RewriteManifests { spec_id, sort_by, summary_properties: snapshot_properties.unwrap_or_default() };
    let base = metadata.inner.clone();
    let now = chrono::Utc::now().timestamp_millis();
    let got = py.detach(move || crate::commit::rewrite_manifests(&base, &rw, now)).py()?;
    Ok(got.map(|(md, written, outcome)| {
        let json = serde_json::json!({
            "replaced": outcome.replaced.iter().map(manifest_json).collect::<Vec<_>>(),
            "added": outcome.added.iter().map(manifest_json).collect::<Vec<_>>(),
            "entries_processed": outcome.entries_processed,
        });
        (PyTableMetadata::new(md), written, json.to_string())
    }))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(rewrite_manifests, m)?)?;
    Ok(())
}
