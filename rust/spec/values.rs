//! Iceberg single values (partition values, bounds, literals): the `Literal` type, its
//! type checks and Iceberg's ordering, and the date and decimal helpers the other forms
//! share. The serialized forms live next to it: `value_binary.rs` (the spec's single-value
//! binary serialization, Appendix D), `value_json.rs` (the JSON single-value form) and
//! `value_human.rs` (the human-readable form used in partition paths).

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

use super::types::PrimitiveType;

/// One Iceberg value of a primitive type. Temporal values are in the spec's units:
/// date = days since epoch, time/timestamp/timestamptz = microseconds,
/// timestamp_ns/timestamptz_ns = nanoseconds; decimals are the unscaled value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Literal {
    Boolean(bool),
    Int(i32),
    Long(i64),
    Float(#[serde(with = "float_json")] f32),
    Double(#[serde(with = "float_json")] f64),
    Decimal(i128),
    Date(i32),
    Time(i64),
    Timestamp(i64),
    Timestamptz(i64),
    TimestampNs(i64),
    TimestamptzNs(i64),
    String(String),
    Uuid(u128),
    Fixed(Vec<u8>),
    Binary(Vec<u8>),
}

/// The serde form of `Float` / `Double` (task and data-file JSON between driver and
/// executors): a number, or `"NaN"` / `"Infinity"` / `"-Infinity"`, which JSON numbers
/// cannot hold (serde_json writes them as `null`, which then fails to read back, so a
/// partition value NaN made every scan of its table fail).
mod float_json {
    use serde::de::{self, Visitor};
    use serde::{Deserializer, Serializer};

    pub trait Float: Copy {
        fn to_f64(self) -> f64;
        fn from_f64(v: f64) -> Self;
    }
    impl Float for f32 {
        fn to_f64(self) -> f64 {
            f64::from(self)
        }
        fn from_f64(v: f64) -> Self {
            v as f32
        }
    }
    impl Float for f64 {
        fn to_f64(self) -> f64 {
            self
        }
        fn from_f64(v: f64) -> Self {
            v
        }
    }

    pub fn serialize<T: Float + serde::Serialize, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
        let f = v.to_f64();
        if f.is_nan() {
            s.serialize_str("NaN")
        } else if f.is_infinite() {
            s.serialize_str(if f > 0.0 { "Infinity" } else { "-Infinity" })
        } else {
            v.serialize(s)
        }
    }

    pub fn deserialize<'de, T: Float, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = f64;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number, or \"NaN\", \"Infinity\" or \"-Infinity\"")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
                Ok(v)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
                Ok(v as f64)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
                Ok(v as f64)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<f64, E> {
                match v {
                    "NaN" => Ok(f64::NAN),
                    "Infinity" => Ok(f64::INFINITY),
                    "-Infinity" => Ok(f64::NEG_INFINITY),
                    other => Err(E::invalid_value(de::Unexpected::Str(other), &self)),
                }
            }
        }
        d.deserialize_any(V).map(T::from_f64)
    }
}

/// A struct of optional values, e.g. a data file's partition tuple (one per partition field).
pub type StructValue = Vec<Option<Literal>>;

/// True when two partition tuples of one spec name the same partition, a value written
/// before its field's promotion (int -> long, float -> double) equal to the same value after.
pub fn same_partition(a: &StructValue, b: &StructValue) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| match (x, y) {
            (Some(x), Some(y)) => x.widened() == y.widened(),
            (None, None) => true,
            _ => false,
        })
}

pub(crate) const MICROS_PER_DAY: i64 = 86_400_000_000;
pub(crate) const MICROS_PER_HOUR: i64 = 3_600_000_000;
/// Days from 0001-01-01 (CE day 1) to 1970-01-01.
const UNIX_EPOCH_FROM_CE: i32 = 719_163;

impl Literal {
    /// The literal's primitive type. A `Decimal` does not carry its precision and scale,
    /// so it reports `decimal(38, 0)`; a `Fixed` reports its own length.
    pub fn primitive_type(&self) -> PrimitiveType {
        match self {
            Literal::Boolean(_) => PrimitiveType::Boolean,
            Literal::Int(_) => PrimitiveType::Int,
            Literal::Long(_) => PrimitiveType::Long,
            Literal::Float(_) => PrimitiveType::Float,
            Literal::Double(_) => PrimitiveType::Double,
            Literal::Decimal(_) => PrimitiveType::Decimal { precision: 38, scale: 0 },
            Literal::Date(_) => PrimitiveType::Date,
            Literal::Time(_) => PrimitiveType::Time,
            Literal::Timestamp(_) => PrimitiveType::Timestamp,
            Literal::Timestamptz(_) => PrimitiveType::Timestamptz,
            Literal::TimestampNs(_) => PrimitiveType::TimestampNs,
            Literal::TimestamptzNs(_) => PrimitiveType::TimestamptzNs,
            Literal::String(_) => PrimitiveType::String,
            Literal::Uuid(_) => PrimitiveType::Uuid,
            Literal::Fixed(b) => PrimitiveType::Fixed(b.len() as u64),
            Literal::Binary(_) => PrimitiveType::Binary,
        }
    }

    /// True if this literal can be a value of `ty` (decimal precision/scale and fixed
    /// length are checked where the literal knows them).
    pub fn matches_type(&self, ty: &PrimitiveType) -> bool {
        match (self, ty) {
            (Literal::Decimal(v), PrimitiveType::Decimal { precision, .. }) => {
                decimal_digits(*v) <= *precision
            }
            (Literal::Fixed(b), PrimitiveType::Fixed(l)) => b.len() as u64 == *l,
            _ => std::mem::discriminant(&self.primitive_type()) == std::mem::discriminant(ty),
        }
    }

    /// This value read as `ty` when `ty` is a type it may have been promoted to since it
    /// was written: int -> long, float -> double (decimals keep their unscaled value). A
    /// partition tuple in a manifest written before `ALTER COLUMN ... TYPE` keeps its old Avro
    /// type, and Java reads it as the partition field's current type. `None` when no
    /// promotion applies (the value already has the type, or another one).
    pub fn promoted_to(&self, ty: &PrimitiveType) -> Option<Literal> {
        match (self, ty) {
            (Literal::Int(v), PrimitiveType::Long) => Some(Literal::Long(i64::from(*v))),
            (Literal::Float(v), PrimitiveType::Double) => Some(Literal::Double(f64::from(*v))),
            _ => None,
        }
    }

    /// The value as its widest promotion (int -> long, float -> double), for keys that must
    /// equate a partition value written before a promotion with the same value written after
    /// it. Only values of one partition field are ever compared, so widening is injective
    /// where it matters.
    pub fn widened(&self) -> std::borrow::Cow<'_, Literal> {
        match self {
            Literal::Int(v) => std::borrow::Cow::Owned(Literal::Long(i64::from(*v))),
            Literal::Float(v) => std::borrow::Cow::Owned(Literal::Double(f64::from(*v))),
            _ => std::borrow::Cow::Borrowed(self),
        }
    }

    /// Compares two values of the same type in Iceberg's order: floats with
    /// `-0.0 < +0.0` and NaN above everything, strings by UTF-8 bytes (= code points),
    /// binary/fixed as unsigned bytes, uuids as unsigned 128-bit big-endian.
    /// `None` when the two literals are of different types.
    pub fn cmp_same_type(&self, other: &Literal) -> Option<Ordering> {
        use Literal as L;
        Some(match (self, other) {
            (L::Boolean(a), L::Boolean(b)) => a.cmp(b),
            (L::Int(a), L::Int(b)) | (L::Date(a), L::Date(b)) => a.cmp(b),
            (L::Long(a), L::Long(b))
            | (L::Time(a), L::Time(b))
            | (L::Timestamp(a), L::Timestamp(b))
            | (L::Timestamptz(a), L::Timestamptz(b))
            | (L::TimestampNs(a), L::TimestampNs(b))
            | (L::TimestamptzNs(a), L::TimestamptzNs(b)) => a.cmp(b),
            (L::Float(a), L::Float(b)) => cmp_f64(f64::from(*a), f64::from(*b)),
            (L::Double(a), L::Double(b)) => cmp_f64(*a, *b),
            (L::Decimal(a), L::Decimal(b)) => a.cmp(b),
            (L::String(a), L::String(b)) => a.as_bytes().cmp(b.as_bytes()),
            (L::Uuid(a), L::Uuid(b)) => a.cmp(b),
            (L::Fixed(a), L::Fixed(b)) | (L::Binary(a), L::Binary(b)) => a.cmp(b),
            _ => return None,
        })
    }
}

fn cmp_f64(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.total_cmp(&b),
    }
}

/// The scale of a decimal type (0 for any other type: the literal alone does not know it).
pub(crate) fn decimal_scale(ty: &PrimitiveType) -> u32 {
    match ty {
        PrimitiveType::Decimal { scale, .. } => *scale,
        _ => 0,
    }
}

/// Number of decimal digits of the unscaled value (0 has 1 digit).
pub(crate) fn decimal_digits(v: i128) -> u32 {
    let mut n = v.unsigned_abs();
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

/// Civil date (year, month, day) of a day count since 1970-01-01.
pub(crate) fn days_to_ymd(days: i32) -> Option<(i32, u32, u32)> {
    use chrono::Datelike;
    let in_chrono =
        days.checked_add(UNIX_EPOCH_FROM_CE).and_then(chrono::NaiveDate::from_num_days_from_ce_opt);
    match in_chrono {
        Some(d) => Some((d.year(), d.month(), d.day())),
        None => civil_from_days(i64::from(days)),
    }
}

/// The proleptic Gregorian date of a day count since 1970-01-01 for dates beyond chrono's
/// years (±262,143) that an i32 day count still reaches and Java's `LocalDate` prints
/// (found by fuzzing: such a date was written as a bare number nobody could read back).
/// H. Hinnant's `civil_from_days`, in i64.
fn civil_from_days(days: i64) -> Option<(i32, u32, u32)> {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    Some((i32::try_from(y).ok()?, u32::try_from(m).ok()?, u32::try_from(d).ok()?))
}

/// The inverse of [`civil_from_days`] (`days_from_civil`), for valid dates of any i32 year.
fn days_from_civil(y: i32, m: u32, d: u32) -> Option<i32> {
    let leap = y.rem_euclid(4) == 0 && (y.rem_euclid(100) != 0 || y.rem_euclid(400) == 0);
    let month_days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    if d == 0 || d > month_days {
        return None;
    }
    let y = i64::from(y) - i64::from(m <= 2);
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (i64::from(m) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    i32::try_from(era * 146_097 + doe - 719_468).ok()
}

/// Day count since 1970-01-01 of a civil date.
pub(crate) fn ymd_to_days(y: i32, m: u32, d: u32) -> Option<i32> {
    use chrono::Datelike;
    match chrono::NaiveDate::from_ymd_opt(y, m, d) {
        Some(date) => Some(date.num_days_from_ce() - UNIX_EPOCH_FROM_CE),
        None => days_from_civil(y, m, d),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NaN and the infinities survive the task / descriptor JSON (a partition value NaN
    /// was written as null and then refused), and finite values keep their bits.
    #[test]
    fn float_literals_round_trip_through_json() {
        for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.1, 1e300, -2.5] {
            let text = serde_json::to_string(&Literal::Double(v)).unwrap();
            let Literal::Double(back) = serde_json::from_str::<Literal>(&text).unwrap() else {
                panic!("{text}")
            };
            assert!(back.to_bits() == v.to_bits() || (v.is_nan() && back.is_nan()), "{text}");
        }
        for v in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, 0.1, 3.4e38] {
            let text = serde_json::to_string(&Literal::Float(v)).unwrap();
            let Literal::Float(back) = serde_json::from_str::<Literal>(&text).unwrap() else {
                panic!("{text}")
            };
            assert!(back.to_bits() == v.to_bits() || (v.is_nan() && back.is_nan()), "{text}");
        }
        assert_eq!(serde_json::to_string(&Literal::Double(f64::NAN)).unwrap(), r#"{"Double":"NaN"}"#);
        assert!(serde_json::from_str::<Literal>(r#"{"Double":"nan"}"#).is_err());
        assert!(serde_json::from_str::<Literal>(r#"{"Double":null}"#).is_err());
    }

    #[test]
    fn dates_beyond_chronos_years_round_trip_and_agree_with_it_inside() {
        for days in (-800_000..800_000).step_by(997).chain([0, -1, 59, 60, 11_016, -719_528]) {
            let chrono = days_to_ymd(days).unwrap();
            assert_eq!(civil_from_days(i64::from(days)), Some(chrono), "{days}");
            assert_eq!(days_from_civil(chrono.0, chrono.1, chrono.2), Some(days), "{days}");
        }
        for days in [i32::MAX, i32::MIN, 1_811_939_311, -1_811_939_311, 100_000_000] {
            let (y, m, d) = days_to_ymd(days).unwrap();
            assert!(y.abs() > 262_143, "{days}: year {y}");
            assert_eq!(ymd_to_days(y, m, d), Some(days), "{days}: {y}-{m}-{d}");
        }
        assert_eq!(days_from_civil(1_000_000, 2, 29), Some(364_523_031), "a leap year (divisible by 400)");
        assert_eq!(days_from_civil(1_000_100, 2, 29), None, "not a leap year");
        assert_eq!(days_from_civil(5, 13, 1), None);
    }

    #[test]
    fn ordering() {
        assert_eq!(Literal::Double(-0.0).cmp_same_type(&Literal::Double(0.0)), Some(Ordering::Less));
        assert_eq!(Literal::Float(f32::NAN).cmp_same_type(&Literal::Float(1.0)), Some(Ordering::Greater));
        // U+FFFD (EF BF BD) sorts before U+1F600 (F0 9F 98 80) by code point and by UTF-8.
        assert_eq!(
            Literal::String("\u{FFFD}".into()).cmp_same_type(&Literal::String("\u{1F600}".into())),
            Some(Ordering::Less)
        );
        assert_eq!(
            Literal::Binary(vec![0x7f]).cmp_same_type(&Literal::Binary(vec![0x80])),
            Some(Ordering::Less)
        );
        assert_eq!(Literal::Int(1).cmp_same_type(&Literal::Long(1)), None);
    }

    #[test]
    fn values_written_before_a_promotion_read_as_the_current_type() {
        assert_eq!(Literal::Int(7).promoted_to(&PrimitiveType::Long), Some(Literal::Long(7)));
        assert_eq!(
            Literal::Float(0.1).promoted_to(&PrimitiveType::Double),
            Some(Literal::Double(f64::from(0.1f32)))
        );
        assert_eq!(Literal::Long(7).promoted_to(&PrimitiveType::Long), None);
        assert_eq!(Literal::Date(7).promoted_to(&PrimitiveType::Long), None);
        assert!(same_partition(&vec![Some(Literal::Int(7)), None], &vec![Some(Literal::Long(7)), None]));
        assert!(same_partition(&vec![Some(Literal::Float(0.5))], &vec![Some(Literal::Double(0.5))]));
        assert!(!same_partition(&vec![Some(Literal::Int(7))], &vec![Some(Literal::Long(8))]));
        assert!(!same_partition(&vec![Some(Literal::Int(7))], &vec![None]));
    }
}
