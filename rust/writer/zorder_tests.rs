//! Z-order bytes and interleaving checked against the z-values Iceberg Java 1.12's
//! `SparkZOrderUDF` computed for the same values (Spark 3.5, read through the test oracle's JVM;
//! the Python test `tests/maintenance/test_rewrite_zorder.py` repeats the comparison live).

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, FixedSizeBinaryArray, Float32Array,
    Float64Array, Int32Array, Int64Array, StringArray, TimestampMicrosecondArray,
};

use super::*;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn column(array: &dyn Array, ty: PrimitiveType, var: usize) -> Vec<String> {
    let bytes = ordered_bytes(array, &ty, var).expect("ordered bytes");
    let width = contribution(&ty, var).expect("width");
    bytes.chunks(width).map(hex).collect()
}

fn zs(columns: &[(&dyn Array, &PrimitiveType)], var: usize, max: usize) -> Vec<String> {
    let z = z_values(columns, var, max).expect("z-values");
    (0..z.len()).map(|i| hex(z.value(i))).collect()
}

#[test]
fn whole_numbers_flip_the_sign_bit_like_java() {
    let ints = Int32Array::from(vec![Some(-2), Some(-1), Some(0), Some(1), Some(2), None]);
    let want = [
        "7ffffffffffffffe",
        "7fffffffffffffff",
        "8000000000000000",
        "8000000000000001",
        "8000000000000002",
        "0000000000000000",
    ];
    assert_eq!(column(&ints, PrimitiveType::Int, 8), want);
    let longs = Int64Array::from(vec![Some(-2), Some(-1), Some(0), Some(1), Some(2), None]);
    assert_eq!(column(&longs, PrimitiveType::Long, 8), want);
    let extremes = Int64Array::from(vec![i64::MIN, i64::MAX]);
    assert_eq!(column(&extremes, PrimitiveType::Long, 8), ["0000000000000000", "ffffffffffffffff"]);
}

#[test]
fn doubles_order_as_sign_magnitude_like_java() {
    let d = Float64Array::from(vec![
        Some(-2.0 / 3.0),
        Some(-1.0 / 3.0),
        Some(0.0),
        Some(1.0 / 3.0),
        Some(2.0 / 3.0),
        Some(f64::NAN),
        Some(-0.0),
        Some(f64::INFINITY),
        None,
        Some(f64::NEG_INFINITY),
    ]);
    assert_eq!(
        column(&d, PrimitiveType::Double, 8),
        [
            "401aaaaaaaaaaaaa",
            "402aaaaaaaaaaaaa",
            "8000000000000000",
            "bfd5555555555555",
            "bfe5555555555555",
            "fff8000000000000", // every NaN is Java's canonical one
            "7fffffffffffffff",
            "fff0000000000000",
            "0000000000000000",
            "000fffffffffffff",
        ]
    );
    // A float is widened to a double first (Java's `floatToOrderedBytes`).
    let f = Float32Array::from(vec![0.5f32, -0.5, f32::NAN]);
    assert_eq!(
        column(&f, PrimitiveType::Float, 8),
        ["bfe0000000000000", "401fffffffffffff", "fff8000000000000"]
    );
}

#[test]
fn strings_truncate_at_a_character_and_pad_with_zeros_like_java() {
    let s = StringArray::from(vec![Some("s-2"), Some("aaaaaaaé-2"), Some("😀-2"), None, Some("abcdefghij")]);
    assert_eq!(
        column(&s, PrimitiveType::String, 8),
        ["732d320000000000", "6161616161616100", "f09f98802d320000", "0000000000000000", "6162636465666768"]
    );
    assert_eq!(column(&s, PrimitiveType::String, 3), ["732d32", "616161", "000000", "000000", "616263"]);
}

#[test]
fn binary_fixed_and_uuid_bytes_like_java() {
    let b = BinaryArray::from(vec![Some("éabcdefgh-2".as_bytes()), Some(b"ab".as_slice()), None]);
    assert_eq!(
        column(&b, PrimitiveType::Binary, 8),
        ["c3a9616263646566", "6162000000000000", "0000000000000000"]
    );
    let fixed = FixedSizeBinaryArray::try_from_iter(vec![vec![1u8, 2, 3]].into_iter()).expect("fixed");
    assert_eq!(column(&fixed, PrimitiveType::Fixed(3), 4), ["01020300"]);
    // Spark reads a uuid as its text form, a string.
    let id = uuid::Uuid::parse_str("f79c3e09-677c-4bbd-a479-3f349cb785e7").expect("uuid");
    let uuids = FixedSizeBinaryArray::try_from_iter(vec![id.as_bytes().to_vec()].into_iter()).expect("uuids");
    assert_eq!(column(&uuids, PrimitiveType::Uuid, 10), [hex(b"f79c3e09-6")]);
}

#[test]
fn booleans_dates_and_timestamps_like_java_on_spark() {
    let b = BooleanArray::from(vec![Some(false), None, Some(true)]);
    assert_eq!(
        column(&b, PrimitiveType::Boolean, 8),
        ["0000000000000000", "0000000000000000", "8100000000000000"]
    );
    // Days since the epoch, as Java's UDF on Spark 4.1 (Spark 3.5 gives it null longs, zeros).
    let d = Date32Array::from(vec![Some(18260), Some(-1), None]);
    assert_eq!(
        column(&d, PrimitiveType::Date, 8),
        ["8000000000004754", "7fffffffffffffff", "0000000000000000"]
    );
    // timestamptz: Spark's cast to a long gives floored seconds; timestamp_ntz: microseconds.
    let tz = TimestampMicrosecondArray::from(vec![-1_000_001_000_000, -1, 1_999_999]).with_timezone("UTC");
    assert_eq!(
        column(&tz, PrimitiveType::Timestamptz, 8),
        ["7ffffffffff0bdbf", "7fffffffffffffff", "8000000000000001"]
    );
    let ntz = TimestampMicrosecondArray::from(vec![-2_000_000, 1_000_000]);
    assert_eq!(column(&ntz, PrimitiveType::Timestamp, 8), ["7fffffffffe17b80", "80000000000f4240"]);
}

#[test]
fn interleaving_and_its_options_like_java() {
    let i: ArrayRef = Arc::new(Int32Array::from(vec![-2, -1, 0, 1, 2]));
    let l: ArrayRef = Arc::new(Int64Array::from(vec![-2i64, -1, 0, 1, 2]));
    let cols = [(i.as_ref(), &PrimitiveType::Int), (l.as_ref(), &PrimitiveType::Long)];
    assert_eq!(
        zs(&cols, 8, DEFAULT_MAX_OUTPUT_SIZE),
        [
            "3ffffffffffffffffffffffffffffffc",
            "3fffffffffffffffffffffffffffffff",
            "c0000000000000000000000000000000",
            "c0000000000000000000000000000003",
            "c000000000000000000000000000000c",
        ]
    );
    // max-output-size: only the first bytes of the interleaving.
    assert_eq!(zs(&cols, 8, 3), ["3fffff", "3fffff", "c00000", "c00000", "c00000"]);
    // var-length-contribution 3: a 3-byte string column and an 8-byte int, the int's last
    // five bytes alone at the end.
    let s: ArrayRef = Arc::new(StringArray::from(vec!["s-2", "s-1", "s0", "s1", "s2"]));
    let cols = [(s.as_ref(), &PrimitiveType::String), (i.as_ref(), &PrimitiveType::Int)];
    assert_eq!(
        zs(&cols, 3, DEFAULT_MAX_OUTPUT_SIZE),
        [
            "3f5f5df75f5dfffffffffe",
            "3f5f5df75f57ffffffffff",
            "6a0a0a0000000000000000",
            "6a0a0a0200000000000001",
            "6a0a0a0800000000000002",
        ]
    );
}

#[test]
fn unsupported_types_and_bad_options_are_refused_naming_them() {
    let d =
        arrow::array::Decimal128Array::from(vec![1i128]).with_precision_and_scale(10, 2).expect("decimal");
    let ty = PrimitiveType::Decimal { precision: 10, scale: 2 };
    let err = z_values(&[(&d, &ty)], 8, 8).expect_err("decimal");
    assert!(err.to_string().contains("found column '#1' of type decimal(10, 2)"), "{err}");
    let err = ZOrder::new(vec![1], 0, 8).expect_err("var 0");
    assert!(err.to_string().contains("'var-length-contribution' of at least 1 byte, found 0"), "{err}");
    let err = ZOrder::from_json(r#"{"source-ids": [1], "max-output-size": -3}"#).expect_err("max");
    assert!(err.to_string().contains("'max-output-size' of at least 1 byte, found -3"), "{err}");
    let s = StringArray::from(vec!["x"]);
    let err = z_values(&[(&s, &PrimitiveType::String)], 1 << 30, DEFAULT_MAX_OUTPUT_SIZE).expect_err("huge");
    assert!(err.to_string().contains("z-values of at most 1048576 bytes"), "{err}");
    let i = Int32Array::from(vec![1]);
    let err = ordered_bytes(&i, &PrimitiveType::Long, 8).expect_err("wrong arrow type");
    assert!(err.to_string().contains("expected its Arrow type, found Int32"), "{err}");
}
