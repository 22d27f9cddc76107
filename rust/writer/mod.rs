//! Writing data files: Parquet with field ids and Iceberg's physical types, metrics from the
//! footer and the data, rolling to a target file size, partitioned fanout and clustered writers
//! with transforms computed on Arrow arrays, optional sorting within files; position deletes as
//! Parquet files (v2) or deletion vectors in Puffin files (v3).

pub mod data_writer;
pub mod delete_task;
mod deleted_positions;
mod dictionary;
pub mod dv_writer;
pub mod equality_delete_writer;
#[cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]
mod geo_statistics;
mod geometry_bounds;
pub mod input_schema;
pub mod metrics;
mod metrics_config;
pub mod parquet_import;
pub mod parquet_writer;
pub mod partitioned;
pub mod partitioner;
pub mod position_delete_writer;
pub mod rolling;
mod sorter;
pub mod zorder;

pub use data_writer::{
    write_data_files, write_data_files_opts, write_data_files_with, WriteOptions, WriterMode,
};
pub use delete_task::{convert_equality_deletes, delete_rows, write_position_deletes, DeleteTaskResult};
pub use dv_writer::DeletionVectorWriter;
pub use equality_delete_writer::{
    equality_delete_schema, equality_delete_specs, write_equality_deletes, write_equality_deletes_in,
};
pub use input_schema::{check_arrow_schema, conform_batch};
pub use metrics::{metrics_leaf_ids, MetricsConfig, MetricsMode};
pub use parquet_writer::{ParquetFileWriter, ParquetWriterProps};
pub use position_delete_writer::{DeleteGranularity, PositionDeleteWriter};
pub use rolling::RollingDataWriter;
pub use sorter::{check_sort_order, SPILL_DIR_ENV};
#[cfg(test)]
#[path = "partitioned_tests.rs"]
mod partitioned_tests;
#[cfg(test)]
pub(crate) mod test_tables;
