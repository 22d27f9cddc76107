//! Manifest lists and manifests (Avro): read and write, with the spec's inheritance rules.

mod avro;
pub mod data_file;

pub use data_file::{DataContentType, DataFile, FileFormat};
