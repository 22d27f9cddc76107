//! A manifest entry (the `manifest_entry` record): a data or delete file with its status, its
//! snapshot id and its sequence numbers. What a manifest holds (`manifest.rs`), what
//! `manifest_decode` decodes and `manifest_encode` / `manifest_writer` write.

use serde::{Deserialize, Serialize};

use super::data_file::DataFile;
use crate::error::{invalid_data, Result};

/// `status` of a manifest entry (field 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EntryStatus {
    Existing = 0,
    Added = 1,
    Deleted = 2,
}

impl EntryStatus {
    pub fn from_i32(v: i32) -> Result<Self> {
        match v {
            0 => Ok(Self::Existing),
            1 => Ok(Self::Added),
            2 => Ok(Self::Deleted),
            _ => Err(invalid_data(format!("expected manifest entry status 0, 1 or 2, found {v}"))),
        }
    }

    /// ADDED or EXISTING: the file is part of the snapshot.
    pub fn is_live(&self) -> bool {
        !matches!(self, Self::Deleted)
    }
}

/// One `manifest_entry`. After [`read_manifest`], `snapshot_id` and the sequence numbers are
/// inherited values; when writing, `None` means "inherit" (ADDED entries).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestEntry {
    pub status: EntryStatus,
    pub snapshot_id: Option<i64>,
    /// The data sequence number.
    pub sequence_number: Option<i64>,
    pub file_sequence_number: Option<i64>,
    pub data_file: DataFile,
}
