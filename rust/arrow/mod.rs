//! Iceberg <-> Arrow: schema conversion, reading Parquet data files by field id, and the
//! executor's task reader (position and equality deletes, metadata columns, v3 default values).

pub(crate) mod constants;
pub(crate) mod defaults;
pub mod delete_cache;
#[cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]
mod delete_filter;
#[cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]
pub mod equality_deletes;
#[cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]
pub(crate) mod field_match;
#[cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]
pub(crate) mod footer_schema;
#[cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]
pub mod geoarrow;
#[cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]
pub mod guard;
pub mod key_set;
#[cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]
pub(crate) mod name_mapped;
#[cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]
pub mod position_deletes;
#[cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]
pub mod read_task;
#[cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]
pub mod reader;
pub mod row_keys;
pub mod schema;
mod variant;

pub use read_task::{
    contains_field_id, read_task, ReadOptions, TaskReader, FILE_PATH_FIELD_ID, LAST_UPDATED_SEQ_FIELD_ID,
    ROW_ID_FIELD_ID, ROW_POS_FIELD_ID,
};
/// `values` (a child, or deeper descendant, of the struct column `parent`, row for row) null
/// wherever `parent` is null: a field of a null struct is null. What partition sources, sort
/// keys and row filters on nested fields read.
pub fn null_where_parent_null(
    parent: &arrow_array::StructArray,
    values: arrow_array::ArrayRef,
) -> std::result::Result<arrow_array::ArrayRef, arrow_schema::ArrowError> {
    use arrow_array::Array;
    if parent.nulls().is_none() {
        return Ok(values);
    }
    let nulls = arrow_buffer::NullBuffer::union(parent.nulls(), values.nulls());
    Ok(arrow_array::make_array(values.to_data().into_builder().nulls(nulls).build()?))
}

pub use reader::{can_read_as, can_write_as, read_parquet, ArrowReader, DEFAULT_BATCH_SIZE};
pub use schema::{
    arrow_field_id, field_to_arrow, primitive_to_arrow, schema_from_arrow, schema_from_arrow_with,
    schema_to_arrow, type_to_arrow, FromArrowOptions, PARQUET_FIELD_ID_KEY, UTC_TZ,
};
