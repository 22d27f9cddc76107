//! The file tables (Java `BaseFilesTable`: files, data_files, delete_files and the `all_`
//! variants) and the entry tables (Java `BaseEntriesTable`: entries, all_entries): the
//! manifests' `data_file` records with the table's partition type and `readable_metrics`
//! (Java `MetricsUtil.readableMetrics`: per primitive column of the current schema, the
//! file's metrics with the bounds decoded).

use std::collections::BTreeMap;

use arrow_array::RecordBatch;
use arrow_schema::{DataType, Field, SchemaRef};

use super::cells::{batch, field, list_type, map_type, primitive, schema_ref, struct_of, Cell};
use super::manifest_lists::{manifest_list, reachable_manifests};
use super::partition_types::table_partition_type;
use crate::error::{invalid_data, Result};
use crate::manifest::{
    read_manifest, DataFile, ManifestContent, ManifestEntry, ManifestFile, EMPTY_COLUMN_SIZES,
    EMPTY_LOWER_BOUNDS, EMPTY_NAN_VALUE_COUNTS, EMPTY_NULL_VALUE_COUNTS, EMPTY_UPPER_BOUNDS,
    EMPTY_VALUE_COUNTS,
};
use crate::scan::{default_threads, parallel_map};
use crate::spec::{Literal, PrimitiveType, Snapshot, StructType, TableMetadata, Type};

/// Which manifests a file table reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileContentFilter {
    All,
    Data,
    Deletes,
}

impl FileContentFilter {
    fn keeps(&self, m: &ManifestFile) -> bool {
        match self {
            Self::All => true,
            Self::Data => m.content == ManifestContent::Data,
            Self::Deletes => m.content == ManifestContent::Deletes,
        }
    }
}

/// One readable-metrics column: a primitive field of the current schema.
struct MetricColumn {
    name: String,
    id: i32,
    ty: PrimitiveType,
}

/// The primitive fields of the current schema, by qualified name (Java sorts them so).
fn metric_columns(md: &TableMetadata) -> Vec<MetricColumn> {
    let schema = md.current_schema();
    let mut out = Vec::new();
    let mut stack: Vec<&crate::spec::NestedFieldRef> = schema.fields().iter().collect();
    while let Some(f) = stack.pop() {
        match &f.field_type {
            Type::Primitive(p) => {
                if let Some(name) = schema.name_by_id(f.id) {
                    out.push(MetricColumn { name: name.to_string(), id: f.id, ty: p.clone() });
                }
            }
            Type::Struct(s) => stack.extend(s.fields.iter()),
            Type::List(l) => stack.push(&l.element_field),
            Type::Map(m) => {
                stack.push(&m.key_field);
                stack.push(&m.value_field);
            }
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

fn readable_metrics_type(cols: &[MetricColumn]) -> Result<DataType> {
    let fields = cols
        .iter()
        .map(|c| {
            let bound = primitive(&c.ty)?;
            Ok(field(
                &c.name,
                struct_of(vec![
                    field("column_size", DataType::Int64, true),
                    field("value_count", DataType::Int64, true),
                    field("null_value_count", DataType::Int64, true),
                    field("nan_value_count", DataType::Int64, true),
                    field("lower_bound", bound.clone(), true),
                    field("upper_bound", bound, true),
                ]),
                true,
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(struct_of(fields))
}

fn readable_metrics(cols: &[MetricColumn], f: &DataFile) -> Result<Cell> {
    let count = |m: &BTreeMap<i32, i64>, id: i32| Cell::opt_long(m.get(&id).copied());
    let bound = |m: &BTreeMap<i32, Vec<u8>>, c: &MetricColumn| -> Result<Cell> {
        match m.get(&c.id) {
            None => Ok(Cell::Null),
            // A bounding-box corner another engine wrote (x:y[:z[:m]] little-endian doubles),
            // shown as its bytes: it has no literal form.
            Some(b) if c.ty.is_geospatial() => Ok(Cell::Lit(Literal::Binary(b.clone()))),
            Some(b) => Literal::from_bytes(&c.ty, b).map(Cell::Lit).map_err(|e| {
                e.with_context("file", f.file_path.clone()).with_context("field id", c.id.to_string())
            }),
        }
    };
    let structs = cols
        .iter()
        .map(|c| {
            Ok(Cell::Struct(vec![
                count(&f.column_sizes, c.id),
                count(&f.value_counts, c.id),
                count(&f.null_value_counts, c.id),
                count(&f.nan_value_counts, c.id),
                bound(&f.lower_bounds, c)?,
                bound(&f.upper_bounds, c)?,
            ]))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Cell::Struct(structs))
}

/// The fields of Java's `DataFile.getType(partitionType)`, the partition left out when the
/// table has never been partitioned.
fn data_file_fields(ptype: &StructType) -> Result<Vec<Field>> {
    let counts = || map_type(DataType::Int32, DataType::Int64, false);
    let bounds = || map_type(DataType::Int32, DataType::Binary, false);
    let mut fields = vec![
        field("content", DataType::Int32, true),
        field("file_path", DataType::Utf8, false),
        field("file_format", DataType::Utf8, false),
        field("spec_id", DataType::Int32, true),
    ];
    if !ptype.fields.is_empty() {
        fields.push(field("partition", partition_arrow_type(ptype)?, false));
    }
    fields.extend([
        field("record_count", DataType::Int64, false),
        field("file_size_in_bytes", DataType::Int64, false),
        field("column_sizes", counts(), true),
        field("value_counts", counts(), true),
        field("null_value_counts", counts(), true),
        field("nan_value_counts", counts(), true),
        field("lower_bounds", bounds(), true),
        field("upper_bounds", bounds(), true),
        field("key_metadata", DataType::Binary, true),
        field("split_offsets", list_type(DataType::Int64, false), true),
        field("equality_ids", list_type(DataType::Int32, false), true),
        field("sort_order_id", DataType::Int32, true),
        field("first_row_id", DataType::Int64, true),
        field("referenced_data_file", DataType::Utf8, true),
        field("content_offset", DataType::Int64, true),
        field("content_size_in_bytes", DataType::Int64, true),
    ]);
    Ok(fields)
}

/// The Arrow struct of a partition type (optional fields, no field ids).
pub(crate) fn partition_arrow_type(ptype: &StructType) -> Result<DataType> {
    let fields = ptype
        .fields
        .iter()
        .map(|f| {
            let p = f
                .field_type
                .as_primitive()
                .ok_or_else(|| invalid_data(format!("partition field '{}' is not primitive", f.name)))?;
            Ok(field(&f.name, primitive(p)?, true))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(struct_of(fields))
}

/// A file's partition tuple in the table's partition type: values matched by partition field
/// id, null for fields the file's spec does not have (Java `PartitionUtil.coercePartition`).
/// Also returns how many of the table's fields the file's spec has.
pub(crate) fn coerce_partition(
    md: &TableMetadata,
    ptype: &StructType,
    f: &DataFile,
) -> Result<(Vec<Cell>, usize)> {
    let spec = md.spec_by_id(f.spec_id).ok_or_else(|| {
        invalid_data(format!("file names partition spec {}, which the table does not have", f.spec_id))
            .with_context("file", f.file_path.clone())
    })?;
    if spec.fields.len() != f.partition.len() {
        return Err(invalid_data(format!(
            "file has {} partition values but spec {} has {} fields",
            f.partition.len(),
            spec.spec_id,
            spec.fields.len()
        ))
        .with_context("file", f.file_path.clone()));
    }
    let mut found = 0;
    let values = ptype
        .fields
        .iter()
        .map(|tf| match spec.fields.iter().position(|sf| sf.field_id == tf.id) {
            Some(i) => {
                found += 1;
                // A value written before its field's promotion reads as the current type.
                let v = f.partition[i].as_ref();
                let promoted = v.zip(tf.field_type.as_primitive()).and_then(|(v, t)| v.promoted_to(t));
                Cell::opt_lit(promoted.or_else(|| v.cloned()))
            }
            None => Cell::Null,
        })
        .collect();
    Ok((values, found))
}

/// A metric map as Java's `files` table shows it: null when the manifest held none, `{}`
/// when it held an empty one (`present`).
fn count_map(m: &BTreeMap<i32, i64>, present: bool) -> Cell {
    if m.is_empty() && !present {
        return Cell::Null;
    }
    Cell::Map(m.iter().map(|(k, v)| (Cell::Int(*k), Cell::Long(*v))).collect())
}

fn bound_map(m: &BTreeMap<i32, Vec<u8>>, present: bool) -> Cell {
    if m.is_empty() && !present {
        return Cell::Null;
    }
    Cell::Map(m.iter().map(|(k, v)| (Cell::Int(*k), Cell::Bytes(v.clone()))).collect())
}

fn data_file_cells(md: &TableMetadata, ptype: &StructType, f: &DataFile) -> Result<Vec<Cell>> {
    let present = |bit: u8| f.empty_metric_maps & bit != 0;
    let mut cells = vec![
        Cell::Int(f.content as i32),
        Cell::Str(f.file_path.clone()),
        Cell::Str(f.file_format.as_str().to_string()),
        Cell::Int(f.spec_id),
    ];
    if !ptype.fields.is_empty() {
        cells.push(Cell::Struct(coerce_partition(md, ptype, f)?.0));
    }
    cells.extend([
        Cell::Long(f.record_count),
        Cell::Long(f.file_size_in_bytes),
        count_map(&f.column_sizes, present(EMPTY_COLUMN_SIZES)),
        count_map(&f.value_counts, present(EMPTY_VALUE_COUNTS)),
        count_map(&f.null_value_counts, present(EMPTY_NULL_VALUE_COUNTS)),
        count_map(&f.nan_value_counts, present(EMPTY_NAN_VALUE_COUNTS)),
        bound_map(&f.lower_bounds, present(EMPTY_LOWER_BOUNDS)),
        bound_map(&f.upper_bounds, present(EMPTY_UPPER_BOUNDS)),
        f.key_metadata.clone().map_or(Cell::Null, Cell::Bytes),
        f.split_offsets
            .as_ref()
            .map_or(Cell::Null, |v| Cell::List(v.iter().map(|o| Cell::Long(*o)).collect())),
        f.equality_ids.as_ref().map_or(Cell::Null, |v| Cell::List(v.iter().map(|i| Cell::Int(*i)).collect())),
        Cell::opt_int(f.sort_order_id),
        Cell::opt_long(f.first_row_id),
        Cell::opt_str(f.referenced_data_file.as_deref()),
        Cell::opt_long(f.content_offset),
        Cell::opt_long(f.content_size_in_bytes),
    ]);
    Ok(cells)
}

/// The manifests a table reads: the snapshot's (`Some(None)`: a table without snapshots),
/// or every reachable one (`None`).
fn manifests_of(md: &TableMetadata, snapshot: Option<Option<&Snapshot>>) -> Result<Vec<ManifestFile>> {
    match snapshot {
        Some(Some(s)) => manifest_list(s),
        Some(None) => Ok(Vec::new()),
        None => reachable_manifests(md),
    }
}

/// Every entry of the manifests, read in parallel, in manifest order.
pub(crate) fn read_entries(manifests: &[ManifestFile]) -> Result<Vec<ManifestEntry>> {
    let read = crate::scan::parallel_map(manifests, crate::scan::default_threads(), read_manifest);
    let mut out = Vec::new();
    for entries in read {
        out.extend(entries?);
    }
    Ok(out)
}

/// Each manifest's rows as one batch, made on the worker that read the manifest (in manifest
/// order): neither every entry nor every row of the table is held at once, only the batches.
/// At least one batch (empty, for no manifest), so that the schema always travels.
fn manifest_batches(
    manifests: &[ManifestFile],
    schema: &SchemaRef,
    rows_of: impl Fn(Vec<ManifestEntry>) -> Result<Vec<Vec<Cell>>> + Sync,
) -> Result<Vec<RecordBatch>> {
    let read =
        parallel_map(manifests, default_threads(), |m| batch(schema.clone(), rows_of(read_manifest(m)?)?));
    let mut batches = read.into_iter().collect::<Result<Vec<_>>>()?;
    if batches.is_empty() {
        batches.push(RecordBatch::new_empty(schema.clone()));
    }
    Ok(batches)
}

/// `files` / `data_files` / `delete_files` at a snapshot (`Some`), or their `all_` variants
/// over every reachable manifest (`None`): the live entries' files, one batch per manifest.
pub fn files(
    md: &TableMetadata,
    snapshot: Option<Option<&Snapshot>>,
    content: FileContentFilter,
) -> Result<Vec<RecordBatch>> {
    let ptype = table_partition_type(md)?;
    let cols = metric_columns(md);
    let mut fields = data_file_fields(&ptype)?;
    fields.push(field("readable_metrics", readable_metrics_type(&cols)?, true));
    let schema: SchemaRef = schema_ref(fields);
    let manifests: Vec<ManifestFile> =
        manifests_of(md, snapshot)?.into_iter().filter(|m| content.keeps(m)).collect();
    manifest_batches(&manifests, &schema, |entries| {
        let mut rows = Vec::with_capacity(entries.len());
        for e in entries.iter().filter(|e| e.status.is_live()) {
            let mut row = data_file_cells(md, &ptype, &e.data_file)?;
            row.push(readable_metrics(&cols, &e.data_file)?);
            rows.push(row);
        }
        Ok(rows)
    })
}

/// `entries` at a snapshot (`Some`) or `all_entries` (`None`): every manifest entry, deleted
/// ones included, with the inherited snapshot id and sequence numbers; one batch per manifest.
pub fn entries(md: &TableMetadata, snapshot: Option<Option<&Snapshot>>) -> Result<Vec<RecordBatch>> {
    entries_of(md, &manifests_of(md, snapshot)?)
}

/// The `entries` rows of the manifests `snapshot` wrote itself (`added_snapshot_id` is its
/// id): every entry it added or deleted is in them, with older ones as existing. An
/// incremental computation reads these instead of every manifest of each snapshot (Java's
/// `PartitionStatsHandler` reads the manifests of its snapshot range the same way).
pub fn snapshot_own_entries(md: &TableMetadata, snapshot: &Snapshot) -> Result<Vec<RecordBatch>> {
    let own: Vec<ManifestFile> = manifest_list(snapshot)?
        .into_iter()
        .filter(|m| m.added_snapshot_id == snapshot.snapshot_id)
        .collect();
    entries_of(md, &own)
}

fn entries_of(md: &TableMetadata, manifests: &[ManifestFile]) -> Result<Vec<RecordBatch>> {
    let ptype = table_partition_type(md)?;
    let cols = metric_columns(md);
    let schema = schema_ref(vec![
        field("status", DataType::Int32, false),
        field("snapshot_id", DataType::Int64, true),
        field("sequence_number", DataType::Int64, true),
        field("file_sequence_number", DataType::Int64, true),
        field("data_file", struct_of(data_file_fields(&ptype)?), false),
        field("readable_metrics", readable_metrics_type(&cols)?, true),
    ]);
    manifest_batches(manifests, &schema, |entries| {
        let mut rows = Vec::with_capacity(entries.len());
        for e in entries {
            rows.push(vec![
                Cell::Int(e.status as i32),
                Cell::opt_long(e.snapshot_id),
                Cell::opt_long(e.sequence_number),
                Cell::opt_long(e.file_sequence_number),
                Cell::Struct(data_file_cells(md, &ptype, &e.data_file)?),
                readable_metrics(&cols, &e.data_file)?,
            ]);
        }
        Ok(rows)
    })
}
