//! Manifest lists and manifests (Avro): read and write, with the spec's inheritance rules.
//!
//! Both are decoded by our own Avro codec (`avro.rs`) through a plan compiled once per file
//! from the writer schema, resolving fields by field id (v1, v2 and v3 files read alike).
//! Manifest entries: `manifest_decode` (plan + decoding), `manifest_encode` (v2 records),
//! `manifest_schema` (the v2 schema texts Java writes).

#[cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]
mod avro;
pub mod data_file;
#[allow(clippy::module_inception)]
#[cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]
pub mod manifest;
#[cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]
mod manifest_decode;
mod manifest_encode;
#[cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]
mod manifest_entry;
#[cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]
pub mod manifest_list;
mod manifest_schema;
mod manifest_writer;
mod schema_json;

#[cfg(test)]
#[path = "golden_tests.rs"]
mod golden_tests;

pub use data_file::{
    DataContentType, DataFile, FileFormat, EMPTY_COLUMN_SIZES, EMPTY_LOWER_BOUNDS, EMPTY_NAN_VALUE_COUNTS,
    EMPTY_NULL_VALUE_COUNTS, EMPTY_UPPER_BOUNDS, EMPTY_VALUE_COUNTS,
};
pub use manifest::{
    read_manifest, read_manifest_each, read_manifest_projected, read_manifest_with_metadata, Manifest,
    ManifestMetadata,
};
pub use manifest_decode::StatsProjection;
pub use manifest_entry::{EntryStatus, ManifestEntry};
pub use manifest_list::{
    read_manifest_list, read_manifest_list_bytes, FieldSummary, ManifestContent, ManifestFile,
    ManifestListWriter, UNASSIGNED_SEQ,
};
pub use manifest_writer::ManifestWriter;
