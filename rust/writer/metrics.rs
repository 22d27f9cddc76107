//! Per data file metrics (checklist §9), as Iceberg Java computes them: column sizes, value
//! and null counts, lower/upper bounds from the Parquet footer; float/double counts, NaN
//! counts and bounds from the written data (so NaN never reaches a bound and -0.0 < +0.0).
//! Nothing but column sizes for leaves inside a list or map; no bounds for uuid (T7).

use std::collections::{BTreeMap, HashMap, HashSet};

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_buffer::NullBuffer;
use parquet::file::metadata::ParquetMetaData;
use parquet::file::statistics::Statistics;

use super::geometry_bounds::GeometryBounds;
use crate::error::{validation, Error, ErrorKind, Result};
use crate::manifest::{
    DataFile, EMPTY_COLUMN_SIZES, EMPTY_LOWER_BOUNDS, EMPTY_NAN_VALUE_COUNTS, EMPTY_NULL_VALUE_COUNTS,
    EMPTY_UPPER_BOUNDS, EMPTY_VALUE_COUNTS,
};
use crate::spec::{
    truncate_lower_binary, truncate_lower_string, truncate_upper_binary, truncate_upper_string, Literal,
    NestedField, NestedFieldRef, PrimitiveType, Schema, SortOrder, Transform, Type,
};

pub const METRICS_DEFAULT: &str = "write.metadata.metrics.default";
pub const METRICS_COLUMN_PREFIX: &str = "write.metadata.metrics.column.";
pub const METRICS_MAX_INFERRED_COLUMNS: &str = "write.metadata.metrics.max-inferred-column-defaults";
const DEFAULT_MAX_INFERRED_COLUMNS: usize = 100;

/// What metrics to keep for a column (`none`, `counts`, `truncate(N)`, `full`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricsMode {
    None,
    Counts,
    Truncate(usize),
    Full,
}

impl MetricsMode {
    pub fn parse(s: &str) -> Result<Self> {
        let t = s.trim().to_ascii_lowercase();
        match t.as_str() {
            "none" => Ok(MetricsMode::None),
            "counts" => Ok(MetricsMode::Counts),
            "full" => Ok(MetricsMode::Full),
            _ => {
                let n = t
                    .strip_prefix("truncate(")
                    .and_then(|r| r.strip_suffix(')'))
                    .and_then(|n| n.trim().parse::<usize>().ok())
                    .filter(|n| *n > 0)
                    .ok_or_else(|| {
                        validation(format!(
                            "expected a metrics mode none, counts, truncate(N) with N > 0, or full; found '{s}'"
                        ))
                    })?;
                Ok(MetricsMode::Truncate(n))
            }
        }
    }

    fn has_bounds(&self) -> bool {
        matches!(self, MetricsMode::Truncate(_) | MetricsMode::Full)
    }
}

impl std::fmt::Display for MetricsMode {
    /// As the table properties name it: `none`, `counts`, `truncate(N)`, `full`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MetricsMode::None => f.write_str("none"),
            MetricsMode::Counts => f.write_str("counts"),
            MetricsMode::Truncate(n) => write!(f, "truncate({n})"),
            MetricsMode::Full => f.write_str("full"),
        }
    }
}

/// The field ids of a schema's leaf columns (those that carry metrics), in Parquet order.
pub fn metrics_leaf_ids(schema: &Schema) -> Vec<i32> {
    leaves(schema).iter().map(|l| l.id).collect()
}

/// The metrics mode of every column, from `write.metadata.metrics.*` table properties.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricsConfig {
    /// Mode by field id for every leaf column (primitive field) of the schema.
    modes: HashMap<i32, MetricsMode>,
}

impl MetricsConfig {
    /// Java's rules: the default mode is `write.metadata.metrics.default` or truncate(16); without an
    /// explicit default, a schema of more than `max-inferred-column-defaults` (100) leaf columns
    /// (as Java's `TypeUtil.getProjectedIds` counts them) gives truncate(16) to that many only,
    /// chosen as Java's `MetricsConfig.limitFieldIds` chooses them (each struct's own leaf fields
    /// before anything nested in its fields, top level first), and none to the rest;
    /// `write.metadata.metrics.column.<full name>` overrides per column.
    pub fn from_table_properties(props: &BTreeMap<String, String>, schema: &Schema) -> Result<Self> {
        Self::for_table(props, schema, &SortOrder::unsorted())
    }

    /// Java's `MetricsConfig.forTable`: [`Self::from_table_properties`] where the columns of the
    /// table's sort order (by an order-preserving transform: identity, truncate, year, month,
    /// day, hour) get at least `truncate(16)` when the default is `none` or `counts` (the
    /// inferred limit's `none` included), before the per-column properties, which still win.
    pub fn for_table(props: &BTreeMap<String, String>, schema: &Schema, order: &SortOrder) -> Result<Self> {
        let explicit = props.get(METRICS_DEFAULT).map(|s| MetricsMode::parse(s)).transpose()?;
        let max_inferred = match props.get(METRICS_MAX_INFERRED_COLUMNS) {
            None => DEFAULT_MAX_INFERRED_COLUMNS,
            Some(v) => v.trim().parse::<usize>().map_err(|_| {
                validation(format!("expected an integer for '{METRICS_MAX_INFERRED_COLUMNS}', found '{v}'"))
            })?,
        };
        let inferred = (explicit.is_none() && projected_count(schema) > max_inferred)
            .then(|| limited_field_ids(schema, max_inferred));
        let mut modes = HashMap::new();
        for leaf in leaves(schema) {
            let mode = match (explicit, &inferred) {
                (Some(m), _) => m,
                (None, Some(ids)) if !ids.contains(&leaf.id) => MetricsMode::None,
                (None, _) => MetricsMode::Truncate(16),
            };
            modes.insert(leaf.id, mode);
        }
        // Java's `sortedColumnDefaultMode` of its default: truncate(16) for none and counts; the
        // inferred default is truncate(16), or none past the limit
        let sorted_mode = match explicit {
            Some(m @ (MetricsMode::Truncate(_) | MetricsMode::Full)) => m,
            _ => MetricsMode::Truncate(16),
        };
        for f in order.fields.iter().filter(|f| preserves_order(&f.transform)) {
            if let Some(mode) = modes.get_mut(&f.source_id) {
                *mode = sorted_mode;
            }
        }
        for (k, v) in props.range(METRICS_COLUMN_PREFIX.to_string()..) {
            let Some(col) = k.strip_prefix(METRICS_COLUMN_PREFIX) else { break };
            let mode = MetricsMode::parse(v).map_err(|e| e.with_context("property", k.clone()))?;
            // Java looks each leaf's full name up (`MetricsConfig.columnMode`): a property names
            // one leaf column (`s.a`); a struct's or a list's own name (`s`) changes none of its
            // leaves, and unknown columns are ignored (the property may predate a schema change).
            if let Some(f) = schema.field_by_name(col).filter(|f| is_leaf(f)) {
                modes.insert(f.id, mode);
            }
        }
        Ok(MetricsConfig { modes })
    }

    /// The mode of a leaf column; leaves not in the schema get none.
    pub fn mode(&self, field_id: i32) -> MetricsMode {
        self.modes.get(&field_id).copied().unwrap_or(MetricsMode::None)
    }
}

/// Java's `Transform.preservesOrder`: a sort by it keeps the column's own order.
fn preserves_order(t: &Transform) -> bool {
    matches!(
        t,
        Transform::Identity
            | Transform::Truncate(_)
            | Transform::Year
            | Transform::Month
            | Transform::Day
            | Transform::Hour
    )
}

/// How many field ids Java's `TypeUtil.getProjectedIds` finds: primitive struct fields, a
/// list's primitive element, a map's key and value when the value is primitive (a map of
/// nested values counts neither its key nor itself).
fn projected_count(schema: &Schema) -> usize {
    fn count(t: &Type) -> usize {
        match t {
            Type::Primitive(_) => 0,
            Type::Struct(s) => s.fields.iter().map(|f| usize::from(is_leaf(f)) + count(&f.field_type)).sum(),
            Type::List(l) => usize::from(is_leaf(&l.element_field)) + count(&l.element_field.field_type),
            Type::Map(m) => {
                let pair = if is_leaf(&m.value_field) { 2 } else { 0 };
                pair + count(&m.key_field.field_type) + count(&m.value_field.field_type)
            }
        }
    }
    schema.fields().iter().map(|f| usize::from(is_leaf(f)) + count(&f.field_type)).sum()
}

/// Java's `MetricsConfig.limitFieldIds`: up to `limit` leaf field ids, the leaves among a
/// struct's fields (a list's element, a map's key and value) first, then what is nested in each
/// of them in order.
fn limited_field_ids(schema: &Schema, limit: usize) -> HashSet<i32> {
    fn visit(fields: &[NestedFieldRef], limit: usize, out: &mut HashSet<i32>) {
        for f in fields.iter().filter(|f| is_leaf(f)) {
            if out.len() >= limit {
                return;
            }
            out.insert(f.id);
        }
        for f in fields {
            match &f.field_type {
                Type::Primitive(_) => {}
                Type::Struct(s) => visit(&s.fields, limit, out),
                Type::List(l) => visit(std::slice::from_ref(&l.element_field), limit, out),
                Type::Map(m) => visit(&[m.key_field.clone(), m.value_field.clone()], limit, out),
            }
        }
    }
    let mut out = HashSet::new();
    visit(schema.fields(), limit, &mut out);
    out
}

/// A primitive (a variant included) field: one that carries metrics.
fn is_leaf(f: &NestedField) -> bool {
    matches!(f.field_type, Type::Primitive(_))
}

/// A primitive (leaf) column, in Parquet column order.
#[derive(Debug, Clone)]
pub(crate) struct Leaf {
    pub id: i32,
    pub ty: PrimitiveType,
    /// Inside a list or a map: counts and bounds are not kept (only the column size).
    pub repeated: bool,
    /// Which Parquet column of the field this is: a `variant` is stored as two.
    pub part: Part,
}

/// The Parquet column a [`Leaf`] stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// The field's only column.
    Whole,
    /// A variant's `metadata` column: its counts are the variant's value and null counts, as
    /// Java's metrics take them (an unshredded variant has no bounds, and like Java no
    /// column size: neither of its columns carries a field id).
    VariantMetadata,
    /// A variant's `value` column: no metrics.
    VariantValue,
}

/// The schema's leaves, one per Iceberg primitive field (a variant is one).
pub(crate) fn leaves(schema: &Schema) -> Vec<Leaf> {
    let mut out = Vec::new();
    for f in schema.fields() {
        visit_leaves(f, false, &mut |l| out.push(l));
    }
    out
}

/// The schema's Parquet columns, in file order: [`leaves`] with each variant as its two
/// columns (`metadata`, `value`).
pub(crate) fn parquet_columns(schema: &Schema) -> Vec<Leaf> {
    let mut out = Vec::new();
    for leaf in leaves(schema) {
        if leaf.ty == PrimitiveType::Variant {
            out.push(Leaf { part: Part::VariantMetadata, ..leaf.clone() });
            out.push(Leaf { part: Part::VariantValue, ..leaf });
        } else {
            out.push(leaf);
        }
    }
    out
}

fn visit_leaves(f: &NestedField, repeated: bool, out: &mut dyn FnMut(Leaf)) {
    match &f.field_type {
        Type::Primitive(p) => out(Leaf { id: f.id, ty: p.clone(), repeated, part: Part::Whole }),
        Type::Struct(s) => s.fields.iter().for_each(|c| visit_leaves(c, repeated, out)),
        Type::List(l) => visit_leaves(&l.element_field, true, out),
        Type::Map(m) => {
            visit_leaves(&m.key_field, true, out);
            visit_leaves(&m.value_field, true, out);
        }
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{ListType, MapType, StructType};

    fn wide_schema(n: i32) -> Schema {
        Schema::new(
            0,
            (1..=n).map(|i| NestedField::optional(i, format!("c{i}"), PrimitiveType::Int.into())).collect(),
            vec![],
        )
        .unwrap()
    }

    #[test]
    fn modes_parse() {
        assert_eq!(MetricsMode::parse("None").unwrap(), MetricsMode::None);
        assert_eq!(MetricsMode::parse("counts").unwrap(), MetricsMode::Counts);
        assert_eq!(MetricsMode::parse("truncate(8)").unwrap(), MetricsMode::Truncate(8));
        assert_eq!(MetricsMode::parse("full").unwrap(), MetricsMode::Full);
        for bad in ["truncate(0)", "truncate", "all", "truncate(-1)"] {
            assert_eq!(MetricsMode::parse(bad).unwrap_err().kind(), ErrorKind::Validation, "{bad}");
        }
    }

    fn modes_of(s: &Schema, limit: &str) -> Vec<(i32, MetricsMode)> {
        let p = BTreeMap::from([(METRICS_MAX_INFERRED_COLUMNS.to_string(), limit.to_string())]);
        let c = MetricsConfig::from_table_properties(&p, s).unwrap();
        let mut ids: Vec<i32> = leaves(s).iter().map(|l| l.id).collect();
        ids.sort();
        ids.into_iter().map(|id| (id, c.mode(id))).collect()
    }

    /// Java's `TestMetricsConfig` cases: a struct's fields come after the top level's leaves,
    /// a map's key and value and a list's element before what is nested in them.
    #[test]
    fn the_inferred_columns_are_javas_limit_field_ids() {
        let t = MetricsMode::Truncate(16);
        let n = MetricsMode::None;
        let int = || -> Type { PrimitiveType::Int.into() };
        // struct<a, b> (ids 2, 3) before the top-level `top` (4): limit 1 picks `top`
        let s = Schema::new(
            0,
            vec![
                NestedField::optional(
                    1,
                    "s",
                    Type::Struct(StructType::new(vec![
                        NestedField::optional(2, "a", int()),
                        NestedField::optional(3, "b", int()),
                    ])),
                ),
                NestedField::optional(4, "top", int()),
            ],
            vec![],
        )
        .unwrap();
        assert_eq!(modes_of(&s, "1"), vec![(2, n), (3, n), (4, t)]);
        assert_eq!(modes_of(&s, "2"), vec![(2, t), (3, n), (4, t)]);
        assert_eq!(modes_of(&s, "3"), vec![(2, t), (3, t), (4, t)]);
        // a list of maps of int to struct<x, y>: the map's key is not counted by Java's
        // getProjectedIds (its value is nested), but limitFieldIds takes it
        let map = Type::Map(MapType {
            key_field: NestedField::required(3, "key", int()).into(),
            value_field: NestedField::optional(
                4,
                "value",
                Type::Struct(StructType::new(vec![
                    NestedField::optional(5, "x", int()),
                    NestedField::optional(6, "y", int()),
                ])),
            )
            .into(),
        });
        let s = Schema::new(
            0,
            vec![
                NestedField::optional(
                    1,
                    "l",
                    Type::List(ListType { element_field: NestedField::optional(2, "element", map).into() }),
                ),
                NestedField::optional(7, "top", int()),
            ],
            vec![],
        )
        .unwrap();
        assert_eq!(projected_count(&s), 3, "x, y and top");
        assert_eq!(modes_of(&s, "2"), vec![(3, t), (5, n), (6, n), (7, t)]);
        assert_eq!(modes_of(&s, "3"), vec![(3, t), (5, t), (6, t), (7, t)], "3 ids: all inferred");
    }

    #[test]
    fn sorted_columns_get_at_least_truncate_16_as_in_javas_for_table() {
        use crate::spec::{NullOrder, SortDirection, SortField};
        let s = wide_schema(5);
        let by = |id, t| SortField::new(id, t, SortDirection::Ascending, NullOrder::NullsFirst);
        // identity, day and truncate preserve order; bucket does not
        let order = SortOrder::new(
            1,
            vec![
                by(1, Transform::Identity),
                by(2, Transform::Day),
                by(3, Transform::Bucket(4)),
                by(4, Transform::Truncate(2)),
            ],
        );
        let modes = |props: &[(&str, &str)]| {
            let p: BTreeMap<String, String> =
                props.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            let c = MetricsConfig::for_table(&p, &s, &order).unwrap();
            (1..=5).map(|id| c.mode(id)).collect::<Vec<_>>()
        };
        let (t16, n, c, f) =
            (MetricsMode::Truncate(16), MetricsMode::None, MetricsMode::Counts, MetricsMode::Full);
        assert_eq!(modes(&[(METRICS_DEFAULT, "counts")]), vec![t16, t16, c, t16, c]);
        assert_eq!(modes(&[(METRICS_DEFAULT, "none")]), vec![t16, t16, n, t16, n]);
        assert_eq!(modes(&[(METRICS_DEFAULT, "full")]), vec![f, f, f, f, f]);
        assert_eq!(modes(&[(METRICS_DEFAULT, "truncate(4)")])[0], MetricsMode::Truncate(4));
        // a column's own property still wins
        let own = format!("{METRICS_COLUMN_PREFIX}c1");
        assert_eq!(modes(&[(METRICS_DEFAULT, "none"), (own.as_str(), "counts")]), vec![c, t16, n, t16, n]);
        // past the inferred limit (2 of 5 columns): sorted columns too, at truncate(16)
        assert_eq!(modes(&[(METRICS_MAX_INFERRED_COLUMNS, "2")]), vec![t16, t16, n, t16, n]);
        // the unsorted order changes nothing
        let p = BTreeMap::from([(METRICS_DEFAULT.to_string(), "none".to_string())]);
        assert_eq!(MetricsConfig::for_table(&p, &s, &SortOrder::unsorted()).unwrap().mode(1), n);
    }

    #[test]
    fn only_first_100_columns_get_the_inferred_default() {
        let s = wide_schema(120);
        let c = MetricsConfig::from_table_properties(&BTreeMap::new(), &s).unwrap();
        assert_eq!(c.mode(100), MetricsMode::Truncate(16));
        assert_eq!(c.mode(101), MetricsMode::None);
        let p = BTreeMap::from([(METRICS_COLUMN_PREFIX.to_string() + "c110", "counts".to_string())]);
        assert_eq!(MetricsConfig::from_table_properties(&p, &s).unwrap().mode(110), MetricsMode::Counts);
        let p = BTreeMap::from([(METRICS_DEFAULT.to_string(), "full".to_string())]);
        assert_eq!(MetricsConfig::from_table_properties(&p, &s).unwrap().mode(120), MetricsMode::Full);
    }
}
