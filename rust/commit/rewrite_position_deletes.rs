//! Rewrite position delete files (Iceberg Java's `RewritePositionDeletesCommitManager`:
//! `newRewrite().validateFromSnapshot(start)`, `deleteFile` for each rewritten delete file,
//! `addFile(file, maxRewrittenDataSequenceNumber)` for each new one), as one `replace`
//! snapshot.
//!
//! A rewritten delete file that is no longer live (a concurrent rewrite or compaction removed
//! it) is a commit conflict (Java's `failMissingDeletePaths`), as is a starting snapshot that
//! is no longer an ancestor of the current one. Delete files added concurrently are kept:
//! they never overlap the new files' positions in a way that resurrects a row, since the new
//! files only hold positions the rewritten ones already deleted. Except on format v3, where a
//! data file may have one deletion vector only: a DV committed meanwhile for a data file the
//! rewrite writes a DV for is a conflict (Java's `validateAddedDVs`).

use std::collections::{BTreeMap, BTreeSet};

use crate::commit::producer::{produce, Change};
use crate::commit::validation::snapshots_since;
use crate::error::{validation, Error, ErrorKind, Result};
use crate::manifest::{
    read_manifest, read_manifest_list, DataContentType, DataFile, EntryStatus, FileFormat, ManifestContent,
};
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
    validate_no_new_dvs(base, &rw)?;
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

/// Checks that the start snapshot is still an ancestor and, when the rewrite adds deletion
/// vectors, that no snapshot since added one for the same data file.
fn validate_no_new_dvs(base: &TableMetadata, rw: &RewritePositionDeletes) -> Result<()> {
    let since = snapshots_since(base, rw.start_snapshot_id)?;
    let ours: BTreeSet<&str> = rw
        .added
        .iter()
        .filter(|(f, _)| f.file_format == FileFormat::Puffin)
        .filter_map(|(f, _)| f.referenced_data_file.as_deref())
        .collect();
    if ours.is_empty() {
        return Ok(());
    }
    for s in since {
        let Some(list) = s.manifest_list.as_deref() else { continue };
        for m in read_manifest_list(list)? {
            if m.content != ManifestContent::Deletes || m.added_snapshot_id != s.snapshot_id {
                continue;
            }
            for e in read_manifest(&m)? {
                let f = &e.data_file;
                let added_here = e.status == EntryStatus::Added && e.snapshot_id == Some(s.snapshot_id);
                if added_here
                    && f.file_format == FileFormat::Puffin
                    && f.referenced_data_file.as_deref().is_some_and(|p| ours.contains(p))
                {
                    return Err(Error::new(
                        ErrorKind::CommitConflict,
                        format!(
                            "concurrent snapshot {} added a deletion vector for {}, which this rewrite also \
                             writes one for",
                            s.snapshot_id,
                            f.referenced_data_file.as_deref().unwrap_or_default()
                        ),
                    )
                    .with_context("conflicting snapshot", s.snapshot_id.to_string()));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::commit::{fast_append, row_delta, RowDelta};
    use crate::spec::Literal;
    use crate::writer::DeletionVectorWriter;

    #[test]
    fn a_concurrent_dv_for_the_same_data_file_is_a_conflict_on_v3() {
        let dir = tempfile::tempdir().unwrap();
        let mut md = crate::writer::test_tables::table(dir.path(), &[], 3);
        let mut f = DataFile::new_data(format!("{}/data/f1.parquet", dir.path().display()), 10, 100);
        f.partition = vec![Some(Literal::String("a".into()))];
        md = fast_append(&md, vec![f.clone()], &BTreeMap::new(), 1).unwrap().0;
        let dv = |md: &TableMetadata, id: &str, pos: i64| {
            let mut w = DeletionVectorWriter::try_new(Arc::new(md.clone()), id, 1).unwrap();
            w.delete(&f, &[pos]).unwrap();
            w.close().unwrap()
        };
        let old = dv(&md, "w1", 1);
        md = row_delta(&md, RowDelta { added_deletes: old.clone(), ..Default::default() }, 2).unwrap().0;
        let start = md.current_snapshot_id();
        let ours = dv(&md, "w2", 1);
        let rw = RewritePositionDeletes {
            start_snapshot_id: start,
            rewritten: old.clone(),
            added: ours.into_iter().map(|d| (d, 2)).collect(),
            summary_properties: BTreeMap::new(),
        };
        // Without a concurrent DV the rewrite commits.
        assert!(rewrite_position_deletes(&md, rw.clone(), 3).is_ok());
        let concurrent = dv(&md, "w3", 5);
        let md2 = row_delta(&md, RowDelta { added_deletes: concurrent, ..Default::default() }, 4).unwrap().0;
        let err = rewrite_position_deletes(&md2, rw, 5).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::CommitConflict, "{err}");
        assert!(err.to_string().contains("deletion vector"), "{err}");
    }
}
