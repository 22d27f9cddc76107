//! Tests of the position delete rewrite: planning rules, dangling positions, the commit.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::*;
use crate::commit::{fast_append, rewrite_position_deletes, row_delta, RewritePositionDeletes, RowDelta};
use crate::error::ErrorKind;
use crate::spec::Literal;

struct Fixture {
    dir: tempfile::TempDir,
    md: TableMetadata,
    n: i64,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let md = crate::writer::test_tables::table(dir.path(), &[], 2);
        Fixture { dir, md, n: 0 }
    }

    fn set(&mut self, next: TableMetadata) {
        self.n += 1;
        self.md =
            next.with_metadata_location(format!("{}/metadata/v{}.json", self.dir.path().display(), self.n));
    }

    fn data(&mut self, name: &str) -> DataFile {
        let mut f = DataFile::new_data(format!("{}/data/{name}", self.dir.path().display()), 100, 1000);
        f.partition = vec![Some(Literal::String("a".into()))];
        let (next, _) =
            fast_append(&self.md, vec![f.clone()], &BTreeMap::new(), 1_700_000_000_000 + self.n).unwrap();
        self.set(next);
        f
    }

    /// One DELETE: a position delete file of `positions` in `target`.
    fn delete(&mut self, target: &DataFile, positions: &[i64]) {
        let mut w =
            PositionDeleteWriter::try_new(Arc::new(self.md.clone()), &format!("w{}", self.n), 1).unwrap();
        w.delete(target, positions).unwrap();
        let files = w.close().unwrap();
        let delta = RowDelta { added_deletes: files, ..Default::default() };
        let (next, _) = row_delta(&self.md, delta, 1_700_000_000_000 + self.n).unwrap();
        self.set(next);
    }

    fn live_deletes(&self) -> Vec<LiveDeleteFile> {
        live_position_deletes(&self.md, None).unwrap()
    }
}

#[test]
fn rewrites_a_partitions_small_delete_files_dropping_dangling_positions() {
    let mut fx = Fixture::new();
    let (f1, f2, f3) = (fx.data("f1.parquet"), fx.data("f2.parquet"), fx.data("f3.parquet"));
    fx.delete(&f1, &[1, 2]);
    fx.delete(&f1, &[5]);
    fx.delete(&f2, &[7]);
    fx.delete(&f3, &[0]);
    fx.delete(&f3, &[9]);
    // f3 goes away whole (an overwrite): its positions dangle.
    let delta = RowDelta { removed_data_paths: [f3.file_path.clone()].into(), ..Default::default() };
    let (next, _) = row_delta(&fx.md, delta, 1_700_000_100_000).unwrap();
    fx.set(next);

    let plan = plan_rewrite_position_deletes(&fx.md, None, &DeleteRewriteOptions::default()).unwrap();
    assert_eq!(plan.groups.len(), 1);
    let group = &plan.groups[0];
    assert_eq!(group.files.len(), 5);
    let max_seq = fx.live_deletes().iter().map(|f| f.data_sequence_number).max().unwrap();
    assert_eq!(group.max_data_sequence_number, max_seq);

    // Five files are below min-input-files: nothing to do.
    let six = DeleteRewriteOptions { min_input_files: Some(6), ..Default::default() };
    assert!(plan_rewrite_position_deletes(&fx.md, None, &six).unwrap().groups.is_empty());
    // At most two files per group: 2 + 2 + 1, the last alone and too few.
    let two = DeleteRewriteOptions {
        max_file_group_input_files: Some(2),
        min_input_files: Some(2),
        ..Default::default()
    };
    let sizes: Vec<usize> = plan_rewrite_position_deletes(&fx.md, None, &two)
        .unwrap()
        .groups
        .iter()
        .map(|g| g.files.len())
        .collect();
    assert_eq!(sizes, vec![2, 2]);

    let live = live_data_files(&fx.md).unwrap();
    let md = Arc::new(fx.md.clone());
    let out = rewrite_delete_group(md, group, &live, "rw", 7).unwrap();
    assert_eq!(out.positions_kept, 4);
    assert_eq!(out.positions_dropped, 2);
    // File granularity: one new delete file per live data file referenced.
    let referenced: BTreeSet<Option<String>> =
        out.added.iter().map(|f| f.referenced_data_file.clone()).collect();
    assert_eq!(referenced, [Some(f1.file_path.clone()), Some(f2.file_path.clone())].into());

    let rw = RewritePositionDeletes {
        start_snapshot_id: plan.snapshot_id,
        rewritten: group.files.iter().map(|f| f.file.clone()).collect(),
        added: out.added.iter().map(|f| (f.clone(), group.max_data_sequence_number)).collect(),
        summary_properties: BTreeMap::new(),
    };
    let (next, _) = rewrite_position_deletes(&fx.md, rw.clone(), 1_700_000_200_000).unwrap();
    fx.set(next);
    let after = fx.live_deletes();
    assert_eq!(after.len(), 2);
    assert!(after.iter().all(|f| f.data_sequence_number == max_seq));
    let snap = fx.md.current_snapshot().unwrap();
    assert_eq!(snap.summary.operation, crate::spec::Operation::Replace);
    assert_eq!(snap.summary.other["removed-delete-files"], "5");
    assert_eq!(snap.summary.other["added-delete-files"], "2");
    // Every remaining position still applies to its data file.
    let tasks = crate::scan::plan_files(&fx.md, None).unwrap();
    for t in tasks {
        let n = t.deletes.len();
        let expect = usize::from(t.file.file_path == f1.file_path || t.file.file_path == f2.file_path);
        assert_eq!(n, expect, "{}", t.file.file_path);
    }

    // The same rewrite again: its files are gone, a conflict.
    let err = rewrite_position_deletes(&fx.md, rw, 1_700_000_300_000).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::CommitConflict, "{err}");
}

#[test]
fn bad_options_are_refused_like_java() {
    let fx = Fixture::new();
    let bad = DeleteRewriteOptions {
        target_file_size_bytes: Some(100),
        min_file_size_bytes: Some(200),
        ..Default::default()
    };
    let err = plan_rewrite_position_deletes(&fx.md, None, &bad).unwrap_err();
    assert!(err.to_string().contains("must be > 'min-file-size-bytes'"), "{err}");
    let zero = DeleteRewriteOptions { min_input_files: Some(0), ..Default::default() };
    assert!(plan_rewrite_position_deletes(&fx.md, None, &zero).is_err());
    let no_files = DeleteRewriteOptions { max_file_group_input_files: Some(0), ..Default::default() };
    let err = plan_rewrite_position_deletes(&fx.md, None, &no_files).unwrap_err();
    assert!(err.to_string().contains("'max-file-group-input-files' is set to 0"), "{err}");
}
