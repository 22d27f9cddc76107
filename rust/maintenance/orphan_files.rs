//! Orphan files: files under the table's location (or a given one) that no snapshot,
//! manifest or metadata file of the table references, with the rules of Iceberg Java's
//! `DeleteOrphanFilesSparkAction`:
//!
//! - referenced: every snapshot's manifest list, the manifests it lists and their live data
//!   and delete files; the current metadata file and those in `metadata-log`;
//!   `metadata/version-hint.text`; statistics and partition statistics files;
//! - listed: every file under the location, except hidden names (starting with `.` or `_`,
//!   files and folders alike) unless a partition field of the table is named so
//!   (`_key=...` folders); only files last modified before `older_than`;
//! - compared by path alone, then by scheme and authority after mapping equal ones
//!   (`s3a` and `s3n` equal `s3` by default): a listed file whose path is referenced under
//!   another scheme or authority is a conflict, and `prefix_mismatch_mode` says whether
//!   that fails the whole run (`error`, the default: nothing is deleted), is skipped
//!   (`ignore`) or is deleted (`delete`). A reference without a scheme or authority
//!   matches any.
//!
//! One difference, on the safe side: Java compares each listed file with every reference
//! of the same path and, in `delete` mode, deletes it when any one of them mismatches, even
//! if another matches exactly; here an exact match always keeps the file.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{mpsc, Mutex};

use super::deletion::{delete_one, DeleteFailure};
use super::expire_snapshots::check_gc_enabled;
use super::reachability::{for_each_live_file, threads_for, ReachableSet};
use crate::error::{validation, Result};
use crate::io;
use crate::spec::TableMetadata;

/// What to do with a listed file whose path is referenced under another scheme or authority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PrefixMismatchMode {
    #[default]
    Error,
    Ignore,
    Delete,
}

impl PrefixMismatchMode {
    pub fn parse(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "error" => Ok(Self::Error),
            "ignore" => Ok(Self::Ignore),
            "delete" => Ok(Self::Delete),
            _ => Err(validation(format!(
                "expected prefix_mismatch_mode 'error', 'ignore' or 'delete', found '{s}'"
            ))),
        }
    }
}

/// Options of an orphan search.
#[derive(Debug, Clone, Default)]
pub struct OrphanOptions {
    /// The folder to list (default: the table location).
    pub location: Option<String>,
    /// Only files last modified strictly before this (epoch ms) can be orphans.
    pub older_than_ms: i64,
    pub prefix_mismatch_mode: PrefixMismatchMode,
    /// Schemes to treat as one (`{"s3a,s3n": "s3"}`: keys may list several, comma-separated),
    /// on top of the default `s3a`/`s3n` -> `s3`.
    pub equal_schemes: HashMap<String, String>,
    /// Authorities to treat as one, likewise.
    pub equal_authorities: HashMap<String, String>,
    /// The files to compare, `(location, last modified epoch ms)`, instead of listing the
    /// folder (Java's `compareToFileList`): only those starting with the location (the
    /// table's when none is given, as a plain string prefix) and older than `older_than_ms`
    /// count; hidden names are not left out, sizes are unknown (0).
    pub file_list: Option<Vec<(String, i64)>>,
}

/// A file found to be an orphan.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct OrphanFile {
    /// As listed: local files as `file:/abs/path` (Java's spelling), others as
    /// `<scheme>://<authority>/<key>`.
    pub location: String,
    pub size: u64,
    /// The listing saw a hidden `.<name>.crc` (Hadoop's checksum, which Iceberg Java's local
    /// writes leave) named like this file: delete it with the file. Most files have none, and
    /// probing for it costs a path lookup per file (about a tenth of deleting 50,000 orphans).
    pub checksum: bool,
}

/// Splits `a,b` keys and trims, as Java's `flattenMap`.
fn flatten(map: &HashMap<String, String>, into: &mut HashMap<String, String>) {
    for (k, v) in map {
        for key in k.split(',') {
            into.insert(key.trim().to_string(), v.trim().to_string());
        }
    }
}

/// A location split as Hadoop's `Path` splits it: scheme (before a `:` that comes before
/// any `/`), authority (after `//`), and the path with repeated and trailing `/` removed.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileUri {
    scheme: Option<String>,
    authority: Option<String>,
    path: String,
}

impl FileUri {
    fn parse(s: &str, schemes: &HashMap<String, String>, authorities: &HashMap<String, String>) -> FileUri {
        let mut rest = s;
        let mut scheme = None;
        if let Some(colon) = s.find(':') {
            if s.find('/').is_none_or(|slash| colon < slash) {
                scheme = Some(&s[..colon]);
                rest = &s[colon + 1..];
            }
        }
        let mut authority = None;
        if let Some(after) = rest.strip_prefix("//").filter(|a| !a.is_empty()) {
            let end = after.find('/').unwrap_or(after.len());
            authority = Some(&after[..end]);
            rest = &after[end..];
        }
        let mut path = String::with_capacity(rest.len());
        for c in rest.chars() {
            if !(c == '/' && path.ends_with('/')) {
                path.push(c);
            }
        }
        let mut path = remove_dot_segments(path);
        if path.len() > 1 && path.ends_with('/') {
            path.pop();
        }
        // An empty component is no component (Java's `Strings.isNullOrEmpty`).
        let map = |v: Option<&str>, m: &HashMap<String, String>| {
            v.map(|x| m.get(x).cloned().unwrap_or_else(|| x.to_string())).filter(|x| !x.is_empty())
        };
        FileUri { scheme: map(scheme, schemes), authority: map(authority, authorities), path }
    }
}

/// `.` and `..` segments resolved as `java.net.URI.normalize` resolves them (Hadoop's `Path`,
/// through which Java compares locations, normalizes so): `a/./b` and `a/x/../b` are `a/b`; a
/// `..` with no segment before it to cancel stays. Without this a live file referenced as
/// `data/x/../f.parquet` was listed as `data/f.parquet`, taken for an orphan and deleted.
fn remove_dot_segments(path: String) -> String {
    if !path.split('/').any(|s| s == "." || s == "..") {
        return path;
    }
    let mut kept: Vec<&str> = Vec::new();
    for seg in path.split('/').filter(|s| !s.is_empty()) {
        match seg {
            "." => {}
            ".." if kept.last().is_some_and(|l| *l != "..") => {
                kept.pop();
            }
            _ => kept.push(seg),
        }
    }
    let mut out = String::with_capacity(path.len());
    if path.starts_with('/') {
        out.push('/');
    }
    out.push_str(&kept.join("/"));
    out
}

/// Java's `FileURI.uriComponentMatch`: a reference without the component matches any.
fn component_matches(valid: &Option<String>, actual: &Option<String>) -> bool {
    match (valid, actual) {
        (None, _) => true,
        (Some(v), Some(a)) => v.eq_ignore_ascii_case(a),
        (Some(_), None) => false,
    }
}

/// Java's hidden-path rule: a name starting with `.` or `_` is hidden unless it starts
/// with `<partition field name>=` for a partition field named so.
fn hidden_filter(md: &TableMetadata) -> impl Fn(&str) -> bool + Sync {
    let partition_prefixes: Vec<String> = md
        .partition_specs()
        .iter()
        .flat_map(|s| s.fields.iter())
        .filter(|f| f.name.starts_with('_') || f.name.starts_with('.'))
        .map(|f| format!("{}=", f.name))
        .collect();
    move |name: &str| {
        partition_prefixes.iter().any(|p| name.starts_with(p.as_str()))
            || !(name.starts_with('.') || name.starts_with('_'))
    }
}

/// Every location the table references (Java's valid files of an orphan search).
pub fn referenced_locations(md: &TableMetadata, threads: usize) -> Result<HashSet<String>> {
    let reachable = ReachableSet::of(&[md], threads)?;
    let mut out = HashSet::new();
    for_each_live_file(reachable.manifests.values(), threads, |path, _| {
        out.insert(path);
    })?;
    out.extend(reachable.manifest_lists);
    out.extend(reachable.manifests.into_keys());
    out.extend(reachable.statistics);
    out.extend(md.metadata_location().map(str::to_string));
    out.extend(md.metadata_log().iter().map(|e| e.metadata_file.clone()));
    out.insert(format!("{}/metadata/version-hint.text", md.location().trim_end_matches('/')));
    Ok(out)
}

/// The location to list, spelled as Java lists it: local folders as `file:/abs/path`.
fn listing_root(location: &str) -> Result<String> {
    let loc = io::Location::parse(location)?;
    if loc.scheme.is_local() {
        let key = loc.key.trim_end_matches('/');
        return Ok(format!("file:{}", if key.is_empty() { "/" } else { key }));
    }
    Ok(location.trim_end_matches('/').to_string())
}

/// Takes a folder's listed files and the hidden checksum names seen so far.
type FolderSink<'a> = dyn Fn(Vec<io::FileMeta>, &Mutex<HashSet<String>>) + Sync + 'a;

/// What an orphan search compares listed files with: the table's references by path, the
/// scheme and authority maps, and the folder to list.
struct Search {
    location: String,
    root: String,
    schemes: HashMap<String, String>,
    authorities: HashMap<String, String>,
    by_path: HashMap<String, Vec<FileUri>>,
    hidden: Box<dyn Fn(&str) -> bool + Sync>,
}

impl Search {
    fn new(md: &TableMetadata, opts: &OrphanOptions) -> Result<Search> {
        check_gc_enabled(md, "remove orphan files")?;
        let location = opts.location.clone().unwrap_or_else(|| md.location().to_string());
        let root = listing_root(&location)?;
        let mut schemes =
            HashMap::from([("s3a".to_string(), "s3".to_string()), ("s3n".to_string(), "s3".to_string())]);
        flatten(&opts.equal_schemes, &mut schemes);
        let mut authorities = HashMap::new();
        flatten(&opts.equal_authorities, &mut authorities);
        let referenced = referenced_locations(md, threads_for(md.location()))?;
        // Keyed by normalized path; each kept URI holds only its scheme and authority (its
        // path is the key), and each reference is dropped once parsed.
        let mut by_path: HashMap<String, Vec<FileUri>> = HashMap::with_capacity(referenced.len());
        for r in referenced {
            let mut uri = FileUri::parse(&r, &schemes, &authorities);
            drop(r);
            let path = std::mem::take(&mut uri.path);
            by_path.entry(path).or_default().push(uri);
        }
        let hidden = Box::new(hidden_filter(md));
        Ok(Search { location, root, schemes, authorities, by_path, hidden })
    }

    fn exact(actual: &FileUri, valid: &[FileUri]) -> bool {
        valid.iter().any(|v| {
            component_matches(&v.scheme, &actual.scheme) && component_matches(&v.authority, &actual.authority)
        })
    }

    /// A listed file referenced under a matching scheme and authority: kept whatever its
    /// age, so the listing leaves it out before paying for its metadata.
    fn referenced_exactly(&self, listed: &str) -> bool {
        let actual = FileUri::parse(listed, &self.schemes, &self.authorities);
        self.by_path.get(&actual.path).is_some_and(|valid| Search::exact(&actual, valid))
    }

    /// No listed file can be a conflict: every reference matches the listed folder's scheme
    /// and authority (listed files all carry the folder's).
    fn conflict_free(&self) -> bool {
        let root = FileUri::parse(&self.root, &self.schemes, &self.authorities);
        self.by_path.values().flatten().all(|v| {
            component_matches(&v.scheme, &root.scheme) && component_matches(&v.authority, &root.authority)
        })
    }

    /// Lists the folder, handing each folder's files (those not referenced exactly) to
    /// `each` with the names of the hidden checksums seen so far (every one of that folder's
    /// included). Hidden names are never listed, but the checksums among them are noted (by
    /// file name: at worst a file is probed for a checksum another folder holds).
    fn walk(&self, threads: usize, each: &FolderSink<'_>) -> Result<HashSet<String>> {
        let checksums: Mutex<HashSet<String>> = Mutex::new(HashSet::new());
        let keep = |name: &str| {
            let kept = (self.hidden)(name);
            if !kept {
                if let Some(of) = name.strip_prefix('.').and_then(|n| n.strip_suffix(".crc")) {
                    checksums.lock().unwrap_or_else(|e| e.into_inner()).insert(of.to_string());
                }
            }
            kept
        };
        let skip = |listed: &str| self.referenced_exactly(listed);
        io::walk_skipping_each(&self.root, &keep, &skip, threads, &|files| each(files, &checksums))?;
        Ok(checksums.into_inner().unwrap_or_else(|e| e.into_inner()))
    }
}

fn orphan(f: io::FileMeta, checksums: &HashSet<String>) -> OrphanFile {
    let name = f.location.rsplit('/').next().unwrap_or("");
    let checksum = checksums.contains(name);
    OrphanFile { location: f.location, size: f.size, checksum }
}

/// The orphan files of `md` (sorted), or a ValidationError naming the conflicting schemes
/// and authorities when `prefix_mismatch_mode` is `error` and some were found.
pub fn find_orphan_files(md: &TableMetadata, opts: &OrphanOptions) -> Result<Vec<OrphanFile>> {
    let search = Search::new(md, opts)?;
    let (listed, checksums) = match &opts.file_list {
        Some(files) => (given_files(files, &search.location), HashSet::new()),
        None => {
            let listed: Mutex<Vec<io::FileMeta>> = Mutex::new(Vec::new());
            let checksums = search.walk(threads_for(&search.location), &|files, _| {
                listed.lock().unwrap_or_else(|e| e.into_inner()).extend(files)
            })?;
            (listed.into_inner().unwrap_or_else(|e| e.into_inner()), checksums)
        }
    };
    let mut orphans = Vec::new();
    let mut conflicts = BTreeSet::new();
    for f in listed.into_iter().filter(|f| f.last_modified_ms < opts.older_than_ms) {
        let actual = FileUri::parse(&f.location, &search.schemes, &search.authorities);
        let Some(valid) = search.by_path.get(&actual.path) else {
            orphans.push(orphan(f, &checksums));
            continue;
        };
        if Search::exact(&actual, valid) {
            continue;
        }
        match opts.prefix_mismatch_mode {
            PrefixMismatchMode::Delete => orphans.push(orphan(f, &checksums)),
            PrefixMismatchMode::Ignore => {}
            PrefixMismatchMode::Error => {
                for v in valid {
                    if !component_matches(&v.scheme, &actual.scheme) {
                        conflicts.insert((v.scheme.clone(), actual.scheme.clone()));
                    }
                    if !component_matches(&v.authority, &actual.authority) {
                        conflicts.insert((v.authority.clone(), actual.authority.clone()));
                    }
                }
            }
        }
    }
    if !conflicts.is_empty() {
        let shown: Vec<String> = conflicts
            .iter()
            .take(20)
            .map(|(v, a)| format!("({}, {})", v.as_deref().unwrap_or("null"), a.as_deref().unwrap_or("null")))
            .collect();
        return Err(validation(format!(
            "cannot tell whether some files are orphans: the table references files at the same \
             paths as listed files but under another scheme or authority (referenced, listed): {}. \
             Name the equal ones with equal_schemes / equal_authorities, or set \
             prefix_mismatch_mode to 'ignore' to keep such files or to 'delete' only if you are \
             sure they differ (deleted files cannot be recovered); nothing was deleted",
            shown.join(", ")
        ))
        .with_context("location", search.location));
    }
    orphans.sort();
    Ok(orphans)
}

/// The files of a given list under `location` (a plain string prefix, as Java's
/// `filteredCompareToFileList`), with unknown sizes.
fn given_files(files: &[(String, i64)], location: &str) -> Vec<io::FileMeta> {
    files
        .iter()
        .filter(|(path, _)| path.starts_with(location))
        .map(|(path, modified)| io::FileMeta { location: path.clone(), size: 0, last_modified_ms: *modified })
        .collect()
}

/// What [`remove_orphan_files_overlapped`] did.
#[derive(Debug)]
pub struct OrphanRemoval {
    /// Sorted.
    pub orphans: Vec<OrphanFile>,
    pub failures: Vec<DeleteFailure>,
}

/// Finds and deletes the orphans of a local table at once: each folder's orphans go to
/// `delete_threads` deleting threads as soon as the folder is listed, so the deletes overlap
/// the rest of the listing (the listing and the unlinks each keep about one core busy).
/// Only where no listed file can be a scheme/authority conflict (every reference matches the
/// listed folder's scheme and authority), since in `error` mode one conflict anywhere means
/// nothing may be deleted; `None` otherwise, and for object stores: then find first
/// ([`find_orphan_files`]) and delete after. If the listing fails part way, the orphans of
/// the folders listed before were deleted (they are orphans by the same rules) and the
/// error says how many.
pub fn remove_orphan_files_overlapped(
    md: &TableMetadata,
    opts: &OrphanOptions,
    delete_threads: usize,
) -> Result<Option<OrphanRemoval>> {
    if opts.file_list.is_some() {
        return Ok(None);
    }
    let search = Search::new(md, opts)?;
    if !io::Location::parse(&search.location)?.scheme.is_local() || !search.conflict_free() {
        return Ok(None);
    }
    let (tx, rx) = mpsc::channel::<Vec<OrphanFile>>();
    let rx = Mutex::new(rx);
    let found: Mutex<Vec<OrphanFile>> = Mutex::new(Vec::new());
    let failures: Mutex<Vec<DeleteFailure>> = Mutex::new(Vec::new());
    let walked = std::thread::scope(|scope| {
        for _ in 0..delete_threads.max(1) {
            scope.spawn(|| loop {
                let next = rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                let Ok(batch) = next else { break };
                let failed: Vec<DeleteFailure> = batch
                    .iter()
                    .filter_map(|o| {
                        let error = delete_one(&o.location, o.checksum).err()?;
                        Some(DeleteFailure { path: o.location.clone(), error })
                    })
                    .collect();
                if !failed.is_empty() {
                    failures.lock().unwrap_or_else(|e| e.into_inner()).extend(failed);
                }
                found.lock().unwrap_or_else(|e| e.into_inner()).extend(batch);
            });
        }
        let result = search.walk(threads_for(&search.location), &|files, checksums| {
            let mut orphans: Vec<OrphanFile> = {
                let checksums = checksums.lock().unwrap_or_else(|e| e.into_inner());
                files
                    .into_iter()
                    .filter(|f| f.last_modified_ms < opts.older_than_ms)
                    .map(|f| orphan(f, &checksums))
                    .collect()
            };
            // Batches of a few files, so every deleting thread gets work from one folder.
            while !orphans.is_empty() {
                let rest = orphans.split_off(ORPHANS_PER_BATCH.min(orphans.len()));
                let _ = tx.send(std::mem::replace(&mut orphans, rest));
            }
        });
        drop(tx); // the deleting threads finish the queue and stop
        result
    });
    let mut orphans = found.into_inner().unwrap_or_else(|e| e.into_inner());
    orphans.sort();
    if let Err(e) = walked {
        return Err(e.with_context("orphans_deleted_before_the_error", orphans.len().to_string()));
    }
    let mut failures = failures.into_inner().unwrap_or_else(|e| e.into_inner());
    failures.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Some(OrphanRemoval { orphans, failures }))
}

/// Orphans handed to a deleting thread at a time.
const ORPHANS_PER_BATCH: usize = 64;

#[cfg(test)]
#[path = "orphan_files_tests.rs"]
mod tests;
