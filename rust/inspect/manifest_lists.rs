//! The manifest lists the metadata tables read: one snapshot's, and the distinct manifests
//! of all snapshots (the `all_*` tables).

use std::collections::HashSet;

use crate::error::{not_supported, Result};
use crate::manifest::{read_manifest_list, ManifestFile};
use crate::spec::{Snapshot, TableMetadata};

/// The manifest list of a snapshot.
pub(crate) fn manifest_list(snapshot: &Snapshot) -> Result<Vec<ManifestFile>> {
    let list = snapshot.manifest_list.as_deref().ok_or_else(|| {
        not_supported(format!(
            "snapshot {} lists its manifests inline (legacy v1 'manifests'); not supported",
            snapshot.snapshot_id
        ))
    })?;
    read_manifest_list(list).map_err(|e| e.with_context("snapshot id", snapshot.snapshot_id.to_string()))
}

/// The distinct manifests reachable from any snapshot (Java `reachableManifests`), in the
/// order first met walking the snapshots in metadata order.
pub(crate) fn reachable_manifests(md: &TableMetadata) -> Result<Vec<ManifestFile>> {
    let lists = crate::scan::parallel_map(md.snapshots(), crate::scan::default_threads(), manifest_list);
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for list in lists {
        for m in list? {
            if seen.insert(m.manifest_path.clone()) {
                out.push(m);
            }
        }
    }
    Ok(out)
}
