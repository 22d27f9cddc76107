//! Manifest pruning on the manifest list's partition summaries (Java `ManifestEvaluator`):
//! the row filter's inclusive projection through the manifest's own spec, evaluated on each
//! partition field's `contains_null` / `contains_nan` / lower / upper bound.
//! `false` only when no file of the manifest can hold a matching row.

use std::cmp::Ordering;
use std::collections::HashMap;

use super::bind::{BoundExpr, BoundPredicate};
use super::bounds::{cmp_bound_sql, prefix};
use super::metrics_evaluator::IN_PREDICATE_LIMIT;
use super::predicate::Operator;
use super::projection::{inclusive_projection, truncate_wrapped};
use crate::error::Result;
use crate::manifest::{FieldSummary, ManifestFile};
use crate::spec::{Literal, PartitionSpec, PrimitiveType, Transform};

#[derive(Debug, Clone)]
pub struct ManifestEvaluator {
    expr: BoundExpr,
    /// Field id -> (summary position, transform).
    positions: HashMap<i32, (usize, Transform)>,
}

impl ManifestEvaluator {
    /// `filter` is bound to the table schema; `spec` is the manifest's own partition spec.
    pub fn new(filter: &BoundExpr, spec: &PartitionSpec) -> Result<Self> {
        Ok(Self::from_projection(inclusive_projection(filter, spec)?, spec))
    }

    /// From an inclusive projection already made for `spec`.
    pub fn from_projection(projected: BoundExpr, spec: &PartitionSpec) -> Self {
        let positions =
            spec.fields().iter().enumerate().map(|(i, f)| (f.field_id, (i, f.transform.clone()))).collect();
        Self { expr: projected.rewrite_not(), positions }
    }

    /// The projected expression (on partition fields).
    pub fn projection(&self) -> &BoundExpr {
        &self.expr
    }

    /// May a file listed in this manifest match? A manifest without summaries may.
    pub fn eval(&self, manifest: &ManifestFile) -> bool {
        match &manifest.partitions {
            Some(s) => self.eval_summaries(s),
            None => !matches!(self.expr, BoundExpr::False),
        }
    }

    pub fn eval_summaries(&self, summaries: &[FieldSummary]) -> bool {
        self.visit(&self.expr, summaries)
    }

    fn visit(&self, e: &BoundExpr, s: &[FieldSummary]) -> bool {
        match e {
            BoundExpr::True => true,
            BoundExpr::False => false,
            BoundExpr::And(l, r) => self.visit(l, s) && self.visit(r, s),
            BoundExpr::Or(l, r) => self.visit(l, s) || self.visit(r, s),
            BoundExpr::Not(c) => !self.visit(c, s),
            BoundExpr::Predicate(p) => {
                let Some((i, transform)) = self.positions.get(&p.term.field_id) else { return true };
                let Some(fs) = s.get(*i) else { return true };
                if matches!(p.op, Operator::Lt | Operator::LtEq | Operator::Gt | Operator::GtEq)
                    && upper_wrapped(transform, &p.term.ty, fs)
                {
                    // A wrapped truncation is the upper bound (it sorts above every correct
                    // one) and its rows lie below every other: the bounds say nothing.
                    return true;
                }
                summary_may_match(p, fs)
            }
        }
    }
}

/// Whether the summary's upper bound is a truncated int/long that wrapped around (see
/// `projection::truncate_wrapped`).
fn upper_wrapped(t: &Transform, ty: &PrimitiveType, fs: &FieldSummary) -> bool {
    if !matches!(t, Transform::Truncate(_)) {
        return false;
    }
    if !matches!(ty, PrimitiveType::Int | PrimitiveType::Long) {
        return false;
    }
    let upper = fs.upper_bound.as_deref().and_then(|b| Literal::from_bytes(ty, b).ok());
    upper.is_some_and(|v| truncate_wrapped(t, &v))
}

fn all_values_null(fs: &FieldSummary, ty: &PrimitiveType) -> bool {
    if !fs.contains_null || fs.lower_bound.is_some() {
        return false;
    }
    if matches!(ty, PrimitiveType::Float | PrimitiveType::Double) {
        // unknown NaN presence: cannot say all are null
        return fs.contains_nan == Some(false);
    }
    true
}

fn summary_may_match(p: &BoundPredicate, fs: &FieldSummary) -> bool {
    const MIGHT: bool = true;
    const CANNOT: bool = false;
    let ty = &p.term.ty;
    let lower = fs.lower_bound.as_deref();
    let upper = fs.upper_bound.as_deref();
    // Rows' order: -0.0 = 0.0 (see `cmp_bound_sql`).
    let cmp = |b: &[u8], l: &Literal| cmp_bound_sql(ty, b, l);
    match p.op {
        Operator::IsNull => fs.contains_null,
        Operator::NotNull => !all_values_null(fs, ty),
        Operator::IsNan => !(fs.contains_nan == Some(false) || all_values_null(fs, ty)),
        Operator::NotNan => {
            // all NaN: no nulls, no bounds, contains NaN
            !(fs.contains_nan == Some(true) && !fs.contains_null && lower.is_none())
        }
        Operator::NotEq | Operator::NotIn => MIGHT,
        Operator::Lt | Operator::LtEq => {
            let (Some(lo), Some(l)) = (lower, p.literal()) else { return lower.is_some() };
            match cmp(lo, l) {
                Some(Ordering::Greater) => CANNOT,
                Some(Ordering::Equal) if p.op == Operator::Lt => CANNOT,
                _ => MIGHT,
            }
        }
        Operator::Gt | Operator::GtEq => {
            let (Some(up), Some(l)) = (upper, p.literal()) else { return upper.is_some() };
            match cmp(up, l) {
                Some(Ordering::Less) => CANNOT,
                Some(Ordering::Equal) if p.op == Operator::Gt => CANNOT,
                _ => MIGHT,
            }
        }
        Operator::Eq => {
            let Some(lo) = lower else { return CANNOT };
            let Some(l) = p.literal() else { return MIGHT };
            if cmp(lo, l) == Some(Ordering::Greater) {
                return CANNOT;
            }
            upper.is_none_or(|up| cmp(up, l) != Some(Ordering::Less))
        }
        Operator::In => {
            let Some(lo) = lower else { return CANNOT };
            if p.literals.len() > IN_PREDICATE_LIMIT {
                return MIGHT;
            }
            let start = p.literals.partition_point(|l| cmp(lo, l) == Some(Ordering::Greater));
            match (p.literals.get(start), upper) {
                (None, _) => CANNOT,
                (Some(first), Some(up)) => cmp(up, first) != Some(Ordering::Less),
                (Some(_), None) => MIGHT,
            }
        }
        Operator::StartsWith => {
            let Some(lo) = lower else { return CANNOT };
            let Some(Literal::String(pre)) = p.literal() else { return MIGHT };
            let pre = pre.as_bytes();
            if prefix(lo, pre.len()) > pre {
                return CANNOT;
            }
            upper.is_none_or(|up| prefix(up, pre.len()) >= pre)
        }
        Operator::NotStartsWith => {
            if fs.contains_null {
                return MIGHT;
            }
            let (Some(lo), Some(up), Some(Literal::String(pre))) = (lower, upper, p.literal()) else {
                return MIGHT;
            };
            let pre = pre.as_bytes();
            !(lo.len() >= pre.len() && up.len() >= pre.len() && lo.starts_with(pre) && up.starts_with(pre))
        }
    }
}
