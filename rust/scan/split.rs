//! Splitting file scan tasks and bin-packing them into combined tasks (Iceberg Java's
//! `TableScanUtil.splitFiles` / `planTasks` and `BinPacking.PackingIterable` with
//! largest-bin-first eviction).
//!
//! Splits follow the file's `split_offsets` (row-group starts) when they are well defined,
//! else fixed `target_size` chunks. The reader reads the row groups whose start offset lies
//! in `[start, start + length)` (see `task.rs`), so every row group is read exactly once.

use std::collections::VecDeque;

use super::task::{CombinedScanTask, FileScanTask};
use crate::manifest::FileFormat;
use crate::spec::TableMetadata;

pub const SPLIT_SIZE: &str = "read.split.target-size";
pub const SPLIT_SIZE_DEFAULT: i64 = 128 * 1024 * 1024;
pub const SPLIT_OPEN_FILE_COST: &str = "read.split.open-file-cost";
pub const SPLIT_OPEN_FILE_COST_DEFAULT: i64 = 4 * 1024 * 1024;
pub const SPLIT_LOOKBACK: &str = "read.split.planning-lookback";
pub const SPLIT_LOOKBACK_DEFAULT: usize = 10;
pub const ADAPTIVE_SPLIT_SIZE_ENABLED: &str = "read.split.adaptive-size.enabled";
/// The smallest split size the adaptive sizing picks on its own (Java `TableScanUtil`).
pub const MIN_ADAPTIVE_SPLIT_SIZE: i64 = 16 * 1024 * 1024;

/// The table's split settings (properties, falling back to Java's defaults when absent or
/// not a positive number).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitOptions {
    pub target_size: i64,
    pub open_file_cost: i64,
    pub lookback: usize,
    /// `read.split.adaptive-size.enabled` (default true): a scan that would make fewer
    /// splits than the engine's parallelism gets smaller splits (see `adjust_split_size`).
    pub adaptive: bool,
}

impl Default for SplitOptions {
    fn default() -> Self {
        SplitOptions {
            target_size: SPLIT_SIZE_DEFAULT,
            open_file_cost: SPLIT_OPEN_FILE_COST_DEFAULT,
            lookback: SPLIT_LOOKBACK_DEFAULT,
            adaptive: true,
        }
    }
}

impl SplitOptions {
    pub fn from_table(metadata: &TableMetadata) -> SplitOptions {
        let prop =
            |k: &str| metadata.property(k).and_then(|v| v.trim().parse::<i64>().ok()).filter(|v| *v > 0);
        let d = SplitOptions::default();
        SplitOptions {
            target_size: prop(SPLIT_SIZE).unwrap_or(d.target_size),
            open_file_cost: prop(SPLIT_OPEN_FILE_COST).unwrap_or(d.open_file_cost),
            lookback: prop(SPLIT_LOOKBACK).map(|v| v as usize).unwrap_or(d.lookback),
            adaptive: metadata
                .property(ADAPTIVE_SPLIT_SIZE_ENABLED)
                .and_then(|v| v.trim().parse::<bool>().ok())
                .unwrap_or(d.adaptive),
        }
    }
}

/// The split size for a scan of `scan_size` bytes on `parallelism` slots (Java
/// `TableScanUtil.adjustSplitSize`, used by Iceberg's Spark scans): `split_size` when it
/// already yields at least one split per slot, else `scan_size / parallelism`, but not below
/// `min(MIN_ADAPTIVE_SPLIT_SIZE, split_size)`. The split size is never raised.
pub fn adjust_split_size(scan_size: i64, parallelism: usize, split_size: i64) -> i64 {
    let split_size = split_size.max(1);
    let parallelism = parallelism.max(1) as i64;
    let scan_size = scan_size.max(0);
    let split_count = scan_size.saturating_add(split_size - 1) / split_size;
    if split_count >= parallelism {
        return split_size;
    }
    (scan_size / parallelism).max(MIN_ADAPTIVE_SPLIT_SIZE.min(split_size))
}

/// The bytes a task reads: its range plus its delete files (Java `FileScanTask.sizeBytes`).
pub fn task_size_bytes(task: &FileScanTask) -> i64 {
    task.length + task.deletes.iter().map(|d| d.file.file_size_in_bytes).sum::<i64>()
}

/// Split offsets usable for splitting (Java `BaseFile.splitOffsets`: non-empty, ascending,
/// first >= 0, last before the end of the file); `None` otherwise.
fn valid_offsets(task: &FileScanTask) -> Option<&[i64]> {
    let offsets = task.file.split_offsets.as_deref()?;
    let (first, last) = (*offsets.first()?, *offsets.last()?);
    let ascending = offsets.windows(2).all(|w| w[0] < w[1]);
    (ascending && first >= 0 && last < task.file.file_size_in_bytes).then_some(offsets)
}

/// One task per split of the whole-file task `task`: at each split offset (one per row
/// group), else fixed `target_size` chunks. Non-splittable formats stay whole.
pub fn split_task(task: FileScanTask, target_size: i64, out: &mut Vec<FileScanTask>) {
    let splittable = matches!(task.file.file_format, FileFormat::Parquet | FileFormat::Orc);
    let length = task.length;
    if !splittable || length <= 0 {
        out.push(task);
        return;
    }
    let ranges: Vec<(i64, i64)> = match valid_offsets(&task) {
        Some(offsets) => {
            let mut r: Vec<(i64, i64)> = offsets.windows(2).map(|w| (w[0], w[1] - w[0])).collect();
            if let Some(&last) = offsets.last() {
                r.push((last, length - last));
            }
            r
        }
        None => {
            let size = target_size.max(1);
            let mut r = Vec::with_capacity(((length + size - 1) / size) as usize);
            let mut start = 0;
            while start < length {
                let len = size.min(length - start);
                r.push((task.start + start, len));
                start += len;
            }
            r
        }
    };
    if ranges.len() == 1 {
        out.push(task);
        return;
    }
    for (start, len) in ranges {
        let mut t = task.clone();
        t.start = start;
        t.length = len;
        out.push(t);
    }
}

/// The bin-packing weight of a task: its bytes plus its delete files' bytes, but at least
/// one open-file cost. Java (`TableScanUtil.planTasks`) charges an open cost for every
/// delete file too, which after many upserts (50 equality-delete files on a 100 KB data file)
/// makes each task weigh more than the target and gives one Spark task per file. icefloe
/// opens a delete file once per executor process (the delete cache; equality keys are one
/// shared map per snapshot), so only the data file's open is charged: 100 small files after
/// 100 upserts read in 4 Spark tasks instead of 99.
pub fn task_weight(task: &FileScanTask, open_file_cost: i64) -> i64 {
    task_size_bytes(task).max(open_file_cost)
}

struct Bin {
    weight: i64,
    tasks: Vec<FileScanTask>,
}

/// Packs tasks into combined tasks of about `target_size` weight, keeping at most `lookback`
/// open bins; when a new bin would exceed that, the heaviest open bin is emitted (Java
/// `BinPacking.PackingIterable` with `largestBinFirst = true`).
pub fn plan_tasks(tasks: Vec<FileScanTask>, options: &SplitOptions) -> Vec<CombinedScanTask> {
    let lookback = options.lookback.max(1);
    let mut bins: VecDeque<Bin> = VecDeque::new();
    let mut out = Vec::new();
    let take_largest = |bins: &mut VecDeque<Bin>| -> Option<Bin> {
        // Java's Collections.max keeps the first of equal maxima.
        let mut best: Option<(usize, i64)> = None;
        for (i, b) in bins.iter().enumerate() {
            if best.is_none_or(|(_, w)| b.weight > w) {
                best = Some((i, b.weight));
            }
        }
        best.and_then(|(i, _)| bins.remove(i))
    };
    for task in tasks {
        let weight = task_weight(&task, options.open_file_cost);
        if let Some(bin) = bins.iter_mut().find(|b| b.weight + weight <= options.target_size) {
            bin.weight += weight;
            bin.tasks.push(task);
            continue;
        }
        bins.push_back(Bin { weight, tasks: vec![task] });
        if bins.len() > lookback {
            if let Some(b) = take_largest(&mut bins) {
                out.push(CombinedScanTask { tasks: b.tasks });
            }
        }
    }
    while let Some(b) = take_largest(&mut bins) {
        out.push(CombinedScanTask { tasks: b.tasks });
    }
    out
}

#[cfg(test)]
#[path = "split_tests.rs"]
mod tests;
