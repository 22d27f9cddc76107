//! Puffin files (format v3 and statistics): the container's footer and blobs, the
//! `deletion-vector-v1` blob that holds a data file's deleted positions (reading them, and
//! writing deletion-vector files as Iceberg Java does), and the `apache-datasketches-theta-v1`
//! distinct-value sketches of table statistics (`theta`).

#[cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]
mod byte_range;
#[cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]
pub mod deletion_vector;
#[cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]
pub mod file;
#[cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]
pub mod theta;
pub mod writer;

#[cfg(test)]
#[path = "deletion_vector_tests.rs"]
mod deletion_vector_tests;

pub use deletion_vector::{load_deletion_vector, read_deletion_vector, DeletionVector, DV_MAGIC};
pub use file::{
    BlobMetadata, FileMetadata, PuffinFile, CARDINALITY, CREATED_BY, DELETION_VECTOR_V1, MAGIC,
    REFERENCED_DATA_FILE,
};
pub use theta::{compact_estimate, union_compact, NdvSketch, APACHE_DATASKETCHES_THETA_V1, NDV};
pub use writer::{created_by, Blob, PuffinWriter, ROW_POSITION_FIELD_ID};
