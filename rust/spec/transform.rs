//! Partition transforms (spec "Partition Transforms"): parsing/printing, result types,
//! single-value application (bucket hashing, truncation, temporal floors) and the
//! human-readable form used in partition paths.

use std::fmt;
use std::io::Cursor;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::types::PrimitiveType;
use super::value_binary::decimal_to_bytes;
use super::value_human::format_date;
use super::values::{days_to_ymd, Literal, MICROS_PER_DAY, MICROS_PER_HOUR};
use crate::error::{invalid_data, validation, Error, Result};

/// A partition (or sort) transform. `Unknown` keeps transforms from newer writers so
/// metadata that uses them still round-trips.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Transform {
    Identity,
    Bucket(u32),
    Truncate(u32),
    Year,
    Month,
    Day,
    Hour,
    Void,
    Unknown(String),
}

impl Transform {
    /// Parses `identity`, `bucket[N]`, `truncate[W]`, `year`, `month`, `day`, `hour`,
    /// `void` (case-insensitive, like Java). Any other name becomes `Unknown`; a zero or
    /// malformed bucket count / width is an error.
    pub fn parse(s: &str) -> Result<Transform> {
        let t = s.trim();
        let lower = t.to_ascii_lowercase();
        let arg = |prefix: &str| -> Option<std::result::Result<u32, ()>> {
            lower.strip_prefix(prefix).and_then(|r| r.strip_suffix(']')).map(|n| {
                match n.trim().parse::<u32>() {
                    Ok(v) if v > 0 => Ok(v),
                    _ => Err(()),
                }
            })
        };
        if let Some(n) = arg("bucket[") {
            return n.map(Transform::Bucket).map_err(|_| {
                invalid_data(format!("expected a positive number of buckets in 'bucket[N]', found '{t}'"))
            });
        }
        if let Some(n) = arg("truncate[") {
            return n.map(Transform::Truncate).map_err(|_| {
                invalid_data(format!("expected a positive width in 'truncate[W]', found '{t}'"))
            });
        }
        Ok(match lower.as_str() {
            "identity" => Transform::Identity,
            "year" => Transform::Year,
            "month" => Transform::Month,
            "day" => Transform::Day,
            "hour" => Transform::Hour,
            "void" => Transform::Void,
            _ => Transform::Unknown(t.to_string()),
        })
    }

    pub fn is_void(&self) -> bool {
        matches!(self, Transform::Void)
    }

    pub fn is_identity(&self) -> bool {
        matches!(self, Transform::Identity)
    }

    /// The suffix Java uses for default partition field names (`id_bucket`, `ts_day`).
    pub(crate) fn default_name_suffix(&self) -> Option<&'static str> {
        match self {
            Transform::Identity => None,
            Transform::Bucket(_) => Some("bucket"),
            Transform::Truncate(_) => Some("trunc"),
            Transform::Year => Some("year"),
            Transform::Month => Some("month"),
            Transform::Day => Some("day"),
            Transform::Hour => Some("hour"),
            Transform::Void => Some("null"),
            Transform::Unknown(_) => Some("unknown"),
        }
    }

    /// True if the transform can be applied to values of `source`.
    pub fn can_transform(&self, source: &PrimitiveType) -> bool {
        use PrimitiveType as P;
        match self {
            Transform::Void => true,
            // Java's `Identity.UNSUPPORTED_TYPES` and bucket's hashable types leave out WKB.
            Transform::Identity => !source.is_geospatial() && *source != P::Variant,
            Transform::Bucket(_) => {
                !matches!(source, P::Boolean | P::Float | P::Double) && !source.is_geospatial()
            }
            Transform::Truncate(_) => {
                matches!(source, P::Int | P::Long | P::Decimal { .. } | P::String | P::Binary)
            }
            Transform::Year | Transform::Month | Transform::Day => {
                matches!(source, P::Date | P::Timestamp | P::Timestamptz | P::TimestampNs | P::TimestamptzNs)
            }
            Transform::Hour => {
                matches!(source, P::Timestamp | P::Timestamptz | P::TimestampNs | P::TimestamptzNs)
            }
            Transform::Unknown(_) => false,
        }
    }

    /// The type of the transformed values: bucket/year/month/hour -> int, day -> date
    /// (as Java types it), identity/truncate/void -> the source type. Unknown transforms
    /// produce strings (as Java's `UnknownTransform`).
    pub fn result_type(&self, source: &PrimitiveType) -> Result<PrimitiveType> {
        if let Transform::Unknown(_) = self {
            return Ok(PrimitiveType::String);
        }
        if !self.can_transform(source) {
            return Err(validation(format!("cannot apply transform {self} to a {source} source")));
        }
        Ok(match self {
            Transform::Identity | Transform::Truncate(_) | Transform::Void => source.clone(),
            Transform::Bucket(_) | Transform::Year | Transform::Month | Transform::Hour => PrimitiveType::Int,
            Transform::Day => PrimitiveType::Date,
            Transform::Unknown(_) => PrimitiveType::String,
        })
    }

    /// Applies the transform to one value. `Ok(None)` for void; an error when the value's
    /// type cannot be transformed (or the transform is unknown).
    pub fn apply(&self, value: &Literal) -> Result<Option<Literal>> {
        let unsupported = || {
            validation(format!(
                "cannot apply transform {self} to value {value:?} of type {}",
                value.primitive_type()
            ))
        };
        Ok(Some(match self {
            Transform::Identity => value.clone(),
            Transform::Void => return Ok(None),
            Transform::Bucket(n) => {
                let h = bucket_hash(value)?;
                Literal::Int(((h & i32::MAX) as u32 % n) as i32)
            }
            Transform::Truncate(w) => truncate(value, *w).ok_or_else(unsupported)?,
            Transform::Year => Literal::Int(year_ordinal(value).ok_or_else(unsupported)??),
            Transform::Month => Literal::Int(month_ordinal(value).ok_or_else(unsupported)??),
            Transform::Day => {
                let micros = to_micros(value).ok_or_else(unsupported)?;
                let d = match value {
                    Literal::Date(d) => i64::from(*d),
                    _ => micros.div_euclid(MICROS_PER_DAY),
                };
                Literal::Date(to_i32(d, self)?)
            }
            Transform::Hour => match value {
                Literal::Date(_) => return Err(unsupported()),
                _ => {
                    let micros = to_micros(value).ok_or_else(unsupported)?;
                    Literal::Int(to_i32(micros.div_euclid(MICROS_PER_HOUR), self)?)
                }
            },
            Transform::Unknown(name) => {
                return Err(crate::error::not_supported(format!("cannot apply unknown transform '{name}'")))
            }
        }))
    }

    /// The human-readable form of a transformed value (Java `Transform.toHumanString`),
    /// used in partition paths. `source` is the partition source column's type.
    pub fn to_human_string(&self, source: &PrimitiveType, value: Option<&Literal>) -> String {
        let Some(v) = value else { return "null".to_string() };
        let ordinal = match v {
            Literal::Int(i) | Literal::Date(i) => Some(*i),
            _ => None,
        };
        match (self, ordinal) {
            (Transform::Year, Some(y)) => format!("{:04}", 1970i64 + i64::from(y)),
            (Transform::Month, Some(m)) => {
                format!("{:04}-{:02}", 1970i64 + i64::from(m).div_euclid(12), 1 + i64::from(m).rem_euclid(12))
            }
            (Transform::Day, Some(d)) => human_day(d),
            (Transform::Hour, Some(h)) => {
                let h = i64::from(h);
                match i32::try_from(h.div_euclid(24)).ok().and_then(days_to_ymd) {
                    Some((y, mo, d)) => format!("{y:04}-{mo:02}-{d:02}-{:02}", h.rem_euclid(24)),
                    None => h.to_string(),
                }
            }
            (Transform::Void, _) => "null".to_string(),
            (Transform::Identity | Transform::Truncate(_), _) => v.to_human_string(source),
            _ => v.to_string(),
        }
    }
}

fn human_day(d: i32) -> String {
    match days_to_ymd(d) {
        Some((y, m, dd)) => format!("{y:04}-{m:02}-{dd:02}"),
        None => format_date(d),
    }
}

fn to_i32(v: i64, t: &Transform) -> Result<i32> {
    i32::try_from(v).map_err(|_| invalid_data(format!("result of transform {t} ({v}) does not fit an int")))
}

/// Microseconds since the epoch of a date/timestamp value (nanosecond timestamps floored).
fn to_micros(v: &Literal) -> Option<i64> {
    match v {
        Literal::Date(d) => Some(i64::from(*d) * MICROS_PER_DAY),
        Literal::Timestamp(t) | Literal::Timestamptz(t) => Some(*t),
        Literal::TimestampNs(t) | Literal::TimestamptzNs(t) => Some(t.div_euclid(1000)),
        _ => None,
    }
}

fn civil_date(v: &Literal) -> Option<Result<(i32, u32, u32)>> {
    let days = match v {
        Literal::Date(d) => i64::from(*d),
        _ => to_micros(v)?.div_euclid(MICROS_PER_DAY),
    };
    Some(
        i32::try_from(days)
            .ok()
            .and_then(days_to_ymd)
            .ok_or_else(|| invalid_data(format!("date/timestamp value {v:?} is out of range"))),
    )
}

fn year_ordinal(v: &Literal) -> Option<Result<i32>> {
    civil_date(v).map(|r| r.map(|(y, _, _)| y - 1970))
}

fn month_ordinal(v: &Literal) -> Option<Result<i32>> {
    civil_date(v).map(|r| r.map(|(y, m, _)| (y - 1970) * 12 + (m as i32 - 1)))
}

fn truncate(v: &Literal, w: u32) -> Option<Literal> {
    let w64 = i64::from(w);
    Some(match v {
        Literal::Int(x) => {
            let x = i64::from(*x);
            // Near i32::MIN the result wraps, as in Java's int arithmetic.
            Literal::Int((x - x.rem_euclid(w64)) as i32)
        }
        Literal::Long(x) => {
            let x = i128::from(*x);
            Literal::Long((x - x.rem_euclid(i128::from(w))) as i64)
        }
        Literal::Decimal(x) => Literal::Decimal(x - x.rem_euclid(i128::from(w))),
        Literal::String(s) => Literal::String(super::truncate_lower_string(s, w as usize)),
        Literal::Binary(b) => Literal::Binary(super::truncate_lower_binary(b, w as usize)),
        _ => return None,
    })
}

/// The 32-bit Murmur3 (x86, seed 0) hash the bucket transform uses, per the spec's
/// hashing rules: int/long/date/time/timestamps as an 8-byte little-endian long
/// (nanosecond timestamps as microseconds), strings as UTF-8, uuids as 16 big-endian
/// bytes, decimals as their minimal two's-complement big-endian unscaled bytes,
/// fixed/binary as-is. Booleans and floating point values cannot be bucketed.
pub fn bucket_hash(value: &Literal) -> Result<i32> {
    let long_bytes;
    let owned;
    let bytes: &[u8] = match value {
        Literal::Int(v) | Literal::Date(v) => {
            long_bytes = i64::from(*v).to_le_bytes();
            &long_bytes
        }
        Literal::Long(v) | Literal::Time(v) | Literal::Timestamp(v) | Literal::Timestamptz(v) => {
            long_bytes = v.to_le_bytes();
            &long_bytes
        }
        Literal::TimestampNs(v) | Literal::TimestamptzNs(v) => {
            long_bytes = v.div_euclid(1000).to_le_bytes();
            &long_bytes
        }
        Literal::Decimal(v) => {
            owned = decimal_to_bytes(*v);
            &owned
        }
        Literal::String(s) => s.as_bytes(),
        Literal::Uuid(u) => {
            owned = u.to_be_bytes().to_vec();
            &owned
        }
        Literal::Fixed(b) | Literal::Binary(b) => b,
        Literal::Boolean(_) | Literal::Float(_) | Literal::Double(_) => {
            return Err(validation(format!(
                "cannot bucket a {} value: bucket supports int, long, decimal, date, time, timestamp, string, uuid, fixed and binary",
                value.primitive_type()
            )))
        }
    };
    murmur3::murmur3_32(&mut Cursor::new(bytes), 0)
        .map(|h| h as i32)
        .map_err(|e| Error::new(crate::error::ErrorKind::Internal, "murmur3 hashing failed").with_source(e))
}

impl fmt::Display for Transform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Transform::Identity => f.write_str("identity"),
            Transform::Bucket(n) => write!(f, "bucket[{n}]"),
            Transform::Truncate(w) => write!(f, "truncate[{w}]"),
            Transform::Year => f.write_str("year"),
            Transform::Month => f.write_str("month"),
            Transform::Day => f.write_str("day"),
            Transform::Hour => f.write_str("hour"),
            Transform::Void => f.write_str("void"),
            Transform::Unknown(s) => f.write_str(s),
        }
    }
}

impl FromStr for Transform {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Transform::parse(s)
    }
}

impl Serialize for Transform {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Transform {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Transform::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_and_bucket_refuse_javas_unsupported_types() {
        let geometry = PrimitiveType::Geometry { crs: crate::spec::DEFAULT_CRS.into() };
        for t in [PrimitiveType::Variant, geometry.clone()] {
            assert!(!Transform::Identity.can_transform(&t), "{t}");
            assert!(Transform::Void.can_transform(&t), "{t}");
        }
        assert!(!Transform::Bucket(4).can_transform(&geometry));
        assert!(Transform::Identity.can_transform(&PrimitiveType::Binary));
    }

    #[test]
    fn parse_and_print() {
        for s in ["identity", "bucket[16]", "truncate[4]", "year", "month", "day", "hour", "void"] {
            assert_eq!(Transform::parse(s).unwrap().to_string(), s);
        }
        assert_eq!(Transform::parse("Bucket[3]").unwrap(), Transform::Bucket(3));
        assert_eq!(Transform::parse("zorder").unwrap(), Transform::Unknown("zorder".into()));
        assert!(Transform::parse("bucket[0]").is_err());
        assert!(Transform::parse("truncate[x]").is_err());
    }

    #[test]
    fn spec_bucket_hashes() {
        let cases = [
            (Literal::Int(34), 2017239379),
            (Literal::Long(34), 2017239379),
            (Literal::Date(17486), -653330422),
            (Literal::Time(81_068_000_000), -662762989),
            (Literal::Timestamp(1_510_871_468_000_000), -2047944441),
            (Literal::Timestamptz(1_510_871_468_000_000), -2047944441),
            (Literal::TimestampNs(1_510_871_468_000_000_000), -2047944441),
            (Literal::String("iceberg".into()), 1210000089),
            (Literal::Uuid(0xf79c3e09_677c_4bbd_a479_3f349cb785e7), 1488055340),
            (Literal::Binary(vec![0, 1, 2, 3]), -188683207),
            (Literal::Fixed(vec![0, 1, 2, 3]), -188683207),
            (Literal::Decimal(1420), -500754589),
        ];
        for (v, h) in cases {
            assert_eq!(bucket_hash(&v).unwrap(), h, "{v:?}");
        }
        assert!(bucket_hash(&Literal::Double(1.0)).is_err());
        // (2017239379 & MAX) % 16
        assert_eq!(
            Transform::Bucket(16).apply(&Literal::Int(34)).unwrap(),
            Some(Literal::Int(2017239379 % 16))
        );
        // negative hash masks the sign bit
        let expected = ((-653330422i32 & i32::MAX) as u32 % 10) as i32;
        assert_eq!(Transform::Bucket(10).apply(&Literal::Date(17486)).unwrap(), Some(Literal::Int(expected)));
    }

    #[test]
    fn truncate_values() {
        let t = Transform::Truncate(10);
        assert_eq!(t.apply(&Literal::Int(-1)).unwrap(), Some(Literal::Int(-10)));
        assert_eq!(t.apply(&Literal::Int(1)).unwrap(), Some(Literal::Int(0)));
        assert_eq!(t.apply(&Literal::Long(-10)).unwrap(), Some(Literal::Long(-10)));
        // Wraps near the minimum like Java's long arithmetic.
        assert_eq!(t.apply(&Literal::Long(i64::MIN)).unwrap(), Some(Literal::Long(i64::MAX - 1)));
        assert_eq!(
            Transform::Truncate(50).apply(&Literal::Decimal(1065)).unwrap(),
            Some(Literal::Decimal(1050))
        );
        assert_eq!(
            Transform::Truncate(50).apply(&Literal::Decimal(-1)).unwrap(),
            Some(Literal::Decimal(-50))
        );
        assert_eq!(
            Transform::Truncate(3).apply(&Literal::String("ab\u{1F600}cd".into())).unwrap(),
            Some(Literal::String("ab\u{1F600}".into()))
        );
        assert_eq!(
            Transform::Truncate(2).apply(&Literal::Binary(vec![1, 2, 3])).unwrap(),
            Some(Literal::Binary(vec![1, 2]))
        );
        assert!(Transform::Truncate(2).apply(&Literal::Double(1.0)).is_err());
    }

    #[test]
    fn temporal_floor_before_epoch() {
        let ts = Literal::Timestamp(-1); // 1969-12-31T23:59:59.999999
        assert_eq!(Transform::Year.apply(&ts).unwrap(), Some(Literal::Int(-1)));
        assert_eq!(Transform::Month.apply(&ts).unwrap(), Some(Literal::Int(-1)));
        assert_eq!(Transform::Day.apply(&ts).unwrap(), Some(Literal::Date(-1)));
        assert_eq!(Transform::Hour.apply(&ts).unwrap(), Some(Literal::Int(-1)));
        assert_eq!(Transform::Year.apply(&Literal::Date(-365)).unwrap(), Some(Literal::Int(-1)));
        assert_eq!(Transform::Month.apply(&Literal::Date(-31)).unwrap(), Some(Literal::Int(-1)));
        assert_eq!(Transform::Month.apply(&Literal::Date(-32)).unwrap(), Some(Literal::Int(-2)));
        assert_eq!(Transform::Day.apply(&Literal::Date(-5)).unwrap(), Some(Literal::Date(-5)));
        let t = Literal::Timestamptz(1_510_871_468_000_000); // 2017-11-16T22:31:08
        assert_eq!(Transform::Year.apply(&t).unwrap(), Some(Literal::Int(47)));
        assert_eq!(Transform::Month.apply(&t).unwrap(), Some(Literal::Int(47 * 12 + 10)));
        assert_eq!(Transform::Day.apply(&t).unwrap(), Some(Literal::Date(17486)));
        assert_eq!(Transform::Hour.apply(&t).unwrap(), Some(Literal::Int(17486 * 24 + 22)));
        assert_eq!(Transform::Day.apply(&Literal::TimestampNs(-1)).unwrap(), Some(Literal::Date(-1)));
        assert!(Transform::Hour.apply(&Literal::Date(1)).is_err());
        assert_eq!(Transform::Void.apply(&Literal::Int(1)).unwrap(), None);
    }

    #[test]
    fn result_types() {
        use PrimitiveType as P;
        assert_eq!(Transform::Bucket(4).result_type(&P::String).unwrap(), P::Int);
        assert_eq!(Transform::Day.result_type(&P::Timestamp).unwrap(), P::Date);
        assert_eq!(Transform::Year.result_type(&P::Date).unwrap(), P::Int);
        assert_eq!(Transform::Truncate(3).result_type(&P::String).unwrap(), P::String);
        assert!(Transform::Hour.result_type(&P::Date).is_err());
        assert!(Transform::Bucket(2).result_type(&P::Double).is_err());
        assert!(Transform::Truncate(2).result_type(&P::Uuid).is_err());
    }

    #[test]
    fn human_strings() {
        use PrimitiveType as P;
        let ts = P::Timestamp;
        assert_eq!(Transform::Year.to_human_string(&ts, Some(&Literal::Int(47))), "2017");
        assert_eq!(Transform::Year.to_human_string(&ts, Some(&Literal::Int(-1))), "1969");
        assert_eq!(Transform::Month.to_human_string(&ts, Some(&Literal::Int(-1))), "1969-12");
        assert_eq!(Transform::Month.to_human_string(&ts, Some(&Literal::Int(574))), "2017-11");
        assert_eq!(Transform::Day.to_human_string(&ts, Some(&Literal::Date(17486))), "2017-11-16");
        assert_eq!(Transform::Hour.to_human_string(&ts, Some(&Literal::Int(-1))), "1969-12-31-23");
        assert_eq!(Transform::Bucket(3).to_human_string(&P::String, Some(&Literal::Int(2))), "2");
        assert_eq!(Transform::Identity.to_human_string(&ts, None), "null");
        let d = P::Decimal { precision: 9, scale: 2 };
        assert_eq!(Transform::Truncate(50).to_human_string(&d, Some(&Literal::Decimal(1050))), "10.50");
    }
}
