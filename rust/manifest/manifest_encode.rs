//! Encoding manifest entries as v2 Avro records, field for field in Iceberg Java's order.

use std::collections::BTreeMap;

use super::avro::{write_bytes, write_long, write_opt};
use super::data_file::{
    EMPTY_COLUMN_SIZES, EMPTY_LOWER_BOUNDS, EMPTY_NAN_VALUE_COUNTS, EMPTY_NULL_VALUE_COUNTS,
    EMPTY_UPPER_BOUNDS, EMPTY_VALUE_COUNTS,
};
use super::manifest_entry::ManifestEntry;
use crate::error::{validation, Result};
use crate::spec::{Literal, PrimitiveType, StructType, Type};

/// Bytes Java uses for a decimal of this precision as Avro fixed (`TypeUtil.decimalRequiredBytes`).
pub(crate) fn decimal_required_bytes(precision: u32) -> usize {
    (1..=16usize)
        .find(|n| {
            let max_digits = ((8 * n - 1) as f64 * std::f64::consts::LOG10_2).floor() as u32;
            precision <= max_digits
        })
        .unwrap_or(16)
}

fn encode_partition_value(out: &mut Vec<u8>, v: &Literal, ty: &PrimitiveType) -> Result<()> {
    match (v, ty) {
        (Literal::Boolean(b), PrimitiveType::Boolean) => out.push(u8::from(*b)),
        (Literal::Int(x), PrimitiveType::Int) | (Literal::Date(x), PrimitiveType::Date) => {
            write_long(out, i64::from(*x))
        }
        (Literal::Long(x), PrimitiveType::Long)
        | (Literal::Time(x), PrimitiveType::Time)
        | (Literal::Timestamp(x), PrimitiveType::Timestamp)
        | (Literal::Timestamptz(x), PrimitiveType::Timestamptz)
        | (Literal::TimestampNs(x), PrimitiveType::TimestampNs)
        | (Literal::TimestamptzNs(x), PrimitiveType::TimestamptzNs) => write_long(out, *x),
        (Literal::Float(x), PrimitiveType::Float) => out.extend_from_slice(&x.to_le_bytes()),
        (Literal::Double(x), PrimitiveType::Double) => out.extend_from_slice(&x.to_le_bytes()),
        (Literal::String(s), PrimitiveType::String) => write_bytes(out, s.as_bytes()),
        (Literal::Uuid(u), PrimitiveType::Uuid) => out.extend_from_slice(&u.to_be_bytes()),
        (Literal::Fixed(b), PrimitiveType::Fixed(l)) if b.len() as u64 == *l => out.extend_from_slice(b),
        (Literal::Binary(b), PrimitiveType::Binary) => write_bytes(out, b),
        (Literal::Decimal(x), PrimitiveType::Decimal { precision, .. }) => {
            let n = decimal_required_bytes(*precision);
            let full = x.to_be_bytes();
            let (head, tail) = full.split_at(16 - n);
            let fill = if *x < 0 { 0xff } else { 0x00 };
            if head.iter().any(|b| *b != fill) || (tail[0] & 0x80 != 0) != (*x < 0) {
                return Err(validation(format!("decimal unscaled value {x} does not fit {ty}")));
            }
            out.extend_from_slice(tail);
        }
        _ => return Err(validation(format!("partition value {v:?} is not a {ty}"))),
    }
    Ok(())
}

/// A metric map: null when it has no entries, unless the file's manifest held it as an empty
/// map (`present`: Java writes `nan_value_counts` so for a file without float columns).
fn encode_count_map(out: &mut Vec<u8>, m: &BTreeMap<i32, i64>, present: bool) {
    write_opt(out, (present || !m.is_empty()).then_some(m), |out, m| {
        if !m.is_empty() {
            write_long(out, m.len() as i64);
            for (k, v) in m {
                write_long(out, i64::from(*k));
                write_long(out, *v);
            }
        }
        write_long(out, 0);
    });
}

fn encode_bytes_map(out: &mut Vec<u8>, m: &BTreeMap<i32, Vec<u8>>, present: bool) {
    write_opt(out, (present || !m.is_empty()).then_some(m), |out, m| {
        if !m.is_empty() {
            write_long(out, m.len() as i64);
            for (k, v) in m {
                write_long(out, i64::from(*k));
                write_bytes(out, v);
            }
        }
        write_long(out, 0);
    });
}

fn encode_list<T: Copy>(out: &mut Vec<u8>, v: Option<&Vec<T>>, to_i64: impl Fn(T) -> i64) {
    write_opt(out, v, |out, v| {
        if !v.is_empty() {
            write_long(out, v.len() as i64);
            for x in v {
                write_long(out, to_i64(*x));
            }
        }
        write_long(out, 0);
    });
}

/// Encodes one v2 (or, with `v3`, v3) `manifest_entry` in Java's field order.
pub(crate) fn encode_entry(
    out: &mut Vec<u8>,
    e: &ManifestEntry,
    partition_type: &StructType,
    v3: bool,
) -> Result<()> {
    let f = &e.data_file;
    write_long(out, e.status as i64);
    write_opt(out, e.snapshot_id, write_long);
    write_opt(out, e.sequence_number, write_long);
    write_opt(out, e.file_sequence_number, write_long);
    // data_file (r2): 134, 100, 101, 102, 103, 104, 108, 109, 110, 137, 125, 128, 131, 132, 135, 140,
    // (v3: 142), 143, (v3: 144, 145)
    write_long(out, f.content as i64);
    write_bytes(out, f.file_path.as_bytes());
    write_bytes(out, f.file_format.as_str().as_bytes());
    if f.partition.len() != partition_type.fields.len() {
        return Err(validation(format!(
            "data file {} has {} partition values, the spec has {} fields",
            f.file_path,
            f.partition.len(),
            partition_type.fields.len()
        )));
    }
    for (v, field) in f.partition.iter().zip(&partition_type.fields) {
        if field.field_type == Type::Primitive(PrimitiveType::Unknown) {
            // Avro `null`: no bytes. A field whose source column was dropped (Java types it
            // `unknown` and writes its values as null, as here).
            continue;
        }
        match v {
            None => write_long(out, 0),
            Some(v) => {
                write_long(out, 1);
                let ty = field.field_type.as_primitive().ok_or_else(|| {
                    validation(format!("partition field {} is not a primitive type", field.name))
                })?;
                encode_partition_value(out, v, ty).map_err(|e| {
                    e.with_context("file", f.file_path.clone())
                        .with_context("partition field", field.name.clone())
                })?;
            }
        }
    }
    write_long(out, f.record_count);
    write_long(out, f.file_size_in_bytes);
    let present = |bit: u8| f.empty_metric_maps & bit != 0;
    encode_count_map(out, &f.column_sizes, present(EMPTY_COLUMN_SIZES));
    encode_count_map(out, &f.value_counts, present(EMPTY_VALUE_COUNTS));
    encode_count_map(out, &f.null_value_counts, present(EMPTY_NULL_VALUE_COUNTS));
    encode_count_map(out, &f.nan_value_counts, present(EMPTY_NAN_VALUE_COUNTS));
    encode_bytes_map(out, &f.lower_bounds, present(EMPTY_LOWER_BOUNDS));
    encode_bytes_map(out, &f.upper_bounds, present(EMPTY_UPPER_BOUNDS));
    write_opt(out, f.key_metadata.as_deref(), write_bytes);
    encode_list(out, f.split_offsets.as_ref(), |x| x);
    encode_list(out, f.equality_ids.as_ref(), i64::from);
    write_opt(out, f.sort_order_id, |o, v| write_long(o, i64::from(v)));
    if v3 {
        write_opt(out, f.first_row_id, write_long);
    }
    write_opt(out, f.referenced_data_file.as_deref(), |o, s| write_bytes(o, s.as_bytes()));
    if v3 {
        write_opt(out, f.content_offset, write_long);
        write_opt(out, f.content_size_in_bytes, write_long);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_bytes_match_java() {
        assert_eq!(decimal_required_bytes(1), 1);
        assert_eq!(decimal_required_bytes(2), 1);
        assert_eq!(decimal_required_bytes(3), 2);
        assert_eq!(decimal_required_bytes(9), 4);
        assert_eq!(decimal_required_bytes(18), 8);
        assert_eq!(decimal_required_bytes(38), 16);
    }
}
