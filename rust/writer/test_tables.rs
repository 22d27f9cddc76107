//! The small table the writer, commit and maintenance tests share: `id long (required), region string`,
//! identity-partitioned by region, and batches of it.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch, StringArray};

use crate::spec::{NestedField, PartitionSpec, PrimitiveType, Schema, TableMetadata};

pub(crate) fn schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long.into()),
            NestedField::optional(2, "region", PrimitiveType::String.into()),
        ],
        vec![],
    )
    .expect("test schema")
}

/// A new table of format `version` at `dir` with `props`, partitioned by region.
pub(crate) fn table(dir: &std::path::Path, props: &[(&str, &str)], version: i32) -> TableMetadata {
    let spec = PartitionSpec::builder(&schema()).identity("region").expect("region").build().expect("spec");
    let props: BTreeMap<String, String> = props.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let location = dir.to_str().expect("utf-8 test dir");
    TableMetadata::new_table(schema(), Some(spec), None, location, props, version).expect("test table")
}

/// Rows `ids` of one region.
pub(crate) fn batch(ids: std::ops::Range<i64>, region: &str) -> RecordBatch {
    let arrow = Arc::new(crate::arrow::schema_to_arrow(&schema()).expect("arrow schema"));
    let n = usize::try_from(ids.end - ids.start).expect("ascending ids");
    RecordBatch::try_new(
        arrow,
        vec![
            Arc::new(Int64Array::from_iter_values(ids)),
            Arc::new(StringArray::from_iter_values(std::iter::repeat_n(region, n))),
        ],
    )
    .expect("test batch")
}
