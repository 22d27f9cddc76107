//! `partitions` (Java `PartitionsTable`): the live data and delete files of a snapshot grouped
//! by partition (coerced to the table's partition type), with counts, sizes and the snapshot
//! that last touched each partition.

use std::collections::HashMap;

use arrow_array::RecordBatch;
use arrow_schema::DataType;

use super::cells::{batch, field, schema_ref, timestamptz, Cell};
use super::files::{coerce_partition, partition_arrow_type, read_entries};
use super::manifest_lists::manifest_list;
use super::partition_types::table_partition_type;
use crate::error::Result;
use crate::manifest::DataContentType;
use crate::spec::{Snapshot, TableMetadata};

#[derive(Default)]
struct Partition {
    values: Vec<Cell>,
    spec_id: i32,
    data_records: i64,
    data_files: i32,
    data_size: i64,
    pos_records: i64,
    pos_files: i32,
    eq_records: i64,
    eq_files: i32,
    last_updated_at: Option<i64>,
    last_updated_snapshot_id: Option<i64>,
}

/// `partitions` at `snapshot` (no rows when the table has no snapshot).
pub fn partitions(md: &TableMetadata, snapshot: Option<&Snapshot>) -> Result<RecordBatch> {
    let ptype = table_partition_type(md)?;
    let partitioned = !ptype.fields.is_empty();
    let mut fields = Vec::new();
    if partitioned {
        fields.push(field("partition", partition_arrow_type(&ptype)?, false));
        fields.push(field("spec_id", DataType::Int32, false));
    }
    fields.extend([
        field("record_count", DataType::Int64, false),
        field("file_count", DataType::Int32, false),
        field("total_data_file_size_in_bytes", DataType::Int64, false),
        field("position_delete_record_count", DataType::Int64, false),
        field("position_delete_file_count", DataType::Int32, false),
        field("equality_delete_record_count", DataType::Int64, false),
        field("equality_delete_file_count", DataType::Int32, false),
        field("last_updated_at", timestamptz(), true),
        field("last_updated_snapshot_id", DataType::Int64, true),
    ]);
    let manifests = match snapshot {
        Some(s) => manifest_list(s)?,
        None => Vec::new(),
    };
    let mut order: Vec<Partition> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for e in read_entries(&manifests)? {
        if !e.status.is_live() {
            continue;
        }
        let f = &e.data_file;
        let (values, found) = coerce_partition(md, &ptype, f)?;
        // Java keys partitions by the coerced tuple and by how many of the table's fields the
        // file's spec has: equal values from specs of different widths stay apart.
        let key = format!("{found}\u{0}{values:?}");
        let i = *index.entry(key).or_insert_with(|| {
            order.push(Partition { values, ..Partition::default() });
            order.len() - 1
        });
        let p = &mut order[i];
        if let Some(snap) = e.snapshot_id.and_then(|id| md.snapshot_by_id(id)) {
            let at = snap.timestamp_ms.saturating_mul(1000);
            if p.last_updated_at.is_none_or(|last| at > last) {
                p.spec_id = f.spec_id;
                p.last_updated_at = Some(at);
                p.last_updated_snapshot_id = Some(snap.snapshot_id);
            }
        }
        match f.content {
            DataContentType::Data => {
                p.data_records += f.record_count;
                p.data_files += 1;
                p.data_size += f.file_size_in_bytes;
            }
            DataContentType::PositionDeletes => {
                p.pos_records += f.record_count;
                p.pos_files += 1;
            }
            DataContentType::EqualityDeletes => {
                p.eq_records += f.record_count;
                p.eq_files += 1;
            }
        }
    }
    let rows = order
        .into_iter()
        .map(|p| {
            let mut row = Vec::with_capacity(11);
            if partitioned {
                row.push(Cell::Struct(p.values));
                row.push(Cell::Int(p.spec_id));
            }
            row.extend([
                Cell::Long(p.data_records),
                Cell::Int(p.data_files),
                Cell::Long(p.data_size),
                Cell::Long(p.pos_records),
                Cell::Int(p.pos_files),
                Cell::Long(p.eq_records),
                Cell::Int(p.eq_files),
                Cell::opt_long(p.last_updated_at),
                Cell::opt_long(p.last_updated_snapshot_id),
            ]);
            row
        })
        .collect();
    batch(schema_ref(fields), rows)
}
