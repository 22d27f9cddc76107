//! Merge append (Iceberg Java's `MergeAppend`): an append whose commit merges small data
//! manifests (the merge step, `manifest_merge.rs`) when the table's settings call for it. A
//! [`Change`] of the one snapshot producer (`producer.rs`).

use std::collections::BTreeMap;

use crate::commit::producer::{produce, Change, Removal};
use crate::error::Result;
use crate::manifest::DataFile;
use crate::spec::{Operation, TableMetadata};

/// Builds the next metadata with an `append` snapshot adding `files`, merging manifests when
/// the table's settings call for it (a fast append otherwise). Returns the uncommitted
/// metadata and every file written.
pub fn merge_append(
    base: &TableMetadata,
    files: Vec<DataFile>,
    snapshot_properties: &BTreeMap<String, String>,
    now_ms: i64,
) -> Result<(TableMetadata, Vec<String>)> {
    let change = Change {
        added: files,
        removal: Removal::Nothing,
        operation: Some(Operation::Append),
        summary_properties: snapshot_properties.clone(),
        ..Default::default()
    };
    produce(base, change, now_ms)
}
