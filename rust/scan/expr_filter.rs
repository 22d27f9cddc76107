//! The [`ScanFilter`] over a bound row filter from the `expr` module.
//!
//! Pruning plugs in the `expr` module's evaluators as they exist: until the manifest,
//! partition and metrics evaluators land, every manifest and file "may match" (a correct,
//! unpruned plan) and each task's residual is the whole bound filter, which the reader
//! applies to the rows.

use super::filter::ScanFilter;
use crate::error::Result;
use crate::expr::BoundExpr;
use crate::manifest::{DataFile, ManifestFile};
use crate::spec::PartitionSpec;

/// A bound row filter as the planner's [`ScanFilter`].
#[derive(Debug, Clone)]
pub struct BoundFilter {
    expr: BoundExpr,
    /// The residual JSON when no strict projection simplifies it (the whole filter).
    full_residual: Option<serde_json::Value>,
}

impl BoundFilter {
    pub fn new(expr: BoundExpr) -> Result<BoundFilter> {
        let full_residual = match expr {
            BoundExpr::True => None,
            _ => Some(expr.to_json()?),
        };
        Ok(BoundFilter { expr, full_residual })
    }

    pub fn expr(&self) -> &BoundExpr {
        &self.expr
    }
}

impl ScanFilter for BoundFilter {
    fn manifest_may_match(&self, _manifest: &ManifestFile, _spec: &PartitionSpec) -> Result<bool> {
        Ok(!matches!(self.expr, BoundExpr::False))
    }

    fn file_may_match(&self, _file: &DataFile, _spec: &PartitionSpec) -> Result<bool> {
        Ok(!matches!(self.expr, BoundExpr::False))
    }

    fn residual(&self, _file: &DataFile, _spec: &PartitionSpec) -> Result<Option<serde_json::Value>> {
        Ok(self.full_residual.clone())
    }

    fn is_always_false(&self) -> bool {
        matches!(self.expr, BoundExpr::False)
    }
}
