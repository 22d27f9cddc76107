//! Partition transforms on whole Arrow arrays (the write path's hot loop): identity,
//! bucket[N], truncate[W], year/month/day/hour, void. Same results as the single-value
//! [`Transform::apply`] (checked in the tests below and against Iceberg Java in
//! `tests/expressions/test_transforms_oracle.py`), without a `Literal` per row.
//!
//! Input arrays carry the Arrow type `schema_to_arrow` gives the source's Iceberg type
//! (Int32, Int64, Decimal128, Date32, Time64(µs), Timestamp(µs|ns, tz), Utf8, Binary,
//! FixedSizeBinary). Output: Int32 for bucket/year/month/hour, Date32 for day, the input
//! type for identity/truncate/void. Nulls stay null.

use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{new_null_array, Array, ArrayRef, Date32Array, Int32Array, PrimitiveArray};
use arrow_schema::{DataType, TimeUnit};

use super::transform::Transform;
use super::types::PrimitiveType;
use super::values::{days_to_ymd, MICROS_PER_DAY, MICROS_PER_HOUR};
use crate::error::{invalid_data, not_supported, validation, Result};

/// Applies `transform` to every value of `array`, whose values are of Iceberg type `source`.
pub fn apply_transform_array(
    transform: &Transform,
    source: &PrimitiveType,
    array: &dyn Array,
) -> Result<ArrayRef> {
    if !transform.can_transform(source) {
        if let Transform::Unknown(name) = transform {
            return Err(not_supported(format!("cannot apply unknown transform '{name}'")));
        }
        return Err(validation(format!("cannot apply transform {transform} to a {source} source")));
    }
    let bad = || {
        validation(format!(
            "transform {transform} on {source}: expected the Arrow type of {source}, found {}",
            array.data_type()
        ))
    };
    if !arrow_type_fits(source, array.data_type()) {
        return Err(bad());
    }
    match transform {
        Transform::Identity => Ok(arrow_array::make_array(array.to_data())),
        Transform::Void => Ok(new_null_array(array.data_type(), array.len())),
        Transform::Bucket(n) => bucket_array(array, *n).ok_or_else(bad),
        Transform::Truncate(w) => truncate_array(array, *w).ok_or_else(bad),
        Transform::Year | Transform::Month | Transform::Day | Transform::Hour => {
            temporal_array(transform, array).ok_or_else(bad)?
        }
        Transform::Unknown(name) => Err(not_supported(format!("cannot apply unknown transform '{name}'"))),
    }
}

/// True if `dt` is an Arrow type values of Iceberg type `source` arrive in.
fn arrow_type_fits(source: &PrimitiveType, dt: &DataType) -> bool {
    use PrimitiveType as P;
    match (source, dt) {
        (P::Boolean, DataType::Boolean)
        | (P::Int, DataType::Int32)
        | (P::Long, DataType::Int64)
        | (P::Float, DataType::Float32)
        | (P::Double, DataType::Float64)
        | (P::Date, DataType::Date32)
        | (P::Time, DataType::Time64(TimeUnit::Microsecond))
        | (P::String, DataType::Utf8 | DataType::LargeUtf8)
        | (P::Binary, DataType::Binary | DataType::LargeBinary)
        | (P::Uuid, DataType::FixedSizeBinary(16)) => true,
        (P::Timestamp, DataType::Timestamp(TimeUnit::Microsecond, None))
        | (P::Timestamptz, DataType::Timestamp(TimeUnit::Microsecond, Some(_)))
        | (P::TimestampNs, DataType::Timestamp(TimeUnit::Nanosecond, None))
        | (P::TimestamptzNs, DataType::Timestamp(TimeUnit::Nanosecond, Some(_))) => true,
        (P::Fixed(l), DataType::FixedSizeBinary(n)) => i64::from(*n) == *l as i64,
        (P::Decimal { precision, scale }, DataType::Decimal128(p, s)) => {
            u32::from(*p) == *precision && i64::from(*s) == *scale as i64
        }
        _ => false,
    }
}

// ---------------------------------------------------------------------------------------
// bucket

const C1: u32 = 0xcc9e_2d51;
const C2: u32 = 0x1b87_3593;

#[inline]
fn mix_k1(mut k1: u32) -> u32 {
    k1 = k1.wrapping_mul(C1);
    k1 = k1.rotate_left(15);
    k1.wrapping_mul(C2)
}

#[inline]
fn mix_h1(mut h1: u32, k1: u32) -> u32 {
    h1 ^= k1;
    h1 = h1.rotate_left(13);
    h1.wrapping_mul(5).wrapping_add(0xe654_6b64)
}

#[inline]
fn fmix(mut h1: u32, len: u32) -> u32 {
    h1 ^= len;
    h1 ^= h1 >> 16;
    h1 = h1.wrapping_mul(0x85eb_ca6b);
    h1 ^= h1 >> 13;
    h1 = h1.wrapping_mul(0xc2b2_ae35);
    h1 ^ (h1 >> 16)
}

/// Murmur3 x86_32 with seed 0 (the hash the spec's bucket transform uses).
#[inline]
pub fn murmur3_32(data: &[u8]) -> i32 {
    let mut h1 = 0u32;
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        h1 = mix_h1(h1, mix_k1(u32::from_le_bytes([c[0], c[1], c[2], c[3]])));
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        let mut k1 = 0u32;
        for (i, b) in tail.iter().enumerate() {
            k1 ^= u32::from(*b) << (8 * i);
        }
        h1 ^= mix_k1(k1);
    }
    fmix(h1, data.len() as u32) as i32
}

/// Murmur3 of a long's 8 little-endian bytes, without going through a byte slice.
#[inline]
pub fn murmur3_long(v: i64) -> i32 {
    let v = v as u64;
    let h1 = mix_h1(0, mix_k1(v as u32));
    let h1 = mix_h1(h1, mix_k1((v >> 32) as u32));
    fmix(h1, 8) as i32
}

/// The minimal big-endian two's-complement bytes of `v` (Java `BigInteger.toByteArray`),
/// as a window into a 16-byte buffer.
#[inline]
fn decimal_be(v: i128, buf: &mut [u8; 16]) -> &[u8] {
    *buf = v.to_be_bytes();
    let mut start = 0;
    // Drop a leading 0x00/0xFF while the next byte keeps the same sign bit.
    while start < 15 {
        let (b, next) = (buf[start], buf[start + 1]);
        if (b == 0x00 && next & 0x80 == 0) || (b == 0xFF && next & 0x80 != 0) {
            start += 1;
        } else {
            break;
        }
    }
    &buf[start..]
}

#[inline]
fn to_bucket(h: i32, n: u32) -> i32 {
    ((h & i32::MAX) as u32 % n) as i32
}

fn bucket_longs<T: ArrowPrimitiveType>(
    a: &dyn Array,
    n: u32,
    f: impl Fn(T::Native) -> i64,
) -> Option<ArrayRef> {
    let a = a.as_primitive_opt::<T>()?;
    let out: Int32Array = a.unary(|v| to_bucket(murmur3_long(f(v)), n));
    Some(Arc::new(out))
}

fn bucket_array(a: &dyn Array, n: u32) -> Option<ArrayRef> {
    let bytes_out = |it: &mut dyn Iterator<Item = Option<&[u8]>>| -> ArrayRef {
        Arc::new(it.map(|v| v.map(|b| to_bucket(murmur3_32(b), n))).collect::<Int32Array>())
    };
    Some(match a.data_type() {
        DataType::Int32 => bucket_longs::<Int32Type>(a, n, i64::from)?,
        DataType::Date32 => bucket_longs::<Date32Type>(a, n, i64::from)?,
        DataType::Int64 => bucket_longs::<Int64Type>(a, n, |v| v)?,
        DataType::Time64(TimeUnit::Microsecond) => bucket_longs::<Time64MicrosecondType>(a, n, |v| v)?,
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            bucket_longs::<TimestampMicrosecondType>(a, n, |v| v)?
        }
        DataType::Timestamp(TimeUnit::Nanosecond, _) => {
            bucket_longs::<TimestampNanosecondType>(a, n, |v| v.div_euclid(1000))?
        }
        DataType::Decimal128(_, _) => {
            let d = a.as_primitive::<Decimal128Type>();
            let out: Int32Array = d.unary(|v| {
                let mut buf = [0u8; 16];
                to_bucket(murmur3_32(decimal_be(v, &mut buf)), n)
            });
            Arc::new(out)
        }
        DataType::Utf8 => bytes_out(&mut a.as_string::<i32>().iter().map(|v| v.map(str::as_bytes))),
        DataType::LargeUtf8 => bytes_out(&mut a.as_string::<i64>().iter().map(|v| v.map(str::as_bytes))),
        DataType::Binary => bytes_out(&mut a.as_binary::<i32>().iter()),
        DataType::LargeBinary => bytes_out(&mut a.as_binary::<i64>().iter()),
        DataType::FixedSizeBinary(_) => bytes_out(&mut a.as_fixed_size_binary().iter()),
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------
// truncate

fn truncate_array(a: &dyn Array, w: u32) -> Option<ArrayRef> {
    let (w64, w128) = (i64::from(w), i128::from(w));
    Some(match a.data_type() {
        DataType::Int32 => {
            // Near i32::MIN the result wraps, as in Java's int arithmetic.
            let out: PrimitiveArray<Int32Type> = a.as_primitive::<Int32Type>().unary(|v| {
                let x = i64::from(v);
                (x - x.rem_euclid(w64)) as i32
            });
            Arc::new(out)
        }
        DataType::Int64 => {
            let out: PrimitiveArray<Int64Type> = a.as_primitive::<Int64Type>().unary(|v| {
                let x = i128::from(v);
                (x - x.rem_euclid(w128)) as i64
            });
            Arc::new(out)
        }
        DataType::Decimal128(p, s) => {
            let out: PrimitiveArray<Decimal128Type> =
                a.as_primitive::<Decimal128Type>().unary(|v| v - v.rem_euclid(w128));
            Arc::new(out.with_precision_and_scale(*p, *s).ok()?)
        }
        DataType::Utf8 => {
            let s = a.as_string::<i32>();
            let mut b = StringBuilder::with_capacity(s.len(), s.value_data().len());
            for v in s.iter() {
                match v {
                    Some(v) => b.append_value(truncate_code_points(v, w as usize)),
                    None => b.append_null(),
                }
            }
            Arc::new(b.finish())
        }
        DataType::Binary => {
            let s = a.as_binary::<i32>();
            let mut b = BinaryBuilder::with_capacity(s.len(), s.value_data().len());
            for v in s.iter() {
                match v {
                    Some(v) => b.append_value(&v[..v.len().min(w as usize)]),
                    None => b.append_null(),
                }
            }
            Arc::new(b.finish())
        }
        _ => return None,
    })
}

/// The first `w` Unicode code points of `s`.
#[inline]
fn truncate_code_points(s: &str, w: usize) -> &str {
    if s.len() <= w {
        return s; // at most `len` code points
    }
    match s.char_indices().nth(w) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

// ---------------------------------------------------------------------------------------
// year / month / day / hour

fn ordinal_of_days(t: &Transform, days: i32) -> Result<i32> {
    match t {
        Transform::Day => Ok(days),
        Transform::Year | Transform::Month => {
            let (y, m, _) = days_to_ymd(days).ok_or_else(|| {
                invalid_data(format!("day {days} since 1970-01-01 is out of range for {t}"))
            })?;
            Ok(if matches!(t, Transform::Year) { y - 1970 } else { (y - 1970) * 12 + (m as i32 - 1) })
        }
        _ => Err(validation(format!("cannot apply transform {t} to a date"))),
    }
}

fn temporal_from_micros(t: &Transform, micros: i64) -> Result<i32> {
    let to_i32 = |v: i64| {
        i32::try_from(v)
            .map_err(|_| invalid_data(format!("result of transform {t} ({v}) does not fit an int")))
    };
    match t {
        Transform::Hour => to_i32(micros.div_euclid(MICROS_PER_HOUR)),
        _ => ordinal_of_days(t, to_i32(micros.div_euclid(MICROS_PER_DAY))?),
    }
}

/// Maps the valid values of `a` through `f`, keeping nulls; the first error wins.
fn try_map<T: ArrowPrimitiveType>(
    a: &dyn Array,
    f: impl Fn(T::Native) -> Result<i32>,
) -> Option<Result<Int32Array>> {
    let a = a.as_primitive_opt::<T>()?;
    let mut values = Vec::with_capacity(a.len());
    for (i, v) in a.values().iter().enumerate() {
        // Null slots hold arbitrary values: never fail on them.
        values.push(if a.is_valid(i) {
            match f(*v) {
                Ok(r) => r,
                Err(e) => return Some(Err(e)),
            }
        } else {
            0
        });
    }
    Some(Ok(Int32Array::new(values.into(), a.nulls().cloned())))
}

fn temporal_array(t: &Transform, a: &dyn Array) -> Option<Result<ArrayRef>> {
    let ints = match a.data_type() {
        DataType::Date32 => {
            if matches!(t, Transform::Day) {
                return Some(Ok(arrow_array::make_array(a.to_data())));
            }
            try_map::<Date32Type>(a, |d| ordinal_of_days(t, d))?
        }
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            try_map::<TimestampMicrosecondType>(a, |v| temporal_from_micros(t, v))?
        }
        DataType::Timestamp(TimeUnit::Nanosecond, _) => {
            try_map::<TimestampNanosecondType>(a, |v| temporal_from_micros(t, v.div_euclid(1000)))?
        }
        _ => return None,
    };
    Some(ints.map(|ints| -> ArrayRef {
        if matches!(t, Transform::Day) {
            Arc::new(Date32Array::new(ints.values().clone(), ints.nulls().cloned()))
        } else {
            Arc::new(ints)
        }
    }))
}

#[cfg(test)]
mod tests {
    use arrow_array::{
        BinaryArray, Date32Array, Decimal128Array, FixedSizeBinaryArray, Int64Array, StringArray,
        Time64MicrosecondArray, TimestampMicrosecondArray, TimestampNanosecondArray,
    };

    use super::*;
    use crate::spec::{bucket_hash, Literal};

    /// Cheap deterministic pseudo-random numbers (xorshift), no extra dependency.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    fn literal(ty: &PrimitiveType, a: &dyn Array, i: usize) -> Option<Literal> {
        let a = arrow_array::make_array(a.to_data());
        crate::writer::partitioner::literal_at(&a, ty, i).unwrap()
    }

    /// Every transform that applies to `ty`, on `a`, equals the single-value `Transform::apply`.
    fn cross_check(ty: &PrimitiveType, a: &dyn Array) {
        let transforms = [
            Transform::Identity,
            Transform::Void,
            Transform::Bucket(1),
            Transform::Bucket(16),
            Transform::Bucket(1000),
            Transform::Truncate(1),
            Transform::Truncate(3),
            Transform::Truncate(10),
            Transform::Year,
            Transform::Month,
            Transform::Day,
            Transform::Hour,
        ];
        for t in transforms.iter().filter(|t| t.can_transform(ty)) {
            let out = apply_transform_array(t, ty, a).unwrap();
            assert_eq!(out.len(), a.len());
            let rty = t.result_type(ty).unwrap();
            for i in 0..a.len() {
                let expect = literal(ty, a, i).map(|v| t.apply(&v).unwrap()).unwrap_or(None);
                let got = literal(&rty, out.as_ref(), i);
                assert_eq!(got, expect, "{t} on {ty} at {i}: {:?}", literal(ty, a, i));
            }
        }
    }

    #[test]
    fn murmur3_matches_crate_and_spec_vectors() {
        let mut r = Rng(0x9e37_79b9_7f4a_7c15);
        for len in 0..40 {
            let bytes: Vec<u8> = (0..len).map(|_| r.next() as u8).collect();
            let want = murmur3::murmur3_32(&mut std::io::Cursor::new(&bytes), 0).unwrap() as i32;
            assert_eq!(murmur3_32(&bytes), want, "len {len}");
        }
        for v in [0i64, 1, -1, 34, i64::MIN, i64::MAX] {
            assert_eq!(murmur3_long(v), murmur3_32(&v.to_le_bytes()));
        }
        assert_eq!(murmur3_long(34), 2017239379);
        assert_eq!(murmur3_32(b"iceberg"), 1210000089);
        let mut buf = [0u8; 16];
        for v in [0i128, 1, -1, 127, 128, -128, -129, 1420, i128::MAX, i128::MIN, 255, -256] {
            assert_eq!(
                decimal_be(v, &mut buf),
                crate::spec::value_binary::decimal_to_bytes(v).as_slice(),
                "{v}"
            );
        }
        assert_eq!(bucket_hash(&Literal::Decimal(1420)).unwrap(), -500754589);
    }

    #[test]
    fn integers_and_decimals_agree_with_single_values() {
        let mut r = Rng(42);
        let mut ints: Vec<Option<i32>> =
            vec![Some(0), Some(-1), Some(1), Some(i32::MIN), Some(i32::MAX), None];
        ints.extend((0..500).map(|_| Some(r.next() as i32)));
        cross_check(&PrimitiveType::Int, &arrow_array::Int32Array::from(ints.clone()));
        cross_check(
            &PrimitiveType::Date,
            &Date32Array::from(ints.iter().map(|v| v.map(|d| d % 3_000_000)).collect::<Vec<_>>()),
        );
        let mut longs: Vec<Option<i64>> = vec![Some(0), Some(-1), Some(i64::MIN), Some(i64::MAX), None];
        longs.extend((0..500).map(|_| Some(r.next() as i64)));
        cross_check(&PrimitiveType::Long, &Int64Array::from(longs.clone()));
        let times: Vec<Option<i64>> = longs.iter().map(|v| v.map(|t| t.rem_euclid(86_400_000_000))).collect();
        cross_check(&PrimitiveType::Time, &Time64MicrosecondArray::from(times));
        // Timestamps within years -200_000..200_000 (hour fits an int), before and after 1970.
        let ts: Vec<Option<i64>> = longs.iter().map(|v| v.map(|t| t % 6_000_000_000_000_000)).collect();
        cross_check(&PrimitiveType::Timestamp, &TimestampMicrosecondArray::from(ts.clone()));
        cross_check(
            &PrimitiveType::Timestamptz,
            &TimestampMicrosecondArray::from(ts.clone()).with_timezone("UTC"),
        );
        let ns: Vec<Option<i64>> = longs.iter().map(|v| v.map(|t| t % 9_000_000_000_000_000_000)).collect();
        cross_check(&PrimitiveType::TimestampNs, &TimestampNanosecondArray::from(ns));
        for (p, s) in [(9u8, 2i8), (18, 0), (38, 10)] {
            let m = 10i128.pow(u32::from(p)) - 1;
            let mut ds: Vec<Option<i128>> = vec![Some(0), Some(-1), Some(m), Some(-m), None];
            ds.extend(
                (0..300).map(|_| Some(((i128::from(r.next()) << 64) | i128::from(r.next())) % (m + 1))),
            );
            let arr = Decimal128Array::from(ds).with_precision_and_scale(p, s).unwrap();
            cross_check(&PrimitiveType::Decimal { precision: u32::from(p), scale: s as u32 }, &arr);
        }
    }

    #[test]
    fn strings_binary_uuid_fixed_agree_with_single_values() {
        let strs = vec![
            Some(""),
            Some("a"),
            Some("iceberg"),
            Some("héllo wörld"),
            Some("日本語テキスト"),
            Some("😀😁😂🤣"),
            Some("ab😀"),
            None,
        ];
        cross_check(&PrimitiveType::String, &StringArray::from(strs.clone()));
        let bins: Vec<Option<&[u8]>> = strs.iter().map(|s| s.map(str::as_bytes)).collect();
        cross_check(&PrimitiveType::Binary, &BinaryArray::from(bins));
        let mut r = Rng(7);
        let uuids: Vec<Option<Vec<u8>>> =
            (0..50).map(|i| (i % 7 != 0).then(|| (0..16).map(|_| r.next() as u8).collect())).collect();
        let fsb = FixedSizeBinaryArray::try_from_sparse_iter_with_size(uuids.into_iter(), 16).unwrap();
        cross_check(&PrimitiveType::Uuid, &fsb);
        cross_check(&PrimitiveType::Fixed(16), &fsb);
        assert_eq!(truncate_code_points("😀😁😂", 2), "😀😁");
    }

    #[test]
    fn wrong_input_type_or_transform_is_an_error() {
        let a = StringArray::from(vec!["x"]);
        let e = apply_transform_array(&Transform::Bucket(4), &PrimitiveType::Int, &a).unwrap_err();
        assert!(e.to_string().contains("Utf8"), "{e}");
        let e = apply_transform_array(&Transform::Year, &PrimitiveType::String, &a).unwrap_err();
        assert!(e.to_string().contains("year"), "{e}");
        let big = TimestampMicrosecondArray::from(vec![i64::MAX]);
        assert!(apply_transform_array(&Transform::Hour, &PrimitiveType::Timestamp, &big).is_err());
    }
}
