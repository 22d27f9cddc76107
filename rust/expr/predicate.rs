//! The unbound expression tree: what a user writes (Python builder or filter string), with
//! columns named by their dotted name and literals not yet typed.
//!
//! # JSON form
//!
//! This is what `icefloe.expressions` sends (`to_json()`), what `parse_filter` returns and,
//! in its bound variant (see [`super::bind`]), what `FileScanTask.residual` carries. It
//! follows the Iceberg REST expression JSON:
//!
//! ```json
//! {"type": "true"}                                  {"type": "false"}
//! {"type": "and", "left": E, "right": E}            {"type": "or", "left": E, "right": E}
//! {"type": "not", "child": E}
//! {"type": "is-null" | "not-null" | "is-nan" | "not-nan", "term": "a.b"}
//! {"type": "lt" | "lt-eq" | "gt" | "gt-eq" | "eq" | "not-eq"
//!          | "starts-with" | "not-starts-with", "term": "id", "value": V}
//! {"type": "in" | "not-in", "term": "id", "values": [V, ...]}
//! ```
//!
//! An unbound value `V` is a JSON boolean, integer, float or string, or a tagged object for
//! the values JSON has no exact form for: `{"decimal": "1.50"}` (an exact decimal: the text
//! keeps the scale), `{"binary": "0AFF"}` (hex bytes) and `{"double": "Infinity"}` (or
//! `"-Infinity"`: an infinite double, which Iceberg Java accepts as a literal and JSON cannot
//! write as a number). Strings are converted to the
//! column's type when binding (`'2024-01-01'` to a date or timestamp, a uuid's text, ...).
//! NaN is not a value: use `is-nan` / `not-nan`, as Iceberg Java does.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{json, Map, Value};

use crate::error::{invalid_data, validation, Result};

/// The operation of a predicate (Java `Expression.Operation`, predicates only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operator {
    IsNull,
    NotNull,
    IsNan,
    NotNan,
    Lt,
    LtEq,
    Gt,
    GtEq,
    Eq,
    NotEq,
    StartsWith,
    NotStartsWith,
    In,
    NotIn,
}

impl Operator {
    /// The JSON `type` name.
    pub fn name(self) -> &'static str {
        match self {
            Operator::IsNull => "is-null",
            Operator::NotNull => "not-null",
            Operator::IsNan => "is-nan",
            Operator::NotNan => "not-nan",
            Operator::Lt => "lt",
            Operator::LtEq => "lt-eq",
            Operator::Gt => "gt",
            Operator::GtEq => "gt-eq",
            Operator::Eq => "eq",
            Operator::NotEq => "not-eq",
            Operator::StartsWith => "starts-with",
            Operator::NotStartsWith => "not-starts-with",
            Operator::In => "in",
            Operator::NotIn => "not-in",
        }
    }

    pub fn from_name(s: &str) -> Option<Operator> {
        Some(match s {
            "is-null" => Operator::IsNull,
            "not-null" => Operator::NotNull,
            "is-nan" => Operator::IsNan,
            "not-nan" => Operator::NotNan,
            "lt" => Operator::Lt,
            "lt-eq" => Operator::LtEq,
            "gt" => Operator::Gt,
            "gt-eq" => Operator::GtEq,
            "eq" => Operator::Eq,
            "not-eq" => Operator::NotEq,
            "starts-with" => Operator::StartsWith,
            "not-starts-with" => Operator::NotStartsWith,
            "in" => Operator::In,
            "not-in" => Operator::NotIn,
            _ => return None,
        })
    }

    /// The operator of `NOT (x op v)` (Java `Operation.negate`).
    pub fn negate(self) -> Operator {
        match self {
            Operator::IsNull => Operator::NotNull,
            Operator::NotNull => Operator::IsNull,
            Operator::IsNan => Operator::NotNan,
            Operator::NotNan => Operator::IsNan,
            Operator::Lt => Operator::GtEq,
            Operator::LtEq => Operator::Gt,
            Operator::Gt => Operator::LtEq,
            Operator::GtEq => Operator::Lt,
            Operator::Eq => Operator::NotEq,
            Operator::NotEq => Operator::Eq,
            Operator::StartsWith => Operator::NotStartsWith,
            Operator::NotStartsWith => Operator::StartsWith,
            Operator::In => Operator::NotIn,
            Operator::NotIn => Operator::In,
        }
    }

    /// The operator of `v op x` written as `x op' v` (for a literal on the left).
    pub fn flip(self) -> Operator {
        match self {
            Operator::Lt => Operator::Gt,
            Operator::LtEq => Operator::GtEq,
            Operator::Gt => Operator::Lt,
            Operator::GtEq => Operator::LtEq,
            other => other,
        }
    }

    pub fn is_unary(self) -> bool {
        matches!(self, Operator::IsNull | Operator::NotNull | Operator::IsNan | Operator::NotNan)
    }

    pub fn is_set(self) -> bool {
        matches!(self, Operator::In | Operator::NotIn)
    }
}

impl fmt::Display for Operator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An untyped literal as written by a user; typed by binding.
#[derive(Debug, Clone, PartialEq)]
pub enum Datum {
    Boolean(bool),
    Long(i64),
    Double(f64),
    /// Exact decimal text, e.g. `"-1.50"` (scale 2).
    Decimal(String),
    String(String),
    Binary(Vec<u8>),
}

impl Datum {
    pub fn to_json(&self) -> Value {
        match self {
            Datum::Boolean(b) => Value::Bool(*b),
            Datum::Long(v) => Value::from(*v),
            Datum::Double(v) => match serde_json::Number::from_f64(*v) {
                Some(n) => Value::Number(n),
                // Infinite (NaN is refused when binding): tagged, as JSON has no such number.
                None => {
                    json!({ "double": if v.is_nan() { "NaN" } else if *v > 0.0 { "Infinity" } else { "-Infinity" } })
                }
            },
            Datum::Decimal(s) => json!({ "decimal": s }),
            Datum::String(s) => Value::String(s.clone()),
            Datum::Binary(b) => json!({ "binary": b.iter().map(|x| format!("{x:02X}")).collect::<String>() }),
        }
    }

    pub fn from_json(v: &Value) -> Result<Datum> {
        let bad = || {
            invalid_data(format!(
                "expected a literal (boolean, number, string, {{\"decimal\": ..}}, {{\"binary\": ..}} or \
                 {{\"double\": \"Infinity\" | \"-Infinity\"}}), found {v}"
            ))
        };
        Ok(match v {
            Value::Bool(b) => Datum::Boolean(*b),
            Value::Number(n) => match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => Datum::Long(i),
                (None, Some(f)) if n.is_f64() => Datum::Double(f),
                _ => return Err(bad()),
            },
            Value::String(s) => Datum::String(s.clone()),
            Value::Object(o) if o.len() == 1 => match (o.get("decimal"), o.get("binary"), o.get("double")) {
                (Some(Value::String(s)), _, _) => Datum::Decimal(s.clone()),
                (_, Some(Value::String(h)), _) => Datum::Binary(unhex(h).ok_or_else(bad)?),
                (_, _, Some(Value::String(d))) => Datum::Double(match d.as_str() {
                    "Infinity" => f64::INFINITY,
                    "-Infinity" => f64::NEG_INFINITY,
                    _ => return Err(bad()),
                }),
                (_, _, Some(Value::Number(n))) => Datum::Double(n.as_f64().ok_or_else(bad)?),
                _ => return Err(bad()),
            },
            _ => return Err(bad()),
        })
    }
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 || !s.is_ascii() {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok()).collect()
}

impl fmt::Display for Datum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Datum::Boolean(b) => write!(f, "{b}"),
            Datum::Long(v) => write!(f, "{v}"),
            Datum::Double(v) => write!(f, "{v}"),
            Datum::Decimal(s) => f.write_str(s),
            Datum::String(s) => write!(f, "'{}'", s.replace('\'', "''")),
            Datum::Binary(b) => write!(f, "X'{}'", b.iter().map(|x| format!("{x:02X}")).collect::<String>()),
        }
    }
}

/// A predicate on one column: `term op literals` (no literal for unary operators, one for
/// comparisons and prefixes, any number for `in` / `not-in`).
#[derive(Debug, Clone, PartialEq)]
pub struct Predicate {
    pub op: Operator,
    pub term: String,
    pub literals: Vec<Datum>,
}

impl Predicate {
    pub fn unary(op: Operator, term: impl Into<String>) -> Self {
        Predicate { op, term: term.into(), literals: vec![] }
    }

    pub fn literal(op: Operator, term: impl Into<String>, value: Datum) -> Self {
        Predicate { op, term: term.into(), literals: vec![value] }
    }

    pub fn set(op: Operator, term: impl Into<String>, values: Vec<Datum>) -> Self {
        Predicate { op, term: term.into(), literals: values }
    }

    /// Checks the literal count fits the operator and no literal is NaN.
    pub fn validate(&self) -> Result<()> {
        let n = self.literals.len();
        let ok = if self.op.is_unary() {
            n == 0
        } else if self.op.is_set() {
            true
        } else {
            n == 1
        };
        if !ok {
            return Err(validation(format!(
                "predicate '{}' on '{}' expects {} literal(s), found {n}",
                self.op,
                self.term,
                if self.op.is_unary() { "0" } else { "1" }
            )));
        }
        if self.literals.iter().any(|d| matches!(d, Datum::Double(v) if v.is_nan())) {
            return Err(validation(format!(
                "predicate '{}' on '{}': NaN is not a comparable literal; use is_nan / not_nan",
                self.op, self.term
            )));
        }
        Ok(())
    }
}

/// An unbound boolean expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expression {
    True,
    False,
    And(Box<Expression>, Box<Expression>),
    Or(Box<Expression>, Box<Expression>),
    Not(Box<Expression>),
    Predicate(Predicate),
}

impl Expression {
    pub fn and(self, other: Expression) -> Expression {
        Expression::And(Box::new(self), Box::new(other))
    }

    pub fn or(self, other: Expression) -> Expression {
        Expression::Or(Box::new(self), Box::new(other))
    }

    #[allow(clippy::should_implement_trait)]
    pub fn not(self) -> Expression {
        Expression::Not(Box::new(self))
    }

    pub fn pred(op: Operator, term: &str, value: Datum) -> Expression {
        Expression::Predicate(Predicate::literal(op, term, value))
    }

    /// The column names the expression mentions, as written.
    pub fn referenced_terms(&self) -> Vec<&str> {
        let mut out = vec![];
        self.collect_terms(&mut out);
        out
    }

    fn collect_terms<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Expression::True | Expression::False => {}
            Expression::And(l, r) | Expression::Or(l, r) => {
                l.collect_terms(out);
                r.collect_terms(out);
            }
            Expression::Not(c) => c.collect_terms(out),
            Expression::Predicate(p) => {
                if !out.contains(&p.term.as_str()) {
                    out.push(&p.term)
                }
            }
        }
    }

    pub fn to_json(&self) -> Value {
        match self {
            Expression::True => json!({"type": "true"}),
            Expression::False => json!({"type": "false"}),
            Expression::And(l, r) => json!({"type": "and", "left": l.to_json(), "right": r.to_json()}),
            Expression::Or(l, r) => json!({"type": "or", "left": l.to_json(), "right": r.to_json()}),
            Expression::Not(c) => json!({"type": "not", "child": c.to_json()}),
            Expression::Predicate(p) => {
                let mut m = Map::new();
                m.insert("type".into(), json!(p.op.name()));
                m.insert("term".into(), json!(p.term));
                if p.op.is_set() {
                    m.insert("values".into(), Value::Array(p.literals.iter().map(Datum::to_json).collect()));
                } else if let Some(v) = p.literals.first() {
                    m.insert("value".into(), v.to_json());
                }
                Value::Object(m)
            }
        }
    }

    pub fn from_json(v: &Value) -> Result<Expression> {
        let o =
            v.as_object().ok_or_else(|| invalid_data(format!("expected an expression object, found {v}")))?;
        let ty = o
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid_data(format!("expression has no string 'type': {v}")))?;
        let child = |k: &str| -> Result<Box<Expression>> {
            let c = o.get(k).ok_or_else(|| invalid_data(format!("'{ty}' expression has no '{k}': {v}")))?;
            Ok(Box::new(Expression::from_json(c)?))
        };
        Ok(match ty {
            "true" => Expression::True,
            "false" => Expression::False,
            "and" => Expression::And(child("left")?, child("right")?),
            "or" => Expression::Or(child("left")?, child("right")?),
            "not" => Expression::Not(child("child")?),
            _ => {
                let op = Operator::from_name(ty)
                    .ok_or_else(|| invalid_data(format!("unknown expression type '{ty}'")))?;
                let term = o
                    .get("term")
                    .and_then(Value::as_str)
                    .ok_or_else(|| invalid_data(format!("predicate '{ty}' has no string 'term': {v}")))?;
                let literals = if op.is_unary() {
                    vec![]
                } else if op.is_set() {
                    o.get("values")
                        .and_then(Value::as_array)
                        .ok_or_else(|| invalid_data(format!("predicate '{ty}' has no 'values' array: {v}")))?
                        .iter()
                        .map(Datum::from_json)
                        .collect::<Result<Vec<_>>>()?
                } else {
                    let lit = o
                        .get("value")
                        .ok_or_else(|| invalid_data(format!("predicate '{ty}' has no 'value': {v}")))?;
                    vec![Datum::from_json(lit)?]
                };
                let p = Predicate { op, term: term.to_string(), literals };
                p.validate()?;
                Expression::Predicate(p)
            }
        })
    }

    pub fn from_json_str(s: &str) -> Result<Expression> {
        let v: Value = serde_json::from_str(s)
            .map_err(|e| invalid_data("expression is not valid JSON").with_source(e))?;
        Expression::from_json(&v)
    }
}

impl fmt::Display for Expression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expression::True => f.write_str("true"),
            Expression::False => f.write_str("false"),
            Expression::And(l, r) => write!(f, "({l} AND {r})"),
            Expression::Or(l, r) => write!(f, "({l} OR {r})"),
            Expression::Not(c) => write!(f, "NOT {c}"),
            Expression::Predicate(p) => {
                let vals = p.literals.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ");
                if p.op.is_set() {
                    write!(f, "{} {} ({vals})", p.term, p.op)
                } else {
                    write!(f, "{} {} {vals}", p.term, p.op)
                }
            }
        }
    }
}

impl Serialize for Expression {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Expression {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Expression::from_json(&v).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_round_trip() {
        let e = Expression::pred(Operator::Gt, "id", Datum::Long(5))
            .and(Expression::Predicate(Predicate::set(
                Operator::In,
                "kind",
                vec![Datum::String("x".into()), Datum::Decimal("1.50".into())],
            )))
            .or(Expression::Predicate(Predicate::unary(Operator::IsNull, "a.b")).not())
            .and(Expression::pred(Operator::Eq, "bin", Datum::Binary(vec![0, 255])))
            .and(Expression::pred(Operator::LtEq, "d", Datum::Double(1.5)));
        let j = e.to_json();
        assert_eq!(Expression::from_json(&j).unwrap(), e);
        assert_eq!(j["left"]["left"]["left"]["right"]["values"][1], json!({"decimal": "1.50"}));
    }

    #[test]
    fn infinite_doubles_round_trip_tagged() {
        for v in [f64::INFINITY, f64::NEG_INFINITY] {
            let e = Expression::pred(Operator::Lt, "d", Datum::Double(v));
            let j = e.to_json();
            let tag = if v > 0.0 { "Infinity" } else { "-Infinity" };
            assert_eq!(j["value"], json!({ "double": tag }));
            assert_eq!(Expression::from_json(&j).unwrap(), e);
        }
        let bad = json!({"type": "lt", "term": "d", "value": {"double": "inf"}});
        let e = Expression::from_json(&bad).unwrap_err().to_string();
        assert!(e.contains("Infinity") && e.contains("inf"), "{e}");
    }

    #[test]
    fn bad_json_is_named() {
        let e = Expression::from_json(&json!({"type": "lt", "term": "id"})).unwrap_err();
        assert!(e.to_string().contains("'value'"), "{e}");
        let e = Expression::from_json(&json!({"type": "like", "term": "id"})).unwrap_err();
        assert!(e.to_string().contains("like"), "{e}");
    }
}
