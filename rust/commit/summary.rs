//! Snapshot summaries as Iceberg Java writes them: added-* for this snapshot, total-*
//! carried from the previous head.

use std::collections::{BTreeMap, BTreeSet};

use crate::manifest::{DataContentType, DataFile, FileFormat};
use crate::spec::Snapshot;

/// A deletion vector (a blob of a Puffin file), as Java's `ContentFileUtil.isDV`.
fn is_dv(file: &DataFile) -> bool {
    file.file_format == FileFormat::Puffin
}

/// The bytes a file adds to the table: a DV's blob, else the whole file (Java's
/// `ScanTaskUtil.contentSizeInBytes`).
fn content_size(file: &DataFile) -> i64 {
    match (is_dv(file), file.content_size_in_bytes) {
        (true, Some(n)) => n,
        _ => file.file_size_in_bytes,
    }
}

/// Accumulates the changes of one snapshot and renders its summary map.
#[derive(Debug, Default)]
pub struct SnapshotSummaryBuilder {
    added_data_files: i64,
    added_records: i64,
    added_files_size: i64,
    added_delete_files: i64,
    added_position_delete_files: i64,
    added_dvs: i64,
    added_equality_delete_files: i64,
    added_position_deletes: i64,
    added_equality_deletes: i64,
    deleted_data_files: i64,
    deleted_records: i64,
    removed_files_size: i64,
    removed_delete_files: i64,
    removed_position_delete_files: i64,
    removed_dvs: i64,
    removed_equality_delete_files: i64,
    removed_position_deletes: i64,
    removed_equality_deletes: i64,
    partitions: BTreeSet<String>,
}

const TOTALS: [&str; 6] = [
    "total-records",
    "total-files-size",
    "total-data-files",
    "total-delete-files",
    "total-position-deletes",
    "total-equality-deletes",
];

impl SnapshotSummaryBuilder {
    /// Records an added file; `partition_key` identifies its partition for
    /// `changed-partition-count`.
    pub fn add_file(&mut self, file: &DataFile, partition_key: String) {
        self.partitions.insert(partition_key);
        self.added_files_size += content_size(file);
        match file.content {
            DataContentType::Data => {
                self.added_data_files += 1;
                self.added_records += file.record_count;
            }
            DataContentType::PositionDeletes => {
                self.added_delete_files += 1;
                if is_dv(file) {
                    self.added_dvs += 1;
                } else {
                    self.added_position_delete_files += 1;
                }
                self.added_position_deletes += file.record_count;
            }
            DataContentType::EqualityDeletes => {
                self.added_delete_files += 1;
                self.added_equality_delete_files += 1;
                self.added_equality_deletes += file.record_count;
            }
        }
    }

    /// Records a removed file (Java's `deletedFile`); its partition counts as changed.
    pub fn remove_file(&mut self, file: &DataFile, partition_key: String) {
        self.partitions.insert(partition_key);
        self.removed_files_size += content_size(file);
        match file.content {
            DataContentType::Data => {
                self.deleted_data_files += 1;
                self.deleted_records += file.record_count;
            }
            DataContentType::PositionDeletes => {
                self.removed_delete_files += 1;
                if is_dv(file) {
                    self.removed_dvs += 1;
                } else {
                    self.removed_position_delete_files += 1;
                }
                self.removed_position_deletes += file.record_count;
            }
            DataContentType::EqualityDeletes => {
                self.removed_delete_files += 1;
                self.removed_equality_delete_files += 1;
                self.removed_equality_deletes += file.record_count;
            }
        }
    }

    /// True when a data file was added.
    pub fn adds_data_files(&self) -> bool {
        self.added_data_files > 0
    }

    /// True when a delete file was added.
    pub fn adds_delete_files(&self) -> bool {
        self.added_delete_files > 0
    }

    /// True when a data file was removed.
    pub fn deletes_data_files(&self) -> bool {
        self.deleted_data_files > 0
    }

    /// The summary (without `operation`), totals computed from the previous snapshot's.
    /// A previous summary lacking totals (written by an engine that omits them) leaves
    /// those totals out, as Java does, rather than inventing them.
    pub fn build(
        &self,
        previous: Option<&Snapshot>,
        extra: &BTreeMap<String, String>,
    ) -> BTreeMap<String, String> {
        let mut m = BTreeMap::new();
        let mut put = |k: &str, v: i64| {
            if v > 0 {
                m.insert(k.to_string(), v.to_string());
            }
        };
        put("added-data-files", self.added_data_files);
        put("added-delete-files", self.added_delete_files);
        put("added-position-delete-files", self.added_position_delete_files);
        put("added-dvs", self.added_dvs);
        put("added-equality-delete-files", self.added_equality_delete_files);
        put("added-records", self.added_records);
        put("added-files-size", self.added_files_size);
        put("added-position-deletes", self.added_position_deletes);
        put("added-equality-deletes", self.added_equality_deletes);
        put("deleted-data-files", self.deleted_data_files);
        put("deleted-records", self.deleted_records);
        put("removed-files-size", self.removed_files_size);
        put("removed-delete-files", self.removed_delete_files);
        put("removed-position-delete-files", self.removed_position_delete_files);
        put("removed-dvs", self.removed_dvs);
        put("removed-equality-delete-files", self.removed_equality_delete_files);
        put("removed-position-deletes", self.removed_position_deletes);
        put("removed-equality-deletes", self.removed_equality_deletes);
        m.insert("changed-partition-count".into(), self.partitions.len().to_string());

        let added = |k: &str| -> i64 {
            match k {
                "total-records" => self.added_records - self.deleted_records,
                "total-files-size" => self.added_files_size - self.removed_files_size,
                "total-data-files" => self.added_data_files - self.deleted_data_files,
                "total-delete-files" => self.added_delete_files - self.removed_delete_files,
                "total-position-deletes" => self.added_position_deletes - self.removed_position_deletes,
                "total-equality-deletes" => self.added_equality_deletes - self.removed_equality_deletes,
                _ => 0,
            }
        };
        for key in TOTALS {
            let prev = match previous {
                None => Some(0),
                Some(s) => s.summary.other.get(key).and_then(|v| v.parse::<i64>().ok()),
            };
            if let Some(p) = prev {
                m.insert(key.to_string(), (p + added(key)).to_string());
            }
        }
        m.insert("engine-name".into(), "icefloe".into());
        m.insert("engine-version".into(), env!("CARGO_PKG_VERSION").into());
        for (k, v) in extra {
            m.insert(k.clone(), v.clone());
        }
        m
    }
}
