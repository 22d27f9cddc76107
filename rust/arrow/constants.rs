//! Columns filled from constants rather than from the data file: identity partition values
//! from the manifest, for data files that lack their partition source column (files added
//! by `add_files` / migration that were written without it).

use std::sync::Arc;

use arrow_array::{
    new_null_array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, FixedSizeBinaryArray,
    Float32Array, Float64Array, Int32Array, Int64Array, StringArray, Time64MicrosecondArray,
    TimestampMicrosecondArray, TimestampNanosecondArray, UInt32Array,
};
use arrow_schema::DataType;

use crate::error::{invalid_data, Result};
use crate::spec::{Literal, PrimitiveType};

/// `rows` copies of `value` (null when `None`) as an array of Arrow type `target`.
pub(crate) fn constant_array(
    value: Option<&Literal>,
    ty: &PrimitiveType,
    target: &DataType,
    rows: usize,
) -> Result<ArrayRef> {
    let Some(l) = value else {
        return Ok(new_null_array(target, rows));
    };
    let one = literal_array(l, ty, target)?;
    let idx = UInt32Array::from(vec![0u32; rows]);
    arrow_select::take::take(one.as_ref(), &idx, None)
        .map_err(|e| invalid_data(format!("cannot build a {ty} column from the value {l:?}")).with_source(e))
}

/// A one-element array holding `l` (an Iceberg value of type `ty`), cast to the Arrow type
/// `target` for promotions since a file was written (int -> long, ...) and timezone spelling.
/// Shared by constant columns and the row filter's comparison scalars.
pub(crate) fn literal_array(l: &Literal, ty: &PrimitiveType, target: &DataType) -> Result<ArrayRef> {
    let err = |e: arrow_schema::ArrowError| {
        invalid_data(format!("cannot build a {ty} value of Arrow type {target} from {l:?}")).with_source(e)
    };
    let one: ArrayRef = match l {
        Literal::Boolean(b) => Arc::new(BooleanArray::from(vec![*b])),
        Literal::Int(v) => Arc::new(Int32Array::from(vec![*v])),
        Literal::Long(v) => Arc::new(Int64Array::from(vec![*v])),
        Literal::Float(v) => Arc::new(Float32Array::from(vec![*v])),
        Literal::Double(v) => Arc::new(Float64Array::from(vec![*v])),
        Literal::Date(v) => Arc::new(Date32Array::from(vec![*v])),
        Literal::Time(v) => Arc::new(Time64MicrosecondArray::from(vec![*v])),
        Literal::Timestamp(v) => Arc::new(TimestampMicrosecondArray::from(vec![*v])),
        Literal::Timestamptz(v) => Arc::new(TimestampMicrosecondArray::from(vec![*v]).with_timezone("UTC")),
        Literal::TimestampNs(v) => Arc::new(TimestampNanosecondArray::from(vec![*v])),
        Literal::TimestamptzNs(v) => Arc::new(TimestampNanosecondArray::from(vec![*v]).with_timezone("UTC")),
        Literal::Decimal(v) => {
            let (p, s) = match ty {
                PrimitiveType::Decimal { precision, scale } => (*precision as u8, *scale as i8),
                _ => (38, 0),
            };
            Arc::new(Decimal128Array::from(vec![*v]).with_precision_and_scale(p, s).map_err(err)?)
        }
        Literal::String(s) => Arc::new(StringArray::from(vec![s.as_str()])),
        Literal::Uuid(u) => Arc::new(
            FixedSizeBinaryArray::try_from_iter(std::iter::once(u.to_be_bytes().to_vec())).map_err(err)?,
        ),
        Literal::Fixed(b) => {
            Arc::new(FixedSizeBinaryArray::try_from_iter(std::iter::once(b.clone())).map_err(err)?)
        }
        Literal::Binary(b) => Arc::new(BinaryArray::from(vec![b.as_slice()])),
    };
    if one.data_type() == target {
        return Ok(one);
    }
    arrow_cast::cast(&one, target).map_err(err)
}
