//! Fast append (Iceberg Java's `FastAppend`): one new manifest with the added files; the
//! parent's manifests are kept as they are, never merged. A [`Change`] of the one snapshot
//! producer (`producer.rs`) with merging off.

use std::collections::BTreeMap;

use crate::commit::producer::{produce, Change};
use crate::error::Result;
use crate::manifest::DataFile;
use crate::spec::{Operation, TableMetadata};

/// Builds the next metadata with an `append` snapshot adding `files`.
///
/// Returns the uncommitted metadata and every file written (manifests, manifest list),
/// so a caller whose swap fails can delete them. If writing fails midway, what was
/// written is deleted before the error is returned.
pub fn fast_append(
    base: &TableMetadata,
    files: Vec<DataFile>,
    snapshot_properties: &BTreeMap<String, String>,
    now_ms: i64,
) -> Result<(TableMetadata, Vec<String>)> {
    let change = Change {
        added: files,
        operation: Some(Operation::Append),
        summary_properties: snapshot_properties.clone(),
        keep_manifests: true,
        ..Default::default()
    };
    produce(base, change, now_ms)
}
#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::error::ErrorKind;
    use crate::scan::plan_files;

    fn table(dir: &std::path::Path) -> TableMetadata {
        crate::writer::test_tables::table(dir, &[], 2)
    }

    fn file(dir: &std::path::Path, name: &str, region: &str, rows: i64) -> DataFile {
        let mut f = DataFile::new_data(format!("{}/data/{name}", dir.display()), rows, 100 * rows);
        f.partition = vec![Some(crate::spec::Literal::String(region.into()))];
        f
    }

    #[test]
    fn appends_chain_snapshots_and_plan_sees_each() {
        let dir = tempfile::tempdir().unwrap();
        let t0 = table(dir.path());
        let (t1, written1) = fast_append(
            &t0,
            vec![file(dir.path(), "a.parquet", "eu", 10), file(dir.path(), "b.parquet", "us", 5)],
            &BTreeMap::new(),
            1_700_000_000_000,
        )
        .unwrap();
        assert_eq!(written1.len(), 2, "one manifest + one manifest list");
        let s1 = t1.current_snapshot().unwrap();
        assert_eq!(s1.sequence_number, 1);
        assert_eq!(s1.summary.get("added-data-files"), Some("2"));
        assert_eq!(s1.summary.get("total-records"), Some("15"));
        assert_eq!(s1.summary.get("changed-partition-count"), Some("2"));

        let (t2, _) = fast_append(
            &t1,
            vec![file(dir.path(), "c.parquet", "eu", 1)],
            &BTreeMap::new(),
            1_700_000_000_001,
        )
        .unwrap();
        let s2 = t2.current_snapshot().unwrap();
        assert_eq!(s2.parent_snapshot_id, Some(s1.snapshot_id));
        assert_eq!(s2.sequence_number, 2);
        assert_eq!(s2.summary.get("total-records"), Some("16"));
        assert_eq!(s2.summary.get("total-data-files"), Some("3"));

        let mut now: Vec<String> =
            plan_files(&t2, None).unwrap().into_iter().map(|t| t.file.file_path).collect();
        now.sort();
        assert_eq!(now.len(), 3);
        assert!(now[2].ends_with("c.parquet"));
        let then = plan_files(&t2, Some(s1.snapshot_id)).unwrap();
        assert_eq!(then.len(), 2);
        assert_eq!(then.iter().map(|t| t.file.record_count).sum::<i64>(), 15);
        assert_eq!(then[0].file.partition.len(), 1);

        let err = plan_files(&t2, Some(42)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Validation);
        assert!(err.to_string().contains("42"), "{err}");
    }

    #[test]
    fn rejects_unknown_spec_and_leaves_no_files() {
        let dir = tempfile::tempdir().unwrap();
        let t0 = table(dir.path());
        let mut bad = file(dir.path(), "a.parquet", "eu", 1);
        bad.spec_id = 7;
        let err = fast_append(&t0, vec![bad], &BTreeMap::new(), 1).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Validation);
        assert!(!dir.path().join("metadata").exists());
    }
}
