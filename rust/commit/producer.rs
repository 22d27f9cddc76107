//! The one snapshot producer, shared by fast append, merge append, overwrite, delete, row
//! delta and replace-partitions (Iceberg Java's `MergingSnapshotProducer`): new files go into a new
//! manifest, files to remove are marked DELETED in rewritten copies of the manifests that
//! hold them (the filter step), then small data manifests are merged (the merge step) when
//! the table's properties ask for it.

use std::collections::{BTreeMap, BTreeSet};

use crate::commit::attempt::Attempt;
use crate::commit::manifest_merge::{merge_manifests, MergeConfig};
use crate::commit::summary::SnapshotSummaryBuilder;
use crate::error::{not_supported, validation, Error, ErrorKind, Result};
use crate::io;
use crate::manifest::{
    read_manifest, read_manifest_list, DataContentType, DataFile, FileFormat, ManifestContent, ManifestFile,
    ManifestListWriter,
};
use crate::scan::delete_file_index::referenced_data_file;
use crate::spec::{Operation, Snapshot, Summary, TableMetadata};

/// Which live data files of the parent snapshot a change removes.
#[derive(Debug, Clone, Default)]
pub enum Removal {
    /// None (append).
    #[default]
    Nothing,
    /// Exactly these paths; each must still be live (else a commit conflict: another
    /// writer removed it since the operation read the table).
    Paths(BTreeSet<String>),
    /// Every live data file whose partition is one of these keys ([`partition_key`]).
    Partitions(BTreeSet<String>),
}

/// One snapshot change to produce.
#[derive(Debug, Clone, Default)]
pub struct Change {
    pub added: Vec<DataFile>,
    /// Position and equality delete files to add (a row delta), written to delete
    /// manifests of this snapshot.
    pub added_deletes: Vec<DataFile>,
    /// Live delete files to remove (replaced by files of this snapshot); each must still
    /// be live, else a commit conflict.
    pub removed_deletes: BTreeSet<String>,
    pub removal: Removal,
    /// The operation; `None` derives it as Java's `BaseOverwriteFiles` does (only removes:
    /// `delete`, only adds: `append`, both: `overwrite`).
    pub operation: Option<Operation>,
    /// Extra summary entries (user snapshot properties, `replace-partitions`).
    pub summary_properties: BTreeMap<String, String>,
    /// Keep the parent's manifests as they are, never merging (fast append).
    pub keep_manifests: bool,
    /// The data sequence number of the added data files, when not this snapshot's (Java's
    /// `RewriteFiles.dataSequenceNumber`: a compaction keeps its starting snapshot's, so
    /// equality deletes committed meanwhile still apply to the rewritten rows).
    pub added_data_sequence_number: Option<i64>,
    /// Explicit data sequence numbers of added delete files, by path (Java's
    /// `RewriteFiles.addFile(deleteFile, dataSequenceNumber)`: a rewritten position delete
    /// keeps the highest sequence number of the files it replaces, so it still applies to
    /// exactly the data files they applied to).
    pub added_delete_sequence_numbers: BTreeMap<String, i64>,
}

/// `<spec id>:<partition path>`: identifies one partition of one spec.
pub fn partition_key(base: &TableMetadata, file: &DataFile) -> Result<String> {
    let spec = base
        .spec_by_id(file.spec_id)
        .ok_or_else(|| validation(format!("unknown partition spec id {}", file.spec_id)))
        .map_err(|e| e.with_context("file", file.file_path.clone()))?;
    Ok(format!("{}:{}", file.spec_id, spec.partition_path(base.current_schema(), &file.partition)?))
}

/// Builds the next metadata for `change` on top of `base`'s current snapshot.
///
/// Returns the uncommitted metadata and every file written; if writing fails midway, what
/// was written is deleted before the error is returned.
pub fn produce(base: &TableMetadata, change: Change, now_ms: i64) -> Result<(TableMetadata, Vec<String>)> {
    let mut written = Vec::new();
    match build(base, change, now_ms, &mut written) {
        Ok(md) => Ok((md, written)),
        Err(e) => {
            for p in &written {
                let _ = io::delete_file(p);
            }
            Err(e)
        }
    }
}

fn check_added(base: &TableMetadata, files: &[DataFile], deletes: &[DataFile]) -> Result<()> {
    if !(2..=3).contains(&base.format_version()) {
        return Err(not_supported(format!(
            "writing to a format-version {} table; icefloe writes format v2 and v3 tables",
            base.format_version()
        ))
        .with_context("table", base.location().to_string()));
    }
    for f in files {
        if f.content != DataContentType::Data {
            return Err(validation(format!("expected data files to add, found {:?}", f.content))
                .with_context("file", f.file_path.clone()));
        }
        if base.spec_by_id(f.spec_id).is_none() {
            return Err(validation(format!("data file has unknown partition spec id {}", f.spec_id))
                .with_context("file", f.file_path.clone()));
        }
    }
    for f in deletes {
        if f.content == DataContentType::Data {
            return Err(validation("expected delete files to add, found a data file")
                .with_context("file", f.file_path.clone()));
        }
        if f.content == DataContentType::EqualityDeletes
            && f.equality_ids.as_ref().is_none_or(|v| v.is_empty())
        {
            return Err(validation("an equality delete file must name its equality field ids")
                .with_context("file", f.file_path.clone()));
        }
        if base.spec_by_id(f.spec_id).is_none() {
            return Err(validation(format!("delete file has unknown partition spec id {}", f.spec_id))
                .with_context("file", f.file_path.clone()));
        }
    }
    Ok(())
}

fn build(
    base: &TableMetadata,
    change: Change,
    now_ms: i64,
    written: &mut Vec<String>,
) -> Result<TableMetadata> {
    check_added(base, &change.added, &change.added_deletes)?;
    let parent = base.current_snapshot();
    let mut attempt = Attempt {
        base,
        snapshot_id: base.new_snapshot_id(),
        commit_uuid: uuid::Uuid::new_v4(),
        next_manifest: 0,
        written,
    };
    let sequence_number = base.next_sequence_number();
    let mut summary = SnapshotSummaryBuilder::default();

    // New files: one manifest per spec, written first (so the merge sees them first, as Java).
    let mut by_spec: BTreeMap<i32, Vec<DataFile>> = BTreeMap::new();
    for mut f in change.added {
        // v3 row lineage: an added file's rows take ids from this snapshot's range (the
        // manifest's first_row_id, which `added-rows` accounts for), never ids it carried
        // from where it was read, e.g. the snapshot a cherry-pick re-applies (Java's
        // `MergingSnapshotProducer.add` wraps every added data file in
        // `Delegates.suppressFirstRowId`).
        f.first_row_id = None;
        by_spec.entry(f.spec_id).or_default().push(f);
    }
    let mut data_manifests: Vec<ManifestFile> = Vec::new();
    for (spec_id, files) in by_spec {
        let mut w = attempt.writer(spec_id, ManifestContent::Data)?;
        for f in files {
            summary.add_file(&f, partition_key(base, &f)?);
            match change.added_data_sequence_number {
                Some(seq) => w.add_with_sequence_number(f, seq)?,
                None => w.add(f)?,
            }
        }
        data_manifests.push(w.close()?);
    }

    // New delete files: one delete manifest per spec, listed before the parent's.
    let mut deletes_by_spec: BTreeMap<i32, Vec<DataFile>> = BTreeMap::new();
    for f in change.added_deletes {
        deletes_by_spec.entry(f.spec_id).or_default().push(f);
    }
    let mut delete_manifests = Vec::new();
    for (spec_id, files) in deletes_by_spec {
        let mut w = attempt.writer(spec_id, ManifestContent::Deletes)?;
        for f in files {
            summary.add_file(&f, partition_key(base, &f)?);
            match change.added_delete_sequence_numbers.get(f.removal_key().as_ref()) {
                Some(&seq) => w.add_with_sequence_number(f, seq)?,
                None => w.add(f)?,
            }
        }
        delete_manifests.push(w.close()?);
    }

    // Filter the parent's manifests.
    let mut to_find: BTreeSet<String> = match &change.removal {
        Removal::Paths(p) => p.clone(),
        _ => BTreeSet::new(),
    };
    let parent_manifests = match parent.and_then(|p| p.manifest_list.as_deref()) {
        Some(list) => read_manifest_list(list)?,
        None if parent.is_some() => {
            return Err(not_supported("the current snapshot lists its manifests inline (legacy v1)"))
        }
        None => vec![],
    };
    // Data manifests first: the deletion vectors of the data files they remove go too.
    let mut removed_data: BTreeSet<String> = BTreeSet::new();
    let mut parent_deletes = Vec::new();
    for m in parent_manifests {
        if m.content == ManifestContent::Deletes {
            parent_deletes.push(m);
            continue;
        }
        if !m.has_added_files() && !m.has_existing_files() {
            continue; // only DELETED entries of an earlier snapshot: nothing live to carry
        }
        match &change.removal {
            Removal::Nothing => data_manifests.push(m),
            removal => {
                let filter = Filter { removal, dvs_of: None };
                data_manifests.push(filter_manifest(
                    &mut attempt,
                    &m,
                    &filter,
                    &mut to_find,
                    &mut summary,
                    &mut removed_data,
                )?);
            }
        }
    }
    // Java's `danglingDVs`: a deletion vector of a removed data file is removed with it (it
    // would point at a file no longer in the table, and keep its Puffin file referenced).
    let delete_removal = Removal::Paths(change.removed_deletes.clone());
    if base.format_version() < 3 {
        removed_data.clear(); // no deletion vectors before v3: the delete manifests stay unread
    }
    let delete_filter = Filter { removal: &delete_removal, dvs_of: Some(&removed_data) };
    let mut deletes_to_find = change.removed_deletes.clone();
    let mut removed_deletes = BTreeSet::new();
    for m in parent_deletes {
        if (deletes_to_find.is_empty() && removed_data.is_empty())
            || (!m.has_added_files() && !m.has_existing_files())
        {
            delete_manifests.push(m);
        } else {
            let filtered = filter_manifest(
                &mut attempt,
                &m,
                &delete_filter,
                &mut deletes_to_find,
                &mut summary,
                &mut removed_deletes,
            )?;
            delete_manifests.push(filtered);
        }
    }
    if let Some(missing) = to_find.into_iter().chain(deletes_to_find).next() {
        return Err(Error::new(
            ErrorKind::CommitConflict,
            format!("cannot delete {missing}: it is no longer a live file of the table (removed by a concurrent commit?)"),
        )
        .with_context("table", base.location().to_string()));
    }

    let merged = if change.keep_manifests {
        data_manifests
    } else {
        merge_manifests(&mut attempt, data_manifests, &MergeConfig::from_properties(base.properties()))?
    };
    let mut manifests = merged;
    manifests.extend(delete_manifests);

    let operation = change.operation.unwrap_or(
        match (summary.adds_data_files(), summary.deletes_data_files(), summary.adds_delete_files()) {
            // Java's BaseRowDelta: only delete files (and removed data files) is `delete`.
            (false, _, true) => Operation::Delete,
            (true, _, true) => Operation::Overwrite,
            (false, true, false) => Operation::Delete,
            (true, false, false) => Operation::Append,
            _ => Operation::Overwrite,
        },
    );
    let list_path = base
        .location_provider()
        .new_metadata_location(&format!("snap-{}-1-{}.avro", attempt.snapshot_id, attempt.commit_uuid));
    attempt.written.push(list_path.clone());
    let mut list = ManifestListWriter::new(
        &list_path,
        attempt.snapshot_id,
        parent.map(|p| p.snapshot_id),
        sequence_number,
    );
    list.add_all(manifests);
    // v3 row lineage: the snapshot starts at the table's next-row-id; the list assigns ids to
    // the data manifests that have none and says how far they went.
    let (first_row_id, added_rows) = if base.format_version() >= 3 {
        let first = base.next_row_id().unwrap_or(0);
        list = list.with_row_lineage(first);
        let next = list.next_row_id()?.unwrap_or(first);
        (Some(first), Some(next.saturating_sub(first)))
    } else {
        (None, None)
    };
    list.write()?;

    let snapshot = Snapshot {
        snapshot_id: attempt.snapshot_id,
        parent_snapshot_id: parent.map(|p| p.snapshot_id),
        sequence_number,
        timestamp_ms: now_ms,
        manifest_list: Some(list_path),
        manifests: None,
        summary: Summary { operation, other: summary.build(parent, &change.summary_properties) },
        schema_id: Some(base.current_schema().schema_id()),
        first_row_id,
        added_rows,
    };
    base.add_snapshot(snapshot, now_ms)
}

/// What the filter step removes from one manifest: the files `removal` selects and, in delete
/// manifests, the deletion vectors of the data files `dvs_of` (removed in the same change).
struct Filter<'a> {
    removal: &'a Removal,
    dvs_of: Option<&'a BTreeSet<String>>,
}

/// Whether the filter removes a live entry: (selected by `removal`, a DV of a removed file).
fn selects(
    filter: &Filter<'_>,
    base: &TableMetadata,
    m: &ManifestFile,
    f: &DataFile,
) -> Result<(bool, bool)> {
    let by_removal = match filter.removal {
        Removal::Nothing => false,
        Removal::Paths(p) => p.contains(f.removal_key().as_ref()),
        Removal::Partitions(keys) => {
            let mut f = f.clone();
            f.spec_id = m.partition_spec_id;
            keys.contains(&partition_key(base, &f)?)
        }
    };
    let dv_of_removed = filter.dvs_of.is_some_and(|removed| {
        f.file_format == FileFormat::Puffin
            && f.content == DataContentType::PositionDeletes
            && referenced_data_file(f).is_some_and(|p| removed.contains(&p))
    });
    Ok((by_removal, dv_of_removed))
}

/// Rewrites `m` with the files `filter` selects marked DELETED (others EXISTING, DELETED
/// entries of earlier snapshots dropped), or returns it unchanged when it holds none. A
/// manifest whose files are all removed is still written: its DELETED entries record the
/// removal in this snapshot, as Java keeps them. The removed files' paths go into `removed`.
fn filter_manifest(
    attempt: &mut Attempt<'_>,
    m: &ManifestFile,
    filter: &Filter<'_>,
    to_find: &mut BTreeSet<String>,
    summary: &mut SnapshotSummaryBuilder,
    removed: &mut BTreeSet<String>,
) -> Result<ManifestFile> {
    let base = attempt.base;
    let entries = read_manifest(m)?;
    let mut hit = Vec::with_capacity(entries.len());
    let mut any = false;
    for e in &entries {
        let remove =
            if e.status.is_live() { selects(filter, base, m, &e.data_file)? } else { (false, false) };
        any |= remove.0 || remove.1;
        hit.push(remove);
    }
    if !any {
        return Ok(m.clone());
    }
    let mut w = attempt.writer(m.partition_spec_id, m.content)?;
    for (e, remove) in entries.into_iter().zip(hit) {
        if !e.status.is_live() {
            continue;
        }
        let seq = e.sequence_number.ok_or_else(|| {
            validation("a live manifest entry has no data sequence number after inheritance")
                .with_context("manifest", m.manifest_path.clone())
        })?;
        let snapshot_id = e.snapshot_id.unwrap_or(m.added_snapshot_id);
        let mut f = e.data_file;
        f.spec_id = m.partition_spec_id;
        let (by_removal, dv_of_removed) = remove;
        if by_removal || dv_of_removed {
            if by_removal
                && !to_find.remove(f.removal_key().as_ref())
                && matches!(filter.removal, Removal::Paths(_))
            {
                return Err(validation(format!("file {} is live twice in the snapshot", f.file_path)));
            }
            removed.insert(f.file_path.clone());
            summary.remove_file(&f, partition_key(base, &f)?);
            w.delete(f, seq, e.file_sequence_number)?;
        } else {
            w.existing(f, snapshot_id, seq, e.file_sequence_number)?;
        }
    }
    w.close()
}

#[cfg(test)]
#[path = "producer_tests.rs"]
pub(crate) mod tests;
