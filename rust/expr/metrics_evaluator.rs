//! Column-metrics evaluators on a file's statistics (Java `InclusiveMetricsEvaluator` and
//! `StrictMetricsEvaluator`, same semantics, checklist §6):
//!
//! - [`InclusiveMetricsEvaluator`]: `false` only when *no* row of the file can match
//!   (scan planning). Missing statistics mean "may match".
//! - [`StrictMetricsEvaluator`]: `true` only when *every* row of the file must match
//!   (overwrite/delete by filter). Missing statistics mean "cannot prove".
//!
//! Both bind once (`new`), push NOTs down, and then evaluate a file without allocating:
//! bounds are compared as bytes ([`super::bounds`]). `eval_all` evaluates a slice of files
//! into a reused output buffer — the form the planner calls per manifest. The statistics
//! come through [`FileStats`], implemented for `DataFile` and for Parquet row groups
//! ([`super::row_group`]).
//!
//! Bounds are compared with literals in the order rows compare in (`cmp_bound_sql`: a
//! float zero equals the other zero), not Java's bound order (`-0.0 < 0.0`): Java 1.12
//! prunes a file of only `-0.0` for `x >= 0.0` and proves `x < 0.0` for it, both wrong for
//! SQL, which Spark applies to the rows.

use std::cmp::Ordering;

use super::bind::{BoundExpr, BoundPredicate};
use super::bounds::{cmp_bound_sql, cmp_bounds, is_nan_bound, is_zero_bound, prefix};
use super::predicate::Operator;
use crate::manifest::DataFile;
use crate::spec::Literal;

/// Java skips pruning on `in` lists longer than this.
pub const IN_PREDICATE_LIMIT: usize = 200;

/// The statistics the metrics evaluators read, per field id. `None` = not recorded.
pub trait FileStats {
    fn record_count(&self) -> i64;
    fn value_count(&self, id: i32) -> Option<i64>;
    fn null_count(&self, id: i32) -> Option<i64>;
    /// Whether null counts were recorded at all (Java: `nullValueCounts() != null`); when
    /// they were, a missing key means "no nulls" to the strict evaluator (checklist T5).
    fn has_null_counts(&self) -> bool;
    fn nan_count(&self, id: i32) -> Option<i64>;
    fn lower_bound(&self, id: i32) -> Option<&[u8]>;
    fn upper_bound(&self, id: i32) -> Option<&[u8]>;
}

impl FileStats for DataFile {
    fn record_count(&self) -> i64 {
        self.record_count
    }
    fn value_count(&self, id: i32) -> Option<i64> {
        self.value_counts.get(&id).copied()
    }
    fn null_count(&self, id: i32) -> Option<i64> {
        self.null_value_counts.get(&id).copied()
    }
    fn has_null_counts(&self) -> bool {
        !self.null_value_counts.is_empty()
    }
    fn nan_count(&self, id: i32) -> Option<i64> {
        self.nan_value_counts.get(&id).copied()
    }
    fn lower_bound(&self, id: i32) -> Option<&[u8]> {
        self.lower_bounds.get(&id).map(Vec::as_slice)
    }
    fn upper_bound(&self, id: i32) -> Option<&[u8]> {
        self.upper_bounds.get(&id).map(Vec::as_slice)
    }
}

fn nulls_only<S: FileStats + ?Sized>(s: &S, id: i32) -> bool {
    matches!((s.value_count(id), s.null_count(id)), (Some(v), Some(n)) if v - n == 0)
}

fn nans_only<S: FileStats + ?Sized>(s: &S, id: i32) -> bool {
    matches!((s.nan_count(id), s.value_count(id)), (Some(n), Some(v)) if n == v)
}

/// Decides whether a file may contain rows matching a bound filter.
#[derive(Debug, Clone)]
pub struct InclusiveMetricsEvaluator {
    expr: BoundExpr,
}

impl InclusiveMetricsEvaluator {
    pub fn new(expr: &BoundExpr) -> Self {
        Self { expr: expr.clone().rewrite_not() }
    }

    /// May a row of this file match? `false` only when the statistics prove none can.
    pub fn eval<S: FileStats + ?Sized>(&self, file: &S) -> bool {
        let rc = file.record_count();
        if rc == 0 {
            return false;
        }
        if rc < 0 {
            return true; // unknown count (imported v1 files): Java does not prune
        }
        self.visit(&self.expr, file)
    }

    /// Evaluates every file into `out` (cleared first), one bool per file, in order.
    pub fn eval_all<'a, S: FileStats + 'a>(
        &self,
        files: impl IntoIterator<Item = &'a S>,
        out: &mut Vec<bool>,
    ) {
        out.clear();
        out.extend(files.into_iter().map(|f| self.eval(f)));
    }

    fn visit<S: FileStats + ?Sized>(&self, e: &BoundExpr, s: &S) -> bool {
        match e {
            BoundExpr::True => true,
            BoundExpr::False => false,
            BoundExpr::And(l, r) => self.visit(l, s) && self.visit(r, s),
            BoundExpr::Or(l, r) => self.visit(l, s) || self.visit(r, s),
            BoundExpr::Not(c) => !self.visit(c, s), // not reached after rewrite_not
            BoundExpr::Predicate(p) => inclusive_predicate(p, s),
        }
    }
}

fn inclusive_predicate<S: FileStats + ?Sized>(p: &BoundPredicate, s: &S) -> bool {
    const MIGHT: bool = true;
    const CANNOT: bool = false;
    let id = p.term.field_id;
    let ty = &p.term.ty;
    let lower = || s.lower_bound(id);
    let upper = || s.upper_bound(id);
    let no_values = || nulls_only(s, id) || nans_only(s, id);
    match p.op {
        Operator::IsNull => s.null_count(id) != Some(0),
        Operator::NotNull => !nulls_only(s, id),
        Operator::IsNan => !(s.nan_count(id) == Some(0) || nulls_only(s, id)),
        Operator::NotNan => !nans_only(s, id),
        // Java 1.12: a column whose rows all hold one value (see `unique_value`) cannot
        // match `!= that value` / `not in (.., that value, ..)`.
        Operator::NotEq => unique_value(s, id, ty)
            .is_none_or(|u| p.literal().is_none_or(|l| cmp_bound_sql(ty, u, l) != Some(Ordering::Equal))),
        Operator::NotIn => !unique_value(s, id, ty)
            .is_some_and(|u| p.literals.iter().any(|l| cmp_bound_sql(ty, u, l) == Some(Ordering::Equal))),
        // Bounds first (cheaper, and they prune most files), then the nulls/NaN-only check:
        // the result is the same as Java's order (either one alone proves "cannot").
        Operator::Lt | Operator::LtEq => {
            let bounds_may = match (p.literal(), lower()) {
                (Some(lit), Some(lo)) if !is_nan_bound(ty, lo) => match cmp_bound_sql(ty, lo, lit) {
                    Some(Ordering::Greater) => false,
                    Some(Ordering::Equal) => p.op != Operator::Lt,
                    _ => true,
                },
                _ => true,
            };
            bounds_may && !no_values()
        }
        Operator::Gt | Operator::GtEq => {
            let bounds_may = match (p.literal(), upper()) {
                (Some(lit), Some(up)) => match cmp_bound_sql(ty, up, lit) {
                    Some(Ordering::Less) => false,
                    Some(Ordering::Equal) => p.op != Operator::Gt,
                    _ => true,
                },
                _ => true,
            };
            bounds_may && !no_values()
        }
        Operator::Eq => {
            let Some(lit) = p.literal() else { return !no_values() };
            let lo = lower();
            if lo.is_some_and(|lo| {
                !is_nan_bound(ty, lo) && cmp_bound_sql(ty, lo, lit) == Some(Ordering::Greater)
            }) {
                return CANNOT;
            }
            // a NaN lower bound is ignored by Java, the upper bound still prunes
            if !lo.is_some_and(|lo| is_nan_bound(ty, lo))
                && upper().is_some_and(|up| cmp_bound_sql(ty, up, lit) == Some(Ordering::Less))
            {
                return CANNOT;
            }
            !no_values()
        }
        Operator::In => {
            if no_values() {
                return CANNOT;
            }
            if p.literals.len() > IN_PREDICATE_LIMIT {
                return MIGHT;
            }
            let lo = lower();
            if lo.is_some_and(|b| is_nan_bound(ty, b)) {
                return MIGHT;
            }
            !set_misses_range(&p.literals, ty, lo, upper())
        }
        Operator::StartsWith => {
            if nulls_only(s, id) {
                return CANNOT;
            }
            let Some(Literal::String(pre)) = p.literal() else { return MIGHT };
            let pre = pre.as_bytes();
            if lower().is_some_and(|lo| prefix(lo, pre.len()) > pre) {
                return CANNOT;
            }
            if upper().is_some_and(|up| prefix(up, pre.len()) < pre) {
                return CANNOT;
            }
            MIGHT
        }
        Operator::NotStartsWith => {
            if s.null_count(id) != Some(0) {
                return MIGHT;
            }
            let Some(Literal::String(pre)) = p.literal() else { return MIGHT };
            let pre = pre.as_bytes();
            match (lower(), upper()) {
                (Some(lo), Some(up)) if lo.len() >= pre.len() && up.len() >= pre.len() => {
                    !(lo.starts_with(pre) && up.starts_with(pre))
                }
                _ => MIGHT,
            }
        }
    }
}

/// The one value every row of column `id` holds, as its bound bytes (Java 1.12
/// `InclusiveEvalVisitor.uniqueValue`): no nulls (a recorded null count of 0), bounds present,
/// not NaN and equal, and for float/double a recorded NaN count of 0.
fn unique_value<'a, S: FileStats + ?Sized>(
    s: &'a S,
    id: i32,
    ty: &crate::spec::PrimitiveType,
) -> Option<&'a [u8]> {
    use crate::spec::PrimitiveType as P;
    if s.null_count(id) != Some(0) {
        return None;
    }
    let (lo, up) = (s.lower_bound(id)?, s.upper_bound(id)?);
    if is_nan_bound(ty, lo) || is_nan_bound(ty, up) {
        return None;
    }
    if matches!(ty, P::Float | P::Double) && s.nan_count(id) != Some(0) {
        return None;
    }
    (cmp_bounds(ty, lo, up) == Some(Ordering::Equal)).then_some(lo)
}

/// True when no literal of the sorted set lies in `[lower, upper]` (absent bounds are open).
fn set_misses_range(
    lits: &[Literal],
    ty: &crate::spec::PrimitiveType,
    lower: Option<&[u8]>,
    upper: Option<&[u8]>,
) -> bool {
    // First literal >= lower (literals are sorted ascending).
    let start = match lower {
        Some(lo) => lits.partition_point(|l| cmp_bound_sql(ty, lo, l) == Some(Ordering::Greater)),
        None => 0,
    };
    let Some(first) = lits.get(start) else { return true };
    match upper {
        Some(up) => cmp_bound_sql(ty, up, first) == Some(Ordering::Less),
        None => false,
    }
}

/// Decides whether every row of a file matches a bound filter.
#[derive(Debug, Clone)]
pub struct StrictMetricsEvaluator {
    expr: BoundExpr,
    /// SQL's three-valued logic for nulls (see [`StrictMetricsEvaluator::for_row_removal`]).
    nulls_unknown: bool,
}

impl StrictMetricsEvaluator {
    /// Java's `StrictMetricsEvaluator`: `not_eq` / `not_in` hold for a null value, so a file
    /// of nulls only matches them whole.
    pub fn new(expr: &BoundExpr) -> Self {
        Self { expr: expr.clone().rewrite_not(), nulls_unknown: false }
    }

    /// For removing (deleting, updating, overwriting) the rows a filter matches: a null value
    /// satisfies no predicate but `is_null` / `not_nan`, as the row evaluator that decides
    /// the rows of a partly matching file (and Spark's SQL) has it. A file proven here is
    /// dropped unread, so `x != 42` or `x NOT IN (...)` must not prove a file whose `x` may
    /// hold a null: that row would be lost, though a rewrite of the same file keeps it.
    pub fn for_row_removal(expr: &BoundExpr) -> Self {
        Self { expr: expr.clone().rewrite_not(), nulls_unknown: true }
    }

    /// Must every row of this file match? `true` only when the statistics prove it.
    pub fn eval<S: FileStats + ?Sized>(&self, file: &S) -> bool {
        if file.record_count() <= 0 {
            return true; // no rows: vacuously all match (Java ROWS_MUST_MATCH)
        }
        self.visit(&self.expr, file)
    }

    /// Evaluates every file into `out` (cleared first), one bool per file, in order.
    pub fn eval_all<'a, S: FileStats + 'a>(
        &self,
        files: impl IntoIterator<Item = &'a S>,
        out: &mut Vec<bool>,
    ) {
        out.clear();
        out.extend(files.into_iter().map(|f| self.eval(f)));
    }

    fn visit<S: FileStats + ?Sized>(&self, e: &BoundExpr, s: &S) -> bool {
        match e {
            BoundExpr::True => true,
            BoundExpr::False => false,
            BoundExpr::And(l, r) => self.visit(l, s) && self.visit(r, s),
            BoundExpr::Or(l, r) => self.visit(l, s) || self.visit(r, s),
            BoundExpr::Not(c) => !self.visit(c, s),
            BoundExpr::Predicate(p) => strict_predicate(p, s, self.nulls_unknown),
        }
    }
}

fn strict_predicate<S: FileStats + ?Sized>(p: &BoundPredicate, s: &S, nulls_unknown: bool) -> bool {
    const MUST: bool = true;
    const MIGHT_NOT: bool = false;
    let id = p.term.field_id;
    let ty = &p.term.ty;
    // Java's test; for row removal a column without a null count may hold nulls.
    let can_contain_nulls = || {
        !s.has_null_counts()
            || s.null_count(id).is_some_and(|n| n > 0)
            || (nulls_unknown && s.null_count(id).is_none())
    };
    let can_contain_nans = || s.nan_count(id).is_some_and(|n| n > 0);
    let unsure = || can_contain_nulls() || can_contain_nans();
    let lower = || s.lower_bound(id);
    let upper = || s.upper_bound(id);
    let cmp = |b: Option<&[u8]>| -> Option<Ordering> { cmp_bound_sql(ty, b?, p.literal()?) };
    // Bounds order -0.0 below 0.0, while rows compare them equal (SQL, and the row evaluator
    // a rewrite uses): a proof for row removal never rests on a zero, in a bound or a literal.
    if nulls_unknown && zero_involved(p, ty, lower(), upper()) && !matches!(p.op, Operator::IsNull) {
        return MIGHT_NOT;
    }
    match p.op {
        Operator::IsNull => nulls_only(s, id),
        Operator::NotNull => s.null_count(id) == Some(0),
        Operator::IsNan => nans_only(s, id),
        Operator::NotNan => s.nan_count(id) == Some(0) || nulls_only(s, id),
        Operator::Lt => !unsure() && cmp(upper()) == Some(Ordering::Less),
        Operator::LtEq => !unsure() && matches!(cmp(upper()), Some(Ordering::Less | Ordering::Equal)),
        Operator::Gt => !unsure() && cmp(lower()) == Some(Ordering::Greater),
        Operator::GtEq => !unsure() && matches!(cmp(lower()), Some(Ordering::Greater | Ordering::Equal)),
        Operator::Eq => {
            !unsure() && cmp(lower()) == Some(Ordering::Equal) && cmp(upper()) == Some(Ordering::Equal)
        }
        Operator::NotEq | Operator::NotIn if nulls_unknown && can_contain_nulls() => MIGHT_NOT,
        Operator::NotEq => {
            if nulls_only(s, id) || nans_only(s, id) {
                return MUST;
            }
            cmp(lower()) == Some(Ordering::Greater) || cmp(upper()) == Some(Ordering::Less)
        }
        Operator::In => {
            if unsure() {
                return MIGHT_NOT;
            }
            let (Some(lo), Some(up)) = (lower(), upper()) else { return MIGHT_NOT };
            // Every value equals the one bound, and that value is in the set.
            if cmp_bounds(ty, lo, up) != Some(Ordering::Equal) {
                return MIGHT_NOT;
            }
            p.literals.iter().any(|l| cmp_bound_sql(ty, lo, l) == Some(Ordering::Equal))
        }
        Operator::NotIn => {
            if nulls_only(s, id) || nans_only(s, id) {
                return MUST;
            }
            set_misses_range(&p.literals, ty, lower(), upper()) && (lower().is_some() || upper().is_some())
        }
        Operator::StartsWith | Operator::NotStartsWith => MIGHT_NOT,
    }
}

/// A float or double predicate whose literal(s) or bounds include a (signed) zero.
fn zero_involved(
    p: &BoundPredicate,
    ty: &crate::spec::PrimitiveType,
    lower: Option<&[u8]>,
    upper: Option<&[u8]>,
) -> bool {
    let zero_literal = p.literals.iter().any(|l| match l {
        Literal::Float(v) => *v == 0.0,
        Literal::Double(v) => *v == 0.0,
        _ => false,
    });
    let zero_bound = |b: Option<&[u8]>| b.is_some_and(|b| is_zero_bound(ty, b));
    zero_literal || zero_bound(lower) || zero_bound(upper)
}

#[cfg(test)]
#[path = "metrics_evaluator_tests.rs"]
mod tests;
