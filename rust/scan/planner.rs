//! The scan planner (Iceberg Java's `TableScan.planFiles` / `ManifestGroup`): snapshot ->
//! manifest list -> manifests pruned by the filter -> manifests decoded in parallel ->
//! entries pruned per file -> delete file index -> one FileScanTask per live data file.
//!
//! Delete manifests are read first (in parallel) to build the [`DeleteFileIndex`]; then the
//! data manifests (in parallel), each worker attaching deletes and residuals to its tasks.
//! Tasks drop the column stats of their data file unless asked to keep them (as Java does).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use super::cache::ManifestCache;
use super::delete_file_index::DeleteFileIndex;
use super::filter::{AcceptAll, ScanFilterRef};
use super::metrics::ScanMetrics;
use super::planned_tasks::PlannedTasks;
use super::pool::{default_threads, parallel_consume, parallel_map};
use super::snapshot_select::{select, select_append_range, SnapshotSelection};
use super::task::{DeleteFileRef, FileScanTask};
use crate::error::{invalid_data, not_supported, Result};
use crate::manifest::{
    read_manifest_each, read_manifest_list, read_manifest_projected, DataContentType, DataFile, EntryStatus,
    Manifest, ManifestContent, ManifestEntry, ManifestFile, StatsProjection,
};
use crate::spec::{PartitionSpec, Snapshot, TableMetadata};

/// What to plan.
#[derive(Clone)]
pub struct ScanOptions {
    pub selection: SnapshotSelection,
    pub filter: ScanFilterRef,
    /// Keep column stats (sizes, counts, bounds) on the planned data files.
    pub include_column_stats: bool,
    /// Worker threads for reading manifests (default: available cores).
    pub threads: usize,
    /// Attach only the delete files whose stats may match the filter (a read: rows outside
    /// the filter are dropped anyway, as Java's delete index does). A copy-on-write rewrite
    /// turns this off: it keeps the rows the filter does not match, and every delete that
    /// applies to them must still apply.
    pub prune_deletes_by_filter: bool,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            selection: SnapshotSelection::Current,
            filter: Arc::new(AcceptAll),
            include_column_stats: false,
            threads: default_threads(),
            prune_deletes_by_filter: true,
        }
    }
}

/// The result of planning: the tasks (one per live matching data file, whole file, held
/// compactly: [`PlannedTasks`]) and metrics.
#[derive(Debug, Clone, Default)]
pub struct ScanPlan {
    /// The snapshot read (the `to` snapshot of an incremental scan); `None` for an empty table.
    pub snapshot_id: Option<i64>,
    pub tasks: PlannedTasks,
    pub metrics: ScanMetrics,
}

/// Plans a scan of `metadata`. `cache`, when given, supplies and keeps decoded manifests.
pub fn plan_scan(
    metadata: &TableMetadata,
    options: &ScanOptions,
    cache: Option<&ManifestCache>,
) -> Result<ScanPlan> {
    let started = Instant::now();
    let mut plan = match &options.selection {
        SnapshotSelection::Incremental { from_snapshot_id, to_snapshot_id } => {
            let range = select_append_range(metadata, *from_snapshot_id, *to_snapshot_id)?;
            plan_appends(metadata, &range, options, cache)?
        }
        selection => match select(metadata, selection)? {
            None => ScanPlan::default(),
            Some(snapshot) => {
                let mut plan = plan_snapshot(metadata, snapshot, options, cache)?;
                // Tasks of one snapshot share equality-delete key maps (see
                // arrow/equality_deletes.rs); the manifest list names the snapshot uniquely.
                let scope =
                    snapshot.manifest_list.clone().unwrap_or_else(|| snapshot.snapshot_id.to_string());
                for t in plan.tasks.with_deletes_mut() {
                    t.delete_scope = Some(scope.clone());
                }
                plan
            }
        },
    };
    plan.metrics.planning_time_ns = started.elapsed().as_nanos() as u64;
    Ok(plan)
}

fn manifest_list_of(snapshot: &Snapshot) -> Result<Vec<ManifestFile>> {
    let list = snapshot.manifest_list.as_deref().ok_or_else(|| {
        not_supported(format!(
            "snapshot {} lists its manifests inline (legacy v1 'manifests'); not supported",
            snapshot.snapshot_id
        ))
    })?;
    read_manifest_list(list)
}

struct Context<'a> {
    specs: HashMap<i32, PartitionSpec>,
    options: &'a ScanOptions,
    cache: Option<&'a ManifestCache>,
}

impl Context<'_> {
    fn spec(&self, manifest: &ManifestFile) -> Result<&PartitionSpec> {
        self.specs.get(&manifest.partition_spec_id).ok_or_else(|| {
            invalid_data(format!(
                "manifest names partition spec {} which the table does not have",
                manifest.partition_spec_id
            ))
            .with_context("file", manifest.manifest_path.clone())
        })
    }

    /// The manifests the filter may match, counting the rest as skipped.
    fn prune<'m>(&self, manifests: &[&'m ManifestFile], skipped: &mut u64) -> Result<Vec<&'m ManifestFile>> {
        let mut kept = Vec::with_capacity(manifests.len());
        for m in manifests {
            if self.options.filter.manifest_may_match(m, self.spec(m)?)? {
                kept.push(*m);
            } else {
                *skipped += 1;
            }
        }
        Ok(kept)
    }

    /// The decoded manifest holding at least the column stats `stats` keeps (from the cache
    /// when it has such a decode) and whether it came from the cache.
    fn load(&self, manifest: &ManifestFile, stats: &StatsProjection) -> Result<(Arc<Manifest>, bool)> {
        let Some(cache) = self.cache else {
            return Ok((Arc::new(read_manifest_projected(manifest, stats)?), false));
        };
        // A decode carries what it inherited from its list entry. The sequence numbers are
        // fixed once a manifest is committed, but not its first_row_id: a manifest written
        // before v3 is listed without one, then with one after an upgrade.
        let key = match manifest.first_row_id {
            None => std::borrow::Cow::Borrowed(manifest.manifest_path.as_str()),
            Some(id) => std::borrow::Cow::Owned(format!("{}\u{0}first_row_id={id}", manifest.manifest_path)),
        };
        let stats = match cache.get(&key, manifest.manifest_length, stats) {
            Ok(m) => return Ok((m, true)),
            // A cached decode with fewer stats: decode what both need, so it can replace it.
            Err(Some(cached)) => cached.union(stats),
            Err(None) => stats.clone(),
        };
        let m = Arc::new(read_manifest_projected(manifest, &stats)?);
        cache.insert(&key, manifest.manifest_length, m.clone(), stats);
        Ok((m, false))
    }

    /// The column stats data manifests are decoded with: all when the tasks keep them or the
    /// filter cannot say which it reads; else the filter's columns plus the equality delete
    /// columns (the delete index compares data file bounds on those).
    fn data_stats(&self, eq_delete_ids: impl IntoIterator<Item = i32>) -> StatsProjection {
        if self.options.include_column_stats {
            return StatsProjection::All;
        }
        // The identity partition source columns too: whether a file holds them decides
        // whether a plain Parquet reader may read it (`FileScanTask::plain_parquet_blocker`).
        let identity = self.specs.values().flat_map(FileScanTask::identity_fields_of).map(|(id, _)| id);
        match self.options.filter.stats_field_ids() {
            None => StatsProjection::All,
            Some(ids) => StatsProjection::only(ids.into_iter().chain(eq_delete_ids).chain(identity)),
        }
    }
}

fn context<'a>(
    metadata: &TableMetadata,
    options: &'a ScanOptions,
    cache: Option<&'a ManifestCache>,
) -> Context<'a> {
    let specs = metadata.partition_specs().iter().map(|s| (s.spec_id(), s.clone())).collect();
    Context { specs, options, cache }
}

/// One manifest's contribution.
#[derive(Default)]
struct Part {
    /// Made compact here, in the worker that read the manifest.
    tasks: PlannedTasks,
    deletes: Vec<(DataFile, i64)>,
    /// The delete files attached to `tasks`, counted as they were.
    result_delete_files: u64,
    skipped: u64,
    from_cache: bool,
}

fn plan_snapshot(
    metadata: &TableMetadata,
    snapshot: &Snapshot,
    options: &ScanOptions,
    cache: Option<&ManifestCache>,
) -> Result<ScanPlan> {
    let mut metrics = ScanMetrics::default();
    let mut plan = ScanPlan { snapshot_id: Some(snapshot.snapshot_id), ..ScanPlan::default() };
    let manifests = manifest_list_of(snapshot)?;
    metrics.total_manifests = manifests.len() as u64;
    if options.filter.is_always_false() {
        plan.metrics = metrics;
        return Ok(plan);
    }
    let ctx = context(metadata, options, cache);
    // Manifests holding only deleted entries contribute nothing (Java ManifestGroup).
    let live = |m: &&ManifestFile| m.has_added_files() || m.has_existing_files();
    let data: Vec<&ManifestFile> =
        manifests.iter().filter(|m| m.content == ManifestContent::Data).filter(live).collect();
    let deletes: Vec<&ManifestFile> =
        manifests.iter().filter(|m| m.content == ManifestContent::Deletes).filter(live).collect();
    let data = ctx.prune(&data, &mut metrics.skipped_data_manifests)?;
    let deletes = ctx.prune(&deletes, &mut metrics.skipped_delete_manifests)?;
    metrics.scanned_data_manifests = data.len() as u64;
    metrics.scanned_delete_manifests = deletes.len() as u64;

    // 1. Delete files -> index.
    let parts = parallel_map(&deletes, options.threads, |m| read_deletes(&ctx, m));
    let mut delete_files = Vec::new();
    for p in parts {
        let p = p?;
        count_read(&mut metrics, p.from_cache);
        metrics.skipped_delete_files += p.skipped;
        delete_files.extend(p.deletes);
    }
    metrics.indexed_delete_files = delete_files.len() as u64;
    metrics.total_delete_file_size_in_bytes =
        delete_files.iter().map(|(f, _)| f.file_size_in_bytes.max(0) as u64).sum();
    let eq_ids: Vec<i32> = delete_files
        .iter()
        .filter(|(f, _)| f.content == DataContentType::EqualityDeletes)
        .flat_map(|(f, _)| f.equality_ids.iter().flatten().copied())
        .collect();
    let stats = ctx.data_stats(eq_ids);
    let index = DeleteFileIndex::build(delete_files, &ctx.specs, metadata.current_schema())?;

    // 2. Data files -> tasks.
    let read = |m: &ManifestFile| read_data(&ctx, m, &index, None, &stats);
    collect_data(&data, options.threads, read, &mut plan, &mut metrics)?;
    plan.metrics = metrics;
    Ok(plan)
}

/// Incremental append scan: the data files ADDED by the snapshots of `range`.
fn plan_appends(
    metadata: &TableMetadata,
    range: &[&Snapshot],
    options: &ScanOptions,
    cache: Option<&ManifestCache>,
) -> Result<ScanPlan> {
    let mut metrics = ScanMetrics::default();
    let mut plan = ScanPlan { snapshot_id: range.last().map(|s| s.snapshot_id), ..ScanPlan::default() };
    if range.is_empty() || options.filter.is_always_false() {
        return Ok(plan);
    }
    let ids: HashSet<i64> = range.iter().map(|s| s.snapshot_id).collect();
    let mut seen = HashSet::new();
    let mut manifests = Vec::new();
    for s in range {
        for m in manifest_list_of(s)? {
            metrics.total_manifests += 1;
            let added_here = ids.contains(&m.added_snapshot_id) && m.has_added_files();
            if m.content == ManifestContent::Data && added_here && seen.insert(m.manifest_path.clone()) {
                manifests.push(m);
            }
        }
    }
    let ctx = context(metadata, options, cache);
    let refs: Vec<&ManifestFile> = manifests.iter().collect();
    let data = ctx.prune(&refs, &mut metrics.skipped_data_manifests)?;
    metrics.scanned_data_manifests = data.len() as u64;
    let index = DeleteFileIndex::default();
    let stats = ctx.data_stats([]);
    let read = |m: &ManifestFile| read_data(&ctx, m, &index, Some(&ids), &stats);
    collect_data(&data, options.threads, read, &mut plan, &mut metrics)?;
    plan.metrics = metrics;
    Ok(plan)
}

fn count_read(metrics: &mut ScanMetrics, from_cache: bool) {
    if from_cache {
        metrics.manifests_from_cache += 1;
    } else {
        metrics.manifests_read += 1;
    }
}

/// Plans the data manifests' tasks into `plan`, each manifest's part moved in (in manifest
/// order) as soon as it is read: the parts are never all held beside the task list. The list
/// is sized once by the manifests' live file counts (an upper bound; pages not filled are not
/// touched) and shrunk when filters left most of it empty.
fn collect_data(
    data: &[&ManifestFile],
    threads: usize,
    read: impl Fn(&ManifestFile) -> Result<Part> + Sync,
    plan: &mut ScanPlan,
    metrics: &mut ScanMetrics,
) -> Result<()> {
    let live: i64 = data
        .iter()
        .map(|m| {
            i64::from(m.added_files_count.unwrap_or(0).max(0))
                + i64::from(m.existing_files_count.unwrap_or(0).max(0))
        })
        .sum();
    plan.tasks.reserve(live.clamp(0, 1 << 26) as usize);
    parallel_consume(data, threads, |m| read(m), |p| add_part(p?, plan, metrics))?;
    if plan.tasks.len() < plan.tasks.capacity() / 2 {
        plan.tasks.shrink_to_fit();
    }
    Ok(())
}

fn add_part(p: Part, plan: &mut ScanPlan, metrics: &mut ScanMetrics) -> Result<()> {
    count_read(metrics, p.from_cache);
    metrics.skipped_data_files += p.skipped;
    metrics.result_delete_files += p.result_delete_files;
    for t in p.tasks.summaries() {
        metrics.total_file_size_in_bytes += t.file_size_in_bytes.max(0) as u64;
    }
    metrics.result_data_files += p.tasks.len() as u64;
    plan.tasks.append(p.tasks);
    Ok(())
}

fn read_deletes(ctx: &Context<'_>, manifest: &ManifestFile) -> Result<Part> {
    let spec = ctx.spec(manifest)?;
    // Delete files keep every stat: the index reads their bounds (file_path, equality columns).
    let (m, from_cache) = ctx.load(manifest, &StatsProjection::All)?;
    let mut part = Part { from_cache, ..Part::default() };
    for e in m.entries.iter().filter(|e| e.status != EntryStatus::Deleted) {
        if !ctx.options.prune_deletes_by_filter || ctx.options.filter.file_may_match(&e.data_file, spec)? {
            part.deletes.push((e.data_file.clone(), e.sequence_number.unwrap_or(0)));
        } else {
            part.skipped += 1;
        }
    }
    Ok(part)
}

fn read_data(
    ctx: &Context<'_>,
    manifest: &ManifestFile,
    index: &DeleteFileIndex,
    added_by: Option<&HashSet<i64>>,
    stats: &StatsProjection,
) -> Result<Part> {
    let spec = ctx.spec(manifest)?;
    let keep_stats = ctx.options.include_column_stats;
    let identity = FileScanTask::identity_fields_of(spec);
    let mut part = Part::default();
    if ctx.cache.is_none() {
        let live = manifest.added_files_count.unwrap_or(0) + manifest.existing_files_count.unwrap_or(0);
        part.tasks.reserve(live.clamp(0, 1 << 20) as usize);
        // Decoded for this scan alone: stream the entries, moving each planned file into its
        // task (no entry vector, no copies).
        read_manifest_each(manifest, stats, |e| {
            if let Some(t) = accept(ctx, spec, &e, index, added_by, &mut part.skipped)? {
                let mut file = e.data_file;
                let in_file = identity_columns_in_file(&file, &identity);
                if !keep_stats {
                    strip_stats(&mut file);
                }
                part.result_delete_files += t.deletes.len() as u64;
                part.tasks.push(t.into_task(file, &identity, in_file));
            }
            Ok(())
        })?;
        return Ok(part);
    }
    // Shared with the cache: copy (without stats unless asked for).
    let (m, from_cache) = ctx.load(manifest, stats)?;
    part.from_cache = from_cache;
    for e in &m.entries {
        if let Some(t) = accept(ctx, spec, e, index, added_by, &mut part.skipped)? {
            let f = &e.data_file;
            let file = if keep_stats { f.clone() } else { without_stats(f) };
            part.result_delete_files += t.deletes.len() as u64;
            part.tasks.push(t.into_task(file, &identity, identity_columns_in_file(f, &identity)));
        }
    }
    Ok(part)
}

/// What a task needs besides its file.
struct Accepted {
    seq: i64,
    deletes: Vec<DeleteFileRef>,
    residual: Option<serde_json::Value>,
}

impl Accepted {
    fn into_task(self, file: DataFile, identity: &[(i32, usize)], identity_in_file: bool) -> FileScanTask {
        let length = file.file_size_in_bytes;
        FileScanTask {
            file,
            start: 0,
            length,
            data_sequence_number: self.seq,
            deletes: self.deletes,
            residual: self.residual,
            identity_partition_fields: identity.to_vec(),
            identity_columns_in_file: identity_in_file,
            delete_scope: None,
        }
    }
}

/// Whether the file's metrics name every identity partition source column (decoded with
/// them: `Context::data_stats`), i.e. the file holds those columns itself.
pub fn identity_columns_in_file(f: &DataFile, identity: &[(i32, usize)]) -> bool {
    identity.iter().all(|(id, _)| {
        f.value_counts.contains_key(id)
            || f.column_sizes.contains_key(id)
            || f.null_value_counts.contains_key(id)
    })
}

/// Whether the entry is planned (live, or added by the range; and may match the filter), with
/// its deletes and residual; counts the files the filter skips.
fn accept(
    ctx: &Context<'_>,
    spec: &PartitionSpec,
    e: &ManifestEntry,
    index: &DeleteFileIndex,
    added_by: Option<&HashSet<i64>>,
    skipped: &mut u64,
) -> Result<Option<Accepted>> {
    let wanted = match added_by {
        None => e.status != EntryStatus::Deleted,
        Some(ids) => e.status == EntryStatus::Added && e.snapshot_id.is_some_and(|s| ids.contains(&s)),
    };
    if !wanted {
        return Ok(None);
    }
    let file = &e.data_file;
    let filter = &ctx.options.filter;
    if !filter.file_may_match(file, spec)? {
        *skipped += 1;
        return Ok(None);
    }
    let seq = e.sequence_number.unwrap_or(0);
    let deletes = index
        .for_data_file(seq, file)?
        .into_iter()
        .map(|d| DeleteFileRef { file: (*d.file).clone(), data_sequence_number: d.data_sequence_number })
        .collect();
    let residual = filter.residual(file, spec)?;
    Ok(Some(Accepted { seq, deletes, residual }))
}

/// Drops the column stats of `f` in place (Java `ContentFile.copyWithoutStats`).
fn strip_stats(f: &mut DataFile) {
    f.column_sizes = Default::default();
    f.value_counts = Default::default();
    f.null_value_counts = Default::default();
    f.nan_value_counts = Default::default();
    f.lower_bounds = Default::default();
    f.upper_bounds = Default::default();
    f.empty_metric_maps = 0;
}

/// A copy of `f` without column stats (Java `ContentFile.copyWithoutStats`); cheap because
/// the metric maps are what make a DataFile heavy.
pub fn without_stats(f: &DataFile) -> DataFile {
    DataFile {
        content: f.content,
        file_path: f.file_path.clone(),
        file_format: f.file_format,
        partition: f.partition.clone(),
        record_count: f.record_count,
        file_size_in_bytes: f.file_size_in_bytes,
        column_sizes: Default::default(),
        value_counts: Default::default(),
        null_value_counts: Default::default(),
        nan_value_counts: Default::default(),
        lower_bounds: Default::default(),
        upper_bounds: Default::default(),
        key_metadata: f.key_metadata.clone(),
        split_offsets: f.split_offsets.clone(),
        equality_ids: f.equality_ids.clone(),
        sort_order_id: f.sort_order_id,
        referenced_data_file: f.referenced_data_file.clone(),
        first_row_id: f.first_row_id,
        content_offset: f.content_offset,
        content_size_in_bytes: f.content_size_in_bytes,
        spec_id: f.spec_id,
        empty_metric_maps: 0,
    }
}
