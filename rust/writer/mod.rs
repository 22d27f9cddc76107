//! Writing data files: Parquet with field ids and Iceberg's physical types, metrics from the
//! footer and the data, rolling to a target file size, partitioned fanout.

pub mod data_writer;
pub mod metrics;
pub mod parquet_writer;
pub mod rolling;

pub use data_writer::{check_arrow_schema, conform_batch, write_data_files, write_data_files_with};
pub use metrics::{MetricsConfig, MetricsMode};
pub use parquet_writer::{ParquetFileWriter, ParquetWriterProps};
pub use rolling::RollingDataWriter;
