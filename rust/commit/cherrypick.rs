//! Cherry-picking a snapshot onto `main` (Java's `CherryPickOperation`), the publish step of
//! write-audit-publish.
//!
//! The rules, in Java's order:
//! - an unknown snapshot id is refused;
//! - an `append`, or a dynamic partition overwrite (`overwrite` with
//!   `replace-partitions=true`), is checked for a WAP id that an ancestor of the current
//!   snapshot already staged (`wap.id`) or published (`published-wap-id`): a WAP id publishes
//!   once. A dynamic overwrite must also be based on an ancestor of the current snapshot (or on
//!   no snapshot), else what changed in its partitions since cannot be known;
//! - any other operation can only be fast-forwarded to;
//! - a snapshot whose parent is the current snapshot (or, on a table with no current snapshot,
//!   that has no parent) is fast-forwarded to: `main` moves to it, no snapshot is written;
//! - otherwise the pick is re-applied as a new snapshot with the picked snapshot's operation,
//!   recording `source-snapshot-id` (and `published-wap-id` for a staged WAP write). It is
//!   refused when the picked snapshot is an ancestor of the current one, or was picked before
//!   (an ancestor's `source-snapshot-id` names it). An append adds the files it added. A
//!   dynamic overwrite is refused when a snapshot committed to `main` since its parent added a
//!   data file to a partition it replaced; it then adds exactly the data files it added and
//!   removes exactly the ones it removed (each must still be live).

use std::collections::{BTreeMap, BTreeSet};

use crate::commit::merge_append;
use crate::commit::producer::{partition_key, produce, Change, Removal};
use crate::error::{validation, Error, ErrorKind, Result};
use crate::manifest::{read_manifest, read_manifest_list, DataFile, EntryStatus, ManifestContent};
use crate::spec::{MetadataUpdate, Operation, Snapshot, SnapshotRef, TableMetadata};

const SOURCE_SNAPSHOT_ID: &str = "source-snapshot-id";
const WAP_ID: &str = "wap.id";
const PUBLISHED_WAP_ID: &str = "published-wap-id";
const REPLACE_PARTITIONS: &str = "replace-partitions";

/// Main's ancestry, newest first (the current snapshot included).
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

/// How the picked snapshot can be published.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Append,
    DynamicOverwrite,
    /// Anything else: a fast-forward or nothing.
    FastForwardOnly,
}

fn kind_of(picked: &Snapshot) -> Kind {
    match picked.summary.operation {
        Operation::Append => Kind::Append,
        // Java reads the property as a boolean (`Boolean.parseBoolean`: "true", any case).
        Operation::Overwrite
            if picked.summary.get(REPLACE_PARTITIONS).is_some_and(|v| v.eq_ignore_ascii_case("true")) =>
        {
            Kind::DynamicOverwrite
        }
        _ => Kind::FastForwardOnly,
    }
}

fn describe(id: Option<i64>) -> String {
    id.map_or_else(|| "none".to_string(), |id| id.to_string())
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
        .ok_or_else(|| validation(format!("Cannot cherry-pick unknown snapshot ID: {snapshot_id}")))?;
    let ancestors = main_ancestors(base);
    let is_ancestor = |id: i64| ancestors.iter().any(|s| s.snapshot_id == id);
    let current = base.current_snapshot().map(|s| s.snapshot_id);
    // Java's isFastForward: the parent is the current snapshot, or both are absent.
    let fast_forward = picked.parent_snapshot_id == current;
    let kind = kind_of(picked);

    if kind == Kind::FastForwardOnly && !fast_forward {
        return Err(validation(format!(
            "Cannot cherry-pick snapshot {snapshot_id}: not append, dynamic overwrite, or fast-forward \
             (its operation is '{}' and its parent snapshot {} is not the current snapshot {})",
            picked.summary.operation.as_str(),
            describe(picked.parent_snapshot_id),
            describe(current),
        )));
    }
    if kind == Kind::DynamicOverwrite {
        if let Some(parent) = picked.parent_snapshot_id {
            if !is_ancestor(parent) {
                return Err(validation(format!(
                    "Cannot cherry-pick overwrite not based on an ancestor of the current state: \
                     {snapshot_id} (its parent snapshot {parent} is not an ancestor of the current \
                     snapshot {})",
                    describe(current)
                )));
            }
        }
    }
    let wap_id = match kind {
        Kind::FastForwardOnly => None,
        Kind::Append | Kind::DynamicOverwrite => validate_wap_publish(picked, &ancestors)?,
    };

    if fast_forward {
        let main = base
            .refs()
            .get(SnapshotRef::MAIN_BRANCH)
            .cloned()
            .unwrap_or_else(|| SnapshotRef::branch(snapshot_id));
        let reference = SnapshotRef { snapshot_id, ..main };
        let update = MetadataUpdate::SetSnapshotRef { name: SnapshotRef::MAIN_BRANCH.into(), reference };
        return Ok((base.apply_updates(&[update], now_ms)?, Vec::new()));
    }

    // Re-applied as a new snapshot: never twice.
    if is_ancestor(snapshot_id) {
        return Err(validation(format!(
            "Cannot cherrypick snapshot {snapshot_id}: already an ancestor (of the current snapshot {})",
            describe(current)
        )));
    }
    let source = snapshot_id.to_string();
    if let Some(s) = ancestors.iter().find(|s| s.summary.get(SOURCE_SNAPSHOT_ID) == Some(source.as_str())) {
        return Err(validation(format!(
            "Cannot cherrypick snapshot {snapshot_id}: already picked to create ancestor {} (its \
             {SOURCE_SNAPSHOT_ID} is {snapshot_id})",
            s.snapshot_id
        )));
    }

    let mut props = BTreeMap::from([(SOURCE_SNAPSHOT_ID.to_string(), source)]);
    if let Some(wap) = wap_id {
        props.insert(PUBLISHED_WAP_ID.to_string(), wap.to_string());
    }
    let changes = snapshot_changes(picked)?;
    match kind {
        Kind::Append => merge_append(base, changes.added, &props, now_ms),
        Kind::DynamicOverwrite => reapply_overwrite(base, picked, changes, props, &ancestors, now_ms),
        // Refused above unless a fast-forward, which returned.
        Kind::FastForwardOnly => Err(Error::new(
            ErrorKind::Internal,
            format!("cherry-pick of snapshot {snapshot_id} reached the re-apply step without being an append or a dynamic overwrite"),
        )),
    }
}

/// Java's `WapUtil.validateWapPublish`: the picked snapshot's WAP id (`wap.id`), refused when
/// an ancestor of the current snapshot staged or published it already. An empty id is not
/// checked (but is still returned, to be recorded as published).
fn validate_wap_publish<'a>(picked: &'a Snapshot, ancestors: &[&Snapshot]) -> Result<Option<&'a str>> {
    let Some(wap) = picked.summary.get(WAP_ID) else { return Ok(None) };
    if wap.is_empty() {
        return Ok(Some(wap));
    }
    for s in ancestors {
        for key in [WAP_ID, PUBLISHED_WAP_ID] {
            if s.summary.get(key) == Some(wap) {
                return Err(validation(format!(
                    "Duplicate request to cherry pick wap id that was published already: {wap} \
                     (snapshot {}, an ancestor of the current snapshot, has {key}={wap})",
                    s.snapshot_id
                )));
            }
        }
    }
    Ok(Some(wap))
}

/// The data files a snapshot added and removed: the ADDED and DELETED entries of the data
/// manifests it wrote (Java's `SnapshotChanges`).
struct Changes {
    added: Vec<DataFile>,
    removed: Vec<DataFile>,
}

fn snapshot_changes(snapshot: &Snapshot) -> Result<Changes> {
    let mut changes = Changes { added: Vec::new(), removed: Vec::new() };
    for (status, f) in own_data_entries(snapshot)? {
        match status {
            EntryStatus::Added => changes.added.push(f),
            EntryStatus::Deleted => changes.removed.push(f),
            EntryStatus::Existing => {}
        }
    }
    Ok(changes)
}

/// The entries (status, file) of the data manifests `snapshot` wrote itself.
fn own_data_entries(snapshot: &Snapshot) -> Result<Vec<(EntryStatus, DataFile)>> {
    let list = snapshot.manifest_list.as_deref().ok_or_else(|| {
        validation(format!(
            "Cannot cherry-pick: snapshot {} has no manifest list (a legacy v1 snapshot listing its manifests inline)",
            snapshot.snapshot_id
        ))
    })?;
    let mut out = Vec::new();
    for m in read_manifest_list(list)? {
        if m.content != ManifestContent::Data || m.added_snapshot_id != snapshot.snapshot_id {
            continue;
        }
        for e in read_manifest(&m)? {
            let mut f = e.data_file;
            f.spec_id = m.partition_spec_id;
            out.push((e.status, f));
        }
    }
    Ok(out)
}

/// `<path> (spec <id>)` for a `<spec id>:<path>` partition key.
fn show_partition(key: &str) -> String {
    match key.split_once(':') {
        Some((spec, path)) => format!("{path} (spec {spec})"),
        None => key.to_string(),
    }
}

/// Re-applies a dynamic overwrite: refused when `main` added a data file to one of the
/// partitions it replaced since its parent (Java's `validateReplacedPartitions`) or when a file
/// it removed is no longer live (Java's `failMissingDeletePaths`); else a new snapshot of the
/// same operation adding and removing exactly the files it did.
fn reapply_overwrite(
    base: &TableMetadata,
    picked: &Snapshot,
    changes: Changes,
    props: BTreeMap<String, String>,
    ancestors: &[&Snapshot],
    now_ms: i64,
) -> Result<(TableMetadata, Vec<String>)> {
    let snapshot_id = picked.snapshot_id;
    let replaced: BTreeSet<String> =
        changes.added.iter().map(|f| partition_key(base, f)).collect::<Result<_>>()?;
    let removed: BTreeSet<String> = changes.removed.iter().map(|f| f.removal_key().into_owned()).collect();

    // The snapshots of main committed since the parent (which is an ancestor, checked by the
    // caller; all of main's history when there is no parent), newest first.
    let since = ancestors.iter().take_while(|s| Some(s.snapshot_id) != picked.parent_snapshot_id);
    let mut gone: Vec<(String, i64)> = Vec::new();
    for s in since {
        for (status, f) in own_data_entries(s)? {
            match status {
                EntryStatus::Added if !replaced.is_empty() => {
                    let key = partition_key(base, &f)?;
                    if replaced.contains(&key) {
                        return Err(validation(format!(
                            "Cannot cherry-pick replace partitions with changed partition: {} \
                             (snapshot {}, committed since the picked snapshot {snapshot_id}'s parent {}, \
                             added a data file to a partition the picked snapshot replaces)",
                            show_partition(&key),
                            s.snapshot_id,
                            describe(picked.parent_snapshot_id),
                        ))
                        .with_context("file", f.file_path));
                    }
                }
                EntryStatus::Deleted if removed.contains(f.removal_key().as_ref()) => {
                    gone.push((f.file_path, s.snapshot_id));
                }
                _ => {}
            }
        }
    }
    if !gone.is_empty() {
        gone.sort();
        return Err(missing_files(
            &gone.iter().map(|(p, s)| format!("{p} (removed by snapshot {s})")).collect::<Vec<_>>(),
        ));
    }

    let change = Change {
        added: changes.added,
        removal: if removed.is_empty() { Removal::Nothing } else { Removal::Paths(removed) },
        operation: Some(picked.summary.operation),
        summary_properties: props,
        ..Default::default()
    };
    produce(base, change, now_ms).map_err(|e| {
        if e.kind() == ErrorKind::CommitConflict {
            // The producer found a file to remove that is not live: Java's failMissingDeletePaths.
            let mut out = missing_files(&[e.message().to_string()]);
            for (k, v) in e.context() {
                out = out.with_context(k, v.clone());
            }
            out
        } else {
            e
        }
    })
}

fn missing_files(what: &[String]) -> Error {
    validation(format!(
        "Missing required files to delete: {} (the picked dynamic overwrite removed them, but they are no \
         longer live files of the current snapshot)",
        what.join(", ")
    ))
}

#[cfg(test)]
#[path = "cherrypick_tests.rs"]
mod tests;
