//! Reading Parquet data files by Iceberg field id: projection to the leaves a projected
//! schema needs, then adaptation of every batch to exactly `schema_to_arrow(projected)`
//! (column order, promotions, timezone spelling, missing columns as their v3
//! `initial-default` or nulls).

use std::collections::HashSet;
use std::sync::Arc;

use arrow_array::{
    new_null_array, Array, ArrayRef, ListArray, MapArray, RecordBatch, RecordBatchReader, StructArray,
};
use arrow_buffer::OffsetBuffer;
use arrow_cast::{cast_with_options, CastOptions};
use arrow_schema::{DataType, FieldRef, SchemaRef};
use parquet::arrow::arrow_reader::{ArrowReaderOptions, ParquetRecordBatchReader};
use parquet::arrow::ProjectionMask;
use parquet::schema::types::{SchemaDescriptor, Type as ParquetType};

use super::defaults::default_array;
use super::field_match::Match;
use super::footer_schema::parquet_err;
use super::guard::{guarded, open_parquet};
use super::schema::{arrow_field_id, primitive_from_arrow, schema_to_arrow, FromArrowOptions};
use crate::error::{invalid_data, not_supported, Error, ErrorKind, Result};
use crate::io::InputFile;
use crate::spec::{
    DefaultKind, NameMapping, NestedField, PrimitiveType, Schema, Type, PROPERTY_NAME_MAPPING_DEFAULT,
};

/// Default number of rows per batch.
pub const DEFAULT_BATCH_SIZE: usize = 8192;

/// Reads one Parquet data file as Arrow batches of the projected Iceberg schema.
/// Batches hold at most `batch_size` rows; the file is never loaded whole.
pub struct ArrowReader {
    /// `None` after a decode error: the decoder is not called again.
    inner: Option<ParquetRecordBatchReader>,
    projected: Arc<Schema>,
    target: SchemaRef,
    path: String,
}

impl std::fmt::Debug for ArrowReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArrowReader").field("path", &self.path).field("target", &self.target).finish()
    }
}

/// Opens `path` and reads it projected to `projected` (by field id), `batch_size` rows at a time.
pub fn read_parquet(path: &str, projected: &Schema, batch_size: usize) -> Result<ArrowReader> {
    ArrowReader::open(path, projected, batch_size)
}

impl ArrowReader {
    pub fn open(path: &str, projected: &Schema, batch_size: usize) -> Result<Self> {
        let file = InputFile::open(path, None)?;
        // The embedded Arrow schema of other writers (LargeUtf8, views, dictionaries) is
        // ignored: the Parquet schema plus our casts decide the output types.
        let opts = ArrowReaderOptions::new().with_skip_arrow_metadata(true);
        let builder = open_parquet(file, opts, path)?;
        let descr = builder.parquet_schema();
        let mask = projection_mask(descr, projected, path, None)?;
        let target: SchemaRef = Arc::new(schema_to_arrow(projected)?);
        let inner = guarded(path, "cannot read Parquet file", || {
            builder
                .with_projection(mask)
                .with_batch_size(batch_size.max(1))
                .build()
                .map_err(|e| parquet_err(e, "cannot read Parquet file", path))
        })?;
        // Required columns absent from the file (and without an initial-default to read
        // instead) fail now rather than on the first batch.
        let file_schema = RecordBatchReader::schema(&inner);
        for f in projected.fields() {
            if f.required
                && f.default_json(DefaultKind::Initial).is_none()
                && find_by_id(file_schema.fields().iter(), f.id)?.is_none()
            {
                return Err(invalid_data(format!(
                    "required field '{}' (id {}) is not in the data file",
                    f.name, f.id
                ))
                .with_context("file", path));
            }
        }
        Ok(ArrowReader {
            inner: Some(inner),
            projected: Arc::new(projected.clone()),
            target,
            path: path.to_string(),
        })
    }

    /// The schema of every batch: `schema_to_arrow(projected)`.
    pub fn schema(&self) -> SchemaRef {
        self.target.clone()
    }

    fn adapt_batch(&self, batch: RecordBatch) -> Result<RecordBatch> {
        adapt_file_batch(&batch, &self.projected, &self.target)
    }
}

/// Adapts a batch as decoded from a data file (columns carrying `PARQUET:field_id`) to
/// `target = schema_to_arrow(projected)`: by field id, with promotions and absent columns as
/// their `initial-default` (or nulls).
pub(crate) fn adapt_file_batch(
    batch: &RecordBatch,
    projected: &Schema,
    target: &SchemaRef,
) -> Result<RecordBatch> {
    let rows = batch.num_rows();
    let file_fields = batch.schema();
    let mut columns = Vec::with_capacity(target.fields().len());
    for (f, tf) in projected.fields().iter().zip(target.fields()) {
        let col = match find_by_id(file_fields.fields().iter(), f.id)? {
            Some(i) => adapt(batch.column(i), f, tf.data_type(), &f.name, Match::ById)?,
            None => absent(f, tf.data_type(), rows, &f.name, Match::ById)?,
        };
        columns.push(col);
    }
    let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(rows));
    RecordBatch::try_new_with_options(target.clone(), columns, &opts)
        .map_err(|e| invalid_data("data file does not fit the projected schema").with_source(e))
}

impl Iterator for ArrowReader {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        let inner = self.inner.as_mut()?;
        let batch = guarded(&self.path, "cannot decode Parquet data", || {
            inner.next().transpose().map_err(|e| invalid_data("cannot decode Parquet data").with_source(e))
        })
        .transpose()?;
        let out =
            batch.and_then(|b| self.adapt_batch(b)).map_err(|e| e.with_context("file", self.path.clone()));
        if out.is_err() {
            self.inner = None;
        }
        Some(out)
    }
}

/// Index of the field whose `PARQUET:field_id` is `id`.
pub(crate) fn find_by_id<'a>(fields: impl Iterator<Item = &'a FieldRef>, id: i32) -> Result<Option<usize>> {
    for (i, f) in fields.enumerate() {
        if arrow_field_id(f)? == Some(id) {
            return Ok(Some(i));
        }
    }
    Ok(None)
}

/// The leaves of the file needed for `projected`: a leaf is kept when every node on its path
/// that carries a field id is a projected field id (list/map wrapper groups carry none).
pub(crate) fn projection_mask(
    descr: &SchemaDescriptor,
    projected: &Schema,
    path: &str,
    mapping: Option<&NameMapping>,
) -> Result<ProjectionMask> {
    let mut wanted = HashSet::new();
    projected.fields().iter().for_each(|f| collect_ids(f, &mut wanted));
    let mut leaves = Vec::new();
    let mut next_leaf = 0usize;
    let mut any_id = false;
    for top in descr.root_schema().get_fields() {
        let info = top.get_basic_info();
        any_id |= info.has_id();
        let keep = info.has_id() && wanted.contains(&info.id());
        walk(top, keep, &wanted, &mut next_leaf, &mut leaves, &mut any_id);
    }
    if !any_id && descr.num_columns() > 0 {
        // Files without ids (imported / migrated) are read through the table's name mapping.
        return match mapping {
            Some(m) => Ok(super::name_mapped::mapped_projection_mask(descr, &wanted, m)),
            None => Err(not_supported(format!(
                "the data file has no Parquet field ids and the table has no name mapping ({PROPERTY_NAME_MAPPING_DEFAULT})"
            ))
            .with_context("file", path)),
        };
    }
    Ok(ProjectionMask::leaves(descr, leaves))
}

fn collect_ids(f: &NestedField, out: &mut HashSet<i32>) {
    out.insert(f.id);
    match &f.field_type {
        Type::Primitive(_) => {}
        Type::Struct(s) => s.fields.iter().for_each(|c| collect_ids(c, out)),
        Type::List(l) => collect_ids(&l.element_field, out),
        Type::Map(m) => {
            collect_ids(&m.key_field, out);
            collect_ids(&m.value_field, out);
        }
    }
}

fn walk(
    node: &ParquetType,
    keep: bool,
    wanted: &HashSet<i32>,
    next_leaf: &mut usize,
    leaves: &mut Vec<usize>,
    any_id: &mut bool,
) {
    if node.is_group() {
        let (first_leaf, selected_before) = (*next_leaf, leaves.len());
        for c in node.get_fields() {
            let info = c.get_basic_info();
            *any_id |= info.has_id();
            let child_keep = keep && (!info.has_id() || wanted.contains(&info.id()));
            walk(c, child_keep, wanted, next_leaf, leaves, any_id);
        }
        // A projected struct/list/map none of whose projected children are in the file still
        // needs one leaf, so its own nulls are read (its children then read as nulls).
        if keep
            && node.get_basic_info().has_id()
            && leaves.len() == selected_before
            && *next_leaf > first_leaf
        {
            leaves.push(first_leaf);
        }
    } else {
        if keep {
            leaves.push(*next_leaf);
        }
        *next_leaf += 1;
    }
}

/// The column of a field the source does not have: its v3 default (the `initial-default`
/// when reading a data file written before the field existed, the `write-default` when the
/// input of a write lacks it), else nulls; an error for a required field without one.
pub(crate) fn absent(f: &NestedField, dt: &DataType, rows: usize, path: &str, m: Match) -> Result<ArrayRef> {
    let kind = match m {
        Match::ById => DefaultKind::Initial,
        Match::ByName => DefaultKind::Write,
    };
    if let Some(filled) = default_array(f, kind, dt, rows, path)? {
        return Ok(filled);
    }
    if f.required {
        return Err(m.err(format!("required field '{path}' (id {}) is not in {}", f.id, m.source_name())));
    }
    Ok(new_null_array(dt, rows))
}

/// Adapts a file column (or an input column) to the Arrow type of Iceberg field `f`.
pub(crate) fn adapt(
    array: &ArrayRef,
    f: &NestedField,
    target: &DataType,
    path: &str,
    m: Match,
) -> Result<ArrayRef> {
    if array.data_type() == &DataType::Null && target != &DataType::Null {
        // An all-null input column (e.g. pyarrow's type for a column of Nones).
        return Ok(new_null_array(target, array.len()));
    }
    if array.is_empty() {
        // Arrow Java (Spark's Arrow output) exports zero-length lists and maps with an empty
        // offsets buffer where arrow-rs expects one offset; never read those offsets.
        return Ok(arrow_array::new_empty_array(target));
    }
    match (&f.field_type, target) {
        (Type::Primitive(PrimitiveType::Variant), DataType::Struct(fields)) => {
            super::variant::adapt_variant(array, f, fields, path, m)
        }
        (Type::Primitive(p), _) => adapt_primitive(array, p, target, path, m),
        (Type::Struct(st), DataType::Struct(target_fields)) => {
            let sa = array
                .as_any()
                .downcast_ref::<StructArray>()
                .ok_or_else(|| mismatch(m, path, "struct", array))?;
            let (src_fields, src_cols) = (sa.fields(), sa.columns());
            let mut cols = Vec::with_capacity(target_fields.len());
            for (child, tf) in st.fields.iter().zip(target_fields.iter()) {
                let cpath = format!("{path}.{}", child.name);
                let found = match m {
                    Match::ById => find_by_id(src_fields.iter(), child.id)?,
                    Match::ByName => src_fields.iter().position(|sf| sf.name() == &child.name),
                };
                cols.push(match found {
                    Some(i) => {
                        let col = src_cols
                            .get(i)
                            .ok_or_else(|| m.err(format!("struct '{path}' lost column {i}")))?;
                        adapt(col, child, tf.data_type(), &cpath, m)?
                    }
                    None => absent(child, tf.data_type(), sa.len(), &cpath, m)?,
                });
            }
            let out =
                StructArray::try_new_with_length(target_fields.clone(), cols, sa.nulls().cloned(), sa.len())
                    .map_err(|e| m.err(format!("cannot build struct '{path}': {e}")))?;
            Ok(Arc::new(out))
        }
        (Type::List(l), DataType::List(target_el)) => {
            let epath = format!("{path}.element");
            let (offsets, values, nulls) = match array.data_type() {
                DataType::List(_) => {
                    let la = array
                        .as_any()
                        .downcast_ref::<ListArray>()
                        .ok_or_else(|| mismatch(m, path, "list", array))?;
                    (la.offsets().clone(), la.values().clone(), la.nulls().cloned())
                }
                DataType::LargeList(_) => {
                    let cast = cast_with_options(array, &DataType::List(target_el.clone()), &strict())
                        .map_err(|e| m.err(format!("cannot read large list '{path}': {e}")))?;
                    let la = cast
                        .as_any()
                        .downcast_ref::<ListArray>()
                        .ok_or_else(|| mismatch(m, path, "list", array))?;
                    (la.offsets().clone(), la.values().clone(), la.nulls().cloned())
                }
                _ => return Err(mismatch(m, path, "list", array)),
            };
            let values = adapt(&values, &l.element_field, target_el.data_type(), &epath, m)?;
            let out = ListArray::try_new(target_el.clone(), offsets, values, nulls)
                .map_err(|e| m.err(format!("cannot build list '{path}': {e}")))?;
            Ok(Arc::new(out))
        }
        (Type::Map(mt), DataType::Map(entries_field, sorted)) => {
            let ma =
                array.as_any().downcast_ref::<MapArray>().ok_or_else(|| mismatch(m, path, "map", array))?;
            let (kv_fields, key_type, value_type) = match entries_field.data_type() {
                DataType::Struct(kv) => match kv.iter().as_slice() {
                    [k, v] => (kv, k.data_type(), v.data_type()),
                    _ => return Err(invalid_data(format!("map '{path}' has no key/value struct"))),
                },
                _ => return Err(invalid_data(format!("map '{path}' has no key/value struct"))),
            };
            let key = adapt(ma.keys(), &mt.key_field, key_type, &format!("{path}.key"), m)?;
            let value = adapt(ma.values(), &mt.value_field, value_type, &format!("{path}.value"), m)?;
            let entries = StructArray::try_new(kv_fields.clone(), vec![key, value], None)
                .map_err(|e| m.err(format!("cannot build map entries '{path}': {e}")))?;
            let offsets: OffsetBuffer<i32> = ma.offsets().clone();
            let out =
                MapArray::try_new(entries_field.clone(), offsets, entries, ma.nulls().cloned(), *sorted)
                    .map_err(|e| m.err(format!("cannot build map '{path}': {e}")))?;
            Ok(Arc::new(out))
        }
        (t, _) => Err(m.err(format!(
            "expected {t} for field '{path}' (id {}), found Arrow type {} in {}",
            f.id,
            array.data_type(),
            m.source_name()
        ))),
    }
}

fn strict() -> CastOptions<'static> {
    CastOptions { safe: false, ..Default::default() }
}

fn mismatch(m: Match, path: &str, expected: &str, array: &ArrayRef) -> Error {
    m.err(format!(
        "expected a {expected} for field '{path}', found Arrow type {} in {}",
        array.data_type(),
        m.source_name()
    ))
}

/// Whether a file column of Iceberg type `from` can be read as `to` (same type or an allowed promotion).
pub fn can_read_as(from: &PrimitiveType, to: &PrimitiveType) -> bool {
    use PrimitiveType as P;
    match (from, to) {
        (a, b) if a == b => true,
        (P::Int, P::Long) | (P::Float, P::Double) | (P::Fixed(16), P::Uuid) | (P::Binary, P::String) => true,
        // WKB read as Arrow binary (the parquet crate reads GEOMETRY / GEOGRAPHY columns so).
        (P::Binary, P::Geometry { .. } | P::Geography { .. }) => true,
        (P::Decimal { precision: p1, scale: s1 }, P::Decimal { precision: p2, scale: s2 }) => {
            s1 == s2 && p1 <= p2
        }
        // Files from other writers may store timestamps in ms or ns (INT96); read them as micros.
        (P::TimestampNs, P::Timestamp) | (P::TimestamptzNs, P::Timestamptz) => true,
        _ => false,
    }
}

fn adapt_primitive(
    array: &ArrayRef,
    p: &PrimitiveType,
    target: &DataType,
    path: &str,
    m: Match,
) -> Result<ArrayRef> {
    if array.data_type() == target {
        return Ok(array.clone());
    }
    let from = arrow_primitive_type(array.data_type(), p)
        .map_err(|e| m.err(format!("{} (field '{path}')", e.message())))?;
    if m == Match::ByName && from == PrimitiveType::String && *p == PrimitiveType::Uuid {
        return uuid_from_strings(array, path);
    }
    let ok = match m {
        Match::ById => can_read_as(&from, p),
        Match::ByName => can_write_as(&from, p),
    };
    if !ok {
        return Err(m.err(format!(
            "expected {p} for field '{path}', found {from} (Arrow {}) in {}",
            array.data_type(),
            m.source_name()
        )));
    }
    if m == Match::ByName {
        refuse_lost_nanoseconds(array, target, path)?;
    }
    cast_with_options(array, target, &strict()).map_err(|e| {
        m.err(format!("cannot convert field '{path}' from Arrow {} to {target}: {e}", array.data_type()))
    })
}

/// A write of nanosecond timestamps into a microsecond column keeps every value only when none
/// has sub-microsecond digits: Arrow's cast would cut them off silently. (Reading a file's
/// nanosecond column as microseconds, `Match::ById`, truncates as Iceberg Java's readers do.)
fn refuse_lost_nanoseconds(array: &ArrayRef, target: &DataType, path: &str) -> Result<()> {
    use arrow_array::types::TimestampNanosecondType;
    use arrow_schema::TimeUnit;

    let (DataType::Timestamp(TimeUnit::Nanosecond, _), DataType::Timestamp(unit, _)) =
        (array.data_type(), target)
    else {
        return Ok(());
    };
    if *unit == TimeUnit::Nanosecond {
        return Ok(());
    }
    let Some(ns) = array.as_any().downcast_ref::<arrow_array::PrimitiveArray<TimestampNanosecondType>>()
    else {
        return Ok(());
    };
    let lost = ns.iter().enumerate().find_map(|(row, v)| v.filter(|v| v % 1000 != 0).map(|v| (row, v)));
    match lost {
        None => Ok(()),
        Some((row, v)) => Err(Error::new(
            ErrorKind::Validation,
            format!(
                "column '{path}' is a microsecond timestamp but the data has nanosecond values that it \
                 cannot store without losing digits (row {row}: {v} ns since the epoch); cast the \
                 column to timestamp('us') first to drop them on purpose, or store it in a \
                 timestamp_ns column (format v3)"
            ),
        )),
    }
}

/// Engines without a uuid type (Spark) hand uuids over as strings: parse them.
fn uuid_from_strings(array: &ArrayRef, path: &str) -> Result<ArrayRef> {
    let strings = cast_with_options(array, &DataType::Utf8, &strict()).map_err(|e| {
        Error::new(ErrorKind::Validation, format!("cannot read column '{path}' as strings: {e}"))
    })?;
    let strings = strings.as_any().downcast_ref::<arrow_array::StringArray>().ok_or_else(|| {
        Error::new(ErrorKind::Internal, format!("cast of '{path}' to Utf8 gave another type"))
    })?;
    let mut values = Vec::with_capacity(strings.len());
    for v in strings.iter() {
        values.push(match v {
            None => None,
            Some(s) => Some(
                *uuid::Uuid::parse_str(s.trim())
                    .map_err(|_| {
                        Error::new(
                            ErrorKind::Validation,
                            format!("expected a UUID string in column '{path}', found '{s}'"),
                        )
                    })?
                    .as_bytes(),
            ),
        });
    }
    let out = if values.iter().all(Option::is_none) {
        new_null_array(&DataType::FixedSizeBinary(16), values.len())
    } else {
        Arc::new(
            arrow_array::FixedSizeBinaryArray::try_from_sparse_iter_with_size(values.into_iter(), 16)
                .map_err(|e| {
                    Error::new(ErrorKind::Internal, format!("cannot build uuid column '{path}': {e}"))
                })?,
        )
    };
    Ok(out)
}

/// The Iceberg type of an Arrow primitive, reading nanosecond timestamps as the ns types
/// only when the target is one. Dictionary-encoded columns have their value type.
pub(crate) fn arrow_primitive_type(dt: &DataType, target: &PrimitiveType) -> Result<PrimitiveType> {
    if let DataType::Dictionary(_, v) = dt {
        return arrow_primitive_type(v, target);
    }
    let ns = matches!(target, PrimitiveType::TimestampNs | PrimitiveType::TimestamptzNs);
    primitive_from_arrow(dt, FromArrowOptions { nanosecond_timestamps: ns })
}

/// Whether user data of Iceberg type `from` may be written to a column of type `to`: the same
/// type (any Arrow string/binary/timestamp-unit/timezone spelling) or a safe widening.
pub fn can_write_as(from: &PrimitiveType, to: &PrimitiveType) -> bool {
    use PrimitiveType as P;
    match (from, to) {
        (a, b) if a == b => true,
        (P::Int, P::Long) | (P::Float, P::Double) | (P::Fixed(16), P::Uuid) => true,
        // Strings are parsed as UUIDs (engines without a uuid type, like Spark, send strings).
        (P::String, P::Uuid) => true,
        // Binary values of the column's length (Spark has no fixed type: it reads and sends
        // fixed as binary); a value of another length is refused by the cast.
        (P::Binary, P::Fixed(_)) => true,
        // WKB values from any binary column (Spark has no geospatial type before 4.1).
        (P::Binary, P::Geometry { .. } | P::Geography { .. }) => true,
        (P::Decimal { precision: p1, scale: s1 }, P::Decimal { precision: p2, scale: s2 }) => {
            s1 == s2 && p1 <= p2
        }
        _ => false,
    }
}

#[cfg(test)]
#[path = "reader_tests.rs"]
mod tests;

#[cfg(test)]
mod golden_delete_tests {
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;

    use super::*;

    /// Java's position-delete files: reserved field ids 2147483546 (file_path) / 2147483545 (pos).
    #[test]
    fn reads_java_position_delete_files() {
        let schema = Schema::new(
            0,
            vec![
                NestedField::required(2147483546, "file_path", PrimitiveType::String.into()),
                NestedField::required(2147483545, "pos", PrimitiveType::Long.into()),
            ],
            vec![],
        )
        .unwrap();
        for name in ["v2_deletes_position_delete_1_1.parquet", "v2_deletes_position_delete_1_2.parquet"] {
            let path = format!("{}/tests/data/golden/{name}", env!("CARGO_MANIFEST_DIR"));
            let reader = read_parquet(&path, &schema, 100).unwrap();
            let batches: Vec<RecordBatch> = reader.collect::<Result<Vec<_>>>().unwrap();
            assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 1, "{name}");
            let b = &batches[0];
            assert!(b.column(0).as_string::<i32>().value(0).ends_with(".parquet"), "{name}");
            assert!(b.column(1).as_primitive::<Int64Type>().value(0) >= 0, "{name}");
        }
    }

    #[test]
    fn reader_is_send() {
        fn is_send<T: Send>(_: &T) {}
        let path = format!("{}/tests/data/golden/all_types.parquet", env!("CARGO_MANIFEST_DIR"));
        let schema =
            Schema::new(0, vec![NestedField::optional(1, "b", PrimitiveType::Boolean.into())], vec![])
                .unwrap();
        let r = read_parquet(&path, &schema, 1).unwrap();
        is_send(&r);
        assert_eq!(r.schema().fields().len(), 1);
        assert_eq!(r.map(|b| b.unwrap().num_rows()).collect::<Vec<_>>(), vec![1; 5]);
    }
}

#[cfg(test)]
mod empty_projection_tests {
    use super::*;

    #[test]
    fn struct_with_only_new_children_keeps_its_nulls() {
        let path = format!("{}/tests/data/golden/all_types.parquet", env!("CARGO_MANIFEST_DIR"));
        let st = Type::Struct(crate::spec::StructType::new(vec![NestedField::optional(
            501,
            "new",
            PrimitiveType::Int.into(),
        )]));
        let schema = Schema::new(0, vec![NestedField::optional(13, "st", st)], vec![]).unwrap();
        let batches: Vec<RecordBatch> =
            read_parquet(&path, &schema, 10).unwrap().collect::<Result<Vec<_>>>().unwrap();
        let col = batches[0].column(0);
        // rows 2 and 3 have a null struct in the file; the others a struct with a null child
        assert_eq!((0..5).map(|i| col.is_null(i)).collect::<Vec<_>>(), vec![false, false, true, true, false]);
        assert_eq!(batches[0].schema().as_ref(), &schema_to_arrow(&schema).unwrap());
    }

    #[test]
    fn only_missing_columns_still_yields_rows() {
        let path = format!("{}/tests/data/golden/all_types.parquet", env!("CARGO_MANIFEST_DIR"));
        let schema =
            Schema::new(0, vec![NestedField::optional(500, "later", PrimitiveType::String.into())], vec![])
                .unwrap();
        let rows: usize = read_parquet(&path, &schema, 2).unwrap().map(|b| b.unwrap().num_rows()).sum();
        assert_eq!(rows, 5);
    }
}
