//! Row delta (Iceberg Java's `RowDelta`): add data files and position / equality delete
//! files, and optionally remove whole data files, as one snapshot. The operation of
//! merge-on-read DELETE, UPDATE and MERGE and of equality-delete upserts. The operation is
//! `delete` when only delete files are added (with or without removed data files),
//! `overwrite` when data files are added as well, as Java's `BaseRowDelta` names it.
//!
//! Conflict validation (Java's `validateDataFilesExist`, `validateNoConflictingDataFiles`,
//! `validateNoConflictingDeleteFiles`) is the caller's, through [`crate::commit::validate`]
//! with [`crate::commit::Validation::required_paths`] naming the data files the position
//! deletes reference.

use std::collections::{BTreeMap, BTreeSet};

use crate::commit::producer::{produce, Change, Removal};
use crate::error::{validation, Result};
use crate::manifest::{DataContentType, DataFile};
use crate::spec::TableMetadata;

/// What one row delta adds and removes.
#[derive(Debug, Clone, Default)]
pub struct RowDelta {
    /// New data files (updated or inserted rows).
    pub added_data: Vec<DataFile>,
    /// New position and equality delete files.
    pub added_deletes: Vec<DataFile>,
    /// Live data files removed whole (every row of them deleted).
    pub removed_data_paths: BTreeSet<String>,
    /// Live delete files removed (their positions were merged into new delete files).
    pub removed_delete_paths: BTreeSet<String>,
    /// Extra snapshot summary entries.
    pub summary_properties: BTreeMap<String, String>,
}

impl RowDelta {
    /// The data files the position deletes of this delta reference (`referenced_data_file`):
    /// a concurrent commit that removed one of them makes this delta dangle.
    pub fn referenced_data_files(&self) -> BTreeSet<String> {
        self.added_deletes
            .iter()
            .filter(|f| f.content == DataContentType::PositionDeletes)
            .filter_map(|f| f.referenced_data_file.clone())
            .collect()
    }
}

/// Builds the next metadata for `delta` on top of `base`'s current snapshot. A removed path
/// that is no longer live is a commit conflict; a position delete referencing a data file
/// this delta also removes is a validation error (Java refuses the same combination).
pub fn row_delta(base: &TableMetadata, delta: RowDelta, now_ms: i64) -> Result<(TableMetadata, Vec<String>)> {
    if let Some(p) = delta.referenced_data_files().intersection(&delta.removed_data_paths).next() {
        return Err(validation(format!(
            "a row delta cannot both remove data file {p} and add position deletes for it"
        )));
    }
    let removal = if delta.removed_data_paths.is_empty() {
        Removal::Nothing
    } else {
        Removal::Paths(delta.removed_data_paths)
    };
    let change = Change {
        added: delta.added_data,
        added_deletes: delta.added_deletes,
        removed_deletes: delta.removed_delete_paths,
        removal,
        operation: None,
        summary_properties: delta.summary_properties,
        ..Default::default()
    };
    produce(base, change, now_ms)
}
