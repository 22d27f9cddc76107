//! FileScanTask: what a read task on an executor needs, serialised as JSON across the door.
//!
//! Produced by the planner (driver), consumed by the read path (executor). The delete
//! files attached to a task are exactly those the spec's sequence-number and scope rules
//! apply to this data file; the reader must apply all of them or refuse the task.
//!
//! # Byte-range contract
//!
//! A task covers the byte range `[start, start + length)` of its data file. **The reader reads
//! only the row groups (Parquet; stripes for ORC) whose start offset lies in
//! `[start, start + length)`**, where a row group's start offset is the first byte of its
//! first column chunk (the dictionary page when there is one: the same position Java's
//! `ParquetUtil.getSplitOffsets` records as a split offset). A row group is read whole by the
//! one task whose range holds its start, even when its bytes run past `start + length`.
//! Hence the tasks the planner splits a file into read every row group exactly once (no row
//! lost or duplicated): at split offsets, each range runs from one offset to the next and the
//! last to the end of the file (the split offsets are the row-group starts, so none precedes
//! the first); without them, fixed-size chunks cover `[0, file_size_in_bytes)` without gaps
//! or overlap. A task with `start <= 0` and `length >= file_size_in_bytes` reads the whole
//! file. Row positions (for position deletes) count from the start of the file, not of the
//! range.

use serde::{Deserialize, Serialize};

use crate::error::{invalid_data, Result};
use crate::manifest::DataFile;

/// A delete file attached to a data file, with its data sequence number (after inheritance).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeleteFileRef {
    /// content = PositionDeletes or EqualityDeletes (`equality_ids` set for the latter).
    pub file: DataFile,
    pub data_sequence_number: i64,
}

/// A byte range of one data file to read, with the deletes that apply to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileScanTask {
    pub file: DataFile,
    pub start: i64,
    pub length: i64,
    /// The data file's data sequence number (after inheritance); 0 for v1 tables.
    #[serde(default)]
    pub data_sequence_number: i64,
    #[serde(default)]
    pub deletes: Vec<DeleteFileRef>,
    /// The residual row filter for this file (the `expr` module's JSON form of a bound
    /// predicate); `None` = no filter left to apply (always true).
    #[serde(default)]
    pub residual: Option<serde_json::Value>,
    /// The identity fields of the file's partition spec as (source field id, position in
    /// `file.partition`): the reader fills a projected source column the data file lacks
    /// (files added by `add_files` / migration) with the partition value.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub identity_partition_fields: Vec<(i32, usize)>,
    /// Whether the planner saw every identity partition source column in the file's metrics
    /// (planning only, never serialized: false for a task read back from JSON).
    #[serde(skip)]
    pub identity_columns_in_file: bool,
    /// The table snapshot the task was planned from (its manifest list), when it has deletes:
    /// every task of one snapshot probes one shared equality-delete key map per partition
    /// scope. `None` (hand-built tasks): each task loads exactly the files it lists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_scope: Option<String>,
}

impl FileScanTask {
    /// A task reading a whole data file with no deletes and no residual.
    pub fn whole_file(file: DataFile, data_sequence_number: i64) -> Self {
        let length = file.file_size_in_bytes;
        FileScanTask {
            file,
            start: 0,
            length,
            data_sequence_number,
            deletes: vec![],
            residual: None,
            identity_partition_fields: vec![],
            identity_columns_in_file: true,
            delete_scope: None,
        }
    }

    /// The identity fields of `spec` as (source field id, position in the partition tuple).
    pub fn identity_fields_of(spec: &crate::spec::PartitionSpec) -> Vec<(i32, usize)> {
        let identity = |f: &&crate::spec::PartitionField| f.transform == crate::spec::Transform::Identity;
        spec.fields().iter().enumerate().filter(|(_, f)| identity(f)).map(|(i, f)| (f.source_id, i)).collect()
    }

    /// Why a plain Parquet reader (one that resolves columns by field id, fills a column
    /// the file lacks with nulls, and knows nothing of deletes or partitions: Spark's own
    /// Parquet source) would not read this task's rows as Iceberg does; `None` when it would.
    ///
    /// The rules: the task has no delete files (positions, deletion vectors, equality
    /// deletes), no residual filter left to apply, covers the whole file, the file is
    /// unencrypted Parquet, and the planner saw each identity partition source column in the
    /// file's metrics (a file added by `add_files` or a migration may hold the value only in
    /// its partition tuple). Rules that depend on the schema or on where the file lives
    /// are the caller's.
    pub fn plain_parquet_blocker(&self) -> Option<&'static str> {
        self.plain_parquet_blocker_for(false)
    }

    /// `plain_parquet_blocker` for a reader whose caller filters the rows itself after the
    /// read (`rows_filtered_after`: a SQL query's WHERE, which the planner's filter only
    /// prunes for), so that a residual filter does not keep the file from it.
    pub fn plain_parquet_blocker_for(&self, rows_filtered_after: bool) -> Option<&'static str> {
        let f = &self.file;
        if !self.deletes.is_empty() {
            return Some("deletes");
        }
        if self.residual.is_some() && !rows_filtered_after {
            return Some("residual filter");
        }
        if f.file_format != crate::manifest::FileFormat::Parquet {
            return Some("not parquet");
        }
        if f.key_metadata.is_some() {
            return Some("encrypted");
        }
        if self.start != 0 || self.length != f.file_size_in_bytes {
            return Some("part of a file");
        }
        if !self.identity_partition_fields.is_empty() && !self.identity_columns_in_file {
            return Some("identity partition column not known to be in the file");
        }
        None
    }

    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string(self).map_err(|e| invalid_data("cannot serialize FileScanTask").with_source(e))
    }

    pub fn from_json(s: &str) -> Result<Self> {
        serde_json::from_str(s).map_err(|e| invalid_data("malformed FileScanTask").with_source(e))
    }
}

/// Several file scan tasks packed into one unit of work (one Spark partition).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CombinedScanTask {
    pub tasks: Vec<FileScanTask>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::{DataContentType, FileFormat};

    fn task() -> FileScanTask {
        FileScanTask::whole_file(DataFile::new_data("s3://b/t/data/f.parquet", 10, 1000), 1)
    }

    #[test]
    fn a_whole_plain_parquet_file_without_deletes_is_plain() {
        assert_eq!(task().plain_parquet_blocker(), None);
    }

    #[test]
    fn each_rule_names_its_reason() {
        let mut t = task();
        let mut delete = DataFile::new_data("s3://b/t/data/d.parquet", 1, 10);
        delete.content = DataContentType::PositionDeletes;
        t.deletes.push(DeleteFileRef { file: delete, data_sequence_number: 2 });
        assert_eq!(t.plain_parquet_blocker(), Some("deletes"));

        let mut t = task();
        t.residual = Some(serde_json::json!({"type": "true"}));
        assert_eq!(t.plain_parquet_blocker(), Some("residual filter"));

        let mut t = task();
        t.file.file_format = FileFormat::Avro;
        assert_eq!(t.plain_parquet_blocker(), Some("not parquet"));

        let mut t = task();
        t.file.key_metadata = Some(vec![1]);
        assert_eq!(t.plain_parquet_blocker(), Some("encrypted"));

        let mut t = task();
        t.start = 4;
        t.length = 996;
        assert_eq!(t.plain_parquet_blocker(), Some("part of a file"));

        let mut t = task();
        t.identity_partition_fields = vec![(3, 0)];
        t.identity_columns_in_file = false;
        assert_eq!(t.plain_parquet_blocker(), Some("identity partition column not known to be in the file"));
        t.identity_columns_in_file = true;
        assert_eq!(t.plain_parquet_blocker(), None);
    }

    #[test]
    fn the_planning_flag_does_not_travel() {
        let mut t = task();
        t.identity_partition_fields = vec![(3, 0)];
        let back = FileScanTask::from_json(&t.to_json().unwrap()).unwrap();
        assert!(!back.identity_columns_in_file, "a task read back from JSON knows nothing of the file");
        assert_eq!(back.identity_partition_fields, vec![(3, 0)]);
    }
}
