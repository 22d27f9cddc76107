//! Comparing a bound's single-value bytes (the spec's binary form, Appendix D) with a typed
//! literal without decoding into an owned value: the metrics and manifest evaluators run
//! this per file, so it must not allocate.
//!
//! Order is Iceberg Java's `Comparators`: floats with `-0.0 < 0.0` and NaN above
//! everything, strings and binary as unsigned bytes (= code points for UTF-8), uuids as
//! unsigned 128-bit big-endian. Bytes written before a type promotion are accepted: a
//! 4-byte bound of a long column is an int, of a double column a float.

use std::cmp::Ordering;

use crate::spec::{decimal_from_bytes, Literal, PrimitiveType};

/// Orders `bound` (bytes of type `ty`) against `lit` (a literal of the same type):
/// `Some(bound.cmp(lit))`, or `None` when the bytes are malformed for the type (callers
/// then treat the bound as absent).
pub fn cmp_bound(ty: &PrimitiveType, bound: &[u8], lit: &Literal) -> Option<Ordering> {
    use Literal as L;
    match lit {
        L::Boolean(b) => Some((*bound.first()? != 0).cmp(b)),
        L::Int(v) | L::Date(v) => Some(read_i32(bound)?.cmp(v)),
        L::Long(v) => Some(read_long(bound)?.cmp(v)),
        L::Time(v) | L::Timestamp(v) | L::Timestamptz(v) | L::TimestampNs(v) | L::TimestamptzNs(v) => {
            Some(read_i64(bound)?.cmp(v))
        }
        L::Float(v) => Some(cmp_f64(f64::from(read_f32(bound)?), f64::from(*v))),
        L::Double(v) => Some(cmp_f64(read_double(bound)?, *v)),
        L::Decimal(v) => {
            if !matches!(ty, PrimitiveType::Decimal { .. }) {
                return None;
            }
            Some(decimal_from_bytes(bound).ok()?.cmp(v))
        }
        L::String(s) => Some(bound.cmp(s.as_bytes())),
        L::Binary(b) | L::Fixed(b) => Some(bound.cmp(b.as_slice())),
        L::Uuid(u) => {
            let a: [u8; 16] = bound.try_into().ok()?;
            Some(u128::from_be_bytes(a).cmp(u))
        }
    }
}

/// `cmp_bound` in the order rows compare in (SQL, Spark, icefloe's row evaluator): a float
/// or double zero equals the other zero (`-0.0 = 0.0`, `-0.0 >= 0.0`), where Java's bound
/// order puts `-0.0` below `0.0`. Pruning uses this: a file whose values are all `-0.0`
/// holds rows of `x >= 0.0`, though its upper bound is below `0.0` in Java's order (Java
/// 1.12 prunes it and loses those rows). NaN stays above everything.
pub fn cmp_bound_sql(ty: &PrimitiveType, bound: &[u8], lit: &Literal) -> Option<Ordering> {
    match lit {
        Literal::Float(v) => Some(cmp_f64_sql(f64::from(read_f32(bound)?), f64::from(*v))),
        Literal::Double(v) => Some(cmp_f64_sql(read_double(bound)?, *v)),
        _ => cmp_bound(ty, bound, lit),
    }
}

/// The rows' float order: Java's (`cmp_f64`, NaN above everything) with the two zeros equal.
pub fn cmp_f64_sql(a: f64, b: f64) -> Ordering {
    let zeroless = |v: f64| if v == 0.0 { 0.0 } else { v };
    cmp_f64(zeroless(a), zeroless(b))
}

/// True when the bound is a floating point NaN (Java ignores a NaN lower bound).
pub fn is_nan_bound(ty: &PrimitiveType, bound: &[u8]) -> bool {
    match ty {
        PrimitiveType::Float => read_f32(bound).is_some_and(f32::is_nan),
        PrimitiveType::Double => read_double(bound).is_some_and(f64::is_nan),
        _ => false,
    }
}

/// True when the bound is a floating point zero of either sign.
pub fn is_zero_bound(ty: &PrimitiveType, bound: &[u8]) -> bool {
    match ty {
        PrimitiveType::Float => read_f32(bound).is_some_and(|v| v == 0.0),
        PrimitiveType::Double => read_double(bound).is_some_and(|v| v == 0.0),
        _ => false,
    }
}

/// Orders two bounds of the same type (bytes against bytes).
pub fn cmp_bounds(ty: &PrimitiveType, a: &[u8], b: &[u8]) -> Option<Ordering> {
    use PrimitiveType as P;
    match ty {
        P::Boolean => Some((*a.first()? != 0).cmp(&(*b.first()? != 0))),
        P::Int | P::Date => Some(read_i32(a)?.cmp(&read_i32(b)?)),
        P::Long => Some(read_long(a)?.cmp(&read_long(b)?)),
        P::Time | P::Timestamp | P::Timestamptz | P::TimestampNs | P::TimestamptzNs => {
            Some(read_i64(a)?.cmp(&read_i64(b)?))
        }
        P::Float => Some(cmp_f64(f64::from(read_f32(a)?), f64::from(read_f32(b)?))),
        P::Double => Some(cmp_f64(read_double(a)?, read_double(b)?)),
        P::Decimal { .. } => Some(decimal_from_bytes(a).ok()?.cmp(&decimal_from_bytes(b).ok()?)),
        P::String | P::Binary | P::Fixed(_) | P::Uuid => Some(a.cmp(b)),
        // No bounds exist for these: `unknown` is all nulls, variants are never read, and a
        // geospatial bound is a bounding-box corner, not an order.
        P::Unknown | P::Variant | P::Geometry { .. } | P::Geography { .. } => None,
    }
}

/// Java's float order: NaN above everything (NaN == NaN), `-0.0 < 0.0`.
pub fn cmp_f64(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.total_cmp(&b),
    }
}

/// The first `n` bytes of `b` (all of it when shorter).
pub fn prefix(b: &[u8], n: usize) -> &[u8] {
    &b[..b.len().min(n)]
}

fn read_i32(b: &[u8]) -> Option<i32> {
    Some(i32::from_le_bytes(b.try_into().ok()?))
}

fn read_i64(b: &[u8]) -> Option<i64> {
    Some(i64::from_le_bytes(b.try_into().ok()?))
}

fn read_long(b: &[u8]) -> Option<i64> {
    match b.len() {
        4 => read_i32(b).map(i64::from),
        _ => read_i64(b),
    }
}

fn read_f32(b: &[u8]) -> Option<f32> {
    Some(f32::from_le_bytes(b.try_into().ok()?))
}

fn read_double(b: &[u8]) -> Option<f64> {
    match b.len() {
        4 => read_f32(b).map(f64::from),
        _ => Some(f64::from_le_bytes(b.try_into().ok()?)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders() {
        let l = PrimitiveType::Long;
        assert_eq!(cmp_bound(&l, &5i64.to_le_bytes(), &Literal::Long(7)), Some(Ordering::Less));
        assert_eq!(cmp_bound(&l, &9i32.to_le_bytes(), &Literal::Long(7)), Some(Ordering::Greater));
        assert_eq!(cmp_bound(&l, &[1, 2, 3], &Literal::Long(7)), None);
        let d = PrimitiveType::Double;
        assert_eq!(cmp_bound(&d, &(-0.0f64).to_le_bytes(), &Literal::Double(0.0)), Some(Ordering::Less));
        assert_eq!(cmp_bound(&d, &f64::NAN.to_le_bytes(), &Literal::Double(1e300)), Some(Ordering::Greater));
        assert!(is_nan_bound(&d, &f64::NAN.to_le_bytes()));
        // Rows' order: the zeros are equal; other values and NaN as in Java's order.
        let neg_zero = (-0.0f64).to_le_bytes();
        assert_eq!(cmp_bound_sql(&d, &neg_zero, &Literal::Double(0.0)), Some(Ordering::Equal));
        assert_eq!(cmp_bound_sql(&d, &0.0f64.to_le_bytes(), &Literal::Double(-0.0)), Some(Ordering::Equal));
        assert_eq!(cmp_bound_sql(&d, &neg_zero, &Literal::Double(1e-300)), Some(Ordering::Less));
        assert_eq!(
            cmp_bound_sql(&d, &f64::NAN.to_le_bytes(), &Literal::Double(0.0)),
            Some(Ordering::Greater)
        );
        let f = PrimitiveType::Float;
        assert_eq!(cmp_bound_sql(&f, &(-0.0f32).to_le_bytes(), &Literal::Float(0.0)), Some(Ordering::Equal));
        // A float bound of a double column (written before the promotion).
        assert_eq!(cmp_bound_sql(&d, &(-0.0f32).to_le_bytes(), &Literal::Double(0.0)), Some(Ordering::Equal));
        let dec = PrimitiveType::Decimal { precision: 9, scale: 2 };
        assert_eq!(cmp_bound(&dec, &[0x80], &Literal::Decimal(-127)), Some(Ordering::Less));
        assert_eq!(
            cmp_bound(&PrimitiveType::String, "\u{FFFD}".as_bytes(), &Literal::String("\u{1F600}".into())),
            Some(Ordering::Less)
        );
    }
}
