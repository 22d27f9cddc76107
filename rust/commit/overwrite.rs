//! Overwrite and copy-on-write delete by files (Iceberg Java's `OverwriteFiles` /
//! `DeleteFiles`): remove exactly these live data files and add new ones, as one snapshot.
//! Which files to remove (whole-file drops and the originals of partial rewrites) is decided
//! by the caller from the overwrite filter; the operation follows Java: only removals is
//! `delete`, only additions `append`, both `overwrite`.

use std::collections::{BTreeMap, BTreeSet};

use crate::commit::producer::{produce, Change, Removal};
use crate::error::Result;
use crate::manifest::DataFile;
use crate::spec::TableMetadata;

/// Builds the next metadata removing the live data files at `removed_paths` and adding
/// `added`. A path that is not live in `base` is a commit conflict (another writer removed
/// it). Returns the uncommitted metadata and every file written.
pub fn overwrite_files(
    base: &TableMetadata,
    added: Vec<DataFile>,
    removed_paths: BTreeSet<String>,
    snapshot_properties: &BTreeMap<String, String>,
    now_ms: i64,
) -> Result<(TableMetadata, Vec<String>)> {
    let removal = if removed_paths.is_empty() { Removal::Nothing } else { Removal::Paths(removed_paths) };
    let change = Change {
        added,
        removal,
        operation: None,
        summary_properties: snapshot_properties.clone(),
        ..Default::default()
    };
    produce(base, change, now_ms)
}
