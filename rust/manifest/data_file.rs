//! DataFile: one data or delete file as recorded in a manifest entry (the spec's `data_file` struct).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{invalid_data, Result};
use crate::spec::StructValue;

/// `content` of a data_file (field 134).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DataContentType {
    Data = 0,
    PositionDeletes = 1,
    EqualityDeletes = 2,
}

impl DataContentType {
    pub fn from_i32(v: i32) -> Result<Self> {
        match v {
            0 => Ok(Self::Data),
            1 => Ok(Self::PositionDeletes),
            2 => Ok(Self::EqualityDeletes),
            _ => Err(invalid_data(format!("expected data_file content 0, 1 or 2, found {v}"))),
        }
    }
}

/// `file_format` (field 101). Written upper case, read case-insensitively (checklist T10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FileFormat {
    Parquet,
    Avro,
    Orc,
    Puffin,
}

impl FileFormat {
    pub fn parse(s: &str) -> Result<Self> {
        match s.to_ascii_uppercase().as_str() {
            "PARQUET" => Ok(Self::Parquet),
            "AVRO" => Ok(Self::Avro),
            "ORC" => Ok(Self::Orc),
            "PUFFIN" => Ok(Self::Puffin),
            _ => Err(invalid_data(format!("expected file_format PARQUET, AVRO, ORC or PUFFIN, found '{s}'"))),
        }
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Parquet => "PARQUET",
            Self::Avro => "AVRO",
            Self::Orc => "ORC",
            Self::Puffin => "PUFFIN",
        }
    }
}

/// A data or delete file with its metrics. Metric maps are keyed by field id; an absent
/// key means "unknown" (no metric), never zero. Bounds are the spec's single-value bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DataFile {
    pub content: DataContentType,
    pub file_path: String,
    pub file_format: FileFormat,
    /// The partition tuple, one value per field of the file's partition spec.
    pub partition: StructValue,
    pub record_count: i64,
    pub file_size_in_bytes: i64,
    pub column_sizes: BTreeMap<i32, i64>,
    pub value_counts: BTreeMap<i32, i64>,
    pub null_value_counts: BTreeMap<i32, i64>,
    pub nan_value_counts: BTreeMap<i32, i64>,
    pub lower_bounds: BTreeMap<i32, Vec<u8>>,
    pub upper_bounds: BTreeMap<i32, Vec<u8>>,
    pub key_metadata: Option<Vec<u8>>,
    pub split_offsets: Option<Vec<i64>>,
    pub equality_ids: Option<Vec<i32>>,
    pub sort_order_id: Option<i32>,
    pub referenced_data_file: Option<String>,
    /// v3 row lineage (142): the row id of the file's first row; a null one in a manifest
    /// with a `first_row_id` is assigned on read (`Manifest::inherit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_row_id: Option<i64>,
    /// v3 deletion vectors (144, 145): where the blob lies in its Puffin file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_offset: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_size_in_bytes: Option<i64>,
    /// The spec id of the partition tuple (not stored in the Avro record: it is the
    /// manifest's spec id; carried here so a DataFile is self-describing across the
    /// executor -> driver door).
    pub spec_id: i32,
    /// The metric maps the manifest held as empty maps rather than nulls (`EMPTY_*` bits):
    /// Java writes `nan_value_counts` as an empty map for a file without float columns, and
    /// its `files` table shows `{}` there, not null. Kept so a read shows the same and a
    /// rewritten manifest writes the same.
    #[serde(default, skip_serializing_if = "no_empty_maps")]
    pub empty_metric_maps: u8,
}

/// Bits of `DataFile::empty_metric_maps`.
pub const EMPTY_COLUMN_SIZES: u8 = 1;
pub const EMPTY_VALUE_COUNTS: u8 = 1 << 1;
pub const EMPTY_NULL_VALUE_COUNTS: u8 = 1 << 2;
pub const EMPTY_NAN_VALUE_COUNTS: u8 = 1 << 3;
pub const EMPTY_LOWER_BOUNDS: u8 = 1 << 4;
pub const EMPTY_UPPER_BOUNDS: u8 = 1 << 5;

fn no_empty_maps(bits: &u8) -> bool {
    *bits == 0
}

impl DataFile {
    /// A data file with no metrics, for building by hand.
    pub fn new_data(file_path: impl Into<String>, record_count: i64, file_size_in_bytes: i64) -> Self {
        DataFile {
            content: DataContentType::Data,
            file_path: file_path.into(),
            file_format: FileFormat::Parquet,
            partition: vec![],
            record_count,
            file_size_in_bytes,
            column_sizes: BTreeMap::new(),
            value_counts: BTreeMap::new(),
            null_value_counts: BTreeMap::new(),
            nan_value_counts: BTreeMap::new(),
            lower_bounds: BTreeMap::new(),
            upper_bounds: BTreeMap::new(),
            key_metadata: None,
            split_offsets: None,
            equality_ids: None,
            sort_order_id: None,
            referenced_data_file: None,
            first_row_id: None,
            content_offset: None,
            content_size_in_bytes: None,
            spec_id: 0,
            empty_metric_maps: 0,
        }
    }

    /// What names this file in a removal: its path, except for a deletion vector, one of
    /// several blobs a Puffin file may hold (of different data files): path NUL offset.
    pub fn removal_key(&self) -> std::borrow::Cow<'_, str> {
        match (self.file_format, self.content_offset) {
            (FileFormat::Puffin, Some(offset)) => {
                std::borrow::Cow::Owned(format!("{}\u{0}{offset}", self.file_path))
            }
            _ => std::borrow::Cow::Borrowed(self.file_path.as_str()),
        }
    }

    /// The descriptor form that crosses the executor -> driver door (JSON).
    pub fn to_descriptor(&self) -> Result<String> {
        serde_json::to_string(self).map_err(|e| invalid_data("cannot serialize DataFile").with_source(e))
    }

    pub fn from_descriptor(s: &str) -> Result<Self> {
        serde_json::from_str(s).map_err(|e| invalid_data("malformed DataFile descriptor").with_source(e))
    }
}
