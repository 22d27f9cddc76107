//! Removing snapshots and refs from table metadata, as Iceberg Java's
//! `TableMetadata.Builder.removeSnapshots` / `removeRef` do: the statistics and partition
//! statistics of removed snapshots go with them, refs left pointing at a removed snapshot
//! (dangling) are removed, `snapshot-log` keeps only the history after the last entry whose
//! snapshot is gone (a gap would make time travel lie), and the previous metadata file is
//! logged. Snapshot expiry (`maintenance/expire_snapshots.rs`) and the REST
//! `remove-snapshots` / `remove-snapshot-ref` updates go through here.

use std::collections::HashSet;

use serde_json::Value;

use super::snapshot::SnapshotRef;
use super::table_metadata::TableMetadata;
use crate::error::{validation, Result};

/// The `snapshot-id` a statistics or partition-statistics entry belongs to.
fn statistics_snapshot_id(entry: &Value) -> Option<i64> {
    entry.get("snapshot-id").and_then(Value::as_i64)
}

impl TableMetadata {
    /// The next version without the snapshots `ids` (ids not in the table are ignored, as
    /// Java does). When none of them is in the table this is no change: the same metadata
    /// (with its metadata location) comes back.
    pub fn remove_snapshots(&self, ids: &[i64], now_ms: i64) -> Result<TableMetadata> {
        self.remove_refs_and_snapshots(&[], ids, now_ms)
    }

    /// The next version without the refs `names` (unknown names are ignored). Removing
    /// `main` leaves the table without a current snapshot. No change when none exists.
    pub fn remove_refs(&self, names: &[String], now_ms: i64) -> Result<TableMetadata> {
        self.remove_refs_and_snapshots(names, &[], now_ms)
    }

    /// Both in one version (what snapshot expiry commits): the refs first, then the
    /// snapshots, then every ref the removal left dangling.
    pub fn remove_refs_and_snapshots(
        &self,
        ref_names: &[String],
        ids: &[i64],
        now_ms: i64,
    ) -> Result<TableMetadata> {
        let ids: HashSet<i64> = ids.iter().copied().collect();
        let removes_snapshots = self.snapshots.iter().any(|s| ids.contains(&s.snapshot_id));
        let removes_refs = ref_names.iter().any(|n| self.refs.contains_key(n));
        if !removes_snapshots && !removes_refs {
            return Ok(self.clone());
        }
        let mut next = self.next_version(now_ms);
        for name in ref_names {
            next.remove_ref_in_place(name);
        }
        if removes_snapshots {
            next.snapshots.retain(|s| !ids.contains(&s.snapshot_id));
            let gone = |e: &Value| statistics_snapshot_id(e).is_some_and(|id| ids.contains(&id));
            next.statistics.retain(|e| !gone(e));
            next.partition_statistics.retain(|e| !gone(e));
            let dangling: Vec<String> = next
                .refs
                .iter()
                .filter(|(_, r)| next.snapshot_by_id(r.snapshot_id).is_none())
                .map(|(name, _)| name.clone())
                .collect();
            for name in &dangling {
                next.remove_ref_in_place(name);
            }
            next.trim_snapshot_log()?;
        }
        next.trim_metadata_log();
        Ok(next)
    }

    /// Java's `removeSpecs` and `removeSchemas`: the partition specs `spec_ids` and schemas
    /// `schema_ids` go, in this version when `now_ms` is `None` (one an expiry just produced),
    /// else in the next one. The default spec and the current schema cannot, as in Java.
    pub fn without_specs_and_schemas(
        &self,
        spec_ids: &[i32],
        schema_ids: &[i32],
        now_ms: Option<i64>,
    ) -> Result<TableMetadata> {
        let mut next = match now_ms {
            Some(now) => self.next_version(now),
            None => self.clone(),
        };
        if spec_ids.contains(&next.default_spec_id) {
            return Err(validation(format!(
                "Cannot remove the default partition spec {}",
                next.default_spec_id
            )));
        }
        if schema_ids.contains(&next.current_schema_id) {
            return Err(validation(format!("Cannot remove current schema: {}", next.current_schema_id)));
        }
        next.partition_specs.retain(|s| !spec_ids.contains(&s.spec_id));
        next.schemas.retain(|s| !schema_ids.contains(&s.schema_id()));
        next.trim_metadata_log();
        Ok(next)
    }

    /// Java's `removeRef`: the ref goes; removing `main` unsets the current snapshot.
    fn remove_ref_in_place(&mut self, name: &str) {
        if name == SnapshotRef::MAIN_BRANCH {
            self.current_snapshot_id = None;
        }
        self.refs.remove(name);
    }

    /// After snapshots were removed: an entry of a removed snapshot drops every entry before
    /// it, entries of remaining snapshots are kept. The newest entry must then be the
    /// current snapshot (Java refuses the metadata otherwise).
    fn trim_snapshot_log(&mut self) -> Result<()> {
        let mut kept = Vec::with_capacity(self.snapshot_log.len());
        for entry in &self.snapshot_log {
            if self.snapshot_by_id(entry.snapshot_id).is_some() {
                kept.push(entry.clone());
            } else {
                kept.clear();
            }
        }
        if let Some(current) = self.current_snapshot_id.filter(|id| self.snapshot_by_id(*id).is_some()) {
            let last = kept.last().map(|e| e.snapshot_id);
            if last != Some(current) {
                return Err(validation(format!(
                    "cannot remove snapshots: the snapshot log would end at {} but the current \
                     snapshot is {current} (Java refuses such a log: its newest entry must be the \
                     current snapshot)",
                    last.map_or_else(|| "no entry".to_string(), |id| format!("snapshot {id}"))
                )));
            }
        }
        self.snapshot_log = kept;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;
    use crate::spec::snapshot::{Operation, Snapshot, SnapshotLogEntry, SnapshotRetention, Summary};
    use crate::spec::types::{NestedField, PrimitiveType};
    use crate::spec::Schema;

    fn snap(id: i64, parent: Option<i64>, seq: i64) -> Snapshot {
        Snapshot {
            snapshot_id: id,
            parent_snapshot_id: parent,
            sequence_number: seq,
            timestamp_ms: 1000 * id,
            manifest_list: Some(format!("/t/metadata/snap-{id}.avro")),
            manifests: None,
            summary: Summary::new(Operation::Append),
            schema_id: Some(0),
            first_row_id: None,
            added_rows: None,
        }
    }

    /// Snapshots 1..=4 on main (4 current), tag `t2` on 2, branch `b` on 5 (child of 2),
    /// statistics for 1 and 4, partition statistics for 1.
    fn table() -> TableMetadata {
        let schema =
            Schema::new(0, vec![NestedField::required(1, "id", PrimitiveType::Long.into())], vec![]).unwrap();
        let mut m = TableMetadata::new_table(schema, None, None, "/t", BTreeMap::new(), 2)
            .unwrap()
            .with_metadata_location("/t/metadata/v1.metadata.json");
        let mut parent = None;
        for id in 1..=4 {
            m = m
                .add_snapshot(snap(id, parent, id), 10 + id)
                .unwrap()
                .with_metadata_location(format!("/t/metadata/v{}.metadata.json", id + 1));
            parent = Some(id);
        }
        let mut branch = snap(5, Some(2), 5);
        branch.timestamp_ms = 4500;
        m.snapshots.push(branch);
        m.last_sequence_number = 5;
        m.refs.insert("t2".into(), SnapshotRef::tag(2));
        m.refs.insert("b".into(), SnapshotRef::branch(5));
        m.statistics = vec![
            json!({"snapshot-id": 1, "statistics-path": "/t/metadata/s1.stats", "file-size-in-bytes": 10,
                   "file-footer-size-in-bytes": 5, "blob-metadata": []}),
            json!({"snapshot-id": 4, "statistics-path": "/t/metadata/s4.stats", "file-size-in-bytes": 10,
                   "file-footer-size-in-bytes": 5, "blob-metadata": []}),
        ];
        m.partition_statistics = vec![
            json!({"snapshot-id": 1, "statistics-path": "/t/metadata/p1.parquet", "file-size-in-bytes": 7}),
        ];
        m
    }

    fn log_ids(m: &TableMetadata) -> Vec<i64> {
        m.snapshot_log().iter().map(|e| e.snapshot_id).collect()
    }

    #[test]
    fn removes_snapshots_their_statistics_and_the_history_before_them() {
        let m = table();
        let next = m.remove_snapshots(&[1, 3], 99_000).unwrap();
        let ids: Vec<i64> = next.snapshots().iter().map(|s| s.snapshot_id).collect();
        assert_eq!(ids, vec![2, 4, 5]);
        // 3 was removed: the history before it (1, 2, 3) goes; only 4 is left.
        assert_eq!(log_ids(&next), vec![4]);
        assert_eq!(next.statistics().len(), 1);
        assert_eq!(next.statistics()[0]["snapshot-id"], json!(4));
        assert!(next.partition_statistics().is_empty());
        assert_eq!(next.current_snapshot_id(), Some(4));
        assert_eq!(next.refs().len(), 3);
        assert_eq!(next.last_updated_ms(), 99_000);
        assert_eq!(next.metadata_log().last().unwrap().metadata_file, "/t/metadata/v5.metadata.json");
        assert!(next.metadata_location().is_none());
        // The JSON form round-trips.
        let back = TableMetadata::from_json_str(&next.to_json_string().unwrap(), None).unwrap();
        assert_eq!(back, next);

        // Only the oldest: the history after it stays whole.
        assert_eq!(log_ids(&m.remove_snapshots(&[1], 1).unwrap()), vec![2, 3, 4]);
    }

    #[test]
    fn dangling_refs_go_and_unknown_ids_change_nothing() {
        let m = table();
        let next = m.remove_snapshots(&[2, 5], 1).unwrap();
        assert!(!next.refs().contains_key("t2"));
        assert!(!next.refs().contains_key("b"));
        assert_eq!(next.refs()["main"].snapshot_id, 4);
        let same = m.remove_snapshots(&[42], 1).unwrap();
        assert_eq!(same, m);
        assert_eq!(same.metadata_location(), Some("/t/metadata/v5.metadata.json"));
    }

    #[test]
    fn removing_the_current_snapshot_unsets_main() {
        let m = table();
        let next = m.remove_snapshots(&[4], 1).unwrap();
        assert_eq!(next.current_snapshot_id(), None);
        assert!(!next.refs().contains_key("main"));
        assert!(log_ids(&next).is_empty());
        let v: Value = serde_json::from_str(&next.to_json_string().unwrap()).unwrap();
        assert_eq!(v["current-snapshot-id"], json!(-1));
    }

    #[test]
    fn refs_removed_with_snapshots_in_one_version() {
        let m = table();
        let next = m.remove_refs_and_snapshots(&["b".into(), "nope".into()], &[5], 7).unwrap();
        assert_eq!(next.refs().keys().collect::<Vec<_>>(), vec!["main", "t2"]);
        assert_eq!(next.metadata_log().len(), m.metadata_log().len() + 1);
        let only_ref = m.remove_refs(&["t2".into()], 7).unwrap();
        assert_eq!(only_ref.snapshots().len(), 5);
        assert!(!only_ref.refs().contains_key("t2"));
        assert_eq!(only_ref.snapshot_log(), m.snapshot_log());
        let main_gone = m.remove_refs(&["main".into()], 7).unwrap();
        assert_eq!(main_gone.current_snapshot_id(), None);
        assert_eq!(m.remove_refs(&["nope".into()], 7).unwrap(), m);
        assert_eq!(
            m.refs()["b"].retention,
            SnapshotRetention::Branch {
                min_snapshots_to_keep: None,
                max_snapshot_age_ms: None,
                max_ref_age_ms: None
            }
        );
    }

    #[test]
    fn a_log_not_ending_at_the_current_snapshot_is_refused() {
        let mut m = table();
        m.snapshot_log.push(SnapshotLogEntry { timestamp_ms: 5000, snapshot_id: 2 });
        let e = m.remove_snapshots(&[1], 1).unwrap_err();
        assert!(e.to_string().contains("current snapshot is 4"), "{e}");
    }
}
