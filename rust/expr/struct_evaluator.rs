//! Evaluates a bound expression on one struct of values — a data file's partition tuple
//! (the planner's per-entry partition filter, and the residual evaluator's test).
//!
//! A null value makes comparisons, `in` and `starts_with` false. The negative predicates
//! (`not_eq`, `not_in`, `not_starts_with`) on a null are true in inclusive mode (a
//! partition that *may* hold matching rows is kept) and false in strict mode (nothing is
//! proven about rows whose value is null: SQL drops them).

use std::cmp::Ordering;
use std::collections::HashMap;

use super::bind::{BoundExpr, BoundPredicate};
use super::bounds::cmp_f64_sql;
use super::predicate::Operator;
use super::projection::truncate_wrapped;
use crate::spec::{Literal, PartitionSpec, StructValue, Transform};

/// A bound expression over partition fields, with the field id -> tuple position map.
#[derive(Debug, Clone)]
pub struct StructEvaluator {
    expr: BoundExpr,
    /// Field id -> (tuple position, transform).
    positions: HashMap<i32, (usize, Transform)>,
    strict: bool,
}

impl StructEvaluator {
    /// `expr` is bound to partition field ids (a projection's output); `strict` selects the
    /// null handling described in the module doc.
    pub fn new(expr: BoundExpr, spec: &PartitionSpec, strict: bool) -> Self {
        let positions =
            spec.fields().iter().enumerate().map(|(i, f)| (f.field_id, (i, f.transform.clone()))).collect();
        Self { expr: expr.rewrite_not(), positions, strict }
    }

    pub fn expr(&self) -> &BoundExpr {
        &self.expr
    }

    pub fn eval(&self, values: &StructValue) -> bool {
        self.visit(&self.expr, values)
    }

    fn visit(&self, e: &BoundExpr, values: &StructValue) -> bool {
        match e {
            BoundExpr::True => true,
            BoundExpr::False => false,
            BoundExpr::And(l, r) => self.visit(l, values) && self.visit(r, values),
            BoundExpr::Or(l, r) => self.visit(l, values) || self.visit(r, values),
            BoundExpr::Not(c) => !self.visit(c, values),
            BoundExpr::Predicate(p) => {
                let Some((i, transform)) = self.positions.get(&p.term.field_id) else {
                    return eval_value(p, None, self.strict);
                };
                let v = values.get(*i).and_then(Option::as_ref);
                if v.is_some_and(|v| truncate_wrapped(transform, v))
                    && matches!(p.op, Operator::Lt | Operator::LtEq | Operator::Gt | Operator::GtEq)
                {
                    // A truncation that wrapped (see `truncate_wrapped`): its rows lie below
                    // every other partition's, its value above; order says nothing of them.
                    return !self.strict;
                }
                eval_value(p, v, self.strict)
            }
        }
    }
}

/// One predicate on one value (`None` = null).
pub fn eval_value(p: &BoundPredicate, v: Option<&Literal>, strict: bool) -> bool {
    let Some(v) = v else {
        return match p.op {
            Operator::IsNull => true,
            Operator::NotNan => true,
            Operator::NotEq | Operator::NotIn | Operator::NotStartsWith => !strict,
            _ => false,
        };
    };
    // A value written before its column's promotion (an `int` partition value of a field
    // that is `long` now) is read as the current type, as Java's manifest reader does.
    let promoted = v.promoted_to(&p.term.ty);
    let v = promoted.as_ref().unwrap_or(v);
    // Rows' order: a float zero equals the other zero (`-0.0 >= 0.0`, as SQL and the row
    // evaluator have it; an identity partition of `-0.0` holds rows of `x = 0.0`).
    let cmp = |l: &Literal| -> Option<Ordering> {
        match (v, l) {
            (Literal::Float(a), Literal::Float(b)) => Some(cmp_f64_sql(f64::from(*a), f64::from(*b))),
            (Literal::Double(a), Literal::Double(b)) => Some(cmp_f64_sql(*a, *b)),
            _ => v.cmp_same_type(l),
        }
    };
    let lit = p.literal();
    let c = lit.and_then(cmp);
    match p.op {
        Operator::IsNull => false,
        Operator::NotNull => true,
        Operator::IsNan => is_nan(v),
        Operator::NotNan => !is_nan(v),
        Operator::Lt => c == Some(Ordering::Less),
        Operator::LtEq => matches!(c, Some(Ordering::Less | Ordering::Equal)),
        Operator::Gt => c == Some(Ordering::Greater),
        Operator::GtEq => matches!(c, Some(Ordering::Greater | Ordering::Equal)),
        Operator::Eq => c == Some(Ordering::Equal),
        Operator::NotEq => c != Some(Ordering::Equal),
        Operator::In => p.set_contains(v),
        Operator::NotIn => !p.set_contains(v),
        Operator::StartsWith | Operator::NotStartsWith => {
            let starts = match (v, lit) {
                (Literal::String(s), Some(Literal::String(pre))) => s.starts_with(pre.as_str()),
                _ => false,
            };
            starts == (p.op == Operator::StartsWith)
        }
    }
}

fn is_nan(v: &Literal) -> bool {
    match v {
        Literal::Float(x) => x.is_nan(),
        Literal::Double(x) => x.is_nan(),
        _ => false,
    }
}
