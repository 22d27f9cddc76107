//! Dynamic partition overwrite (Iceberg Java's `ReplacePartitions`): every live data file in
//! a partition (of the same spec) that the new files write to is removed, as one `overwrite`
//! snapshot with `replace-partitions=true` in its summary. In an unpartitioned table that is
//! every file of the unpartitioned spec.

use std::collections::{BTreeMap, BTreeSet};

use crate::commit::producer::{partition_key, produce, Change, Removal};
use crate::error::Result;
use crate::manifest::DataFile;
use crate::spec::{Operation, TableMetadata};

/// The partition keys (`<spec id>:<path>`) the files write to.
pub fn partitions_of(base: &TableMetadata, files: &[DataFile]) -> Result<BTreeSet<String>> {
    files.iter().map(|f| partition_key(base, f)).collect()
}

/// Builds the next metadata replacing the partitions `added` writes to. Returns the
/// uncommitted metadata and every file written.
pub fn replace_partitions(
    base: &TableMetadata,
    added: Vec<DataFile>,
    snapshot_properties: &BTreeMap<String, String>,
    now_ms: i64,
) -> Result<(TableMetadata, Vec<String>)> {
    let keys = partitions_of(base, &added)?;
    let mut props = snapshot_properties.clone();
    props.insert("replace-partitions".into(), "true".into());
    let change = Change {
        added,
        removal: Removal::Partitions(keys),
        operation: Some(Operation::Overwrite),
        summary_properties: props,
        ..Default::default()
    };
    produce(base, change, now_ms)
}
