//! `manifests` and `all_manifests` (Java `ManifestsTable`, `AllManifestsTable`): one row per
//! manifest of a snapshot's manifest list (of every snapshot's, for `all_manifests`), with the
//! partition summaries rendered in the transforms' human form.

use arrow_array::RecordBatch;
use arrow_schema::{DataType, SchemaRef};

use super::cells::{batch, field, list_type, schema_ref, struct_of, Cell};
use super::manifest_lists::manifest_list;
use super::partition_types::SpecTypes;
use crate::error::Result;
use crate::manifest::{FieldSummary, ManifestContent, ManifestFile};
use crate::spec::{Literal, Snapshot, TableMetadata};

fn summaries_type(contains_nan_nullable: bool) -> DataType {
    list_type(
        struct_of(vec![
            field("contains_null", DataType::Boolean, false),
            field("contains_nan", DataType::Boolean, contains_nan_nullable),
            field("lower_bound", DataType::Utf8, true),
            field("upper_bound", DataType::Utf8, true),
        ]),
        false,
    )
}

pub(crate) fn manifests_schema() -> SchemaRef {
    schema_ref(vec![
        field("content", DataType::Int32, false),
        field("path", DataType::Utf8, false),
        field("length", DataType::Int64, false),
        field("partition_spec_id", DataType::Int32, false),
        field("added_snapshot_id", DataType::Int64, false),
        field("added_data_files_count", DataType::Int32, false),
        field("existing_data_files_count", DataType::Int32, false),
        field("deleted_data_files_count", DataType::Int32, false),
        field("added_delete_files_count", DataType::Int32, false),
        field("existing_delete_files_count", DataType::Int32, false),
        field("deleted_delete_files_count", DataType::Int32, false),
        field("partition_summaries", summaries_type(true), false),
    ])
}

pub(crate) fn all_manifests_schema() -> SchemaRef {
    schema_ref(vec![
        field("content", DataType::Int32, false),
        field("path", DataType::Utf8, false),
        field("length", DataType::Int64, false),
        field("partition_spec_id", DataType::Int32, true),
        field("added_snapshot_id", DataType::Int64, true),
        field("added_data_files_count", DataType::Int32, true),
        field("existing_data_files_count", DataType::Int32, true),
        field("deleted_data_files_count", DataType::Int32, true),
        field("added_delete_files_count", DataType::Int32, false),
        field("existing_delete_files_count", DataType::Int32, false),
        field("deleted_delete_files_count", DataType::Int32, false),
        field("partition_summaries", summaries_type(false), true),
        field("reference_snapshot_id", DataType::Int64, false),
        // Iceberg Java 1.12 added the manifest's encryption key metadata here (not to `manifests`).
        field("key_metadata", DataType::Binary, true),
    ])
}

/// The partition summaries of a manifest, bounds in the human form of the field's transform
/// (Java `ManifestsTable.partitionSummariesToRows`).
fn summaries(specs: &SpecTypes, m: &ManifestFile) -> Result<Cell> {
    let Some(list) = &m.partitions else { return Ok(Cell::Null) };
    let (spec, ptype) = specs.get(m.partition_spec_id)?;
    let mut out = Vec::with_capacity(list.len());
    for (i, s) in list.iter().enumerate() {
        let (Some(pf), Some(tf)) = (spec.fields.get(i), ptype.fields.get(i)) else {
            return Err(crate::error::invalid_data(format!(
                "manifest has {} partition summaries but spec {} has {} fields",
                list.len(),
                spec.spec_id,
                spec.fields.len()
            ))
            .with_context("file", m.manifest_path.clone()));
        };
        let ty = tf.field_type.as_primitive().ok_or_else(|| {
            crate::error::invalid_data(format!("partition field '{}' is not primitive", tf.name))
        })?;
        let human = |b: &Option<Vec<u8>>| -> Result<Cell> {
            let v = b.as_deref().map(|b| Literal::from_bytes(ty, b)).transpose().map_err(|e| {
                e.with_context("file", m.manifest_path.clone()).with_context("partition field", &tf.name)
            })?;
            Ok(Cell::Str(pf.transform.to_human_string(ty, v.as_ref())))
        };
        let FieldSummary { contains_null, contains_nan, lower_bound, upper_bound } = s;
        out.push(Cell::Struct(vec![
            Cell::Bool(*contains_null),
            contains_nan.map_or(Cell::Null, Cell::Bool),
            human(lower_bound)?,
            human(upper_bound)?,
        ]));
    }
    Ok(Cell::List(out))
}

fn manifest_row(specs: &SpecTypes, m: &ManifestFile) -> Result<Vec<Cell>> {
    let data = m.content == ManifestContent::Data;
    let count = |v: Option<i32>, this: bool| Cell::Int(if this { v.unwrap_or(0) } else { 0 });
    Ok(vec![
        Cell::Int(m.content as i32),
        Cell::Str(m.manifest_path.clone()),
        Cell::Long(m.manifest_length),
        Cell::Int(m.partition_spec_id),
        Cell::Long(m.added_snapshot_id),
        count(m.added_files_count, data),
        count(m.existing_files_count, data),
        count(m.deleted_files_count, data),
        count(m.added_files_count, !data),
        count(m.existing_files_count, !data),
        count(m.deleted_files_count, !data),
        summaries(specs, m)?,
    ])
}

/// The manifests of `snapshot` (none when the table has no snapshot).
pub fn manifests(md: &TableMetadata, snapshot: Option<&Snapshot>) -> Result<RecordBatch> {
    let specs = SpecTypes::new(md);
    let mut rows = Vec::new();
    if let Some(snap) = snapshot {
        for m in manifest_list(snap)? {
            rows.push(manifest_row(&specs, &m)?);
        }
    }
    batch(manifests_schema(), rows)
}

/// The manifests of every snapshot, each with the snapshot that lists it.
pub fn all_manifests(md: &TableMetadata) -> Result<RecordBatch> {
    let specs = SpecTypes::new(md);
    let lists = crate::scan::parallel_map(md.snapshots(), crate::scan::default_threads(), manifest_list);
    let mut rows = Vec::new();
    for (snap, list) in md.snapshots().iter().zip(lists) {
        for m in list? {
            let mut row = manifest_row(&specs, &m)?;
            row.push(Cell::Long(snap.snapshot_id));
            row.push(m.key_metadata.clone().map_or(Cell::Null, Cell::Bytes));
            rows.push(row);
        }
    }
    batch(all_manifests_schema(), rows)
}
