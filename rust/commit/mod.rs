//! Snapshot producers: build the next table metadata for an operation.
//!
//! A producer writes the new manifest(s) and manifest list and returns uncommitted
//! metadata plus the files it wrote; the catalog swaps the metadata in (compare-and-swap)
//! and the caller deletes those files if the swap fails. On a lost race the caller
//! refreshes, runs [`validate`] against what was committed in between, and produces again.

mod attempt;
mod cherrypick;
mod fast_append;
mod manifest_merge;
mod merge_append;
mod overwrite;
mod producer;
mod replace_partitions;
mod rewrite_files;
mod rewrite_manifests;
mod rewrite_position_deletes;
mod row_delta;
mod row_filter;
mod summary;
mod validation;

pub use cherrypick::cherrypick;
pub use fast_append::fast_append;
pub use manifest_merge::MergeConfig;
pub use merge_append::merge_append;
pub use overwrite::overwrite_files;
pub use producer::{partition_key, produce, Change, Removal};
pub use replace_partitions::{partitions_of, replace_partitions};
pub use rewrite_files::{rewrite_files, RewriteFiles};
pub use rewrite_manifests::{
    commit_rewritten_manifests, rewrite_manifests, ManifestRewriteOutcome, RewriteManifests,
};
pub use rewrite_position_deletes::{rewrite_position_deletes, RewritePositionDeletes};
pub use row_delta::{row_delta, RowDelta};
pub use row_filter::{plan_row_removal, FileMatch, RowFilter};
pub use summary::SnapshotSummaryBuilder;
pub use validation::{snapshots_since, validate, ConflictScope, Validation};

#[cfg(test)]
#[path = "row_filter_tests.rs"]
mod row_filter_tests;
