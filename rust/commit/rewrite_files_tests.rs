//! Tests of the rewrite-files producer: sequence numbers, validation, dropped delete files.

use std::collections::{BTreeMap, BTreeSet};

use super::{rewrite_files, RewriteFiles};
use crate::commit::{merge_append, row_delta, RowDelta};
use crate::error::ErrorKind;
use crate::manifest::{DataContentType, DataFile};
use crate::scan::plan_files;
use crate::spec::{Literal, Operation, TableMetadata};

fn table(dir: &std::path::Path) -> TableMetadata {
    crate::writer::test_tables::table(dir, &[], 2)
}

fn file(dir: &std::path::Path, name: &str, region: &str) -> DataFile {
    let mut f = DataFile::new_data(format!("{}/data/{name}", dir.display()), 10, 1000);
    f.partition = vec![Some(Literal::String(region.into()))];
    f
}

fn pos_delete(dir: &std::path::Path, name: &str, region: &str, target: &DataFile) -> DataFile {
    let mut d = file(dir, name, region);
    d.content = DataContentType::PositionDeletes;
    d.record_count = 1;
    d.referenced_data_file = Some(target.file_path.clone());
    d
}

fn eq_delete(dir: &std::path::Path, name: &str, region: &str) -> DataFile {
    let mut d = file(dir, name, region);
    d.content = DataContentType::EqualityDeletes;
    d.record_count = 1;
    d.equality_ids = Some(vec![1]);
    d
}

struct Fixture {
    dir: tempfile::TempDir,
    md: TableMetadata,
    n: i64,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let md = table(dir.path());
        Fixture { dir, md, n: 0 }
    }

    fn path(&self) -> &std::path::Path {
        self.dir.path()
    }

    fn set(&mut self, next: TableMetadata) {
        self.n += 1;
        self.md =
            next.with_metadata_location(format!("{}/metadata/v{}.json", self.dir.path().display(), self.n));
    }

    fn append(&mut self, f: DataFile) {
        let (next, _) =
            merge_append(&self.md, vec![f], &BTreeMap::new(), 1_700_000_000_000 + self.n).unwrap();
        self.set(next);
    }

    fn delete(&mut self, d: DataFile) {
        let delta = RowDelta { added_deletes: vec![d], ..Default::default() };
        let (next, _) = row_delta(&self.md, delta, 1_700_000_000_000 + self.n).unwrap();
        self.set(next);
    }

    fn live(&self) -> BTreeSet<String> {
        plan_files(&self.md, None).unwrap().into_iter().map(|t| t.file.file_path).collect()
    }
}

fn rewrite(start: &TableMetadata, rewritten: Vec<DataFile>, added: Vec<DataFile>) -> RewriteFiles {
    RewriteFiles {
        start_snapshot_id: start.current_snapshot().map(|s| s.snapshot_id),
        rewritten,
        added,
        use_starting_sequence_number: true,
        remove_dangling_deletes: false,
        summary_properties: BTreeMap::new(),
    }
}

#[test]
fn rewrite_keeps_the_starting_sequence_number_and_drops_deletes_older_than_every_file() {
    let mut t = Fixture::new();
    let a = file(t.path(), "a.parquet", "eu");
    let b = file(t.path(), "b.parquet", "eu");
    t.append(a.clone());
    t.append(b.clone());
    t.delete(pos_delete(t.path(), "a-del.parquet", "eu", &a));
    let start = t.md.clone();
    let start_seq = start.current_snapshot().unwrap().sequence_number;
    // A concurrent equality delete: no conflict, and it must still apply to the new file.
    t.delete(eq_delete(t.path(), "eq.parquet", "eu"));
    let c = file(t.path(), "c.parquet", "eu");
    let (next, _) =
        rewrite_files(&t.md, rewrite(&start, vec![a, b], vec![c.clone()]), 1_800_000_000_000).unwrap();
    t.set(next);
    let snap = t.md.current_snapshot().unwrap();
    assert_eq!(snap.summary.operation, Operation::Replace);
    assert_eq!(snap.summary.get("deleted-data-files"), Some("2"));
    assert_eq!(snap.summary.get("added-data-files"), Some("1"));
    // The position delete on `a` has the start's sequence number, the new file's: Java keeps
    // it (not older than every live file); it references `a` only, so it applies to nothing.
    let tasks = plan_files(&t.md, None).unwrap();
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0].file.file_path, c.file_path);
    assert_eq!(tasks[0].data_sequence_number, start_seq, "new file keeps the starting sequence number");
    let applied: Vec<&str> = tasks[0].deletes.iter().map(|d| d.file.file_path.as_str()).collect();
    assert_eq!(applied.len(), 1, "the concurrent equality delete still applies: {applied:?}");
    assert!(applied[0].ends_with("eq.parquet"));
}

#[test]
fn deletes_older_than_every_live_file_are_dropped() {
    let mut t = Fixture::new();
    let a = file(t.path(), "a.parquet", "eu");
    t.append(a.clone());
    t.delete(pos_delete(t.path(), "a-del.parquet", "eu", &a));
    t.append(file(t.path(), "x.parquet", "us")); // later snapshot: start seq > delete seq
    let start = t.md.clone();
    let c = file(t.path(), "c.parquet", "eu");
    let (next, _) = rewrite_files(&t.md, rewrite(&start, vec![a], vec![c]), 1_800_000_000_000).unwrap();
    t.set(next);
    let s = t.md.current_snapshot().unwrap();
    assert_eq!(s.summary.get("removed-delete-files"), Some("1"), "{:?}", s.summary);
    assert_eq!(s.summary.get("total-delete-files"), Some("0"));
}

#[test]
fn concurrent_position_delete_on_a_rewritten_file_is_a_conflict() {
    let mut t = Fixture::new();
    let a = file(t.path(), "a.parquet", "eu");
    let b = file(t.path(), "b.parquet", "us");
    t.append(a.clone());
    t.append(b.clone());
    let start = t.md.clone();
    t.delete(pos_delete(t.path(), "b-del.parquet", "us", &b)); // another file: fine
    let c = file(t.path(), "c.parquet", "eu");
    let rw = rewrite(&start, vec![a.clone()], vec![c.clone()]);
    assert!(rewrite_files(&t.md, rw, 1_800_000_000_000).is_ok());
    t.delete(pos_delete(t.path(), "a-del.parquet", "eu", &a));
    let err = rewrite_files(&t.md, rewrite(&start, vec![a], vec![c]), 1_800_000_000_000).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::CommitConflict, "{err}");
    assert!(err.to_string().contains("a-del.parquet"), "{err}");
}

#[test]
fn a_rewritten_file_removed_meanwhile_is_a_conflict_and_empty_rewrites_are_refused() {
    let mut t = Fixture::new();
    let a = file(t.path(), "a.parquet", "eu");
    t.append(a.clone());
    let start = t.md.clone();
    let c = file(t.path(), "c.parquet", "eu");
    let (next, _) = rewrite_files(&t.md, rewrite(&start, vec![a.clone()], vec![c.clone()]), 1).unwrap();
    t.set(next);
    assert_eq!(t.live(), BTreeSet::from([c.file_path.clone()]));
    let err = rewrite_files(&t.md, rewrite(&start, vec![a], vec![c.clone()]), 2).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::CommitConflict, "{err}");
    let err = rewrite_files(&t.md, rewrite(&t.md, vec![], vec![c]), 3).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Validation, "{err}");
}

#[test]
fn remove_dangling_deletes_drops_deletes_of_partitions_without_older_data() {
    let mut t = Fixture::new();
    let a = file(t.path(), "a.parquet", "eu");
    let keep = file(t.path(), "keep.parquet", "us");
    t.append(keep.clone());
    t.append(a.clone());
    t.delete(eq_delete(t.path(), "eq-eu.parquet", "eu"));
    t.delete(eq_delete(t.path(), "eq-us.parquet", "us"));
    let start = t.md.clone();
    let c = file(t.path(), "c.parquet", "eu");
    let mut rw = rewrite(&start, vec![a], vec![c]);
    rw.remove_dangling_deletes = true;
    let (next, _) = rewrite_files(&t.md, rw, 1).unwrap();
    t.set(next);
    let tasks = plan_files(&t.md, None).unwrap();
    let eu = tasks.iter().find(|t| t.file.file_path.ends_with("c.parquet")).unwrap();
    let us = tasks.iter().find(|t| t.file.file_path.ends_with("keep.parquet")).unwrap();
    // eu: the new file has the start's sequence number, which is >= the eu delete's: dangling.
    assert!(eu.deletes.is_empty());
    // us: untouched, its delete still applies.
    assert_eq!(us.deletes.len(), 1);
    let s = t.md.current_snapshot().unwrap();
    assert_eq!(s.summary.get("removed-delete-files"), Some("1"), "{:?}", s.summary);
}

#[test]
fn remove_dangling_deletes_drops_file_scoped_position_deletes_of_rewritten_files() {
    // Java 1.12: a v2 position delete file scoped to one data file dangles once that file is
    // rewritten, even when an older live file keeps the partition's minimum sequence low.
    for dangling in [false, true] {
        let mut t = Fixture::new();
        let old = file(t.path(), "old.parquet", "eu");
        let a = file(t.path(), "a.parquet", "eu");
        t.append(old.clone());
        t.append(a.clone());
        t.delete(pos_delete(t.path(), "a-del.parquet", "eu", &a));
        let start = t.md.clone();
        let c = file(t.path(), "c.parquet", "eu");
        let mut rw = rewrite(&start, vec![a.clone()], vec![c]);
        rw.remove_dangling_deletes = dangling;
        let (next, _) = rewrite_files(&t.md, rw, 1).unwrap();
        t.set(next);
        let s = t.md.current_snapshot().unwrap();
        let removed = s.summary.get("removed-delete-files");
        assert_eq!(removed, dangling.then_some("1"), "dangling={dangling}: {:?}", s.summary);
    }
}
