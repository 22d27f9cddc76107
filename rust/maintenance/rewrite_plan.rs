//! Planning a data-file rewrite (compaction) by Iceberg Java's rules
//! (`SizeBasedFileRewritePlanner` + `BinPackRewriteFilePlanner`, 1.10):
//!
//! 1. Plan the live data files matching the filter, whole files, every applicable delete
//!    attached (never pruned by the filter: all rows of a rewritten file are kept), no residual.
//! 2. Group them by partition of the table's current spec; files of another spec form one
//!    group with the all-null partition, as Java does.
//! 3. Select files outside `[min-file-size-bytes, max-file-size-bytes]`, or with at least
//!    `delete-file-threshold` delete files, or with a known deleted-row ratio of at least
//!    `delete-ratio-threshold` (file-scoped deletes only).
//! 4. Bin-pack each partition's selected files into groups of at most
//!    `max-file-group-size-bytes` and `max-file-group-input-files` (one open bin, in plan
//!    order).
//! 5. Keep a group with at least `min-input-files` files (and more than one), or more than
//!    one file and more bytes than the target, or more bytes than the max file size, or any
//!    file selected for its deletes. `rewrite-all` keeps every file and group.
//!
//! 6. With `max-files-to-rewrite`, groups are taken in plan order until that many files are
//!    chosen; the group that crosses the limit keeps only its first files.
//! 7. Groups are ordered by `rewrite-job-order` (`bytes-asc`, `bytes-desc`, `files-asc`,
//!    `files-desc`, or `none`: plan order), a stable sort as Java's.
//!
//! Each group also carries the number of output files Java expects, the split size its
//! readers pack to, and the size at which its writers roll (`writeMaxFileSize`).

use std::collections::BTreeMap;

use crate::error::{validation, Result};
use crate::manifest::{DataContentType, FileFormat};
use crate::scan::delete_file_index::referenced_data_file;
use crate::scan::{
    plan_scan, split_task, CombinedScanTask, FileScanTask, ScanFilterRef, ScanOptions, SnapshotSelection,
    SplitOptions,
};
use crate::spec::TableMetadata;

/// Java's `write.target-file-size-bytes` default.
pub const DEFAULT_TARGET_FILE_SIZE_BYTES: i64 = 512 * 1024 * 1024;
const MIN_FILE_SIZE_DEFAULT_RATIO: f64 = 0.75;
const MAX_FILE_SIZE_DEFAULT_RATIO: f64 = 1.80;
pub const MIN_INPUT_FILES_DEFAULT: usize = 5;
pub const MAX_FILE_GROUP_SIZE_BYTES_DEFAULT: i64 = 100 * 1024 * 1024 * 1024;
pub const DELETE_RATIO_THRESHOLD_DEFAULT: f64 = 0.3;
/// Java's `SPLIT_OVERHEAD` added to a group's split size.
const SPLIT_OVERHEAD: i64 = 5 * 1024;

/// The planner's options (Java's option names in the field docs); `None` means Java's default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RewriteOptions {
    /// `target-file-size-bytes` (default: table's `write.target-file-size-bytes`, else 512 MiB).
    pub target_file_size_bytes: Option<i64>,
    /// `min-file-size-bytes` (default 75% of the target).
    pub min_file_size_bytes: Option<i64>,
    /// `max-file-size-bytes` (default 180% of the target).
    pub max_file_size_bytes: Option<i64>,
    /// `min-input-files` (default 5).
    pub min_input_files: Option<usize>,
    /// `delete-file-threshold` (default: off).
    pub delete_file_threshold: Option<usize>,
    /// `delete-ratio-threshold` (default 0.3).
    pub delete_ratio_threshold: Option<f64>,
    /// `max-file-group-size-bytes` (default 100 GiB).
    pub max_file_group_size_bytes: Option<i64>,
    /// `max-file-group-input-files` (default: no limit).
    pub max_file_group_input_files: Option<i64>,
    /// `rewrite-all`.
    pub rewrite_all: bool,
    /// `max-files-to-rewrite` (default: no limit).
    pub max_files_to_rewrite: Option<i64>,
    /// `rewrite-job-order` (default `none`).
    pub rewrite_job_order: Option<String>,
    /// `output-spec-id` (default: the table's default spec).
    pub output_spec_id: Option<i32>,
}

/// Java's `RewriteJobOrder`: the order file groups are rewritten and committed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RewriteJobOrder {
    BytesAsc,
    BytesDesc,
    FilesAsc,
    FilesDesc,
    #[default]
    None,
}

impl RewriteJobOrder {
    /// Java's option values (`RewriteJobOrder.fromName`, case-insensitive).
    pub fn parse(name: &str) -> Result<Self> {
        match name.to_ascii_lowercase().as_str() {
            "bytes-asc" => Ok(Self::BytesAsc),
            "bytes-desc" => Ok(Self::BytesDesc),
            "files-asc" => Ok(Self::FilesAsc),
            "files-desc" => Ok(Self::FilesDesc),
            "none" => Ok(Self::None),
            _ => Err(validation(format!(
                "'rewrite-job-order' expected one of bytes-asc, bytes-desc, files-asc, files-desc, none, found '{name}'"
            ))),
        }
    }

    /// Orders `groups` (a stable sort: equal groups keep plan order).
    pub fn sort(self, groups: &mut [RewriteGroup]) {
        match self {
            Self::BytesAsc => groups.sort_by_key(|g| g.input_size),
            Self::BytesDesc => groups.sort_by_key(|g| std::cmp::Reverse(g.input_size)),
            Self::FilesAsc => groups.sort_by_key(|g| g.tasks.len()),
            Self::FilesDesc => groups.sort_by_key(|g| std::cmp::Reverse(g.tasks.len())),
            Self::None => {}
        }
    }
}

/// The thresholds after defaults and checks (Java's `init`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    pub target: i64,
    pub min: i64,
    pub max: i64,
    pub min_input_files: usize,
    pub delete_file_threshold: usize,
    pub delete_ratio_threshold: f64,
    pub max_group_size: i64,
    pub max_group_files: usize,
    pub rewrite_all: bool,
    pub max_files_to_rewrite: Option<usize>,
    pub job_order: RewriteJobOrder,
    pub output_spec_id: i32,
}

impl RewriteOptions {
    /// Resolves defaults from `table`'s properties and checks them as Java does.
    pub fn thresholds(&self, table: &TableMetadata) -> Result<Thresholds> {
        let target = match self.target_file_size_bytes {
            Some(t) => t,
            None => match table.property("write.target-file-size-bytes") {
                Some(v) => v.trim().parse::<i64>().map_err(|_| {
                    validation(format!(
                        "expected an integer for table property 'write.target-file-size-bytes', found '{v}'"
                    ))
                })?,
                None => DEFAULT_TARGET_FILE_SIZE_BYTES,
            },
        };
        let min = self.min_file_size_bytes.unwrap_or((target as f64 * MIN_FILE_SIZE_DEFAULT_RATIO) as i64);
        let max = self.max_file_size_bytes.unwrap_or((target as f64 * MAX_FILE_SIZE_DEFAULT_RATIO) as i64);
        let check = |ok: bool, msg: String| if ok { Ok(()) } else { Err(validation(msg)) };
        check(target > 0, format!("'target-file-size-bytes' is set to {target} but must be > 0"))?;
        check(min >= 0, format!("'min-file-size-bytes' is set to {min} but must be >= 0"))?;
        check(
            target > min,
            format!("'target-file-size-bytes' ({target}) must be > 'min-file-size-bytes' ({min}), all new files would be smaller than the min threshold"),
        )?;
        check(
            target < max,
            format!("'target-file-size-bytes' ({target}) must be < 'max-file-size-bytes' ({max}), all new files would be larger than the max threshold"),
        )?;
        let min_input_files = self.min_input_files.unwrap_or(MIN_INPUT_FILES_DEFAULT);
        check(min_input_files > 0, format!("'min-input-files' is set to {min_input_files} but must be > 0"))?;
        let ratio = self.delete_ratio_threshold.unwrap_or(DELETE_RATIO_THRESHOLD_DEFAULT);
        check(
            ratio > 0.0 && ratio <= 1.0,
            format!("'delete-ratio-threshold' is set to {ratio} but must be > 0 and <= 1"),
        )?;
        let max_group_size = self.max_file_group_size_bytes.unwrap_or(MAX_FILE_GROUP_SIZE_BYTES_DEFAULT);
        check(
            max_group_size > 0,
            format!("'max-file-group-size-bytes' is set to {max_group_size} but must be > 0"),
        )?;
        let max_group_files = match self.max_file_group_input_files {
            None => usize::MAX,
            Some(n) => usize::try_from(n).ok().filter(|n| *n > 0).ok_or_else(|| {
                validation(format!("'max-file-group-input-files' is set to {n} but must be > 0"))
            })?,
        };
        let max_files_to_rewrite = match self.max_files_to_rewrite {
            None => None,
            Some(n) => Some(usize::try_from(n).ok().filter(|n| *n > 0).ok_or_else(|| {
                validation(format!("'max-files-to-rewrite' is set to {n} but must be a positive integer"))
            })?),
        };
        let output_spec_id = self.output_spec_id.unwrap_or(table.default_spec_id());
        check(
            table.spec_by_id(output_spec_id).is_some(),
            format!("Cannot use output spec id {output_spec_id} because the table does not contain a reference to this spec-id."),
        )?;
        let job_order = match &self.rewrite_job_order {
            Some(name) => RewriteJobOrder::parse(name)?,
            None => RewriteJobOrder::None,
        };
        Ok(Thresholds {
            target,
            min,
            max,
            min_input_files,
            delete_file_threshold: self.delete_file_threshold.unwrap_or(usize::MAX),
            delete_ratio_threshold: ratio,
            max_group_size,
            max_group_files,
            rewrite_all: self.rewrite_all,
            max_files_to_rewrite,
            job_order,
            output_spec_id,
        })
    }
}

impl Thresholds {
    fn outside_size_range(&self, t: &FileScanTask) -> bool {
        t.length < self.min || t.length > self.max
    }

    fn too_many_deletes(&self, t: &FileScanTask) -> bool {
        !t.deletes.is_empty() && t.deletes.len() >= self.delete_file_threshold
    }

    /// Deleted rows known from file-scoped deletes (position deletes naming one file, DVs)
    /// over the file's rows.
    fn too_high_delete_ratio(&self, t: &FileScanTask) -> bool {
        if t.deletes.is_empty() || t.file.record_count <= 0 {
            return false;
        }
        let known: i64 = t
            .deletes
            .iter()
            .filter(|d| {
                d.file.content == DataContentType::PositionDeletes
                    && (d.file.file_format == FileFormat::Puffin || referenced_data_file(&d.file).is_some())
            })
            .map(|d| d.file.record_count)
            .sum();
        let deleted = known.min(t.file.record_count) as f64;
        deleted / t.file.record_count as f64 >= self.delete_ratio_threshold
    }

    fn selected(&self, t: &FileScanTask) -> bool {
        self.outside_size_range(t) || self.too_many_deletes(t) || self.too_high_delete_ratio(t)
    }

    fn keep_group(&self, g: &[FileScanTask]) -> bool {
        let size: i64 = g.iter().map(|t| t.length).sum();
        let enough_files = g.len() > 1 && g.len() >= self.min_input_files;
        let enough_content = g.len() > 1 && size > self.target;
        let too_much_content = size > self.max;
        enough_files
            || enough_content
            || too_much_content
            || g.iter().any(|t| self.too_many_deletes(t) || self.too_high_delete_ratio(t))
    }

    /// Java's `writeMaxFileSize`: the target plus half the distance to the max.
    pub fn write_max_file_size(&self) -> i64 {
        (self.target as f64 + (self.max - self.target) as f64 * 0.5) as i64
    }

    /// Java's `expectedOutputFiles`: round the file count down when spreading the remainder
    /// keeps files within 10% of the target (and under the write max), else up.
    pub fn expected_output_files(&self, input_size: i64) -> i64 {
        if input_size < self.target {
            return 1;
        }
        let with_remainder = (input_size + self.target - 1) / self.target;
        let without_remainder = input_size / self.target;
        let avg_without = input_size / without_remainder;
        if input_size % self.target > self.min {
            with_remainder
        } else if (avg_without as f64) < (1.1 * self.target as f64).min(self.write_max_file_size() as f64) {
            without_remainder
        } else {
            with_remainder
        }
    }

    /// Java's `inputSplitSize`: input over expected files plus overhead, at least the target
    /// and at most the write max.
    pub fn input_split_size(&self, input_size: i64) -> i64 {
        let estimated = input_size / self.expected_output_files(input_size) + SPLIT_OVERHEAD;
        if estimated < self.target {
            self.target
        } else {
            estimated.min(self.write_max_file_size())
        }
    }
}

/// One group of files rewritten together.
#[derive(Debug, Clone)]
pub struct RewriteGroup {
    /// The partition (path of the current spec) the group belongs to.
    pub partition: String,
    pub tasks: Vec<FileScanTask>,
    pub input_size: i64,
    pub expected_output_files: i64,
    pub split_size: i64,
    pub max_output_file_size: i64,
    /// The spec the new files are partitioned by (`output-spec-id`).
    pub output_spec_id: i32,
}

impl RewriteGroup {
    /// The group's read tasks as its writers take them: files split at split offsets and
    /// packed to the split size with no open cost (Java's bin-pack runner reads with
    /// `split-size` and `file-open-cost=0`); each combined task writes one output file.
    pub fn combined_tasks(&self, lookback: usize) -> Vec<CombinedScanTask> {
        let options =
            SplitOptions { target_size: self.split_size, open_file_cost: 0, lookback, adaptive: false };
        let mut split = Vec::with_capacity(self.tasks.len());
        for t in &self.tasks {
            split_task(t.clone(), self.split_size, &mut split);
        }
        crate::scan::plan_tasks(split, &options)
    }
}

/// A rewrite plan: the snapshot read and the groups to rewrite.
#[derive(Debug, Clone, Default)]
pub struct RewritePlan {
    pub snapshot_id: Option<i64>,
    pub groups: Vec<RewriteGroup>,
}

/// Plans the rewrite of `table`'s current snapshot (see the module doc).
pub fn plan_rewrite(
    table: &TableMetadata,
    filter: Option<ScanFilterRef>,
    options: &RewriteOptions,
) -> Result<RewritePlan> {
    let th = options.thresholds(table)?;
    let mut scan = ScanOptions {
        selection: SnapshotSelection::Current,
        prune_deletes_by_filter: false,
        ..Default::default()
    };
    if let Some(f) = filter {
        scan.filter = f;
    }
    let planned = plan_scan(table, &scan, None)?;
    let spec = table.default_spec();
    let schema = table.current_schema();
    let all_null = vec![None; spec.fields().len()];
    // Partitions in first-seen order (Java's map order is a hash order; only the order of
    // groups differs, never their content).
    let mut order: Vec<String> = Vec::new();
    let mut by_partition: BTreeMap<String, Vec<FileScanTask>> = BTreeMap::new();
    for mut t in planned.tasks {
        t.residual = None; // every row of a rewritten file is kept
        t.start = 0;
        t.length = t.file.file_size_in_bytes;
        let values = if t.file.spec_id == spec.spec_id() { &t.file.partition } else { &all_null };
        let key = spec.partition_path(schema, values)?;
        if !by_partition.contains_key(&key) {
            order.push(key.clone());
        }
        by_partition.entry(key).or_default().push(t);
    }
    let mut groups = Vec::new();
    let mut files_left = th.max_files_to_rewrite.unwrap_or(usize::MAX);
    for key in order {
        let tasks = by_partition.remove(&key).unwrap_or_default();
        let selected: Vec<FileScanTask> =
            if th.rewrite_all { tasks } else { tasks.into_iter().filter(|t| th.selected(t)).collect() };
        for mut g in pack(selected, th.max_group_size, th.max_group_files, |t| t.length) {
            if !th.rewrite_all && !th.keep_group(&g) {
                continue;
            }
            // Java's `max-files-to-rewrite`: kept groups in plan order until the limit, the
            // last one cut to its first files (the cut group is not judged again).
            if files_left == 0 {
                break;
            }
            g.truncate(files_left);
            files_left -= g.len();
            let input_size: i64 = g.iter().map(|t| t.length).sum();
            groups.push(RewriteGroup {
                partition: key.clone(),
                expected_output_files: th.expected_output_files(input_size),
                split_size: th.input_split_size(input_size),
                max_output_file_size: th.write_max_file_size(),
                output_spec_id: th.output_spec_id,
                input_size,
                tasks: g,
            });
        }
    }
    th.job_order.sort(&mut groups);
    Ok(RewritePlan { snapshot_id: planned.snapshot_id, groups })
}

/// Java's `BinPacking.ListPacker(maxGroupSize, 1, false, maxItems).pack`: one open bin, in
/// order; an item that does not fit, by weight or by count, closes it.
pub(crate) fn pack<T>(
    items: Vec<T>,
    target: i64,
    max_items: usize,
    weight_of: impl Fn(&T) -> i64,
) -> Vec<Vec<T>> {
    let mut out = Vec::new();
    let mut current: Vec<T> = Vec::new();
    let mut weight = 0i64;
    for t in items {
        let w = weight_of(&t);
        if !current.is_empty() && (weight.saturating_add(w) > target || current.len() >= max_items) {
            out.push(std::mem::take(&mut current));
            weight = 0;
        }
        weight = weight.saturating_add(w);
        current.push(t);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

#[cfg(test)]
#[path = "rewrite_plan_tests.rs"]
mod tests;
