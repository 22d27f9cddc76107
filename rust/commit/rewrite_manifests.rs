//! Rewrite manifests (Iceberg Java's `BaseRewriteManifests` as `RewriteManifestsSparkAction`
//! drives it): replace the current snapshot's manifests of one spec by manifests clustered by
//! partition (`crate::maintenance::rewrite_manifests`), as one `replace` snapshot that changes
//! no data.
//!
//! The new manifests come first in the manifest list, then every other manifest of the
//! current snapshot in its order (Java's kept manifests). The summary carries Java's
//! `manifests-created`, `manifests-kept`, `manifests-replaced`, `entries-processed` and the
//! totals of the parent; `entries-processed` is the number of entries rewritten (Java's Spark
//! action reports 0 there, because only its `clusterBy` path counts).
//!
//! Concurrency: the rewrite is planned from the base it is built on, and the caller's commit
//! loop rebuilds it on the refreshed base after a lost race, so a file another commit removed
//! meanwhile is never carried back. [`commit_rewritten_manifests`] checks what Java's
//! `BaseRewriteManifests.apply` checks: every replaced manifest is still in the base's current
//! snapshot, and the new manifests hold as many live files as the replaced ones.

use std::collections::{BTreeMap, BTreeSet};

use crate::commit::manifest_merge::MergeConfig;
use crate::commit::summary::SnapshotSummaryBuilder;
use crate::error::{not_supported, validation, Error, ErrorKind, Result};
use crate::io;
use crate::maintenance::rewrite_manifests::{
    cluster, cluster_key, live_entries, select_manifests, target_manifest_count, write_clusters,
};
use crate::manifest::{read_manifest_list, ManifestContent, ManifestFile, ManifestListWriter};
use crate::spec::{Operation, PartitionSpec, Snapshot, Summary, TableMetadata};

/// One rewrite-manifests request.
#[derive(Debug, Clone, Default)]
pub struct RewriteManifests {
    /// The spec whose manifests are rewritten (default: the table's current spec).
    pub spec_id: Option<i32>,
    /// Partition field names of that spec to cluster the entries by, in order (Java 1.12's
    /// `sort_by`); default the whole partition tuple.
    pub sort_by: Option<Vec<String>>,
    pub summary_properties: BTreeMap<String, String>,
}

/// What a rewrite replaced and created (before commit: manifest-list sequence numbers of the
/// new manifests are assigned by the list).
#[derive(Debug, Clone, Default)]
pub struct ManifestRewriteOutcome {
    pub replaced: Vec<ManifestFile>,
    pub added: Vec<ManifestFile>,
    pub entries_processed: i64,
}

/// Plans and writes the rewrite on `base`'s current snapshot and builds the next metadata.
/// `Ok(None)` when there is nothing to rewrite (nothing is written then). Otherwise the
/// uncommitted metadata, every file written and the outcome; on an error, what was written
/// is deleted.
pub fn rewrite_manifests(
    base: &TableMetadata,
    rw: &RewriteManifests,
    now_ms: i64,
) -> Result<Option<(TableMetadata, Vec<String>, ManifestRewriteOutcome)>> {
    let spec_id = rw.spec_id.unwrap_or_else(|| base.default_spec_id());
    let spec = base.spec_by_id(spec_id).ok_or_else(|| {
        validation(format!("invalid spec id {spec_id}: the table has no such partition spec"))
    })?;
    // Java checks the names when `sortBy` is set, before looking at the snapshot.
    let key = rw.sort_by.as_deref().map(|names| cluster_key(spec, names)).transpose()?;
    let Some(current) = base.current_snapshot() else { return Ok(None) };
    if !(2..=3).contains(&base.format_version()) {
        return Err(not_supported(format!(
            "rewriting manifests of a format-version {} table; icefloe writes format v2 and v3 tables",
            base.format_version()
        )));
    }
    let Some(list) = current.manifest_list.as_deref() else {
        return Err(not_supported("the current snapshot lists its manifests inline (legacy v1)"));
    };
    let manifests = read_manifest_list(list)?;
    let mut written: Vec<String> = Vec::new();
    match plan_and_build(base, rw, spec, key.as_deref(), manifests, now_ms, &mut written) {
        Ok(Some((md, outcome))) => Ok(Some((md, written, outcome))),
        Ok(None) => Ok(None),
        Err(e) => {
            for p in &written {
                let _ = io::delete_file(p);
            }
            Err(e)
        }
    }
}

/// Writes the clustered manifests of each content and builds the snapshot; every file
/// written is recorded in `written` (before it is written).
fn plan_and_build(
    base: &TableMetadata,
    rw: &RewriteManifests,
    spec: &PartitionSpec,
    key: Option<&[usize]>,
    manifests: Vec<ManifestFile>,
    now_ms: i64,
    written: &mut Vec<String>,
) -> Result<Option<(TableMetadata, ManifestRewriteOutcome)>> {
    let target = MergeConfig::from_properties(base.properties()).target_size_bytes;
    // Java's writers may exceed the target by 20% (the size estimate is not precise).
    let max_bytes = (1.2 * target as f64) as i64;
    let snapshot_id = base.new_snapshot_id();
    let commit_uuid = uuid::Uuid::new_v4();
    let mut outcome = ManifestRewriteOutcome::default();
    for content in [ManifestContent::Data, ManifestContent::Deletes] {
        let selected = select_manifests(&manifests, content, spec.spec_id, target)?;
        if selected.is_empty() {
            continue;
        }
        let total: i64 = selected.iter().map(|m| m.manifest_length).sum();
        let entries = live_entries(&selected)?;
        outcome.entries_processed += entries.len() as i64;
        let clusters = cluster(entries, spec, target_manifest_count(total, target), key);
        let mut new_path = || {
            let p = base
                .location_provider()
                .new_metadata_location(&format!("optimized-m-{commit_uuid}-{}.avro", written.len()));
            written.push(p.clone());
            p
        };
        outcome.added.extend(write_clusters(
            base,
            snapshot_id,
            spec,
            content,
            clusters,
            max_bytes,
            &mut new_path,
        )?);
        outcome.replaced.extend(selected);
    }
    if outcome.replaced.is_empty() {
        return Ok(None);
    }
    let md =
        commit_rewritten_manifests(base, snapshot_id, &outcome, &rw.summary_properties, now_ms, written)?;
    Ok(Some((md, outcome)))
}

fn live_files(manifests: &[ManifestFile]) -> Result<i64> {
    let mut n = 0i64;
    for m in manifests {
        match (m.added_files_count, m.existing_files_count) {
            (Some(a), Some(e)) => n += i64::from(a) + i64::from(e),
            _ => {
                return Err(validation("missing file counts in manifest")
                    .with_context("manifest", m.manifest_path.clone()))
            }
        }
    }
    Ok(n)
}

/// Builds the `replace` snapshot listing `outcome.added` then the current snapshot's other
/// manifests, after Java's checks (see the module doc). The manifest list's path is pushed
/// onto `written`.
pub fn commit_rewritten_manifests(
    base: &TableMetadata,
    snapshot_id: i64,
    outcome: &ManifestRewriteOutcome,
    summary_properties: &BTreeMap<String, String>,
    now_ms: i64,
    written: &mut Vec<String>,
) -> Result<TableMetadata> {
    let parent = base.current_snapshot();
    let current = match parent.and_then(|p| p.manifest_list.as_deref()) {
        Some(list) => read_manifest_list(list)?,
        None => vec![],
    };
    let current_paths: BTreeSet<&str> = current.iter().map(|m| m.manifest_path.as_str()).collect();
    if let Some(gone) = outcome.replaced.iter().find(|m| !current_paths.contains(m.manifest_path.as_str())) {
        return Err(Error::new(
            ErrorKind::CommitConflict,
            format!(
                "deleted manifest {} could not be found in the latest snapshot {}",
                gone.manifest_path,
                parent.map_or(-1, |p| p.snapshot_id)
            ),
        ));
    }
    let (created, replaced) = (live_files(&outcome.added)?, live_files(&outcome.replaced)?);
    if created != replaced {
        return Err(validation(format!(
            "replaced and created manifests must have the same number of active files: {created} (new), {replaced} (old)"
        )));
    }
    let replaced_paths: BTreeSet<&str> = outcome.replaced.iter().map(|m| m.manifest_path.as_str()).collect();
    let kept: Vec<ManifestFile> =
        current.into_iter().filter(|m| !replaced_paths.contains(m.manifest_path.as_str())).collect();

    let mut extra = BTreeMap::new();
    extra.insert("manifests-created".to_string(), outcome.added.len().to_string());
    extra.insert("manifests-kept".to_string(), kept.len().to_string());
    extra.insert("manifests-replaced".to_string(), outcome.replaced.len().to_string());
    extra.insert("entries-processed".to_string(), outcome.entries_processed.to_string());
    extra.extend(summary_properties.iter().map(|(k, v)| (k.clone(), v.clone())));
    let summary = SnapshotSummaryBuilder::default().build(parent, &extra);

    let sequence_number = base.next_sequence_number();
    let list_path = base
        .location_provider()
        .new_metadata_location(&format!("snap-{snapshot_id}-1-{}.avro", uuid::Uuid::new_v4()));
    written.push(list_path.clone());
    let mut list =
        ManifestListWriter::new(&list_path, snapshot_id, parent.map(|p| p.snapshot_id), sequence_number);
    list.add_all(outcome.added.iter().cloned());
    list.add_all(kept);
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
        snapshot_id,
        parent_snapshot_id: parent.map(|p| p.snapshot_id),
        sequence_number,
        timestamp_ms: now_ms,
        manifest_list: Some(list_path),
        manifests: None,
        summary: Summary { operation: Operation::Replace, other: summary },
        schema_id: Some(base.current_schema().schema_id()),
        first_row_id,
        added_rows,
    };
    base.add_snapshot(snapshot, now_ms)
}

#[cfg(test)]
#[path = "rewrite_manifests_tests.rs"]
mod tests;
