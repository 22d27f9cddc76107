//! Iceberg single values (partition values, bounds, literals): the spec's single-value
//! binary serialization (Appendix D), the JSON single-value form, ordering, and the
//! human-readable form used in partition paths.

use std::cmp::Ordering;
use std::fmt;

use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::types::PrimitiveType;
use crate::error::{invalid_data, Result};

/// One Iceberg value of a primitive type. Temporal values are in the spec's units:
/// date = days since epoch, time/timestamp/timestamptz = microseconds,
/// timestamp_ns/timestamptz_ns = nanoseconds; decimals are the unscaled value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Literal {
    Boolean(bool),
    Int(i32),
    Long(i64),
    Float(f32),
    Double(f64),
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

/// A struct of optional values, e.g. a data file's partition tuple (one per partition field).
pub type StructValue = Vec<Option<Literal>>;

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
            PrimitiveType::Decimal { precision, .. } => {
                let v = decimal_from_bytes(bytes)?;
                if decimal_digits(v) > *precision {
                    return Err(invalid_data(format!(
                        "decimal value with unscaled value {v} does not fit {ty}"
                    )));
                }
                Literal::Decimal(v)
            }
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
        };
        Ok(lit)
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

    /// The spec's JSON single-value serialization (Appendix D). The type is needed for
    /// decimals (the literal holds only the unscaled value).
    pub fn to_json(&self, ty: &PrimitiveType) -> Result<Value> {
        if !self.matches_type(ty) {
            return Err(invalid_data(format!("cannot write {self:?} as a JSON value of type {ty}")));
        }
        Ok(match self {
            Literal::Boolean(b) => Value::Bool(*b),
            Literal::Int(v) => Value::from(*v),
            Literal::Long(v) => Value::from(*v),
            // Through the shortest decimal form so 1.1f32 is written as 1.1, like Java.
            Literal::Float(v) => json_number(format!("{v}").parse::<f64>().unwrap_or(f64::from(*v))),
            Literal::Double(v) => json_number(*v),
            Literal::Decimal(v) => Value::String(decimal_to_plain_string(*v, decimal_scale(ty))),
            Literal::Date(d) => Value::String(format_date(*d)),
            Literal::Time(t) => Value::String(format_iso_time(*t, 1_000)),
            Literal::Timestamp(t) => Value::String(format_timestamp(*t, 1_000)),
            Literal::Timestamptz(t) => Value::String(format!("{}+00:00", format_timestamp(*t, 1_000))),
            Literal::TimestampNs(t) => Value::String(format_timestamp(*t, 1)),
            Literal::TimestamptzNs(t) => Value::String(format!("{}+00:00", format_timestamp(*t, 1))),
            Literal::String(s) => Value::String(s.clone()),
            Literal::Uuid(u) => Value::String(uuid::Uuid::from_u128(*u).hyphenated().to_string()),
            Literal::Fixed(b) | Literal::Binary(b) => Value::String(hex_upper(b)),
        })
    }

    /// Reads the JSON single-value form of a value of type `ty`.
    pub fn from_json(ty: &PrimitiveType, v: &Value) -> Result<Literal> {
        let bad = || invalid_data(format!("expected a JSON value of type {ty}, found {v}"));
        let s = || v.as_str().ok_or_else(bad);
        Ok(match ty {
            PrimitiveType::Boolean => Literal::Boolean(v.as_bool().ok_or_else(bad)?),
            PrimitiveType::Int => {
                Literal::Int(v.as_i64().and_then(|x| i32::try_from(x).ok()).ok_or_else(bad)?)
            }
            PrimitiveType::Long => Literal::Long(v.as_i64().ok_or_else(bad)?),
            PrimitiveType::Float => Literal::Float(json_float(v).ok_or_else(bad)? as f32),
            PrimitiveType::Double => Literal::Double(json_float(v).ok_or_else(bad)?),
            PrimitiveType::Decimal { precision, scale } => {
                let text = s()?;
                let (unscaled, sc) = parse_decimal(text).ok_or_else(bad)?;
                if sc != *scale as i32 {
                    return Err(invalid_data(format!(
                        "expected a decimal with scale {scale} for {ty}, found '{text}' (scale {sc})"
                    )));
                }
                if decimal_digits(unscaled) > *precision {
                    return Err(invalid_data(format!("decimal '{text}' does not fit {ty}")));
                }
                Literal::Decimal(unscaled)
            }
            PrimitiveType::Date => Literal::Date(parse_date(s()?).ok_or_else(bad)?),
            PrimitiveType::Time => Literal::Time(parse_time_nanos(s()?).ok_or_else(bad)? / 1_000),
            PrimitiveType::Timestamp => {
                let (n, tz) = parse_timestamp_nanos(s()?).ok_or_else(bad)?;
                if tz {
                    return Err(invalid_data(format!("expected a timestamp without zone, found {v}")));
                }
                Literal::Timestamp(n.div_euclid(1_000) as i64)
            }
            PrimitiveType::Timestamptz => {
                let (n, tz) = parse_timestamp_nanos(s()?).ok_or_else(bad)?;
                if !tz {
                    return Err(invalid_data(format!("expected a timestamp with zone offset, found {v}")));
                }
                Literal::Timestamptz(n.div_euclid(1_000) as i64)
            }
            PrimitiveType::TimestampNs => {
                let (n, tz) = parse_timestamp_nanos(s()?).ok_or_else(bad)?;
                if tz {
                    return Err(invalid_data(format!("expected a timestamp without zone, found {v}")));
                }
                Literal::TimestampNs(i64::try_from(n).map_err(|_| bad())?)
            }
            PrimitiveType::TimestamptzNs => {
                let (n, tz) = parse_timestamp_nanos(s()?).ok_or_else(bad)?;
                if !tz {
                    return Err(invalid_data(format!("expected a timestamp with zone offset, found {v}")));
                }
                Literal::TimestamptzNs(i64::try_from(n).map_err(|_| bad())?)
            }
            PrimitiveType::String => Literal::String(s()?.to_string()),
            PrimitiveType::Uuid => Literal::Uuid(
                uuid::Uuid::parse_str(s()?)
                    .map_err(|e| invalid_data(format!("expected a UUID string, found {v}")).with_source(e))?
                    .as_u128(),
            ),
            PrimitiveType::Fixed(len) => {
                let b = unhex(s()?).ok_or_else(bad)?;
                if b.len() as u64 != *len {
                    return Err(invalid_data(format!(
                        "expected {len} bytes for {ty}, found {} in {v}",
                        b.len()
                    )));
                }
                Literal::Fixed(b)
            }
            PrimitiveType::Binary => Literal::Binary(unhex(s()?).ok_or_else(bad)?),
        })
    }

    /// The human-readable form Java uses in partition paths (`Transform.toHumanString`
    /// for identity): dates `yyyy-MM-dd`, times `HH:mm[:ss[.fff]]`, timestamps ISO local,
    /// timestamptz with `+00:00`, binary/fixed Base64, decimals with their scale.
    pub fn to_human_string(&self, ty: &PrimitiveType) -> String {
        match self {
            Literal::Decimal(v) => decimal_to_java_string(*v, decimal_scale(ty)),
            other => other.to_string(),
        }
    }
}

/// Human form (see [`Literal::to_human_string`]); decimals print their unscaled value
/// because the literal does not know its scale.
impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Boolean(b) => write!(f, "{b}"),
            Literal::Int(v) => write!(f, "{v}"),
            Literal::Long(v) => write!(f, "{v}"),
            Literal::Float(v) => f.write_str(&java_float_string(f64::from(*v), format!("{v:e}"))),
            Literal::Double(v) => f.write_str(&java_float_string(*v, format!("{v:e}"))),
            Literal::Decimal(v) => write!(f, "{v}"),
            Literal::Date(d) => f.write_str(&format_date(*d)),
            Literal::Time(t) => f.write_str(&format_local_time_to_string(*t)),
            Literal::Timestamp(t) => f.write_str(&format_timestamp(*t, 1_000)),
            Literal::Timestamptz(t) => write!(f, "{}+00:00", format_timestamp(*t, 1_000)),
            Literal::TimestampNs(t) => f.write_str(&format_timestamp(*t, 1)),
            Literal::TimestamptzNs(t) => write!(f, "{}+00:00", format_timestamp(*t, 1)),
            Literal::String(s) => f.write_str(s),
            Literal::Uuid(u) => write!(f, "{}", uuid::Uuid::from_u128(*u).hyphenated()),
            Literal::Fixed(b) | Literal::Binary(b) => {
                f.write_str(&base64::engine::general_purpose::STANDARD.encode(b))
            }
        }
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

fn cmp_f64(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.total_cmp(&b),
    }
}

fn json_number(v: f64) -> Value {
    serde_json::Number::from_f64(v).map(Value::Number).unwrap_or_else(|| {
        // JSON has no NaN/Infinity; Jackson writes them as strings.
        Value::String(if v.is_nan() {
            "NaN".into()
        } else if v > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        })
    })
}

fn json_float(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => match s.as_str() {
            "NaN" => Some(f64::NAN),
            "Infinity" => Some(f64::INFINITY),
            "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

fn decimal_scale(ty: &PrimitiveType) -> u32 {
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

/// Minimal two's-complement big-endian bytes, like Java's `BigInteger.toByteArray`.
pub(crate) fn decimal_to_bytes(v: i128) -> Vec<u8> {
    let b = v.to_be_bytes();
    let mut start = 0;
    while start < 15 {
        let redundant =
            (b[start] == 0x00 && b[start + 1] & 0x80 == 0) || (b[start] == 0xff && b[start + 1] & 0x80 != 0);
        if !redundant {
            break;
        }
        start += 1;
    }
    b[start..].to_vec()
}

/// Reads big-endian two's-complement bytes into an i128 (longer inputs are accepted
/// only when the extra leading bytes are sign extension).
pub(crate) fn decimal_from_bytes(bytes: &[u8]) -> Result<i128> {
    if bytes.is_empty() {
        return Err(invalid_data("expected at least 1 byte for a decimal value, found 0"));
    }
    let neg = bytes[0] & 0x80 != 0;
    let fill = if neg { 0xff } else { 0x00 };
    let mut buf = [fill; 16];
    if bytes.len() > 16 {
        let extra = bytes.len() - 16;
        if bytes[..extra].iter().any(|b| *b != fill) || (buf[0] ^ bytes[extra]) & 0x80 != 0 {
            return Err(invalid_data(format!(
                "decimal value of {} bytes does not fit 128 bits",
                bytes.len()
            )));
        }
        buf.copy_from_slice(&bytes[extra..]);
    } else {
        buf[16 - bytes.len()..].copy_from_slice(bytes);
    }
    Ok(i128::from_be_bytes(buf))
}

/// `unscaled` with `scale` digits after the point, e.g. (1420, 2) -> "14.20".
pub(crate) fn decimal_to_plain_string(unscaled: i128, scale: u32) -> String {
    let digits = unscaled.unsigned_abs().to_string();
    let sign = if unscaled < 0 { "-" } else { "" };
    let scale = scale as usize;
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    let padded = if digits.len() <= scale {
        format!("{}{digits}", "0".repeat(scale + 1 - digits.len()))
    } else {
        digits
    };
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{sign}{int}.{frac}")
}

/// Java's `BigDecimal.toString`: plain unless the adjusted exponent is below -6.
pub(crate) fn decimal_to_java_string(unscaled: i128, scale: u32) -> String {
    let digits = unscaled.unsigned_abs().to_string();
    let adjusted = digits.len() as i64 - 1 - i64::from(scale);
    if adjusted >= -6 {
        return decimal_to_plain_string(unscaled, scale);
    }
    let sign = if unscaled < 0 { "-" } else { "" };
    let (first, rest) = digits.split_at(1);
    let mantissa = if rest.is_empty() { first.to_string() } else { format!("{first}.{rest}") };
    format!("{sign}{mantissa}E{adjusted}")
}

/// Parses "14.20", "-0.5", "3", "1E+2"-style decimals into (unscaled, scale).
fn parse_decimal(s: &str) -> Option<(i128, i32)> {
    let (mant, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], s[i + 1..].parse::<i32>().ok()?),
        None => (s, 0),
    };
    let (neg, body) = match mant.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, mant.strip_prefix('+').unwrap_or(mant)),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let all = format!("{int}{frac}");
    let mut unscaled = all.parse::<i128>().ok()?;
    if neg {
        unscaled = -unscaled;
    }
    Some((unscaled, frac.len() as i32 - exp))
}

fn hex_upper(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02X}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 || !s.is_ascii() {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok()).collect()
}

/// Civil date (year, month, day) of a day count since 1970-01-01.
pub(crate) fn days_to_ymd(days: i32) -> Option<(i32, u32, u32)> {
    use chrono::Datelike;
    let d = chrono::NaiveDate::from_num_days_from_ce_opt(days.checked_add(UNIX_EPOCH_FROM_CE)?)?;
    Some((d.year(), d.month(), d.day()))
}

/// Day count since 1970-01-01 of a civil date.
pub(crate) fn ymd_to_days(y: i32, m: u32, d: u32) -> Option<i32> {
    use chrono::Datelike;
    let date = chrono::NaiveDate::from_ymd_opt(y, m, d)?;
    Some(date.num_days_from_ce() - UNIX_EPOCH_FROM_CE)
}

fn format_year(y: i32) -> String {
    // Java's ISO_LOCAL_DATE: 4 digits, a sign beyond 9999 or before year 0.
    if y > 9999 {
        format!("+{y}")
    } else if y < 0 {
        format!("-{:04}", -(y as i64))
    } else {
        format!("{y:04}")
    }
}

/// `yyyy-MM-dd` (Java `ISO_LOCAL_DATE`).
pub(crate) fn format_date(days: i32) -> String {
    match days_to_ymd(days) {
        Some((y, m, d)) => format!("{}-{m:02}-{d:02}", format_year(y)),
        None => days.to_string(),
    }
}

/// `HH:mm:ss[.fraction]` (Java `ISO_LOCAL_TIME`: seconds always, fraction with trailing
/// zeros removed). `units` is the value's time of day in units of `nanos_per_unit` ns.
fn format_iso_time(units: i64, nanos_per_unit: i64) -> String {
    let nanos_of_day = (units as i128 * nanos_per_unit as i128).rem_euclid(86_400_000_000_000) as i64;
    let secs = nanos_of_day / 1_000_000_000;
    let frac = nanos_of_day % 1_000_000_000;
    let mut s = format!("{:02}:{:02}:{:02}", secs / 3600, (secs / 60) % 60, secs % 60);
    if frac != 0 {
        let f = format!("{frac:09}");
        s.push('.');
        s.push_str(f.trim_end_matches('0'));
    }
    s
}

/// Java `LocalTime.toString`: `HH:mm`, then `:ss` if non-zero seconds or fraction, then
/// the fraction in groups of 3 digits.
fn format_local_time_to_string(micros: i64) -> String {
    let nanos = (micros as i128 * 1000).rem_euclid(86_400_000_000_000) as i64;
    let secs = nanos / 1_000_000_000;
    let frac = nanos % 1_000_000_000;
    let mut s = format!("{:02}:{:02}", secs / 3600, (secs / 60) % 60);
    if secs % 60 != 0 || frac != 0 {
        s.push_str(&format!(":{:02}", secs % 60));
        if frac != 0 {
            if frac % 1_000_000 == 0 {
                s.push_str(&format!(".{:03}", frac / 1_000_000));
            } else if frac % 1000 == 0 {
                s.push_str(&format!(".{:06}", frac / 1000));
            } else {
                s.push_str(&format!(".{frac:09}"));
            }
        }
    }
    s
}

/// ISO local date-time (Java `ISO_LOCAL_DATE_TIME`) of a value counted in units of
/// `nanos_per_unit` nanoseconds since the epoch.
pub(crate) fn format_timestamp(v: i64, nanos_per_unit: i64) -> String {
    let total = v as i128 * nanos_per_unit as i128;
    let nanos_per_day = 86_400_000_000_000i128;
    let days = total.div_euclid(nanos_per_day);
    let rem = total.rem_euclid(nanos_per_day) as i64;
    let date = i32::try_from(days).map(format_date).unwrap_or_else(|_| days.to_string());
    format!("{date}T{}", format_iso_time(rem, 1))
}

/// Java `Double.toString`/`Float.toString` style: plain with at least one fractional
/// digit for 1e-3 <= |v| < 1e7, otherwise `d.dddE[-]n`. `sci` is Rust's `{:e}` form.
fn java_float_string(v: f64, sci: String) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    let a = v.abs();
    if a == 0.0 || (1e-3..1e7).contains(&a) {
        // Shortest round-trip digits, from the same source as `sci`.
        let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        let neg = mant.starts_with('-');
        let digits: String = mant.chars().filter(char::is_ascii_digit).collect();
        let point = exp + 1; // digits before the decimal point
        let body = if point <= 0 {
            format!("0.{}{digits}", "0".repeat((-point) as usize))
        } else if (point as usize) >= digits.len() {
            format!("{digits}{}.0", "0".repeat(point as usize - digits.len()))
        } else {
            let (i, f) = digits.split_at(point as usize);
            format!("{i}.{f}")
        };
        let body = if a == 0.0 { "0.0".to_string() } else { body };
        return if neg { format!("-{body}") } else { body };
    }
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let mant = if mant.contains('.') { mant.to_string() } else { format!("{mant}.0") };
    format!("{mant}E{exp}")
}

/// Parses `yyyy-MM-dd` (optionally signed year).
fn parse_date(s: &str) -> Option<i32> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let mut it = body.splitn(3, '-');
    let y: i32 = it.next()?.parse().ok()?;
    let m: u32 = it.next()?.parse().ok()?;
    let d: u32 = it.next()?.parse().ok()?;
    ymd_to_days(if neg { -y } else { y }, m, d)
}

/// Parses `HH:mm[:ss[.fraction]]` into nanoseconds of day.
fn parse_time_nanos(s: &str) -> Option<i64> {
    let (hms, frac) = s.split_once('.').unwrap_or((s, ""));
    let mut it = hms.split(':');
    let h: i64 = it.next()?.parse().ok()?;
    let m: i64 = it.next()?.parse().ok()?;
    let sec: i64 = match it.next() {
        Some(x) => x.parse().ok()?,
        None => 0,
    };
    if it.next().is_some() || h > 23 || m > 59 || sec > 59 || frac.len() > 9 {
        return None;
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let nanos: i64 = if frac.is_empty() { 0 } else { format!("{frac:0<9}").parse().ok()? };
    Some(((h * 60 + m) * 60 + sec) * 1_000_000_000 + nanos)
}

/// Parses an ISO date-time with an optional offset (`Z`, `+HH:MM`, `-HH:MM`) into
/// (nanoseconds since the epoch in UTC, whether an offset was present).
fn parse_timestamp_nanos(s: &str) -> Option<(i128, bool)> {
    let (date, rest) = s.split_once('T')?;
    let days = parse_date(date)?;
    let (time, offset_secs, tz) = if let Some(t) = rest.strip_suffix('Z') {
        (t, 0i64, true)
    } else if let Some(i) = rest.rfind(['+', '-']) {
        let (t, off) = rest.split_at(i);
        let sign = if off.starts_with('-') { -1 } else { 1 };
        let mut parts = off[1..].split(':');
        let oh: i64 = parts.next()?.parse().ok()?;
        let om: i64 = parts.next().map(|x| x.parse().ok()).unwrap_or(Some(0))?;
        let os: i64 = parts.next().map(|x| x.parse().ok()).unwrap_or(Some(0))?;
        (t, sign * (oh * 3600 + om * 60 + os), true)
    } else {
        (rest, 0, false)
    };
    let nanos_of_day = parse_time_nanos(time)?;
    let total = i128::from(days) * 86_400_000_000_000 + i128::from(nanos_of_day)
        - i128::from(offset_secs) * 1_000_000_000;
    Some((total, tz))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
        assert!(Literal::from_bytes(&dec(2, 0), &Literal::Decimal(1000).to_bytes()).is_err());
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
    fn json_round_trip() {
        let cases = vec![
            (PrimitiveType::Boolean, Literal::Boolean(true), json!(true)),
            (PrimitiveType::Int, Literal::Int(34), json!(34)),
            (PrimitiveType::Long, Literal::Long(34), json!(34)),
            (PrimitiveType::Float, Literal::Float(1.1), json!(1.1)),
            (PrimitiveType::Double, Literal::Double(1.1), json!(1.1)),
            (dec(9, 2), Literal::Decimal(1420), json!("14.20")),
            (dec(9, 2), Literal::Decimal(-5), json!("-0.05")),
            (dec(9, 0), Literal::Decimal(7), json!("7")),
            (PrimitiveType::Date, Literal::Date(17486), json!("2017-11-16")),
            (PrimitiveType::Time, Literal::Time(81_068_000_000), json!("22:31:08")),
            (PrimitiveType::Time, Literal::Time(81_068_123_456), json!("22:31:08.123456")),
            (
                PrimitiveType::Timestamp,
                Literal::Timestamp(1_510_871_468_123_456),
                json!("2017-11-16T22:31:08.123456"),
            ),
            (
                PrimitiveType::Timestamptz,
                Literal::Timestamptz(1_510_871_468_123_456),
                json!("2017-11-16T22:31:08.123456+00:00"),
            ),
            (
                PrimitiveType::TimestampNs,
                Literal::TimestampNs(1_510_871_468_123_456_789),
                json!("2017-11-16T22:31:08.123456789"),
            ),
            (PrimitiveType::Timestamp, Literal::Timestamp(-1), json!("1969-12-31T23:59:59.999999")),
            (PrimitiveType::String, Literal::String("iceberg".into()), json!("iceberg")),
            (
                PrimitiveType::Uuid,
                Literal::Uuid(0xf79c3e09_677c_4bbd_a479_3f349cb785e7),
                json!("f79c3e09-677c-4bbd-a479-3f349cb785e7"),
            ),
            (PrimitiveType::Fixed(4), Literal::Fixed(vec![0, 1, 2, 0xff]), json!("000102FF")),
            (PrimitiveType::Binary, Literal::Binary(vec![0xab]), json!("AB")),
        ];
        for (ty, lit, j) in cases {
            assert_eq!(lit.to_json(&ty).unwrap(), j, "{ty}");
            assert_eq!(Literal::from_json(&ty, &j).unwrap(), lit, "{ty}");
        }
        assert_eq!(
            Literal::from_json(&PrimitiveType::Binary, &json!("ab")).unwrap(),
            Literal::Binary(vec![0xab])
        );
        assert_eq!(
            Literal::from_json(&PrimitiveType::Timestamptz, &json!("2017-11-16T23:31:08+01:00")).unwrap(),
            Literal::Timestamptz(1_510_871_468_000_000)
        );
        assert!(Literal::from_json(&dec(9, 2), &json!("14.2")).is_err());
        assert!(Literal::from_json(&PrimitiveType::Timestamp, &json!("2017-11-16T22:31:08+00:00")).is_err());
        assert!(Literal::from_json(&PrimitiveType::Int, &json!(1u64 << 40)).is_err());
        assert!(Literal::Int(1).to_json(&PrimitiveType::String).is_err());
    }

    #[test]
    fn human_strings() {
        assert_eq!(Literal::Date(17486).to_string(), "2017-11-16");
        assert_eq!(Literal::Date(-1).to_string(), "1969-12-31");
        assert_eq!(Literal::Timestamp(1_510_871_468_000_000).to_string(), "2017-11-16T22:31:08");
        assert_eq!(Literal::Timestamptz(1_510_871_468_000_000).to_string(), "2017-11-16T22:31:08+00:00");
        assert_eq!(Literal::Timestamp(1_510_871_460_000_000).to_string(), "2017-11-16T22:31:00");
        assert_eq!(Literal::Time(81_060_000_000).to_string(), "22:31");
        assert_eq!(Literal::Time(81_068_100_000).to_string(), "22:31:08.100");
        assert_eq!(Literal::Binary(vec![0, 1, 2, 3]).to_string(), "AAECAw==");
        assert_eq!(Literal::Decimal(1420).to_human_string(&dec(9, 2)), "14.20");
        assert_eq!(Literal::Decimal(1).to_human_string(&dec(20, 10)), "1E-10");
        assert_eq!(Literal::Double(1.0).to_string(), "1.0");
        assert_eq!(Literal::Double(0.001).to_string(), "0.001");
        assert_eq!(Literal::Double(1e7).to_string(), "1.0E7");
        assert_eq!(Literal::Double(-1.5e-4).to_string(), "-1.5E-4");
        assert_eq!(Literal::Float(1234.5).to_string(), "1234.5");
        assert_eq!(Literal::Double(0.0).to_string(), "0.0");
    }
}
