//! Expressions: predicates, binding, the SQL filter parser, and the visitors (inclusive and
//! strict projection, manifest and metrics evaluators, residuals, row filter on Arrow).

pub mod bind;
pub mod bounds;
pub mod metrics_evaluator;
pub mod parser;
pub mod predicate;

pub use bind::{bind, BoundExpr, BoundPredicate, BoundReference};
pub use metrics_evaluator::{FileStats, InclusiveMetricsEvaluator, StrictMetricsEvaluator};
pub use parser::parse_filter;
pub use predicate::{Datum, Expression, Operator, Predicate};
