//! Manifest decode throughput: a 10,000-entry v2 manifest of a 4-column table
//! (id long, ts timestamptz, name string, amount double) partitioned by day(ts), full metrics
//! bounds for every column, written once with our writer and decoded repeatedly.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use icefloe::manifest::{read_manifest, DataFile, ManifestContent, ManifestFile, ManifestWriter};
use icefloe::spec::{
    Literal, NestedField, PartitionField, PartitionSpec, PrimitiveType, Schema, Transform, Type,
};

const ENTRIES: i64 = 10_000;
const MICROS_PER_DAY: i64 = 86_400_000_000;

fn write_manifest(dir: &std::path::Path) -> ManifestFile {
    let p = |t| Type::Primitive(t);
    let schema = Schema::new(
        0,
        vec![
            NestedField::required(1, "id", p(PrimitiveType::Long)),
            NestedField::optional(2, "ts", p(PrimitiveType::Timestamptz)),
            NestedField::optional(3, "name", p(PrimitiveType::String)),
            NestedField::optional(4, "amount", p(PrimitiveType::Double)),
        ],
        vec![],
    )
    .expect("schema");
    let spec = PartitionSpec::new(0, vec![PartitionField::new(2, 1000, "ts_day", Transform::Day)]);
    let path = dir.join("bench-m0.avro").display().to_string();
    let mut w = ManifestWriter::new(&path, 1, ManifestContent::Data, &schema, &spec).expect("writer");
    let day0 = 19_700i64;
    for i in 0..ENTRIES {
        let day = day0 + i / 100;
        let mut f = DataFile::new_data(
            format!("s3://bucket/warehouse/db/events/data/ts_day=2023-12-{:02}/00000-{i}-3f1c2a4e-9b7d-4e2a-8c1f-6d5e4b3a2f10-00001.parquet", i % 28 + 1),
            100_000 + i,
            64 * 1024 * 1024 + i,
        );
        f.partition = vec![Some(Literal::Date(day as i32))];
        let ts_lo = day * MICROS_PER_DAY;
        let ts_hi = ts_lo + MICROS_PER_DAY - 1;
        let bounds: [(i32, Literal, Literal); 4] = [
            (1, Literal::Long(i * 100_000), Literal::Long(i * 100_000 + 99_999)),
            (2, Literal::Timestamptz(ts_lo), Literal::Timestamptz(ts_hi)),
            (3, Literal::String(format!("aaron-{i:05}")), Literal::String(format!("zoe-{i:05}"))),
            (4, Literal::Double(-1000.5), Literal::Double(99_999.25 + i as f64)),
        ];
        for (col, lo, hi) in bounds {
            f.column_sizes.insert(col, 1_000_000 + i64::from(col) * 1000 + i);
            f.value_counts.insert(col, 100_000 + i);
            f.null_value_counts.insert(col, i % 7);
            f.lower_bounds.insert(col, lo.to_bytes());
            f.upper_bounds.insert(col, hi.to_bytes());
        }
        f.nan_value_counts.insert(4, 0);
        f.split_offsets = Some(vec![4, 33_554_432 + i]);
        f.sort_order_id = Some(0);
        w.add(f).expect("add");
    }
    let mut mf = w.close().expect("close");
    mf.sequence_number = 1;
    mf.min_sequence_number = 1;
    mf
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mf = write_manifest(dir.path());
    assert_eq!(read_manifest(&mf).expect("read").len() as i64, ENTRIES);
    eprintln!("manifest: {} entries, {} bytes", ENTRIES, mf.manifest_length);

    let mut g = c.benchmark_group("manifest_decode");
    g.throughput(Throughput::Elements(ENTRIES as u64));
    g.sample_size(20).warm_up_time(Duration::from_secs(2)).measurement_time(Duration::from_secs(8));
    g.bench_function("icefloe_read_manifest", |b| {
        b.iter(|| black_box(read_manifest(black_box(&mf)).expect("read")))
    });
    // Anchor: apache-avro's generic reader decoding the same file into Avro values (no
    // conversion to DataFile at all). icefloe decodes manifests with its own codec
    // (rust/manifest/avro.rs) on the claim that this path is slower; this measures it.
    let bytes = std::fs::read(&mf.manifest_path).expect("manifest bytes");
    g.bench_function("anchor_apache_avro_generic_values", |b| {
        b.iter(|| {
            let reader = apache_avro::Reader::new(black_box(&bytes[..])).expect("avro reader");
            let mut n = 0usize;
            for v in reader {
                black_box(v.expect("avro value"));
                n += 1;
            }
            assert_eq!(n as i64, ENTRIES);
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
