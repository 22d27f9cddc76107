//! Expressions: predicates, binding, the SQL filter parser, and the visitors (inclusive and
//! strict projection, manifest and metrics evaluators, residuals, row filter on Arrow).
