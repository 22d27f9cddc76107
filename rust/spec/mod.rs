//! Iceberg's nouns, no I/O: types, schemas, values, partition specs and transforms,
//! sort orders, snapshots and refs, table metadata (+ its versioned JSON wire form).

#[cfg(test)]
#[path = "golden_tests.rs"]
mod golden_tests;
pub mod location_provider;
pub mod metrics_truncate;
pub mod name_mapping;
pub mod partition;
#[cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]
pub mod schema;
pub mod snapshot;
pub mod sort_order;
#[cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]
pub mod sort_order_parse;
pub mod table_metadata;
mod table_metadata_branch;
mod table_metadata_expire;
#[cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]
mod table_metadata_serde;
mod table_metadata_update;
pub mod transform;
pub mod transform_arrow;
#[cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]
pub mod types;
#[cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]
mod value_binary;
mod value_human;
#[cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]
mod value_json;
#[cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]
mod value_partition_string;
pub mod values;

pub use location_provider::LocationProvider;
pub use metrics_truncate::{
    truncate_lower_binary, truncate_lower_string, truncate_upper_binary, truncate_upper_string,
};
pub use name_mapping::{MappedField, MappedFields, NameMapping, PROPERTY_NAME_MAPPING_DEFAULT};
pub use partition::{
    PartitionField, PartitionSpec, PartitionSpecBuilder, PARTITION_DATA_ID_START,
    UNPARTITIONED_LAST_ASSIGNED_ID,
};
pub use schema::{Schema, SchemaRef};
pub use snapshot::{
    MetadataLogEntry, Operation, Snapshot, SnapshotLogEntry, SnapshotRef, SnapshotRetention, Summary,
};
pub use sort_order::{NullOrder, SortDirection, SortField, SortOrder};
pub use sort_order_parse::{parse_sort_order_terms, SortTerm, TermDirection, TermNullOrder};
pub use table_metadata::{
    TableMetadata, PROPERTY_PARQUET_COMPRESSION, PROPERTY_PREVIOUS_VERSIONS_MAX,
    PROPERTY_PREVIOUS_VERSIONS_MAX_DEFAULT,
};
pub use table_metadata_update::MetadataUpdate;
pub use transform::{bucket_hash, Transform};
pub use transform_arrow::apply_transform_array;
pub use types::{
    Crs, DefaultKind, EdgeAlgorithm, ListType, MapType, NestedField, NestedFieldRef, PrimitiveType,
    StructType, Type, DEFAULT_CRS,
};
pub(crate) use value_binary::decimal_from_bytes;
pub use values::{same_partition, Literal, StructValue};
