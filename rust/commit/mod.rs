//! Snapshot producers: build the next table metadata for an operation.
//!
//! A producer writes the new manifest(s) and manifest list and returns uncommitted
//! metadata plus the files it wrote; the catalog swaps the metadata in (compare-and-swap)
//! and the caller deletes those files if the swap fails.

mod fast_append;
mod summary;

pub use fast_append::fast_append;
pub use summary::SnapshotSummaryBuilder;
