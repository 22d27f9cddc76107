//! The [`ScanFilter`] over a bound row filter, answered by the `expr` module's evaluators:
//! per partition spec (partition evolution: each manifest and file through its own spec) a
//! ManifestEvaluator on the inclusive projection, a StructEvaluator on the same projection for
//! partition tuples and a ResidualEvaluator (strict projection); one InclusiveMetricsEvaluator
//! for column stats. All are built once per scan, before the worker threads start.

use std::collections::HashMap;

use super::filter::ScanFilter;
use crate::error::Result;
use crate::expr::{
    inclusive_projection, BoundExpr, InclusiveMetricsEvaluator, ManifestEvaluator, ResidualEvaluator,
    StructEvaluator,
};
use crate::manifest::{DataFile, ManifestFile};
use crate::spec::PartitionSpec;

struct SpecEvaluators {
    manifest: ManifestEvaluator,
    partition: StructEvaluator,
    residual: ResidualEvaluator,
}

/// A bound row filter as the planner's [`ScanFilter`].
pub struct BoundFilter {
    expr: BoundExpr,
    metrics: InclusiveMetricsEvaluator,
    by_spec: HashMap<i32, SpecEvaluators>,
}

impl BoundFilter {
    /// `expr` is bound to the table schema; `specs` are all of the table's partition specs.
    pub fn new(expr: BoundExpr, specs: &[PartitionSpec]) -> Result<BoundFilter> {
        let mut by_spec = HashMap::new();
        for spec in specs {
            let projected = inclusive_projection(&expr, spec)?;
            by_spec.insert(
                spec.spec_id(),
                SpecEvaluators {
                    manifest: ManifestEvaluator::from_projection(projected.clone(), spec),
                    partition: StructEvaluator::new(projected, spec, false),
                    residual: ResidualEvaluator::new(&expr, spec)?,
                },
            );
        }
        Ok(BoundFilter { metrics: InclusiveMetricsEvaluator::new(&expr), expr, by_spec })
    }

    pub fn expr(&self) -> &BoundExpr {
        &self.expr
    }
}

impl ScanFilter for BoundFilter {
    fn manifest_may_match(&self, manifest: &ManifestFile, spec: &PartitionSpec) -> Result<bool> {
        // A spec the filter was not prepared for cannot prune (inclusive answer).
        Ok(self.by_spec.get(&spec.spec_id()).is_none_or(|e| e.manifest.eval(manifest)))
    }

    fn file_may_match(&self, file: &DataFile, spec: &PartitionSpec) -> Result<bool> {
        let partition_ok =
            self.by_spec.get(&spec.spec_id()).is_none_or(|e| e.partition.eval(&file.partition));
        Ok(partition_ok && self.metrics.eval(file))
    }

    fn residual(&self, file: &DataFile, spec: &PartitionSpec) -> Result<Option<serde_json::Value>> {
        let residual = match self.by_spec.get(&spec.spec_id()) {
            Some(e) => e.residual.residual_for(&file.partition),
            None => self.expr.clone(),
        };
        match residual {
            BoundExpr::True => Ok(None),
            r => Ok(Some(r.to_json()?)),
        }
    }

    fn is_always_false(&self) -> bool {
        matches!(self.expr, BoundExpr::False)
    }

    fn stats_field_ids(&self) -> Option<Vec<i32>> {
        // InclusiveMetricsEvaluator reads the stats of the predicates' (leaf) fields only.
        Some(self.expr.field_ids())
    }
}
