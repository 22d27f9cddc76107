//! Writes to a branch other than `main`. Every operation (append, overwrite, delete, row
//! delta) reads "the table" from its current snapshot and produces a snapshot on top of it; to
//! write to branch `b`, it runs on a *view* of the metadata in which `b`'s head is the current
//! snapshot, and the snapshot it produced is then added to the real metadata on `b` alone
//! (Java's `SnapshotProducer.toBranch`: `main`, the current snapshot and the snapshot log stay).

use super::snapshot::SnapshotRef;
use super::table_metadata::TableMetadata;
use crate::error::{validation, Result};

impl TableMetadata {
    /// This metadata as an operation on `branch` sees it: its head is the current snapshot
    /// (for a branch that does not exist yet, main's: the first write creates the branch on
    /// top of it). A tag is an error: tags cannot be written to.
    pub fn branch_view(&self, branch: &str) -> Result<TableMetadata> {
        if branch == SnapshotRef::MAIN_BRANCH {
            return Ok(self.clone());
        }
        if branch.is_empty() {
            return Err(validation("a branch needs a non-empty name"));
        }
        let head = match self.refs.get(branch) {
            Some(r) if !r.is_branch() => {
                return Err(validation(format!(
                    "cannot write to '{branch}': it is a tag (of snapshot {}), not a branch",
                    r.snapshot_id
                )))
            }
            Some(r) => r.snapshot_id,
            // Java's `SnapshotUtil.latestSnapshot`: a missing branch forks from the current
            // snapshot, so the view is the table as it is.
            None => return Ok(self.clone()),
        };
        let mut view = self.clone();
        view.current_snapshot_id = Some(head);
        view.refs.insert(SnapshotRef::MAIN_BRANCH.to_string(), SnapshotRef::branch(head));
        Ok(view)
    }

    /// The next real version after an operation on [`Self::branch_view`]`(branch)` produced
    /// `produced`: its one new snapshot added on `branch`, or staged (no ref moves) when
    /// `branch` is `None`.
    pub fn commit_to_branch(
        &self,
        produced: &TableMetadata,
        branch: Option<&str>,
        now_ms: i64,
    ) -> Result<TableMetadata> {
        if branch == Some(SnapshotRef::MAIN_BRANCH) {
            return Ok(produced.clone());
        }
        let label = branch.unwrap_or("(staged)");
        let mut added = produced.snapshots.iter().filter(|s| self.snapshot_by_id(s.snapshot_id).is_none());
        let (Some(snapshot), None) = (added.next(), added.next()) else {
            return Err(validation(format!(
                "a commit to branch '{label}' must add exactly one snapshot, found {}",
                produced.snapshots.len().saturating_sub(self.snapshots.len())
            )));
        };
        // Only the snapshot crosses over: the view differs from this metadata in its refs and
        // current snapshot only, and those must stay as they are here.
        self.add_snapshot_to(snapshot.clone(), branch, now_ms)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::spec::snapshot::{Operation, Snapshot, Summary};
    use crate::spec::types::{NestedField, PrimitiveType};
    use crate::spec::Schema;

    fn snap(md: &TableMetadata, id: i64, parent: Option<i64>) -> Snapshot {
        Snapshot {
            snapshot_id: id,
            parent_snapshot_id: parent,
            sequence_number: md.next_sequence_number(),
            timestamp_ms: 1000 + id,
            manifest_list: Some(format!("file:///t/metadata/snap-{id}.avro")),
            manifests: None,
            summary: Summary::new(Operation::Append),
            schema_id: Some(0),
            first_row_id: None,
            added_rows: None,
        }
    }

    fn table() -> TableMetadata {
        let schema =
            Schema::new(0, vec![NestedField::required(1, "id", PrimitiveType::Long.into())], vec![]).unwrap();
        let md = TableMetadata::new_table(schema, None, None, "file:///t", BTreeMap::new(), 2).unwrap();
        let s1 = snap(&md, 1, None);
        md.add_snapshot(s1, 1).unwrap()
    }

    #[test]
    fn a_write_to_a_branch_moves_only_that_branch() {
        let md = table();
        // New branch: it forks from the current snapshot; the write creates the branch.
        let view = md.branch_view("audit").unwrap();
        assert_eq!(view.current_snapshot_id(), Some(1));
        let produced = view.add_snapshot(snap(&view, 2, Some(1)), 2).unwrap();
        let next = md.commit_to_branch(&produced, Some("audit"), 2).unwrap();
        assert_eq!(next.current_snapshot_id(), Some(1));
        assert_eq!(next.refs()["audit"].snapshot_id, 2);
        assert_eq!(next.refs()["main"].snapshot_id, 1);
        assert_eq!(next.snapshot_log().len(), 1, "only main's moves are logged");
        assert_eq!(next.last_sequence_number(), 2);

        // Existing branch: its head is the view's current snapshot and the parent.
        let view = next.branch_view("audit").unwrap();
        assert_eq!(view.current_snapshot_id(), Some(2));
        let produced = view.add_snapshot(snap(&view, 3, Some(2)), 3).unwrap();
        let after = next.commit_to_branch(&produced, Some("audit"), 3).unwrap();
        assert_eq!(after.refs()["audit"].snapshot_id, 3);
        assert_eq!(after.current_snapshot_id(), Some(1));
        assert_eq!(after.snapshot_by_id(3).and_then(|s| s.parent_snapshot_id), Some(2));

        // Staged (write-audit-publish): added, but no ref moves.
        let produced = after.add_snapshot(snap(&after, 4, Some(1)), 4).unwrap();
        let staged = after.commit_to_branch(&produced, None, 4).unwrap();
        assert!(staged.snapshot_by_id(4).is_some());
        assert_eq!(staged.refs(), after.refs());
        assert_eq!(staged.current_snapshot_id(), Some(1));
        assert_eq!(staged.last_sequence_number(), 4);
    }

    #[test]
    fn tags_cannot_be_written_and_a_commit_adds_one_snapshot() {
        let md = table();
        let mut tagged = md.clone();
        tagged.refs.insert("v1".into(), SnapshotRef::tag(1));
        let err = tagged.branch_view("v1").unwrap_err();
        assert!(err.to_string().contains("is a tag"), "{err}");
        let err = md.commit_to_branch(&md, Some("audit"), 5).unwrap_err();
        assert!(err.to_string().contains("exactly one snapshot, found 0"), "{err}");
    }
}
