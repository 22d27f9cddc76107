//! Equality-delete files (spec: "Equality Delete Files"; Flink's upsert writer,
//! `BaseEqualityDeltaWriter.deleteKey`): Parquet files holding the key columns of deleted
//! rows, `equality_ids` naming those columns, written into the partition of the rows they
//! delete with the table's metrics settings.
//!
//! An equality delete applies only to data files of its own partition (or to every file when
//! its spec is unpartitioned). So that a delete by key reaches the old row wherever it lives,
//! every partition source column of the table's spec must be one of the equality columns —
//! the rule Flink enforces for upserts; anything else is refused with the column named.

use std::collections::BTreeMap;

use arrow_array::RecordBatch;

use super::data_writer::write_delete_files_with;
use super::parquet_writer::TARGET_FILE_SIZE_BYTES;
use super::position_delete_writer::DELETE_TARGET_FILE_SIZE_BYTES;
use crate::error::{validation, Result};
use crate::manifest::{DataContentType, DataFile};
use crate::spec::{NestedField, Schema, TableMetadata};

/// The schema of `table`'s equality-delete files on `equality_ids` (top-level primitive
/// columns of the current schema, in schema order).
pub fn equality_delete_schema(table: &TableMetadata, equality_ids: &[i32]) -> Result<Schema> {
    if equality_ids.is_empty() {
        return Err(validation("equality deletes need at least one equality column"));
    }
    let schema = table.current_schema();
    let mut fields: Vec<NestedField> = Vec::with_capacity(equality_ids.len());
    for &id in equality_ids {
        let f = schema.fields().iter().find(|f| f.id == id).ok_or_else(|| {
            validation(format!("equality field id {id} is not a top-level column of the table's schema"))
        })?;
        let ty = f.field_type.as_primitive().ok_or_else(|| {
            validation(format!(
                "equality column '{}' (field id {id}) has type {}; equality deletes need primitive columns",
                f.name, f.field_type
            ))
        })?;
        if matches!(ty, crate::spec::PrimitiveType::Float | crate::spec::PrimitiveType::Double) {
            return Err(validation(format!(
                "equality column '{}' (field id {id}) is a floating-point column; Iceberg does not allow \
                 float or double equality fields",
                f.name
            )));
        }
        fields.push(f.as_ref().clone());
    }
    let order: Vec<i32> = schema.fields().iter().map(|f| f.id).collect();
    fields.sort_by_key(|f| order.iter().position(|id| *id == f.id));
    fields.dedup_by_key(|f| f.id);
    for pf in table.default_spec().fields() {
        if !fields.iter().any(|f| f.id == pf.source_id) {
            let name = schema.field_by_id(pf.source_id).map(|f| f.name.clone()).unwrap_or_default();
            return Err(validation(format!(
                "the table is partitioned by '{}' (column '{name}', field id {}), which is not an equality \
                 column: an equality delete only reaches rows of its own partition, so the partition \
                 source columns must be among the key columns",
                pf.name, pf.source_id
            )));
        }
    }
    Schema::new(schema.schema_id(), fields, vec![])
}

/// Writes `batches` (the key columns of [`equality_delete_schema`], by name) as equality
/// delete files of `table` on `equality_ids`, partitioned by the default spec. Files are
/// named `<task_id:05>-<write_id>-<n:05>-deletes.parquet`; on error every file written is
/// deleted.
pub fn write_equality_deletes(
    table: &TableMetadata,
    equality_ids: &[i32],
    batches: impl Iterator<Item = Result<RecordBatch>>,
    write_id: &str,
    task_id: u32,
) -> Result<Vec<DataFile>> {
    let schema = equality_delete_schema(table, equality_ids)?;
    let mut props: BTreeMap<String, String> = table.properties().clone();
    let target =
        props.get(DELETE_TARGET_FILE_SIZE_BYTES).cloned().unwrap_or_else(|| (64u64 << 20).to_string());
    props.insert(TARGET_FILE_SIZE_BYTES.to_string(), target);
    let mut ids: Vec<i32> = schema.fields().iter().map(|f| f.id).collect();
    ids.sort_unstable();
    let mut files = write_delete_files_with(
        &schema,
        table.default_spec(),
        table.location(),
        &props,
        batches,
        write_id,
        task_id,
    )?;
    for f in &mut files {
        f.content = DataContentType::EqualityDeletes;
        f.equality_ids = Some(ids.clone());
        f.sort_order_id = None;
    }
    Ok(files)
}

#[cfg(test)]
#[path = "equality_delete_writer_tests.rs"]
mod tests;
