//! Manifest lists and manifests (Avro): read and write, with the spec's inheritance rules.
//!
//! Both are decoded by our own Avro codec (`avro.rs`) through a plan compiled once per file
//! from the writer schema, resolving fields by field id (v1, v2 and v3 files read alike).

mod avro;
pub mod data_file;
#[allow(clippy::module_inception)]
pub mod manifest;
pub mod manifest_list;
mod manifest_serde;
mod schema_json;

#[cfg(test)]
mod golden_tests;

pub use data_file::{DataContentType, DataFile, FileFormat};
pub use manifest::{
    read_manifest, read_manifest_with_metadata, EntryStatus, Manifest, ManifestEntry, ManifestMetadata,
    ManifestWriter,
};
pub use manifest_list::{
    read_manifest_list, read_manifest_list_bytes, FieldSummary, ManifestContent, ManifestFile,
    ManifestListWriter, UNASSIGNED_SEQ,
};
