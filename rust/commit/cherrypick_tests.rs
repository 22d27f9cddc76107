//! Tests of cherry-pick (Java's `CherryPickOperation` rules): fast-forward, re-applied appends
//! and dynamic overwrites, and the refusals (already picked, WAP id published, replaced
//! partition changed, overwrite not based on an ancestor, missing files to delete).

use std::collections::{BTreeMap, BTreeSet};

use super::cherrypick;
use crate::commit::{merge_append, overwrite_files, replace_partitions};
use crate::error::{ErrorKind, Result};
use crate::manifest::{read_manifest, read_manifest_list, DataFile, EntryStatus};
use crate::scan::plan_files;
use crate::spec::{Literal, MetadataUpdate, Operation, SnapshotRef, TableMetadata};

const NOW: i64 = 1_700_000_000_000;

fn table(dir: &std::path::Path) -> TableMetadata {
    crate::commit::producer::tests::table(dir, &[])
}

fn file(dir: &std::path::Path, name: &str, region: &str) -> DataFile {
    let mut f = DataFile::new_data(path(dir, name), 1, 100);
    f.partition = vec![Some(Literal::String(region.into()))];
    f
}

fn path(dir: &std::path::Path, name: &str) -> String {
    format!("{}/data/{name}", dir.display())
}

fn props(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// The file names (after `data/`) live in `main`.
fn live(md: &TableMetadata) -> Vec<String> {
    let mut v: Vec<String> = plan_files(md, None)
        .unwrap()
        .into_iter()
        .map(|t| t.file.file_path.rsplit('/').next().unwrap().to_string())
        .collect();
    v.sort();
    v
}

fn current(md: &TableMetadata) -> i64 {
    md.current_snapshot_id().unwrap()
}

/// `md` with `main` moved to `snapshot_id` (a view to write a branch's snapshot from, or a
/// rollback).
fn at(md: &TableMetadata, snapshot_id: i64) -> TableMetadata {
    let reference = SnapshotRef::branch(snapshot_id);
    md.apply_updates(
        &[MetadataUpdate::SetSnapshotRef { name: SnapshotRef::MAIN_BRANCH.into(), reference }],
        NOW,
    )
    .unwrap()
}

/// Stages the snapshot `written` made on its `main` into `md` (no ref moves: Java's
/// `stageOnly()`); returns the metadata and the staged snapshot's id.
fn stage(md: &TableMetadata, written: Result<(TableMetadata, Vec<String>)>) -> (TableMetadata, i64) {
    let (w, _) = written.unwrap();
    let s = w.current_snapshot().unwrap().clone();
    let id = s.snapshot_id;
    (md.add_snapshot_to(s, None, NOW).unwrap(), id)
}

fn append(md: &TableMetadata, files: Vec<DataFile>) -> TableMetadata {
    merge_append(md, files, &BTreeMap::new(), NOW).unwrap().0
}

fn err_of(r: Result<(TableMetadata, Vec<String>)>) -> crate::error::Error {
    match r {
        Ok(_) => panic!("expected the cherry-pick to be refused"),
        Err(e) => e,
    }
}

/// `eu: a, us: b` on `main`.
fn two_partitions(dir: &std::path::Path) -> TableMetadata {
    append(&table(dir), vec![file(dir, "a.parquet", "eu"), file(dir, "b.parquet", "us")])
}

#[test]
fn unknown_snapshot_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let md = two_partitions(dir.path());
    let e = err_of(cherrypick(&md, 42, NOW));
    assert_eq!(e.kind(), ErrorKind::Validation);
    assert!(e.message().starts_with("Cannot cherry-pick unknown snapshot ID: 42"), "{e}");
}

#[test]
fn append_is_reapplied_once_then_refused_as_already_picked() {
    // (a) a non-WAP append picked twice: Java's CherrypickAncestorCommitException.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let md = two_partitions(d);
    let first = current(&md);
    let (md, s) = stage(&md, merge_append(&md, vec![file(d, "x.parquet", "eu")], &BTreeMap::new(), NOW));
    let md = append(&md, vec![file(d, "c.parquet", "us")]);

    let (md, written) = cherrypick(&md, s, NOW).unwrap();
    assert!(!written.is_empty());
    let c = md.current_snapshot().unwrap();
    assert_ne!(c.snapshot_id, s);
    assert_eq!(c.summary.operation, Operation::Append);
    assert_eq!(c.summary.get("source-snapshot-id"), Some(s.to_string().as_str()));
    assert_eq!(c.summary.get("published-wap-id"), None);
    assert_eq!(live(&md), ["a.parquet", "b.parquet", "c.parquet", "x.parquet"]);

    let e = err_of(cherrypick(&md, s, NOW));
    assert_eq!(e.kind(), ErrorKind::Validation);
    let want = format!("Cannot cherrypick snapshot {s}: already picked to create ancestor {}", c.snapshot_id);
    assert!(e.message().starts_with(&want), "{e}");

    // An ancestor itself (no WAP id) is refused as one.
    let e = err_of(cherrypick(&md, first, NOW));
    assert!(
        e.message().starts_with(&format!("Cannot cherrypick snapshot {first}: already an ancestor")),
        "{e}"
    );
}

#[test]
fn wap_ids_publish_once_and_a_fast_forwardable_delete_is_not_wap_checked() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let md = two_partitions(d);
    let wap = |id: &str| props(&[("wap.id", id)]);

    // A staged WAP append on the current snapshot fast-forwards; picking it again is a
    // duplicate WAP publish (its wap.id is in main's history), as Java.
    let (md, s1) = stage(&md, merge_append(&md, vec![file(d, "w1.parquet", "eu")], &wap("w1"), NOW));
    let (md, written) = cherrypick(&md, s1, NOW).unwrap();
    assert!(written.is_empty());
    assert_eq!(current(&md), s1);
    let e = err_of(cherrypick(&md, s1, NOW));
    assert_eq!(e.kind(), ErrorKind::Validation);
    assert!(
        e.message().starts_with("Duplicate request to cherry pick wap id that was published already: w1"),
        "{e}"
    );

    // Re-applied: published-wap-id and source-snapshot-id recorded.
    let (md, s2) = stage(&md, merge_append(&md, vec![file(d, "w2.parquet", "eu")], &wap("w2"), NOW));
    let md = append(&md, vec![file(d, "c.parquet", "us")]);
    let (md, _) = cherrypick(&md, s2, NOW).unwrap();
    let c = md.current_snapshot().unwrap();
    assert_eq!(c.summary.get("published-wap-id"), Some("w2"));
    assert_eq!(c.summary.get("source-snapshot-id"), Some(s2.to_string().as_str()));

    // An append staged again with the published id is refused even though it could
    // fast-forward (Java checks appends eagerly).
    let (md, s3) = stage(&md, merge_append(&md, vec![file(d, "w3.parquet", "eu")], &wap("w2"), NOW));
    let e = err_of(cherrypick(&md, s3, NOW));
    assert!(e.message().contains("published already: w2"), "{e}");

    // (d) A staged delete with the published id fast-forwards: Java checks WAP ids only for
    // appends and dynamic overwrites.
    let removed = BTreeSet::from([path(d, "a.parquet")]);
    let (md, del) = stage(&md, overwrite_files(&md, vec![], removed, &wap("w2"), NOW));
    let (md, written) = cherrypick(&md, del, NOW).unwrap();
    assert!(written.is_empty());
    assert_eq!(current(&md), del);
    assert_eq!(live(&md), ["b.parquet", "c.parquet", "w1.parquet", "w2.parquet"]);
}

#[test]
fn a_delete_that_cannot_fast_forward_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let md = two_partitions(d);
    let removed = BTreeSet::from([path(d, "a.parquet")]);
    let (md, del) = stage(&md, overwrite_files(&md, vec![], removed, &BTreeMap::new(), NOW));
    let md = append(&md, vec![file(d, "c.parquet", "us")]);
    let e = err_of(cherrypick(&md, del, NOW));
    assert_eq!(e.kind(), ErrorKind::Validation);
    let want = format!("Cannot cherry-pick snapshot {del}: not append, dynamic overwrite, or fast-forward");
    assert!(e.message().starts_with(&want), "{e}");
    assert!(e.message().contains("'delete'"), "{e}");
}

#[test]
fn dynamic_overwrite_is_refused_when_main_added_to_a_replaced_partition() {
    // (b) Java's validateReplacedPartitions: no lost update of main's new row.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let md = two_partitions(d);
    let wap = props(&[("wap.id", "w")]);
    let (md, p) = stage(&md, replace_partitions(&md, vec![file(d, "n.parquet", "eu")], &wap, NOW));
    let md = append(&md, vec![file(d, "c.parquet", "eu")]);
    let before = md.snapshots().len();
    let e = err_of(cherrypick(&md, p, NOW));
    assert_eq!(e.kind(), ErrorKind::Validation);
    assert!(
        e.message().starts_with("Cannot cherry-pick replace partitions with changed partition: region=eu"),
        "{e}"
    );
    assert!(e.to_string().contains("c.parquet"), "{e}");
    assert_eq!(md.snapshots().len(), before);
}

#[test]
fn dynamic_overwrite_reapplies_exactly_its_added_and_removed_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let md = two_partitions(d);
    let wap = props(&[("wap.id", "w")]);
    let (md, p) = stage(&md, replace_partitions(&md, vec![file(d, "n.parquet", "eu")], &wap, NOW));
    // Main moves on in another partition: no conflict.
    let md = append(&md, vec![file(d, "c.parquet", "us")]);
    let (md, written) = cherrypick(&md, p, NOW).unwrap();
    assert!(!written.is_empty());
    let s = md.current_snapshot().unwrap();
    assert_eq!(s.summary.operation, Operation::Overwrite);
    assert_eq!(s.summary.get("replace-partitions"), None, "Java does not carry replace-partitions over");
    assert_eq!(s.summary.get("source-snapshot-id"), Some(p.to_string().as_str()));
    assert_eq!(s.summary.get("published-wap-id"), Some("w"));
    assert_eq!(s.summary.get("added-data-files"), Some("1"));
    assert_eq!(s.summary.get("deleted-data-files"), Some("1"));
    assert_eq!(live(&md), ["b.parquet", "c.parquet", "n.parquet"]);
    let mut own: Vec<(EntryStatus, String)> = Vec::new();
    for m in read_manifest_list(s.manifest_list.as_deref().unwrap()).unwrap() {
        if m.added_snapshot_id != s.snapshot_id {
            continue;
        }
        for e in read_manifest(&m).unwrap() {
            if e.status != EntryStatus::Existing {
                own.push((e.status, e.data_file.file_path.rsplit('/').next().unwrap().to_string()));
            }
        }
    }
    own.sort_by(|x, y| x.1.cmp(&y.1));
    assert_eq!(own, [(EntryStatus::Deleted, "a.parquet".into()), (EntryStatus::Added, "n.parquet".into())]);
}

#[test]
fn dynamic_overwrite_whose_removed_file_is_gone_is_refused() {
    // Java's failMissingDeletePaths: re-running replace-partitions would have succeeded.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let md = two_partitions(d);
    let (md, p) =
        stage(&md, replace_partitions(&md, vec![file(d, "n.parquet", "eu")], &BTreeMap::new(), NOW));
    let removed = BTreeSet::from([path(d, "a.parquet")]);
    let md = overwrite_files(&md, vec![], removed, &BTreeMap::new(), NOW).unwrap().0;
    let e = err_of(cherrypick(&md, p, NOW));
    assert_eq!(e.kind(), ErrorKind::Validation);
    assert!(e.message().starts_with("Missing required files to delete: "), "{e}");
    assert!(e.message().contains(&path(d, "a.parquet")), "{e}");
    assert!(e.message().contains(&format!("removed by snapshot {}", current(&md))), "{e}");
}

#[test]
fn dynamic_overwrite_not_based_on_an_ancestor_is_refused() {
    // (c) written on a branch off B; main was rolled back to A and moved on to C.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let md = two_partitions(d);
    let a = current(&md);
    let md = append(&md, vec![file(d, "c.parquet", "us")]);
    let b = current(&md);
    let (md, p) =
        stage(&md, replace_partitions(&md, vec![file(d, "n.parquet", "us")], &BTreeMap::new(), NOW));
    let md = append(&at(&md, a), vec![file(d, "e.parquet", "us")]);
    let e = err_of(cherrypick(&md, p, NOW));
    assert_eq!(e.kind(), ErrorKind::Validation);
    let want = format!("Cannot cherry-pick overwrite not based on an ancestor of the current state: {p}");
    assert!(e.message().starts_with(&want), "{e}");
    assert!(e.message().contains(&format!("parent snapshot {b}")), "{e}");
    assert_eq!(live(&md), ["a.parquet", "b.parquet", "e.parquet"]);

    // A dynamic overwrite on the current snapshot still fast-forwards.
    let (md, q) =
        stage(&md, replace_partitions(&md, vec![file(d, "q.parquet", "us")], &BTreeMap::new(), NOW));
    let (md, written) = cherrypick(&md, q, NOW).unwrap();
    assert!(written.is_empty());
    assert_eq!(current(&md), q);
    assert_eq!(live(&md), ["a.parquet", "q.parquet"]);
}
