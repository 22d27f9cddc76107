//! Conflict validation for a commit that lost the race (Iceberg Java's
//! `MergingSnapshotProducer.validateAddedDataFiles` / `validateNoNewDeleteFiles` /
//! `validateDeletedDataFiles`): walk the snapshots committed since the operation read the
//! table and fail with a CommitConflict naming the first that touched what it replaces.
//!
//! Appends never conflict. An overwrite or partition replacement at serializable isolation
//! conflicts when a concurrent snapshot added data files in its scope, added delete files in
//! its scope, removed a data file in its scope (Java's `validateDeletedDataFiles`), or removed
//! one of the files it removes. Whatever the scope, a concurrent delete file that may apply
//! to a data file the operation removes conflicts (Java's `validateNoNewDeletesForDataFiles`):
//! a copy-on-write rewrite copies that file's rows into a new file with a newer sequence
//! number, where the delete would no longer apply. A row-filter scope is answered from file metadata (partition
//! projections and column stats, [`RowFilter::may_match`]), so a concurrent write into
//! another partition, or outside the filter's value range, is not a conflict.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::commit::producer::partition_key;
use crate::commit::row_filter::RowFilter;
use crate::error::{Error, ErrorKind, Result};
use crate::manifest::{
    read_manifest, read_manifest_list, DataContentType, DataFile, EntryStatus, ManifestContent,
};
use crate::spec::{Operation, Snapshot, TableMetadata};

/// Which concurrently added files conflict.
#[derive(Debug, Clone, Default)]
pub enum ConflictScope {
    /// None (appends; snapshot isolation for new data).
    #[default]
    Nothing,
    /// Any file (a filter that cannot be evaluated against file metadata is treated as
    /// possibly matching everything: never a silent lost update).
    Everything,
    /// Files in these partitions (`<spec id>:<path>` keys).
    Partitions(BTreeSet<String>),
    /// Files that may hold rows matching this filter.
    Filter(Arc<RowFilter>),
}

impl ConflictScope {
    fn matches(&self, base: &TableMetadata, f: &DataFile) -> Result<bool> {
        Ok(match self {
            ConflictScope::Nothing => false,
            ConflictScope::Everything => true,
            ConflictScope::Partitions(keys) => keys.contains(&partition_key(base, f)?),
            ConflictScope::Filter(filter) => filter.may_match(f),
        })
    }
}

/// What an operation must check against the snapshots committed after it read the table.
#[derive(Debug, Clone, Default)]
pub struct Validation {
    /// The snapshot the operation read (None: the table had no snapshot).
    pub start_snapshot_id: Option<i64>,
    /// Concurrently added data files in this scope conflict (serializable isolation).
    pub data: ConflictScope,
    /// Concurrently added delete files in this scope conflict.
    pub deletes: ConflictScope,
    /// Files the operation removes: a concurrent removal of any of them conflicts.
    pub removed_paths: BTreeSet<String>,
    /// Data files the operation's position deletes reference (Java's
    /// `validateDataFilesExist`): a concurrent removal of any of them conflicts, so no
    /// delete ever dangles.
    pub required_paths: BTreeSet<String>,
}

impl Validation {
    fn is_noop(&self) -> bool {
        matches!(self.data, ConflictScope::Nothing)
            && matches!(self.deletes, ConflictScope::Nothing)
            && self.removed_paths.is_empty()
            && self.required_paths.is_empty()
    }
}

/// The snapshots of `base`'s main branch committed after `start` (newest first). A start
/// that is not an ancestor of the current snapshot (rollback, expiry) is a conflict.
pub fn snapshots_since(base: &TableMetadata, start: Option<i64>) -> Result<Vec<&Snapshot>> {
    let mut out = Vec::new();
    let mut cur = base.current_snapshot();
    while let Some(s) = cur {
        if Some(s.snapshot_id) == start {
            return Ok(out);
        }
        out.push(s);
        cur = s.parent_snapshot_id.and_then(|p| base.snapshot_by_id(p));
    }
    match start {
        None => Ok(out),
        Some(id) => Err(conflict(format!(
            "cannot determine the history since snapshot {id}: it is no longer an ancestor of the \
             current snapshot"
        ))),
    }
}

fn conflict(msg: String) -> Error {
    Error::new(ErrorKind::CommitConflict, msg)
}

/// The data files an operation removes, as far as a new delete file can apply to them:
/// their paths, and the partitions (`partition_key`) they were in at the start snapshot.
struct RemovedFiles<'a> {
    paths: &'a BTreeSet<String>,
    partitions: Option<BTreeSet<String>>,
}

impl RemovedFiles<'_> {
    /// The partitions of the removed files, read once from the start snapshot's manifests.
    fn partitions(&mut self, base: &TableMetadata, start: Option<i64>) -> Result<&BTreeSet<String>> {
        if self.partitions.is_none() {
            let mut found = BTreeSet::new();
            let list = start.and_then(|id| base.snapshot_by_id(id)).and_then(|s| s.manifest_list.as_deref());
            if let Some(list) = list {
                for m in read_manifest_list(list)? {
                    if m.content != ManifestContent::Data {
                        continue;
                    }
                    for e in read_manifest(&m)? {
                        if e.status != EntryStatus::Deleted && self.paths.contains(&e.data_file.file_path) {
                            found.insert(partition_key(base, &e.data_file)?);
                        }
                    }
                }
            }
            self.partitions = Some(found);
        }
        Ok(self.partitions.get_or_insert_with(BTreeSet::new))
    }

    /// May the delete file `d` apply to a removed data file? A file-scoped position delete
    /// applies to the file it references; an equality delete of an unpartitioned spec to
    /// every partition; any other delete to the data of its own partition.
    fn may_be_deleted_by(&mut self, base: &TableMetadata, start: Option<i64>, d: &DataFile) -> Result<bool> {
        if self.paths.is_empty() {
            return Ok(false);
        }
        if d.content == DataContentType::PositionDeletes {
            if let Some(p) = &d.referenced_data_file {
                return Ok(self.paths.contains(p));
            }
        }
        let global = d.content == DataContentType::EqualityDeletes
            && base.spec_by_id(d.spec_id).is_some_and(|s| s.is_unpartitioned());
        if global {
            return Ok(true);
        }
        let key = partition_key(base, d)?;
        Ok(self.partitions(base, start)?.contains(&key))
    }
}

/// Checks `v` against every snapshot committed since `v.start_snapshot_id`.
pub fn validate(base: &TableMetadata, v: &Validation) -> Result<()> {
    if v.is_noop() {
        return Ok(());
    }
    let mut removed = RemovedFiles { paths: &v.removed_paths, partitions: None };
    for s in snapshots_since(base, v.start_snapshot_id)? {
        let op = s.summary.operation;
        let check_data = op == Operation::Append || op == Operation::Overwrite;
        let check_deletes = op == Operation::Overwrite || op == Operation::Delete;
        let check_removed = op != Operation::Append;
        let Some(list) = s.manifest_list.as_deref() else { continue };
        for m in read_manifest_list(list)? {
            if m.added_snapshot_id != s.snapshot_id {
                continue;
            }
            for e in read_manifest(&m)? {
                if e.snapshot_id != Some(s.snapshot_id) {
                    continue;
                }
                let f = &e.data_file;
                let is_data = f.content == DataContentType::Data;
                let hit = match e.status {
                    EntryStatus::Added if is_data => check_data && v.data.matches(base, f)?,
                    EntryStatus::Added => {
                        check_deletes
                            && (v.deletes.matches(base, f)?
                                || removed.may_be_deleted_by(base, v.start_snapshot_id, f)?)
                    }
                    EntryStatus::Deleted => {
                        is_data
                            && check_removed
                            && (v.removed_paths.contains(&f.file_path)
                                || v.required_paths.contains(&f.file_path)
                                || v.deletes.matches(base, f)?)
                    }
                    EntryStatus::Existing => false,
                };
                if hit {
                    let what = match (e.status, is_data) {
                        (EntryStatus::Deleted, _) => "removed a data file this operation reads or removes",
                        (_, true) => "added data files that may match this operation's filter or partitions",
                        (_, false) => "added delete files that may apply to the replaced data",
                    };
                    return Err(conflict(format!(
                        "concurrent snapshot {} ({}) {what}: {}",
                        s.snapshot_id, op, f.file_path
                    ))
                    .with_context("conflicting snapshot", s.snapshot_id.to_string()));
                }
            }
        }
    }
    Ok(())
}
