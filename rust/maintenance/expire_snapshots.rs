//! Snapshot expiry, with Iceberg Java's `RemoveSnapshots` semantics for which snapshots and
//! refs go, and the rule of its Spark action for which files go: those reachable from an
//! expired snapshot and from no retained one.
//!
//! Which snapshots are kept:
//! - refs: `main` always; another ref while its snapshot exists and is no older than its
//!   `max-ref-age-ms` (else the table's `history.expire.max-ref-age-ms`, default forever);
//! - on each kept branch, walking back from its head: ancestors while fewer than its
//!   `min-snapshots-to-keep` are kept (else `retain_last`, else
//!   `history.expire.min-snapshots-to-keep`, default 1) or while no older than its
//!   `max-snapshot-age-ms` (else `older_than`, else now minus
//!   `history.expire.max-snapshot-age-ms`, default 5 days); the walk stops at the first
//!   snapshot failing both;
//! - snapshots no kept ref reaches, while no older than that default cut-off;
//! - every other snapshot expires, and so does each id of `snapshot_ids` (an error when a
//!   kept ref points at it).

use std::collections::{BTreeMap, HashMap, HashSet};

use super::reachability::{
    live_among, live_files, statistics_files, ContentFile, ManifestRef, ManifestSet, ReachableSet,
};
use crate::error::{validation, Result};
use crate::manifest::DataContentType;
use crate::spec::{Snapshot, SnapshotRef, SnapshotRetention, TableMetadata};

pub const GC_ENABLED: &str = "gc.enabled";
pub const MAX_SNAPSHOT_AGE_MS: &str = "history.expire.max-snapshot-age-ms";
pub const MAX_SNAPSHOT_AGE_MS_DEFAULT: i64 = 5 * 24 * 60 * 60 * 1000;
pub const MIN_SNAPSHOTS_TO_KEEP: &str = "history.expire.min-snapshots-to-keep";
pub const MIN_SNAPSHOTS_TO_KEEP_DEFAULT: i64 = 1;
pub const MAX_REF_AGE_MS: &str = "history.expire.max-ref-age-ms";

/// What to expire (Java's `expireOlderThan`, `retainLast`, `expireSnapshotId`).
#[derive(Debug, Clone, Default)]
pub struct ExpireOptions {
    /// The clock the ages are measured against.
    pub now_ms: i64,
    /// Expire snapshots older than this (default: now minus the table's max snapshot age).
    pub older_than_ms: Option<i64>,
    /// Keep at least this many ancestors per branch (>= 1; default: the table property).
    pub retain_last: Option<i32>,
    /// Expire these snapshots too.
    pub snapshot_ids: Vec<i64>,
}

/// The snapshots and refs an expiry removes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExpireSelection {
    /// In the table's snapshot order.
    pub expired_snapshot_ids: Vec<i64>,
    pub removed_refs: Vec<String>,
}

impl ExpireSelection {
    pub fn is_empty(&self) -> bool {
        self.expired_snapshot_ids.is_empty() && self.removed_refs.is_empty()
    }
}

fn property_i64(md: &TableMetadata, key: &str, default: i64) -> Result<i64> {
    match md.property(key) {
        None => Ok(default),
        Some(v) => v
            .trim()
            .parse::<i64>()
            .map_err(|_| validation(format!("table property {key} must be an integer, found '{v}'"))),
    }
}

/// Java's `gc.enabled` (default true; any value but `true` in any case turns it off, as
/// `Boolean.parseBoolean` reads it: `" true"` too). Expiry and orphan removal delete files
/// only with it on.
pub fn check_gc_enabled(md: &TableMetadata, what: &str) -> Result<()> {
    match md.property(GC_ENABLED) {
        Some(v) if !v.eq_ignore_ascii_case("true") => Err(validation(format!(
            "cannot {what}: GC is disabled (table property {GC_ENABLED}={v}; deleting files may \
             corrupt other tables that share them)"
        ))),
        _ => Ok(()),
    }
}

/// The ancestors of `id` (itself first), as far as the table knows them.
fn ancestors<'a>(md: &'a TableMetadata, id: i64) -> impl Iterator<Item = &'a Snapshot> + 'a {
    let mut next = md.snapshot_by_id(id);
    let mut seen = HashSet::new();
    std::iter::from_fn(move || {
        let s = next.take()?;
        // A parent cycle in a corrupt table must not loop forever.
        if !seen.insert(s.snapshot_id) {
            return None;
        }
        next = s.parent_snapshot_id.and_then(|p| md.snapshot_by_id(p));
        Some(s)
    })
}

/// Which snapshots and refs `opts` expires from `md` (Java's `RemoveSnapshots.internalApply`).
pub fn select_expired(md: &TableMetadata, opts: &ExpireOptions) -> Result<ExpireSelection> {
    check_gc_enabled(md, "expire snapshots")?;
    if let Some(n) = opts.retain_last.filter(|n| *n < 1) {
        return Err(validation(format!("retain_last must be at least 1, found {n}")));
    }
    let now = opts.now_ms;
    let max_snapshot_age = property_i64(md, MAX_SNAPSHOT_AGE_MS, MAX_SNAPSHOT_AGE_MS_DEFAULT)?;
    let default_older_than = opts.older_than_ms.unwrap_or(now.saturating_sub(max_snapshot_age));
    let default_min_keep = match opts.retain_last {
        Some(n) => i64::from(n),
        None => property_i64(md, MIN_SNAPSHOTS_TO_KEEP, MIN_SNAPSHOTS_TO_KEEP_DEFAULT)?,
    };
    let default_max_ref_age = property_i64(md, MAX_REF_AGE_MS, i64::MAX)?;
    if md.snapshots().is_empty() {
        return Ok(ExpireSelection::default());
    }

    // Refs kept: main always, others while their snapshot exists and is young enough.
    let mut kept_refs: BTreeMap<&str, &SnapshotRef> = BTreeMap::new();
    for (name, r) in md.refs() {
        if name == SnapshotRef::MAIN_BRANCH {
            kept_refs.insert(name, r);
            continue;
        }
        let Some(snapshot) = md.snapshot_by_id(r.snapshot_id) else { continue };
        let max_age = match r.retention {
            SnapshotRetention::Branch { max_ref_age_ms, .. } | SnapshotRetention::Tag { max_ref_age_ms } => {
                max_ref_age_ms.unwrap_or(default_max_ref_age)
            }
        };
        if now.saturating_sub(snapshot.timestamp_ms) <= max_age {
            kept_refs.insert(name, r);
        }
    }
    let mut refs_by_snapshot: HashMap<i64, Vec<&str>> = HashMap::new();
    for (name, r) in &kept_refs {
        refs_by_snapshot.entry(r.snapshot_id).or_default().push(name);
    }
    for id in &opts.snapshot_ids {
        if let Some(names) = refs_by_snapshot.get(id) {
            return Err(validation(format!(
                "cannot expire snapshot {id}: still referenced by refs {names:?}"
            )));
        }
    }

    let mut retain: HashSet<i64> = refs_by_snapshot.keys().copied().collect();
    // Each kept branch keeps its recent ancestors.
    for r in kept_refs.values() {
        let SnapshotRetention::Branch { min_snapshots_to_keep, max_snapshot_age_ms, .. } = r.retention else {
            continue;
        };
        let older_than = max_snapshot_age_ms.map_or(default_older_than, |age| now.saturating_sub(age));
        let min_keep = min_snapshots_to_keep.map_or(default_min_keep, i64::from);
        let mut kept = 0i64;
        for s in ancestors(md, r.snapshot_id) {
            if kept < min_keep || s.timestamp_ms >= older_than {
                retain.insert(s.snapshot_id);
                kept += 1;
            } else {
                break;
            }
        }
    }
    // Snapshots no kept ref reaches stay while they are young.
    let mut referenced = HashSet::new();
    for r in kept_refs.values() {
        if r.is_branch() {
            referenced.extend(ancestors(md, r.snapshot_id).map(|s| s.snapshot_id));
        } else {
            referenced.insert(r.snapshot_id);
        }
    }
    for s in md.snapshots() {
        if !referenced.contains(&s.snapshot_id) && s.timestamp_ms >= default_older_than {
            retain.insert(s.snapshot_id);
        }
    }

    let explicit: HashSet<i64> = opts.snapshot_ids.iter().copied().collect();
    let expired_snapshot_ids = md
        .snapshots()
        .iter()
        .map(|s| s.snapshot_id)
        .filter(|id| explicit.contains(id) || !retain.contains(id))
        .collect();
    let removed_refs =
        md.refs().keys().filter(|name| !kept_refs.contains_key(name.as_str())).cloned().collect();
    Ok(ExpireSelection { expired_snapshot_ids, removed_refs })
}

/// The next metadata version after expiry, or None when nothing expires (no commit).
pub fn expire(md: &TableMetadata, opts: &ExpireOptions) -> Result<Option<(TableMetadata, ExpireSelection)>> {
    let selection = select_expired(md, opts)?;
    if selection.is_empty() {
        return Ok(None);
    }
    let next =
        md.remove_refs_and_snapshots(&selection.removed_refs, &selection.expired_snapshot_ids, opts.now_ms)?;
    Ok(Some((next, selection)))
}

/// Java's `cleanExpiredMetadata`, on the version an expiry produced: the partition specs that
/// no retained snapshot's manifests use and the schemas that no retained snapshot names go,
/// never the default spec or the current schema. `None` when nothing is unreferenced. A
/// retained v1 snapshot that lists its manifests inline (no manifest list) keeps every spec:
/// their spec ids are in the manifests' own headers, not read here.
/// `now_ms`: make the result a new version at that time (when the expiry itself expired
/// nothing), else change `md` in place.
pub fn clean_expired_metadata(
    md: &TableMetadata,
    now_ms: Option<i64>,
    threads: usize,
) -> Result<Option<TableMetadata>> {
    let snapshots: Vec<&Snapshot> = md.snapshots().iter().collect();
    let manifests = ManifestSet::read(&snapshots, threads)?;
    let mut specs: HashSet<i32> = HashSet::from([md.default_spec_id()]);
    let mut inline = false;
    for m in manifests.manifests.values() {
        match m {
            ManifestRef::Listed(f) => {
                specs.insert(f.partition_spec_id);
            }
            ManifestRef::Inline(_) => inline = true,
        }
    }
    let mut schemas: HashSet<i32> = HashSet::from([md.current_schema_id()]);
    schemas.extend(md.snapshots().iter().filter_map(|s| s.schema_id));
    let spec_ids: Vec<i32> = if inline {
        Vec::new()
    } else {
        md.partition_specs().iter().map(|s| s.spec_id).filter(|id| !specs.contains(id)).collect()
    };
    let schema_ids: Vec<i32> =
        md.schemas().iter().map(|s| s.schema_id()).filter(|id| !schemas.contains(id)).collect();
    if spec_ids.is_empty() && schema_ids.is_empty() {
        return Ok(None);
    }
    md.without_specs_and_schemas(&spec_ids, &schema_ids, now_ms).map(Some)
}

/// What kind of file an expiry deletes (the counts of Java's `ExpireSnapshots.Result`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ExpiredFileKind {
    Data,
    PositionDeletes,
    EqualityDeletes,
    Manifest,
    ManifestList,
    Statistics,
}

impl ExpiredFileKind {
    pub fn as_str(&self) -> &'static str {
        match self {
            ExpiredFileKind::Data => "data",
            ExpiredFileKind::PositionDeletes => "position_deletes",
            ExpiredFileKind::EqualityDeletes => "equality_deletes",
            ExpiredFileKind::Manifest => "manifest",
            ExpiredFileKind::ManifestList => "manifest_list",
            ExpiredFileKind::Statistics => "statistics",
        }
    }

    fn of_content(c: DataContentType) -> Self {
        match c {
            DataContentType::Data => ExpiredFileKind::Data,
            DataContentType::PositionDeletes => ExpiredFileKind::PositionDeletes,
            DataContentType::EqualityDeletes => ExpiredFileKind::EqualityDeletes,
        }
    }
}

/// A file an expiry deletes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ExpiredFile {
    pub kind: ExpiredFileKind,
    pub path: String,
    pub size: i64,
}

/// The files to delete after `expired_ids` were removed from `before`: those reachable
/// from an expired snapshot (manifest lists, manifests, live data and delete files,
/// statistics files) and from no snapshot of any version in `retained` (the committed
/// version, and any newer one seen since). Sorted by kind (content files first), then path.
pub fn expired_files(
    before: &TableMetadata,
    expired_ids: &[i64],
    retained: &[&TableMetadata],
    threads: usize,
) -> Result<Vec<ExpiredFile>> {
    let expired: HashSet<i64> = expired_ids.iter().copied().collect();
    let kept_ids: HashSet<i64> =
        retained.iter().flat_map(|m| m.snapshots().iter().map(|s| s.snapshot_id)).collect();
    // A snapshot still in a retained version is not expired, whatever the caller says.
    let expired_snapshots: Vec<&Snapshot> = before
        .snapshots()
        .iter()
        .filter(|s| expired.contains(&s.snapshot_id) && !kept_ids.contains(&s.snapshot_id))
        .collect();
    if expired_snapshots.is_empty() {
        return Ok(Vec::new());
    }
    let candidates = ManifestSet::read(&expired_snapshots, threads)?;
    let kept = ReachableSet::of(retained, threads)?;

    let mut out = Vec::new();
    for (path, size) in &candidates.manifest_lists {
        if !kept.contains_metadata_file(path) {
            out.push(ExpiredFile { kind: ExpiredFileKind::ManifestList, path: path.clone(), size: *size });
        }
    }
    let dropped_manifests: Vec<_> = candidates
        .manifests
        .iter()
        .filter(|(p, _)| !kept.contains_metadata_file(p))
        .map(|(_, m)| m)
        .collect();
    for m in &dropped_manifests {
        let size = m.length().unwrap_or(0);
        out.push(ExpiredFile { kind: ExpiredFileKind::Manifest, path: m.path().to_string(), size });
    }
    // Content files of dropped manifests, less those a retained manifest still holds.
    let mut content: HashMap<String, ContentFile> = live_files(dropped_manifests.iter().copied(), threads)?;
    content.retain(|p, _| !kept.contains_metadata_file(p));
    if !content.is_empty() {
        let live = live_among(kept.manifests.values(), &content, threads)?;
        content.retain(|p, _| !live.contains(p));
    }
    for (path, f) in content {
        out.push(ExpiredFile { kind: ExpiredFileKind::of_content(f.content), path, size: f.size });
    }
    let mut seen_stats = HashSet::new();
    for f in statistics_files(before)? {
        if expired.contains(&f.snapshot_id)
            && !kept.contains_metadata_file(&f.path)
            && seen_stats.insert(f.path.clone())
        {
            out.push(ExpiredFile { kind: ExpiredFileKind::Statistics, path: f.path, size: f.size });
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
#[path = "expire_snapshots_tests.rs"]
mod tests;
