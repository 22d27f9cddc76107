//! The metadata tables read from table metadata alone: `snapshots`, `history`, `refs` and
//! `metadata_log_entries` (Java `SnapshotsTable`, `HistoryTable`, `RefsTable`,
//! `MetadataLogEntriesTable`).

use std::collections::HashSet;

use arrow_array::RecordBatch;
use arrow_schema::{DataType, SchemaRef};

use super::cells::{batch, field, map_type, schema_ref, timestamptz, Cell};
use crate::error::{invalid_data, Result};
use crate::spec::{SnapshotRetention, TableMetadata};

pub(crate) fn snapshots_schema() -> SchemaRef {
    schema_ref(vec![
        field("committed_at", timestamptz(), false),
        field("snapshot_id", DataType::Int64, false),
        field("parent_id", DataType::Int64, true),
        field("operation", DataType::Utf8, true),
        field("manifest_list", DataType::Utf8, true),
        field("summary", map_type(DataType::Utf8, DataType::Utf8, false), true),
    ])
}

/// One row per snapshot in the metadata, in metadata order.
pub fn snapshots(md: &TableMetadata) -> Result<RecordBatch> {
    let rows = md
        .snapshots()
        .iter()
        .map(|s| {
            vec![
                Cell::Long(s.timestamp_ms.saturating_mul(1000)),
                Cell::Long(s.snapshot_id),
                Cell::opt_long(s.parent_snapshot_id),
                Cell::Str(s.summary.operation.as_str().to_string()),
                Cell::opt_str(s.manifest_list.as_deref()),
                Cell::Map(
                    s.summary
                        .other
                        .iter()
                        .map(|(k, v)| (Cell::Str(k.clone()), Cell::Str(v.clone())))
                        .collect(),
                ),
            ]
        })
        .collect();
    batch(snapshots_schema(), rows)
}

pub(crate) fn history_schema() -> SchemaRef {
    schema_ref(vec![
        field("made_current_at", timestamptz(), false),
        field("snapshot_id", DataType::Int64, false),
        field("parent_id", DataType::Int64, true),
        field("is_current_ancestor", DataType::Boolean, false),
    ])
}

/// The ids of the current snapshot and its ancestors still in the metadata (Java
/// `SnapshotUtil.currentAncestorIds`).
fn current_ancestor_ids(md: &TableMetadata) -> HashSet<i64> {
    let mut ids = HashSet::new();
    let mut next = md.current_snapshot();
    while let Some(s) = next {
        if !ids.insert(s.snapshot_id) {
            break; // a cycle in parent ids: stop rather than loop
        }
        next = s.parent_snapshot_id.and_then(|p| md.snapshot_by_id(p));
    }
    ids
}

/// One row per snapshot-log entry: when each snapshot became current.
pub fn history(md: &TableMetadata) -> Result<RecordBatch> {
    let ancestors = current_ancestor_ids(md);
    let rows = md
        .snapshot_log()
        .iter()
        .map(|e| {
            let parent = md.snapshot_by_id(e.snapshot_id).and_then(|s| s.parent_snapshot_id);
            vec![
                Cell::Long(e.timestamp_ms.saturating_mul(1000)),
                Cell::Long(e.snapshot_id),
                Cell::opt_long(parent),
                Cell::Bool(ancestors.contains(&e.snapshot_id)),
            ]
        })
        .collect();
    batch(history_schema(), rows)
}

pub(crate) fn refs_schema() -> SchemaRef {
    schema_ref(vec![
        field("name", DataType::Utf8, false),
        field("type", DataType::Utf8, false),
        field("snapshot_id", DataType::Int64, false),
        field("max_reference_age_in_ms", DataType::Int64, true),
        field("min_snapshots_to_keep", DataType::Int32, true),
        field("max_snapshot_age_in_ms", DataType::Int64, true),
    ])
}

/// One row per branch or tag.
pub fn refs(md: &TableMetadata) -> Result<RecordBatch> {
    let rows = md
        .refs()
        .iter()
        .map(|(name, r)| {
            let (kind, max_ref_age, min_keep, max_snap_age) = match &r.retention {
                SnapshotRetention::Branch { min_snapshots_to_keep, max_snapshot_age_ms, max_ref_age_ms } => {
                    ("BRANCH", *max_ref_age_ms, *min_snapshots_to_keep, *max_snapshot_age_ms)
                }
                SnapshotRetention::Tag { max_ref_age_ms } => ("TAG", *max_ref_age_ms, None, None),
            };
            vec![
                Cell::Str(name.clone()),
                Cell::Str(kind.to_string()),
                Cell::Long(r.snapshot_id),
                Cell::opt_long(max_ref_age),
                Cell::opt_int(min_keep),
                Cell::opt_long(max_snap_age),
            ]
        })
        .collect();
    batch(refs_schema(), rows)
}

pub(crate) fn metadata_log_entries_schema() -> SchemaRef {
    schema_ref(vec![
        field("timestamp", timestamptz(), false),
        field("file", DataType::Utf8, false),
        field("latest_snapshot_id", DataType::Int64, true),
        field("latest_schema_id", DataType::Int32, true),
        field("latest_sequence_number", DataType::Int64, true),
    ])
}

/// One row per previous metadata file plus the current one. The latest snapshot of an entry
/// is the last snapshot-log entry at or before its time (Java `SnapshotUtil.snapshotIdAsOfTime`
/// on the current snapshot log); schema and sequence number come from that snapshot while it
/// is still in the metadata.
pub fn metadata_log_entries(md: &TableMetadata) -> Result<RecordBatch> {
    let current = md.metadata_location().ok_or_else(|| {
        invalid_data(
            "metadata_log_entries needs the location of the table's current metadata file, found none",
        )
    })?;
    let mut entries: Vec<(i64, &str)> =
        md.metadata_log().iter().map(|e| (e.timestamp_ms, e.metadata_file.as_str())).collect();
    entries.push((md.last_updated_ms(), current));
    let rows = entries
        .into_iter()
        .map(|(ts, file)| {
            let latest = md.snapshot_log().iter().rfind(|e| e.timestamp_ms <= ts).map(|e| e.snapshot_id);
            let snap = latest.and_then(|id| md.snapshot_by_id(id));
            vec![
                Cell::Long(ts.saturating_mul(1000)),
                Cell::Str(file.to_string()),
                Cell::opt_long(latest),
                Cell::opt_int(snap.and_then(|s| s.schema_id)),
                Cell::opt_long(snap.map(|s| s.sequence_number)),
            ]
        })
        .collect();
    batch(metadata_log_entries_schema(), rows)
}
