//! Writing data files: Parquet with field ids and Iceberg's physical types, metrics from the
//! footer and the data, rolling to a target file size, partitioned fanout.

pub mod metrics;
pub mod parquet_writer;
pub mod rolling;

pub use metrics::{MetricsConfig, MetricsMode};
pub use parquet_writer::{ParquetFileWriter, ParquetWriterProps};
pub use rolling::RollingDataWriter;
