//! Iceberg <-> Arrow: schema conversion and reading Parquet data files by field id.

pub mod schema;

pub use schema::{
    arrow_field_id, field_to_arrow, schema_from_arrow, schema_from_arrow_with, schema_to_arrow,
    type_to_arrow, FromArrowOptions, PARQUET_FIELD_ID_KEY,
};
pub mod reader;

pub use reader::{read_parquet, ArrowReader};
