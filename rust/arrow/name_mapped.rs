//! Reading data files that carry no Parquet field ids (imported / migrated files) through
//! the table's name mapping: the leaves to decode are chosen by mapped name paths, and the
//! decoded Arrow columns get the mapped ids attached so the by-id adaptation applies.
//!
//! Name paths follow the spec: a list's element is `element` and a map's entries are
//! `key` / `value` whatever the file calls them; the repeated wrapper groups of Parquet
//! lists and maps are not part of the path.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, ListArray, MapArray, RecordBatch, RecordBatchOptions, StructArray};
use arrow_schema::{DataType, Field, FieldRef, Fields, Schema as ArrowSchema, SchemaRef};
use parquet::arrow::ProjectionMask;
use parquet::basic::{ConvertedType, LogicalType, Repetition};
use parquet::schema::types::{SchemaDescriptor, Type as ParquetType};

use super::schema::PARQUET_FIELD_ID_KEY;
use crate::error::{invalid_data, Result};
use crate::spec::{MappedField, NameMapping};

/// Whether any node of the file's Parquet schema carries a field id.
pub(crate) fn file_has_field_ids(descr: &SchemaDescriptor) -> bool {
    fn any(t: &ParquetType) -> bool {
        t.get_basic_info().has_id() || (t.is_group() && t.get_fields().iter().any(|c| any(c)))
    }
    descr.root_schema().get_fields().iter().any(|c| any(c))
}

/// The field ids of the file's top-level columns (by the name mapping for a file without ids).
pub(crate) fn top_level_ids(descr: &SchemaDescriptor, mapping: Option<&NameMapping>) -> HashSet<i32> {
    let tops = descr.root_schema().get_fields();
    if file_has_field_ids(descr) {
        tops.iter().map(|t| t.get_basic_info()).filter(|i| i.has_id()).map(|i| i.id()).collect()
    } else {
        let m = mapping.map(|m| &m.fields);
        tops.iter().filter_map(|t| m.and_then(|m| m.find(t.name())).and_then(|f| f.field_id)).collect()
    }
}

/// The Parquet leaf index of every mapped primitive column, by field id (for row-group
/// statistics of files without ids).
pub(crate) fn mapped_leaf_columns(descr: &SchemaDescriptor, mapping: &NameMapping) -> HashMap<i32, usize> {
    let mut out = HashMap::new();
    let mut next = 0usize;
    for top in descr.root_schema().get_fields() {
        let mf = mapping.fields.find(top.name());
        visit(top, mf, &mut next, &mut |leaf, id| {
            out.insert(id, leaf);
        });
    }
    out
}

/// The leaves of a file without ids needed for the projected ids `wanted`: a leaf is kept
/// when every mapped node on its path has a wanted id (and it is mapped at all).
pub(crate) fn mapped_projection_mask(
    descr: &SchemaDescriptor,
    wanted: &HashSet<i32>,
    mapping: &NameMapping,
) -> ProjectionMask {
    let mut leaves = Vec::new();
    let mut next = 0usize;
    for top in descr.root_schema().get_fields() {
        let mf = mapping.fields.find(top.name());
        let keep = mf.and_then(|m| m.field_id).is_some_and(|id| wanted.contains(&id));
        walk(top, keep, mf, wanted, &mut next, &mut leaves);
    }
    ProjectionMask::leaves(descr, leaves)
}

fn is_list_or_map(t: &ParquetType) -> Option<bool> {
    let info = t.get_basic_info();
    match (info.logical_type_ref(), info.converted_type()) {
        (Some(LogicalType::List), _) | (_, ConvertedType::LIST) => Some(true),
        (Some(LogicalType::Map), _) | (_, ConvertedType::MAP) | (_, ConvertedType::MAP_KEY_VALUE) => {
            Some(false)
        }
        _ => None,
    }
}

/// How a child of a group maps: a plain child with its mapped field, or the repeated
/// wrapper group of a list (`Some(true)`) or map (`Some(false)`) with its owner's field.
type Child<'a> = (&'a ParquetType, Option<&'a MappedField>, Option<bool>);

/// The children of a group: struct children by name; a list's element (inside its repeated
/// wrapper) as `element`; a map's key and value (inside the repeated `key_value` group) as
/// `key` / `value`.
fn children<'a>(node: &'a ParquetType, mf: Option<&'a MappedField>) -> Vec<Child<'a>> {
    let kids = node.get_fields();
    let sub = |name: &str| mf.and_then(|m| m.fields.find(name));
    match is_list_or_map(node) {
        Some(is_list)
            if kids.len() == 1
                && kids.first().is_some_and(|k| k.get_basic_info().repetition() == Repetition::REPEATED) =>
        {
            let Some(w) = kids.first().map(|k| k.as_ref()) else { return vec![] };
            if !is_list || (w.is_group() && w.get_fields().len() == 1) {
                vec![(w, mf, Some(is_list))]
            } else {
                // A 2-level list: the repeated node is the element itself.
                vec![(w, sub("element"), None)]
            }
        }
        _ => kids.iter().map(|c| (c.as_ref(), sub(c.name()), None)).collect(),
    }
}

/// The children of a wrapper group with their mapped fields (the list element, or key/value).
fn wrapper_children<'a>(
    w: &'a ParquetType,
    owner: Option<&'a MappedField>,
    is_list: bool,
) -> Vec<(&'a ParquetType, Option<&'a MappedField>)> {
    let sub = |name: &str| owner.and_then(|m| m.fields.find(name));
    w.get_fields()
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let m = match (is_list, i) {
                (true, 0) => sub("element"),
                (false, 0) => sub("key"),
                (false, 1) => sub("value"),
                _ => None,
            };
            (c.as_ref(), m)
        })
        .collect()
}

/// The grandchildren through wrappers: every child that carries a mapped field of its own.
fn expand<'a>(
    node: &'a ParquetType,
    mf: Option<&'a MappedField>,
) -> Vec<(&'a ParquetType, Option<&'a MappedField>)> {
    let mut out = Vec::new();
    for (c, m, wrapper) in children(node, mf) {
        match wrapper {
            Some(is_list) => out.extend(wrapper_children(c, m, is_list)),
            None => out.push((c, m)),
        }
    }
    out
}

fn walk(
    node: &ParquetType,
    keep: bool,
    mf: Option<&MappedField>,
    wanted: &HashSet<i32>,
    next: &mut usize,
    leaves: &mut Vec<usize>,
) {
    if !node.is_group() {
        if keep {
            leaves.push(*next);
        }
        *next += 1;
        return;
    }
    let (first, before) = (*next, leaves.len());
    for (c, m) in expand(node, mf) {
        let k = keep && m.and_then(|x| x.field_id).is_some_and(|id| wanted.contains(&id));
        walk(c, k, m, wanted, next, leaves);
    }
    // A projected group none of whose projected children are in the file still needs one
    // leaf so its own nulls are read.
    if keep && leaves.len() == before && *next > first {
        leaves.push(first);
    }
}

fn visit(node: &ParquetType, mf: Option<&MappedField>, next: &mut usize, f: &mut impl FnMut(usize, i32)) {
    if !node.is_group() {
        if let Some(id) = mf.and_then(|m| m.field_id) {
            f(*next, id);
        }
        *next += 1;
        return;
    }
    for (c, m) in expand(node, mf) {
        visit(c, m, next, f);
    }
}

/// Attaches mapped field ids to the Arrow schema decoded from a file without ids; fields
/// the mapping does not know stay without an id (and so are never matched).
pub(crate) fn mapped_arrow_schema(file: &ArrowSchema, mapping: &NameMapping) -> SchemaRef {
    let fields: Vec<FieldRef> =
        file.fields().iter().map(|f| Arc::new(map_field(f, mapping.fields.find(f.name())))).collect();
    Arc::new(ArrowSchema::new(fields))
}

fn map_field(f: &Field, mf: Option<&MappedField>) -> Field {
    let sub = |name: &str| mf.and_then(|m| m.fields.find(name));
    let dt = match f.data_type() {
        DataType::Struct(cs) => {
            DataType::Struct(cs.iter().map(|c| Arc::new(map_field(c, sub(c.name())))).collect::<Fields>())
        }
        DataType::List(e) => DataType::List(Arc::new(map_field(e, sub("element")))),
        DataType::LargeList(e) => DataType::LargeList(Arc::new(map_field(e, sub("element")))),
        DataType::Map(entries, sorted) => {
            let kv = match entries.data_type() {
                DataType::Struct(kv) => match kv.iter().as_slice() {
                    [k, v] => DataType::Struct(Fields::from(vec![
                        map_field(k, sub("key")),
                        map_field(v, sub("value")),
                    ])),
                    _ => DataType::Struct(kv.clone()),
                },
                other => other.clone(),
            };
            DataType::Map(Arc::new(entries.as_ref().clone().with_data_type(kv)), *sorted)
        }
        other => other.clone(),
    };
    let mut md = f.metadata().clone();
    md.remove(PARQUET_FIELD_ID_KEY);
    if let Some(id) = mf.and_then(|m| m.field_id) {
        md.insert(PARQUET_FIELD_ID_KEY.to_string(), id.to_string());
    }
    f.clone().with_data_type(dt).with_metadata(md)
}

/// A decoded batch of a file without ids, re-labelled with `mapped` (from `mapped_arrow_schema`).
pub(crate) fn relabel(batch: &RecordBatch, mapped: &SchemaRef) -> Result<RecordBatch> {
    let cols = batch
        .columns()
        .iter()
        .zip(mapped.fields())
        .map(|(c, f)| retype(c, f.data_type()))
        .collect::<Result<Vec<_>>>()?;
    let opts = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    RecordBatch::try_new_with_options(mapped.clone(), cols, &opts)
        .map_err(|e| invalid_data("cannot attach name-mapped field ids").with_source(e))
}

/// The same array with nested field metadata replaced (children re-typed recursively).
fn retype(a: &ArrayRef, dt: &DataType) -> Result<ArrayRef> {
    if a.data_type() == dt {
        return Ok(a.clone());
    }
    let err =
        |e: arrow_schema::ArrowError| invalid_data("cannot attach name-mapped field ids").with_source(e);
    Ok(match dt {
        DataType::Struct(fields) => {
            let sa = a.as_any().downcast_ref::<StructArray>().ok_or_else(|| shape(a, dt))?;
            let cols = sa
                .columns()
                .iter()
                .zip(fields.iter())
                .map(|(c, f)| retype(c, f.data_type()))
                .collect::<Result<Vec<_>>>()?;
            Arc::new(
                StructArray::try_new_with_length(fields.clone(), cols, sa.nulls().cloned(), sa.len())
                    .map_err(err)?,
            )
        }
        DataType::List(f) => {
            let la = a.as_any().downcast_ref::<ListArray>().ok_or_else(|| shape(a, dt))?;
            let values = retype(la.values(), f.data_type())?;
            Arc::new(
                ListArray::try_new(f.clone(), la.offsets().clone(), values, la.nulls().cloned())
                    .map_err(err)?,
            )
        }
        DataType::Map(f, sorted) => {
            let ma = a.as_any().downcast_ref::<MapArray>().ok_or_else(|| shape(a, dt))?;
            let entries: ArrayRef = Arc::new(ma.entries().clone());
            let entries = retype(&entries, f.data_type())?;
            let entries = entries.as_any().downcast_ref::<StructArray>().ok_or_else(|| shape(a, dt))?.clone();
            Arc::new(
                MapArray::try_new(f.clone(), ma.offsets().clone(), entries, ma.nulls().cloned(), *sorted)
                    .map_err(err)?,
            )
        }
        _ => return Err(shape(a, dt)),
    })
}

fn shape(a: &ArrayRef, dt: &DataType) -> crate::error::Error {
    invalid_data(format!("expected Arrow type {dt} when attaching name-mapped ids, found {}", a.data_type()))
}

#[cfg(test)]
#[path = "name_mapped_tests.rs"]
mod tests;
