//! Tests of the partitioned writers: every transform, multi-field specs, fanout bound,
//! clustered input, sorting within files, Parquet properties in the written footer.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use parquet::file::reader::{FileReader, SerializedFileReader};

use super::data_writer::{write_data_files_opts, WriteOptions, WriterMode};
use super::partitioner::literal_at;
use crate::arrow::schema_to_arrow;
use crate::error::{ErrorKind, Result};
use crate::manifest::DataFile;
use crate::spec::{
    NestedField, PartitionField, PartitionSpec, PrimitiveType, Schema, SortField, SortOrder, TableMetadata,
    Transform,
};

fn schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long.into()),
            NestedField::optional(2, "cat", PrimitiveType::String.into()),
            NestedField::optional(3, "ts", PrimitiveType::Timestamptz.into()),
        ],
        vec![],
    )
    .unwrap()
}

fn table(
    dir: &std::path::Path,
    spec: PartitionSpec,
    order: SortOrder,
    props: &[(&str, &str)],
) -> TableMetadata {
    let props: BTreeMap<String, String> = props.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let md =
        TableMetadata::new_table(schema(), Some(spec), Some(order), dir.to_str().unwrap(), props, 2).unwrap();
    md
}

/// Rows i in from..from+n: id = i * 7919 % 1000 - 500, cat cycles (with nulls and non-ASCII),
/// ts spreads over days before and after 1970.
fn batch(from: i64, n: i64) -> RecordBatch {
    let ids: Vec<i64> = (from..from + n).map(|i| (i * 7919).rem_euclid(1000) - 500).collect();
    let cats: Vec<Option<String>> = (from..from + n)
        .map(|i| match i % 5 {
            0 => None,
            1 => Some("añb".to_string()),
            2 => Some(format!("x{}", i % 3)),
            3 => Some("😀y".to_string()),
            _ => Some(String::new()),
        })
        .collect();
    let ts: Vec<Option<i64>> = (from..from + n)
        .map(|i| if i % 11 == 0 { None } else { Some((i % 9 - 4) * 86_400_000_000 + i * 1_000_003) })
        .collect();
    RecordBatch::try_new(
        Arc::new(schema_to_arrow(&schema()).unwrap()),
        vec![
            Arc::new(Int64Array::from(ids)),
            Arc::new(StringArray::from(cats)),
            Arc::new(TimestampMicrosecondArray::from(ts).with_timezone("UTC")),
        ],
    )
    .unwrap()
}

fn read(f: &DataFile) -> Vec<RecordBatch> {
    crate::arrow::read_parquet(&f.file_path, &schema(), 1 << 20).unwrap().collect::<Result<Vec<_>>>().unwrap()
}

/// Every row of every file transforms to the file's partition tuple; returns the row count.
fn check_rows_match_partitions(md: &TableMetadata, files: &[DataFile]) -> usize {
    let spec = md.default_spec();
    let mut rows = 0;
    for f in files {
        assert!(f.record_count > 0);
        let dir =
            format!("{}/data/{}/", md.location(), spec.partition_path(&schema(), &f.partition).unwrap());
        assert!(f.file_path.starts_with(&dir), "{} not under {dir}", f.file_path);
        for b in read(f) {
            for r in 0..b.num_rows() {
                for (pf, want) in spec.fields().iter().zip(&f.partition) {
                    let col = schema().fields().iter().position(|c| c.id == pf.source_id).unwrap();
                    let ty = schema().fields()[col].field_type.as_primitive().unwrap().clone();
                    let v = literal_at(b.column(col), &ty, r).unwrap();
                    let got = v.and_then(|v| pf.transform.apply(&v).unwrap());
                    assert_eq!(&got, want, "{} row {r} field {}", f.file_path, pf.name);
                }
            }
            rows += b.num_rows();
        }
    }
    rows
}

fn spec_of(fields: &[(i32, &str, Transform)]) -> PartitionSpec {
    PartitionSpec::new(
        0,
        fields
            .iter()
            .enumerate()
            .map(|(i, (src, name, t))| PartitionField::new(*src, 1000 + i as i32, *name, t.clone()))
            .collect(),
    )
}

#[test]
fn every_transform_and_a_multi_field_spec() {
    let specs = [
        vec![(2, "cat", Transform::Identity)],
        vec![(1, "id_bucket", Transform::Bucket(4))],
        vec![(2, "cat_bucket", Transform::Bucket(3))],
        vec![(1, "id_trunc", Transform::Truncate(100))],
        vec![(2, "cat_trunc", Transform::Truncate(1))],
        vec![(3, "ts_year", Transform::Year)],
        vec![(3, "ts_month", Transform::Month)],
        vec![(3, "ts_day", Transform::Day)],
        vec![(3, "ts_hour", Transform::Hour)],
        vec![(3, "ts_null", Transform::Void)],
        vec![
            (3, "ts_day", Transform::Day),
            (1, "id_bucket", Transform::Bucket(3)),
            (2, "cat", Transform::Identity),
        ],
    ];
    for fields in specs {
        let dir = tempfile::tempdir().unwrap();
        let md = table(dir.path(), spec_of(&fields), SortOrder::unsorted(), &[]);
        let batches = (0..4).map(|k| Ok(batch(k * 500, 500)));
        let files = write_data_files_opts(&md, batches, "w", 3, &WriteOptions::default()).unwrap();
        assert_eq!(check_rows_match_partitions(&md, &files), 2000, "{fields:?}");
        // One file per partition (fanout, no roll): partitions are distinct.
        let mut parts: Vec<_> = files.iter().map(|f| format!("{:?}", f.partition)).collect();
        parts.sort();
        parts.dedup();
        assert_eq!(parts.len(), files.len(), "{fields:?}");
        assert!(files.iter().all(|f| f.sort_order_id == Some(0)));
    }
    // Rendered paths, like Java's.
    let dir = tempfile::tempdir().unwrap();
    let md = table(
        dir.path(),
        spec_of(&[
            (3, "ts_day", Transform::Day),
            (1, "id_bucket", Transform::Bucket(3)),
            (2, "cat", Transform::Identity),
        ]),
        SortOrder::unsorted(),
        &[],
    );
    let files =
        write_data_files_opts(&md, std::iter::once(Ok(batch(1, 1))), "w", 3, &WriteOptions::default())
            .unwrap();
    let rel = files[0].file_path.strip_prefix(md.location()).unwrap().to_string();
    assert!(rel.starts_with("/data/ts_day=1969-12-29/id_bucket="), "{rel}");
    assert!(rel.ends_with("/cat=a%C3%B1b/00003-w-00001.parquet"), "{rel}");
}

#[test]
fn fanout_bound_closes_least_recently_used() {
    let dir = tempfile::tempdir().unwrap();
    let md =
        table(dir.path(), spec_of(&[(1, "id_bucket", Transform::Bucket(8))]), SortOrder::unsorted(), &[]);
    let opts = WriteOptions { max_open_files: Some(2), ..Default::default() };
    let batches = (0..6).map(|k| Ok(batch(k * 100, 100)));
    let files = write_data_files_opts(&md, batches, "w", 0, &opts).unwrap();
    assert_eq!(check_rows_match_partitions(&md, &files), 600);
    let distinct: std::collections::HashSet<_> = files.iter().map(|f| format!("{:?}", f.partition)).collect();
    assert_eq!(distinct.len(), 8);
    assert!(files.len() > 8, "closed partitions reopen new files: {}", files.len());
    let unbounded = write_data_files_opts(
        &md,
        (0..6).map(|k| Ok(batch(k * 100, 100))),
        "w2",
        0,
        &WriteOptions::default(),
    )
    .unwrap();
    assert_eq!(unbounded.len(), 8);
}

#[test]
fn clustered_writer_takes_grouped_input_and_refuses_a_returning_partition() {
    let dir = tempfile::tempdir().unwrap();
    let md =
        table(dir.path(), spec_of(&[(1, "id_trunc", Transform::Truncate(500))]), SortOrder::unsorted(), &[]);
    let opts = WriteOptions { mode: WriterMode::Clustered, ..Default::default() };
    // Sorted by id: partitions -500, 0 arrive in order, across batches.
    let mut ids: Vec<i64> = batch(0, 1000).column(0).as_primitive::<Int64Type>().values().to_vec();
    ids.sort();
    let sorted = |lo: usize, hi: usize| {
        let b = batch(0, (hi - lo) as i64);
        RecordBatch::try_new(
            b.schema(),
            vec![Arc::new(Int64Array::from(ids[lo..hi].to_vec())), b.column(1).clone(), b.column(2).clone()],
        )
        .unwrap()
    };
    let files = write_data_files_opts(
        &md,
        vec![Ok(sorted(0, 300)), Ok(sorted(300, 1000))].into_iter(),
        "w",
        0,
        &opts,
    )
    .unwrap();
    assert_eq!(files.len(), 2);
    assert_eq!(check_rows_match_partitions(&md, &files), 1000);

    let err = write_data_files_opts(&md, vec![Ok(batch(0, 100))].into_iter(), "bad", 0, &opts).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Validation);
    assert!(err.to_string().contains("not clustered"), "{err}");
    let left: Vec<_> = walk(dir.path()).into_iter().filter(|p| p.contains("-bad-")).collect();
    assert!(left.is_empty(), "{left:?}");
}

fn walk(d: &std::path::Path) -> Vec<String> {
    let mut out = vec![];
    for e in std::fs::read_dir(d).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p.to_string_lossy().into_owned());
        }
    }
    out
}

#[test]
fn sorts_within_files_by_the_table_sort_order() {
    let dir = tempfile::tempdir().unwrap();
    let order = SortOrder::new(1, vec![SortField::desc(1), SortField::asc(2)]);
    let md = table(dir.path(), spec_of(&[(3, "ts_day", Transform::Day)]), order, &[]);
    let opts = WriteOptions { sort: true, ..Default::default() };
    let files = write_data_files_opts(&md, (0..3).map(|k| Ok(batch(k * 400, 400))), "w", 0, &opts).unwrap();
    assert_eq!(check_rows_match_partitions(&md, &files), 1200);
    for f in &files {
        assert_eq!(f.sort_order_id, Some(1));
        let b = read(f);
        assert_eq!(b.len(), 1);
        let ids = b[0].column(0).as_primitive::<Int64Type>().values().to_vec();
        assert!(ids.windows(2).all(|w| w[0] >= w[1]), "{} not sorted desc: {ids:?}", f.file_path);
    }
    // A small sort buffer (runs spilled and merged) and a small target size: each partition's
    // files are sorted as a whole, and one after the other they hold disjoint key ranges.
    let opts = WriteOptions {
        sort: true,
        sort_buffer_bytes: Some(1),
        target_file_size_bytes: Some(2048),
        ..Default::default()
    };
    let files =
        write_data_files_opts(&md, (0..3).map(|k| Ok(batch(k * 20_000, 20_000))), "w2", 0, &opts).unwrap();
    assert_eq!(check_rows_match_partitions(&md, &files), 60_000);
    let mut by_partition: BTreeMap<String, Vec<Vec<i64>>> = BTreeMap::new();
    for f in &files {
        let ids: Vec<i64> =
            read(f).iter().flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec()).collect();
        by_partition.entry(format!("{:?}", f.partition)).or_default().push(ids);
    }
    assert!(by_partition.values().all(|fs| fs.len() > 1), "small targets roll several files per partition");
    for (partition, fs) in &by_partition {
        let all: Vec<i64> = fs.iter().flatten().copied().collect();
        assert!(
            all.windows(2).all(|w| w[0] >= w[1]),
            "partition {partition}: files not in one descending run"
        );
    }
}

#[test]
fn parquet_properties_reach_the_footer() {
    let dir = tempfile::tempdir().unwrap();
    let md = table(
        dir.path(),
        PartitionSpec::unpartitioned(),
        SortOrder::unsorted(),
        &[
            ("write.parquet.compression-codec", "gzip"),
            ("write.parquet.compression-level", "9"),
            ("write.parquet.row-group-size-bytes", "65536"),
            ("write.parquet.page-row-limit", "100"),
            ("write.parquet.dict-size-bytes", "1024"),
        ],
    );
    let files = write_data_files_opts(
        &md,
        (0..10).map(|k| Ok(batch(k * 5000, 5000))),
        "w",
        0,
        &WriteOptions::default(),
    )
    .unwrap();
    assert_eq!(files.len(), 1);
    let reader = SerializedFileReader::new(std::fs::File::open(&files[0].file_path).unwrap()).unwrap();
    let meta = reader.metadata();
    assert!(meta.num_row_groups() > 2, "row groups: {}", meta.num_row_groups());
    assert_eq!(files[0].split_offsets.as_ref().unwrap().len(), meta.num_row_groups());
    let rg = meta.row_group(0);
    for c in rg.columns() {
        // The footer records the codec (the level is not stored in Parquet).
        assert!(matches!(c.compression(), parquet::basic::Compression::GZIP(_)), "{:?}", c.compression());
    }
    // Page row limit: the id column's first row group has many data pages.
    let pages = reader.get_row_group(0).unwrap().get_column_page_reader(0).unwrap().count();
    assert!(pages as i64 >= rg.num_rows() / 100, "pages {pages} for {} rows", rg.num_rows());
}
