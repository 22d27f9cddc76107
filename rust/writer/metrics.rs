//! Per data file metrics (checklist §9), as Iceberg Java computes them: column sizes, value
//! and null counts, lower/upper bounds from the Parquet footer; float/double counts, NaN
//! counts and bounds from the written data (so NaN never reaches a bound and -0.0 < +0.0).
//! Nothing but column sizes for leaves inside a list or map; no bounds for uuid (T7).

use std::collections::HashMap;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_buffer::NullBuffer;
use parquet::file::metadata::ParquetMetaData;
use parquet::file::statistics::Statistics;

use super::geometry_bounds::GeometryBounds;
use crate::error::{Error, ErrorKind, Result};
use crate::manifest::{
    DataFile, EMPTY_COLUMN_SIZES, EMPTY_LOWER_BOUNDS, EMPTY_NAN_VALUE_COUNTS, EMPTY_NULL_VALUE_COUNTS,
    EMPTY_UPPER_BOUNDS, EMPTY_VALUE_COUNTS,
};
use crate::spec::{
    truncate_lower_binary, truncate_lower_string, truncate_upper_binary, truncate_upper_string, Literal,
    NestedField, PrimitiveType, Schema, Type,
};

pub(crate) use super::metrics_config::{leaves, parquet_columns, Leaf, Part};
pub use super::metrics_config::{
    metrics_leaf_ids, MetricsConfig, MetricsMode, METRICS_COLUMN_PREFIX, METRICS_DEFAULT,
    METRICS_MAX_INFERRED_COLUMNS,
};

/// Counts and bounds of one float/double column, computed from the data (the footer's min/max
/// may include NaN): NaN is counted, never a bound. A slot whose parent struct is null counts
/// as a null value, as the footer counts it for every other column type. (Java 1.10's float
/// metrics skip such slots instead, so its float value counts disagree with its own counts of
/// the other columns; the spec defines value_counts as values including nulls.)
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FloatStats {
    pub values: i64,
    pub nulls: i64,
    pub nans: i64,
    pub min: Option<f64>,
    pub max: Option<f64>,
}

#[derive(Debug)]
struct FloatLeaf {
    id: i32,
    /// Column index in the batch, then child indexes through structs.
    path: Vec<usize>,
}

/// Collects [`FloatStats`] for every float/double column not inside a list or map, and the
/// bounding box of every `geometry` column there (`super::geometry_bounds`): the metrics the
/// footer cannot give.
#[derive(Debug)]
pub struct FloatCollector {
    leaves: Vec<FloatLeaf>,
    stats: HashMap<i32, FloatStats>,
    geometry_leaves: Vec<FloatLeaf>,
    geometry: HashMap<i32, GeometryBounds>,
}

impl FloatCollector {
    pub fn new(schema: &Schema) -> Self {
        let (mut leaves, mut geometry_leaves) = (Vec::new(), Vec::new());
        fn walk(f: &NestedField, path: &mut Vec<usize>, out: &mut Vec<FloatLeaf>, geo: &mut Vec<FloatLeaf>) {
            match &f.field_type {
                Type::Primitive(PrimitiveType::Float | PrimitiveType::Double) => {
                    out.push(FloatLeaf { id: f.id, path: path.clone() })
                }
                Type::Primitive(PrimitiveType::Geometry { .. }) => {
                    geo.push(FloatLeaf { id: f.id, path: path.clone() })
                }
                Type::Struct(s) => {
                    for (i, c) in s.fields.iter().enumerate() {
                        path.push(i);
                        walk(c, path, out, geo);
                        path.pop();
                    }
                }
                _ => {}
            }
        }
        for (i, f) in schema.fields().iter().enumerate() {
            walk(f, &mut vec![i], &mut leaves, &mut geometry_leaves);
        }
        FloatCollector { leaves, stats: HashMap::new(), geometry_leaves, geometry: HashMap::new() }
    }

    /// The column of `leaf` in `batch` and the validity of its parent structs.
    fn column(batch: &RecordBatch, leaf: &FloatLeaf) -> Result<(ArrayRef, Option<NullBuffer>)> {
        let internal = || {
            Error::new(
                ErrorKind::Internal,
                format!("batch does not match the schema at field id {}", leaf.id),
            )
        };
        let first = leaf.path.first().ok_or_else(internal)?;
        let mut arr: ArrayRef = batch.columns().get(*first).ok_or_else(internal)?.clone();
        let mut parents: Option<NullBuffer> = None;
        for &i in leaf.path.iter().skip(1) {
            let sa = arr.as_struct_opt().ok_or_else(internal)?;
            parents = NullBuffer::union(parents.as_ref(), sa.nulls());
            arr = sa.columns().get(i).ok_or_else(internal)?.clone();
        }
        Ok((arr, parents))
    }

    fn update_geometry(&mut self, batch: &RecordBatch) -> Result<()> {
        for leaf in &self.geometry_leaves {
            let (arr, parents) = Self::column(batch, leaf)?;
            let acc = self.geometry.entry(leaf.id).or_default();
            let live = |i: usize| parents.as_ref().is_none_or(|p| p.is_valid(i)) && arr.is_valid(i);
            if let Some(a) = arr.as_binary_opt::<i32>() {
                (0..a.len()).filter(|i| live(*i)).for_each(|i| acc.add(a.value(i)));
            } else if let Some(a) = arr.as_binary_opt::<i64>() {
                (0..a.len()).filter(|i| live(*i)).for_each(|i| acc.add(a.value(i)));
            } else if let Some(a) = arr.as_binary_view_opt() {
                (0..a.len()).filter(|i| live(*i)).for_each(|i| acc.add(a.value(i)));
            } else {
                return Err(Error::new(
                    ErrorKind::Internal,
                    format!("expected binary WKB values at field id {}, found {}", leaf.id, arr.data_type()),
                ));
            }
        }
        Ok(())
    }

    /// The lower and upper bounds of a `geometry` column, when every value was valid WKB.
    pub fn geometry_bounds(&self, field_id: i32) -> Option<(Vec<u8>, Vec<u8>)> {
        self.geometry.get(&field_id)?.bounds()
    }

    pub fn update(&mut self, batch: &RecordBatch) -> Result<()> {
        self.update_geometry(batch)?;
        for leaf in &self.leaves {
            let internal = || {
                Error::new(
                    ErrorKind::Internal,
                    format!("batch does not match the schema at field id {}", leaf.id),
                )
            };
            let mut arr: ArrayRef = batch.columns().get(leaf.path[0]).ok_or_else(internal)?.clone();
            let mut parents: Option<NullBuffer> = None;
            for &i in &leaf.path[1..] {
                let sa = arr.as_struct_opt().ok_or_else(internal)?;
                parents = NullBuffer::union(parents.as_ref(), sa.nulls());
                arr = sa.columns().get(i).ok_or_else(internal)?.clone();
            }
            let st = self.stats.entry(leaf.id).or_default();
            let parent_ok = |i: usize| parents.as_ref().is_none_or(|p| p.is_valid(i));
            let mut add = |v: f64| {
                if v.is_nan() {
                    st.nans += 1;
                } else {
                    if st.min.is_none_or(|m| v.total_cmp(&m).is_lt()) {
                        st.min = Some(v);
                    }
                    if st.max.is_none_or(|m| v.total_cmp(&m).is_gt()) {
                        st.max = Some(v);
                    }
                }
            };
            let mut values = 0;
            let mut nulls = 0;
            if let Some(a) = arr.as_primitive_opt::<Float32Type>() {
                for i in 0..a.len() {
                    values += 1;
                    if !parent_ok(i) {
                        nulls += 1;
                        continue;
                    }
                    if a.is_null(i) {
                        nulls += 1;
                    } else {
                        add(f64::from(a.value(i)));
                    }
                }
            } else if let Some(a) = arr.as_primitive_opt::<Float64Type>() {
                for i in 0..a.len() {
                    values += 1;
                    if !parent_ok(i) {
                        nulls += 1;
                        continue;
                    }
                    if a.is_null(i) {
                        nulls += 1;
                    } else {
                        add(a.value(i));
                    }
                }
            } else {
                return Err(internal());
            }
            st.values += values;
            st.nulls += nulls;
        }
        Ok(())
    }

    pub fn stats(&self, field_id: i32) -> Option<&FloatStats> {
        self.stats.get(&field_id)
    }
}

/// Bounds of one column being merged across row groups.
#[derive(Default)]
struct BoundAcc {
    min: Option<Literal>,
    max: Option<Literal>,
    /// A row group had values but no usable min/max: no bounds at all.
    broken: bool,
}

/// Fills record_count, split_offsets and the metric maps of `df` from the footer and the
/// float statistics. `file_size_in_bytes` must already be set.
pub(crate) fn fill_metrics(
    df: &mut DataFile,
    meta: &ParquetMetaData,
    schema: &Schema,
    config: &MetricsConfig,
    floats: &FloatCollector,
) -> Result<()> {
    let leaves = leaves(schema);
    let columns: Vec<Option<Leaf>> = parquet_columns(schema).into_iter().map(Some).collect();
    fill_metrics_of_columns(df, meta, &leaves, &columns, config, floats)
}

/// [`fill_metrics`] for a file written by someone else (`add_files`): `columns[i]` is the
/// table leaf of the file's Parquet column `i` (by field id or name mapping), None for a
/// column the table does not know. Leaves of `leaves` absent from the file get no metrics.
pub(crate) fn fill_metrics_of_columns(
    df: &mut DataFile,
    meta: &ParquetMetaData,
    leaves: &[Leaf],
    columns: &[Option<Leaf>],
    config: &MetricsConfig,
    floats: &FloatCollector,
) -> Result<()> {
    let mut record_count = 0i64;
    let mut splits = Vec::with_capacity(meta.num_row_groups());
    let mut null_ok: HashMap<i32, bool> = HashMap::new();
    let mut bounds: HashMap<i32, BoundAcc> = HashMap::new();
    for rg in meta.row_groups() {
        record_count += rg.num_rows();
        if rg.num_columns() != columns.len() {
            return Err(Error::new(
                ErrorKind::Internal,
                format!("expected {} column chunks per row group, found {}", columns.len(), rg.num_columns()),
            ));
        }
        if let Some(first) = rg.columns().first() {
            let data = first.data_page_offset();
            let start = match first.dictionary_page_offset() {
                Some(d) if d < data => d,
                _ => data,
            };
            splits.push(start);
        }
        for (leaf, cc) in columns.iter().zip(rg.columns()) {
            let Some(leaf) = leaf else { continue };
            let mode = config.mode(leaf.id);
            if mode == MetricsMode::None || leaf.part == Part::VariantValue {
                continue;
            }
            if leaf.part == Part::Whole {
                *df.column_sizes.entry(leaf.id).or_insert(0) += cc.compressed_size();
            }
            if leaf.repeated || matches!(leaf.ty, PrimitiveType::Float | PrimitiveType::Double) {
                continue;
            }
            *df.value_counts.entry(leaf.id).or_insert(0) += cc.num_values();
            let stats = cc.statistics();
            match stats.and_then(|s| s.null_count_opt()) {
                Some(n) => *df.null_value_counts.entry(leaf.id).or_insert(0) += n as i64,
                None => {
                    null_ok.insert(leaf.id, false);
                }
            }
            // Java 1.12 writes counts but no bounds for geospatial columns (a WKB min/max is no
            // bounding box; `ParquetMetrics` leaves spatial bounds to a later release).
            if leaf.ty.is_geospatial() {
                // Java 1.12: a geometry's bounds are the bounding box of its WKB values, never
                // a byte min/max; a geography gets none yet.
                if let Some((lo, hi)) = floats.geometry_bounds(leaf.id).filter(|_| mode.has_bounds()) {
                    df.lower_bounds.insert(leaf.id, lo);
                    df.upper_bounds.insert(leaf.id, hi);
                }
                continue;
            }
            if !mode.has_bounds() || matches!(leaf.ty, PrimitiveType::Uuid | PrimitiveType::Variant) {
                continue;
            }
            let acc = bounds.entry(leaf.id).or_default();
            let all_null =
                stats.and_then(|s| s.null_count_opt()).is_some_and(|n| n as i64 == cc.num_values());
            let scale = time_scale(cc, &leaf.ty);
            match stats
                .map(|s| (stat_literal(&leaf.ty, s, true, scale), stat_literal(&leaf.ty, s, false, scale)))
            {
                Some((Some(lo), Some(hi))) => {
                    if acc.min.as_ref().is_none_or(|m| lo.cmp_same_type(m).is_some_and(|o| o.is_lt())) {
                        acc.min = Some(lo);
                    }
                    if acc.max.as_ref().is_none_or(|m| hi.cmp_same_type(m).is_some_and(|o| o.is_gt())) {
                        acc.max = Some(hi);
                    }
                }
                _ if all_null => {}
                _ => acc.broken = true,
            }
        }
    }
    df.record_count = record_count;
    df.split_offsets = Some(splits);
    // Java's Parquet metrics are maps, never null, and its manifests hold an empty one as `{}`
    // (`nan_value_counts` of a file without float columns): so do icefloe's.
    df.empty_metric_maps = EMPTY_COLUMN_SIZES
        | EMPTY_VALUE_COUNTS
        | EMPTY_NULL_VALUE_COUNTS
        | EMPTY_NAN_VALUE_COUNTS
        | EMPTY_LOWER_BOUNDS
        | EMPTY_UPPER_BOUNDS;

    for leaf in leaves {
        let mode = config.mode(leaf.id);
        if mode == MetricsMode::None || leaf.repeated {
            continue;
        }
        if matches!(leaf.ty, PrimitiveType::Float | PrimitiveType::Double) {
            let Some(st) = floats.stats(leaf.id) else { continue };
            df.value_counts.insert(leaf.id, st.values);
            df.null_value_counts.insert(leaf.id, st.nulls);
            df.nan_value_counts.insert(leaf.id, st.nans);
            if mode.has_bounds() {
                if let (Some(lo), Some(hi)) = (st.min, st.max) {
                    // A zero bound is written as the zero that covers both (lower -0.0, upper
                    // 0.0), as Parquet's statistics rule has it: readers that order -0.0 below
                    // 0.0 (Java) then never prune a file of -0.0 for `x >= 0.0` or of 0.0 for
                    // `x <= -0.0`, where SQL's rows match.
                    let (lo, hi) = (if lo == 0.0 { -0.0 } else { lo }, if hi == 0.0 { 0.0 } else { hi });
                    let (lo, hi) = if leaf.ty == PrimitiveType::Float {
                        (Literal::Float(lo as f32), Literal::Float(hi as f32))
                    } else {
                        (Literal::Double(lo), Literal::Double(hi))
                    };
                    df.lower_bounds.insert(leaf.id, lo.to_bytes());
                    df.upper_bounds.insert(leaf.id, hi.to_bytes());
                }
            }
            continue;
        }
        if null_ok.get(&leaf.id) == Some(&false) {
            // A row group without statistics: like Java, no counts at all, and (T5) no bounds.
            df.null_value_counts.remove(&leaf.id);
            df.value_counts.remove(&leaf.id);
            continue;
        }
        let Some(acc) = bounds.remove(&leaf.id) else { continue };
        if acc.broken {
            continue;
        }
        if let Some(lo) = acc.min.and_then(|v| truncate_bound(v, mode, false)) {
            df.lower_bounds.insert(leaf.id, lo.to_bytes());
        }
        if let Some(hi) = acc.max.and_then(|v| truncate_bound(v, mode, true)) {
            df.upper_bounds.insert(leaf.id, hi.to_bytes());
        }
    }
    Ok(())
}

/// Applies `truncate(N)` to string/binary bounds (upper: incremented prefix, or none). Like
/// Java, fixed values are never truncated.
fn truncate_bound(v: Literal, mode: MetricsMode, upper: bool) -> Option<Literal> {
    let MetricsMode::Truncate(n) = mode else { return Some(v) };
    match v {
        Literal::String(s) if upper => truncate_upper_string(&s, n).map(Literal::String),
        Literal::String(s) => Some(Literal::String(truncate_lower_string(&s, n))),
        Literal::Binary(b) if upper => truncate_upper_binary(&b, n).map(Literal::Binary),
        Literal::Binary(b) => Some(Literal::Binary(truncate_lower_binary(&b, n))),
        other => Some(other),
    }
}

/// How a column chunk's INT64 time values become values of the Iceberg type's unit
/// (micro- or nanoseconds): `(multiply, divide)`, by the column's Parquet unit. A file icefloe
/// writes has the type's own unit; `add_files` may bring milli- or nanosecond columns (read
/// back converted, so their bounds must be too). None when the unit is not known.
fn time_scale(cc: &parquet::file::metadata::ColumnChunkMetaData, ty: &PrimitiveType) -> Option<(i64, i64)> {
    use parquet::basic::{ConvertedType, LogicalType, TimeUnit};
    let descr = cc.column_descr();
    let unit = match descr.logical_type_ref() {
        Some(LogicalType::Timestamp(t)) => Some(&t.unit),
        Some(LogicalType::Time(t)) => Some(&t.unit),
        _ => None,
    };
    let nanos_per_unit = match unit {
        Some(unit) => match unit {
            TimeUnit::MILLIS => 1_000_000,
            TimeUnit::MICROS => 1_000,
            TimeUnit::NANOS => 1,
        },
        _ => match descr.converted_type() {
            ConvertedType::TIMESTAMP_MILLIS => 1_000_000,
            ConvertedType::TIMESTAMP_MICROS | ConvertedType::TIME_MICROS => 1_000,
            _ => return None,
        },
    };
    let target =
        if matches!(ty, PrimitiveType::TimestampNs | PrimitiveType::TimestamptzNs) { 1 } else { 1_000 };
    Some(if nanos_per_unit >= target { (nanos_per_unit / target, 1) } else { (1, target / nanos_per_unit) })
}

/// A footer min (`min = true`) or max as an Iceberg value of `ty`; None if absent or not exact.
fn stat_literal(ty: &PrimitiveType, s: &Statistics, min: bool, scale: Option<(i64, i64)>) -> Option<Literal> {
    let exact = if min { s.min_is_exact() } else { s.max_is_exact() };
    if !exact {
        return None;
    }
    use PrimitiveType as P;
    // A time value in the type's unit (truncated toward zero, as the reader converts it).
    let time = |v: &parquet::file::statistics::ValueStatistics<i64>| -> Option<i64> {
        let (mul, div) = scale?;
        Some(pick(v.min_opt(), v.max_opt(), min)?.checked_mul(mul)? / div)
    };
    Some(match (ty, s) {
        (P::Boolean, Statistics::Boolean(v)) => Literal::Boolean(*pick(v.min_opt(), v.max_opt(), min)?),
        (P::Int, Statistics::Int32(v)) => Literal::Int(*pick(v.min_opt(), v.max_opt(), min)?),
        (P::Date, Statistics::Int32(v)) => Literal::Date(*pick(v.min_opt(), v.max_opt(), min)?),
        (P::Long, Statistics::Int64(v)) => Literal::Long(*pick(v.min_opt(), v.max_opt(), min)?),
        (P::Time, Statistics::Int64(v)) => Literal::Time(time(v)?),
        (P::Timestamp, Statistics::Int64(v)) => Literal::Timestamp(time(v)?),
        (P::Timestamptz, Statistics::Int64(v)) => Literal::Timestamptz(time(v)?),
        (P::TimestampNs, Statistics::Int64(v)) => Literal::TimestampNs(time(v)?),
        (P::TimestamptzNs, Statistics::Int64(v)) => Literal::TimestamptzNs(time(v)?),
        (P::Decimal { .. }, Statistics::Int32(v)) => {
            Literal::Decimal(i128::from(*pick(v.min_opt(), v.max_opt(), min)?))
        }
        (P::Decimal { .. }, Statistics::Int64(v)) => {
            Literal::Decimal(i128::from(*pick(v.min_opt(), v.max_opt(), min)?))
        }
        (P::Decimal { .. }, Statistics::FixedLenByteArray(v)) => {
            Literal::from_bytes(ty, pick(v.min_opt(), v.max_opt(), min)?.data()).ok()?
        }
        (P::String, Statistics::ByteArray(v)) => {
            Literal::String(String::from_utf8(pick(v.min_opt(), v.max_opt(), min)?.data().to_vec()).ok()?)
        }
        (P::Binary, Statistics::ByteArray(v)) => {
            Literal::Binary(pick(v.min_opt(), v.max_opt(), min)?.data().to_vec())
        }
        (P::Fixed(_), Statistics::FixedLenByteArray(v)) => {
            Literal::Fixed(pick(v.min_opt(), v.max_opt(), min)?.data().to_vec())
        }
        _ => return None,
    })
}

fn pick<T>(lo: Option<T>, hi: Option<T>, min: bool) -> Option<T> {
    if min {
        lo
    } else {
        hi
    }
}
