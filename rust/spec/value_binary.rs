//! The spec's single-value binary serialization of a `Literal` (Appendix D), as used for
//! bounds, partition summaries and bucket hashing; decimals as minimal two's-complement bytes.

use super::types::PrimitiveType;
use super::values::Literal;
use crate::error::{invalid_data, Result};

impl Literal {
    /// The spec's single-value binary serialization (Appendix D), as used for bounds
    /// and partition summaries.
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            Literal::Boolean(b) => vec![u8::from(*b)],
            Literal::Int(v) | Literal::Date(v) => v.to_le_bytes().to_vec(),
            Literal::Long(v)
            | Literal::Time(v)
            | Literal::Timestamp(v)
            | Literal::Timestamptz(v)
            | Literal::TimestampNs(v)
            | Literal::TimestamptzNs(v) => v.to_le_bytes().to_vec(),
            Literal::Float(v) => v.to_le_bytes().to_vec(),
            Literal::Double(v) => v.to_le_bytes().to_vec(),
            Literal::Decimal(v) => decimal_to_bytes(*v),
            Literal::String(s) => s.as_bytes().to_vec(),
            Literal::Uuid(u) => u.to_be_bytes().to_vec(),
            Literal::Fixed(b) | Literal::Binary(b) => b.clone(),
        }
    }

    /// Reads the single-value binary form of a value of type `ty`. Applies the spec's
    /// promotion rules: a `long` stored in 4 bytes was written as an `int`, a `double`
    /// stored in 4 bytes was written as a `float`.
    pub fn from_bytes(ty: &PrimitiveType, bytes: &[u8]) -> Result<Literal> {
        let wrong_len = |expected: &str| {
            invalid_data(format!(
                "expected {expected} byte(s) for a {ty} value, found {} byte(s)",
                bytes.len()
            ))
        };
        let lit = match ty {
            PrimitiveType::Boolean => match bytes {
                [0] => Literal::Boolean(false),
                [1] => Literal::Boolean(true),
                [b] => {
                    return Err(invalid_data(format!(
                        "expected a boolean byte 0x00 or 0x01, found 0x{b:02x}"
                    )))
                }
                _ => return Err(wrong_len("1")),
            },
            PrimitiveType::Int => {
                Literal::Int(i32::from_le_bytes(arr4(bytes).ok_or_else(|| wrong_len("4"))?))
            }
            PrimitiveType::Date => {
                Literal::Date(i32::from_le_bytes(arr4(bytes).ok_or_else(|| wrong_len("4"))?))
            }
            PrimitiveType::Long => match bytes.len() {
                4 => Literal::Long(i64::from(i32::from_le_bytes(arr4(bytes).ok_or_else(|| wrong_len("4"))?))),
                _ => Literal::Long(i64::from_le_bytes(arr8(bytes).ok_or_else(|| wrong_len("4 or 8"))?)),
            },
            PrimitiveType::Float => {
                Literal::Float(f32::from_le_bytes(arr4(bytes).ok_or_else(|| wrong_len("4"))?))
            }
            PrimitiveType::Double => match bytes.len() {
                4 => {
                    Literal::Double(f64::from(f32::from_le_bytes(arr4(bytes).ok_or_else(|| wrong_len("4"))?)))
                }
                _ => Literal::Double(f64::from_le_bytes(arr8(bytes).ok_or_else(|| wrong_len("4 or 8"))?)),
            },
            PrimitiveType::Time => Literal::Time(read_i64(bytes).ok_or_else(|| wrong_len("8"))?),
            PrimitiveType::Timestamp => Literal::Timestamp(read_i64(bytes).ok_or_else(|| wrong_len("8"))?),
            PrimitiveType::Timestamptz => {
                Literal::Timestamptz(read_i64(bytes).ok_or_else(|| wrong_len("8"))?)
            }
            PrimitiveType::TimestampNs => {
                Literal::TimestampNs(read_i64(bytes).ok_or_else(|| wrong_len("8"))?)
            }
            PrimitiveType::TimestamptzNs => {
                Literal::TimestamptzNs(read_i64(bytes).ok_or_else(|| wrong_len("8"))?)
            }
            // No precision check, as Java's Conversions: a truncate partition value of a
            // decimal(P, S) may need P + 1 digits (truncate[10] of -999..9 is -10^P).
            PrimitiveType::Decimal { .. } => Literal::Decimal(decimal_from_bytes(bytes)?),
            PrimitiveType::String => Literal::String(
                String::from_utf8(bytes.to_vec())
                    .map_err(|e| invalid_data("expected UTF-8 bytes for a string value").with_source(e))?,
            ),
            PrimitiveType::Uuid => {
                let a: [u8; 16] = bytes.try_into().map_err(|_| wrong_len("16"))?;
                Literal::Uuid(u128::from_be_bytes(a))
            }
            PrimitiveType::Fixed(len) => {
                if bytes.len() as u64 != *len {
                    return Err(wrong_len(&len.to_string()));
                }
                Literal::Fixed(bytes.to_vec())
            }
            PrimitiveType::Binary => Literal::Binary(bytes.to_vec()),
            // A geospatial bound is a bounding-box corner (`spec::geo_bound`), never a literal.
            PrimitiveType::Unknown
            | PrimitiveType::Variant
            | PrimitiveType::Geometry { .. }
            | PrimitiveType::Geography { .. } => {
                return Err(invalid_data(format!(
                    "type {ty} has no single-value binary form, found {} byte(s)",
                    bytes.len()
                )))
            }
        };
        Ok(lit)
    }
}

fn arr4(b: &[u8]) -> Option<[u8; 4]> {
    b.try_into().ok()
}

fn arr8(b: &[u8]) -> Option<[u8; 8]> {
    b.try_into().ok()
}

fn read_i64(b: &[u8]) -> Option<i64> {
    arr8(b).map(i64::from_le_bytes)
}

/// Minimal two's-complement big-endian bytes, like Java's `BigInteger.toByteArray`.
pub(crate) fn decimal_to_bytes(v: i128) -> Vec<u8> {
    let b = v.to_be_bytes();
    // A leading byte is redundant when it only repeats the sign of the byte after it.
    let redundant = b
        .windows(2)
        .take_while(|w| matches!(w, [0x00, n] if n & 0x80 == 0) || matches!(w, [0xff, n] if n & 0x80 != 0))
        .count();
    b.iter().skip(redundant).copied().collect()
}

/// Reads big-endian two's-complement bytes into an i128 (longer inputs are accepted
/// only when the extra leading bytes are sign extension).
pub(crate) fn decimal_from_bytes(bytes: &[u8]) -> Result<i128> {
    let Some(first) = bytes.first() else {
        return Err(invalid_data("expected at least 1 byte for a decimal value, found 0"));
    };
    let neg = first & 0x80 != 0;
    let fill = if neg { 0xff } else { 0x00 };
    let mut buf = [fill; 16];
    if bytes.len() > 16 {
        let (head, tail) = bytes.split_at(bytes.len() - 16);
        if head.iter().any(|b| *b != fill) || tail.first().is_some_and(|t| (fill ^ t) & 0x80 != 0) {
            return Err(invalid_data(format!(
                "decimal value of {} bytes does not fit 128 bits",
                bytes.len()
            )));
        }
        buf.copy_from_slice(tail);
    } else if let Some(low) = buf.get_mut(16 - bytes.len()..) {
        low.copy_from_slice(bytes);
    }
    Ok(i128::from_be_bytes(buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(p: u32, s: u32) -> PrimitiveType {
        PrimitiveType::Decimal { precision: p, scale: s }
    }

    #[test]
    fn decimal_bytes_minimal() {
        assert_eq!(Literal::Decimal(0).to_bytes(), vec![0x00]);
        assert_eq!(Literal::Decimal(-128).to_bytes(), vec![0x80]);
        assert_eq!(Literal::Decimal(128).to_bytes(), vec![0x00, 0x80]);
        assert_eq!(Literal::Decimal(127).to_bytes(), vec![0x7f]);
        assert_eq!(Literal::Decimal(-129).to_bytes(), vec![0xff, 0x7f]);
        assert_eq!(Literal::Decimal(-1).to_bytes(), vec![0xff]);
        assert_eq!(Literal::Decimal(1420).to_bytes(), vec![0x05, 0x8c]);
        for v in [0i128, 1, -1, 127, 128, -128, -129, 255, 256, 1 << 70, -(1 << 70), i128::MAX, i128::MIN] {
            let b = Literal::Decimal(v).to_bytes();
            assert_eq!(decimal_from_bytes(&b).unwrap(), v, "{v}");
        }
        assert_eq!(decimal_from_bytes(&[0x00, 0x00, 0x80]).unwrap(), 128);
        assert_eq!(decimal_from_bytes(&[0xff; 20]).unwrap(), -1);
        assert!(decimal_from_bytes(&[0x01; 17]).is_err());
        assert!(decimal_from_bytes(&[]).is_err());
        // More digits than the precision read as Java's Conversions reads them (a truncate
        // partition value may have one more digit than its decimal(P, S) type).
        assert_eq!(
            Literal::from_bytes(&dec(2, 0), &Literal::Decimal(1000).to_bytes()).unwrap(),
            Literal::Decimal(1000)
        );
    }

    #[test]
    fn bytes_round_trip_all_types() {
        let cases = vec![
            (PrimitiveType::Boolean, Literal::Boolean(true), vec![1u8]),
            (PrimitiveType::Int, Literal::Int(34), vec![34, 0, 0, 0]),
            (PrimitiveType::Long, Literal::Long(34), vec![34, 0, 0, 0, 0, 0, 0, 0]),
            (PrimitiveType::Float, Literal::Float(1.0), 1.0f32.to_le_bytes().to_vec()),
            (PrimitiveType::Double, Literal::Double(-0.0), (-0.0f64).to_le_bytes().to_vec()),
            (dec(9, 2), Literal::Decimal(1420), vec![0x05, 0x8c]),
            (PrimitiveType::Date, Literal::Date(17486), 17486i32.to_le_bytes().to_vec()),
            (PrimitiveType::Time, Literal::Time(81068000000), 81068000000i64.to_le_bytes().to_vec()),
            (PrimitiveType::Timestamp, Literal::Timestamp(-1), vec![0xff; 8]),
            (PrimitiveType::Timestamptz, Literal::Timestamptz(1), vec![1, 0, 0, 0, 0, 0, 0, 0]),
            (PrimitiveType::TimestampNs, Literal::TimestampNs(1), vec![1, 0, 0, 0, 0, 0, 0, 0]),
            (PrimitiveType::String, Literal::String("iceberg".into()), b"iceberg".to_vec()),
            (
                PrimitiveType::Uuid,
                Literal::Uuid(0xf79c3e09_677c_4bbd_a479_3f349cb785e7),
                vec![
                    0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd, 0xa4, 0x79, 0x3f, 0x34, 0x9c, 0xb7, 0x85,
                    0xe7,
                ],
            ),
            (PrimitiveType::Fixed(4), Literal::Fixed(vec![0, 1, 2, 3]), vec![0, 1, 2, 3]),
            (PrimitiveType::Binary, Literal::Binary(vec![]), vec![]),
        ];
        for (ty, lit, bytes) in cases {
            assert_eq!(lit.to_bytes(), bytes, "{ty}");
            assert_eq!(Literal::from_bytes(&ty, &bytes).unwrap(), lit, "{ty}");
        }
    }

    #[test]
    fn bytes_promotion_and_errors() {
        assert_eq!(
            Literal::from_bytes(&PrimitiveType::Long, &(-5i32).to_le_bytes()).unwrap(),
            Literal::Long(-5)
        );
        assert_eq!(
            Literal::from_bytes(&PrimitiveType::Double, &1.5f32.to_le_bytes()).unwrap(),
            Literal::Double(1.5)
        );
        assert!(Literal::from_bytes(&PrimitiveType::Int, &[1, 2]).is_err());
        assert!(Literal::from_bytes(&PrimitiveType::Long, &[1, 2, 3]).is_err());
        assert!(Literal::from_bytes(&PrimitiveType::Boolean, &[2]).is_err());
        assert!(Literal::from_bytes(&PrimitiveType::String, &[0xff]).is_err());
        assert!(Literal::from_bytes(&PrimitiveType::Fixed(3), &[1, 2]).is_err());
        assert!(Literal::from_bytes(&PrimitiveType::Uuid, &[1; 15]).is_err());
        let e = Literal::from_bytes(&PrimitiveType::Time, &[1]).unwrap_err();
        assert!(e.to_string().contains("expected 8 byte(s) for a time value, found 1"), "{e}");
    }
}
