//! Which columns of a Parquet file are dictionary encoded, decided as parquet-mr (Iceberg
//! Java's writer) decides it: a column keeps its dictionary only when, over its first page,
//! the dictionary plus the bit-packed indices are smaller than the plain values
//! (`DictionaryValuesWriter.isCompressionSatisfying`).
//!
//! arrow-rs has no such check: it dictionary-encodes every column until the dictionary
//! outgrows `write.parquet.dict-size-bytes` and keeps the pages written before the fallback.
//! A file of a partition holds a few tens of thousands of rows, so a unique column (an id, a
//! timestamp, a measure) never reaches the fallback and is stored as a dictionary of every
//! value plus an index per row: ~1.5x the plain size, and the file ~25% larger than Java's.
//!
//! The decision is per top-level primitive column, from a sample of the file's first rows
//! (the writer buffers up to a page's rows before it opens the Parquet writer). Nested
//! columns and booleans keep arrow-rs's default.

use std::collections::HashSet;

use arrow_array::types::{ByteArrayType, GenericBinaryType, GenericStringType};
use arrow_array::{Array, ArrayRef, FixedSizeBinaryArray, GenericByteArray, RecordBatch};
use arrow_schema::DataType;
use parquet::basic::Type as PhysicalType;
use parquet::schema::types::{ColumnPath, SchemaDescriptor};

/// `(column, use a dictionary)` for every top-level primitive column of `sample` that has
/// values; the others are left to the writer's default.
pub fn dictionary_choices(sample: &RecordBatch, descr: &SchemaDescriptor) -> Vec<(ColumnPath, bool)> {
    let mut out = Vec::new();
    for leaf in descr.columns() {
        let parts = leaf.path().parts();
        if parts.len() != 1 {
            continue;
        }
        let Some(column) = sample.column_by_name(&parts[0]) else {
            continue;
        };
        let width = match leaf.physical_type() {
            PhysicalType::INT32 | PhysicalType::FLOAT => Some(4),
            PhysicalType::INT64 | PhysicalType::DOUBLE => Some(8),
            PhysicalType::INT96 => Some(12),
            PhysicalType::FIXED_LEN_BYTE_ARRAY => usize::try_from(leaf.type_length()).ok(),
            PhysicalType::BYTE_ARRAY => None,
            PhysicalType::BOOLEAN => continue,
        };
        if let Some(sizes) = value_sizes(column, width) {
            if sizes.values > 0 {
                out.push((leaf.path().clone(), sizes.dictionary_pays()));
            }
        }
    }
    out
}

/// What a column's sampled values would take plain and as a dictionary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ValueSizes {
    /// Non-null values.
    values: usize,
    distinct: usize,
    /// The values PLAIN encoded (a byte array's length prefix included).
    plain: usize,
    /// The distinct values PLAIN encoded: the dictionary page.
    dictionary: usize,
}

impl ValueSizes {
    /// parquet-mr's rule: indices bit-packed at the dictionary's bit width plus the
    /// dictionary must be smaller than the plain values.
    fn dictionary_pays(&self) -> bool {
        let bit_width = usize::BITS - self.distinct.saturating_sub(1).leading_zeros();
        let indices = (self.values * bit_width as usize).div_ceil(8);
        indices + self.dictionary < self.plain
    }
}

/// The sizes of `array`'s values, stored `width` bytes each (`None`: a length-prefixed byte
/// array); `None` for an Arrow type this does not look into.
fn value_sizes(array: &ArrayRef, width: Option<usize>) -> Option<ValueSizes> {
    match (array.data_type(), width) {
        (DataType::Utf8, None) => {
            Some(byte_sizes(array.as_any().downcast_ref::<GenericByteArray<GenericStringType<i32>>>()?))
        }
        (DataType::LargeUtf8, None) => {
            Some(byte_sizes(array.as_any().downcast_ref::<GenericByteArray<GenericStringType<i64>>>()?))
        }
        (DataType::Binary, None) => {
            Some(byte_sizes(array.as_any().downcast_ref::<GenericByteArray<GenericBinaryType<i32>>>()?))
        }
        (DataType::LargeBinary, None) => {
            Some(byte_sizes(array.as_any().downcast_ref::<GenericByteArray<GenericBinaryType<i64>>>()?))
        }
        (DataType::FixedSizeBinary(_), Some(w)) => {
            let a = array.as_any().downcast_ref::<FixedSizeBinaryArray>()?;
            Some(fixed_sizes((0..a.len()).filter(|i| a.is_valid(*i)).map(|i| a.value(i)), w))
        }
        (t, Some(w)) if t.is_primitive() => {
            let data = array.to_data();
            let stride = t.primitive_width()?;
            let buffer = data.buffers().first()?.as_slice();
            let start = data.offset() * stride;
            let values = buffer.get(start..start + data.len() * stride)?;
            let valid = |i: &usize| data.nulls().is_none_or(|n| n.is_valid(*i));
            Some(fixed_sizes((0..data.len()).filter(valid).map(|i| &values[i * stride..(i + 1) * stride]), w))
        }
        _ => None,
    }
}

fn fixed_sizes<'a>(values: impl Iterator<Item = &'a [u8]>, width: usize) -> ValueSizes {
    let mut seen: HashSet<&[u8]> = HashSet::new();
    let mut n = 0;
    for v in values {
        seen.insert(v);
        n += 1;
    }
    ValueSizes { values: n, distinct: seen.len(), plain: n * width, dictionary: seen.len() * width }
}

fn byte_sizes<T: ByteArrayType>(array: &GenericByteArray<T>) -> ValueSizes {
    let mut seen: HashSet<&[u8]> = HashSet::new();
    let (mut n, mut plain, mut dictionary) = (0, 0, 0);
    for i in (0..array.len()).filter(|i| array.is_valid(*i)) {
        let v: &[u8] = array.value(i).as_ref();
        n += 1;
        plain += 4 + v.len();
        if seen.insert(v) {
            dictionary += 4 + v.len();
        }
    }
    ValueSizes { values: n, distinct: seen.len(), plain, dictionary }
}

#[cfg(test)]
#[path = "dictionary_tests.rs"]
mod tests;
