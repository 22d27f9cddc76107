//! Expressions: predicates, binding, the SQL filter parser, and the visitors (inclusive and
//! strict projection, manifest and metrics evaluators, residuals, row filter on Arrow).

pub mod bind;
pub mod bounds;
pub mod evaluator;
pub mod manifest_evaluator;
pub mod metrics_evaluator;
#[cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]
pub mod parser;
pub mod predicate;
pub mod projection;
pub mod residual;
pub mod row_group;
pub mod struct_evaluator;

pub use bind::{bind, BoundExpr, BoundPredicate, BoundReference};
pub use evaluator::{filter_batch, filter_mask};
pub use manifest_evaluator::ManifestEvaluator;
pub use metrics_evaluator::{FileStats, InclusiveMetricsEvaluator, StrictMetricsEvaluator};
pub use parser::parse_filter;
pub use predicate::{Datum, Expression, Operator, Predicate};
pub use projection::{inclusive_projection, strict_projection};
pub use residual::ResidualEvaluator;
pub use row_group::{row_group_may_match, RowGroupEvaluator};
pub use struct_evaluator::StructEvaluator;
