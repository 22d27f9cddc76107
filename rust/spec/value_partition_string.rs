//! A partition value from its text in a Hive-style partition path (`p=2024-01-01`), as Iceberg
//! Java's `Conversions.fromPartitionString` reads it when it imports a Spark or Hive table
//! (`snapshot`, `migrate`, `add_files` from a partitioned folder). `__HIVE_DEFAULT_PARTITION__`
//! is null; booleans are Java's `Boolean.valueOf` (only `true`, in any case, is true); numbers,
//! decimals (rescaled to the type's scale when that is exact) and ISO dates are parsed; the
//! types Java refuses (time, timestamps, ...) are refused.

use super::types::PrimitiveType;
use super::value_json::{parse_date, parse_decimal};
use super::values::Literal;
use crate::error::{invalid_data, not_supported, Result};

/// Hive's spelling of a null partition value in a path.
pub const HIVE_NULL: &str = "__HIVE_DEFAULT_PARTITION__";

impl Literal {
    /// The value of type `ty` spelled `text` in a partition path (None: null).
    pub fn from_partition_string(ty: &PrimitiveType, text: Option<&str>) -> Result<Option<Literal>> {
        let Some(text) = text.filter(|t| *t != HIVE_NULL) else {
            return Ok(None);
        };
        let bad = || invalid_data(format!("expected a partition value of type {ty}, found '{text}'"));
        Ok(Some(match ty {
            PrimitiveType::Boolean => Literal::Boolean(text.eq_ignore_ascii_case("true")),
            PrimitiveType::Int => Literal::Int(text.parse().map_err(|_| bad())?),
            PrimitiveType::Long => Literal::Long(text.parse().map_err(|_| bad())?),
            PrimitiveType::Float => Literal::Float(java_float(text).ok_or_else(bad)? as f32),
            PrimitiveType::Double => Literal::Double(java_float(text).ok_or_else(bad)?),
            PrimitiveType::String => Literal::String(text.to_string()),
            PrimitiveType::Uuid => Literal::Uuid(uuid::Uuid::parse_str(text).map_err(|_| bad())?.as_u128()),
            PrimitiveType::Fixed(len) => {
                let mut bytes = text.as_bytes().to_vec();
                bytes.resize(usize::try_from(*len).map_err(|_| bad())?, 0);
                Literal::Fixed(bytes)
            }
            PrimitiveType::Binary => Literal::Binary(text.as_bytes().to_vec()),
            PrimitiveType::Decimal { scale, .. } => {
                let (unscaled, found) = parse_decimal(text).ok_or_else(bad)?;
                let shift = i32::try_from(*scale).map_err(|_| bad())? - found;
                let rescaled = if shift >= 0 {
                    10i128.checked_pow(shift.unsigned_abs()).and_then(|f| unscaled.checked_mul(f))
                } else {
                    10i128
                        .checked_pow(shift.unsigned_abs())
                        .filter(|f| unscaled % f == 0)
                        .map(|f| unscaled / f)
                };
                Literal::Decimal(rescaled.ok_or_else(|| {
                    invalid_data(format!(
                        "expected a partition value of type {ty}, found '{text}', which has more digits \
                         after the point than the scale {scale}"
                    ))
                })?)
            }
            PrimitiveType::Date => Literal::Date(parse_date(text).ok_or_else(bad)?),
            other => {
                return Err(not_supported(format!(
                    "Unsupported type for fromPartitionString: {other} (partition value '{text}')"
                )))
            }
        }))
    }
}

/// Java's `Double.valueOf` for the spellings a partition path holds: decimal and scientific
/// numbers, `NaN`, `Infinity`, `-Infinity` (and a trailing `d`/`f` suffix, which Java allows).
fn java_float(text: &str) -> Option<f64> {
    let t = text.trim();
    let t = t.strip_suffix(['d', 'D', 'f', 'F']).unwrap_or(t);
    match t {
        "NaN" => Some(f64::NAN),
        "Infinity" | "+Infinity" => Some(f64::INFINITY),
        "-Infinity" => Some(f64::NEG_INFINITY),
        _ if t.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E')) => {
            t.parse().ok()
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(ty: PrimitiveType, text: &str) -> Option<Literal> {
        Literal::from_partition_string(&ty, Some(text)).unwrap()
    }

    #[test]
    fn partition_strings_read_as_javas_from_partition_string() {
        assert_eq!(parse(PrimitiveType::Int, "-42"), Some(Literal::Int(-42)));
        assert_eq!(parse(PrimitiveType::Long, "9000000000"), Some(Literal::Long(9_000_000_000)));
        assert_eq!(parse(PrimitiveType::Boolean, "TRUE"), Some(Literal::Boolean(true)));
        assert_eq!(parse(PrimitiveType::Boolean, "yes"), Some(Literal::Boolean(false)));
        assert_eq!(parse(PrimitiveType::Double, "1.5E3"), Some(Literal::Double(1500.0)));
        assert_eq!(parse(PrimitiveType::Date, "2024-03-01"), Some(Literal::Date(19783)));
        assert_eq!(parse(PrimitiveType::String, "a=b/c"), Some(Literal::String("a=b/c".into())));
        let dec = PrimitiveType::Decimal { precision: 10, scale: 2 };
        assert_eq!(parse(dec.clone(), "1.5"), Some(Literal::Decimal(150)));
        assert_eq!(parse(dec.clone(), "-3.25"), Some(Literal::Decimal(-325)));
        assert!(Literal::from_partition_string(&dec, Some("1.234")).is_err());
        assert_eq!(parse(PrimitiveType::Fixed(3), "ab"), Some(Literal::Fixed(vec![b'a', b'b', 0])));
        assert_eq!(Literal::from_partition_string(&PrimitiveType::Int, Some(HIVE_NULL)).unwrap(), None);
        assert_eq!(Literal::from_partition_string(&PrimitiveType::Int, None).unwrap(), None);
        let err = Literal::from_partition_string(&PrimitiveType::Int, Some("x1")).unwrap_err();
        assert!(err.to_string().contains("type int, found 'x1'"), "{err}");
        let err = Literal::from_partition_string(&PrimitiveType::Timestamp, Some("2024-01-01")).unwrap_err();
        assert!(err.to_string().contains("Unsupported type"), "{err}");
    }
}
