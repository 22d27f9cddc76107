//! Manifest lists and manifests (Avro): read and write, with the spec's inheritance rules.

mod avro;
pub mod data_file;

pub use data_file::{DataContentType, DataFile, FileFormat};
pub mod manifest_list;
mod schema_json;

pub use manifest_list::{
    read_manifest_list, read_manifest_list_bytes, FieldSummary, ManifestContent, ManifestFile,
    ManifestListWriter, UNASSIGNED_SEQ,
};
