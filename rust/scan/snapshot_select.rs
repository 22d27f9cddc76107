//! Which snapshot(s) a scan reads: current, by id, as of a time (via the snapshot log),
//! by branch/tag name, or an incremental range of append snapshots.
//!
//! Every "not found" error lists what exists, so a user can correct the call.

use crate::error::{validation, Result};
use crate::spec::{Operation, Snapshot, TableMetadata};

/// How a scan picks its snapshot (at most one of the point-in-time forms).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SnapshotSelection {
    /// The table's current snapshot (none for an empty table).
    #[default]
    Current,
    SnapshotId(i64),
    /// The last snapshot that was current at or before this time (ms since epoch).
    AsOfTimestamp(i64),
    /// A branch or tag name.
    Ref(String),
    /// Files added by the append snapshots after `from` (exclusive; `None` = from the start of
    /// history) up to `to` (inclusive; `None` = current).
    Incremental {
        from_snapshot_id: Option<i64>,
        to_snapshot_id: Option<i64>,
    },
}

fn known_ids(metadata: &TableMetadata) -> String {
    let ids: Vec<String> = metadata.snapshots().iter().map(|s| s.snapshot_id.to_string()).collect();
    format!("[{}]", ids.join(", "))
}

fn by_id(metadata: &TableMetadata, id: i64) -> Result<&Snapshot> {
    metadata.snapshot_by_id(id).ok_or_else(|| {
        validation(format!(
            "snapshot id {id} is not in the table (known snapshot ids: {})",
            known_ids(metadata)
        ))
        .with_context("table", metadata.location().to_string())
    })
}

/// The snapshot a point-in-time selection names; `None` only for `Current` on an empty table.
/// `Incremental` is refused here: use [`select_append_range`].
pub fn select<'a>(
    metadata: &'a TableMetadata,
    selection: &SnapshotSelection,
) -> Result<Option<&'a Snapshot>> {
    match selection {
        SnapshotSelection::Current => Ok(metadata.current_snapshot()),
        SnapshotSelection::SnapshotId(id) => by_id(metadata, *id).map(Some),
        SnapshotSelection::AsOfTimestamp(ts) => {
            // Java SnapshotUtil.snapshotIdAsOfTime: the last log entry at or before `ts`.
            let id = metadata.snapshot_log().iter().rfind(|e| e.timestamp_ms <= *ts).map(|e| e.snapshot_id);
            match id {
                Some(id) => by_id(metadata, id).map(Some),
                None => {
                    let log: Vec<String> = metadata
                        .snapshot_log()
                        .iter()
                        .map(|e| format!("{}@{}", e.snapshot_id, e.timestamp_ms))
                        .collect();
                    Err(validation(format!(
                        "no snapshot was current at or before timestamp {ts} ms (snapshot log, id@ms: [{}])",
                        log.join(", ")
                    ))
                    .with_context("table", metadata.location().to_string()))
                }
            }
        }
        SnapshotSelection::Ref(name) => {
            let r = metadata.refs().get(name).ok_or_else(|| {
                let names: Vec<String> = metadata
                    .refs()
                    .iter()
                    .map(|(n, r)| format!("{n} ({})", if r.is_branch() { "branch" } else { "tag" }))
                    .collect();
                validation(format!("no branch or tag named '{name}' (refs: [{}])", names.join(", ")))
                    .with_context("table", metadata.location().to_string())
            })?;
            by_id(metadata, r.snapshot_id).map(Some)
        }
        SnapshotSelection::Incremental { .. } => {
            Err(validation("an incremental (from/to snapshot) selection names a range, not one snapshot"))
        }
    }
}

/// The append snapshots of an incremental scan, oldest first: the ancestors of `to`
/// (inclusive) back to `from` (exclusive) whose operation is `append`. `from` must be an
/// ancestor of `to`. Other snapshots in the range (overwrite, delete, replace) are passed
/// over, as Java's `IncrementalAppendScan` does: their added files are not read, and their
/// deletes do not apply.
pub fn select_append_range(
    metadata: &TableMetadata,
    from_snapshot_id: Option<i64>,
    to_snapshot_id: Option<i64>,
) -> Result<Vec<&Snapshot>> {
    let to = match to_snapshot_id {
        Some(id) => by_id(metadata, id)?,
        None => match metadata.current_snapshot() {
            Some(s) => s,
            None => {
                if let Some(from) = from_snapshot_id {
                    by_id(metadata, from)?;
                }
                return Ok(vec![]);
            }
        },
    };
    if let Some(from) = from_snapshot_id {
        by_id(metadata, from)?;
    }
    let mut range = Vec::new();
    let mut cursor = Some(to);
    let mut found_from = from_snapshot_id.is_none();
    while let Some(s) = cursor {
        if Some(s.snapshot_id) == from_snapshot_id {
            found_from = true;
            break;
        }
        range.push(s);
        cursor = match s.parent_snapshot_id {
            Some(p) => metadata.snapshot_by_id(p),
            None => None,
        };
        if range.len() > metadata.snapshots().len() {
            return Err(validation("the snapshot parent chain has a cycle")
                .with_context("table", metadata.location().to_string()));
        }
    }
    if !found_from {
        let chain: Vec<String> = range.iter().map(|s| s.snapshot_id.to_string()).collect();
        return Err(validation(format!(
            "from snapshot {} is not an ancestor of to snapshot {} (ancestors of {}: [{}])",
            from_snapshot_id.unwrap_or_default(),
            to.snapshot_id,
            to.snapshot_id,
            chain.join(", ")
        ))
        .with_context("table", metadata.location().to_string()));
    }
    range.retain(|s| s.summary.operation == Operation::Append);
    range.reverse();
    Ok(range)
}
