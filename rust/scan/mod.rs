//! Scan planning: snapshot -> manifest list -> manifests -> file scan tasks.
//!
//! This is the thin first planner: it selects the snapshot, reads every data manifest
//! and returns one task per live data file. Filters are applied row-wise by the reader
//! for now; pruning, the delete file index and splitting come with the scan planner work.

mod task;

pub use task::{CombinedScanTask, DeleteFileRef, FileScanTask};

use crate::error::{not_supported, Error, ErrorKind, Result};
use crate::manifest::{read_manifest, read_manifest_list, ManifestContent};
use crate::spec::{Snapshot, TableMetadata};

/// The snapshot a scan reads: `snapshot_id` if given (an unknown id is an error), else
/// the current one (`None` when the table has no snapshot yet).
pub fn select_snapshot(metadata: &TableMetadata, snapshot_id: Option<i64>) -> Result<Option<&Snapshot>> {
    match snapshot_id {
        Some(id) => metadata.snapshot_by_id(id).map(Some).ok_or_else(|| {
            let known: Vec<String> = metadata.snapshots().iter().map(|s| s.snapshot_id.to_string()).collect();
            Error::new(
                ErrorKind::Validation,
                format!("snapshot id {id} is not in the table (known snapshot ids: [{}])", known.join(", ")),
            )
            .with_context("table", metadata.location().to_string())
        }),
        None => Ok(metadata.current_snapshot()),
    }
}

/// One task per live data file of the snapshot.
///
/// A snapshot with live delete files is refused: reading it without applying the
/// deletes would return rows that were deleted.
pub fn plan_files(metadata: &TableMetadata, snapshot_id: Option<i64>) -> Result<Vec<FileScanTask>> {
    let Some(snapshot) = select_snapshot(metadata, snapshot_id)? else {
        return Ok(vec![]);
    };
    let list = snapshot.manifest_list.as_deref().ok_or_else(|| {
        not_supported(format!(
            "snapshot {} lists its manifests inline (legacy v1 'manifests'); not supported yet",
            snapshot.snapshot_id
        ))
    })?;
    let manifests = read_manifest_list(list)?;
    let mut tasks = Vec::new();
    for manifest in &manifests {
        let entries = read_manifest(manifest)?;
        let live = entries.into_iter().filter(|e| e.status.is_live());
        if manifest.content == ManifestContent::Deletes {
            if let Some(e) = live.into_iter().next() {
                return Err(not_supported(format!(
                    "snapshot {} has row-level delete files (merge-on-read); applying them is not \
                     supported yet, and reading without them would return deleted rows",
                    snapshot.snapshot_id
                ))
                .with_context("delete file", e.data_file.file_path));
            }
            continue;
        }
        for e in live {
            let seq = e.sequence_number.unwrap_or(0);
            tasks.push(FileScanTask::whole_file(e.data_file, seq));
        }
    }
    Ok(tasks)
}
