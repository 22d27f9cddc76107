//! A row filter as overwrite / delete see it, answered from file metadata alone (Iceberg
//! Java's `ManifestFilterManager` and the `conflictDetectionFilter` of
//! `MergingSnapshotProducer`):
//!
//! - *may match*: the inclusive partition projection (per spec) accepts the file's partition
//!   tuple and the InclusiveMetricsEvaluator accepts its column stats. Files that may not
//!   match are neither rewritten by an overwrite nor a conflict for it when added
//!   concurrently.
//! - *must match*: the strict partition projection accepts the partition tuple, or the
//!   StrictMetricsEvaluator proves every row matches the filter's residual for that
//!   partition (so `region = 'eu' and id >= 10` is proven for a file of partition `eu` whose
//!   ids are all >= 10). Such files are dropped whole, unread, so both proofs take a null
//!   as SQL does (matching nothing but `is null`), as the rows of a partly matching file
//!   are decided: `x != 42` does not remove a file whose `x` may be null.
//!
//! Everything in between must be read to know (the partial files of an overwrite).

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::Result;
use crate::expr::{
    inclusive_projection, strict_projection, BoundExpr, InclusiveMetricsEvaluator, ResidualEvaluator,
    StrictMetricsEvaluator, StructEvaluator,
};
use crate::manifest::DataFile;
use crate::scan::{plan_scan, BoundFilter, FileScanTask, ScanOptions};
use crate::spec::{PartitionSpec, TableMetadata};

struct SpecEvaluators {
    inclusive: StructEvaluator,
    strict: StructEvaluator,
    residual: ResidualEvaluator,
}

/// A bound row filter with its evaluators for every partition spec of a table.
pub struct RowFilter {
    expr: BoundExpr,
    by_spec: HashMap<i32, SpecEvaluators>,
    inclusive: InclusiveMetricsEvaluator,
    strict: StrictMetricsEvaluator,
}

impl std::fmt::Debug for RowFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RowFilter({})", self.expr)
    }
}

/// How removing a filter's rows treats one live data file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileMatch {
    /// No row can match: untouched.
    None,
    /// Every row matches: removed whole.
    All,
    /// Undecided from metadata: read it to know.
    Some,
}

impl RowFilter {
    /// `expr` is bound to the table's current schema; `specs` are all of its partition specs.
    pub fn new(expr: BoundExpr, specs: &[PartitionSpec]) -> Result<RowFilter> {
        let mut by_spec = HashMap::new();
        for spec in specs {
            by_spec.insert(
                spec.spec_id(),
                SpecEvaluators {
                    inclusive: StructEvaluator::new(inclusive_projection(&expr, spec)?, spec, false),
                    strict: StructEvaluator::new(strict_projection(&expr, spec)?, spec, true),
                    residual: ResidualEvaluator::new(&expr, spec)?,
                },
            );
        }
        Ok(RowFilter {
            inclusive: InclusiveMetricsEvaluator::new(&expr),
            strict: StrictMetricsEvaluator::for_row_removal(&expr),
            expr,
            by_spec,
        })
    }

    /// Shares the filter (validation scopes hold it).
    pub fn shared(self) -> Arc<RowFilter> {
        Arc::new(self)
    }

    pub fn expr(&self) -> &BoundExpr {
        &self.expr
    }

    /// May a row of `file` (data or delete file) match? A spec the filter does not know
    /// cannot prune (inclusive answer).
    pub fn may_match(&self, file: &DataFile) -> bool {
        if matches!(self.expr, BoundExpr::False) {
            return false;
        }
        let partition_ok = self.by_spec.get(&file.spec_id).is_none_or(|e| e.inclusive.eval(&file.partition));
        partition_ok && self.inclusive.eval(file)
    }

    /// Is every row of `file` proven to match, by its partition or its column stats?
    pub fn must_match(&self, file: &DataFile) -> bool {
        if matches!(self.expr, BoundExpr::True) {
            return true;
        }
        match self.by_spec.get(&file.spec_id) {
            None => self.strict.eval(file),
            Some(e) if e.strict.eval(&file.partition) => true,
            Some(e) => match e.residual.residual_for(&file.partition) {
                BoundExpr::True => true,
                BoundExpr::False => false,
                r if r == self.expr => self.strict.eval(file),
                r => StrictMetricsEvaluator::for_row_removal(&r).eval(file),
            },
        }
    }

    pub fn classify(&self, file: &DataFile) -> FileMatch {
        if !self.may_match(file) {
            FileMatch::None
        } else if self.must_match(file) {
            FileMatch::All
        } else {
            FileMatch::Some
        }
    }
}

/// The live data files of `metadata`'s current snapshot a row removal touches: those removed
/// whole (every row matches, by metadata) and the tasks of those that must be read (some
/// rows may match). Files that cannot match are not returned.
pub fn plan_row_removal(
    metadata: &TableMetadata,
    expr: BoundExpr,
) -> Result<(Vec<DataFile>, Vec<FileScanTask>)> {
    let filter = RowFilter::new(expr.clone(), metadata.partition_specs())?;
    if matches!(expr, BoundExpr::False) || metadata.current_snapshot().is_none() {
        return Ok((vec![], vec![]));
    }
    // The rows a rewrite keeps are the ones the filter does not match: every delete file
    // that applies to them must be read, whatever its stats say about the filter.
    let mut options =
        ScanOptions { include_column_stats: true, prune_deletes_by_filter: false, ..ScanOptions::default() };
    if !matches!(expr, BoundExpr::True) {
        options.filter = Arc::new(BoundFilter::new(expr, metadata.partition_specs())?);
    }
    let plan = plan_scan(metadata, &options, None)?;
    let (mut whole, mut partial) = (vec![], vec![]);
    for task in plan.tasks {
        match filter.classify(&task.file) {
            FileMatch::None => {}
            FileMatch::All => whole.push(task.file),
            FileMatch::Some => {
                // The rewrite must see every row of the file to keep the ones that do not
                // match; the planner's residual (the filter itself) would hide them.
                let mut task = task;
                task.residual = None;
                partial.push(task)
            }
        }
    }
    Ok((whole, partial))
}
