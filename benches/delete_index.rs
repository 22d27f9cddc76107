//! criterion: the delete file index's equality-delete bounds-overlap check (Java's
//! `canContainEqDeletesForFile` / `rangesOverlap`) and a full `for_data_file` lookup.

use std::collections::HashMap;

use criterion::{criterion_group, criterion_main, Criterion};
use icefloe::manifest::{DataContentType, DataFile};
use icefloe::scan::delete_file_index::{can_contain_eq_deletes, eq_field_stats, ranges_overlap};
use icefloe::scan::DeleteFileIndex;
use icefloe::spec::{Literal, NestedField, PartitionSpec, PrimitiveType, Schema, Type};

fn data_file(i: i64) -> DataFile {
    let mut f = DataFile::new_data(format!("d{i}.parquet"), 1000, 1 << 20);
    f.lower_bounds.insert(1, Literal::Long(i * 1000).to_bytes());
    f.upper_bounds.insert(1, Literal::Long(i * 1000 + 999).to_bytes());
    f.lower_bounds.insert(2, Literal::String(format!("n{i:07}")).to_bytes());
    f.upper_bounds.insert(2, Literal::String(format!("n{i:07}z")).to_bytes());
    for id in [1, 2] {
        f.null_value_counts.insert(id, 0);
        f.value_counts.insert(id, 1000);
    }
    f
}

fn eq_delete(i: i64) -> DataFile {
    let mut f = data_file(i);
    f.file_path = format!("eq{i}.parquet");
    f.content = DataContentType::EqualityDeletes;
    f.equality_ids = Some(vec![1, 2]);
    f
}

fn bench(c: &mut Criterion) {
    let schema = Schema::new(
        0,
        vec![
            NestedField::required(1, "id", Type::Primitive(PrimitiveType::Long)),
            NestedField::optional(2, "name", Type::Primitive(PrimitiveType::String)),
        ],
        vec![],
    )
    .expect("schema");
    let data: Vec<DataFile> = (0..10_000).map(data_file).collect();
    let del = eq_delete(5_000);
    let stats = eq_field_stats(&del, &schema);
    c.bench_function("eq delete can_contain over 10k data files", |b| {
        b.iter(|| data.iter().filter(|d| can_contain_eq_deletes(d, &stats)).count())
    });
    let (lo, hi) = (Literal::Long(10), Literal::Long(20));
    let (dlo, dhi) = (Literal::Long(15), Literal::Long(30));
    c.bench_function("ranges_overlap long", |b| b.iter(|| ranges_overlap(&lo, &hi, &dlo, &dhi)));

    let mut specs = HashMap::new();
    specs.insert(0, PartitionSpec::unpartitioned());
    let deletes = (0..100).map(|i| (eq_delete(i * 100), 2));
    let index = DeleteFileIndex::build(deletes, &specs, &schema).expect("index");
    c.bench_function("for_data_file over 10k data files, 100 global eq deletes", |b| {
        b.iter(|| data.iter().map(|d| index.for_data_file(1, d).map_or(0, |v| v.len())).sum::<usize>())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
