//! Iceberg <-> Arrow: schema conversion and reading Parquet data files by field id.

pub mod reader;
pub mod schema;

pub use reader::{can_read_as, can_write_as, read_parquet, ArrowReader, DEFAULT_BATCH_SIZE};
pub use schema::{
    arrow_field_id, field_to_arrow, primitive_to_arrow, schema_from_arrow, schema_from_arrow_with,
    schema_to_arrow, type_to_arrow, FromArrowOptions, PARQUET_FIELD_ID_KEY, UTC_TZ,
};
