//! Iceberg's nouns, no I/O: types, schemas, values, partition specs and transforms,
//! sort orders, snapshots and refs, table metadata (+ its versioned JSON wire form).

pub mod schema;
pub mod types;
pub mod values;

pub use schema::{Schema, SchemaRef};
pub use types::{ListType, MapType, NestedField, NestedFieldRef, PrimitiveType, StructType, Type};
pub use values::{Literal, StructValue};
