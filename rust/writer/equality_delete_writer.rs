//! Equality-delete files (spec: "Equality Delete Files"; Flink's upsert writer,
//! `BaseEqualityDeltaWriter.deleteKey`): Parquet files holding the key columns of deleted
//! rows, `equality_ids` naming those columns, written into the partition of the rows they
//! delete with the table's metrics settings.
//!
//! An equality delete applies only to data files of its own spec and partition (or to every
//! file when its spec is unpartitioned). So that a delete by key reaches the old row wherever
//! it lives, every partition source column of the table's spec must be one of the equality
//! columns — the rule Flink enforces for upserts; anything else is refused with the column
//! named. After partition evolution the live rows may sit in files of older specs too: the
//! keys are then written once per live spec, each copy partitioned by its spec
//! ([`equality_delete_specs`]), or under an unpartitioned spec of the table when one has live
//! files (one global copy reaches all).

use std::collections::BTreeMap;

use arrow_array::RecordBatch;

use super::data_writer::write_delete_files_with;
use super::parquet_writer::TARGET_FILE_SIZE_BYTES;
use super::position_delete_writer::DELETE_TARGET_FILE_SIZE_BYTES;
use crate::error::{invalid_data, validation, Result};
use crate::manifest::{read_manifest_list, DataContentType, DataFile, ManifestContent};
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

/// The partition specs equality deletes on `equality_ids` must be written under to reach
/// every live row of `snapshot_id` (the branch head the delete applies to): the default spec
/// and every spec with live data files in that snapshot's manifests, or only an unpartitioned
/// one of them when there is one (its deletes apply to every file). `None` when some live
/// spec is partitioned by a column that is not an equality column: no equality delete can
/// reach its rows by key, and the caller must rewrite them (copy-on-write) instead.
pub fn equality_delete_specs(
    table: &TableMetadata,
    snapshot_id: Option<i64>,
    equality_ids: &[i32],
) -> Result<Option<Vec<i32>>> {
    let mut specs = vec![table.default_spec_id()];
    if let Some(id) = snapshot_id {
        let snapshot = table
            .snapshot_by_id(id)
            .ok_or_else(|| validation(format!("expected a snapshot of the table, found id {id}")))?;
        if let Some(list) = &snapshot.manifest_list {
            for m in read_manifest_list(list)? {
                let live = m.has_added_files() || m.has_existing_files();
                if m.content == ManifestContent::Data && live && !specs.contains(&m.partition_spec_id) {
                    specs.push(m.partition_spec_id);
                }
            }
        }
    }
    let mut chosen = Vec::with_capacity(specs.len());
    for id in specs {
        let spec = table.spec_by_id(id).ok_or_else(|| {
            invalid_data(format!("a manifest names partition spec {id}, which the table lacks"))
        })?;
        if spec.is_unpartitioned() {
            return Ok(Some(vec![id]));
        }
        if !spec.fields().iter().all(|f| equality_ids.contains(&f.source_id)) {
            return Ok(None);
        }
        chosen.push(id);
    }
    Ok(Some(chosen))
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
    write_equality_deletes_in(table, equality_ids, batches, write_id, task_id, &[table.default_spec_id()])
}

/// [`write_equality_deletes`] once per spec of `spec_ids` (from [`equality_delete_specs`]),
/// each copy partitioned by its spec; a copy under a spec other than the first carries
/// `<write_id>-s<spec id>` in its file names (still found by the write's id on abort).
pub fn write_equality_deletes_in(
    table: &TableMetadata,
    equality_ids: &[i32],
    batches: impl Iterator<Item = Result<RecordBatch>>,
    write_id: &str,
    task_id: u32,
    spec_ids: &[i32],
) -> Result<Vec<DataFile>> {
    let schema = equality_delete_schema(table, equality_ids)?;
    let mut props: BTreeMap<String, String> = table.properties().clone();
    let target =
        props.get(DELETE_TARGET_FILE_SIZE_BYTES).cloned().unwrap_or_else(|| (64u64 << 20).to_string());
    props.insert(TARGET_FILE_SIZE_BYTES.to_string(), target);
    let mut ids: Vec<i32> = schema.fields().iter().map(|f| f.id).collect();
    ids.sort_unstable();
    let specs = spec_ids
        .iter()
        .map(|id| {
            table.spec_by_id(*id).ok_or_else(|| {
                validation(format!(
                    "expected a partition spec id of the table for equality deletes, found {id}"
                ))
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let mut files = match specs.as_slice() {
        [] => return Err(validation("equality deletes need a partition spec to be written under")),
        [spec] => {
            let order = table.default_sort_order();
            write_delete_files_with(
                &schema,
                spec,
                order,
                table.location(),
                &props,
                batches,
                write_id,
                task_id,
            )?
        }
        several => {
            // Key rows are small (the key columns only): kept to write one copy per spec.
            let keys = batches.collect::<Result<Vec<RecordBatch>>>()?;
            let mut files: Vec<DataFile> = Vec::new();
            for (k, spec) in several.iter().enumerate() {
                let id =
                    if k == 0 { write_id.to_string() } else { format!("{write_id}-s{}", spec.spec_id()) };
                let written = write_delete_files_with(
                    &schema,
                    spec,
                    table.default_sort_order(),
                    table.location(),
                    &props,
                    keys.iter().cloned().map(Ok),
                    &id,
                    task_id,
                );
                match written {
                    Ok(w) => files.extend(w),
                    Err(e) => {
                        for f in &files {
                            let _ = crate::io::delete_file(&f.file_path);
                        }
                        return Err(e);
                    }
                }
            }
            files
        }
    };
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
