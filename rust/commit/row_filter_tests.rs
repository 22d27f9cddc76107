//! Tests of the row-filter scope: metadata-only classification for overwrite / delete, and
//! conflict validation that only counts concurrent files the filter may match.

use std::collections::{BTreeMap, BTreeSet};

use crate::commit::{
    merge_append, overwrite_files, plan_row_removal, validate, ConflictScope, FileMatch, RowFilter,
    Validation,
};
use crate::error::ErrorKind;
use crate::expr::{bind, parse_filter, BoundExpr};
use crate::manifest::{DataContentType, DataFile};
use crate::spec::{Literal, TableMetadata};

fn table(dir: &std::path::Path) -> TableMetadata {
    crate::writer::test_tables::table(dir, &[], 2)
}

/// A data file in `region` whose `id` column spans `lo..=hi` (no nulls).
fn file(dir: &std::path::Path, name: &str, region: &str, lo: i64, hi: i64) -> DataFile {
    let rows = hi - lo + 1;
    let mut f = DataFile::new_data(format!("{}/data/{name}", dir.display()), rows, 100 * rows);
    f.partition = vec![Some(Literal::String(region.into()))];
    f.value_counts.insert(1, rows);
    f.null_value_counts.insert(1, 0);
    f.lower_bounds.insert(1, Literal::Long(lo).to_bytes());
    f.upper_bounds.insert(1, Literal::Long(hi).to_bytes());
    f
}

fn filter(md: &TableMetadata, sql: &str) -> BoundExpr {
    bind(&parse_filter(sql).unwrap(), md.current_schema(), true).unwrap()
}

fn row_filter(md: &TableMetadata, sql: &str) -> RowFilter {
    RowFilter::new(filter(md, sql), md.partition_specs()).unwrap()
}

fn no_props() -> BTreeMap<String, String> {
    BTreeMap::new()
}

#[test]
fn classifies_files_from_partition_and_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let md = table(dir.path());
    let d = dir.path();
    let f = row_filter(&md, "id < 5");
    assert_eq!(f.classify(&file(d, "a", "eu", 1, 3)), FileMatch::All, "upper bound proves every row");
    assert_eq!(f.classify(&file(d, "b", "eu", 10, 20)), FileMatch::None, "lower bound excludes");
    assert_eq!(f.classify(&file(d, "c", "eu", 3, 8)), FileMatch::Some);
    let mut no_stats = file(d, "d", "eu", 3, 8);
    no_stats.lower_bounds.clear();
    no_stats.upper_bounds.clear();
    assert_eq!(f.classify(&no_stats), FileMatch::Some, "no stats: must read");

    let f = row_filter(&md, "region = 'eu'");
    assert_eq!(f.classify(&file(d, "a", "eu", 1, 3)), FileMatch::All, "strict partition projection");
    assert_eq!(f.classify(&file(d, "b", "us", 1, 3)), FileMatch::None, "inclusive partition projection");

    let f = row_filter(&md, "region = 'eu' and id >= 10");
    assert_eq!(f.classify(&file(d, "a", "eu", 1, 3)), FileMatch::None);
    assert_eq!(f.classify(&file(d, "b", "eu", 10, 20)), FileMatch::All, "partition and metrics together");
    assert_eq!(f.classify(&file(d, "c", "eu", 5, 20)), FileMatch::Some);
    assert_eq!(f.classify(&file(d, "d", "us", 10, 20)), FileMatch::None);

    let f = row_filter(&md, "region <> 'eu'");
    let mut null_region = file(d, "n", "eu", 1, 3);
    null_region.partition = vec![None];
    // SQL: a null region does not match `<> 'eu'`; nothing is proven, the file is not dropped.
    assert_ne!(f.classify(&null_region), FileMatch::All);
}

#[test]
fn plan_row_removal_drops_whole_files_and_returns_only_partial_ones() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let md = table(d);
    let (md, _) = merge_append(
        &md,
        vec![
            file(d, "all.parquet", "eu", 1, 3),
            file(d, "none.parquet", "eu", 10, 20),
            file(d, "some.parquet", "us", 3, 8),
        ],
        &no_props(),
        1,
    )
    .unwrap();
    let (whole, partial) = plan_row_removal(&md, filter(&md, "id < 5")).unwrap();
    assert_eq!(
        whole.iter().map(|f| f.file_path.clone()).collect::<Vec<_>>(),
        vec![format!("{}/data/all.parquet", d.display())]
    );
    assert_eq!(partial.len(), 1);
    assert!(partial[0].file.file_path.ends_with("some.parquet"));
    assert!(!partial[0].file.upper_bounds.is_empty(), "tasks keep their stats");
    assert_eq!(partial[0].residual, None, "a rewrite reads every row, not only the matching ones");

    let (whole, partial) = plan_row_removal(&md, BoundExpr::True).unwrap();
    assert_eq!((whole.len(), partial.len()), (3, 0));
    let (whole, partial) = plan_row_removal(&md, BoundExpr::False).unwrap();
    assert_eq!((whole.len(), partial.len()), (0, 0));
}

#[test]
fn filter_scope_conflicts_only_with_files_that_may_match() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let md = table(d);
    let (md, _) = merge_append(&md, vec![file(d, "a.parquet", "eu", 1, 3)], &no_props(), 1).unwrap();
    let start = md.current_snapshot_id();
    let (md2, _) = merge_append(&md, vec![file(d, "b.parquet", "us", 50, 60)], &no_props(), 2).unwrap();
    let winner = md2.current_snapshot_id().unwrap().to_string();
    let v = |sql: &str| Validation {
        start_snapshot_id: start,
        data: ConflictScope::Filter(row_filter(&md2, sql).shared()),
        deletes: ConflictScope::Filter(row_filter(&md2, sql).shared()),
        ..Default::default()
    };
    validate(&md2, &v("region = 'eu'")).unwrap();
    validate(&md2, &v("id < 10")).unwrap();
    for sql in ["region = 'us'", "id > 55", "region = 'us' or id = 2"] {
        let err = validate(&md2, &v(sql)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::CommitConflict, "{sql}");
        assert!(err.to_string().contains(&winner), "{sql}: {err}");
    }

    // A delete file may match by its partition (its stats are not on the filter's columns).
    let mut del = DataFile::new_data(format!("{}/data/del.parquet", d.display()), 1, 10);
    del.content = DataContentType::PositionDeletes;
    del.partition = vec![Some(Literal::String("us".into()))];
    assert!(!row_filter(&md2, "region = 'eu'").may_match(&del));
    assert!(row_filter(&md2, "region = 'us' and id = 3").may_match(&del));

    // A concurrent removal of a data file the filter may match conflicts.
    let md3 = md2.clone();
    let a = format!("{}/data/a.parquet", d.display());
    let (md4, _) = overwrite_files(&md3, vec![], BTreeSet::from([a]), &no_props(), 4).unwrap();
    let start3 = md3.current_snapshot_id();
    let removed_in = |sql: &str| Validation {
        start_snapshot_id: start3,
        deletes: ConflictScope::Filter(row_filter(&md4, sql).shared()),
        ..Default::default()
    };
    validate(&md4, &removed_in("region = 'us'")).unwrap();
    assert_eq!(validate(&md4, &removed_in("id = 2")).unwrap_err().kind(), ErrorKind::CommitConflict);
}
