//! The human-readable form of a `Literal`, as Iceberg Java prints it in partition paths
//! (`Transform.toHumanString`), plus the ISO date/time and decimal text the JSON form shares.

use std::fmt;

use base64::Engine;

use super::types::PrimitiveType;
use super::values::{days_to_ymd, decimal_scale, Literal};

impl Literal {
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
pub(crate) fn format_iso_time(units: i64, nanos_per_unit: i64) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(p: u32, s: u32) -> PrimitiveType {
        PrimitiveType::Decimal { precision: p, scale: s }
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
