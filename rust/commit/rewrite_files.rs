//! Rewrite files (Iceberg Java's `BaseRewriteFiles`, as `RewriteDataFilesCommitManager` drives
//! it): replace data files by new ones holding the same live rows, as one `replace` snapshot.
//!
//! - The new files keep the starting snapshot's data sequence number (Java's
//!   `use-starting-sequence-number`, on by default): an equality delete committed while the
//!   rewrite ran has a higher sequence number and still applies to the rewritten rows, so it
//!   is no conflict (Java's `validateNoNewDeletesForDataFiles(ignoreEqualityDeletes)`).
//! - A position delete or deletion vector committed meanwhile against a rewritten file would
//!   be lost with the file: that is a commit conflict, as is a rewritten file no longer live
//!   (Java's `failMissingDeletePaths`). Never a resurrected row.
//! - Delete files that no longer apply are dropped in the same snapshot: deletion vectors of
//!   the rewritten files (Java's `danglingDVs`), delete files older than every live data file
//!   (Java's `ManifestFilterManager.dropDeleteFilesOlderThan`; here the minimum includes the
//!   new files, which Java's omits) and, with `remove_dangling_deletes`, the per-partition
//!   rules of Java's `RemoveDanglingDeletesSparkAction` (which Java commits as a second
//!   snapshot), including its file-scoped position delete files whose data file is gone.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::commit::producer::{partition_key, produce, Change, Removal};
use crate::commit::validation::snapshots_since;
use crate::error::{validation, Error, ErrorKind, Result};
use crate::manifest::{
    read_manifest, read_manifest_list, DataContentType, DataFile, FileFormat, ManifestContent,
};
use crate::scan::delete_file_index::referenced_data_file;
use crate::spec::{Operation, TableMetadata};

/// One rewrite to commit.
#[derive(Debug, Clone, Default)]
pub struct RewriteFiles {
    /// The snapshot the rewrite read (validation starts there; its sequence number is the
    /// new files' data sequence number).
    pub start_snapshot_id: Option<i64>,
    /// The data files rewritten (as planned: path, partition and spec id are used).
    pub rewritten: Vec<DataFile>,
    /// The new data files.
    pub added: Vec<DataFile>,
    /// Give the new files the starting snapshot's data sequence number (Java's default).
    pub use_starting_sequence_number: bool,
    /// Also drop delete files that apply to no live data file of their partition.
    pub remove_dangling_deletes: bool,
    pub summary_properties: BTreeMap<String, String>,
}

/// Validates `rw` against the snapshots committed since it started, then builds the next
/// metadata. Returns the uncommitted metadata and every file written.
pub fn rewrite_files(
    base: &TableMetadata,
    rw: RewriteFiles,
    now_ms: i64,
) -> Result<(TableMetadata, Vec<String>)> {
    if rw.rewritten.is_empty() {
        return Err(validation("a rewrite needs data files to replace; found none"));
    }
    let removed: BTreeSet<String> = rw.rewritten.iter().map(|f| f.file_path.clone()).collect();
    validate_no_new_deletes(base, &rw, &removed)?;
    let data_seq = match (rw.use_starting_sequence_number, rw.start_snapshot_id) {
        (true, Some(id)) => Some(
            base.snapshot_by_id(id)
                .ok_or_else(|| conflict(format!("the rewrite's starting snapshot {id} no longer exists")))?
                .sequence_number,
        ),
        _ => None,
    };
    let new_seq = data_seq.unwrap_or_else(|| base.next_sequence_number());
    let dangling = dangling_deletes(base, &removed, &rw.added, new_seq, rw.remove_dangling_deletes)?;
    let change = Change {
        added: rw.added,
        removal: Removal::Paths(removed),
        removed_deletes: dangling,
        operation: Some(Operation::Replace),
        summary_properties: rw.summary_properties,
        added_data_sequence_number: data_seq,
        ..Default::default()
    };
    produce(base, change, now_ms)
}

fn conflict(msg: String) -> Error {
    Error::new(ErrorKind::CommitConflict, msg)
}

/// Fails when a snapshot committed since the start added a delete file that may apply to a
/// rewritten file: position deletes and DVs always, equality deletes only when the new files
/// do not keep the starting sequence number (then the delete would no longer apply to them).
/// A partition-scoped position delete in a rewritten file's partition counts (conservative:
/// Java also looks at its path bounds).
fn validate_no_new_deletes(
    base: &TableMetadata,
    rw: &RewriteFiles,
    removed: &BTreeSet<String>,
) -> Result<()> {
    if base.current_snapshot().map(|s| s.snapshot_id) == rw.start_snapshot_id || base.format_version() < 2 {
        return Ok(());
    }
    let partitions: BTreeSet<String> =
        rw.rewritten.iter().map(|f| partition_key(base, f)).collect::<Result<_>>()?;
    for s in snapshots_since(base, rw.start_snapshot_id)? {
        if !matches!(s.summary.operation, Operation::Overwrite | Operation::Delete) {
            continue;
        }
        let Some(list) = s.manifest_list.as_deref() else { continue };
        for m in read_manifest_list(list)? {
            if m.content != ManifestContent::Deletes || m.added_snapshot_id != s.snapshot_id {
                continue;
            }
            for e in read_manifest(&m)? {
                if e.snapshot_id != Some(s.snapshot_id) || e.status != crate::manifest::EntryStatus::Added {
                    continue;
                }
                let mut d = e.data_file;
                d.spec_id = m.partition_spec_id;
                let applies = match d.content {
                    DataContentType::PositionDeletes => match referenced_data_file(&d) {
                        Some(p) => removed.contains(&p),
                        None => partitions.contains(&partition_key(base, &d)?),
                    },
                    DataContentType::EqualityDeletes if !rw.use_starting_sequence_number => {
                        base.spec_by_id(d.spec_id).is_some_and(|s| s.is_unpartitioned())
                            || partitions.contains(&partition_key(base, &d)?)
                    }
                    _ => false,
                };
                if applies {
                    return Err(conflict(format!(
                        "concurrent snapshot {} ({}) added delete file {} that may apply to a rewritten data file; \
                         the rewrite would lose those deletes",
                        s.snapshot_id, s.summary.operation, d.file_path
                    ))
                    .with_context("conflicting snapshot", s.snapshot_id.to_string()));
                }
            }
        }
    }
    Ok(())
}

/// The live delete files of `base` that apply to no live data file once `removed` is
/// replaced by `added` (at data sequence number `added_seq`). See the module doc.
fn dangling_deletes(
    base: &TableMetadata,
    removed: &BTreeSet<String>,
    added: &[DataFile],
    added_seq: i64,
    per_partition: bool,
) -> Result<BTreeSet<String>> {
    let Some(list) = base.current_snapshot().and_then(|s| s.manifest_list.as_deref()) else {
        return Ok(BTreeSet::new());
    };
    let mut min_by_partition: HashMap<String, i64> = HashMap::new();
    let mut live_paths: BTreeSet<String> = BTreeSet::new();
    let mut global_min = base.last_sequence_number();
    let mut deletes: Vec<(DataFile, i64)> = Vec::new();
    let note = |key: String, seq: i64, min: &mut HashMap<String, i64>| {
        let m = min.entry(key).or_insert(seq);
        *m = (*m).min(seq);
    };
    for m in read_manifest_list(list)? {
        for e in read_manifest(&m)? {
            if !e.status.is_live() {
                continue;
            }
            let seq = e.sequence_number.ok_or_else(|| {
                validation("a live manifest entry has no data sequence number after inheritance")
                    .with_context("manifest", m.manifest_path.clone())
            })?;
            let mut f = e.data_file;
            f.spec_id = m.partition_spec_id;
            if m.content == ManifestContent::Deletes {
                deletes.push((f, seq));
            } else if !removed.contains(&f.file_path) {
                global_min = global_min.min(seq);
                note(partition_key(base, &f)?, seq, &mut min_by_partition);
                live_paths.insert(f.file_path);
            }
        }
    }
    for f in added {
        global_min = global_min.min(added_seq);
        note(partition_key(base, f)?, added_seq, &mut min_by_partition);
        live_paths.insert(f.file_path.clone());
    }
    // Java skips the per-partition pass on a table that only ever had the unpartitioned spec.
    let only_unpartitioned = base.partition_specs().iter().all(|s| s.is_unpartitioned());
    let mut out = BTreeSet::new();
    for (d, seq) in deletes {
        let is_dv = d.file_format == FileFormat::Puffin;
        let referenced = referenced_data_file(&d);
        let target_gone = referenced.as_ref().is_some_and(|p| !live_paths.contains(p));
        // Deletion vectors of rewritten files always go (Java's `danglingDVs`); with
        // `remove_dangling_deletes` so do file-scoped v2 position delete files whose one data
        // file is gone (Java 1.12's RemoveDanglingDeletes, apache/iceberg#17205).
        let dangling_dv =
            target_gone && (is_dv || (per_partition && d.content == DataContentType::PositionDeletes));
        let older_than_all = seq > 0 && seq < global_min;
        let dangling_in_partition = per_partition && !only_unpartitioned && {
            let global_eq = d.content == DataContentType::EqualityDeletes
                && base.spec_by_id(d.spec_id).is_some_and(|s| s.is_unpartitioned());
            let min = if global_eq {
                (!live_paths.is_empty()).then_some(global_min)
            } else {
                min_by_partition.get(&partition_key(base, &d)?).copied()
            };
            match (min, d.content) {
                (None, _) => true,
                (Some(min), DataContentType::EqualityDeletes) => seq <= min,
                (Some(min), _) => seq < min,
            }
        };
        if dangling_dv || older_than_all || dangling_in_partition {
            out.insert(d.removal_key().into_owned());
        }
    }
    Ok(out)
}

#[cfg(test)]
#[path = "rewrite_files_tests.rs"]
mod tests;
