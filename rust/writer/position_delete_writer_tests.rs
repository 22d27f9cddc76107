//! Position-delete writer: file layout, metrics, granularity, and a round trip through the
//! scan planner and reader after a row delta commit.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use arrow_array::Int64Array;
use parquet::file::reader::{FileReader, SerializedFileReader};

use super::*;
use crate::commit::{merge_append, row_delta, RowDelta};
use crate::scan::plan_files;
use crate::spec::Literal;
use crate::writer::test_tables::batch;
use crate::writer::write_data_files;

fn table(dir: &std::path::Path, props: &[(&str, &str)]) -> TableMetadata {
    crate::writer::test_tables::table(dir, props, 2)
}

/// A table with two data files (eu: ids 0..100, us: ids 100..150), committed.
fn table_with_data(dir: &std::path::Path, props: &[(&str, &str)]) -> TableMetadata {
    let md = table(dir, props);
    let files = write_data_files(
        &md,
        vec![Ok(batch(0..100, "eu")), Ok(batch(100..150, "us"))].into_iter(),
        "w0000000",
        0,
    )
    .unwrap();
    assert_eq!(files.len(), 2);
    let (md, _) = merge_append(&md, files, &BTreeMap::new(), 1).unwrap();
    md.with_metadata_location(format!("{}/metadata/v1.metadata.json", dir.display()))
}

fn read_ids(md: &TableMetadata) -> Vec<i64> {
    let projected =
        Schema::new(0, vec![NestedField::required(1, "id", PrimitiveType::Long.into())], vec![]).unwrap();
    let mut out = Vec::new();
    for task in plan_files(md, None).unwrap() {
        for b in crate::arrow::read_task(&task, &projected, Default::default()).unwrap() {
            let b = b.unwrap();
            out.extend(b.column(0).as_any().downcast_ref::<Int64Array>().unwrap().values().iter().copied());
        }
    }
    out.sort_unstable();
    out
}

/// The tasks of a scan of `md` filtered by `sql` (their residuals are the filter).
fn plan_filtered(md: &TableMetadata, sql: &str) -> Vec<crate::scan::FileScanTask> {
    let expr =
        crate::expr::bind(&crate::expr::parse_filter(sql).unwrap(), md.current_schema(), true).unwrap();
    let filter = crate::scan::BoundFilter::new(expr, md.partition_specs()).unwrap();
    let options = crate::scan::ScanOptions { filter: Arc::new(filter), ..Default::default() };
    crate::scan::plan_scan(md, &options, None).unwrap().tasks.into_vec()
}

fn data_files(md: &TableMetadata) -> Vec<DataFile> {
    let mut v: Vec<DataFile> = plan_files(md, None).unwrap().into_iter().map(|t| t.file).collect();
    v.sort_by(|a, b| a.file_path.cmp(&b.file_path));
    v
}

#[test]
fn file_granularity_writes_one_sorted_file_per_data_file_with_full_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let md = Arc::new(table_with_data(dir.path(), &[]));
    let files = data_files(&md);
    let mut w = PositionDeleteWriter::try_new(md.clone(), "w1111111", 3).unwrap();
    w.delete(&files[0], &[7, 3, 3, 50]).unwrap();
    w.delete(&files[1], &[0]).unwrap();
    let out = w.close().unwrap();
    assert_eq!(out.len(), 2);
    let first = out.iter().find(|f| f.referenced_data_file.as_deref() == Some(&files[0].file_path)).unwrap();
    assert_eq!(first.content, DataContentType::PositionDeletes);
    assert_eq!(first.record_count, 3, "duplicates dropped");
    assert_eq!(first.partition, files[0].partition);
    assert!(first.file_path.contains("/data/region=eu/00003-w1111111-"), "{}", first.file_path);
    assert!(first.file_path.ends_with("-deletes.parquet"));
    assert_eq!(first.lower_bounds[&DELETE_FILE_POS_FIELD_ID], 3i64.to_le_bytes().to_vec());
    assert_eq!(first.upper_bounds[&DELETE_FILE_POS_FIELD_ID], 50i64.to_le_bytes().to_vec());
    // Full metrics: the path bound is the whole path, not truncated to 16 characters.
    assert_eq!(first.lower_bounds[&DELETE_FILE_PATH_FIELD_ID], files[0].file_path.as_bytes());
    assert_eq!(first.value_counts[&DELETE_FILE_PATH_FIELD_ID], 3);

    // Rows sorted by position, with the reserved field ids in the Parquet schema.
    let reader = SerializedFileReader::new(std::fs::File::open(&first.file_path).unwrap()).unwrap();
    let fields = reader.metadata().file_metadata().schema_descr().root_schema().get_fields().to_vec();
    let ids: Vec<i32> = fields.iter().map(|f| f.get_basic_info().id()).collect();
    assert_eq!(ids, vec![DELETE_FILE_PATH_FIELD_ID, DELETE_FILE_POS_FIELD_ID]);
    let rows =
        crate::arrow::read_parquet(&first.file_path, &position_delete_schema().unwrap(), 1024).unwrap();
    let pos: Vec<i64> = rows
        .map(|b| b.unwrap())
        .flat_map(|b| b.column(1).as_any().downcast_ref::<Int64Array>().unwrap().values().to_vec())
        .collect();
    assert_eq!(pos, vec![3, 7, 50]);
}

#[test]
fn partition_granularity_covers_several_files_without_path_and_pos_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let md = table(dir.path(), &[("write.delete.granularity", "partition")]);
    let files = write_data_files(
        &md,
        vec![Ok(batch(0..10, "eu")), Ok(batch(10..20, "eu"))].into_iter(),
        "w0000000",
        0,
    )
    .unwrap();
    let mut second = files[0].clone();
    second.file_path = second.file_path.replace(".parquet", "-b.parquet");
    let md = Arc::new(md);
    let mut w = PositionDeleteWriter::try_new(md, "w2222222", 0).unwrap();
    w.delete(&files[0], &[1, 2]).unwrap();
    w.delete(&second, &[5]).unwrap();
    let out = w.close().unwrap();
    assert_eq!(out.len(), 1);
    let f = &out[0];
    assert_eq!(f.record_count, 3);
    assert_eq!(f.referenced_data_file, None);
    assert!(!f.lower_bounds.contains_key(&DELETE_FILE_PATH_FIELD_ID));
    assert!(!f.value_counts.contains_key(&DELETE_FILE_POS_FIELD_ID));
    assert_eq!(f.partition, vec![Some(Literal::String("eu".into()))]);
}

#[test]
fn bad_input_is_refused_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let md = Arc::new(table_with_data(dir.path(), &[("write.delete.granularity", "row")]));
    let err = PositionDeleteWriter::try_new(md.clone(), "w3333333", 0).unwrap_err();
    assert!(err.to_string().contains("'row'"), "{err}");
    let dir2 = tempfile::tempdir().unwrap();
    let md = Arc::new(table_with_data(dir2.path(), &[]));
    let files = data_files(&md);
    let mut w = PositionDeleteWriter::try_new(md, "w3333333", 0).unwrap();
    let err = w.delete(&files[0], &[1, -4]).unwrap_err();
    assert!(err.to_string().contains("-4") && err.to_string().contains(&files[0].file_path), "{err}");
}

#[test]
fn delete_rows_then_row_delta_removes_exactly_the_matching_rows() {
    let dir = tempfile::tempdir().unwrap();
    let md = table_with_data(dir.path(), &[]);
    let before_seq = md.current_snapshot().unwrap().sequence_number;
    let tasks = plan_filtered(&md, "id >= 40 and id < 120");
    let md = Arc::new(md);
    let res = crate::writer::delete_rows(md.clone(), &tasks, "w4444444", 0).unwrap();
    assert_eq!(res.deleted_rows, 80);
    assert_eq!(res.delete_files.len(), 2);
    let delta = RowDelta { added_deletes: res.delete_files, ..Default::default() };
    let (md2, _) = row_delta(&md, delta, 2).unwrap();
    let md2 = md2.with_metadata_location(format!("{}/metadata/v2.metadata.json", dir.path().display()));
    let s = md2.current_snapshot().unwrap();
    assert_eq!(s.summary.operation, crate::spec::Operation::Delete);
    assert_eq!(s.sequence_number, before_seq + 1);
    assert_eq!(s.summary.other["added-position-delete-files"], "2");
    assert_eq!(s.summary.other["added-position-deletes"], "80");
    assert_eq!(s.summary.other["total-position-deletes"], "80");
    assert_eq!(s.summary.other["total-delete-files"], "2");
    assert_eq!(s.summary.other["total-records"], "150");
    let ids = read_ids(&md2);
    assert_eq!(ids, (0..40).chain(120..150).collect::<Vec<_>>());

    // Deleting an overlapping range again deletes only the rows still there.
    let tasks = plan_filtered(&md2, "id >= 30 and id < 50");
    let res = crate::writer::delete_rows(Arc::new(md2.clone()), &tasks, "w5555555", 0).unwrap();
    assert_eq!(res.deleted_rows, 10);
}

#[test]
fn a_second_delete_merges_the_data_files_earlier_deletes_and_removes_them() {
    let dir = tempfile::tempdir().unwrap();
    let md = table_with_data(dir.path(), &[]);
    let tasks = plan_filtered(&md, "id < 10");
    let res = crate::writer::delete_rows(Arc::new(md.clone()), &tasks, "w6666666", 0).unwrap();
    assert!(res.replaced_deletes.is_empty());
    let first = res.delete_files[0].file_path.clone();
    let delta = RowDelta { added_deletes: res.delete_files, ..Default::default() };
    let (md, _) = row_delta(&md, delta, 2).unwrap();
    let md = md.with_metadata_location(format!("{}/metadata/v2.metadata.json", dir.path().display()));

    let tasks = plan_filtered(&md, "id >= 5 and id < 15");
    let res = crate::writer::delete_rows(Arc::new(md.clone()), &tasks, "w7777777", 0).unwrap();
    assert_eq!(res.deleted_rows, 5);
    assert_eq!(
        res.replaced_deletes.iter().map(|f| f.file_path.clone()).collect::<Vec<_>>(),
        vec![first.clone()]
    );
    assert_eq!(res.delete_files[0].record_count, 15, "10 earlier positions merged with 5 new ones");
    let delta = RowDelta {
        added_deletes: res.delete_files,
        removed_delete_paths: BTreeSet::from([first.clone()]),
        ..Default::default()
    };
    let (md2, _) = row_delta(&md, delta.clone(), 3).unwrap();
    let s = &md2.current_snapshot().unwrap().summary.other;
    assert_eq!(s["removed-position-delete-files"], "1");
    assert_eq!(s["total-position-deletes"], "15");
    assert_eq!(s["total-delete-files"], "1");
    let md2 = md2.with_metadata_location(format!("{}/metadata/v3.metadata.json", dir.path().display()));
    assert_eq!(read_ids(&md2), (15..150).collect::<Vec<_>>());
    let live: Vec<String> = plan_files(&md2, None)
        .unwrap()
        .into_iter()
        .flat_map(|t| t.deletes)
        .map(|d| d.file.file_path)
        .collect();
    assert!(!live.contains(&first), "{live:?}");

    // Removing a delete file that is no longer live is a commit conflict.
    let err = row_delta(&md2, delta, 4).unwrap_err();
    assert_eq!(err.kind(), crate::error::ErrorKind::CommitConflict, "{err}");
}
