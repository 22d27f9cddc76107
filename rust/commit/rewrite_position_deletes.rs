//! Rewrite position delete files (Iceberg Java's `RewritePositionDeletesCommitManager`:
//! `newRewrite().validateFromSnapshot(start)`, `deleteFile` for each rewritten delete file,
//! `addFile(file, maxRewrittenDataSequenceNumber)` for each new one), as one `replace`
//! snapshot.
//!
//! A rewritten delete file that is no longer live (a concurrent rewrite or compaction removed
//! it) is a commit conflict (Java's `failMissingDeletePaths`), as is a starting snapshot that
//! is no longer an ancestor of the current one. Delete files added concurrently are kept:
//! they never overlap the new files' positions in a way that resurrects a row, since the new
//! files only hold positions the rewritten ones already deleted.

use std::collections::{BTreeMap, BTreeSet};

use crate::commit::producer::{produce, Change};
use crate::commit::validation::snapshots_since;
use crate::error::{validation, Result};
use crate::manifest::{DataContentType, DataFile};
use crate::spec::{Operation, TableMetadata};

/// One rewrite of position delete files to commit.
#[derive(Debug, Clone, Default)]
pub struct RewritePositionDeletes {
    /// The snapshot the rewrite was planned on.
    pub start_snapshot_id: Option<i64>,
    /// The live delete files replaced.
    pub rewritten: Vec<DataFile>,
    /// The new delete files, each with the data sequence number it keeps (the highest of its
    /// group's rewritten files).
    pub added: Vec<(DataFile, i64)>,
    pub summary_properties: BTreeMap<String, String>,
}

/// Validates `rw` and builds the next metadata; returns it and every file written.
pub fn rewrite_position_deletes(
    base: &TableMetadata,
    rw: RewritePositionDeletes,
    now_ms: i64,
) -> Result<(TableMetadata, Vec<String>)> {
    if rw.rewritten.is_empty() {
        return Err(validation("a position delete rewrite needs delete files to replace; found none"));
    }
    for f in rw.rewritten.iter().chain(rw.added.iter().map(|(f, _)| f)) {
        if f.content != DataContentType::PositionDeletes {
            return Err(validation(format!("expected a position delete file, found {:?}", f.content))
                .with_context("file", f.file_path.clone()));
        }
    }
    snapshots_since(base, rw.start_snapshot_id)?;
    let removed: BTreeSet<String> = rw.rewritten.iter().map(|f| f.removal_key().into_owned()).collect();
    let seqs: BTreeMap<String, i64> =
        rw.added.iter().map(|(f, seq)| (f.removal_key().into_owned(), *seq)).collect();
    let change = Change {
        added_deletes: rw.added.into_iter().map(|(f, _)| f).collect(),
        removed_deletes: removed,
        added_delete_sequence_numbers: seqs,
        operation: Some(Operation::Replace),
        summary_properties: rw.summary_properties,
        ..Default::default()
    };
    produce(base, change, now_ms)
}
