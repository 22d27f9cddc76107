//! FileScanTask: what a read task on an executor needs, serialised as JSON across the door.

use serde::{Deserialize, Serialize};

use crate::error::{invalid_data, Result};
use crate::manifest::DataFile;

/// A byte range of one data file to read. (Delete files and residuals arrive with
/// merge-on-read and the scan planner.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileScanTask {
    pub file: DataFile,
    pub start: i64,
    pub length: i64,
}

impl FileScanTask {
    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string(self).map_err(|e| invalid_data("cannot serialize FileScanTask").with_source(e))
    }

    pub fn from_json(s: &str) -> Result<Self> {
        serde_json::from_str(s).map_err(|e| invalid_data("malformed FileScanTask").with_source(e))
    }
}
