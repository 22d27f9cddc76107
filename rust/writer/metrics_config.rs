//! Which metrics each column keeps, as Iceberg Java's `MetricsConfig.forTable` decides it from
//! the `write.metadata.metrics.*` table properties, the schema and the sort order; and the
//! schema's leaf columns (the ones that carry metrics), in Parquet column order.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::error::{validation, Result};
use crate::spec::{NestedField, NestedFieldRef, PrimitiveType, Schema, SortOrder, Transform, Type};

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

    pub(crate) fn has_bounds(&self) -> bool {
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

#[cfg(test)]
#[path = "metrics_config_tests.rs"]
mod tests;
