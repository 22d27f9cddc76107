//! Distinct-value sketches of `apache-datasketches-theta-v1` statistics blobs (the Puffin
//! spec's NDV blob), as Iceberg Java's `compute_table_stats` makes them (`ThetaSketchAgg`):
//! an update sketch of Apache DataSketches' defaults (nominal entries 4096, seed 9001) fed
//! each non-null value as the bytes of Iceberg's single-value serialization of the column's
//! type as Spark sees it, and stored in DataSketches' compact ordered form.
//!
//! The sketch is the Apache DataSketches Rust component (`datasketches`): its raw-bytes
//! hashing is the Java library's `update(byte[])`, so a sketch made here of the same values
//! holds the same hashes as Java's (byte for byte in exact mode, below 4096 distinct values).
//! As Java's, an empty byte string is not counted (DataSketches rejects empty input).
//!
//! The bytes per type, as `Conversions.toByteBuffer` of the Spark type's Iceberg type: int and
//! date 4 bytes little-endian; long, time and timestamps (microseconds) 8 bytes
//! little-endian; float and double their IEEE bits little-endian; boolean one byte; string
//! UTF-8; binary and fixed as they are; decimal the unscaled value's minimal two's-complement
//! big-endian bytes (Java's `BigInteger.toByteArray`). Spark reads a `uuid` column as a string
//! and a nanosecond timestamp as microseconds, so those are hashed so too.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int32Type, Int64Type, Time64MicrosecondType,
    TimestampMicrosecondType, TimestampNanosecondType,
};
use arrow_array::Array;
use arrow_schema::{DataType, TimeUnit};
use datasketches::hash::value::raw_bytes;
use datasketches::theta::{CompactThetaSketch, ThetaSketch, ThetaSketchBuilder, ThetaUnionBuilder};

use crate::error::{not_supported, Error, ErrorKind, Result};

/// The Puffin blob type of a theta sketch.
pub const APACHE_DATASKETCHES_THETA_V1: &str = "apache-datasketches-theta-v1";

/// The blob property holding the sketch's estimate, rounded down (Java's `ndv`).
pub const NDV: &str = "ndv";

/// The distinct-value sketch of one column.
pub struct NdvSketch {
    sketch: ThetaSketch,
    /// The column's Iceberg type name (`uuid`, `timestamp_ns`, ...; see the module doc).
    iceberg_type: String,
}

impl std::fmt::Debug for NdvSketch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NdvSketch").field("iceberg_type", &self.iceberg_type).finish_non_exhaustive()
    }
}

impl NdvSketch {
    /// An empty sketch for a column of Iceberg type `iceberg_type` (its JSON name).
    pub fn new(iceberg_type: &str) -> Result<Self> {
        let sketch = ThetaSketchBuilder::default()
            .build()
            .map_err(|e| Error::new(ErrorKind::Internal, format!("cannot make a theta sketch: {e}")))?;
        Ok(NdvSketch { sketch, iceberg_type: iceberg_type.to_string() })
    }

    fn add(&mut self, bytes: &[u8]) {
        if !bytes.is_empty() {
            self.sketch.update(raw_bytes::from_slice(bytes));
        }
    }

    /// Adds the non-null values of `array` (the column as Arrow reads it).
    pub fn update(&mut self, array: &dyn Array) -> Result<()> {
        let valid = |i: usize| array.is_valid(i);
        match array.data_type() {
            DataType::Boolean => {
                let a = array.as_boolean();
                for i in (0..a.len()).filter(|&i| valid(i)) {
                    self.add(&[u8::from(a.value(i))]);
                }
            }
            DataType::Int32 => self.each_le(array.as_primitive::<Int32Type>(), i32::to_le_bytes),
            DataType::Date32 => self.each_le(array.as_primitive::<Date32Type>(), i32::to_le_bytes),
            DataType::Int64 => self.each_le(array.as_primitive::<Int64Type>(), i64::to_le_bytes),
            DataType::Time64(TimeUnit::Microsecond) => {
                self.each_le(array.as_primitive::<Time64MicrosecondType>(), i64::to_le_bytes);
            }
            DataType::Timestamp(TimeUnit::Microsecond, _) => {
                self.each_le(array.as_primitive::<TimestampMicrosecondType>(), i64::to_le_bytes);
            }
            DataType::Timestamp(TimeUnit::Nanosecond, _) => {
                // Spark reads nanoseconds as microseconds (rounded down).
                self.each_le(array.as_primitive::<TimestampNanosecondType>(), |v| {
                    v.div_euclid(1000).to_le_bytes()
                });
            }
            DataType::Float32 => self.each_le(array.as_primitive::<Float32Type>(), f32::to_le_bytes),
            DataType::Float64 => self.each_le(array.as_primitive::<Float64Type>(), f64::to_le_bytes),
            DataType::Decimal128(_, _) => {
                let a = array.as_primitive::<Decimal128Type>();
                for i in (0..a.len()).filter(|&i| valid(i)) {
                    self.add(&minimal_twos_complement(a.value(i)));
                }
            }
            DataType::Utf8 => self.each_bytes(array.as_string::<i32>().iter().map(|v| v.map(str::as_bytes))),
            DataType::LargeUtf8 => {
                self.each_bytes(array.as_string::<i64>().iter().map(|v| v.map(str::as_bytes)));
            }
            DataType::Utf8View => {
                self.each_bytes(array.as_string_view().iter().map(|v| v.map(str::as_bytes)))
            }
            DataType::Binary => self.each_bytes(array.as_binary::<i32>().iter()),
            DataType::LargeBinary => self.each_bytes(array.as_binary::<i64>().iter()),
            DataType::BinaryView => self.each_bytes(array.as_binary_view().iter()),
            DataType::FixedSizeBinary(16) if self.iceberg_type == "uuid" => {
                // Spark reads a uuid as its canonical string.
                let a = array.as_fixed_size_binary();
                for i in (0..a.len()).filter(|&i| valid(i)) {
                    let text = uuid::Uuid::from_slice(a.value(i))
                        .map_err(|e| Error::new(ErrorKind::InvalidData, format!("bad uuid value: {e}")))?
                        .hyphenated()
                        .to_string();
                    self.add(text.as_bytes());
                }
            }
            DataType::FixedSizeBinary(_) => {
                let a = array.as_fixed_size_binary();
                for i in (0..a.len()).filter(|&i| valid(i)) {
                    self.add(a.value(i));
                }
            }
            other => {
                return Err(not_supported(format!(
                    "a distinct-value sketch of a {} column (Arrow {other}): only primitive columns \
                     have one",
                    self.iceberg_type
                )))
            }
        }
        Ok(())
    }

    fn each_le<T, const N: usize>(
        &mut self,
        a: &arrow_array::PrimitiveArray<T>,
        bytes: impl Fn(T::Native) -> [u8; N],
    ) where
        T: arrow_array::ArrowPrimitiveType,
    {
        for i in 0..a.len() {
            if a.is_valid(i) {
                self.add(&bytes(a.value(i)));
            }
        }
    }

    fn each_bytes<'a>(&mut self, values: impl Iterator<Item = Option<&'a [u8]>>) {
        for v in values.flatten() {
            self.add(v);
        }
    }

    /// The sketch's distinct-value estimate.
    pub fn estimate(&self) -> f64 {
        self.sketch.estimate()
    }

    /// The sketch in DataSketches' compact ordered serialized form (what the blob holds).
    pub fn to_compact_bytes(&self) -> Vec<u8> {
        self.sketch.compact(true).serialize()
    }
}

/// The estimate of a serialized compact theta sketch (a blob's bytes).
pub fn compact_estimate(bytes: &[u8]) -> Result<f64> {
    Ok(deserialize_compact(bytes)?.estimate())
}

fn deserialize_compact(bytes: &[u8]) -> Result<CompactThetaSketch> {
    CompactThetaSketch::deserialize(bytes).map_err(|e| {
        Error::new(
            ErrorKind::InvalidData,
            format!("expected a compact theta sketch, found bytes that are not one: {e}"),
        )
        .with_context("blob type", APACHE_DATASKETCHES_THETA_V1)
    })
}

/// The union of serialized compact theta sketches of one column (the per-task sketches that
/// `compute_table_stats` makes on Spark's executors, as Java's `ThetaSketchAgg` merges its
/// partitions' sketches): the union's compact ordered bytes and its estimate. A union of the
/// same defaults as `NdvSketch` (nominal entries 4096, seed 9001), so in exact mode the result
/// is byte for byte the sketch of all the values at once. Of no sketches: the empty sketch.
pub fn union_compact<'a>(sketches: impl IntoIterator<Item = &'a [u8]>) -> Result<(Vec<u8>, f64)> {
    let mut union = ThetaUnionBuilder::default()
        .build()
        .map_err(|e| Error::new(ErrorKind::Internal, format!("cannot make a theta union: {e}")))?;
    for (i, bytes) in sketches.into_iter().enumerate() {
        let sketch = deserialize_compact(bytes).map_err(|e| e.with_context("sketch", i.to_string()))?;
        union.update(&sketch).map_err(|e| {
            Error::new(ErrorKind::InvalidData, format!("expected a sketch of seed 9001 to merge, found: {e}"))
                .with_context("sketch", i.to_string())
        })?;
    }
    let result = union.to_sketch(true);
    Ok((result.serialize(), result.estimate()))
}

/// Java's `BigInteger.toByteArray` of `v`: big-endian two's complement, as few bytes as hold
/// the sign (at least one).
fn minimal_twos_complement(v: i128) -> Vec<u8> {
    let bytes = v.to_be_bytes();
    // A leading byte is redundant when it only repeats the sign of the byte after it.
    let redundant = bytes
        .windows(2)
        .take_while(|w| {
            matches!(*w, [0x00, next] if next & 0x80 == 0) || matches!(*w, [0xFF, next] if next & 0x80 != 0)
        })
        .count();
    bytes.iter().skip(redundant).copied().collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int64Array, StringArray};

    use super::*;

    #[test]
    fn decimal_bytes_are_javas_big_integer_bytes() {
        assert_eq!(minimal_twos_complement(0), vec![0x00]);
        assert_eq!(minimal_twos_complement(127), vec![0x7F]);
        assert_eq!(minimal_twos_complement(128), vec![0x00, 0x80]);
        assert_eq!(minimal_twos_complement(-1), vec![0xFF]);
        assert_eq!(minimal_twos_complement(-128), vec![0x80]);
        assert_eq!(minimal_twos_complement(-129), vec![0xFF, 0x7F]);
        assert_eq!(minimal_twos_complement(1234), vec![0x04, 0xD2]);
    }

    #[test]
    fn counts_distinct_non_null_non_empty_values() {
        let mut s = NdvSketch::new("long").unwrap();
        let a: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), Some(2), None, Some(2), Some(3)]));
        s.update(a.as_ref()).unwrap();
        assert_eq!(s.estimate(), 3.0);
        let mut t = NdvSketch::new("string").unwrap();
        let b: ArrayRef = Arc::new(StringArray::from(vec![Some("a"), Some(""), Some("a"), None, Some("b")]));
        t.update(b.as_ref()).unwrap();
        assert_eq!(t.estimate(), 2.0); // the empty string is not counted, as in Java
        let bytes = t.to_compact_bytes();
        assert_eq!(compact_estimate(&bytes).unwrap(), 2.0);
    }

    #[test]
    fn nested_columns_are_refused() {
        let mut s = NdvSketch::new("list").unwrap();
        let a: ArrayRef = Arc::new(arrow_array::ListArray::new_null(
            Arc::new(arrow_schema::Field::new("element", DataType::Int32, true)),
            2,
        ));
        let err = s.update(a.as_ref()).unwrap_err();
        assert!(err.to_string().contains("only primitive columns"), "{err}");
    }

    #[test]
    fn garbage_is_not_a_sketch() {
        assert!(compact_estimate(b"not a sketch").is_err());
        let good = NdvSketch::new("long").unwrap().to_compact_bytes();
        let err = union_compact([good.as_slice(), b"not a sketch".as_slice()]).unwrap_err();
        assert!(err.to_string().contains("sketch") && err.to_string().contains('1'), "{err}");
    }

    fn sketch_of(values: std::ops::Range<i64>) -> NdvSketch {
        let mut s = NdvSketch::new("long").unwrap();
        let a: ArrayRef = Arc::new(Int64Array::from_iter_values(values));
        s.update(a.as_ref()).unwrap();
        s
    }

    #[test]
    fn a_union_of_parts_is_the_sketch_of_the_whole() {
        // Exact mode (below 4096 distinct values): the very bytes of one sketch of all values.
        let parts = [sketch_of(0..1500), sketch_of(1000..3000), sketch_of(2500..3500)];
        let bytes: Vec<Vec<u8>> = parts.iter().map(NdvSketch::to_compact_bytes).collect();
        let (union, estimate) = union_compact(bytes.iter().map(Vec::as_slice)).unwrap();
        assert_eq!(estimate, 3500.0);
        assert_eq!(union, sketch_of(0..3500).to_compact_bytes());
        // Estimation mode: within the sketch's error (~1.6% at one standard deviation).
        let parts = [sketch_of(0..60_000), sketch_of(40_000..100_000)];
        let bytes: Vec<Vec<u8>> = parts.iter().map(NdvSketch::to_compact_bytes).collect();
        let (union, estimate) = union_compact(bytes.iter().map(Vec::as_slice)).unwrap();
        assert!((estimate - 100_000.0).abs() < 5_000.0, "{estimate}");
        assert_eq!(compact_estimate(&union).unwrap(), estimate);
        // Of nothing: the empty sketch.
        let (empty, estimate) = union_compact(std::iter::empty()).unwrap();
        assert_eq!(estimate, 0.0);
        assert_eq!(compact_estimate(&empty).unwrap(), 0.0);
    }
}
