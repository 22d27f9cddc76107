//! The sorter alone: sort keys with transforms, directions and null orders; spilled runs
//! merged in one pass and in several (more runs than `MAX_FAN_IN`); the spill folder removed.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, Int64Array, RecordBatch, StringArray};

use super::*;
use crate::arrow::schema_to_arrow;
use crate::spec::{NestedField, SortField};

fn schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::optional(1, "k", PrimitiveType::Long.into()),
            NestedField::optional(2, "s", PrimitiveType::String.into()),
        ],
        vec![],
    )
    .unwrap()
}

/// Rows from..from+n with k = i * 7919 % 1000 - 500 (every tenth null) and s = "r<i>".
fn batch(from: i64, n: i64) -> RecordBatch {
    let k: Vec<Option<i64>> = (from..from + n)
        .map(|i| if i % 10 == 3 { None } else { Some((i * 7919).rem_euclid(1000) - 500) })
        .collect();
    let s: Vec<String> = (from..from + n).map(|i| format!("r{i}")).collect();
    RecordBatch::try_new(
        Arc::new(schema_to_arrow(&schema()).unwrap()),
        vec![Arc::new(Int64Array::from(k)), Arc::new(StringArray::from(s))],
    )
    .unwrap()
}

fn keys(batches: &[RecordBatch]) -> Vec<Option<i64>> {
    batches.iter().flat_map(|b| b.column(0).as_primitive::<Int64Type>().iter().collect::<Vec<_>>()).collect()
}

fn names(batches: &[RecordBatch]) -> Vec<String> {
    let mut out: Vec<String> = batches
        .iter()
        .flat_map(|b| b.column(1).as_string::<i32>().iter().flatten().map(str::to_string))
        .collect();
    out.sort();
    out
}

/// Sorts `n_batches` batches of 100 rows with `spill_every` batches per run (0: no spill).
fn sort_all(
    order: &SortOrder,
    n_batches: i64,
    spill_every: i64,
) -> (Vec<RecordBatch>, usize, Option<PathBuf>) {
    let sorter = Sorter::try_new(&schema(), order, 1).unwrap().unwrap();
    let mut buf = SortBuffer::default();
    let mut dir = SpillDir::default();
    for i in 0..n_batches {
        buf.push(batch(i * 100, 100));
        if spill_every > 0 && (i + 1) % spill_every == 0 {
            sorter.spill(&mut buf, &mut dir).unwrap();
        }
    }
    let runs = buf.runs.len();
    let mut out = Vec::new();
    sorter
        .drain(&mut buf, &mut dir, &mut |b| {
            out.push(b.clone());
            Ok(())
        })
        .unwrap();
    let folder = dir.path.clone();
    drop(dir);
    (out, runs, folder)
}

fn expected(n_batches: i64) -> Vec<String> {
    let mut all = names(&[batch(0, n_batches * 100)]);
    all.sort();
    all
}

#[test]
fn sorts_in_memory_by_direction_and_null_order() {
    let desc_nulls_first = SortOrder::new(
        1,
        vec![SortField::new(1, Transform::Identity, SortDirection::Descending, NullOrder::NullsFirst)],
    );
    let (out, runs, folder) = sort_all(&desc_nulls_first, 5, 0);
    assert_eq!((runs, folder), (0, None), "nothing spilled");
    let k = keys(&out);
    assert_eq!(k.len(), 500);
    assert!(k[..50].iter().all(Option::is_none), "nulls first");
    let values: Vec<i64> = k[50..].iter().map(|v| v.unwrap()).collect();
    assert!(values.windows(2).all(|w| w[0] >= w[1]), "descending");
    assert_eq!(names(&out), expected(5));
}

#[test]
fn merges_spilled_runs_and_removes_them() {
    let asc = SortOrder::new(
        1,
        vec![SortField::new(1, Transform::Identity, SortDirection::Ascending, NullOrder::NullsLast)],
    );
    let (out, runs, folder) = sort_all(&asc, 20, 3);
    assert_eq!(runs, 6, "six full runs, the rest spilled at the end");
    let k = keys(&out);
    let values: Vec<i64> = k.iter().take_while(|v| v.is_some()).map(|v| v.unwrap()).collect();
    assert_eq!(values.len(), 1800, "ascending puts nulls last");
    assert!(values.windows(2).all(|w| w[0] <= w[1]));
    assert!(out.iter().all(|b| b.num_rows() <= RUN_BATCH_ROWS));
    assert_eq!(names(&out), expected(20));
    let folder = folder.expect("runs were spilled");
    assert!(!folder.exists(), "spill folder {folder:?} left behind");
}

#[test]
fn more_runs_than_the_fan_in_merge_in_passes() {
    // Sorting by a transform of the key (truncate to tens), then by the string.
    let order = SortOrder::new(
        2,
        vec![
            SortField::new(1, Transform::Truncate(10), SortDirection::Ascending, NullOrder::NullsFirst),
            SortField::desc(2),
        ],
    );
    let n = (MAX_FAN_IN as i64) * 2 + 5;
    let (out, runs, _) = sort_all(&order, n, 1);
    assert_eq!(runs, n as usize);
    let k = keys(&out);
    let s: Vec<String> = out
        .iter()
        .flat_map(|b| b.column(1).as_string::<i32>().iter().flatten().map(str::to_string))
        .collect();
    let tens = |v: Option<i64>| v.map(|x| x.div_euclid(10) * 10);
    for i in 1..k.len() {
        let (a, b) = (tens(k[i - 1]), tens(k[i]));
        assert!(a <= b, "row {i}: {a:?} after {b:?}");
        if a == b {
            assert!(s[i - 1] >= s[i], "row {i}: ties not by the string descending");
        }
    }
    assert_eq!(names(&out), expected(n));
}

#[test]
fn the_merge_orders_as_the_in_memory_sort_does() {
    // Floats (NaN, signed zeros, infinities, nulls) and strings, both directions: runs sorted
    // by lexsort and merged by key rows give what one lexsort of everything gives.
    use arrow_array::{Float64Array, StringArray as S};
    let schema = Schema::new(
        0,
        vec![
            NestedField::optional(1, "f", PrimitiveType::Double.into()),
            NestedField::optional(2, "s", PrimitiveType::String.into()),
        ],
        vec![],
    )
    .unwrap();
    let arrow_schema = Arc::new(schema_to_arrow(&schema).unwrap());
    let specials = [f64::NAN, -0.0, 0.0, f64::INFINITY, f64::NEG_INFINITY, 1.5, -1.5];
    let make = |from: usize| {
        let f: Vec<Option<f64>> = (from..from + 50)
            .map(|i| if i % 9 == 0 { None } else { Some(specials[i % specials.len()]) })
            .collect();
        let s: Vec<Option<String>> =
            (from..from + 50).map(|i| if i % 4 == 0 { None } else { Some(format!("é{}", i % 6)) }).collect();
        RecordBatch::try_new(
            arrow_schema.clone(),
            vec![Arc::new(Float64Array::from(f)), Arc::new(S::from(s))],
        )
        .unwrap()
    };
    for (d1, n1) in
        [(SortDirection::Ascending, NullOrder::NullsFirst), (SortDirection::Descending, NullOrder::NullsLast)]
    {
        let order = SortOrder::new(
            1,
            vec![
                SortField::new(1, Transform::Identity, d1, n1),
                SortField::new(2, Transform::Identity, SortDirection::Descending, NullOrder::NullsFirst),
            ],
        );
        let sorter = Sorter::try_new(&schema, &order, 1).unwrap().unwrap();
        let (mut buf, mut dir) = (SortBuffer::default(), SpillDir::default());
        let inputs: Vec<RecordBatch> = (0..6).map(|k| make(k * 50)).collect();
        for b in &inputs {
            buf.push(b.clone());
            sorter.spill(&mut buf, &mut dir).unwrap();
        }
        let mut merged = Vec::new();
        sorter
            .drain(&mut buf, &mut dir, &mut |b| {
                merged.push(b.clone());
                Ok(())
            })
            .unwrap();
        let all = concat_batches(&arrow_schema, &inputs).unwrap();
        let once = sorter.sort(&all).unwrap();
        let merged = concat_batches(&arrow_schema, &merged).unwrap();
        let show = |b: &RecordBatch| {
            let f = b.column(0).as_primitive::<arrow_array::types::Float64Type>();
            let s = b.column(1).as_string::<i32>();
            (0..b.num_rows())
                .map(|i| {
                    (
                        f.is_valid(i).then(|| f.value(i).to_bits()),
                        s.is_valid(i).then(|| s.value(i).to_string()),
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(show(&merged), show(&once), "{d1:?} {n1:?}");
    }
}

#[test]
fn a_custom_order_is_checked_before_any_row_and_keeps_its_id() {
    // A rewrite's custom order that is none of the table's orders is recorded as id 0.
    let custom = SortOrder::new(
        0,
        vec![SortField::new(2, Transform::Truncate(2), SortDirection::Ascending, NullOrder::NullsFirst)],
    );
    let sorter = Sorter::try_new(&schema(), &custom, 1).unwrap().expect("a sorted order");
    assert_eq!(sorter.order_id, 0);
    let day_of_long = SortOrder::new(
        0,
        vec![SortField::new(1, Transform::Day, SortDirection::Ascending, NullOrder::NullsFirst)],
    );
    let msg = Sorter::try_new(&schema(), &day_of_long, 1).unwrap_err().to_string();
    assert!(msg.contains("applies to column 'k' of type long, found day"), "{msg}");
}
