//! The spec's JSON single-value form of a `Literal` (Appendix D: how a single value, e.g. a
//! column default, is written in JSON), written as Iceberg Java writes it and parsed back.

use serde_json::Value;

use super::types::PrimitiveType;
use super::value_human::{decimal_to_plain_string, format_date, format_iso_time, format_timestamp};
use super::values::{decimal_scale, ymd_to_days, Literal};
use crate::error::{invalid_data, Result};

impl Literal {
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
            PrimitiveType::Decimal { scale, .. } => {
                let text = s()?;
                let (unscaled, sc) = parse_decimal(text).ok_or_else(bad)?;
                if sc != *scale as i32 {
                    return Err(invalid_data(format!(
                        "expected a decimal with scale {scale} for {ty}, found '{text}' (scale {sc})"
                    )));
                }
                // No precision check, as Java's SingleValueParser: a truncate partition value
                // of a decimal(P, S) may need P + 1 digits (truncate[10] of -999..9 is -10^P).
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
            // `unknown` has only null values, and the others have no literals in icefloe (a
            // geospatial default must be null, as Java's `Literals` has no geospatial literal).
            PrimitiveType::Unknown
            | PrimitiveType::Variant
            | PrimitiveType::Geometry { .. }
            | PrimitiveType::Geography { .. } => return Err(bad()),
        })
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

/// Parses "14.20", "-0.5", "3", "1E+2"-style decimals into (unscaled, scale).
pub(crate) fn parse_decimal(s: &str) -> Option<(i128, i32)> {
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

/// Parses `yyyy-MM-dd` (optionally signed year).
pub(crate) fn parse_date(s: &str) -> Option<i32> {
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
    use serde_json::json;

    use super::*;

    fn dec(p: u32, s: u32) -> PrimitiveType {
        PrimitiveType::Decimal { precision: p, scale: s }
    }

    /// Iceberg Java writes doubles with `Double.toString`; reading them back must give the
    /// same bits (serde_json's default float parser can be one ulp off: `float_roundtrip`).
    #[test]
    fn doubles_read_back_exactly() {
        for text in ["1.3410285095116159E56", "2.2250738585072014E-308", "4.9E-324", "1.7976931348623157E308"]
        {
            let v: Value = serde_json::from_str(text).unwrap();
            let lit = Literal::from_json(&PrimitiveType::Double, &v).unwrap();
            assert_eq!(lit, Literal::Double(text.parse::<f64>().unwrap()), "{text}");
        }
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
}
