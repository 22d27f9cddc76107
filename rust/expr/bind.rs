//! Binding: resolving an [`Expression`]'s column names against a [`Schema`] and typing its
//! literals, as Iceberg Java's `UnboundPredicate.bind` and `Literals` conversions do.
//!
//! Rules kept from Java: `is_null` on a required column is `false`, `not_null` `true`;
//! `is_nan`/`not_nan` need a float or double column; a literal beyond the column type's
//! range (an int column against `3000000000`, a float column against `1e300`) makes the
//! predicate always true or always false instead of failing (Java's `aboveMax`/`belowMin`);
//! out-of-range `in` values are dropped, an empty `in` is `false` (`not_in`: `true`) and a
//! one-value `in` becomes `eq`. Lenient where Java refuses and SQL users expect it: a
//! date-only string binds to timestamps (midnight), a zone-less string to `timestamptz`
//! (UTC), an integral float to int/long, a decimal to a larger scale when exact, and a
//! decimal literal (SQL `1.5`) to float/double (Java has no decimal -> double conversion).
//!
//! Bound JSON: the unbound form (see [`super::predicate`]) plus `"field-id"`,
//! `"field-type"` (Iceberg type string) and `"required"` on every predicate, with values in
//! the spec's JSON single-value form of the column type (`Literal::to_json`).

use std::cmp::Ordering;
use std::fmt;

use serde_json::{json, Map, Value};

use super::predicate::{Datum, Expression, Operator, Predicate};
use crate::error::{invalid_data, validation, Result};
use crate::spec::{Literal, PrimitiveType, Schema};

/// A resolved column: its field id, full dotted name, primitive type and nullability.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundReference {
    pub field_id: i32,
    pub name: String,
    pub ty: PrimitiveType,
    pub required: bool,
}

/// A predicate on a resolved column with literals of the column's type. For `in`/`not_in`
/// the literals are sorted in Iceberg order without duplicates (at least two of them).
#[derive(Debug, Clone, PartialEq)]
pub struct BoundPredicate {
    pub op: Operator,
    pub term: BoundReference,
    pub literals: Vec<Literal>,
}

impl BoundPredicate {
    /// The single literal of a comparison or prefix predicate.
    pub fn literal(&self) -> Option<&Literal> {
        if self.op.is_set() {
            None
        } else {
            self.literals.first()
        }
    }

    /// Is `v` one of the `in` literals? (binary search: the literals are sorted)
    pub fn set_contains(&self, v: &Literal) -> bool {
        let found = |v: &Literal| {
            self.literals.binary_search_by(|x| x.cmp_same_type(v).unwrap_or(Ordering::Less)).is_ok()
        };
        // A float zero is in the set when either zero is (SQL: `-0.0 IN (0.0)`).
        match v {
            Literal::Float(x) if *x == 0.0 => found(&Literal::Float(0.0)) || found(&Literal::Float(-0.0)),
            Literal::Double(x) if *x == 0.0 => found(&Literal::Double(0.0)) || found(&Literal::Double(-0.0)),
            _ => found(v),
        }
    }
}

/// A bound boolean expression.
#[derive(Debug, Clone, PartialEq)]
pub enum BoundExpr {
    True,
    False,
    And(Box<BoundExpr>, Box<BoundExpr>),
    Or(Box<BoundExpr>, Box<BoundExpr>),
    Not(Box<BoundExpr>),
    Predicate(BoundPredicate),
}

impl BoundExpr {
    /// `a AND b`, simplified when either side is constant.
    pub fn and(a: BoundExpr, b: BoundExpr) -> BoundExpr {
        match (a, b) {
            (BoundExpr::False, _) | (_, BoundExpr::False) => BoundExpr::False,
            (BoundExpr::True, x) | (x, BoundExpr::True) => x,
            (a, b) => BoundExpr::And(Box::new(a), Box::new(b)),
        }
    }

    /// `a OR b`, simplified when either side is constant.
    pub fn or(a: BoundExpr, b: BoundExpr) -> BoundExpr {
        match (a, b) {
            (BoundExpr::True, _) | (_, BoundExpr::True) => BoundExpr::True,
            (BoundExpr::False, x) | (x, BoundExpr::False) => x,
            (a, b) => BoundExpr::Or(Box::new(a), Box::new(b)),
        }
    }

    /// `NOT a`, simplified when `a` is constant.
    pub fn negate(a: BoundExpr) -> BoundExpr {
        match a {
            BoundExpr::True => BoundExpr::False,
            BoundExpr::False => BoundExpr::True,
            BoundExpr::Not(c) => *c,
            a => BoundExpr::Not(Box::new(a)),
        }
    }

    /// Pushes every NOT down to the predicates by negating them (Java `RewriteNot`).
    pub fn rewrite_not(self) -> BoundExpr {
        match self {
            BoundExpr::Not(c) => c.negated(),
            BoundExpr::And(l, r) => BoundExpr::and(l.rewrite_not(), r.rewrite_not()),
            BoundExpr::Or(l, r) => BoundExpr::or(l.rewrite_not(), r.rewrite_not()),
            other => other,
        }
    }

    fn negated(self) -> BoundExpr {
        match self {
            BoundExpr::True => BoundExpr::False,
            BoundExpr::False => BoundExpr::True,
            BoundExpr::Not(c) => c.rewrite_not(),
            BoundExpr::And(l, r) => BoundExpr::or(l.negated(), r.negated()),
            BoundExpr::Or(l, r) => BoundExpr::and(l.negated(), r.negated()),
            BoundExpr::Predicate(mut p) => {
                p.op = p.op.negate();
                BoundExpr::Predicate(p)
            }
        }
    }

    /// The field ids the expression reads.
    pub fn field_ids(&self) -> Vec<i32> {
        let mut out = vec![];
        self.visit_predicates(&mut |p| {
            if !out.contains(&p.term.field_id) {
                out.push(p.term.field_id)
            }
        });
        out
    }

    /// Calls `f` on every predicate (left to right).
    pub fn visit_predicates<'a>(&'a self, f: &mut impl FnMut(&'a BoundPredicate)) {
        match self {
            BoundExpr::True | BoundExpr::False => {}
            BoundExpr::And(l, r) | BoundExpr::Or(l, r) => {
                l.visit_predicates(f);
                r.visit_predicates(f);
            }
            BoundExpr::Not(c) => c.visit_predicates(f),
            BoundExpr::Predicate(p) => f(p),
        }
    }

    pub fn to_json(&self) -> Result<Value> {
        Ok(match self {
            BoundExpr::True => json!({"type": "true"}),
            BoundExpr::False => json!({"type": "false"}),
            BoundExpr::And(l, r) => json!({"type": "and", "left": l.to_json()?, "right": r.to_json()?}),
            BoundExpr::Or(l, r) => json!({"type": "or", "left": l.to_json()?, "right": r.to_json()?}),
            BoundExpr::Not(c) => json!({"type": "not", "child": c.to_json()?}),
            BoundExpr::Predicate(p) => {
                let mut m = Map::new();
                m.insert("type".into(), json!(p.op.name()));
                m.insert("term".into(), json!(p.term.name));
                m.insert("field-id".into(), json!(p.term.field_id));
                m.insert("field-type".into(), json!(p.term.ty.to_string()));
                m.insert("required".into(), json!(p.term.required));
                let vals = p.literals.iter().map(|l| l.to_json(&p.term.ty)).collect::<Result<Vec<_>>>()?;
                if p.op.is_set() {
                    m.insert("values".into(), Value::Array(vals));
                } else if let Some(v) = vals.into_iter().next() {
                    m.insert("value".into(), v);
                }
                Value::Object(m)
            }
        })
    }

    pub fn from_json(v: &Value) -> Result<BoundExpr> {
        let o =
            v.as_object().ok_or_else(|| invalid_data(format!("expected an expression object, found {v}")))?;
        let ty = o
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid_data(format!("expression has no string 'type': {v}")))?;
        let child = |k: &str| -> Result<Box<BoundExpr>> {
            let c = o.get(k).ok_or_else(|| invalid_data(format!("'{ty}' expression has no '{k}': {v}")))?;
            Ok(Box::new(BoundExpr::from_json(c)?))
        };
        Ok(match ty {
            "true" => BoundExpr::True,
            "false" => BoundExpr::False,
            "and" => BoundExpr::And(child("left")?, child("right")?),
            "or" => BoundExpr::Or(child("left")?, child("right")?),
            "not" => BoundExpr::Not(child("child")?),
            _ => {
                let op = Operator::from_name(ty)
                    .ok_or_else(|| invalid_data(format!("unknown expression type '{ty}'")))?;
                let name = o.get("term").and_then(Value::as_str).unwrap_or_default().to_string();
                let field_id = o
                    .get("field-id")
                    .and_then(Value::as_i64)
                    .and_then(|x| i32::try_from(x).ok())
                    .ok_or_else(|| invalid_data(format!("bound predicate has no integer 'field-id': {v}")))?;
                let fty = PrimitiveType::parse(
                    o.get("field-type")
                        .and_then(Value::as_str)
                        .ok_or_else(|| invalid_data(format!("bound predicate has no 'field-type': {v}")))?,
                )?;
                let required = o.get("required").and_then(Value::as_bool).unwrap_or(false);
                let literals = if op.is_unary() {
                    vec![]
                } else if op.is_set() {
                    o.get("values")
                        .and_then(Value::as_array)
                        .ok_or_else(|| invalid_data(format!("predicate '{ty}' has no 'values' array: {v}")))?
                        .iter()
                        .map(|x| Literal::from_json(&fty, x))
                        .collect::<Result<Vec<_>>>()?
                } else {
                    let x = o
                        .get("value")
                        .ok_or_else(|| invalid_data(format!("predicate '{ty}' has no 'value': {v}")))?;
                    vec![Literal::from_json(&fty, x)?]
                };
                BoundExpr::Predicate(BoundPredicate {
                    op,
                    term: BoundReference { field_id, name, ty: fty, required },
                    literals,
                })
            }
        })
    }

    pub fn from_json_str(s: &str) -> Result<BoundExpr> {
        let v: Value = serde_json::from_str(s)
            .map_err(|e| invalid_data("bound expression is not valid JSON").with_source(e))?;
        BoundExpr::from_json(&v)
    }
}

impl fmt::Display for BoundExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BoundExpr::True => f.write_str("true"),
            BoundExpr::False => f.write_str("false"),
            BoundExpr::And(l, r) => write!(f, "({l} AND {r})"),
            BoundExpr::Or(l, r) => write!(f, "({l} OR {r})"),
            BoundExpr::Not(c) => write!(f, "NOT {c}"),
            BoundExpr::Predicate(p) => {
                let vals = p.literals.iter().map(|l| format!("{l:?}")).collect::<Vec<_>>().join(", ");
                write!(f, "{} {} {vals}", p.term.name, p.op)
            }
        }
    }
}

/// Binds `expr` to `schema` (see the module doc for the rules).
pub fn bind(expr: &Expression, schema: &Schema, case_sensitive: bool) -> Result<BoundExpr> {
    Ok(match expr {
        Expression::True => BoundExpr::True,
        Expression::False => BoundExpr::False,
        Expression::And(l, r) => {
            BoundExpr::and(bind(l, schema, case_sensitive)?, bind(r, schema, case_sensitive)?)
        }
        Expression::Or(l, r) => {
            BoundExpr::or(bind(l, schema, case_sensitive)?, bind(r, schema, case_sensitive)?)
        }
        Expression::Not(c) => BoundExpr::negate(bind(c, schema, case_sensitive)?),
        Expression::Predicate(p) => bind_predicate(p, schema, case_sensitive)?,
    })
}

fn bind_predicate(p: &Predicate, schema: &Schema, case_sensitive: bool) -> Result<BoundExpr> {
    p.validate()?;
    let field = if case_sensitive {
        schema.field_by_name(&p.term)
    } else {
        schema.field_by_name_case_insensitive(&p.term)?
    };
    let field = field.ok_or_else(|| {
        validation(format!(
            "row filter names column '{}', which is not in the table schema (columns: {})",
            p.term,
            schema.fields().iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join(", ")
        ))
    })?;
    let ty = field.field_type.as_primitive().ok_or_else(|| {
        validation(format!(
            "row filter predicate '{}' needs a primitive column; '{}' is {}",
            p.op, p.term, field.field_type
        ))
    })?;
    let name = schema.name_by_id(field.id).unwrap_or(&p.term).to_string();
    let term = BoundReference { field_id: field.id, name, ty: ty.clone(), required: field.required };
    let is_float = matches!(ty, PrimitiveType::Float | PrimitiveType::Double);
    let pred = |literals| BoundExpr::Predicate(BoundPredicate { op: p.op, term: term.clone(), literals });
    Ok(match p.op {
        Operator::IsNull if term.required => BoundExpr::False,
        Operator::NotNull if term.required => BoundExpr::True,
        Operator::IsNull | Operator::NotNull => pred(vec![]),
        Operator::IsNan | Operator::NotNan => {
            if !is_float {
                return Err(validation(format!(
                    "{} cannot be used with column '{}' of type {ty}: only float and double values can be NaN",
                    p.op, term.name
                )));
            }
            pred(vec![])
        }
        Operator::StartsWith | Operator::NotStartsWith => {
            if *ty != PrimitiveType::String {
                return Err(validation(format!("{} needs a string column; '{}' is {ty}", p.op, term.name)));
            }
            match &p.literals[0] {
                Datum::String(s) => pred(vec![Literal::String(s.clone())]),
                other => {
                    return Err(validation(format!(
                        "{} on '{}' needs a string prefix, found {other}",
                        p.op, term.name
                    )))
                }
            }
        }
        Operator::In | Operator::NotIn => {
            let mut lits = vec![];
            for d in &p.literals {
                match convert(d, ty).map_err(|why| bad_literal(p, &term, d, &why))? {
                    Converted::Value(l) => lits.push(l),
                    Converted::AboveMax | Converted::BelowMin => {}
                }
            }
            lits.sort_by(|a, b| a.cmp_same_type(b).unwrap_or(Ordering::Equal));
            lits.dedup_by(|a, b| a.cmp_same_type(b) == Some(Ordering::Equal));
            match (lits.len(), p.op) {
                (0, Operator::In) => BoundExpr::False,
                (0, _) => BoundExpr::True,
                (1, op) => BoundExpr::Predicate(BoundPredicate {
                    op: if op == Operator::In { Operator::Eq } else { Operator::NotEq },
                    term,
                    literals: lits,
                }),
                _ => pred(lits),
            }
        }
        op => {
            let d = &p.literals[0];
            match convert(d, ty).map_err(|why| bad_literal(p, &term, d, &why))? {
                Converted::Value(l) => pred(vec![l]),
                Converted::AboveMax => match op {
                    Operator::Lt | Operator::LtEq | Operator::NotEq => BoundExpr::True,
                    _ => BoundExpr::False,
                },
                Converted::BelowMin => match op {
                    Operator::Gt | Operator::GtEq | Operator::NotEq => BoundExpr::True,
                    _ => BoundExpr::False,
                },
            }
        }
    })
}

fn bad_literal(p: &Predicate, term: &BoundReference, d: &Datum, why: &str) -> crate::Error {
    validation(format!(
        "row filter '{}': literal {d} does not fit column '{}' of type {} ({why})",
        p.op, term.name, term.ty
    ))
}

/// The result of converting a literal to a column type.
#[derive(Debug, Clone, PartialEq)]
pub enum Converted {
    Value(Literal),
    /// Greater than every value of the type (Java `Literals.aboveMax()`).
    AboveMax,
    /// Less than every value of the type.
    BelowMin,
}

/// Converts an untyped literal to a value of `ty` (Java `Literal.to(Type)`), or says why not.
pub fn convert(d: &Datum, ty: &PrimitiveType) -> std::result::Result<Converted, String> {
    use Converted::Value as V;
    use PrimitiveType as P;
    let r = match (d, ty) {
        (Datum::Boolean(b), P::Boolean) => V(Literal::Boolean(*b)),
        (Datum::Long(v), P::Int) => match i32::try_from(*v) {
            Ok(x) => V(Literal::Int(x)),
            Err(_) if *v > 0 => Converted::AboveMax,
            Err(_) => Converted::BelowMin,
        },
        (Datum::Long(v), P::Long) => V(Literal::Long(*v)),
        (Datum::Long(v), P::Float) => V(Literal::Float(*v as f32)),
        (Datum::Long(v), P::Double) => V(Literal::Double(*v as f64)),
        (Datum::Long(v), P::Date) => match i32::try_from(*v) {
            Ok(x) => V(Literal::Date(x)),
            Err(_) if *v > 0 => Converted::AboveMax,
            Err(_) => Converted::BelowMin,
        },
        (Datum::Long(v), P::Time) => V(Literal::Time(*v)),
        (Datum::Long(v), P::Timestamp) => V(Literal::Timestamp(*v)),
        (Datum::Long(v), P::Timestamptz) => V(Literal::Timestamptz(*v)),
        (Datum::Long(v), P::TimestampNs) => V(Literal::TimestampNs(micros_to_nanos(*v)?)),
        (Datum::Long(v), P::TimestamptzNs) => V(Literal::TimestamptzNs(micros_to_nanos(*v)?)),
        (Datum::Long(v), P::Decimal { precision, scale }) => {
            decimal_value(i128::from(*v), 0, *precision, *scale, false)?
        }
        (Datum::Double(v), P::Float) => {
            if *v > f64::from(f32::MAX) {
                Converted::AboveMax
            } else if *v < f64::from(f32::MIN) {
                Converted::BelowMin
            } else {
                V(Literal::Float(*v as f32))
            }
        }
        (Datum::Double(v), P::Double) => V(Literal::Double(*v)),
        (Datum::Double(v), P::Int | P::Long) if v.fract() == 0.0 && v.is_finite() => {
            return convert(&Datum::Long(*v as i64), ty)
        }
        (Datum::Double(v), P::Decimal { precision, scale }) => {
            // Java: BigDecimal.valueOf(double) (its shortest text), rounded HALF_UP to the scale.
            let (u, s) = parse_decimal(&format!("{v}")).ok_or("not a finite number")?;
            decimal_value(u, s, *precision, *scale, true)?
        }
        (Datum::Decimal(t), P::Float) => V(Literal::Float(t.parse::<f32>().map_err(|e| e.to_string())?)),
        (Datum::Decimal(t), P::Double) => V(Literal::Double(t.parse::<f64>().map_err(|e| e.to_string())?)),
        (Datum::Decimal(t) | Datum::String(t), P::Decimal { precision, scale }) => {
            let (u, s) = parse_decimal(t).ok_or("not a decimal number")?;
            decimal_value(u, s, *precision, *scale, false)?
        }
        (Datum::Decimal(t), P::Int | P::Long) => match parse_decimal(t) {
            Some((u, s)) if u % 10i128.pow(s) == 0 => match i64::try_from(u / 10i128.pow(s)) {
                Ok(x) => return convert(&Datum::Long(x), ty),
                Err(_) if u > 0 => Converted::AboveMax,
                Err(_) => Converted::BelowMin,
            },
            _ => return Err("not an integer".into()),
        },
        (Datum::String(s), P::String) => V(Literal::String(s.clone())),
        (Datum::String(s), P::Date) => V(Literal::Date(parse_date(s).ok_or("expected a date 'YYYY-MM-DD'")?)),
        (Datum::String(s), P::Time) => {
            V(Literal::Time(parse_time_micros(s).ok_or("expected a time 'HH:MM:SS[.ffffff]'")?))
        }
        (Datum::String(s), P::Timestamp | P::TimestampNs) => {
            let (nanos, zoned) =
                parse_timestamp_nanos(s).ok_or("expected a timestamp 'YYYY-MM-DD[THH:MM:SS[.f]]'")?;
            if zoned {
                return Err("a timestamp without time zone cannot take a zone offset".into());
            }
            timestamp_value(nanos, ty)?
        }
        (Datum::String(s), P::Timestamptz | P::TimestamptzNs) => {
            let (nanos, _) =
                parse_timestamp_nanos(s).ok_or("expected a timestamp 'YYYY-MM-DD[THH:MM:SS[.f]][+HH:MM]'")?;
            timestamp_value(nanos, ty)?
        }
        (Datum::String(s), P::Uuid) => {
            V(Literal::Uuid(uuid::Uuid::parse_str(s).map_err(|e| e.to_string())?.as_u128()))
        }
        (Datum::Binary(b), P::Binary) => V(Literal::Binary(b.clone())),
        (Datum::Binary(b), P::Fixed(l)) if b.len() as u64 == *l => V(Literal::Fixed(b.clone())),
        (Datum::Binary(b), P::Uuid) if b.len() == 16 => {
            let mut a = [0u8; 16];
            a.copy_from_slice(b);
            V(Literal::Uuid(u128::from_be_bytes(a)))
        }
        _ => return Err("no conversion between these types".into()),
    };
    Ok(r)
}

fn micros_to_nanos(v: i64) -> std::result::Result<i64, String> {
    v.checked_mul(1000).ok_or_else(|| "timestamp out of range".to_string())
}

fn timestamp_value(nanos: i128, ty: &PrimitiveType) -> std::result::Result<Converted, String> {
    let out = || "timestamp out of range".to_string();
    Ok(Converted::Value(match ty {
        PrimitiveType::Timestamp => {
            Literal::Timestamp(i64::try_from(nanos.div_euclid(1000)).map_err(|_| out())?)
        }
        PrimitiveType::Timestamptz => {
            Literal::Timestamptz(i64::try_from(nanos.div_euclid(1000)).map_err(|_| out())?)
        }
        PrimitiveType::TimestampNs => Literal::TimestampNs(i64::try_from(nanos).map_err(|_| out())?),
        _ => Literal::TimestamptzNs(i64::try_from(nanos).map_err(|_| out())?),
    }))
}

/// `unscaled * 10^-scale` as a decimal(precision, target): exact rescale up; down only when
/// `round` (HALF_UP) or when no digit is lost. Beyond the precision: above max / below min.
fn decimal_value(
    unscaled: i128,
    scale: u32,
    precision: u32,
    target: u32,
    round: bool,
) -> std::result::Result<Converted, String> {
    let v = if target >= scale {
        unscaled.checked_mul(10i128.checked_pow(target - scale).ok_or("scale too large")?)
    } else {
        let div = 10i128.checked_pow(scale - target).ok_or("scale too large")?;
        let (q, r) = (unscaled / div, unscaled % div);
        if r != 0 && !round {
            return Err(format!("it has more than {target} digit(s) after the decimal point"));
        }
        Some(if r.abs() * 2 >= div { q + unscaled.signum() } else { q })
    };
    let Some(v) = v else {
        return Ok(if unscaled > 0 { Converted::AboveMax } else { Converted::BelowMin });
    };
    if crate::spec::values::decimal_digits(v) > precision {
        return Ok(if v > 0 { Converted::AboveMax } else { Converted::BelowMin });
    }
    Ok(Converted::Value(Literal::Decimal(v)))
}

/// `-12.340` -> (-12340, 3); exponents are not accepted.
pub(crate) fn parse_decimal(s: &str) -> Option<(i128, u32)> {
    let s = s.trim();
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    if (int.is_empty() && frac.is_empty()) || !int.bytes().chain(frac.bytes()).all(|c| c.is_ascii_digit()) {
        return None;
    }
    let digits = format!("{int}{frac}");
    let v: i128 = if digits.is_empty() { 0 } else { digits.parse().ok()? };
    Some((if neg { -v } else { v }, frac.len() as u32))
}

fn parse_date(s: &str) -> Option<i32> {
    let d = chrono::NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d").ok()?;
    let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1)?;
    i32::try_from((d - epoch).num_days()).ok()
}

fn parse_time_micros(s: &str) -> Option<i64> {
    use chrono::Timelike;
    let t = chrono::NaiveTime::parse_from_str(s.trim(), "%H:%M:%S%.f")
        .or_else(|_| chrono::NaiveTime::parse_from_str(s.trim(), "%H:%M"))
        .ok()?;
    Some(i64::from(t.num_seconds_from_midnight()) * 1_000_000 + i64::from(t.nanosecond() / 1000))
}

/// Nanoseconds since the epoch (UTC) and whether the text had a zone offset. Accepts a
/// date alone, `T` or a space between date and time, and `Z` / `+HH:MM` offsets.
fn parse_timestamp_nanos(s: &str) -> Option<(i128, bool)> {
    let s = s.trim();
    if let Some(days) = parse_date(s) {
        return Some((i128::from(days) * 86_400_000_000_000, false));
    }
    let norm: String = s.char_indices().map(|(i, c)| if i == 10 && c == ' ' { 'T' } else { c }).collect();
    let to_nanos = |dt: chrono::NaiveDateTime| -> Option<i128> {
        let secs = dt.and_utc().timestamp();
        Some(i128::from(secs) * 1_000_000_000 + i128::from(dt.and_utc().timestamp_subsec_nanos()))
    };
    if let Ok(dt) = chrono::DateTime::parse_from_rfc3339(&norm) {
        return Some((to_nanos(dt.naive_utc())?, true));
    }
    for fmt in ["%Y-%m-%dT%H:%M:%S%.f%:z", "%Y-%m-%dT%H:%M%:z", "%Y-%m-%dT%H:%M:%S%.f%#z"] {
        if let Ok(dt) = chrono::DateTime::parse_from_str(&norm, fmt) {
            return Some((to_nanos(dt.naive_utc())?, true));
        }
    }
    for fmt in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"] {
        if let Ok(dt) = chrono::NaiveDateTime::parse_from_str(&norm, fmt) {
            return Some((to_nanos(dt)?, false));
        }
    }
    None
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::spec::{NestedField, StructType, Type};

    pub(crate) fn schema() -> Schema {
        Schema::new(
            0,
            vec![
                NestedField::required(1, "id", PrimitiveType::Long.into()),
                NestedField::optional(2, "i", PrimitiveType::Int.into()),
                NestedField::optional(3, "ts", PrimitiveType::Timestamptz.into()),
                NestedField::optional(4, "name", PrimitiveType::String.into()),
                NestedField::optional(5, "d", PrimitiveType::Date.into()),
                NestedField::optional(6, "amount", PrimitiveType::Decimal { precision: 9, scale: 2 }.into()),
                NestedField::optional(7, "f", PrimitiveType::Float.into()),
                NestedField::optional(
                    8,
                    "s",
                    Type::Struct(StructType::new(vec![NestedField::optional(
                        9,
                        "x",
                        PrimitiveType::Long.into(),
                    )])),
                ),
                NestedField::optional(10, "ntz", PrimitiveType::Timestamp.into()),
            ],
            vec![],
        )
        .unwrap()
    }

    fn b(e: Expression) -> Result<BoundExpr> {
        bind(&e, &schema(), true)
    }

    fn lit(e: &BoundExpr) -> &Literal {
        match e {
            BoundExpr::Predicate(p) => &p.literals[0],
            other => panic!("not a predicate: {other}"),
        }
    }

    #[test]
    fn conversions() {
        assert_eq!(
            lit(&b(Expression::pred(Operator::Gt, "ts", Datum::String("2024-01-01".into()))).unwrap()),
            &Literal::Timestamptz(1_704_067_200_000_000)
        );
        assert_eq!(
            lit(&b(Expression::pred(Operator::Gt, "ts", Datum::String("2024-01-01T01:00:00+01:00".into())))
                .unwrap()),
            &Literal::Timestamptz(1_704_067_200_000_000)
        );
        assert_eq!(
            lit(&b(Expression::pred(Operator::Eq, "d", Datum::String("1969-12-31".into()))).unwrap()),
            &Literal::Date(-1)
        );
        assert_eq!(
            lit(&b(Expression::pred(Operator::Eq, "amount", Datum::Long(3))).unwrap()),
            &Literal::Decimal(300)
        );
        assert_eq!(
            lit(&b(Expression::pred(Operator::Eq, "amount", Datum::Decimal("1.5".into()))).unwrap()),
            &Literal::Decimal(150)
        );
        assert_eq!(
            lit(&b(Expression::pred(Operator::Eq, "amount", Datum::Double(1.005))).unwrap()),
            &Literal::Decimal(101)
        );
        assert!(b(Expression::pred(Operator::Eq, "amount", Datum::Decimal("1.505".into()))).is_err());
        assert_eq!(
            lit(&b(Expression::pred(Operator::Eq, "s.x", Datum::Long(3))).unwrap()),
            &Literal::Long(3)
        );
        let e = b(Expression::pred(Operator::Eq, "ntz", Datum::String("2024-01-01T00:00:00Z".into())))
            .unwrap_err();
        assert!(e.to_string().contains("'ntz'"), "{e}");
    }

    #[test]
    fn out_of_range_is_constant() {
        let big = Datum::Long(1 << 40);
        assert_eq!(b(Expression::pred(Operator::Lt, "i", big.clone())).unwrap(), BoundExpr::True);
        assert_eq!(b(Expression::pred(Operator::Eq, "i", big.clone())).unwrap(), BoundExpr::False);
        assert_eq!(
            b(Expression::pred(Operator::GtEq, "i", Datum::Long(-(1 << 40)))).unwrap(),
            BoundExpr::True
        );
        assert_eq!(b(Expression::pred(Operator::Gt, "f", Datum::Double(1e300))).unwrap(), BoundExpr::False);
        let e =
            b(Expression::Predicate(Predicate::set(Operator::In, "i", vec![big.clone(), Datum::Long(1)])))
                .unwrap();
        assert!(matches!(&e, BoundExpr::Predicate(p) if p.op == Operator::Eq));
        let e = b(Expression::Predicate(Predicate::set(Operator::NotIn, "i", vec![big]))).unwrap();
        assert_eq!(e, BoundExpr::True);
    }

    #[test]
    fn required_and_errors() {
        assert_eq!(
            b(Expression::Predicate(Predicate::unary(Operator::IsNull, "id"))).unwrap(),
            BoundExpr::False
        );
        assert_eq!(
            b(Expression::Predicate(Predicate::unary(Operator::NotNull, "id")).not()).unwrap(),
            BoundExpr::False
        );
        let e = b(Expression::pred(Operator::Eq, "nope", Datum::Long(1))).unwrap_err();
        assert!(e.to_string().contains("'nope'"), "{e}");
        let e = b(Expression::pred(Operator::Eq, "id", Datum::String("x".into()))).unwrap_err();
        assert!(e.to_string().contains("'x'") && e.to_string().contains("'id'"), "{e}");
        assert!(b(Expression::Predicate(Predicate::unary(Operator::IsNan, "id"))).is_err());
        assert!(bind(&Expression::pred(Operator::Eq, "ID", Datum::Long(1)), &schema(), true).is_err());
        assert!(bind(&Expression::pred(Operator::Eq, "ID", Datum::Long(1)), &schema(), false).is_ok());
    }

    #[test]
    fn bound_json_round_trip() {
        let e = b(Expression::pred(Operator::Gt, "ts", Datum::String("2024-01-01".into()))
            .and(Expression::Predicate(Predicate::set(
                Operator::In,
                "amount",
                vec![Datum::Long(2), Datum::Decimal("1.5".into()), Datum::Long(2)],
            )))
            .or(Expression::pred(Operator::StartsWith, "name", Datum::String("a".into())).not()))
        .unwrap();
        let j = e.to_json().unwrap();
        assert_eq!(BoundExpr::from_json(&j).unwrap(), e);
        let BoundExpr::Or(l, _) = &e else { panic!() };
        let BoundExpr::And(_, r) = l.as_ref() else { panic!() };
        let BoundExpr::Predicate(p) = r.as_ref() else { panic!() };
        assert_eq!(p.literals, vec![Literal::Decimal(150), Literal::Decimal(200)]);
    }
}
