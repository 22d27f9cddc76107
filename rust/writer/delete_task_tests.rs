//! Delete tasks on format v3: deletion vectors instead of Parquet, earlier deletes of a data
//! file (its vector, or the v2 position deletes an upgrade left) merged into its new vector,
//! and the replaced ones listed; v2 tables keep writing Parquet.

use std::collections::{BTreeMap, BTreeSet};

use arrow_array::{Int64Array, RecordBatch, StringArray};

use super::*;
use crate::commit::{merge_append, row_delta, RowDelta};
use crate::puffin::{load_deletion_vector, PuffinFile};
use crate::scan::DeleteFileRef;
use crate::writer::test_tables::{batch, table};
use crate::writer::{write_data_files, PositionDeleteWriter};

/// A v2 table with two committed data files (eu: ids 0..100, us: ids 100..150; position ==
/// id - first id).
fn v2_table(dir: &std::path::Path) -> TableMetadata {
    let md = table(dir, &[], 2);
    let files = write_data_files(
        &md,
        vec![Ok(batch(0..100, "eu")), Ok(batch(100..150, "us"))].into_iter(),
        "w0000000",
        0,
    )
    .unwrap();
    let (md, _) = merge_append(&md, files, &BTreeMap::new(), 1).unwrap();
    md.with_metadata_location(format!("{}/metadata/v1.metadata.json", dir.display()))
}

/// `md` upgraded to format v3 (`ALTER TABLE ... SET TBLPROPERTIES ('format-version'='3')`).
fn upgrade(md: &TableMetadata) -> TableMetadata {
    let v3 = md.with_properties([("format-version".to_string(), "3".to_string())], []).unwrap();
    assert_eq!(v3.format_version(), 3);
    v3.with_metadata_location(format!("{}.v3", md.metadata_location().unwrap()))
}

/// The tasks of a scan of `md` filtered by `sql`, by data file path.
fn plan_filtered(md: &TableMetadata, sql: &str) -> Vec<FileScanTask> {
    let expr =
        crate::expr::bind(&crate::expr::parse_filter(sql).unwrap(), md.current_schema(), true).unwrap();
    let filter = crate::scan::BoundFilter::new(expr, md.partition_specs()).unwrap();
    let options = crate::scan::ScanOptions { filter: Arc::new(filter), ..Default::default() };
    let mut tasks = crate::scan::plan_scan(md, &options, None).unwrap().tasks.into_vec();
    tasks.sort_by(|a, b| a.file.file_path.cmp(&b.file.file_path));
    tasks
}

/// The positions of a deletion vector `DataFile`, read through the Puffin reader.
fn dv_positions(dv: &DataFile) -> Vec<u64> {
    assert_eq!(dv.file_format, FileFormat::Puffin);
    let (offset, len) = (dv.content_offset.unwrap() as u64, dv.content_size_in_bytes.unwrap() as u64);
    let v = load_deletion_vector(&dv.file_path, offset, len, Some(dv.file_size_in_bytes as u64)).unwrap();
    assert_eq!(v.cardinality(), dv.record_count as u64);
    v.iter().collect()
}

fn dv_for<'a>(files: &'a [DataFile], data: &DataFile) -> &'a DataFile {
    files.iter().find(|f| f.referenced_data_file.as_deref() == Some(&data.file_path)).unwrap()
}

/// Attaches `dv` to its data file's task as the planner would (a DV committed after it).
fn attach(tasks: &mut [FileScanTask], dv: &DataFile) {
    for t in tasks.iter_mut().filter(|t| dv.referenced_data_file.as_deref() == Some(&t.file.file_path)) {
        let seq = t.data_sequence_number + 1;
        t.deletes.push(DeleteFileRef { file: dv.clone(), data_sequence_number: seq });
    }
}

fn paths(files: &[DataFile]) -> BTreeSet<(String, Option<String>)> {
    files.iter().map(|f| (f.file_path.clone(), f.referenced_data_file.clone())).collect()
}

#[test]
fn v3_delete_writes_one_puffin_file_with_a_vector_per_data_file() {
    let dir = tempfile::tempdir().unwrap();
    let md = Arc::new(upgrade(&v2_table(dir.path())));
    let tasks = plan_filtered(&md, "id >= 40 and id < 120");
    let (eu, us) = (&tasks[0].file, &tasks[1].file);
    let res = delete_rows(md.clone(), &tasks, "wdv33333", 2).unwrap();
    assert_eq!(res.deleted_rows, 80);
    assert!(res.replaced_deletes.is_empty());
    assert_eq!(res.delete_files.len(), 2);
    let puffin = format!("{}/data/00002-wdv33333-00001-deletes.puffin", dir.path().display());
    assert!(res.delete_files.iter().all(|f| f.file_path == puffin), "{:?}", paths(&res.delete_files));
    assert_eq!(PuffinFile::open(&puffin, None).unwrap().metadata().blobs.len(), 2);
    assert_eq!(dv_positions(dv_for(&res.delete_files, eu)), (40..100).collect::<Vec<_>>());
    assert_eq!(dv_positions(dv_for(&res.delete_files, us)), (0..20).collect::<Vec<_>>());
    assert_eq!(dv_for(&res.delete_files, us).partition, us.partition);

    // The UPDATE / MERGE path writes vectors too.
    let rows = RecordBatch::try_from_iter([
        ("file_path", Arc::new(StringArray::from(vec![us.file_path.as_str(); 2])) as _),
        ("pos", Arc::new(Int64Array::from(vec![7, 3])) as _),
    ])
    .unwrap();
    let res = write_position_deletes(md, &tasks, std::iter::once(Ok(rows)), "wdv44444", 0).unwrap();
    assert_eq!((res.deleted_rows, res.delete_files.len()), (2, 1));
    assert!(res.delete_files[0].file_path.ends_with("/data/00000-wdv44444-00001-deletes.puffin"));
    assert_eq!(dv_positions(&res.delete_files[0]), vec![3, 7]);
}

#[test]
fn a_second_v3_delete_merges_the_existing_vector_and_replaces_it() {
    let dir = tempfile::tempdir().unwrap();
    let md = Arc::new(upgrade(&v2_table(dir.path())));
    let first = delete_rows(md.clone(), &plan_filtered(&md, "id >= 40 and id < 120"), "wdv55555", 0).unwrap();

    // Second delete: eu gets 30..40 (90..100 already gone), us 120..130 (100..120 gone).
    let mut tasks = plan_filtered(&md, "id >= 30 and id < 130");
    for dv in &first.delete_files {
        attach(&mut tasks, dv);
    }
    let (eu, us) = (tasks[0].file.clone(), tasks[1].file.clone());
    let res = delete_rows(md.clone(), &tasks, "wdv66666", 0).unwrap();
    assert_eq!(res.deleted_rows, 20, "rows the first vectors deleted are not deleted again");
    assert_eq!(dv_positions(dv_for(&res.delete_files, &eu)), (30..100).collect::<Vec<_>>());
    assert_eq!(dv_positions(dv_for(&res.delete_files, &us)), (0..30).collect::<Vec<_>>());
    assert_eq!(paths(&res.replaced_deletes), paths(&first.delete_files));

    // A data file the operation touches no row of keeps its vector (not replaced).
    let mut tasks = plan_filtered(&md, "id >= 140");
    for dv in &first.delete_files {
        attach(&mut tasks, dv);
    }
    let res = delete_rows(md, &tasks, "wdv77777", 0).unwrap();
    assert_eq!(dv_positions(&res.delete_files[0]), (0..20).chain(40..50).collect::<Vec<_>>());
    assert_eq!(paths(&res.replaced_deletes), paths(&[dv_for(&first.delete_files, &us).clone()]));
}

#[test]
fn a_v3_delete_merges_the_v2_position_deletes_an_upgrade_left() {
    let dir = tempfile::tempdir().unwrap();
    let md = v2_table(dir.path());
    // v2: a file-scoped delete of eu ids 0..10 and a partition-scoped one of us positions 1, 2
    // (covering another data file of the partition too).
    let scoped = delete_rows(Arc::new(md.clone()), &plan_filtered(&md, "id < 10"), "wdv88888", 0).unwrap();
    assert_eq!(scoped.delete_files[0].file_format, FileFormat::Parquet, "v2 still writes Parquet");
    assert!(scoped.delete_files[0].file_path.ends_with("-deletes.parquet"));
    let us = plan_filtered(&md, "id >= 100")[0].file.clone();
    let mut other = us.clone();
    other.file_path = other.file_path.replace(".parquet", "-other.parquet");
    let mut w = PositionDeleteWriter::try_new(Arc::new(md.clone()), "wdv88888", 1)
        .unwrap()
        .with_granularity(DeleteGranularity::Partition);
    w.delete(&us, &[1, 2]).unwrap();
    w.delete(&other, &[5]).unwrap();
    let partition_scoped = w.close().unwrap();
    assert_eq!(partition_scoped[0].referenced_data_file, None);
    let added = [scoped.delete_files.clone(), partition_scoped.clone()].concat();
    let (md, _) = row_delta(&md, RowDelta { added_deletes: added, ..Default::default() }, 2).unwrap();
    let md =
        upgrade(&md.with_metadata_location(format!("{}/metadata/v2.metadata.json", dir.path().display())));

    let tasks = plan_filtered(&md, "(id >= 5 and id < 15) or (id >= 100 and id < 104)");
    assert_eq!(tasks.iter().map(|t| t.deletes.len()).collect::<Vec<_>>(), vec![1, 1]);
    let eu = tasks[0].file.clone();
    let res = delete_rows(Arc::new(md), &tasks, "wdv99999", 0).unwrap();
    assert_eq!(res.deleted_rows, 5 + 2);
    assert_eq!(dv_positions(dv_for(&res.delete_files, &eu)), (0..15).collect::<Vec<_>>());
    assert_eq!(dv_positions(dv_for(&res.delete_files, &us)), vec![0, 1, 2, 3]);
    // The file-scoped Parquet file is replaced; the partition-scoped one covers `other` too.
    assert_eq!(paths(&res.replaced_deletes), paths(&scoped.delete_files));
}
