//! Z-order (`rewrite_data_files(strategy="sort", sort_order="zorder(a, b)")`): the z-value of a
//! row is the bits of its columns' order-preserving bytes interleaved, so that sorting by it
//! clusters rows close in every column at once, and files written from the sorted rows have
//! narrow bounds on each column.
//!
//! Byte-for-byte the z-values Iceberg Java's Spark rewrite sorts by (`ZOrderByteUtils` as its
//! `SparkZOrderUDF` applies it to the columns Spark reads), checked against Java's own UDF in
//! `tests/maintenance/test_rewrite_zorder.py`:
//!
//! - every type contributes 8 bytes except string, binary (and what Spark reads as them: uuid
//!   as its text form, fixed), which contribute `var-length-contribution` bytes (default 8),
//!   truncated (a string at a character boundary, as Java's UTF-8 encoder stops) or padded
//!   with zero bytes;
//! - int, long: big-endian with the sign bit flipped; float, double: the double's bits (NaN
//!   canonical) with the sign bit flipped for positives and all bits for negatives;
//!   boolean: `0x81` then zeros for true, zeros for false;
//! - timestamptz: seconds (Spark's cast of a timestamp to a long floors), timestamp (Spark's
//!   `timestamp_ntz`): microseconds; date: days since 1970-01-01, as Java on Spark 4 (Spark
//!   3.5 casts a date to a null long, so Java there gives every date zero bytes: an accident
//!   of Spark's legacy cast that z-orders nothing by the date, not followed);
//! - null: zero bytes;
//! - the columns' bytes interleaved one bit at a time, most significant first, column after
//!   column, a column that has no byte left at a position skipped, into
//!   `min(sum of contributions, max-output-size)` bytes.
//!
//! decimal, time, nanosecond timestamps and the rest have no z-order bytes in Java; they and
//! nested fields are refused before anything is read.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Array, AsArray, BinaryArray};
use arrow::datatypes::{
    DataType, Date32Type, Float32Type, Float64Type, Int32Type, Int64Type, TimeUnit, TimestampMicrosecondType,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};

use super::partitioner::{source_array, struct_path};
use crate::error::{invalid_data, validation, Result};
use crate::spec::{PrimitiveType, Schema};

/// Bytes a fixed-width column contributes (Java's `ZOrderByteUtils.PRIMITIVE_BUFFER_SIZE`).
pub const PRIMITIVE_BUFFER_SIZE: usize = 8;
/// Java's default `var-length-contribution`.
pub const DEFAULT_VAR_LENGTH_CONTRIBUTION: usize = PRIMITIVE_BUFFER_SIZE;
/// Java's default `max-output-size` (`Integer.MAX_VALUE`: every byte interleaved).
pub const DEFAULT_MAX_OUTPUT_SIZE: usize = i32::MAX as usize;

/// The longest z-value made (a row's interleaved bytes); Java has no bound but its memory.
pub const MAX_Z_VALUE_BYTES: usize = 1 << 20;

/// A z-order over top-level columns of a table (by field id) with Java's two options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZOrder {
    pub source_ids: Vec<i32>,
    pub var_length_contribution: usize,
    pub max_output_size: usize,
}

impl ZOrder {
    /// Checks the options as Java does: both at least 1, and at least one column.
    pub fn new(source_ids: Vec<i32>, var_length_contribution: i64, max_output_size: i64) -> Result<Self> {
        if source_ids.is_empty() {
            return Err(validation("zorder(...): expected at least one column, found none"));
        }
        let at_least_one = |key: &str, v: i64| {
            usize::try_from(v).ok().filter(|n| *n >= 1).ok_or_else(|| {
                validation(format!("zorder(...): expected '{key}' of at least 1 byte, found {v}"))
            })
        };
        Ok(ZOrder {
            source_ids,
            var_length_contribution: at_least_one("var-length-contribution", var_length_contribution)?,
            max_output_size: at_least_one("max-output-size", max_output_size)?,
        })
    }

    /// From `{"source-ids": [1, 2], "var-length-contribution": 8, "max-output-size": 8}` (the
    /// options optional, Java's defaults).
    pub fn from_json(text: &str) -> Result<Self> {
        let v: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| invalid_data("expected a z-order as JSON").with_source(e))?;
        let ids = v.get("source-ids").and_then(|ids| ids.as_array()).ok_or_else(|| {
            invalid_data(format!("expected a z-order with a 'source-ids' list of field ids, found {v}"))
        })?;
        let source_ids = ids
            .iter()
            .map(|id| {
                id.as_i64().and_then(|i| i32::try_from(i).ok()).ok_or_else(|| {
                    invalid_data(format!("expected a field id in the z-order's 'source-ids', found {id}"))
                })
            })
            .collect::<Result<Vec<i32>>>()?;
        let size = |key: &str, default: usize| -> Result<i64> {
            match v.get(key) {
                None | Some(serde_json::Value::Null) => Ok(default as i64),
                Some(n) => n.as_i64().ok_or_else(|| {
                    invalid_data(format!("expected an integer for the z-order's '{key}', found {n}"))
                }),
            }
        };
        ZOrder::new(
            source_ids,
            size("var-length-contribution", DEFAULT_VAR_LENGTH_CONTRIBUTION)?,
            size("max-output-size", DEFAULT_MAX_OUTPUT_SIZE)?,
        )
    }

    /// The z-order bound to the columns of `schema`: each a top-level column of a type with
    /// z-order bytes.
    pub fn bind(&self, schema: &Schema) -> Result<BoundZOrder> {
        let mut columns = Vec::with_capacity(self.source_ids.len());
        let mut types = Vec::with_capacity(self.source_ids.len());
        for id in &self.source_ids {
            let (path, field) = struct_path(schema.fields(), *id).ok_or_else(|| {
                validation(format!("zorder(...): expected a column of the table, found field id {id}"))
            })?;
            if path.len() != 1 {
                return Err(validation(format!(
                    "zorder(...): expected a top-level column, found field '{}' (id {id}) inside a struct \
                     (Iceberg Java cannot z-order by it either)",
                    field.name
                )));
            }
            let ty = field.field_type.as_primitive().cloned().ok_or_else(|| {
                validation(format!(
                    "zorder(...): expected a column of a primitive type, found column '{}' of type {}",
                    field.name, field.field_type
                ))
            })?;
            columns.push(path);
            types.push((field.name.clone(), ty));
        }
        let plan = InterleavePlan::new(&types, self.var_length_contribution, self.max_output_size)?;
        let types = types.into_iter().map(|(_, t)| t).collect();
        Ok(BoundZOrder { columns, types, var_length_contribution: self.var_length_contribution, plan })
    }
}

fn unsupported(name: &str, ty: &PrimitiveType) -> crate::Error {
    validation(format!(
        "zorder(...): expected a column of type boolean, int, long, float, double, date, timestamp, \
         timestamptz, string, uuid, fixed or binary, found column '{name}' of type {ty} \
         (Iceberg Java: the type is unsupported in ZOrdering)"
    ))
}

/// The bytes a column of type `ty` contributes; `None` for a type Java cannot z-order.
pub fn contribution(ty: &PrimitiveType, var_length_contribution: usize) -> Option<usize> {
    use PrimitiveType as P;
    match ty {
        P::Boolean | P::Int | P::Long | P::Float | P::Double | P::Date | P::Timestamp | P::Timestamptz => {
            Some(PRIMITIVE_BUFFER_SIZE)
        }
        P::String | P::Uuid | P::Binary | P::Fixed(_) => Some(var_length_contribution),
        _ => None,
    }
}

/// A z-order bound to a schema: where its columns are and how their bits interleave.
#[derive(Debug, Clone)]
pub struct BoundZOrder {
    columns: Vec<Vec<usize>>,
    types: Vec<PrimitiveType>,
    var_length_contribution: usize,
    plan: InterleavePlan,
}

impl BoundZOrder {
    /// The z-value of each row of `batch` (rows of the bound schema, Arrow types as the
    /// writer conforms them).
    pub fn z_values(&self, batch: &RecordBatch) -> Result<ArrayRef> {
        let arrays =
            self.columns.iter().map(|path| source_array(batch, path)).collect::<Result<Vec<ArrayRef>>>()?;
        let columns: Vec<(&dyn Array, &PrimitiveType)> =
            arrays.iter().map(|a| a.as_ref()).zip(self.types.iter()).collect();
        z_values_with(&columns, self.var_length_contribution, &self.plan).map(|z| Arc::new(z) as ArrayRef)
    }
}

/// Z-values of rows whose columns are `columns` (each an Arrow array of the Iceberg type's
/// Arrow type: Int32 for int, Utf8 for string, FixedSizeBinary(16) for uuid, ...), as Java
/// computes them with its `var-length-contribution` and `max-output-size` options.
pub fn z_values(
    columns: &[(&dyn Array, &PrimitiveType)],
    var_length_contribution: usize,
    max_output_size: usize,
) -> Result<BinaryArray> {
    let types: Vec<(String, PrimitiveType)> =
        columns.iter().enumerate().map(|(i, (_, t))| (format!("#{}", i + 1), (*t).clone())).collect();
    let plan = InterleavePlan::new(&types, var_length_contribution, max_output_size)?;
    z_values_with(columns, var_length_contribution, &plan)
}

fn z_values_with(
    columns: &[(&dyn Array, &PrimitiveType)],
    var_length_contribution: usize,
    plan: &InterleavePlan,
) -> Result<BinaryArray> {
    let rows = columns.first().map_or(0, |(a, _)| a.len());
    let mut ordered = Vec::with_capacity(columns.len());
    for (array, ty) in columns {
        if array.len() != rows {
            return Err(invalid_data(format!(
                "z-order columns: expected {rows} rows in every column, found {}",
                array.len()
            )));
        }
        ordered.push(ordered_bytes(*array, ty, var_length_contribution)?);
    }
    let size = plan.output_size;
    let total = rows.checked_mul(size).filter(|t| i32::try_from(*t).is_ok()).ok_or_else(|| {
        invalid_data(format!(
            "z-values of {rows} rows of {size} bytes: expected at most {} bytes in one Arrow array",
            i32::MAX
        ))
    })?;
    let mut out = vec![0u8; total];
    for (row, z) in out.chunks_exact_mut(size.max(1)).enumerate().take(rows) {
        for s in &plan.spreads {
            let v = ordered[s.col][row * plan.widths[s.col] + s.byte];
            z[s.out_byte] |= s.table[usize::from(v)];
        }
    }
    let offsets =
        OffsetBuffer::new(ScalarBuffer::from((0..=rows).map(|i| (i * size) as i32).collect::<Vec<i32>>()));
    BinaryArray::try_new(offsets, Buffer::from_vec(out), None)
        .map_err(|e| invalid_data("cannot build the z-values array").with_source(e))
}

/// How a z-value is made from the columns' bytes. Output bit k comes from (column, byte, bit
/// of the byte) in Java's order (`ZOrderByteUtils.interleaveBits`): bit 7 of byte 0 of every
/// column, then bit 6, ..., then byte 1; a column narrower than the byte skipped; stopping at
/// the output size. Applied a source byte at a time: the bits of one source byte that land in
/// one output byte are looked up for all 256 values of the source byte at once.
#[derive(Debug, Clone)]
struct InterleavePlan {
    widths: Vec<usize>,
    output_size: usize,
    spreads: Vec<Spread>,
}

/// The part of source byte `byte` of column `col` that lands in output byte `out_byte`:
/// `table[v]` is what a source byte of value `v` sets there.
#[derive(Debug, Clone)]
struct Spread {
    col: usize,
    byte: usize,
    out_byte: usize,
    table: Box<[u8; 256]>,
}

impl InterleavePlan {
    /// `columns`: each column's name (for errors) and type.
    fn new(
        columns: &[(String, PrimitiveType)],
        var_length_contribution: usize,
        max_output_size: usize,
    ) -> Result<Self> {
        let widths = columns
            .iter()
            .map(|(name, t)| contribution(t, var_length_contribution).ok_or_else(|| unsupported(name, t)))
            .collect::<Result<Vec<usize>>>()?;
        if widths.is_empty() {
            return Err(validation("zorder(...): expected at least one column, found none"));
        }
        let output_size = widths.iter().fold(0usize, |a, w| a.saturating_add(*w)).min(max_output_size);
        if output_size > MAX_Z_VALUE_BYTES {
            return Err(validation(format!(
                "zorder(...): expected z-values of at most {MAX_Z_VALUE_BYTES} bytes (8 per column, \
                 'var-length-contribution' per string or binary column, at most 'max-output-size'), \
                 found {output_size}"
            )));
        }
        let widest = widths.iter().copied().max().unwrap_or(0);
        let mut bits = Vec::with_capacity(output_size * 8);
        'fill: for byte in 0..widest {
            for bit in (0..8u8).rev() {
                for (col, w) in widths.iter().enumerate() {
                    if bits.len() == output_size * 8 {
                        break 'fill;
                    }
                    if *w > byte {
                        bits.push((col, byte, bit));
                    }
                }
            }
        }
        let mut spreads: Vec<Spread> = Vec::new();
        let mut index: HashMap<(usize, usize, usize), usize> = HashMap::new();
        for (k, &(col, byte, bit)) in bits.iter().enumerate() {
            let out_byte = k / 8;
            let at = *index.entry((col, byte, out_byte)).or_insert_with(|| {
                spreads.push(Spread { col, byte, out_byte, table: Box::new([0u8; 256]) });
                spreads.len() - 1
            });
            for (v, slot) in spreads[at].table.iter_mut().enumerate() {
                if (v >> bit) & 1 == 1 {
                    *slot |= 0x80 >> (k % 8);
                }
            }
        }
        Ok(InterleavePlan { widths, output_size, spreads })
    }
}

/// The order-preserving bytes of every value of `array` (of Iceberg type `ty`), each
/// `contribution(ty)` bytes wide, one row after the other.
pub fn ordered_bytes(
    array: &dyn Array,
    ty: &PrimitiveType,
    var_length_contribution: usize,
) -> Result<Vec<u8>> {
    use PrimitiveType as P;
    let width = contribution(ty, var_length_contribution).ok_or_else(|| {
        validation(format!("z-order bytes: expected a type Iceberg Java can z-order, found {ty}"))
    })?;
    let mut out = vec![0u8; array.len() * width];
    let wrong = || {
        invalid_data(format!(
            "z-order bytes of a {ty} column: expected its Arrow type, found {}",
            array.data_type()
        ))
    };
    let chunks = out.chunks_exact_mut(width.max(1));
    match (ty, array.data_type()) {
        (P::Boolean, DataType::Boolean) => {
            let a = array.as_boolean();
            for (i, dst) in chunks.enumerate() {
                if a.is_valid(i) && a.value(i) {
                    dst[0] = 0x81; // Java's `(byte) -127`
                }
            }
        }
        (P::Int, DataType::Int32) => {
            let a = array.as_primitive::<Int32Type>();
            fill_long(a.nulls(), chunks, |i| i64::from(a.value(i)));
        }
        (P::Long, DataType::Int64) => {
            let a = array.as_primitive::<Int64Type>();
            fill_long(a.nulls(), chunks, |i| a.value(i));
        }
        (P::Float, DataType::Float32) => {
            let a = array.as_primitive::<Float32Type>();
            fill_double(a.nulls(), chunks, |i| f64::from(a.value(i)));
        }
        (P::Double, DataType::Float64) => {
            let a = array.as_primitive::<Float64Type>();
            fill_double(a.nulls(), chunks, |i| a.value(i));
        }
        // Java's z-value takes Spark's cast of a date to a long: its day count on Spark 4
        // (on Spark 3.5 that cast is null, so Java's z-values there hold zeros for dates).
        (P::Date, DataType::Date32) => {
            let a = array.as_primitive::<Date32Type>();
            fill_long(a.nulls(), chunks, |i| i64::from(a.value(i)));
        }
        (P::Timestamp, DataType::Timestamp(TimeUnit::Microsecond, None)) => {
            let a = array.as_primitive::<TimestampMicrosecondType>();
            fill_long(a.nulls(), chunks, |i| a.value(i));
        }
        (P::Timestamptz, DataType::Timestamp(TimeUnit::Microsecond, Some(_))) => {
            let a = array.as_primitive::<TimestampMicrosecondType>();
            fill_long(a.nulls(), chunks, |i| a.value(i).div_euclid(1_000_000));
        }
        (P::String, DataType::Utf8) => {
            let a = array.as_string::<i32>();
            fill_str(array, chunks, |i| a.value(i));
        }
        (P::String, DataType::LargeUtf8) => {
            let a = array.as_string::<i64>();
            fill_str(array, chunks, |i| a.value(i));
        }
        (P::String, DataType::Utf8View) => {
            let a = array.as_string_view();
            fill_str(array, chunks, |i| a.value(i));
        }
        (P::Uuid, DataType::FixedSizeBinary(16)) => {
            // Spark reads a uuid as the string of its canonical text form.
            let a = array.as_fixed_size_binary();
            let mut text = [0u8; uuid::fmt::Hyphenated::LENGTH];
            for (i, dst) in chunks.enumerate() {
                if a.is_valid(i) {
                    let id = uuid::Uuid::from_slice(a.value(i))
                        .map_err(|e| invalid_data("expected 16-byte uuid values").with_source(e))?;
                    let s = id.hyphenated().encode_lower(&mut text);
                    copy_truncated(s.as_bytes(), dst);
                }
            }
        }
        (P::Binary, DataType::Binary) => {
            let a = array.as_binary::<i32>();
            fill_bytes(array, chunks, |i| a.value(i));
        }
        (P::Binary, DataType::LargeBinary) => {
            let a = array.as_binary::<i64>();
            fill_bytes(array, chunks, |i| a.value(i));
        }
        (P::Binary, DataType::BinaryView) => {
            let a = array.as_binary_view();
            fill_bytes(array, chunks, |i| a.value(i));
        }
        (P::Binary | P::Fixed(_), DataType::FixedSizeBinary(_)) => {
            let a = array.as_fixed_size_binary();
            fill_bytes(array, chunks, |i| a.value(i));
        }
        _ => return Err(wrong()),
    }
    Ok(out)
}

/// Java's `wholeNumberOrderedBytes`: the long big-endian with its sign bit flipped.
fn long_bytes(v: i64) -> [u8; 8] {
    ((v as u64) ^ (1u64 << 63)).to_be_bytes()
}

/// Java's `floatingPointOrderedBytes`: `Double.doubleToLongBits` (one NaN), then the sign bit
/// flipped for positives, every bit for negatives.
fn double_bytes(v: f64) -> [u8; 8] {
    let bits = if v.is_nan() { 0x7ff8_0000_0000_0000u64 as i64 } else { v.to_bits() as i64 };
    let ordered = bits ^ ((bits >> 63) | i64::MIN);
    ordered.to_be_bytes()
}

fn fill_long<'a>(
    nulls: Option<&arrow_buffer::NullBuffer>,
    chunks: impl Iterator<Item = &'a mut [u8]>,
    value: impl Fn(usize) -> i64,
) {
    for (i, dst) in chunks.enumerate() {
        if nulls.is_none_or(|n| n.is_valid(i)) {
            dst.copy_from_slice(&long_bytes(value(i)));
        }
    }
}

fn fill_double<'a>(
    nulls: Option<&arrow_buffer::NullBuffer>,
    chunks: impl Iterator<Item = &'a mut [u8]>,
    value: impl Fn(usize) -> f64,
) {
    for (i, dst) in chunks.enumerate() {
        if nulls.is_none_or(|n| n.is_valid(i)) {
            dst.copy_from_slice(&double_bytes(value(i)));
        }
    }
}

/// Java's `stringToOrderedBytes`: the UTF-8 bytes of whole characters that fit, then zeros
/// (its encoder stops before a character that would overflow the buffer).
fn fill_str<'a, 'b>(
    array: &dyn Array,
    chunks: impl Iterator<Item = &'a mut [u8]>,
    value: impl Fn(usize) -> &'b str,
) {
    for (i, dst) in chunks.enumerate() {
        if array.is_valid(i) {
            let s = value(i);
            let mut end = s.len().min(dst.len());
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            dst[..end].copy_from_slice(&s.as_bytes()[..end]);
        }
    }
}

/// Java's `byteTruncateOrFill`: the first bytes, zero-padded.
fn fill_bytes<'a, 'b>(
    array: &dyn Array,
    chunks: impl Iterator<Item = &'a mut [u8]>,
    value: impl Fn(usize) -> &'b [u8],
) {
    for (i, dst) in chunks.enumerate() {
        if array.is_valid(i) {
            copy_truncated(value(i), dst);
        }
    }
}

fn copy_truncated(src: &[u8], dst: &mut [u8]) {
    let n = src.len().min(dst.len());
    dst[..n].copy_from_slice(&src[..n]);
}

#[cfg(test)]
#[path = "zorder_tests.rs"]
mod tests;
