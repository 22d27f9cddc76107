use std::sync::Arc;

use arrow_array::{
    BooleanArray, Decimal128Array, FixedSizeBinaryArray, Float64Array, Int32Array, Int64Array, ListArray,
    RecordBatch, StringArray,
};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, Field, Schema as ArrowSchema};
use parquet::arrow::ArrowSchemaConverter;

use super::*;

fn choices(columns: Vec<(&str, ArrayRef)>) -> Vec<(String, bool)> {
    let fields: Vec<Field> =
        columns.iter().map(|(n, a)| Field::new(*n, a.data_type().clone(), true)).collect();
    let schema = Arc::new(ArrowSchema::new(fields));
    let batch = RecordBatch::try_new(schema.clone(), columns.into_iter().map(|(_, a)| a).collect()).unwrap();
    let descr = ArrowSchemaConverter::new().convert(&schema).unwrap();
    dictionary_choices(&batch, &descr).into_iter().map(|(c, d)| (c.string(), d)).collect()
}

#[test]
fn unique_values_are_plain_repeated_values_keep_their_dictionary() {
    let n = 20_000;
    let got = choices(vec![
        ("id", Arc::new(Int64Array::from_iter_values(0..n))),
        ("qty", Arc::new(Int32Array::from_iter_values((0..n as i32).map(|i| i % 100)))),
        ("amount", Arc::new(Float64Array::from_iter_values((0..n).map(|i| i as f64 * 0.37)))),
        ("name", Arc::new(StringArray::from_iter_values((0..n).map(|i| format!("user_{}", i % 50))))),
        ("uid", Arc::new(StringArray::from_iter_values((0..n).map(|i| format!("unique-{i}"))))),
    ]);
    assert_eq!(
        got,
        vec![
            ("id".to_string(), false),
            ("qty".to_string(), true),
            ("amount".to_string(), false),
            ("name".to_string(), true),
            ("uid".to_string(), false),
        ]
    );
}

#[test]
fn the_rule_is_parquet_mrs_indices_plus_dictionary_below_plain() {
    // 1,000 longs with 500 distinct values: dictionary 4,000 B + 1,000 x 9 bits = 1,125 B
    // = 5,125 B < 8,000 B plain. With 900 distinct: 7,200 + 1,250 = 8,450 B > 8,000 B.
    let col = |distinct: i64| -> ArrayRef {
        Arc::new(Int64Array::from_iter_values((0..1000).map(|i| i % distinct)))
    };
    assert_eq!(choices(vec![("a", col(500))]), vec![("a".to_string(), true)]);
    assert_eq!(choices(vec![("a", col(900))]), vec![("a".to_string(), false)]);
    // One value: a zero bit width, the dictionary pays from two rows on.
    assert_eq!(choices(vec![("a", col(1))]), vec![("a".to_string(), true)]);
}

#[test]
fn nulls_are_not_values_and_a_column_without_values_is_left_alone() {
    let mostly_null: ArrayRef =
        Arc::new(Int64Array::from_iter((0..1000).map(|i| if i % 10 == 0 { Some(i) } else { None })));
    let all_null: ArrayRef = Arc::new(Int64Array::from(vec![None::<i64>; 1000]));
    // 100 distinct of 100 values: plain.
    assert_eq!(choices(vec![("a", mostly_null), ("b", all_null)]), vec![("a".to_string(), false)]);
}

#[test]
fn sliced_arrays_count_only_their_own_values() {
    // The last 1,000 rows are one repeated value; the first 1,000 are unique.
    let a = Int64Array::from_iter_values((0..2000).map(|i| if i < 1000 { i } else { 7 }));
    let sliced: ArrayRef = Arc::new(a.slice(1000, 1000));
    assert_eq!(choices(vec![("a", sliced)]), vec![("a".to_string(), true)]);
}

#[test]
fn stored_width_is_the_parquet_type_not_the_arrow_one() {
    // decimal(9, 2) is stored as INT32: 4 bytes a value although Arrow holds 16. 800 distinct
    // of 1,000: 3,200 B + 1,000 x 10 bits = 4,450 B > 4,000 B plain (at Arrow's 16 B a value
    // it would be 14,050 B < 16,000 B, a dictionary).
    let dec: ArrayRef = Arc::new(
        Decimal128Array::from_iter_values((0..1000).map(|i| (i % 800) as i128))
            .with_precision_and_scale(9, 2)
            .unwrap(),
    );
    let fixed: ArrayRef =
        Arc::new(FixedSizeBinaryArray::try_from_iter((0..1000u32).map(|i| (i % 600).to_be_bytes())).unwrap());
    // 600 x 4 + 1,000 x 10 bits = 3,650 B < 4,000 B.
    assert_eq!(
        choices(vec![("dec", dec), ("fx", fixed)]),
        vec![("dec".to_string(), false), ("fx".to_string(), true)]
    );
}

#[test]
fn nested_and_boolean_columns_keep_the_default() {
    let values = Arc::new(Int64Array::from_iter_values(0..6));
    let item = Arc::new(Field::new("item", DataType::Int64, true));
    let list: ArrayRef =
        Arc::new(ListArray::try_new(item, OffsetBuffer::from_lengths([2, 2, 2]), values, None).unwrap());
    let flags: ArrayRef = Arc::new(BooleanArray::from(vec![true, false, true]));
    assert!(choices(vec![("l", list), ("b", flags)]).is_empty());
}
