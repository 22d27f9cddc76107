//! The files a set of snapshots reaches: their manifest lists, the manifests those list, the
//! live data and delete files of those manifests, and the statistics files of the table.
//! Manifest lists and manifests are read concurrently through the FileIO. A file counts as
//! reached by a manifest only as a live entry (ADDED or EXISTING), as in Java's
//! `ManifestFiles.readPaths` / `ReachableFileUtil`.
//!
//! A file that cannot be read is an error, never an empty answer: callers decide what is
//! safe to delete from these sets, and a missing answer must delete nothing.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::error::{invalid_data, Result};
use crate::io;
use crate::manifest::{
    read_manifest_each, read_manifest_list_bytes, DataContentType, Manifest, ManifestFile,
};
use crate::manifest::{ManifestContent, StatsProjection};
use crate::scan::{default_threads, parallel_consume, parallel_map};
use crate::spec::{Snapshot, TableMetadata};

/// Requests in flight when the table lives on an object store (I/O-bound); local tables use
/// the cores (decoding is the cost there).
const OBJECT_STORE_THREADS: usize = 16;

/// Worker threads for reading or deleting files of a table at `location`.
pub fn threads_for(location: &str) -> usize {
    match io::Location::parse(location) {
        Ok(l) if !l.scheme.is_local() => OBJECT_STORE_THREADS.max(default_threads()),
        _ => default_threads(),
    }
}

/// A manifest as a snapshot names it: an entry of its manifest list, or (legacy v1) a path
/// listed inline in the metadata.
#[derive(Debug, Clone)]
pub enum ManifestRef {
    Listed(ManifestFile),
    Inline(String),
}

impl ManifestRef {
    pub fn path(&self) -> &str {
        match self {
            ManifestRef::Listed(m) => &m.manifest_path,
            ManifestRef::Inline(p) => p,
        }
    }

    /// The length the manifest list records (unknown for inline manifests).
    pub fn length(&self) -> Option<i64> {
        match self {
            ManifestRef::Listed(m) => Some(m.manifest_length),
            ManifestRef::Inline(_) => None,
        }
    }
}

/// What the manifest lists of some snapshots name.
#[derive(Debug, Default)]
pub struct ManifestSet {
    /// Manifest list location -> its size in bytes.
    pub manifest_lists: HashMap<String, i64>,
    /// Manifest location -> the manifest (the first snapshot listing it wins).
    pub manifests: HashMap<String, ManifestRef>,
}

impl ManifestSet {
    /// Reads the manifest lists of `snapshots` (deduplicated by location).
    pub fn read(snapshots: &[&Snapshot], threads: usize) -> Result<ManifestSet> {
        let read = parallel_map(snapshots, threads, |s| snapshot_manifests(s));
        let mut out = ManifestSet::default();
        for got in read {
            let (list, manifests) = got?;
            if let Some((path, size)) = list {
                out.manifest_lists.insert(path, size);
            }
            for m in manifests {
                out.manifests.entry(m.path().to_string()).or_insert(m);
            }
        }
        Ok(out)
    }
}

type SnapshotManifests = (Option<(String, i64)>, Vec<ManifestRef>);

fn snapshot_manifests(snapshot: &Snapshot) -> Result<SnapshotManifests> {
    let id = snapshot.snapshot_id;
    match (&snapshot.manifest_list, &snapshot.manifests) {
        (Some(list), _) => {
            let bytes = io::read_file(list).map_err(|e| e.with_context("snapshot", id.to_string()))?;
            let manifests = read_manifest_list_bytes(&bytes)
                .map_err(|e| e.with_context("file", list.clone()).with_context("snapshot", id.to_string()))?;
            let size = i64::try_from(bytes.len()).unwrap_or(i64::MAX);
            Ok((Some((list.clone(), size)), manifests.into_iter().map(ManifestRef::Listed).collect()))
        }
        (None, Some(paths)) => Ok((None, paths.iter().cloned().map(ManifestRef::Inline).collect())),
        (None, None) => Err(invalid_data(format!("snapshot {id} has neither a manifest list nor manifests"))),
    }
}

/// A live data or delete file: its content type and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContentFile {
    pub content: DataContentType,
    pub size: i64,
}

/// Calls `f` with (path, content, size) of every live entry of a manifest. Listed manifests
/// are checked against their list entry (length, entry counts): a truncated retained
/// manifest must fail the caller rather than hide a live file.
fn each_live_file(manifest: &ManifestRef, mut f: impl FnMut(String, ContentFile)) -> Result<()> {
    let no_stats = StatsProjection::only([]);
    match manifest {
        ManifestRef::Listed(m) => {
            read_manifest_each(m, &no_stats, |e| {
                if e.status.is_live() {
                    let size = e.data_file.file_size_in_bytes;
                    f(e.data_file.file_path, ContentFile { content: e.data_file.content, size });
                }
                Ok(())
            })?;
        }
        ManifestRef::Inline(path) => {
            let bytes = io::read_file(path)?;
            let parsed =
                Manifest::parse_projected(&bytes, &no_stats).map_err(|e| e.with_context("file", path))?;
            let data_manifest = parsed.metadata.content == ManifestContent::Data;
            for e in parsed.entries.into_iter().filter(|e| e.status.is_live()) {
                let content = if data_manifest { DataContentType::Data } else { e.data_file.content };
                f(e.data_file.file_path, ContentFile { content, size: e.data_file.file_size_in_bytes });
            }
        }
    }
    Ok(())
}

/// Every live data and delete file of `manifests`, by location.
pub fn live_files<'a>(
    manifests: impl IntoIterator<Item = &'a ManifestRef>,
    threads: usize,
) -> Result<HashMap<String, ContentFile>> {
    let mut out = HashMap::new();
    for_each_live_file(manifests, threads, |path, file| {
        out.entry(path).or_insert(file);
    })?;
    Ok(out)
}

/// Calls `each` with every live file of `manifests` (a file in several manifests once per
/// manifest), manifest by manifest in order, each read on one of `threads` workers and handed
/// over as soon as it is read: the manifests' files are never all held besides what `each`
/// keeps (a million-file table's orphan search held them twice).
pub fn for_each_live_file<'a>(
    manifests: impl IntoIterator<Item = &'a ManifestRef>,
    threads: usize,
    mut each: impl FnMut(String, ContentFile),
) -> Result<()> {
    let manifests: Vec<&ManifestRef> = manifests.into_iter().collect();
    let read = |m: &&ManifestRef| {
        let mut files = Vec::new();
        each_live_file(m, |p, c| files.push((p, c))).map(|_| files)
    };
    parallel_consume(&manifests, threads, read, |got| {
        for (path, file) in got? {
            each(path, file);
        }
        Ok(())
    })
}

/// The locations among `candidates` that some live entry of `manifests` names. Only hits
/// are collected, so reading a large retained table costs no memory per file.
pub fn live_among<'a, V: Sync>(
    manifests: impl IntoIterator<Item = &'a ManifestRef>,
    candidates: &HashMap<String, V>,
    threads: usize,
) -> Result<HashSet<String>> {
    let manifests: Vec<&ManifestRef> = manifests.into_iter().collect();
    let read = parallel_map(&manifests, threads, |m| {
        let mut hits = Vec::new();
        each_live_file(m, |p, _| {
            if candidates.contains_key(&p) {
                hits.push(p);
            }
        })
        .map(|_| hits)
    });
    let mut out = HashSet::new();
    for got in read {
        out.extend(got?);
    }
    Ok(out)
}

/// One statistics or partition-statistics file of table metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatisticsFile {
    pub snapshot_id: i64,
    pub path: String,
    pub size: i64,
}

/// The statistics and partition statistics files `metadata` lists.
pub fn statistics_files(metadata: &TableMetadata) -> Result<Vec<StatisticsFile>> {
    let mut out = Vec::new();
    for (kind, entries) in
        [("statistics", metadata.statistics()), ("partition-statistics", metadata.partition_statistics())]
    {
        for e in entries {
            let path = e.get("statistics-path").and_then(Value::as_str);
            let snapshot_id = e.get("snapshot-id").and_then(Value::as_i64);
            let (Some(path), Some(snapshot_id)) = (path, snapshot_id) else {
                return Err(invalid_data(format!(
                    "expected a {kind} entry with 'snapshot-id' and 'statistics-path', found {e}"
                )));
            };
            let size = e.get("file-size-in-bytes").and_then(Value::as_i64).unwrap_or(0);
            out.push(StatisticsFile { snapshot_id, path: path.to_string(), size });
        }
    }
    Ok(out)
}

/// Everything the snapshots of some metadata versions reach, as sets of locations (what
/// must never be deleted while those versions are kept).
#[derive(Debug, Default)]
pub struct ReachableSet {
    pub manifest_lists: HashSet<String>,
    pub manifests: HashMap<String, ManifestRef>,
    pub statistics: HashSet<String>,
}

impl ReachableSet {
    /// The manifest lists, manifests and statistics files of every snapshot of every version
    /// in `versions` (snapshots shared by versions are read once). Content files are read
    /// separately (`live_files`, `live_among`): callers often need only some of them.
    pub fn of(versions: &[&TableMetadata], threads: usize) -> Result<ReachableSet> {
        let mut seen = HashSet::new();
        let mut snapshots = Vec::new();
        let mut statistics = HashSet::new();
        for md in versions {
            for s in md.snapshots() {
                if seen.insert(s.snapshot_id) {
                    snapshots.push(s);
                }
            }
            statistics.extend(statistics_files(md)?.into_iter().map(|f| f.path));
        }
        let set = ManifestSet::read(&snapshots, threads)?;
        Ok(ReachableSet {
            manifest_lists: set.manifest_lists.into_keys().collect(),
            manifests: set.manifests,
            statistics,
        })
    }

    /// Whether `path` is one of this set's metadata-level files.
    pub fn contains_metadata_file(&self, path: &str) -> bool {
        self.manifest_lists.contains(path)
            || self.manifests.contains_key(path)
            || self.statistics.contains(path)
    }
}
