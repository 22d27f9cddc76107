//! `position_deletes` (Java `PositionDeletesTable`): one row per deleted position of the live
//! position delete files of a snapshot (Parquet delete files and v3 deletion vectors), with
//! the delete file's partition (in the table's partition type), spec and path.

use std::sync::Arc;

use arrow_array::{new_null_array, ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Schema as ArrowSchema};

use super::cells::{field, to_array, Cell};
use super::files::{coerce_partition, partition_arrow_type, read_entries};
use super::manifest_lists::manifest_list;
use super::partition_types::table_partition_type;
use crate::arrow::{read_parquet, type_to_arrow, DEFAULT_BATCH_SIZE};
use crate::error::{invalid_data, Result};
use crate::manifest::{DataContentType, DataFile, FileFormat};
use crate::spec::{NestedField, PrimitiveType, Schema, Snapshot, TableMetadata, Type};

/// Reserved field ids of a position delete file's columns (spec: "Position Delete Files").
const DELETE_FILE_PATH_ID: i32 = 2147483546;
const DELETE_FILE_POS_ID: i32 = 2147483545;
const DELETE_FILE_ROW_ID: i32 = 2147483544;

/// The columns read from a Parquet position delete file: path, position and the optional
/// deleted row (in the current table schema).
fn delete_file_schema(md: &TableMetadata) -> Result<Schema> {
    Schema::new(
        0,
        vec![
            NestedField::required(DELETE_FILE_PATH_ID, "file_path", PrimitiveType::String.into()),
            NestedField::required(DELETE_FILE_POS_ID, "pos", PrimitiveType::Long.into()),
            NestedField::optional(
                DELETE_FILE_ROW_ID,
                "row",
                Type::Struct(md.current_schema().as_struct().clone()),
            ),
        ],
        vec![],
    )
}

/// `position_deletes` at `snapshot` (no rows when the table has no snapshot).
pub fn position_deletes(md: &TableMetadata, snapshot: Option<&Snapshot>) -> Result<RecordBatch> {
    let ptype = table_partition_type(md)?;
    let partitioned = !ptype.fields.is_empty();
    let v3 = md.format_version() >= 3;
    let read_schema = delete_file_schema(md)?;
    let row_type = type_to_arrow(&Type::Struct(md.current_schema().as_struct().clone()))?;
    let mut fields = vec![
        field("file_path", DataType::Utf8, false),
        field("pos", DataType::Int64, false),
        field("row", row_type.clone(), true),
    ];
    let partition_type = if partitioned { Some(partition_arrow_type(&ptype)?) } else { None };
    if let Some(pt) = &partition_type {
        fields.push(field("partition", pt.clone(), false));
    }
    fields.push(field("spec_id", DataType::Int32, false));
    fields.push(field("delete_file_path", DataType::Utf8, false));
    if v3 {
        fields.push(field("content_offset", DataType::Int64, true));
        fields.push(field("content_size_in_bytes", DataType::Int64, true));
    }
    let schema = Arc::new(ArrowSchema::new(fields));
    let manifests = match snapshot {
        Some(s) => manifest_list(s)?,
        None => Vec::new(),
    };
    let mut batches = Vec::new();
    for e in read_entries(&manifests)? {
        let f = &e.data_file;
        if !e.status.is_live() || f.content != DataContentType::PositionDeletes {
            continue;
        }
        let partition = coerce_partition(md, &ptype, f)?.0;
        for (paths, positions, rows) in delete_rows(f, &read_schema, &row_type)? {
            let n = positions.len();
            let mut cols: Vec<ArrayRef> = vec![paths, positions, rows];
            if let Some(pt) = &partition_type {
                cols.push(to_array(pt, vec![Cell::Struct(partition.clone()); n])?);
            }
            cols.push(Arc::new(Int32Array::from(vec![f.spec_id; n])));
            cols.push(Arc::new(StringArray::from(vec![f.file_path.as_str(); n])));
            if v3 {
                cols.push(Arc::new(Int64Array::from(vec![f.content_offset; n])));
                cols.push(Arc::new(Int64Array::from(vec![f.content_size_in_bytes; n])));
            }
            batches.push(
                RecordBatch::try_new(schema.clone(), cols)
                    .map_err(|e| invalid_data("cannot assemble position_deletes rows").with_source(e))?,
            );
        }
    }
    arrow_select::concat::concat_batches(&schema, &batches)
        .map_err(|e| invalid_data("cannot concatenate position_deletes rows").with_source(e))
}

type Columns = (ArrayRef, ArrayRef, ArrayRef);

/// The (file_path, pos, row) columns of one delete file, batch by batch.
fn delete_rows(f: &DataFile, read_schema: &Schema, row_type: &DataType) -> Result<Vec<Columns>> {
    let wrap = |e: crate::Error| e.with_context("delete file", f.file_path.clone());
    match f.file_format {
        FileFormat::Puffin => {
            let index = crate::arrow::delete_cache::deletion_vector(f).map_err(wrap)?;
            let data_file = f.referenced_data_file.clone().unwrap_or_default();
            let positions = index.positions(&data_file).to_vec();
            let n = positions.len();
            Ok(vec![(
                Arc::new(StringArray::from(vec![data_file.as_str(); n])),
                Arc::new(Int64Array::from(positions)),
                new_null_array(row_type, n),
            )])
        }
        FileFormat::Parquet => {
            let reader = read_parquet(&f.file_path, read_schema, DEFAULT_BATCH_SIZE).map_err(wrap)?;
            let mut out = Vec::new();
            for b in reader {
                let b = b.map_err(wrap)?;
                out.push((b.column(0).clone(), b.column(1).clone(), b.column(2).clone()));
            }
            Ok(out)
        }
        other => Err(invalid_data(format!(
            "expected a PARQUET or PUFFIN position delete file, found {}",
            other.as_str()
        ))
        .with_context("delete file", f.file_path.clone())),
    }
}
