//! Converting equality deletes to position deletes (Iceberg Java declares
//! `ConvertEqualityDeleteFiles` but ships no implementation; this follows the spec's rules).
//!
//! An upsert stream (Flink's upsert writer, icefloe's `upsert` on a merge-on-read table)
//! leaves an equality delete file per commit; every read then hashes their keys and probes
//! every older data file of their scope. Converting joins them once with the data they cover
//! and records the deleted rows as position deletes (deletion vectors on v3), so reads stop
//! paying for equality deletes without rewriting the data:
//!
//! 1. Plan ([`plan_conversion`]): the scan planner's delete index gives each live data file
//!    the equality deletes that apply to it (delete seq > data seq, same partition or a global
//!    delete of an unpartitioned spec, bounds-pruned as Java's `canContainEqDeletesForFile`).
//!    An equality delete file is removed only when every data file it applies to is converted:
//!    with a filter, one that also applies to an unselected data file is kept (and not
//!    converted anywhere). A live equality delete that applies to no data file is removed too
//!    (with a filter: when its partition and stats may match it).
//! 2. Convert (`writer::convert_equality_deletes`, per task, in process or on executors): the
//!    task reader returns exactly the rows the task's (removable) equality deletes remove,
//!    with the same key maps as every read; their positions become position deletes merged
//!    with the data file's earlier ones (a v3 data file keeps one deletion vector).
//! 3. Commit ([`commit_conversion`]): one row delta adding the position deletes and removing
//!    the converted equality deletes and the replaced position deletes. Java's `BaseRowDelta`
//!    names a row delta that adds delete files and no data files `delete`; so does this one.
//!
//! Sequence numbers: the new position deletes name their data files by path, so data
//! committed after the equality deletes (same key, higher sequence number) is never touched.
//! What can go wrong is concurrency, checked by [`validate_conversion`] against every snapshot
//! committed since the plan's: a converted data file removed meanwhile (its rows may live on in
//! a rewritten file the removed equality delete would still apply to) conflicts; so does a data
//! file added with a sequence number below a removed equality delete's in its scope (a
//! compaction keeping its starting sequence number), and a deletion vector added for a data
//! file this conversion writes one for (Java's `validateAddedDVs`: one vector per data file).
//! A removed delete file that is no longer live is a conflict of the producer. New data and
//! new equality deletes committed meanwhile are no conflict: the equality deletes kept still
//! apply to everything they applied to.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::hash::{Hash, Hasher};

use crate::commit::{row_delta, snapshots_since, RowDelta};
use crate::error::{Error, ErrorKind, Result};
use crate::manifest::{
    read_manifest, read_manifest_list, DataContentType, DataFile, EntryStatus, FileFormat, ManifestContent,
};
use crate::scan::{plan_scan, without_stats, DeleteFileRef, FileScanTask, ScanFilterRef, ScanOptions};
use crate::spec::TableMetadata;

/// What a conversion reads and removes.
#[derive(Debug, Clone, Default)]
pub struct ConversionPlan {
    /// The snapshot planned from (None: the table has no snapshot).
    pub snapshot_id: Option<i64>,
    /// One whole-file task per data file to convert, with its position deletes and only the
    /// equality deletes this conversion removes.
    pub tasks: Vec<FileScanTask>,
    /// The equality delete files the commit removes, with their data sequence numbers.
    pub removed: Vec<DeleteFileRef>,
    /// Every data file a removed equality delete applies to (converted, whether or not a row
    /// of it was deleted).
    pub covered_data_files: BTreeSet<String>,
    /// Live equality delete files left in place (the filter did not cover their scope).
    pub kept: usize,
}

fn live_equality_deletes(md: &TableMetadata, snapshot_id: i64) -> Result<Vec<DeleteFileRef>> {
    let Some(list) = md.snapshot_by_id(snapshot_id).and_then(|s| s.manifest_list.as_deref()) else {
        return Ok(vec![]);
    };
    let mut out = Vec::new();
    for m in read_manifest_list(list)? {
        if m.content != ManifestContent::Deletes || !(m.has_added_files() || m.has_existing_files()) {
            continue;
        }
        for e in read_manifest(&m)? {
            if !e.status.is_live() || e.data_file.content != DataContentType::EqualityDeletes {
                continue;
            }
            let seq = e.sequence_number.ok_or_else(|| {
                crate::error::invalid_data("a live equality delete has no data sequence number")
                    .with_context("manifest", m.manifest_path.clone())
            })?;
            let mut file = e.data_file;
            file.spec_id = m.partition_spec_id;
            out.push(DeleteFileRef { file, data_sequence_number: seq });
        }
    }
    Ok(out)
}

fn filter_matches(md: &TableMetadata, filter: Option<&ScanFilterRef>, f: &DataFile) -> Result<bool> {
    let Some(filter) = filter else { return Ok(true) };
    let spec = md.spec_by_id(f.spec_id).ok_or_else(|| {
        crate::error::invalid_data(format!("unknown partition spec id {}", f.spec_id))
            .with_context("file", f.file_path.clone())
    })?;
    filter.file_may_match(f, spec)
}

/// Plans the conversion of the current snapshot's equality deletes (those whose whole scope
/// `filter` selects; all without one).
pub fn plan_conversion(md: &TableMetadata, filter: Option<ScanFilterRef>) -> Result<ConversionPlan> {
    let Some(snapshot_id) = md.current_snapshot_id() else { return Ok(ConversionPlan::default()) };
    if md.format_version() < 2 {
        return Ok(ConversionPlan { snapshot_id: Some(snapshot_id), ..Default::default() });
    }
    let live = live_equality_deletes(md, snapshot_id)?;
    if live.is_empty() {
        return Ok(ConversionPlan { snapshot_id: Some(snapshot_id), ..Default::default() });
    }
    // Stats are kept only to answer the filter (then dropped from the tasks).
    let options = ScanOptions { include_column_stats: filter.is_some(), ..ScanOptions::default() };
    let plan = plan_scan(md, &options, None)?;
    if plan.snapshot_id != Some(snapshot_id) {
        return Err(crate::error::invalid_data(format!(
            "planned snapshot {:?}, expected the current snapshot {snapshot_id}",
            plan.snapshot_id
        )));
    }
    // Which data files each equality delete applies to, and the ones it cannot be removed
    // from (it also applies to a data file the filter leaves out).
    let mut applies: HashMap<&str, usize> = HashMap::new();
    let mut blocked: HashSet<&str> = HashSet::new();
    let planned = plan.tasks.into_vec();
    let mut selected = Vec::with_capacity(planned.len());
    for t in &planned {
        let eq = t.deletes.iter().filter(|d| d.file.content == DataContentType::EqualityDeletes);
        let chosen = filter_matches(md, filter.as_ref(), &t.file)?;
        for d in eq {
            *applies.entry(d.file.file_path.as_str()).or_default() += 1;
            if !chosen {
                blocked.insert(d.file.file_path.as_str());
            }
        }
        selected.push(chosen);
    }
    let mut removed = Vec::new();
    let mut kept = 0usize;
    for d in &live {
        let path = d.file.file_path.as_str();
        let removable = if applies.contains_key(path) {
            !blocked.contains(path)
        } else {
            filter_matches(md, filter.as_ref(), &d.file)?
        };
        if removable {
            removed.push(d.clone());
        } else {
            kept += 1;
        }
    }
    let removable: HashSet<&str> = removed.iter().map(|d| d.file.file_path.as_str()).collect();
    // Conversion tasks share equality key maps among themselves (the delete scope), never
    // with other reads of the snapshot: their maps hold the removable files only.
    let scope_tag = {
        let mut paths: Vec<&str> = removable.iter().copied().collect();
        paths.sort_unstable();
        let mut h = std::collections::hash_map::DefaultHasher::new();
        paths.hash(&mut h);
        format!("\u{0}convert-equality-deletes:{:016x}", h.finish())
    };
    let mut tasks = Vec::new();
    let mut covered = BTreeSet::new();
    for (t, chosen) in planned.into_iter().zip(selected) {
        let converts = |d: &DeleteFileRef| {
            d.file.content == DataContentType::EqualityDeletes
                && removable.contains(d.file.file_path.as_str())
        };
        if !chosen || !t.deletes.iter().any(converts) {
            continue;
        }
        let mut t = t;
        t.deletes.retain(|d| d.file.content != DataContentType::EqualityDeletes || converts(d));
        if filter.is_some() {
            t.file = without_stats(&t.file);
        }
        t.residual = None;
        t.delete_scope = t.delete_scope.map(|s| format!("{s}{scope_tag}"));
        covered.insert(t.file.file_path.clone());
        tasks.push(t);
    }
    Ok(ConversionPlan { snapshot_id: Some(snapshot_id), tasks, removed, covered_data_files: covered, kept })
}

fn conflict(msg: String, snapshot_id: i64) -> Error {
    Error::new(ErrorKind::CommitConflict, msg).with_context("conflicting snapshot", snapshot_id.to_string())
}

/// Checks a conversion planned at `start` against every snapshot committed since (see the
/// module docs): `dv_targets` are the data files the conversion writes deletion vectors for.
pub fn validate_conversion(
    base: &TableMetadata,
    start: Option<i64>,
    removed: &[DeleteFileRef],
    covered: &BTreeSet<String>,
    dv_targets: &BTreeSet<String>,
) -> Result<()> {
    let global = |d: &DeleteFileRef| base.spec_by_id(d.file.spec_id).is_some_and(|s| s.is_unpartitioned());
    for s in snapshots_since(base, start)? {
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
                let path = f.file_path.as_str();
                match (e.status, f.content) {
                    (EntryStatus::Deleted, DataContentType::Data) if covered.contains(path) => {
                        return Err(conflict(
                            format!(
                                "concurrent snapshot {} removed data file {path}, whose equality deletes \
                                 this conversion turned into position deletes",
                                s.snapshot_id
                            ),
                            s.snapshot_id,
                        ));
                    }
                    (EntryStatus::Added, DataContentType::Data) => {
                        let seq = e.sequence_number.unwrap_or(s.sequence_number);
                        let hit = removed.iter().find(|d| {
                            d.data_sequence_number > seq
                                && (global(d)
                                    || (d.file.spec_id == m.partition_spec_id
                                        && crate::spec::same_partition(&d.file.partition, &f.partition)))
                        });
                        if let Some(d) = hit {
                            return Err(conflict(
                                format!(
                                    "concurrent snapshot {} added data file {path} with data sequence number \
                                     {seq}, below that of equality delete {} ({}) which this conversion removes",
                                    s.snapshot_id, d.file.file_path, d.data_sequence_number
                                ),
                                s.snapshot_id,
                            ));
                        }
                    }
                    (EntryStatus::Added, DataContentType::PositionDeletes)
                        if f.file_format == FileFormat::Puffin
                            && f.referenced_data_file.as_ref().is_some_and(|p| dv_targets.contains(p)) =>
                    {
                        return Err(conflict(
                            format!(
                                "concurrent snapshot {} added a deletion vector for {}, which this \
                                 conversion also writes one for",
                                s.snapshot_id,
                                f.referenced_data_file.as_deref().unwrap_or("")
                            ),
                            s.snapshot_id,
                        ));
                    }
                    _ => {}
                }
            }
        }
    }
    Ok(())
}

/// What a conversion commits.
#[derive(Debug, Clone, Default)]
pub struct Conversion {
    pub start_snapshot_id: Option<i64>,
    /// The equality delete files removed (the plan's).
    pub removed: Vec<DeleteFileRef>,
    /// The plan's covered data files.
    pub covered_data_files: BTreeSet<String>,
    /// The position delete files / deletion vectors written.
    pub added: Vec<DataFile>,
    /// Removal keys of the position deletes merged into the new ones.
    pub replaced: BTreeSet<String>,
    pub summary_properties: std::collections::BTreeMap<String, String>,
}

/// The next metadata: validated against what was committed since the plan (when the table
/// moved), then one row delta.
pub fn commit_conversion(
    base: &TableMetadata,
    c: &Conversion,
    now_ms: i64,
) -> Result<(TableMetadata, Vec<String>)> {
    if base.current_snapshot_id() != c.start_snapshot_id {
        let dv_targets: BTreeSet<String> = c
            .added
            .iter()
            .filter(|f| f.file_format == FileFormat::Puffin)
            .filter_map(|f| f.referenced_data_file.clone())
            .collect();
        validate_conversion(base, c.start_snapshot_id, &c.removed, &c.covered_data_files, &dv_targets)?;
    }
    for f in &c.added {
        if f.content != DataContentType::PositionDeletes {
            return Err(crate::error::validation(
                "a conversion of equality deletes adds position delete files only",
            )
            .with_context("file", f.file_path.clone()));
        }
    }
    let mut removed_delete_paths: BTreeSet<String> = c.replaced.clone();
    removed_delete_paths.extend(c.removed.iter().map(|d| d.file.file_path.clone()));
    let delta = RowDelta {
        added_deletes: c.added.clone(),
        removed_delete_paths,
        summary_properties: c.summary_properties.clone(),
        ..RowDelta::default()
    };
    row_delta(base, delta, now_ms)
}

#[cfg(test)]
#[path = "convert_equality_deletes_tests.rs"]
mod tests;
