//! Tests of snapshot expiry: which snapshots and refs go (metadata only), and which files
//! go on a real table written by the commit producers in a temporary folder.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use serde_json::json;

use super::*;
use crate::commit::{fast_append, overwrite_files, row_delta, RowDelta};
use crate::error::ErrorKind;
use crate::manifest::{read_manifest_list, DataFile};
use crate::scan::plan_files;
use crate::spec::{NestedField, Operation, PrimitiveType, Schema, Summary};

const DAY: i64 = 24 * 60 * 60 * 1000;
const NOW: i64 = 100 * DAY;

fn schema() -> Schema {
    Schema::new(0, vec![NestedField::required(1, "id", PrimitiveType::Long.into())], vec![]).unwrap()
}

fn snap(id: i64, parent: Option<i64>, ts: i64) -> Snapshot {
    Snapshot {
        snapshot_id: id,
        parent_snapshot_id: parent,
        sequence_number: id,
        timestamp_ms: ts,
        manifest_list: Some(format!("/t/metadata/snap-{id}.avro")),
        manifests: None,
        summary: Summary::new(Operation::Append),
        schema_id: Some(0),
        first_row_id: None,
        added_rows: None,
    }
}

/// Main: 1 <- 2 <- 3 <- 4 (days 90, 91, 92, 99). Snapshot 5 (day 93, child of 2) is only on
/// branch `b`; snapshot 6 (day 98, child of 3) on no ref at all.
fn history(props: &[(&str, &str)]) -> TableMetadata {
    let props = props.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let mut md = TableMetadata::new_table(schema(), None, None, "/t", props, 2).unwrap();
    for (id, parent, day) in [(1, None, 90), (2, Some(1), 91), (3, Some(2), 92), (4, Some(3), 99)] {
        md = md.add_snapshot(snap(id, parent, day * DAY), day * DAY).unwrap();
    }
    md.snapshots.push(snap(5, Some(2), 93 * DAY));
    md.snapshots.push(snap(6, Some(3), 98 * DAY));
    md.last_sequence_number = 6;
    md.refs.insert("b".into(), SnapshotRef::branch(5));
    md
}

fn opts() -> ExpireOptions {
    ExpireOptions { now_ms: NOW, ..Default::default() }
}

fn expired(md: &TableMetadata, o: &ExpireOptions) -> Vec<i64> {
    select_expired(md, o).unwrap().expired_snapshot_ids
}

#[test]
fn default_age_keeps_five_days_and_one_snapshot_per_branch() {
    let md = history(&[]);
    // Cut-off day 95: main keeps 4 (young) and stops at 3; b keeps its head 5 (min 1);
    // 6 is unreferenced and young.
    assert_eq!(expired(&md, &opts()), vec![1, 2, 3]);
    let md = history(&[(MAX_SNAPSHOT_AGE_MS, &(9 * DAY).to_string())]);
    // Cut-off day 91: main keeps 4, 3, 2; b keeps 5, 2.
    assert_eq!(expired(&md, &opts()), vec![1]);
    let md = history(&[(MIN_SNAPSHOTS_TO_KEEP, "3")]);
    // At least 3 per branch: main 4, 3, 2; b 5, 2, 1.
    assert!(expired(&md, &opts()).is_empty());
}

#[test]
fn older_than_and_retain_last_override_the_properties() {
    let md = history(&[(MIN_SNAPSHOTS_TO_KEEP, "3")]);
    let o = ExpireOptions { older_than_ms: Some(99 * DAY), retain_last: Some(1), ..opts() };
    // Only the heads are kept; 6 is older than the cut-off.
    assert_eq!(expired(&md, &o), vec![1, 2, 3, 6]);
    let o = ExpireOptions { older_than_ms: Some(99 * DAY), retain_last: Some(2), ..opts() };
    assert_eq!(expired(&md, &o), vec![1, 6]);
    let o = ExpireOptions { retain_last: Some(0), ..opts() };
    assert_eq!(select_expired(&md, &o).unwrap_err().kind(), ErrorKind::Validation);
}

#[test]
fn branch_and_tag_retention() {
    let mut md = history(&[]);
    md.refs.insert(
        "b".into(),
        SnapshotRef {
            snapshot_id: 5,
            retention: SnapshotRetention::Branch {
                min_snapshots_to_keep: Some(3),
                max_snapshot_age_ms: None,
                max_ref_age_ms: None,
            },
        },
    );
    md.refs.insert(
        "old-tag".into(),
        SnapshotRef { snapshot_id: 1, retention: SnapshotRetention::Tag { max_ref_age_ms: Some(DAY) } },
    );
    md.refs.insert(
        "kept-tag".into(),
        SnapshotRef { snapshot_id: 1, retention: SnapshotRetention::Tag { max_ref_age_ms: Some(20 * DAY) } },
    );
    let sel = select_expired(&md, &opts()).unwrap();
    // b keeps 5, 2, 1; the young tag keeps 1; the old tag goes; main keeps only 4.
    assert_eq!(sel.expired_snapshot_ids, vec![3]);
    assert_eq!(sel.removed_refs, vec!["old-tag".to_string()]);

    // A branch whose own max age is short keeps its minimum only; its max-ref-age removes it.
    md.refs.insert(
        "b".into(),
        SnapshotRef {
            snapshot_id: 5,
            retention: SnapshotRetention::Branch {
                min_snapshots_to_keep: None,
                max_snapshot_age_ms: Some(1),
                max_ref_age_ms: Some(6 * DAY),
            },
        },
    );
    md.refs.remove("kept-tag");
    let sel = select_expired(&md, &opts()).unwrap();
    assert_eq!(sel.removed_refs, vec!["b".to_string(), "old-tag".to_string()]);
    assert_eq!(sel.expired_snapshot_ids, vec![1, 2, 3, 5]);
    let (next, _) = expire(&md, &opts()).unwrap().unwrap();
    assert_eq!(next.refs().keys().collect::<Vec<_>>(), vec!["main"]);
    assert_eq!(next.snapshots().iter().map(|s| s.snapshot_id).collect::<Vec<_>>(), vec![4, 6]);

    // The table-wide max ref age applies to refs without their own.
    let mut md = history(&[(MAX_REF_AGE_MS, &(2 * DAY).to_string())]);
    md.refs.insert("t".into(), SnapshotRef::tag(4));
    let sel = select_expired(&md, &opts()).unwrap();
    assert_eq!(sel.removed_refs, vec!["b".to_string()]);
}

#[test]
fn explicit_ids_expire_unless_a_kept_ref_points_at_them() {
    let md = history(&[(MAX_SNAPSHOT_AGE_MS, &(50 * DAY).to_string())]);
    let o = ExpireOptions { snapshot_ids: vec![3, 42], ..opts() };
    assert_eq!(expired(&md, &o), vec![3]);
    let o = ExpireOptions { snapshot_ids: vec![5], ..opts() };
    let e = select_expired(&md, &o).unwrap_err();
    assert!(e.to_string().contains("snapshot 5") && e.to_string().contains("\"b\""), "{e}");
}

#[test]
fn nothing_to_expire_is_no_change_and_gc_disabled_is_refused() {
    let md = history(&[(MAX_SNAPSHOT_AGE_MS, &(50 * DAY).to_string())]);
    assert!(expire(&md, &opts()).unwrap().is_none());
    for off in ["false", " true", "yes"] {
        // Java's Boolean.parseBoolean: only `true` (any case, nothing around it) is on.
        let md = history(&[(GC_ENABLED, off)]);
        let e = select_expired(&md, &opts()).unwrap_err();
        assert!(e.to_string().contains("GC is disabled"), "{off:?}: {e}");
    }
    assert!(select_expired(&history(&[(GC_ENABLED, "TRUE")]), &opts()).is_ok());
    let empty = TableMetadata::new_table(schema(), None, None, "/t", BTreeMap::new(), 2).unwrap();
    assert!(expire(&empty, &opts()).unwrap().is_none());
}

// ---- files -------------------------------------------------------------------------------

fn data(dir: &std::path::Path, name: &str) -> DataFile {
    let path = format!("{}/data/{name}", dir.display());
    std::fs::create_dir_all(dir.join("data")).unwrap();
    std::fs::write(&path, b"x").unwrap();
    DataFile::new_data(path, 1, 1)
}

fn pos_delete(dir: &std::path::Path, name: &str, target: &str) -> DataFile {
    let mut f = data(dir, name);
    f.content = DataContentType::PositionDeletes;
    f.referenced_data_file = Some(target.to_string());
    f
}

fn commit(step: (TableMetadata, Vec<String>), n: usize) -> TableMetadata {
    step.0.with_metadata_location(format!("/unused/v{n}.metadata.json"))
}

fn manifests_of(md: &TableMetadata, id: i64) -> HashSet<String> {
    let s = md.snapshot_by_id(id).unwrap();
    read_manifest_list(s.manifest_list.as_deref().unwrap())
        .unwrap()
        .into_iter()
        .map(|m| m.manifest_path)
        .collect()
}

fn paths(files: &[ExpiredFile], kind: ExpiredFileKind) -> BTreeSet<String> {
    files.iter().filter(|f| f.kind == kind).map(|f| f.path.clone()).collect()
}

#[test]
fn deletes_exactly_what_only_expired_snapshots_reach() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let props = BTreeMap::new();
    let md = TableMetadata::new_table(schema(), None, None, d.to_str().unwrap(), BTreeMap::new(), 2).unwrap();
    let (f1, f2, f3) = (data(d, "f1"), data(d, "f2"), data(d, "f3"));
    let md = commit(fast_append(&md, vec![f1.clone()], &props, 10).unwrap(), 1);
    let md = commit(fast_append(&md, vec![f2.clone()], &props, 20).unwrap(), 2);
    let removed = BTreeSet::from([f1.file_path.clone()]);
    let md = commit(overwrite_files(&md, vec![f3.clone()], removed, &props, 30).unwrap(), 3);
    let del = pos_delete(d, "d1", &f2.file_path);
    let delta = RowDelta { added_deletes: vec![del.clone()], ..Default::default() };
    let mut before = commit(row_delta(&md, delta, 40).unwrap(), 4);
    let ids: Vec<i64> = before.snapshots().iter().map(|s| s.snapshot_id).collect();
    before.statistics = vec![
        json!({"snapshot-id": ids[0], "statistics-path": format!("{}/metadata/s0.stats", d.display()),
               "file-size-in-bytes": 11, "file-footer-size-in-bytes": 1, "blob-metadata": []}),
        json!({"snapshot-id": ids[3], "statistics-path": format!("{}/metadata/s3.stats", d.display()),
               "file-size-in-bytes": 12, "file-footer-size-in-bytes": 1, "blob-metadata": []}),
    ];

    // Expire the first two snapshots (older than the overwrite).
    let o = ExpireOptions { now_ms: 50, older_than_ms: Some(30), ..Default::default() };
    let (after, sel) = expire(&before, &o).unwrap().unwrap();
    assert_eq!(sel.expired_snapshot_ids, ids[..2].to_vec());
    assert_eq!(after.statistics().len(), 1);
    let files = expired_files(&before, &sel.expired_snapshot_ids, &[&after], 3).unwrap();

    assert_eq!(paths(&files, ExpiredFileKind::Data), BTreeSet::from([f1.file_path.clone()]));
    assert!(paths(&files, ExpiredFileKind::PositionDeletes).is_empty());
    let lists: BTreeSet<String> = ids[..2]
        .iter()
        .map(|id| before.snapshot_by_id(*id).unwrap().manifest_list.clone().unwrap())
        .collect();
    assert_eq!(paths(&files, ExpiredFileKind::ManifestList), lists);
    let old: HashSet<String> =
        manifests_of(&before, ids[0]).union(&manifests_of(&before, ids[1])).cloned().collect();
    let kept: HashSet<String> =
        manifests_of(&before, ids[2]).union(&manifests_of(&before, ids[3])).cloned().collect();
    let want: BTreeSet<String> = old.difference(&kept).cloned().collect();
    assert!(!want.is_empty());
    assert_eq!(paths(&files, ExpiredFileKind::Manifest), want);
    assert_eq!(
        paths(&files, ExpiredFileKind::Statistics),
        BTreeSet::from([format!("{}/metadata/s0.stats", d.display())])
    );
    let stats = files.iter().find(|f| f.kind == ExpiredFileKind::Statistics).unwrap();
    assert_eq!(stats.size, 11);
    // Nothing a retained snapshot reads is deleted.
    let deleted: HashSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
    for s in after.snapshots() {
        for t in plan_files(&after, Some(s.snapshot_id)).unwrap() {
            assert!(!deleted.contains(t.file.file_path.as_str()));
            assert!(t.deletes.iter().all(|x| !deleted.contains(x.file.file_path.as_str())));
        }
    }

    // Expiring everything but the current snapshot: f1 was already dropped above; now the
    // overwrite's manifests that only it used go too, and the delete file stays (live).
    let o = ExpireOptions { now_ms: 50, older_than_ms: Some(45), ..Default::default() };
    let (after2, sel2) = expire(&before, &o).unwrap().unwrap();
    assert_eq!(sel2.expired_snapshot_ids, ids[..3].to_vec());
    let files2 = expired_files(&before, &sel2.expired_snapshot_ids, &[&after2], 2).unwrap();
    assert_eq!(paths(&files2, ExpiredFileKind::Data), BTreeSet::from([f1.file_path.clone()]));
    assert_eq!(paths(&files2, ExpiredFileKind::ManifestList).len(), 3);
    // A retained version that still holds the snapshots protects their files.
    assert!(expired_files(&before, &sel2.expired_snapshot_ids, &[&after2, &before], 2).unwrap().is_empty());
}

#[test]
fn a_missing_retained_manifest_is_an_error_not_an_empty_answer() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let props = BTreeMap::new();
    let md = TableMetadata::new_table(schema(), None, None, d.to_str().unwrap(), BTreeMap::new(), 2).unwrap();
    let f1 = data(d, "f1");
    let md = commit(fast_append(&md, vec![f1.clone()], &props, 10).unwrap(), 1);
    let md = commit(
        overwrite_files(&md, vec![data(d, "f2")], BTreeSet::from([f1.file_path]), &props, 20).unwrap(),
        2,
    );
    let o = ExpireOptions { now_ms: 50, older_than_ms: Some(20), ..Default::default() };
    let (after, sel) = expire(&md, &o).unwrap().unwrap();
    let current = after.current_snapshot().unwrap().manifest_list.clone().unwrap();
    std::fs::remove_file(&current).unwrap();
    let e = expired_files(&md, &sel.expired_snapshot_ids, &[&after], 2).unwrap_err();
    assert!(e.to_string().contains(&current), "{e}");
}
