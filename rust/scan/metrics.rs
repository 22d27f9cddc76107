//! Scan metrics reported with a plan (Iceberg Java's `ScanMetricsResult`, the parts that
//! apply here).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScanMetrics {
    /// Manifests listed by the snapshot(s) (data + delete).
    pub total_manifests: u64,
    pub scanned_data_manifests: u64,
    pub skipped_data_manifests: u64,
    pub scanned_delete_manifests: u64,
    pub skipped_delete_manifests: u64,
    /// Manifests decoded from storage / taken from the manifest cache.
    pub manifests_read: u64,
    pub manifests_from_cache: u64,
    /// Live data files planned / pruned by the filter (partition or metrics).
    pub result_data_files: u64,
    pub skipped_data_files: u64,
    /// Live delete files kept in the delete index / pruned by the filter.
    pub indexed_delete_files: u64,
    pub skipped_delete_files: u64,
    /// Delete file references attached to tasks (a delete file counts once per data file).
    pub result_delete_files: u64,
    pub total_file_size_in_bytes: u64,
    pub total_delete_file_size_in_bytes: u64,
    pub planning_time_ns: u64,
}
