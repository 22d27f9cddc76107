//! Scan planning: snapshot -> manifest list -> manifests -> file scan tasks -> combined tasks.
//!
//! - `snapshot_select`: current / id / as-of-time / branch or tag / incremental append range.
//! - `filter`: the pruning questions the planner asks ([`ScanFilter`]); the `expr` module's
//!   evaluators answer them.
//! - `planner`: manifests read in parallel (`pool`), reused across scans (`cache`), entries
//!   pruned, deletes attached from the [`DeleteFileIndex`], metrics collected.
//! - `split`: split at split offsets and bin-pack into [`CombinedScanTask`]s.
//! - `task`: the tasks that cross to the executors (JSON).

mod cache;
pub mod delete_file_index;
mod expr_filter;
mod filter;
mod metrics;
mod planned_tasks;
mod planner;
mod pool;
mod rest_tasks;
mod snapshot_select;
pub mod split;
mod task;

pub use cache::ManifestCache;
pub use delete_file_index::DeleteFileIndex;
pub use expr_filter::BoundFilter;
pub use filter::{AcceptAll, ScanFilter, ScanFilterRef};
pub use metrics::ScanMetrics;
pub use planned_tasks::{PlannedTasks, TaskSummary};
pub use planner::{identity_columns_in_file, plan_scan, without_stats, ScanOptions, ScanPlan};
pub use pool::{default_threads, parallel_consume, parallel_map};
pub use rest_tasks::tasks_from_rest_answer;
pub use snapshot_select::{select, select_append_range, SnapshotSelection};
pub use split::{adjust_split_size, plan_tasks, split_task, task_size_bytes, SplitOptions};
pub use task::{CombinedScanTask, DeleteFileRef, FileScanTask};

use crate::error::Result;
use crate::spec::{Snapshot, TableMetadata};

/// The snapshot a scan reads: `snapshot_id` if given (an unknown id is an error), else
/// the current one (`None` when the table has no snapshot yet).
pub fn select_snapshot(metadata: &TableMetadata, snapshot_id: Option<i64>) -> Result<Option<&Snapshot>> {
    match snapshot_id {
        Some(id) => select(metadata, &SnapshotSelection::SnapshotId(id)),
        None => select(metadata, &SnapshotSelection::Current),
    }
}

/// One whole-file task per live data file of the snapshot, no filter, deletes attached.
pub fn plan_files(metadata: &TableMetadata, snapshot_id: Option<i64>) -> Result<Vec<FileScanTask>> {
    let selection = snapshot_id.map_or(SnapshotSelection::Current, SnapshotSelection::SnapshotId);
    let options = ScanOptions { selection, ..ScanOptions::default() };
    Ok(plan_scan(metadata, &options, None)?.tasks.into_vec())
}

/// Splits whole-file tasks (split offsets, else fixed chunks) and packs them into combined
/// tasks by the table's `read.split.*` settings.
pub fn combine_tasks(
    tasks: impl IntoIterator<Item = FileScanTask>,
    options: &SplitOptions,
) -> Vec<CombinedScanTask> {
    let tasks = tasks.into_iter();
    let mut split = Vec::with_capacity(tasks.size_hint().0);
    for t in tasks {
        split_task(t, options.target_size, &mut split);
    }
    plan_tasks(split, options)
}
