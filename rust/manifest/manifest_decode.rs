//! Decoding manifest entries from Avro: a plan compiled once per file from the writer schema
//! (fields resolved by field id, so v1, v2 and v3 files all read), then one entry at a time.

use std::collections::BTreeMap;

use super::avro::{Cursor, Kind, Logical, Node, Record};
use super::data_file::{
    DataContentType, DataFile, FileFormat, EMPTY_COLUMN_SIZES, EMPTY_LOWER_BOUNDS, EMPTY_NAN_VALUE_COUNTS,
    EMPTY_NULL_VALUE_COUNTS, EMPTY_UPPER_BOUNDS, EMPTY_VALUE_COUNTS,
};
use super::manifest_entry::{EntryStatus, ManifestEntry};
use super::manifest_list::{read_opt_bytes, read_opt_int, read_opt_long, read_opt_str, required};
use crate::error::{invalid_data, Result};
use crate::spec::decimal_from_bytes;
use crate::spec::{Literal, NestedField, PrimitiveType, StructType, StructValue, Type};

/// Which columns' stats (the six metric maps of each DataFile) a decode keeps. Skipping the
/// maps a reader does not need saves most of a manifest's decode time (allocation): the scan
/// planner keeps only the columns its filter and equality deletes read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum StatsProjection {
    /// Every column's stats (what `read_manifest` returns).
    #[default]
    All,
    /// Only these field ids' stats (sorted, deduplicated); empty: no stats at all.
    Only(Vec<i32>),
}

impl StatsProjection {
    /// Only `ids` (any order, duplicates allowed).
    pub fn only(ids: impl IntoIterator<Item = i32>) -> StatsProjection {
        let mut v: Vec<i32> = ids.into_iter().collect();
        v.sort_unstable();
        v.dedup();
        StatsProjection::Only(v)
    }

    #[inline]
    pub fn keeps(&self, id: i32) -> bool {
        match self {
            StatsProjection::All => true,
            StatsProjection::Only(ids) if ids.len() < 8 => ids.contains(&id),
            StatsProjection::Only(ids) => ids.binary_search(&id).is_ok(),
        }
    }

    /// No column's stats at all.
    #[inline]
    pub fn keeps_none(&self) -> bool {
        matches!(self, StatsProjection::Only(ids) if ids.is_empty())
    }

    /// Does a decode with `self` hold every stat a decode with `other` would?
    pub fn covers(&self, other: &StatsProjection) -> bool {
        match (self, other) {
            (StatsProjection::All, _) => true,
            (StatsProjection::Only(_), StatsProjection::All) => false,
            (StatsProjection::Only(a), StatsProjection::Only(b)) => {
                b.iter().all(|id| a.binary_search(id).is_ok())
            }
        }
    }

    /// The projection keeping what either keeps.
    pub fn union(&self, other: &StatsProjection) -> StatsProjection {
        match (self, other) {
            (StatsProjection::Only(a), StatsProjection::Only(b)) => {
                StatsProjection::only(a.iter().chain(b.iter()).copied())
            }
            _ => StatsProjection::All,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Decode plan

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EntrySlot {
    Status,
    SnapshotId,
    SequenceNumber,
    FileSequenceNumber,
    DataFile,
    Skip,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileSlot {
    Content,
    FilePath,
    FileFormat,
    Partition,
    RecordCount,
    FileSize,
    ColumnSizes,
    ValueCounts,
    NullValueCounts,
    NanValueCounts,
    LowerBounds,
    UpperBounds,
    KeyMetadata,
    SplitOffsets,
    EqualityIds,
    SortOrderId,
    ReferencedDataFile,
    FirstRowId,
    ContentOffset,
    ContentSize,
    Skip,
}

fn entry_slot(id: Option<i32>, name: &str) -> EntrySlot {
    let id = id.unwrap_or(match name {
        "status" => 0,
        "snapshot_id" => 1,
        "data_file" => 2,
        "sequence_number" => 3,
        "file_sequence_number" => 4,
        _ => -1,
    });
    match id {
        0 => EntrySlot::Status,
        1 => EntrySlot::SnapshotId,
        2 => EntrySlot::DataFile,
        3 => EntrySlot::SequenceNumber,
        4 => EntrySlot::FileSequenceNumber,
        _ => EntrySlot::Skip,
    }
}

fn file_slot(id: Option<i32>, name: &str) -> FileSlot {
    let id = id.unwrap_or(match name {
        "file_path" => 100,
        "file_format" => 101,
        "partition" => 102,
        "record_count" => 103,
        "file_size_in_bytes" => 104,
        "column_sizes" => 108,
        "value_counts" => 109,
        "null_value_counts" => 110,
        "lower_bounds" => 125,
        "upper_bounds" => 128,
        "key_metadata" => 131,
        "split_offsets" => 132,
        "content" => 134,
        "equality_ids" => 135,
        "nan_value_counts" => 137,
        "sort_order_id" => 140,
        "first_row_id" => 142,
        "referenced_data_file" => 143,
        "content_offset" => 144,
        "content_size_in_bytes" => 145,
        _ => -1,
    });
    match id {
        100 => FileSlot::FilePath,
        101 => FileSlot::FileFormat,
        102 => FileSlot::Partition,
        103 => FileSlot::RecordCount,
        104 => FileSlot::FileSize,
        108 => FileSlot::ColumnSizes,
        109 => FileSlot::ValueCounts,
        110 => FileSlot::NullValueCounts,
        125 => FileSlot::LowerBounds,
        128 => FileSlot::UpperBounds,
        131 => FileSlot::KeyMetadata,
        132 => FileSlot::SplitOffsets,
        134 => FileSlot::Content,
        135 => FileSlot::EqualityIds,
        137 => FileSlot::NanValueCounts,
        140 => FileSlot::SortOrderId,
        142 => FileSlot::FirstRowId,
        143 => FileSlot::ReferencedDataFile,
        144 => FileSlot::ContentOffset,
        145 => FileSlot::ContentSize,
        _ => FileSlot::Skip,
    }
}

/// How to decode the entries of one manifest file, compiled from its writer schema.
pub(crate) struct EntryPlan {
    entry: Vec<(EntrySlot, Node)>,
    /// Data-file fields; the flag marks a metrics map in Java's exact layout (fast path).
    file: Vec<(FileSlot, Node, bool)>,
    /// Writer partition fields, in writer order, with the Iceberg type of each.
    partition: Vec<(Node, PrimitiveType)>,
    /// The partition struct type (from the writer schema: names, field ids, result types).
    pub partition_type: StructType,
    /// False for v1 files (no sequence-number fields in the schema).
    pub has_sequence_numbers: bool,
}

/// The Iceberg type of an Avro partition-field value (the inverse of Java's `TypeToSchema`).
fn iceberg_type_of(node: &Node) -> Result<PrimitiveType> {
    let n = node.non_null();
    Ok(match (&n.kind, n.logical) {
        (Kind::Boolean, _) => PrimitiveType::Boolean,
        (Kind::Int, Logical::Date) => PrimitiveType::Date,
        (Kind::Int, _) => PrimitiveType::Int,
        (Kind::Long, Logical::TimeMicros) => PrimitiveType::Time,
        (Kind::Long, Logical::TimestampMicros { utc: true }) => PrimitiveType::Timestamptz,
        (Kind::Long, Logical::TimestampMicros { utc: false }) => PrimitiveType::Timestamp,
        (Kind::Long, Logical::TimestampNanos { utc: true }) => PrimitiveType::TimestamptzNs,
        (Kind::Long, Logical::TimestampNanos { utc: false }) => PrimitiveType::TimestampNs,
        (Kind::Long, _) => PrimitiveType::Long,
        (Kind::Float, _) => PrimitiveType::Float,
        (Kind::Double, _) => PrimitiveType::Double,
        (Kind::String, Logical::Uuid) => PrimitiveType::Uuid,
        (Kind::String, _) => PrimitiveType::String,
        (Kind::Bytes | Kind::Fixed(_), Logical::Decimal { precision, scale }) => {
            PrimitiveType::Decimal { precision, scale }
        }
        (Kind::Fixed(16), Logical::Uuid) => PrimitiveType::Uuid,
        (Kind::Fixed(n), _) => PrimitiveType::Fixed(*n as u64),
        (Kind::Bytes, _) => PrimitiveType::Binary,
        // Java writes a field whose source column was dropped as `unknown`, Avro `null`.
        (Kind::Null, _) => PrimitiveType::Unknown,
        (k, _) => return Err(invalid_data(format!("unsupported Avro type for a partition value: {k:?}"))),
    })
}

fn record_of<'a>(node: &'a Node, what: &str) -> Result<&'a Record> {
    node.as_record().ok_or_else(|| invalid_data(format!("manifest field {what} is not a record")))
}

pub(crate) fn compile_entry_plan(schema: &Node) -> Result<EntryPlan> {
    let rec = record_of(schema, "manifest_entry")?;
    let entry: Vec<(EntrySlot, Node)> =
        rec.fields.iter().map(|f| (entry_slot(f.field_id, &f.name), f.node.clone())).collect();
    let has = |s: EntrySlot| entry.iter().any(|(x, _)| *x == s);
    if !has(EntrySlot::Status) || !has(EntrySlot::DataFile) {
        return Err(invalid_data("manifest entry schema needs status (0) and data_file (2)"));
    }
    let has_sequence_numbers = has(EntrySlot::SequenceNumber);
    let df_node = &entry
        .iter()
        .find(|(s, _)| *s == EntrySlot::DataFile)
        .map(|(_, n)| n.clone())
        .unwrap_or_else(|| Node { kind: Kind::Null, logical: Logical::None });
    let df = record_of(df_node, "data_file (2)")?;
    let file: Vec<(FileSlot, Node, bool)> = df
        .fields
        .iter()
        .map(|f| {
            let slot = file_slot(f.field_id, &f.name);
            (slot, f.node.clone(), is_java_int_map(&f.node, slot))
        })
        .collect();
    for (slot, name) in [
        (FileSlot::FilePath, "file_path (100)"),
        (FileSlot::FileFormat, "file_format (101)"),
        (FileSlot::RecordCount, "record_count (103)"),
        (FileSlot::FileSize, "file_size_in_bytes (104)"),
    ] {
        if !file.iter().any(|(s, _, _)| *s == slot) {
            return Err(invalid_data(format!("manifest data_file schema has no field {name}")));
        }
    }
    let mut partition = Vec::new();
    let mut fields = Vec::new();
    if let Some((_, pnode, _)) = file.iter().find(|(s, _, _)| *s == FileSlot::Partition) {
        let prec = record_of(pnode, "partition (102)")?;
        for (i, f) in prec.fields.iter().enumerate() {
            let ty =
                iceberg_type_of(&f.node).map_err(|e| e.with_context("partition field", f.name.clone()))?;
            // Legacy writers without ids: partition field ids start at 1000 by position.
            let id = f.field_id.unwrap_or(1000 + i as i32);
            fields.push(NestedField::optional(id, f.name.clone(), Type::Primitive(ty.clone())));
            partition.push((f.node.clone(), ty));
        }
    }
    Ok(EntryPlan { entry, file, partition, partition_type: StructType::new(fields), has_sequence_numbers })
}

// ---------------------------------------------------------------------------------------------
// Decoding

fn read_partition_value(c: &mut Cursor<'_>, node: &Node, ty: &PrimitiveType) -> Result<Option<Literal>> {
    let Some(n) = c.read_optional(node)? else {
        return Ok(None);
    };
    let lit = match (&n.kind, ty) {
        (Kind::Boolean, _) => Literal::Boolean(c.read_bool()?),
        (Kind::Int, PrimitiveType::Date) => Literal::Date(c.read_int()?),
        (Kind::Int, _) => Literal::Int(c.read_int()?),
        (Kind::Long, PrimitiveType::Time) => Literal::Time(c.read_long()?),
        (Kind::Long, PrimitiveType::Timestamp) => Literal::Timestamp(c.read_long()?),
        (Kind::Long, PrimitiveType::Timestamptz) => Literal::Timestamptz(c.read_long()?),
        (Kind::Long, PrimitiveType::TimestampNs) => Literal::TimestampNs(c.read_long()?),
        (Kind::Long, PrimitiveType::TimestamptzNs) => Literal::TimestamptzNs(c.read_long()?),
        (Kind::Long, _) => Literal::Long(c.read_long()?),
        (Kind::Float, _) => Literal::Float(c.read_f32()?),
        (Kind::Double, _) => Literal::Double(c.read_f64()?),
        (Kind::String, PrimitiveType::Uuid) => {
            let s = c.read_str()?;
            let u = uuid::Uuid::parse_str(s)
                .map_err(|e| invalid_data(format!("bad uuid partition value '{s}'")).with_source(e))?;
            Literal::Uuid(u.as_u128())
        }
        (Kind::String, _) => Literal::String(c.read_str()?.to_string()),
        (Kind::Bytes, PrimitiveType::Decimal { .. }) => {
            Literal::Decimal(decimal_from_bytes(c.read_bytes()?)?)
        }
        (Kind::Fixed(len), PrimitiveType::Decimal { .. }) => {
            Literal::Decimal(decimal_from_bytes(c.read_fixed(*len)?)?)
        }
        (Kind::Fixed(16), PrimitiveType::Uuid) => {
            let b: [u8; 16] =
                c.read_fixed(16)?.try_into().map_err(|_| invalid_data("uuid needs 16 bytes"))?;
            Literal::Uuid(u128::from_be_bytes(b))
        }
        (Kind::Fixed(len), _) => Literal::Fixed(c.read_fixed(*len)?.to_vec()),
        (Kind::Bytes, _) => Literal::Binary(c.read_bytes()?.to_vec()),
        (k, _) => return Err(invalid_data(format!("unsupported Avro type for a partition value: {k:?}"))),
    };
    Ok(Some(lit))
}

/// A metrics-map value in Java's plain layout: read, or skipped without allocating.
trait RawValue: Sized {
    /// The value is one varint (so a map entry is two).
    const VARINT: bool;
    fn read(c: &mut Cursor<'_>) -> Result<Self>;
    fn skip(c: &mut Cursor<'_>) -> Result<()>;
}

impl RawValue for i64 {
    const VARINT: bool = true;
    #[inline]
    fn read(c: &mut Cursor<'_>) -> Result<i64> {
        c.read_long()
    }
    #[inline]
    fn skip(c: &mut Cursor<'_>) -> Result<()> {
        c.read_long().map(|_| ())
    }
}

impl RawValue for Vec<u8> {
    const VARINT: bool = false;
    #[inline]
    fn read(c: &mut Cursor<'_>) -> Result<Vec<u8>> {
        Ok(c.read_bytes()?.to_vec())
    }
    #[inline]
    fn skip(c: &mut Cursor<'_>) -> Result<()> {
        c.read_bytes().map(|_| ())
    }
}

/// Reads an int-keyed map, written as an array of key/value records (or an Avro map with
/// string keys), into `out`, keeping the keys `stats` keeps. `value` decodes one value from
/// its node (general layouts).
fn read_int_map<V: RawValue>(
    c: &mut Cursor<'_>,
    node: &Node,
    fast: bool,
    stats: &StatsProjection,
    out: &mut BTreeMap<i32, V>,
    mut value: impl FnMut(&mut Cursor<'_>, &Node) -> Result<V>,
) -> Result<bool> {
    let Some(n) = c.read_optional(node)? else {
        return Ok(false);
    };
    // Whether the map is there and empty (Java writes `nan_value_counts` so for a file without
    // float columns): the caller records it, so a read shows `{}` and a rewrite keeps it.
    let mut blocks = 0usize;
    if fast {
        // Java's layout, checked once per file: plain int keys, plain values, no unions.
        let skip_all = V::VARINT && stats.keeps_none();
        loop {
            let count = c.read_block_count()?;
            if count == 0 {
                return Ok(blocks == 0);
            }
            blocks += 1;
            if skip_all {
                let varints =
                    count.checked_mul(2).ok_or_else(|| invalid_data("Avro block count overflows"))?;
                c.skip_varints(varints)?;
                continue;
            }
            for _ in 0..count {
                let k = c.read_int()?;
                if stats.keeps(k) {
                    out.insert(k, V::read(c)?);
                } else {
                    V::skip(c)?;
                }
            }
        }
    }
    match &n.kind {
        Kind::Array(items) => {
            let rec = items.as_record().ok_or_else(|| invalid_data("metrics map entries are not records"))?;
            let (Some(kf), Some(vf)) = (
                rec.fields.iter().position(|f| f.name == "key"),
                rec.fields.iter().position(|f| f.name == "value"),
            ) else {
                return Err(invalid_data("metrics map entry record needs 'key' and 'value' fields"));
            };
            loop {
                let count = c.read_block_count()?;
                if count == 0 {
                    break;
                }
                blocks += 1;
                for _ in 0..count {
                    let mut key = None;
                    let mut val = None;
                    for (i, f) in rec.fields.iter().enumerate() {
                        if i == kf {
                            key = read_opt_int(c, &f.node)?;
                        } else if i == vf {
                            val = Some(value(c, &f.node)?);
                        } else {
                            c.skip(&f.node)?;
                        }
                    }
                    if let (Some(k), Some(v)) = (key, val) {
                        if stats.keeps(k) {
                            out.insert(k, v);
                        }
                    }
                }
            }
        }
        Kind::Map(values) => loop {
            let count = c.read_block_count()?;
            if count == 0 {
                break;
            }
            blocks += 1;
            for _ in 0..count {
                let k = c.read_str()?;
                let k: i32 =
                    k.parse().map_err(|_| invalid_data(format!("metrics map key '{k}' is not an int")))?;
                let v = value(c, values)?;
                if stats.keeps(k) {
                    out.insert(k, v);
                }
            }
        },
        k => return Err(invalid_data(format!("expected a metrics map, found {k:?}"))),
    }
    Ok(blocks == 0)
}

/// True for a metrics map written as Java does: an array of `{key: int, value: long|bytes}`.
fn is_java_int_map(node: &Node, slot: FileSlot) -> bool {
    let value_kind = match slot {
        FileSlot::ColumnSizes
        | FileSlot::ValueCounts
        | FileSlot::NullValueCounts
        | FileSlot::NanValueCounts => Kind::Long,
        FileSlot::LowerBounds | FileSlot::UpperBounds => Kind::Bytes,
        _ => return false,
    };
    let Kind::Array(items) = &node.non_null().kind else {
        return false;
    };
    let Kind::Record(rec) = &items.kind else {
        return false;
    };
    match rec.fields.as_slice() {
        [key, value] => {
            key.name == "key"
                && key.node.kind == Kind::Int
                && value.name == "value"
                && value.node.kind == value_kind
        }
        _ => false,
    }
}

fn count_value(c: &mut Cursor<'_>, n: &Node) -> Result<i64> {
    required(read_opt_long(c, n)?, "metrics map value")
}

fn bytes_value(c: &mut Cursor<'_>, n: &Node) -> Result<Vec<u8>> {
    Ok(required(read_opt_bytes(c, n)?, "bound value")?.to_vec())
}

fn read_list<T>(
    c: &mut Cursor<'_>,
    node: &Node,
    mut item: impl FnMut(&mut Cursor<'_>, &Node) -> Result<T>,
) -> Result<Option<Vec<T>>> {
    let Some(n) = c.read_optional(node)? else {
        return Ok(None);
    };
    let Kind::Array(items) = &n.kind else {
        return Err(invalid_data(format!("expected an Avro array, found {:?}", n.kind)));
    };
    let mut v = Vec::new();
    loop {
        let count = c.read_block_count()?;
        if count == 0 {
            break;
        }
        v.reserve(count.min(1 << 16));
        for _ in 0..count {
            v.push(item(c, items)?);
        }
    }
    Ok(Some(v))
}

fn decode_data_file(
    c: &mut Cursor<'_>,
    plan: &EntryPlan,
    spec_id: i32,
    stats: &StatsProjection,
) -> Result<DataFile> {
    let mut f = DataFile::new_data(String::new(), 0, 0);
    f.spec_id = spec_id;
    let (mut path, mut format, mut records, mut size) = (None, None, None, None);
    for (slot, node, fast) in &plan.file {
        let fast = *fast;
        match slot {
            FileSlot::Content => {
                if let Some(v) = read_opt_int(c, node)? {
                    f.content = DataContentType::from_i32(v)?;
                }
            }
            FileSlot::FilePath => path = read_opt_str(c, node)?,
            FileSlot::FileFormat => format = read_opt_str(c, node)?,
            FileSlot::Partition => {
                let Some(pn) = c.read_optional(node)? else {
                    return Err(invalid_data("required field partition (102) is null"));
                };
                let Kind::Record(_) = &pn.kind else {
                    return Err(invalid_data("partition (102) is not a record"));
                };
                let mut values: StructValue = Vec::with_capacity(plan.partition.len());
                for (pnode, ty) in &plan.partition {
                    values.push(read_partition_value(c, pnode, ty)?);
                }
                f.partition = values;
            }
            FileSlot::RecordCount => records = read_opt_long(c, node)?,
            FileSlot::FileSize => size = read_opt_long(c, node)?,
            FileSlot::ColumnSizes => {
                if read_int_map(c, node, fast, stats, &mut f.column_sizes, count_value)? {
                    f.empty_metric_maps |= EMPTY_COLUMN_SIZES;
                }
            }
            FileSlot::ValueCounts => {
                if read_int_map(c, node, fast, stats, &mut f.value_counts, count_value)? {
                    f.empty_metric_maps |= EMPTY_VALUE_COUNTS;
                }
            }
            FileSlot::NullValueCounts => {
                if read_int_map(c, node, fast, stats, &mut f.null_value_counts, count_value)? {
                    f.empty_metric_maps |= EMPTY_NULL_VALUE_COUNTS;
                }
            }
            FileSlot::NanValueCounts => {
                if read_int_map(c, node, fast, stats, &mut f.nan_value_counts, count_value)? {
                    f.empty_metric_maps |= EMPTY_NAN_VALUE_COUNTS;
                }
            }
            FileSlot::LowerBounds => {
                if read_int_map(c, node, fast, stats, &mut f.lower_bounds, bytes_value)? {
                    f.empty_metric_maps |= EMPTY_LOWER_BOUNDS;
                }
            }
            FileSlot::UpperBounds => {
                if read_int_map(c, node, fast, stats, &mut f.upper_bounds, bytes_value)? {
                    f.empty_metric_maps |= EMPTY_UPPER_BOUNDS;
                }
            }
            FileSlot::KeyMetadata => f.key_metadata = read_opt_bytes(c, node)?.map(<[u8]>::to_vec),
            FileSlot::SplitOffsets => {
                f.split_offsets = read_list(c, node, |c, n| required(read_opt_long(c, n)?, "split offset"))?
            }
            FileSlot::EqualityIds => {
                f.equality_ids = read_list(c, node, |c, n| required(read_opt_int(c, n)?, "equality id"))?
            }
            FileSlot::SortOrderId => f.sort_order_id = read_opt_int(c, node)?,
            FileSlot::ReferencedDataFile => {
                f.referenced_data_file = read_opt_str(c, node)?.map(str::to_string)
            }
            FileSlot::FirstRowId => f.first_row_id = read_opt_long(c, node)?,
            FileSlot::ContentOffset => f.content_offset = read_opt_long(c, node)?,
            FileSlot::ContentSize => f.content_size_in_bytes = read_opt_long(c, node)?,
            FileSlot::Skip => c.skip(node)?,
        }
    }
    f.file_path = required(path, "file_path (100)")?.to_string();
    f.file_format = FileFormat::parse(required(format, "file_format (101)")?)?;
    f.record_count = required(records, "record_count (103)")?;
    f.file_size_in_bytes = required(size, "file_size_in_bytes (104)")?;
    if f.partition.is_empty() && !plan.partition.is_empty() {
        return Err(invalid_data("manifest entry has no partition (102)"));
    }
    Ok(f)
}

/// Decodes one `manifest_entry` as written (no inheritance applied).
pub(crate) fn decode_entry(
    c: &mut Cursor<'_>,
    plan: &EntryPlan,
    spec_id: i32,
    stats: &StatsProjection,
) -> Result<ManifestEntry> {
    let mut status = None;
    let mut snapshot_id = None;
    let mut sequence_number = None;
    let mut file_sequence_number = None;
    let mut data_file = None;
    for (slot, node) in &plan.entry {
        match slot {
            EntrySlot::Status => status = read_opt_int(c, node)?,
            EntrySlot::SnapshotId => snapshot_id = read_opt_long(c, node)?,
            EntrySlot::SequenceNumber => sequence_number = read_opt_long(c, node)?,
            EntrySlot::FileSequenceNumber => file_sequence_number = read_opt_long(c, node)?,
            EntrySlot::DataFile => {
                if c.read_optional(node)?.is_none() {
                    return Err(invalid_data("required field data_file (2) is null"));
                }
                data_file = Some(decode_data_file(c, plan, spec_id, stats)?);
            }
            EntrySlot::Skip => c.skip(node)?,
        }
    }
    Ok(ManifestEntry {
        status: EntryStatus::from_i32(required(status, "status (0)")?)?,
        snapshot_id,
        sequence_number,
        file_sequence_number,
        data_file: required(data_file, "data_file (2)")?,
    })
}

#[cfg(test)]
mod tests {
    use super::super::avro::{write_bytes, write_long};
    use super::*;

    #[test]
    fn metrics_maps_in_other_layouts() {
        use super::super::avro::parse_schema;
        // Values as unions, and a string-keyed Avro map: read through the general path.
        let arr = parse_schema(
            r#"["null",{"type":"array","logicalType":"map","items":{"type":"record","name":"kv","fields":[
                {"name":"value","type":["null","long"]},{"name":"key","type":"int"}]}}]"#,
        )
        .unwrap();
        assert!(!is_java_int_map(&arr, FileSlot::ValueCounts));
        let mut buf = Vec::new();
        write_long(&mut buf, 1); // union branch: array
        write_long(&mut buf, -2); // block of 2 items with a byte size
        write_long(&mut buf, 6);
        for (k, v) in [(3, 30), (1, 10)] {
            write_long(&mut buf, 1);
            write_long(&mut buf, v);
            write_long(&mut buf, k);
        }
        write_long(&mut buf, 0);
        let mut out = BTreeMap::new();
        read_int_map(&mut Cursor::new(&buf), &arr, false, &StatsProjection::All, &mut out, count_value)
            .unwrap();
        assert_eq!(out, BTreeMap::from([(1, 10), (3, 30)]));

        let map = parse_schema(r#"{"type":"map","values":"long"}"#).unwrap();
        let mut buf = Vec::new();
        write_long(&mut buf, 1);
        write_bytes(&mut buf, b"7");
        write_long(&mut buf, 70);
        write_long(&mut buf, 0);
        let mut out = BTreeMap::new();
        read_int_map(&mut Cursor::new(&buf), &map, false, &StatsProjection::All, &mut out, count_value)
            .unwrap();
        assert_eq!(out, BTreeMap::from([(7, 70)]));
    }
}
