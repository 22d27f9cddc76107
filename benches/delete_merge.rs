//! Delete merge hot paths: position deletes to row selections, equality-delete probes.

use std::fs::File;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use criterion::{criterion_group, criterion_main, Criterion};
use icefloe::arrow::equality_deletes::EqualityDeleteSet;
use icefloe::arrow::position_deletes::{merge_positions, row_selection};
use icefloe::arrow::schema_to_arrow;
use icefloe::spec::{NestedField, PrimitiveType, Schema};

fn bench(c: &mut Criterion) {
    let rows = 1_000_000i64;
    let deleted: Vec<i64> = (0..rows).filter(|i| i % 10 == 3).collect();
    let groups: Vec<(i64, i64)> = (0..8).map(|g| (g * rows / 8, rows / 8)).collect();
    c.bench_function("row_selection 1M rows, 100k position deletes", |b| {
        b.iter(|| row_selection(&groups, &deleted, false))
    });
    c.bench_function("row_selection 1M rows, 100k position deletes, with _pos runs", |b| {
        b.iter(|| row_selection(&groups, &deleted, true))
    });
    let other: Vec<i64> = (0..rows).filter(|i| i % 10 == 5).collect();
    c.bench_function("merge_positions 2 x 100k", |b| b.iter(|| merge_positions(&[&deleted, &other])));

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("eq.parquet");
    let schema =
        Schema::new(0, vec![NestedField::required(1, "id", PrimitiveType::Long.into())], vec![]).unwrap();
    let arrow = Arc::new(schema_to_arrow(&schema).unwrap());
    let keys: ArrayRef = Arc::new(Int64Array::from_iter_values((0..rows).filter(|i| i % 10 == 7)));
    let batch = RecordBatch::try_new(arrow.clone(), vec![keys]).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(File::create(&path).unwrap(), arrow, None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let p = path.to_str().unwrap().to_string();
    let set = EqualityDeleteSet::load(&[1], &[&p], &|_| None).unwrap();
    let data: ArrayRef = Arc::new(Int64Array::from_iter_values(0..65536));
    c.bench_function("equality probe 64k rows vs 100k long keys", |b| {
        b.iter(|| set.keep_mask(std::slice::from_ref(&data)))
    });
    c.bench_function("equality load 100k long keys", |b| {
        b.iter(|| EqualityDeleteSet::load(&[1], &[&p], &|_| None).unwrap())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
