//! Tests of the merging producer: merge append, overwrite, replace partitions, validation.

use std::collections::{BTreeMap, BTreeSet};

use crate::commit::{merge_append, overwrite_files, replace_partitions, validate, ConflictScope, Validation};
use crate::error::ErrorKind;
use crate::manifest::{read_manifest, read_manifest_list, DataFile, EntryStatus};
use crate::scan::plan_files;
use crate::spec::{Literal, NestedField, PartitionSpec, PrimitiveType, Schema, TableMetadata};

/// A v2 table (`id` long, `region` string) partitioned by `identity(region)`.
pub(crate) fn table(dir: &std::path::Path, props: &[(&str, &str)]) -> TableMetadata {
    let schema = Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long.into()),
            NestedField::optional(2, "region", PrimitiveType::String.into()),
        ],
        vec![],
    )
    .unwrap();
    let spec = PartitionSpec::builder(&schema).identity("region").unwrap().build().unwrap();
    let props = props.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    TableMetadata::new_table(schema, Some(spec), None, dir.to_str().unwrap(), props, 2).unwrap()
}

fn file(dir: &std::path::Path, name: &str, region: &str, rows: i64) -> DataFile {
    let mut f = DataFile::new_data(format!("{}/data/{name}", dir.display()), rows, 100 * rows);
    f.partition = vec![Some(Literal::String(region.into()))];
    f
}

fn manifests(md: &TableMetadata) -> Vec<crate::manifest::ManifestFile> {
    read_manifest_list(md.current_snapshot().unwrap().manifest_list.as_deref().unwrap()).unwrap()
}

fn live_paths(md: &TableMetadata) -> Vec<String> {
    let mut v: Vec<String> = plan_files(md, None).unwrap().into_iter().map(|t| t.file.file_path).collect();
    v.sort();
    v
}

fn no_props() -> BTreeMap<String, String> {
    BTreeMap::new()
}

#[test]
fn merge_append_merges_at_min_count_and_keeps_sequence_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let mut md = table(dir.path(), &[("commit.manifest.min-count-to-merge", "3")]);
    let mut counts = Vec::new();
    for i in 0..7 {
        let f = file(dir.path(), &format!("f{i}.parquet"), if i % 2 == 0 { "eu" } else { "us" }, 1 + i);
        let (next, _) = merge_append(&md, vec![f], &no_props(), 1_700_000_000_000 + i).unwrap();
        md = next.with_metadata_location(format!("{}/metadata/v{i}.json", dir.path().display()));
        counts.push(manifests(&md).len());
    }
    // Java's ManifestMergeManager with min-count 3: 1, 2, merge(3) -> 1, 2, merge -> 1, 2, merge -> 1.
    assert_eq!(counts, vec![1, 2, 1, 2, 1, 2, 1]);
    assert_eq!(live_paths(&md).len(), 7);
    let s = md.current_snapshot().unwrap();
    assert_eq!(s.summary.get("total-records"), Some("28"));
    assert_eq!(s.summary.get("added-data-files"), Some("1"));
    let m = &manifests(&md)[0];
    assert_eq!(m.added_files_count, Some(1));
    assert_eq!(m.existing_files_count, Some(6));
    assert_eq!(m.min_sequence_number, 1);
    let mut seqs: Vec<(String, i64, EntryStatus)> = read_manifest(m)
        .unwrap()
        .into_iter()
        .map(|e| (e.data_file.file_path, e.sequence_number.unwrap(), e.status))
        .collect();
    seqs.sort_by_key(|t| t.1);
    for (i, (p, seq, status)) in seqs.iter().enumerate() {
        assert!(p.ends_with(&format!("f{i}.parquet")), "{p}");
        assert_eq!(*seq, i as i64 + 1, "original data sequence number kept");
        let want = if i == 6 { EntryStatus::Added } else { EntryStatus::Existing };
        assert_eq!(*status, want);
    }
    // No stray manifests of merged-away attempts remain.
    let avro = std::fs::read_dir(dir.path().join("metadata"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().contains("-m"))
        .count();
    let referenced: BTreeSet<String> = md
        .snapshots()
        .iter()
        .flat_map(|s| read_manifest_list(s.manifest_list.as_deref().unwrap()).unwrap())
        .map(|m| m.manifest_path)
        .collect();
    assert_eq!(avro, referenced.len());
}

#[test]
fn merge_disabled_is_a_fast_append() {
    let dir = tempfile::tempdir().unwrap();
    let mut md = table(
        dir.path(),
        &[("commit.manifest.min-count-to-merge", "2"), ("commit.manifest-merge.enabled", "false")],
    );
    for i in 0..4 {
        let f = file(dir.path(), &format!("f{i}.parquet"), "eu", 1);
        md = merge_append(&md, vec![f], &no_props(), 1_700_000_000_000 + i).unwrap().0;
    }
    assert_eq!(manifests(&md).len(), 4);
}

#[test]
fn overwrite_removes_files_and_summarises_like_java() {
    let dir = tempfile::tempdir().unwrap();
    let md = table(dir.path(), &[]);
    let (md, _) = merge_append(
        &md,
        vec![file(dir.path(), "a.parquet", "eu", 10), file(dir.path(), "b.parquet", "us", 5)],
        &no_props(),
        1,
    )
    .unwrap();
    let a = format!("{}/data/a.parquet", dir.path().display());
    let (md2, _) = overwrite_files(
        &md,
        vec![file(dir.path(), "c.parquet", "eu", 3)],
        BTreeSet::from([a.clone()]),
        &no_props(),
        2,
    )
    .unwrap();
    let s = md2.current_snapshot().unwrap();
    assert_eq!(s.summary.operation.as_str(), "overwrite");
    for (k, v) in [
        ("added-data-files", "1"),
        ("deleted-data-files", "1"),
        ("added-records", "3"),
        ("deleted-records", "10"),
        ("removed-files-size", "1000"),
        ("total-records", "8"),
        ("total-data-files", "2"),
        ("total-files-size", "800"),
        ("changed-partition-count", "1"),
    ] {
        assert_eq!(s.summary.get(k), Some(v), "{k}");
    }
    assert_eq!(live_paths(&md2).len(), 2);
    assert!(!live_paths(&md2).contains(&a));

    // Delete only: operation delete; removing a file that is gone is a conflict.
    let (md3, _) =
        overwrite_files(&md2, vec![], BTreeSet::from([live_paths(&md2)[0].clone()]), &no_props(), 3).unwrap();
    assert_eq!(md3.current_snapshot().unwrap().summary.operation.as_str(), "delete");
    let err = overwrite_files(&md3, vec![], BTreeSet::from([a]), &no_props(), 4).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::CommitConflict, "{err}");
}

#[test]
fn replace_partitions_replaces_only_touched_partitions() {
    let dir = tempfile::tempdir().unwrap();
    let md = table(dir.path(), &[]);
    let (md, _) = merge_append(
        &md,
        vec![
            file(dir.path(), "a.parquet", "eu", 10),
            file(dir.path(), "b.parquet", "us", 5),
            file(dir.path(), "c.parquet", "eu", 1),
        ],
        &no_props(),
        1,
    )
    .unwrap();
    let (md2, _) =
        replace_partitions(&md, vec![file(dir.path(), "d.parquet", "eu", 2)], &no_props(), 2).unwrap();
    let s = md2.current_snapshot().unwrap();
    assert_eq!(s.summary.operation.as_str(), "overwrite");
    assert_eq!(s.summary.get("replace-partitions"), Some("true"));
    assert_eq!(s.summary.get("deleted-data-files"), Some("2"));
    assert_eq!(s.summary.get("total-records"), Some("7"));
    let live = live_paths(&md2);
    assert_eq!(live.len(), 2);
    assert!(live[0].ends_with("b.parquet") && live[1].ends_with("d.parquet"), "{live:?}");
}

#[test]
fn validation_finds_concurrent_data_in_scope_and_names_the_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let md = table(dir.path(), &[]);
    let (md, _) = merge_append(&md, vec![file(dir.path(), "a.parquet", "eu", 1)], &no_props(), 1).unwrap();
    let start = md.current_snapshot_id();
    let (md2, _) = merge_append(&md, vec![file(dir.path(), "b.parquet", "us", 1)], &no_props(), 2).unwrap();
    let eu = BTreeSet::from(["0:region=eu".to_string()]);
    let us = BTreeSet::from(["0:region=us".to_string()]);
    let v = |scope| Validation { start_snapshot_id: start, data: scope, ..Default::default() };
    validate(&md2, &v(ConflictScope::Partitions(eu))).unwrap();
    let err = validate(&md2, &v(ConflictScope::Partitions(us))).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::CommitConflict);
    let sid = md2.current_snapshot_id().unwrap().to_string();
    assert!(err.to_string().contains(&sid), "{err}");
    validate(&md2, &v(ConflictScope::Nothing)).unwrap();

    // A concurrent removal of a file we remove conflicts.
    let a = format!("{}/data/a.parquet", dir.path().display());
    let (md3, _) = overwrite_files(&md2, vec![], BTreeSet::from([a.clone()]), &no_props(), 3).unwrap();
    let v = Validation { start_snapshot_id: start, removed_paths: BTreeSet::from([a]), ..Default::default() };
    assert_eq!(validate(&md3, &v).unwrap_err().kind(), ErrorKind::CommitConflict);
    // A start that is not an ancestor is a conflict.
    let v = Validation { start_snapshot_id: Some(42), data: ConflictScope::Everything, ..Default::default() };
    assert_eq!(validate(&md3, &v).unwrap_err().kind(), ErrorKind::CommitConflict);
}

/// The live delete files of the current snapshot, by path.
fn live_deletes(md: &TableMetadata) -> Vec<String> {
    let mut out = vec![];
    for m in manifests(md) {
        if m.content == crate::manifest::ManifestContent::Deletes {
            for e in read_manifest(&m).unwrap() {
                if e.status.is_live() {
                    out.push(e.data_file.file_path.rsplit('/').next().unwrap().to_string());
                }
            }
        }
    }
    out.sort();
    out
}

#[test]
fn removing_a_data_file_removes_its_deletion_vector_as_javas_dangling_dvs() {
    use crate::commit::{row_delta, RowDelta};
    use crate::manifest::{DataContentType, FileFormat};
    let dir = tempfile::tempdir().unwrap();
    let mut md = crate::writer::test_tables::table(dir.path(), &[], 3);
    let mut n = 0;
    let mut set = |next: TableMetadata, md: &mut TableMetadata| {
        n += 1;
        *md = next.with_metadata_location(format!("{}/metadata/v{n}.json", dir.path().display()));
    };
    let (a, b, c) = (
        file(dir.path(), "a.parquet", "eu", 10),
        file(dir.path(), "b.parquet", "eu", 10),
        file(dir.path(), "c.parquet", "us", 10),
    );
    let (next, _) =
        merge_append(&md, vec![a.clone(), b.clone(), c.clone()], &no_props(), 1_700_000_000_000).unwrap();
    set(next, &mut md);
    // One Puffin file holding the DVs of a, b and c (three blobs).
    let dv = |target: &DataFile, offset: i64| {
        let mut d = file(dir.path(), "dvs.puffin", "", 1);
        d.partition = target.partition.clone();
        d.content = DataContentType::PositionDeletes;
        d.file_format = FileFormat::Puffin;
        d.referenced_data_file = Some(target.file_path.clone());
        d.content_offset = Some(offset);
        d.content_size_in_bytes = Some(40);
        d
    };
    let delta = RowDelta { added_deletes: vec![dv(&a, 4), dv(&b, 44), dv(&c, 84)], ..Default::default() };
    let (next, _) = row_delta(&md, delta, 1_700_000_000_001).unwrap();
    set(next, &mut md);
    assert_eq!(live_deletes(&md).len(), 3);

    // Overwrite removing `a`: its DV goes in the same snapshot, b's stays.
    let removed = BTreeSet::from([a.file_path.clone()]);
    let (next, _) = overwrite_files(&md, vec![], removed, &no_props(), 1_700_000_000_002).unwrap();
    set(next, &mut md);
    let snap = md.current_snapshot().unwrap();
    assert_eq!(snap.summary.get("removed-dvs"), Some("1"));
    assert_eq!(snap.summary.get("removed-delete-files"), Some("1"));
    assert_eq!(live_deletes(&md).len(), 2);

    // Replacing partition `us` removes c and its DV.
    let (next, _) = replace_partitions(
        &md,
        vec![file(dir.path(), "c2.parquet", "us", 5)],
        &no_props(),
        1_700_000_000_003,
    )
    .unwrap();
    set(next, &mut md);
    assert_eq!(md.current_snapshot().unwrap().summary.get("removed-dvs"), Some("1"));
    let left: Vec<_> =
        plan_files(&md, None).unwrap().into_iter().map(|t| (t.file.file_path, t.deletes.len())).collect();
    assert_eq!(left.len(), 2);
    assert_eq!(live_deletes(&md).len(), 1); // b's, still applied to b
    assert!(left.iter().any(|(p, d)| p == &b.file_path && *d == 1), "{left:?}");
}

#[test]
fn an_added_file_takes_row_ids_from_the_new_snapshot_not_ones_it_carried() {
    // Java's `MergingSnapshotProducer.add` suppresses an added data file's first_row_id: a
    // file re-added from another snapshot (a cherry-pick) gets ids from this snapshot's range.
    let dir = tempfile::tempdir().unwrap();
    let md = crate::writer::test_tables::table(dir.path(), &[], 3);
    let (md, _) =
        merge_append(&md, vec![file(dir.path(), "a.parquet", "eu", 10)], &no_props(), 1_700_000_000_000)
            .unwrap();
    let md = md.with_metadata_location(format!("{}/metadata/v1.json", dir.path().display()));
    let mut carried = file(dir.path(), "b.parquet", "eu", 5);
    carried.first_row_id = Some(3);
    let (md, _) = merge_append(&md, vec![carried], &no_props(), 1_700_000_000_001).unwrap();
    let snap = md.current_snapshot().unwrap();
    assert_eq!((snap.first_row_id, snap.added_rows), (Some(10), Some(5)));
    assert_eq!(md.next_row_id(), Some(15));
    let mut ids: Vec<(String, Option<i64>)> = plan_files(&md, None)
        .unwrap()
        .into_iter()
        .map(|t| (t.file.file_path.rsplit('/').next().unwrap().to_string(), t.file.first_row_id))
        .collect();
    ids.sort();
    assert_eq!(ids, vec![("a.parquet".to_string(), Some(0)), ("b.parquet".to_string(), Some(10))]);
}
