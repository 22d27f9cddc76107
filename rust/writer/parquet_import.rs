//! Registering Parquet files written elsewhere as data files of a table (`table.add_files`,
//! PyIceberg's `add_files`, Java's `TableMigrationUtil`): the file's schema is checked against
//! the table's (by field id when the file carries ids, which must be the table's own; else by
//! the table's name mapping), its metrics come from the footer exactly as for the files the
//! writer makes ([`super::metrics`]), floats from the data; its partition tuple is computed
//! from the data with the table's transforms, and the file must hold exactly one.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use parquet::file::metadata::ParquetMetaData;
use parquet::file::reader::Length;
use parquet::schema::types::{SchemaDescriptor, Type as ParquetType};

use super::metrics::{fill_metrics_of_columns, leaves, FloatCollector, Leaf, MetricsConfig};
use super::partitioner::Partitioner;
use crate::arrow::name_mapped::{file_has_field_ids, mapped_leaf_columns};
use crate::arrow::read_task::{read_task, ReadOptions};
use crate::error::{invalid_data, validation, Result};
use crate::io::InputFile;
use crate::manifest::DataFile;
use crate::scan::FileScanTask;
use crate::spec::{
    NameMapping, NestedFieldRef, PrimitiveType, Schema, StructValue, TableMetadata, Type,
    PROPERTY_NAME_MAPPING_DEFAULT,
};

/// The table's name mapping for files without field ids: its `schema.name-mapping.default`,
/// else one made from the current schema (which `add_files` then stores on the table).
pub fn import_name_mapping(table: &TableMetadata) -> Result<NameMapping> {
    match table.properties().get(PROPERTY_NAME_MAPPING_DEFAULT) {
        Some(json) => NameMapping::from_json(json),
        None => Ok(NameMapping::from_schema(table.current_schema())),
    }
}

/// Whether the Parquet file at `location` carries field ids.
pub fn parquet_file_has_field_ids(location: &str) -> Result<bool> {
    let (_, meta) = read_footer(location)?;
    Ok(file_has_field_ids(meta.file_metadata().schema_descr()))
}

fn read_footer(location: &str) -> Result<(InputFile, ParquetMetaData)> {
    let file = InputFile::open(location, None)?;
    const WHAT: &str = "cannot read the Parquet footer (is it a Parquet file?)";
    let meta = crate::arrow::guard::guarded(location, WHAT, || {
        crate::arrow::footer_schema::read_metadata(&file, location, WHAT)
    })?;
    crate::arrow::guard::check_footer(&meta, location)?;
    Ok((file, meta))
}

/// A DataFile for the existing Parquet file at `location`, in the table's default spec.
/// A file whose column of a required table field (required at every level: a required field
/// of an optional struct is null where the struct is) holds nulls is refused, by the footer's
/// null counts: committed, the table could no longer be read (icefloe refuses the nulls,
/// Java reads made-up values), and an append of the same rows is refused too.
fn check_required_columns(
    schema: &Schema,
    meta: &ParquetMetaData,
    columns: &[Option<Leaf>],
    location: &str,
) -> Result<()> {
    fn required_leaves(fields: &[NestedFieldRef], out: &mut HashSet<i32>) {
        for f in fields.iter().filter(|f| f.required) {
            match &f.field_type {
                Type::Primitive(_) => {
                    out.insert(f.id);
                }
                Type::Struct(s) => required_leaves(&s.fields, out),
                Type::List(_) | Type::Map(_) => {}
            }
        }
    }
    let mut required = HashSet::new();
    required_leaves(schema.fields(), &mut required);
    for rg in meta.row_groups() {
        for (leaf, cc) in columns.iter().zip(rg.columns()) {
            let Some(leaf) = leaf.as_ref().filter(|l| required.contains(&l.id)) else { continue };
            if let Some(n) = cc.statistics().and_then(|s| s.null_count_opt()).filter(|n| *n > 0) {
                return Err(validation(format!(
                    "file {location}: column '{}' (field id {}) is required in the table but holds {n} \
                     null value(s); add_files would make the table unreadable",
                    schema.name_by_id(leaf.id).unwrap_or("?"),
                    leaf.id
                )));
            }
        }
    }
    Ok(())
}

pub fn import_parquet_file(table: &TableMetadata, location: &str) -> Result<DataFile> {
    let schema = table.current_schema();
    let spec = table.default_spec();
    let (file, meta) = read_footer(location)?;
    let descr = meta.file_metadata().schema_descr();
    let has_ids = file_has_field_ids(descr);
    let mapping = if has_ids { None } else { Some(Arc::new(import_name_mapping(table)?)) };
    if has_ids {
        check_field_ids(schema, descr, location)?;
    }
    let arrow = parquet::arrow::parquet_to_arrow_schema(descr, None).map_err(|e| {
        invalid_data("cannot convert the Parquet schema to Arrow")
            .with_context("file", location)
            .with_source(e)
    })?;
    super::check_arrow_schema(schema, &arrow)
        .map_err(|e| validation(format!("file {location}: {}", e.message())))?;

    // Which table leaf each Parquet column is (by id, or by the name mapping).
    let all = leaves(schema);
    let by_id: HashMap<i32, &Leaf> = all.iter().map(|l| (l.id, l)).collect();
    let mut columns: Vec<Option<Leaf>> = vec![None; descr.num_columns()];
    match &mapping {
        None => {
            for (i, slot) in columns.iter_mut().enumerate() {
                let column = descr.column(i);
                let info = column.self_type().get_basic_info();
                if info.has_id() {
                    *slot = by_id.get(&info.id()).map(|l| (*l).clone());
                }
            }
        }
        Some(m) => {
            for (id, i) in mapped_leaf_columns(descr, m) {
                if let (Some(slot), Some(l)) = (columns.get_mut(i), by_id.get(&id)) {
                    *slot = Some((*l).clone());
                }
            }
        }
    }

    // Partition source columns and float/double columns are read: the partition tuple and
    // the float metrics (NaN counts, NaN-free bounds) come from the data.
    let float_tops = all
        .iter()
        .filter(|l| !l.repeated && matches!(l.ty, PrimitiveType::Float | PrimitiveType::Double))
        .map(|l| top_level_id(schema, l.id))
        .collect::<Vec<_>>();
    let mut wanted: Vec<NestedFieldRef> = Vec::new();
    let source_tops: Vec<i32> = spec.fields().iter().map(|p| top_level_id(schema, p.source_id)).collect();
    for f in schema.fields() {
        if source_tops.contains(&f.id) || float_tops.contains(&f.id) {
            wanted.push(f.clone());
        }
    }
    for p in spec.fields() {
        if schema.field_by_id(p.source_id).is_none() {
            return Err(validation(format!(
                "file {location}: partition field '{}' has source field id {} which is not in the schema",
                p.name, p.source_id
            )));
        }
        if !columns.iter().flatten().any(|l| l.id == p.source_id) {
            let name = schema.name_by_id(p.source_id).unwrap_or("?");
            return Err(validation(format!(
                "file {location} has no column '{name}' (field id {}), the source of partition field '{}': \
                 add_files computes partition values from the data",
                p.source_id, p.name
            )));
        }
    }
    let projected =
        Schema::new(schema.schema_id(), wanted.iter().map(|f| f.as_ref().clone()).collect(), vec![])?;
    let partitioner = Partitioner::try_new(&projected, spec)?;
    let mut floats = FloatCollector::new(&projected);
    let size = i64::try_from(file.len())
        .map_err(|_| invalid_data("file too large").with_context("file", location))?;
    let mut df = DataFile::new_data(location, 0, size);
    df.spec_id = spec.spec_id();
    let mut partition: Option<(Vec<u8>, StructValue)> = None;
    if !projected.fields().is_empty() {
        let task = FileScanTask::whole_file(df.clone(), 0);
        let opts = ReadOptions { name_mapping: mapping.clone(), ..ReadOptions::default() };
        for batch in read_task(&task, &projected, opts)? {
            let batch = batch.map_err(|e| e.with_context("file", location))?;
            floats.update(&batch)?;
            if partitioner.is_unpartitioned() {
                continue;
            }
            let groups = partitioner.group(&batch)?;
            for g in 0..groups.num_groups() {
                let key = groups.key_bytes(g);
                match &partition {
                    None => partition = Some((key.to_vec(), groups.partition_value(&partitioner, g)?)),
                    Some((k, first)) if k.as_slice() != key => {
                        let other = groups.partition_value(&partitioner, g)?;
                        return Err(validation(format!(
                            "file {location} holds rows of more than one partition of spec {} ({} and {}): \
                             add_files needs exactly one partition per file",
                            spec.spec_id(),
                            show_tuple(first),
                            show_tuple(&other)
                        )));
                    }
                    Some(_) => {}
                }
            }
        }
    }
    df.partition = match partition {
        Some((_, value)) => value,
        None if spec.fields().is_empty() => vec![],
        None => {
            return Err(validation(format!(
                "file {location} holds no rows: add_files cannot tell its partition in spec {}",
                spec.spec_id()
            )))
        }
    };
    check_required_columns(schema, &meta, &columns, location)?;
    let config = MetricsConfig::from_table_properties(table.properties(), schema)?;
    fill_metrics_of_columns(&mut df, &meta, &all, &columns, &config, &floats)
        .map_err(|e| e.with_context("file", location))?;
    Ok(df)
}

fn show_tuple(v: &StructValue) -> String {
    let parts: Vec<String> =
        v.iter().map(|x| x.as_ref().map_or("null".to_string(), |l| format!("{l:?}"))).collect();
    format!("({})", parts.join(", "))
}

fn top_level_id(schema: &Schema, mut id: i32) -> i32 {
    while let Some(p) = schema.parent_id(id) {
        id = p;
    }
    id
}

/// A file with field ids must carry the table's own: every id names a field of the current
/// schema, with the same name (else it was written for another table or schema).
fn check_field_ids(schema: &Schema, descr: &SchemaDescriptor, location: &str) -> Result<()> {
    fn walk(t: &ParquetType, schema: &Schema, problems: &mut Vec<String>) {
        let info = t.get_basic_info();
        if info.has_id() {
            match schema.field_by_id(info.id()) {
                None => problems.push(format!(
                    "column '{}' has field id {}, which is not in the table schema",
                    t.name(),
                    info.id()
                )),
                Some(f) if f.name != t.name() => problems.push(format!(
                    "column '{}' has field id {}, which the table schema names '{}'",
                    t.name(),
                    info.id(),
                    f.name
                )),
                Some(_) => {}
            }
        }
        if t.is_group() {
            for c in t.get_fields() {
                walk(c, schema, problems);
            }
        }
    }
    let mut problems = Vec::new();
    for c in descr.root_schema().get_fields() {
        walk(c, schema, &mut problems);
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(validation(format!(
        "file {location} carries Parquet field ids of another schema: {}",
        problems.join("; ")
    )))
}
