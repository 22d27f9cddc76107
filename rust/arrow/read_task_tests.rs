//! Tests of the task reader on files written here: byte ranges, position and equality
//! deletes (sequence-number rules, nulls, several files), `_file`/`_pos`, limits, errors.

use std::fs::File;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;

use super::*;
use crate::manifest::{DataContentType, DataFile};
use crate::scan::DeleteFileRef;
use crate::spec::PrimitiveType;

fn write(path: &str, schema: &Schema, cols: Vec<ArrayRef>, rg_rows: usize) -> i64 {
    let arrow = Arc::new(schema_to_arrow(schema).unwrap());
    let batch = RecordBatch::try_new(arrow.clone(), cols).unwrap();
    let props = WriterProperties::builder().set_max_row_group_row_count(Some(rg_rows)).build();
    let mut w = ArrowWriter::try_new(File::create(path).unwrap(), arrow, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    std::fs::metadata(path).unwrap().len() as i64
}

fn data_schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::optional(1, "id", PrimitiveType::Long.into()),
            NestedField::optional(2, "name", PrimitiveType::String.into()),
            NestedField::optional(3, "k", PrimitiveType::Int.into()),
        ],
        vec![],
    )
    .unwrap()
}

struct Fixture {
    _dir: tempfile::TempDir,
    dir: String,
    data: DataFile,
}

/// 10 rows, ids 0..9 (id 9 null), names "n0".., k = id % 3; row groups of 4 rows.
fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap().to_string();
    let path = format!("{d}/data.parquet");
    let ids: Int64Array = (0..10).map(|i| if i == 9 { None } else { Some(i) }).collect();
    let names = StringArray::from_iter_values((0..10).map(|i| format!("n{i}")));
    let ks = Int32Array::from_iter_values((0..10).map(|i| i % 3));
    let size = write(&path, &data_schema(), vec![Arc::new(ids), Arc::new(names), Arc::new(ks)], 4);
    let mut data = DataFile::new_data(path, 10, size);
    data.content = DataContentType::Data;
    Fixture { _dir: dir, dir: d, data }
}

fn pos_delete(dir: &str, name: &str, rows: &[(&str, i64)], seq: i64) -> DeleteFileRef {
    let schema = Schema::new(
        0,
        vec![
            NestedField::required(2147483546, "file_path", PrimitiveType::String.into()),
            NestedField::required(2147483545, "pos", PrimitiveType::Long.into()),
        ],
        vec![],
    )
    .unwrap();
    let path = format!("{dir}/{name}");
    let size = write(
        &path,
        &schema,
        vec![
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.0))),
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.1))),
        ],
        1000,
    );
    let mut f = DataFile::new_data(path, rows.len() as i64, size);
    f.content = DataContentType::PositionDeletes;
    DeleteFileRef { file: f, data_sequence_number: seq }
}

fn eq_delete(
    dir: &str,
    name: &str,
    fields: Vec<NestedField>,
    cols: Vec<ArrayRef>,
    seq: i64,
) -> DeleteFileRef {
    let ids: Vec<i32> = fields.iter().map(|f| f.id).collect();
    let schema = Schema::new(0, fields, vec![]).unwrap();
    let path = format!("{dir}/{name}");
    let rows = cols[0].len() as i64;
    let size = write(&path, &schema, cols, 1000);
    let mut f = DataFile::new_data(path, rows, size);
    f.content = DataContentType::EqualityDeletes;
    f.equality_ids = Some(ids);
    DeleteFileRef { file: f, data_sequence_number: seq }
}

fn ids_of(task: &FileScanTask, projected: &Schema, opts: ReadOptions) -> Vec<Option<i64>> {
    let r = read_task(task, projected, opts.clone()).unwrap();
    let mut out = vec![];
    for b in r {
        let b = b.unwrap();
        assert!(b.num_rows() <= opts.batch_size);
        let i = b.schema().index_of("id").unwrap();
        out.extend(b.column(i).as_primitive::<Int64Type>().iter());
    }
    out
}

fn some(v: &[i64]) -> Vec<Option<i64>> {
    v.iter().map(|&x| Some(x)).collect()
}

#[test]
fn position_deletes_skip_rows_and_pos_column_matches() {
    let fx = fixture();
    let p = fx.data.file_path.clone();
    let mut task = FileScanTask::whole_file(fx.data.clone(), 5);
    task.deletes.push(pos_delete(
        &fx.dir,
        "pd1.parquet",
        &[("other.parquet", 1), (&p, 1), (&p, 4), (&p, 5)],
        6,
    ));
    task.deletes.push(pos_delete(&fx.dir, "pd2.parquet", &[(&p, 5), (&p, 8)], 5));
    // An older position delete (seq 4 < data seq 5) does not apply.
    task.deletes.push(pos_delete(&fx.dir, "pd_old.parquet", &[(&p, 0)], 4));
    let projected = Schema::new(
        0,
        vec![
            NestedField::optional(1, "id", PrimitiveType::Long.into()),
            NestedField::required(ROW_POS_FIELD_ID, "_pos", PrimitiveType::Long.into()),
            NestedField::required(FILE_PATH_FIELD_ID, "_file", PrimitiveType::String.into()),
        ],
        vec![],
    )
    .unwrap();
    let opts = ReadOptions { batch_size: 3, ..Default::default() };
    let mut ids = vec![];
    for b in read_task(&task, &projected, opts).unwrap() {
        let b = b.unwrap();
        assert!(b.num_rows() <= 3);
        let id = b.column(0).as_primitive::<Int64Type>();
        let pos = b.column(1).as_primitive::<Int64Type>();
        for i in 0..b.num_rows() {
            // the fixture's id equals the row position (except the null id in row 9)
            let want = if id.is_null(i) { 9 } else { id.value(i) };
            assert_eq!(pos.value(i), want);
            assert_eq!(b.column(2).as_string::<i32>().value(i), p);
        }
        ids.extend(id.iter());
    }
    assert_eq!(ids, vec![Some(0), Some(2), Some(3), Some(6), Some(7), None]);
}

#[test]
fn byte_range_reads_only_its_row_groups() {
    let fx = fixture();
    let md = ParquetRecordBatchReaderBuilder::try_new(File::open(&fx.data.file_path).unwrap()).unwrap();
    let starts: Vec<i64> =
        md.metadata().row_groups().iter().map(|rg| rg.column(0).byte_range().0 as i64).collect();
    assert_eq!(starts.len(), 3);
    let mut task = FileScanTask::whole_file(fx.data.clone(), 1);
    task.start = starts[1];
    task.length = starts[2] - starts[1];
    task.deletes.push(pos_delete(
        &fx.dir,
        "pd.parquet",
        &[(&fx.data.file_path, 1), (&fx.data.file_path, 6)],
        1,
    ));
    let opts = ReadOptions::default();
    assert_eq!(ids_of(&task, &data_schema(), opts.clone()), some(&[4, 5, 7]));
    // The three splits together read every row exactly once.
    let mut all = vec![];
    let bounds = [0, starts[1], starts[2], fx.data.file_size_in_bytes];
    for w in bounds.windows(2) {
        task.start = w[0];
        task.length = w[1] - w[0];
        all.extend(ids_of(&task, &data_schema(), opts.clone()));
    }
    assert_eq!(all, vec![Some(0), Some(2), Some(3), Some(4), Some(5), Some(7), Some(8), None]);
}

#[test]
fn equality_deletes_null_safe_with_sequence_numbers() {
    let fx = fixture();
    let key = || vec![NestedField::required(1, "id", PrimitiveType::Long.into())];
    let opt_key = || vec![NestedField::optional(1, "id", PrimitiveType::Long.into())];
    let mut task = FileScanTask::whole_file(fx.data.clone(), 3);
    task.deletes.push(eq_delete(
        &fx.dir,
        "e1.parquet",
        key(),
        vec![Arc::new(Int64Array::from(vec![1, 2, 100]))],
        4,
    ));
    task.deletes.push(eq_delete(
        &fx.dir,
        "e2.parquet",
        opt_key(),
        vec![Arc::new(Int64Array::from(vec![None, Some(3)]))],
        5,
    ));
    // Same sequence number as the data: does not apply (strictly greater is required).
    task.deletes.push(eq_delete(&fx.dir, "e3.parquet", key(), vec![Arc::new(Int64Array::from(vec![4]))], 3));
    // Projection without the key column: it is read for the join and dropped.
    let names_only =
        Schema::new(0, vec![NestedField::optional(2, "name", PrimitiveType::String.into())], vec![]).unwrap();
    let r = read_task(&task, &names_only, ReadOptions::default()).unwrap();
    let mut names = vec![];
    for b in r {
        let b = b.unwrap();
        assert_eq!(b.num_columns(), 1);
        names.extend(b.column(0).as_string::<i32>().iter().map(|s| s.unwrap().to_string()));
    }
    assert_eq!(names, vec!["n0", "n4", "n5", "n6", "n7", "n8"]);
    assert_eq!(ids_of(&task, &data_schema(), ReadOptions::default()), some(&[0, 4, 5, 6, 7, 8]));
}

#[test]
fn equality_deletes_on_two_columns_with_int_key_widened() {
    let fx = fixture();
    // Keys (k int, name string): deletes (k=1, n1) and (k=0, n5 -- no such row: n5 has k=2).
    let fields = vec![
        NestedField::required(3, "k", PrimitiveType::Int.into()),
        NestedField::required(2, "name", PrimitiveType::String.into()),
    ];
    let mut task = FileScanTask::whole_file(fx.data.clone(), 1);
    task.deletes.push(eq_delete(
        &fx.dir,
        "e.parquet",
        fields,
        vec![Arc::new(Int32Array::from(vec![1, 0])), Arc::new(StringArray::from(vec!["n1", "n5"]))],
        2,
    ));
    let only_id =
        Schema::new(0, vec![NestedField::optional(1, "id", PrimitiveType::Long.into())], vec![]).unwrap();
    let want = vec![Some(0), Some(2), Some(3), Some(4), Some(5), Some(6), Some(7), Some(8), None];
    assert_eq!(ids_of(&task, &only_id, ReadOptions::default()), want);
    assert_eq!(
        ids_of(&task, &data_schema(), ReadOptions { batch_size: 2, limit: Some(4), ..Default::default() }),
        want[..4].to_vec()
    );
}

#[test]
fn missing_or_corrupt_delete_files_fail_naming_the_file() {
    let fx = fixture();
    for (kind, name) in
        [(DataContentType::PositionDeletes, "pos_missing"), (DataContentType::EqualityDeletes, "eq_bad")]
    {
        let path = format!("{}/{name}.parquet", fx.dir);
        if name == "eq_bad" {
            std::fs::write(&path, b"not a parquet file at all").unwrap();
        }
        let mut f = DataFile::new_data(path.clone(), 1, 10);
        f.content = kind;
        f.equality_ids = Some(vec![1]);
        let mut task = FileScanTask::whole_file(fx.data.clone(), 1);
        task.deletes.push(DeleteFileRef { file: f, data_sequence_number: 2 });
        let err = read_task(&task, &data_schema(), ReadOptions::default()).unwrap_err();
        assert!(err.to_string().contains(&path), "{err}");
    }
}

/// Identity partition source columns the file lacks read as the task's partition value
/// (also as equality delete keys); columns the file has keep the file's values.
#[test]
fn identity_partition_values_fill_columns_the_file_lacks() {
    use crate::spec::Literal;
    let fx = fixture();
    let mut task = FileScanTask::whole_file(fx.data.clone(), 1);
    // spec: identity(k) at position 0, identity(cat) at 1, identity(day) at 2 (null value)
    task.identity_partition_fields = vec![(3, 0), (4, 1), (5, 2)];
    task.file.partition = vec![Some(Literal::Int(99)), Some(Literal::String("x".into())), None];
    let schema = Schema::new(
        0,
        vec![
            NestedField::optional(1, "id", PrimitiveType::Long.into()),
            NestedField::optional(3, "k", PrimitiveType::Long.into()),
            NestedField::required(4, "cat", PrimitiveType::String.into()),
            NestedField::optional(5, "day", PrimitiveType::Int.into()),
        ],
        vec![],
    )
    .unwrap();
    let batches: Vec<RecordBatch> =
        read_task(&task, &schema, ReadOptions::default()).unwrap().collect::<Result<Vec<_>>>().unwrap();
    let total: usize = batches.iter().map(|b| b.num_rows()).sum();
    assert_eq!(total, 10);
    for b in &batches {
        assert_eq!(b.schema().as_ref(), &schema_to_arrow(&schema).unwrap());
        let k = b.column(1).as_primitive::<Int64Type>();
        assert!(k.iter().all(|v| v.is_some_and(|v| v < 3)), "k comes from the file");
        let cat = b.column(2).as_string::<i32>();
        assert!(cat.iter().all(|v| v == Some("x")));
        assert_eq!(b.column(3).null_count(), b.num_rows());
    }
    // An equality delete on the constant column deletes every row of this file.
    task.deletes.push(eq_delete(
        &fx.dir,
        "eq_cat.parquet",
        vec![NestedField::required(4, "cat", PrimitiveType::String.into())],
        vec![Arc::new(StringArray::from(vec!["x"]))],
        2,
    ));
    assert!(ids_of(&task, &schema, ReadOptions::default()).is_empty());
}

fn residual(filter: &str) -> Option<serde_json::Value> {
    let e = crate::expr::parse_filter(filter).unwrap();
    Some(crate::expr::bind(&e, &data_schema(), true).unwrap().to_json().unwrap())
}

/// The residual filters rows in Rust (reading a column the projection lacks, dropped before
/// output), row groups ruled out by statistics are skipped, and it composes with deletes and
/// `_pos` (whose positions stay those of the file).
#[test]
fn residual_filter_prunes_and_filters() {
    let fx = fixture();
    let p = fx.data.file_path.clone();
    let names = Schema::new(
        0,
        vec![
            NestedField::optional(2, "name", PrimitiveType::String.into()),
            NestedField::required(ROW_POS_FIELD_ID, "_pos", PrimitiveType::Long.into()),
        ],
        vec![],
    )
    .unwrap();
    let read = |task: &FileScanTask| -> Vec<(String, i64)> {
        let mut out = vec![];
        for b in read_task(task, &names, ReadOptions { batch_size: 3, ..Default::default() }).unwrap() {
            let b = b.unwrap();
            assert_eq!(b.num_columns(), 2, "the residual's column is dropped");
            let n = b.column(0).as_string::<i32>();
            let pos = b.column(1).as_primitive::<Int64Type>();
            out.extend((0..b.num_rows()).map(|i| (n.value(i).to_string(), pos.value(i))));
        }
        out
    };
    let mut task = FileScanTask::whole_file(fx.data.clone(), 1);
    task.residual = residual("id >= 5 and id != 7");
    assert_eq!(read(&task), vec![("n5".into(), 5), ("n6".into(), 6), ("n8".into(), 8)]);
    task.deletes.push(pos_delete(&fx.dir, "pd.parquet", &[(&p, 6)], 1));
    assert_eq!(read(&task), vec![("n5".into(), 5), ("n8".into(), 8)]);
    // Statistics rule out every row group: nothing is decoded. Null handling: is_null(id).
    task.residual = residual("id > 100");
    assert!(read(&task).is_empty());
    task.residual = residual("id is null");
    assert_eq!(read(&task), vec![("n9".into(), 9)]);
    task.residual = Some(serde_json::json!({"type": "false"}));
    assert!(read(&task).is_empty());
    // A filter matching exactly the first row group.
    let mut t = FileScanTask::whole_file(fx.data.clone(), 1);
    t.residual = residual("id < 4");
    assert_eq!(read(&t).len(), 4);
    // A malformed residual fails naming the file.
    t.residual = Some(serde_json::json!({"type": "bogus"}));
    let err = read_task(&t, &names, ReadOptions::default()).unwrap_err();
    assert!(err.to_string().contains(&p), "{err}");
}

#[test]
fn equality_delete_record_counts_are_only_a_sizing_hint() {
    // The manifests' record counts size the key set up front; wrong ones (huge, zero,
    // negative, overflowing when summed) must change nothing but the allocation.
    let fx = fixture();
    let key = || vec![NestedField::required(1, "id", PrimitiveType::Long.into())];
    for (name, claimed) in [("hint_huge", i64::MAX), ("hint_zero", 0), ("hint_negative", -5)] {
        let mut task = FileScanTask::whole_file(fx.data.clone(), 3);
        for part in ["a", "b"] {
            let mut d = eq_delete(
                &fx.dir,
                &format!("{name}_{part}.parquet"),
                key(),
                vec![Arc::new(Int64Array::from(vec![1, 2, 100]))],
                4,
            );
            d.file.record_count = claimed;
            task.deletes.push(d);
        }
        let mut expected = some(&[0, 3, 4, 5, 6, 7, 8]);
        expected.push(None); // the fixture's row with a null id: no null key is deleted here
        assert_eq!(ids_of(&task, &data_schema(), ReadOptions::default()), expected, "{name}");
    }
}

#[test]
fn tasks_of_one_snapshot_share_a_key_map_and_keep_their_own_sequence_rule() {
    // Four data files' tasks of one snapshot scope, read newest-first and oldest-first: the
    // shared map holds every delete file any of them named, and each task still sees only
    // the deletes with a higher sequence number than its data file.
    let fx = fixture();
    let key = || vec![NestedField::required(1, "id", PrimitiveType::Long.into())];
    let deletes: Vec<DeleteFileRef> = (0..3)
        .map(|i| {
            eq_delete(
                &fx.dir,
                &format!("shared_{i}.parquet"),
                key(),
                vec![Arc::new(Int64Array::from(vec![i64::from(i), 5]))],
                10 + i64::from(i),
            )
        })
        .collect();
    let task_at = |seq: i64| {
        let mut t = FileScanTask::whole_file(fx.data.clone(), seq);
        t.deletes = deletes.iter().filter(|d| d.data_sequence_number > seq).cloned().collect();
        t.delete_scope = Some(format!("{}/snap-shared.avro", fx.dir));
        t
    };
    let expected = |seq: i64| -> Vec<Option<i64>> {
        let gone: Vec<i64> = (0..3).filter(|i| 10 + i > seq).flat_map(|i| [i, 5]).collect();
        let mut v: Vec<Option<i64>> = (0..9).filter(|i| !gone.contains(i)).map(Some).collect();
        v.push(None);
        v
    };
    for order in [[12, 11, 10, 9], [9, 10, 11, 12]] {
        for seq in order {
            let mut got = ids_of(&task_at(seq), &data_schema(), ReadOptions::default());
            got.sort_by_key(|v| v.map_or(i64::MAX, |x| x));
            let mut want = expected(seq);
            want.sort_by_key(|v| v.map_or(i64::MAX, |x| x));
            assert_eq!(got, want, "data sequence number {seq}");
        }
        crate::arrow::delete_cache::clear();
    }
}
