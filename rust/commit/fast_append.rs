//! Fast append: one new manifest with the added files; the parent's manifests are kept as they are.

use std::collections::BTreeMap;

use crate::commit::summary::SnapshotSummaryBuilder;
use crate::error::{validation, Result};
use crate::io;
use crate::manifest::{
    read_manifest_list, DataContentType, DataFile, ManifestContent, ManifestListWriter, ManifestWriter,
};
use crate::spec::{Operation, Snapshot, Summary, TableMetadata};

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
    let mut written = Vec::new();
    match build(base, files, snapshot_properties, now_ms, &mut written) {
        Ok(md) => Ok((md, written)),
        Err(e) => {
            for p in &written {
                let _ = io::delete_file(p);
            }
            Err(e)
        }
    }
}

fn build(
    base: &TableMetadata,
    files: Vec<DataFile>,
    snapshot_properties: &BTreeMap<String, String>,
    now_ms: i64,
    written: &mut Vec<String>,
) -> Result<TableMetadata> {
    if base.format_version() != 2 {
        return Err(crate::error::not_supported(format!(
            "writing to a format-version {} table; icefloe writes format v2 tables only",
            base.format_version()
        ))
        .with_context("table", base.location().to_string()));
    }
    for f in &files {
        if f.content != DataContentType::Data {
            return Err(validation(format!("append takes data files only, found {:?}", f.content))
                .with_context("file", f.file_path.clone()));
        }
        if base.spec_by_id(f.spec_id).is_none() {
            return Err(validation(format!("data file has unknown partition spec id {}", f.spec_id))
                .with_context("file", f.file_path.clone()));
        }
    }
    let snapshot_id = base.new_snapshot_id();
    let sequence_number = base.next_sequence_number();
    let commit_uuid = uuid::Uuid::new_v4();
    let metadata_dir = format!("{}/metadata", base.location());
    let schema = base.current_schema();
    let parent = base.current_snapshot();

    let mut summary = SnapshotSummaryBuilder::default();
    // One manifest per partition spec among the added files (normally just the default).
    let mut by_spec: BTreeMap<i32, Vec<DataFile>> = BTreeMap::new();
    for f in files {
        by_spec.entry(f.spec_id).or_default().push(f);
    }
    let mut new_manifests = Vec::new();
    for (n, (spec_id, spec_files)) in by_spec.into_iter().enumerate() {
        let spec = base
            .spec_by_id(spec_id)
            .ok_or_else(|| validation(format!("unknown partition spec id {spec_id}")))?;
        let path = format!("{metadata_dir}/{commit_uuid}-m{n}.avro");
        // Written before the writer opens it, so a failure after a partial write still cleans up.
        written.push(path.clone());
        let mut writer = ManifestWriter::new(&path, snapshot_id, ManifestContent::Data, schema, spec)?;
        for f in spec_files {
            summary.add_file(&f, format!("{}:{}", spec_id, spec.partition_path(schema, &f.partition)?));
            writer.add(f)?;
        }
        new_manifests.push(writer.close()?);
    }

    let mut manifests = new_manifests;
    if let Some(p) = parent {
        if let Some(list) = p.manifest_list.as_deref() {
            manifests.extend(read_manifest_list(list)?);
        }
    }
    let list_path = format!("{metadata_dir}/snap-{snapshot_id}-1-{commit_uuid}.avro");
    written.push(list_path.clone());
    let mut list =
        ManifestListWriter::new(&list_path, snapshot_id, parent.map(|p| p.snapshot_id), sequence_number);
    list.add_all(manifests);
    list.write()?;

    let snapshot = Snapshot {
        snapshot_id,
        parent_snapshot_id: parent.map(|p| p.snapshot_id),
        sequence_number,
        timestamp_ms: now_ms,
        manifest_list: Some(list_path),
        manifests: None,
        summary: Summary { operation: Operation::Append, other: summary.build(parent, snapshot_properties) },
        schema_id: Some(schema.schema_id()),
    };
    base.add_snapshot(snapshot, now_ms)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::error::ErrorKind;
    use crate::scan::plan_files;
    use crate::spec::{NestedField, PartitionSpec, PrimitiveType, Schema};

    fn table(dir: &std::path::Path) -> TableMetadata {
        let schema = Schema::new(
            0,
            vec![
                NestedField::required(1, "id", PrimitiveType::Long.into()),
                NestedField::optional(2, "region", PrimitiveType::String.into()),
            ],
            vec![],
        )
        .unwrap();
        let spec = PartitionSpec::builder(&schema).identity("region").unwrap().build().unwrap();
        TableMetadata::new_table(schema, Some(spec), None, dir.to_str().unwrap(), BTreeMap::new(), 2).unwrap()
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
