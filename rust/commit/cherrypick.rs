//! Cherry-picking a snapshot onto `main` (Java's `CherryPickOperation`), the publish step of
//! write-audit-publish: a snapshot whose parent is the current snapshot is fast-forwarded to
//! (main moves to it); an `append` is re-applied as a new snapshot adding the same data files;
//! a dynamic partition overwrite (`replace-partitions=true`) re-applies as one. The new
//! snapshot records `source-snapshot-id` and, for a staged WAP write, `published-wap-id`; a
//! WAP id is published at most once.

use std::collections::BTreeMap;

use crate::commit::{merge_append, replace_partitions};
use crate::error::{validation, Result};
use crate::manifest::{read_manifest, read_manifest_list, EntryStatus, ManifestContent};
use crate::spec::{Operation, Snapshot, SnapshotRef, TableMetadata};

const SOURCE_SNAPSHOT_ID: &str = "source-snapshot-id";
const WAP_ID: &str = "wap.id";
const PUBLISHED_WAP_ID: &str = "published-wap-id";

/// Main's ancestry, newest first.
fn main_ancestors(base: &TableMetadata) -> Vec<&Snapshot> {
    let mut out = Vec::new();
    let mut next = base.current_snapshot();
    while let Some(s) = next {
        if out.iter().any(|o: &&Snapshot| o.snapshot_id == s.snapshot_id) {
            break;
        }
        out.push(s);
        next = s.parent_snapshot_id.and_then(|p| base.snapshot_by_id(p));
    }
    out
}

/// The next metadata with snapshot `snapshot_id` cherry-picked onto `main`, and the files
/// written (none for a fast-forward).
pub fn cherrypick(
    base: &TableMetadata,
    snapshot_id: i64,
    now_ms: i64,
) -> Result<(TableMetadata, Vec<String>)> {
    let picked = base
        .snapshot_by_id(snapshot_id)
        .ok_or_else(|| validation(format!("cannot cherry-pick unknown snapshot {snapshot_id}")))?;
    let ancestors = main_ancestors(base);
    if ancestors.iter().any(|s| s.snapshot_id == snapshot_id) {
        return Err(validation(format!(
            "cannot cherry-pick snapshot {snapshot_id}: it is already an ancestor of the current snapshot"
        )));
    }
    let wap_id = picked.summary.get(WAP_ID);
    if let Some(wap) = wap_id {
        if let Some(s) = ancestors.iter().find(|s| s.summary.get(PUBLISHED_WAP_ID) == Some(wap)) {
            return Err(validation(format!(
                "duplicate request to cherry-pick wap id '{wap}': it was published already by snapshot {}",
                s.snapshot_id
            )));
        }
    }
    let current = base.current_snapshot_id();
    if picked.parent_snapshot_id == current {
        let main = base
            .refs()
            .get(SnapshotRef::MAIN_BRANCH)
            .cloned()
            .unwrap_or_else(|| SnapshotRef::branch(snapshot_id));
        let reference = SnapshotRef { snapshot_id, ..main };
        let update =
            crate::spec::MetadataUpdate::SetSnapshotRef { name: SnapshotRef::MAIN_BRANCH.into(), reference };
        return Ok((base.apply_updates(&[update], now_ms)?, Vec::new()));
    }
    let mut props = BTreeMap::from([(SOURCE_SNAPSHOT_ID.to_string(), snapshot_id.to_string())]);
    if let Some(wap) = wap_id {
        props.insert(PUBLISHED_WAP_ID.to_string(), wap.to_string());
    }
    let dynamic_overwrite = picked.summary.operation == Operation::Overwrite
        && picked.summary.get("replace-partitions") == Some("true");
    if picked.summary.operation != Operation::Append && !dynamic_overwrite {
        return Err(validation(format!(
            "cannot cherry-pick snapshot {snapshot_id}: its operation '{}' is not an append or a dynamic \
             partition overwrite, and its parent is not the current snapshot (no fast-forward)",
            picked.summary.operation.as_str()
        )));
    }
    let files = added_data_files(picked)?;
    if dynamic_overwrite {
        replace_partitions(base, files, &props, now_ms)
    } else {
        merge_append(base, files, &props, now_ms)
    }
}

/// The data files `snapshot` added (its manifests' ADDED entries of its own id).
fn added_data_files(snapshot: &Snapshot) -> Result<Vec<crate::manifest::DataFile>> {
    let list = snapshot.manifest_list.as_deref().ok_or_else(|| {
        validation(format!("cannot cherry-pick snapshot {}: it has no manifest list", snapshot.snapshot_id))
    })?;
    let mut files = Vec::new();
    for m in read_manifest_list(list)? {
        if m.content != ManifestContent::Data || m.added_snapshot_id != snapshot.snapshot_id {
            continue;
        }
        for e in read_manifest(&m)? {
            if e.status == EntryStatus::Added
                && e.snapshot_id.unwrap_or(m.added_snapshot_id) == snapshot.snapshot_id
            {
                files.push(e.data_file);
            }
        }
    }
    Ok(files)
}
