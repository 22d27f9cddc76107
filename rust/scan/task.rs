//! FileScanTask: what a read task on an executor needs, serialised as JSON across the door.
//!
//! Produced by the planner (driver), consumed by the read path (executor). The delete
//! files attached to a task are exactly those the spec's sequence-number and scope rules
//! apply to this data file; the reader must apply all of them or refuse the task.

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
}

impl FileScanTask {
    /// A task reading a whole data file with no deletes and no residual.
    pub fn whole_file(file: DataFile, data_sequence_number: i64) -> Self {
        let length = file.file_size_in_bytes;
        FileScanTask { file, start: 0, length, data_sequence_number, deletes: vec![], residual: None }
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
