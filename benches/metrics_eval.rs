//! InclusiveMetricsEvaluator throughput: 100,000 DataFiles of a 4-column table (id long,
//! ts timestamptz, name string, amount double) with full metrics (value/null/NaN counts,
//! lower/upper bounds for every column), evaluated with `eval_all` for `id = <one value>`,
//! a one-day `ts` range and `name LIKE 'a%'`. Run: `make bench-metrics-eval`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use icefloe::expr::{bind, parse_filter, InclusiveMetricsEvaluator, StrictMetricsEvaluator};
use icefloe::manifest::DataFile;
use icefloe::spec::{NestedField, PrimitiveType, Schema, Type};

const FILES: i64 = 100_000;
const MICROS_PER_DAY: i64 = 86_400_000_000;
const DAY0: i64 = 19_700;

fn schema() -> Schema {
    let p = |t| Type::Primitive(t);
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", p(PrimitiveType::Long)),
            NestedField::optional(2, "ts", p(PrimitiveType::Timestamptz)),
            NestedField::optional(3, "name", p(PrimitiveType::String)),
            NestedField::optional(4, "amount", p(PrimitiveType::Double)),
        ],
        vec![],
    )
    .expect("schema")
}

fn files() -> Vec<DataFile> {
    (0..FILES)
        .map(|i| {
            let mut f = DataFile::new_data(format!("data/{i}.parquet"), 1000, 1 << 20);
            let day = DAY0 + i / 1000; // 100 days, 1000 files each
            let ts_lo = day * MICROS_PER_DAY + (i % 1000) * 1000;
            let names = [b"alpha".as_slice(), b"bravo", b"charlie", b"delta"];
            for id in 1..=4 {
                f.value_counts.insert(id, 1000);
                f.null_value_counts.insert(id, 0);
            }
            f.nan_value_counts.insert(4, 0);
            f.lower_bounds.insert(1, (i * 1000).to_le_bytes().to_vec());
            f.upper_bounds.insert(1, (i * 1000 + 999).to_le_bytes().to_vec());
            f.lower_bounds.insert(2, ts_lo.to_le_bytes().to_vec());
            f.upper_bounds.insert(2, (ts_lo + 3_600_000_000).to_le_bytes().to_vec());
            f.lower_bounds.insert(3, names[(i % 4) as usize].to_vec());
            f.upper_bounds.insert(3, names[((i % 4) as usize + 1).min(3)].to_vec());
            f.lower_bounds.insert(4, (i as f64).to_le_bytes().to_vec());
            f.upper_bounds.insert(4, (i as f64 + 100.0).to_le_bytes().to_vec());
            f
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let schema = schema();
    let files = files();
    let mut g = c.benchmark_group("inclusive_metrics_100k_files");
    g.throughput(Throughput::Elements(FILES as u64));
    g.measurement_time(Duration::from_secs(5));
    let day = "2023-12-15"; // DAY0 + 2 days .. within the 100 days
    let cases = [
        ("id_eq", "id = 50000500".to_string()),
        ("ts_one_day", format!("ts >= '{day}' AND ts < '{day}T23:59:59.999999+00:00'")),
        ("name_starts_with", "name LIKE 'a%'".to_string()),
    ];
    let mut out = Vec::with_capacity(FILES as usize);
    for (name, filter) in &cases {
        let e = bind(&parse_filter(filter).expect("parse"), &schema, true).expect("bind");
        let ev = InclusiveMetricsEvaluator::new(&e);
        ev.eval_all(&files, &mut out);
        let kept = out.iter().filter(|b| **b).count();
        eprintln!("{name}: {filter} keeps {kept} of {FILES} files");
        g.bench_function(*name, |b| {
            b.iter(|| {
                ev.eval_all(black_box(&files), &mut out);
                black_box(out.len())
            })
        });
    }
    let e = bind(&parse_filter("id >= 0").expect("parse"), &schema, true).expect("bind");
    let strict = StrictMetricsEvaluator::new(&e);
    g.bench_function("strict_id_gte", |b| {
        b.iter(|| {
            strict.eval_all(black_box(&files), &mut out);
            black_box(out.len())
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
