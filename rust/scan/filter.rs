//! The planner's view of a row filter: three pruning questions and a residual.
//!
//! The planner does not know expressions; it asks a [`ScanFilter`]. The `expr` module's
//! evaluators (ManifestEvaluator on the inclusive projection through each manifest's own
//! spec, the partition evaluator, InclusiveMetricsEvaluator, ResidualEvaluator) plug in here.
//! Every answer must be *inclusive*: `false` only when no row of the manifest/file can match.

use std::sync::Arc;

use crate::error::Result;
use crate::manifest::{DataFile, ManifestFile};
use crate::spec::PartitionSpec;

/// Pruning decisions for one scan. Implementations are shared by the planner's worker
/// threads, hence `Send + Sync`; they should cache per-spec work (projections) internally.
pub trait ScanFilter: Send + Sync {
    /// May a file listed in this manifest match? (partition summaries through `spec`,
    /// the manifest's own spec.)
    fn manifest_may_match(&self, _manifest: &ManifestFile, _spec: &PartitionSpec) -> Result<bool> {
        Ok(true)
    }

    /// May a row of this file match? (partition value through `spec`, then column metrics.)
    /// Asked for data and delete files alike, as Java's ManifestReader does.
    fn file_may_match(&self, _file: &DataFile, _spec: &PartitionSpec) -> Result<bool> {
        Ok(true)
    }

    /// What is left to evaluate on this file's rows (JSON of a bound expression), `None` when
    /// nothing is (always true).
    fn residual(&self, _file: &DataFile, _spec: &PartitionSpec) -> Result<Option<serde_json::Value>> {
        Ok(None)
    }

    /// True when the filter can match nothing at all (the planner then reads no manifest).
    fn is_always_false(&self) -> bool {
        false
    }

    /// The field ids whose column stats `file_may_match` reads (the planner decodes only
    /// those); `None`: it may read any (every stat is decoded).
    fn stats_field_ids(&self) -> Option<Vec<i32>> {
        None
    }
}

/// No filter: every manifest and file may match, no residual.
#[derive(Debug, Clone, Copy, Default)]
pub struct AcceptAll;

impl ScanFilter for AcceptAll {
    fn stats_field_ids(&self) -> Option<Vec<i32>> {
        Some(vec![])
    }
}

/// The shared handle the planner holds.
pub type ScanFilterRef = Arc<dyn ScanFilter>;
