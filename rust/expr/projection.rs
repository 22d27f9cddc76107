//! Inclusive and strict projection of a row filter through a partition spec (Java
//! `Projections` + each transform's `project` / `projectStrict`, checklist §6).
//!
//! The result is a [`BoundExpr`] on the partition tuple: predicates name the partition
//! field (`field_id` = partition field id, `ty` = the transform's result type).
//! - inclusive: true for every partition that may hold a matching row; a predicate with no
//!   projection becomes `true`; several partition fields on one source combine with AND.
//! - strict: true only for partitions whose rows all match; no projection is `false`;
//!   several partition fields on one source combine with OR.
//!
//! Temporal transforms (year/month/day/hour) carry Java's fixes for files written by old
//! writers that rounded pre-1970 values toward zero (`fixInclusiveTimeProjection`,
//! `fixStrictTimeProjection`): a negative projected value also admits value + 1.

use super::bind::{BoundExpr, BoundPredicate, BoundReference};
use super::predicate::Operator;
use crate::error::Result;
use crate::spec::{Literal, PartitionField, PartitionSpec, PrimitiveType, Transform};

/// The inclusive projection of `expr` (bound to the table schema) through `spec`.
pub fn inclusive_projection(expr: &BoundExpr, spec: &PartitionSpec) -> Result<BoundExpr> {
    project(&expr.clone().rewrite_not(), spec, false)
}

/// The strict projection of `expr` (bound to the table schema) through `spec`.
pub fn strict_projection(expr: &BoundExpr, spec: &PartitionSpec) -> Result<BoundExpr> {
    project(&expr.clone().rewrite_not(), spec, true)
}

fn project(e: &BoundExpr, spec: &PartitionSpec, strict: bool) -> Result<BoundExpr> {
    Ok(match e {
        BoundExpr::True => BoundExpr::True,
        BoundExpr::False => BoundExpr::False,
        BoundExpr::And(l, r) => BoundExpr::and(project(l, spec, strict)?, project(r, spec, strict)?),
        BoundExpr::Or(l, r) => BoundExpr::or(project(l, spec, strict)?, project(r, spec, strict)?),
        BoundExpr::Not(c) => BoundExpr::negate(project(c, spec, !strict)?), // not reached after rewrite_not
        BoundExpr::Predicate(p) => {
            let mut acc = if strict { BoundExpr::False } else { BoundExpr::True };
            for f in spec.fields().iter().filter(|f| f.source_id == p.term.field_id) {
                let projected = if strict { project_strict(f, p)? } else { project_inclusive(f, p)? };
                acc = match (strict, projected) {
                    (false, Some(x)) => BoundExpr::and(acc, x),
                    (true, Some(x)) => BoundExpr::or(acc, x),
                    (_, None) => acc,
                };
            }
            acc
        }
    })
}

/// The partition-side predicate `field op literals`.
fn on_field(f: &PartitionField, ty: &PrimitiveType, op: Operator, mut literals: Vec<Literal>) -> BoundExpr {
    if op.is_set() {
        literals.sort_by(|a, b| a.cmp_same_type(b).unwrap_or(std::cmp::Ordering::Equal));
        literals.dedup();
    }
    let op = match (op, literals.len()) {
        (Operator::In, 1) => Operator::Eq,
        (Operator::NotIn, 1) => Operator::NotEq,
        (op, _) => op,
    };
    let term = BoundReference { field_id: f.field_id, name: f.name.clone(), ty: ty.clone(), required: false };
    BoundExpr::Predicate(BoundPredicate { op, term, literals })
}

fn apply(t: &Transform, v: &Literal) -> Result<Option<Literal>> {
    t.apply(v)
}

fn apply_all(t: &Transform, vs: &[Literal]) -> Result<Option<Vec<Literal>>> {
    let mut out = Vec::with_capacity(vs.len());
    for v in vs {
        match apply(t, v)? {
            Some(x) => out.push(x),
            None => return Ok(None),
        }
    }
    Ok(Some(out))
}

/// `v + delta` in the literal's own unit (one day for dates, one microsecond for
/// timestamps, one unscaled unit for decimals); `None` on overflow.
fn step(v: &Literal, delta: i64) -> Option<Literal> {
    Some(match v {
        Literal::Int(x) => Literal::Int(x.checked_add(i32::try_from(delta).ok()?)?),
        Literal::Date(x) => Literal::Date(x.checked_add(i32::try_from(delta).ok()?)?),
        Literal::Long(x) => Literal::Long(x.checked_add(delta)?),
        Literal::Timestamp(x) => Literal::Timestamp(x.checked_add(delta)?),
        Literal::Timestamptz(x) => Literal::Timestamptz(x.checked_add(delta)?),
        Literal::TimestampNs(x) => Literal::TimestampNs(x.checked_add(delta)?),
        Literal::TimestamptzNs(x) => Literal::TimestamptzNs(x.checked_add(delta)?),
        Literal::Decimal(x) => Literal::Decimal(x.checked_add(i128::from(delta))?),
        _ => return None,
    })
}

fn is_temporal(t: &Transform) -> bool {
    matches!(t, Transform::Year | Transform::Month | Transform::Day | Transform::Hour)
}

/// Whether Java's pre-1970 fix-up of time projections applies: every time transform except
/// `day` of a date, which is the date itself (Java's `Dates`: `if (this != DAY)`).
fn needs_time_fix(t: &Transform, src: &PrimitiveType) -> bool {
    is_temporal(t) && !(matches!(t, Transform::Day) && matches!(src, PrimitiveType::Date))
}

/// Whether a truncated int/long value wrapped around: `truncate(w, v)` of a `v` within `w`
/// of the type's minimum is below the minimum and wraps to a large positive value, as in
/// Java's arithmetic (both engines write it so). A correct result is a multiple of `w`.
pub(crate) fn truncate_wrapped(t: &Transform, v: &Literal) -> bool {
    let Transform::Truncate(w) = t else { return false };
    match v {
        Literal::Int(x) => i64::from(*x).rem_euclid(i64::from(*w)) != 0,
        Literal::Long(x) => x.rem_euclid(i64::from(*w)) != 0,
        _ => false,
    }
}

/// An order comparison through a truncation whose literal wrapped says nothing: the wrapped
/// value sorts above every other, the rows it stands for below. (Equality and `in` stay
/// exact: the same function maps rows and literal.)
fn wraps_order(t: &Transform, op: Operator, xs: &[Literal]) -> bool {
    matches!(op, Operator::Lt | Operator::LtEq | Operator::Gt | Operator::GtEq)
        && xs.iter().any(|x| truncate_wrapped(t, x))
}

fn is_ordinal(t: &Transform, src: &PrimitiveType) -> bool {
    is_temporal(t)
        || matches!(
            (t, src),
            (
                Transform::Truncate(_),
                PrimitiveType::Int | PrimitiveType::Long | PrimitiveType::Decimal { .. }
            )
        )
}

fn project_inclusive(f: &PartitionField, p: &BoundPredicate) -> Result<Option<BoundExpr>> {
    let t = &f.transform;
    let src = &p.term.ty;
    if matches!(t, Transform::Void | Transform::Unknown(_)) {
        return Ok(None);
    }
    let ty = t.result_type(src)?;
    if t.is_identity() {
        return Ok(Some(on_field(f, &ty, p.op, p.literals.clone())));
    }
    if matches!(p.op, Operator::IsNull | Operator::NotNull) {
        return Ok(Some(on_field(f, &ty, p.op, vec![])));
    }
    let lit = p.literal();
    let one = |v: Option<Literal>| -> Result<Option<Literal>> {
        match v {
            Some(v) => apply(t, &v),
            None => Ok(None),
        }
    };
    let out = match t {
        Transform::Bucket(_) => match p.op {
            Operator::Eq => lit
                .map(|v| apply(t, v))
                .transpose()?
                .flatten()
                .map(|x| on_field(f, &ty, Operator::Eq, vec![x])),
            Operator::In => apply_all(t, &p.literals)?.map(|xs| on_field(f, &ty, Operator::In, xs)),
            _ => None,
        },
        _ if is_ordinal(t, src) => {
            let projected = match p.op {
                Operator::Lt => one(lit.and_then(|v| step(v, -1)))?.map(|x| (Operator::LtEq, vec![x])),
                Operator::LtEq => one(lit.cloned())?.map(|x| (Operator::LtEq, vec![x])),
                Operator::Gt => one(lit.and_then(|v| step(v, 1)))?.map(|x| (Operator::GtEq, vec![x])),
                Operator::GtEq => one(lit.cloned())?.map(|x| (Operator::GtEq, vec![x])),
                Operator::Eq => one(lit.cloned())?.map(|x| (Operator::Eq, vec![x])),
                Operator::In => apply_all(t, &p.literals)?.map(|xs| (Operator::In, xs)),
                _ => None,
            };
            match projected {
                Some((op, xs)) if wraps_order(t, op, &xs) => None,
                Some((op, xs)) if needs_time_fix(t, src) => {
                    fix_inclusive_time(op, xs).map(|(op, xs)| on_field(f, &ty, op, xs))
                }
                Some((op, xs)) => Some(on_field(f, &ty, op, xs)),
                None => None,
            }
        }
        Transform::Truncate(w) => {
            // string / binary
            let w = *w as usize;
            match (p.op, lit) {
                (Operator::Lt | Operator::LtEq, Some(v)) => {
                    one(Some(v.clone()))?.map(|x| on_field(f, &ty, Operator::LtEq, vec![x]))
                }
                (Operator::Gt | Operator::GtEq, Some(v)) => {
                    one(Some(v.clone()))?.map(|x| on_field(f, &ty, Operator::GtEq, vec![x]))
                }
                (Operator::Eq, Some(v)) => {
                    one(Some(v.clone()))?.map(|x| on_field(f, &ty, Operator::Eq, vec![x]))
                }
                (Operator::In, _) => apply_all(t, &p.literals)?.map(|xs| on_field(f, &ty, Operator::In, xs)),
                (Operator::StartsWith, Some(Literal::String(s))) => {
                    let n = s.chars().count();
                    Some(if n < w {
                        on_field(f, &ty, Operator::StartsWith, vec![Literal::String(s.clone())])
                    } else if n == w {
                        on_field(f, &ty, Operator::Eq, vec![Literal::String(s.clone())])
                    } else {
                        let tv = one(Some(Literal::String(s.clone())))?.unwrap_or(Literal::String(s.clone()));
                        on_field(f, &ty, Operator::StartsWith, vec![tv])
                    })
                }
                (Operator::NotStartsWith, Some(Literal::String(s))) => {
                    let n = s.chars().count();
                    if n < w {
                        Some(on_field(f, &ty, Operator::NotStartsWith, vec![Literal::String(s.clone())]))
                    } else if n == w {
                        Some(on_field(f, &ty, Operator::NotEq, vec![Literal::String(s.clone())]))
                    } else {
                        None
                    }
                }
                _ => None,
            }
        }
        _ => None,
    };
    Ok(out)
}

fn project_strict(f: &PartitionField, p: &BoundPredicate) -> Result<Option<BoundExpr>> {
    let t = &f.transform;
    let src = &p.term.ty;
    if matches!(t, Transform::Void | Transform::Unknown(_)) {
        return Ok(None);
    }
    let ty = t.result_type(src)?;
    if t.is_identity() {
        return Ok(Some(on_field(f, &ty, p.op, p.literals.clone())));
    }
    if matches!(p.op, Operator::IsNull | Operator::NotNull) {
        return Ok(Some(on_field(f, &ty, p.op, vec![])));
    }
    let lit = p.literal();
    let one = |v: Option<Literal>| -> Result<Option<Literal>> {
        match v {
            Some(v) => apply(t, &v),
            None => Ok(None),
        }
    };
    let out = match t {
        Transform::Bucket(_) => match p.op {
            Operator::NotEq => one(lit.cloned())?.map(|x| on_field(f, &ty, Operator::NotEq, vec![x])),
            Operator::NotIn => apply_all(t, &p.literals)?.map(|xs| on_field(f, &ty, Operator::NotIn, xs)),
            _ => None,
        },
        _ if is_ordinal(t, src) => {
            let projected = match p.op {
                Operator::Lt => one(lit.cloned())?.map(|x| (Operator::Lt, vec![x])),
                Operator::LtEq => one(lit.and_then(|v| step(v, 1)))?.map(|x| (Operator::Lt, vec![x])),
                Operator::Gt => one(lit.cloned())?.map(|x| (Operator::Gt, vec![x])),
                Operator::GtEq => one(lit.and_then(|v| step(v, -1)))?.map(|x| (Operator::Gt, vec![x])),
                Operator::NotEq => one(lit.cloned())?.map(|x| (Operator::NotEq, vec![x])),
                Operator::NotIn => apply_all(t, &p.literals)?.map(|xs| (Operator::NotIn, xs)),
                _ => None,
            };
            match projected {
                Some((op, xs)) if wraps_order(t, op, &xs) => None,
                Some((op, xs)) if needs_time_fix(t, src) => {
                    fix_strict_time(op, xs).map(|(op, xs)| on_field(f, &ty, op, xs))
                }
                Some((op, xs)) => Some(on_field(f, &ty, op, xs)),
                None => None,
            }
        }
        Transform::Truncate(w) => {
            let w = *w as usize;
            match (p.op, lit) {
                (Operator::Lt | Operator::LtEq, Some(v)) => {
                    one(Some(v.clone()))?.map(|x| on_field(f, &ty, Operator::Lt, vec![x]))
                }
                (Operator::Gt | Operator::GtEq, Some(v)) => {
                    one(Some(v.clone()))?.map(|x| on_field(f, &ty, Operator::Gt, vec![x]))
                }
                (Operator::NotEq, Some(v)) => {
                    one(Some(v.clone()))?.map(|x| on_field(f, &ty, Operator::NotEq, vec![x]))
                }
                (Operator::NotIn, _) => {
                    apply_all(t, &p.literals)?.map(|xs| on_field(f, &ty, Operator::NotIn, xs))
                }
                (Operator::StartsWith, Some(Literal::String(s))) => {
                    let n = s.chars().count();
                    if n < w {
                        Some(on_field(f, &ty, Operator::StartsWith, vec![Literal::String(s.clone())]))
                    } else if n == w {
                        Some(on_field(f, &ty, Operator::Eq, vec![Literal::String(s.clone())]))
                    } else {
                        None
                    }
                }
                (Operator::NotStartsWith, Some(Literal::String(s))) => {
                    let n = s.chars().count();
                    Some(if n < w {
                        on_field(f, &ty, Operator::NotStartsWith, vec![Literal::String(s.clone())])
                    } else if n == w {
                        on_field(f, &ty, Operator::NotEq, vec![Literal::String(s.clone())])
                    } else {
                        let tv = one(Some(Literal::String(s.clone())))?.unwrap_or(Literal::String(s.clone()));
                        on_field(f, &ty, Operator::NotStartsWith, vec![tv])
                    })
                }
                _ => None,
            }
        }
        _ => None,
    };
    Ok(out)
}

fn ordinal(v: &Literal) -> Option<i32> {
    match v {
        Literal::Int(x) | Literal::Date(x) => Some(*x),
        _ => None,
    }
}

fn plus_one(v: &Literal) -> Option<Literal> {
    step(v, 1)
}

/// Java `ProjectionUtil.fixInclusiveTimeProjection`.
fn fix_inclusive_time(op: Operator, xs: Vec<Literal>) -> Option<(Operator, Vec<Literal>)> {
    let neg = |v: &Literal| ordinal(v).is_some_and(|x| x < 0);
    match op {
        Operator::Lt | Operator::LtEq if neg(&xs[0]) => Some((op, vec![plus_one(&xs[0])?])),
        Operator::Eq if neg(&xs[0]) => Some((Operator::In, vec![xs[0].clone(), plus_one(&xs[0])?])),
        Operator::In if xs.iter().any(neg) => {
            let mut out = xs.clone();
            for v in xs.iter().filter(|v| neg(v)) {
                out.push(plus_one(v)?);
            }
            Some((Operator::In, out))
        }
        Operator::NotEq | Operator::NotIn => None,
        _ => Some((op, xs)),
    }
}

/// Java `ProjectionUtil.fixStrictTimeProjection`.
fn fix_strict_time(op: Operator, xs: Vec<Literal>) -> Option<(Operator, Vec<Literal>)> {
    let non_pos = |v: &Literal| ordinal(v).is_some_and(|x| x <= 0);
    let neg = |v: &Literal| ordinal(v).is_some_and(|x| x < 0);
    match op {
        Operator::Gt | Operator::GtEq if non_pos(&xs[0]) => Some((op, vec![plus_one(&xs[0])?])),
        Operator::NotEq if neg(&xs[0]) => Some((Operator::NotIn, vec![xs[0].clone(), plus_one(&xs[0])?])),
        Operator::NotIn if xs.iter().any(neg) => {
            let mut out = xs.clone();
            for v in xs.iter().filter(|v| neg(v)) {
                out.push(plus_one(v)?);
            }
            Some((Operator::NotIn, out))
        }
        Operator::Eq | Operator::In => None,
        _ => Some((op, xs)),
    }
}

#[cfg(test)]
#[path = "projection_tests.rs"]
mod tests;
