//! Tests of rewrite manifests: clustering, carried sequence numbers, summary, validation.

use std::collections::{BTreeMap, BTreeSet};

use super::{commit_rewritten_manifests, rewrite_manifests, RewriteManifests};
use crate::commit::{fast_append, row_delta, RowDelta};
use crate::error::ErrorKind;
use crate::manifest::{
    read_manifest, read_manifest_list, DataContentType, DataFile, EntryStatus, ManifestContent,
};
use crate::scan::plan_files;
use crate::spec::{Literal, Operation, TableMetadata};

struct Fixture {
    dir: tempfile::TempDir,
    md: TableMetadata,
    n: i64,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let md = crate::writer::test_tables::table(dir.path(), &[], 2);
        Fixture { dir, md, n: 0 }
    }

    fn file(&self, name: &str, region: &str) -> DataFile {
        let mut f = DataFile::new_data(format!("{}/data/{name}", self.dir.path().display()), 10, 1000);
        f.partition = vec![Some(Literal::String(region.into()))];
        f
    }

    fn set(&mut self, next: TableMetadata) {
        self.n += 1;
        self.md =
            next.with_metadata_location(format!("{}/metadata/v{}.json", self.dir.path().display(), self.n));
    }

    fn append(&mut self, f: DataFile) {
        let (next, _) = fast_append(&self.md, vec![f], &BTreeMap::new(), 1_700_000_000_000 + self.n).unwrap();
        self.set(next);
    }

    /// Live data files: path -> (data sequence number, partition).
    fn live(&self) -> BTreeMap<String, i64> {
        plan_files(&self.md, None)
            .unwrap()
            .into_iter()
            .map(|t| (t.file.file_path, t.data_sequence_number))
            .collect()
    }

    fn manifests(&self) -> Vec<crate::manifest::ManifestFile> {
        read_manifest_list(self.md.current_snapshot().unwrap().manifest_list.as_deref().unwrap()).unwrap()
    }
}

#[test]
fn rewrites_small_manifests_into_one_clustered_by_partition() {
    let mut fx = Fixture::new();
    for (i, region) in ["b", "a", "c", "a", "b"].iter().enumerate() {
        let f = fx.file(&format!("f{i}.parquet"), region);
        fx.append(f);
    }
    assert_eq!(fx.manifests().len(), 5);
    let before = fx.live();
    let (md, written, outcome) =
        rewrite_manifests(&fx.md, &RewriteManifests::default(), 1_800_000_000_000).unwrap().unwrap();
    assert_eq!(outcome.replaced.len(), 5);
    assert_eq!(outcome.added.len(), 1);
    assert_eq!(outcome.entries_processed, 5);
    assert_eq!(written.len(), 2, "one manifest and the manifest list");
    fx.set(md);
    assert_eq!(fx.live(), before, "same files, same data sequence numbers");
    let snap = fx.md.current_snapshot().unwrap();
    assert_eq!(snap.summary.operation, Operation::Replace);
    let s = &snap.summary.other;
    assert_eq!(s["manifests-created"], "1");
    assert_eq!(s["manifests-replaced"], "5");
    assert_eq!(s["manifests-kept"], "0");
    assert_eq!(s["entries-processed"], "5");
    assert_eq!(s["total-data-files"], "5");
    let manifests = fx.manifests();
    assert_eq!(manifests.len(), 1);
    assert_eq!(manifests[0].existing_files_count, Some(5));
    assert_eq!(manifests[0].added_snapshot_id, snap.snapshot_id);
    let entries = read_manifest(&manifests[0]).unwrap();
    let regions: Vec<Option<Literal>> = entries.iter().map(|e| e.data_file.partition[0].clone()).collect();
    let mut sorted = regions.clone();
    sorted.sort_by(|a, b| a.as_ref().unwrap().cmp_same_type(b.as_ref().unwrap()).unwrap());
    assert_eq!(regions, sorted, "entries clustered by partition");
    assert!(entries.iter().all(|e| e.status == EntryStatus::Existing));
    // Each entry keeps the snapshot that added its file.
    let added_by: BTreeSet<i64> = entries.iter().filter_map(|e| e.snapshot_id).collect();
    assert_eq!(added_by.len(), 5);
}

#[test]
fn nothing_to_rewrite_for_one_small_manifest_or_no_snapshot() {
    let mut fx = Fixture::new();
    assert!(rewrite_manifests(&fx.md, &RewriteManifests::default(), 1).unwrap().is_none());
    let f = fx.file("f.parquet", "a");
    fx.append(f);
    assert!(rewrite_manifests(&fx.md, &RewriteManifests::default(), 1).unwrap().is_none());
    let bad = RewriteManifests { spec_id: Some(7), ..Default::default() };
    let err = rewrite_manifests(&fx.md, &bad, 1).unwrap_err();
    assert!(err.to_string().contains("invalid spec id 7"), "{err}");
}

#[test]
fn delete_manifests_are_rewritten_too_and_kept_apart() {
    let mut fx = Fixture::new();
    let mut data = Vec::new();
    for i in 0..3 {
        let f = fx.file(&format!("f{i}.parquet"), "a");
        data.push(f.clone());
        fx.append(f);
    }
    for (i, target) in data.iter().enumerate() {
        let mut d = fx.file(&format!("d{i}.parquet"), "a");
        d.content = DataContentType::PositionDeletes;
        d.record_count = 1;
        d.referenced_data_file = Some(target.file_path.clone());
        let delta = RowDelta { added_deletes: vec![d], ..Default::default() };
        let (next, _) = row_delta(&fx.md, delta, 1_700_000_100_000 + i as i64).unwrap();
        fx.set(next);
    }
    let before = plan_files(&fx.md, None).unwrap();
    let (md, _, outcome) = rewrite_manifests(&fx.md, &RewriteManifests::default(), 1).unwrap().unwrap();
    assert_eq!(outcome.replaced.len(), 6);
    fx.set(md);
    let manifests = fx.manifests();
    let contents: Vec<ManifestContent> = manifests.iter().map(|m| m.content).collect();
    assert_eq!(contents, vec![ManifestContent::Data, ManifestContent::Deletes]);
    let after = plan_files(&fx.md, None).unwrap();
    let view = |tasks: &[crate::scan::FileScanTask]| -> BTreeSet<(String, i64, Vec<String>)> {
        tasks
            .iter()
            .map(|t| {
                let mut ds: Vec<String> = t.deletes.iter().map(|d| d.file.file_path.clone()).collect();
                ds.sort();
                (t.file.file_path.clone(), t.data_sequence_number, ds)
            })
            .collect()
    };
    assert_eq!(view(&before), view(&after), "every delete still applies to the same data file");
}

#[test]
fn a_replaced_manifest_gone_from_the_base_is_a_conflict_and_a_rebuild_is_safe() {
    let mut fx = Fixture::new();
    let mut files = Vec::new();
    for i in 0..3 {
        let f = fx.file(&format!("f{i}.parquet"), "a");
        files.push(f.clone());
        fx.append(f);
    }
    let start = fx.md.clone();
    let (_, mut written, outcome) =
        rewrite_manifests(&start, &RewriteManifests::default(), 1).unwrap().unwrap();
    // A concurrent delete of f0 rewrites the manifest that held it.
    let delta = RowDelta {
        removed_data_paths: [files[0].file_path.clone()].into_iter().collect(),
        ..Default::default()
    };
    let (next, _) = row_delta(&fx.md, delta, 1_700_000_200_000).unwrap();
    fx.set(next);
    let err =
        commit_rewritten_manifests(&fx.md, 42, &outcome, &BTreeMap::new(), 2, &mut written).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::CommitConflict, "{err}");
    assert!(err.to_string().contains("could not be found in the latest snapshot"), "{err}");
    // Rebuilt on the new base (the commit loop's retry), f0 stays deleted.
    let (md, _, _) = rewrite_manifests(&fx.md, &RewriteManifests::default(), 3).unwrap().unwrap();
    fx.set(md);
    let live: BTreeSet<String> = fx.live().into_keys().collect();
    assert_eq!(live, files[1..].iter().map(|f| f.file_path.clone()).collect());
}
