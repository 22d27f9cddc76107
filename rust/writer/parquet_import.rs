//! Registering Parquet files written elsewhere as data files of a table (`table.add_files`,
//! PyIceberg's `add_files`, Java's `TableMigrationUtil`): the file's columns are matched to
//! fields by id (the file's own Parquet field ids, which must be ids the table's schemas gave
//! those names; else the table's name mapping, aliases of renamed columns included) and
//! checked against the current schema; its metrics come from the footer exactly as for the
//! files the writer makes ([`super::metrics`]), floats from the data; its partition tuple is
//! computed from the data with the table's transforms, and the file must hold exactly one.
//!
//! As Java's `add_files` procedure does, a column of a field the table has since dropped is
//! accepted and gets metrics under its id, and a renamed column is matched by its id or its
//! old name; two columns resolving to one field id are refused (Java fails on them too).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields, Schema as ArrowSchema};
use parquet::file::metadata::ParquetMetaData;
use parquet::file::reader::Length;
use parquet::schema::types::{SchemaDescriptor, Type as ParquetType};

use super::metrics::{fill_metrics_of_columns, leaves, FloatCollector, Leaf, MetricsConfig};
use super::partitioner::Partitioner;
use crate::arrow::name_mapped::{file_has_field_ids, mapped_arrow_schema, mapped_leaf_columns};
use crate::arrow::read_task::{read_task, ReadOptions};
use crate::arrow::schema::arrow_field_id;
use crate::error::{invalid_data, validation, Result};
use crate::io::InputFile;
use crate::manifest::DataFile;
use crate::scan::FileScanTask;
use crate::spec::values::Literal;
use crate::spec::{
    NameMapping, NestedField, NestedFieldRef, PartitionSpec, PrimitiveType, Schema, StructValue,
    TableMetadata, Type, PROPERTY_NAME_MAPPING_DEFAULT,
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

/// The DataFile of an existing Parquet file for the table's default spec (or spec `spec_id`:
/// Java's `add_files` imports into any identity spec matching the source). Its partition tuple
/// is computed from the data (exactly one per file), or, with `hive_partition`, read from the
/// values of a Hive-style partition path (`p=1/q=a`: one text per partition field, in the
/// spec's order, each field an identity; the columns need not be in the file), as Java's
/// `snapshot` / `migrate` / `add_files` read a Spark table's partitions.
pub fn import_parquet_file(
    table: &TableMetadata,
    location: &str,
    hive_partition: Option<&[Option<String>]>,
    spec_id: Option<i32>,
) -> Result<DataFile> {
    let schema = table.current_schema();
    let spec = match spec_id {
        None => table.default_spec(),
        Some(id) => table.spec_by_id(id).ok_or_else(|| {
            validation(format!("expected a partition spec id of the table to import into, found {id}"))
        })?,
    };
    let from_path =
        hive_partition.map(|values| path_partition(schema, spec, values, location)).transpose()?;
    let (file, meta) = read_footer(location)?;
    let descr = meta.file_metadata().schema_descr();
    let has_ids = file_has_field_ids(descr);
    let mapping = if has_ids { None } else { Some(Arc::new(import_name_mapping(table)?)) };
    if has_ids {
        check_field_ids(table, descr, location)?;
    }
    let arrow = parquet::arrow::parquet_to_arrow_schema(descr, None).map_err(|e| {
        invalid_data("cannot convert the Parquet schema to Arrow")
            .with_context("file", location)
            .with_source(e)
    })?;
    // The file's columns with their field ids (by the name mapping for a file without ids),
    // checked against the current schema under its names.
    let arrow = match &mapping {
        Some(m) => mapped_arrow_schema(&arrow, m).as_ref().clone(),
        None => arrow,
    };
    check_distinct_ids(&arrow, has_ids, location)?;
    super::check_arrow_schema(schema, &in_current_names(&arrow, schema)?)
        .map_err(|e| validation(format!("file {location}: {}", e.message())))?;

    // Which field each Parquet column is (by id, or by the name mapping): a field of the
    // current schema or one it dropped, whose metrics Java's add_files records as well.
    let import = import_schema(table)?;
    let all = leaves(&import);
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
    // Only float columns the file has: one it lacks (a field added or dropped since) reads
    // as nulls, which are not the file's metrics.
    let float_tops = all
        .iter()
        .filter(|l| !l.repeated && matches!(l.ty, PrimitiveType::Float | PrimitiveType::Double))
        .filter(|l| columns.iter().flatten().any(|c| c.id == l.id))
        .map(|l| top_level_id(&import, l.id))
        .collect::<Vec<_>>();
    let mut wanted: Vec<NestedFieldRef> = Vec::new();
    let source_tops: Vec<i32> = match from_path {
        Some(_) => vec![], // the partition comes from the path, not the data
        None => spec.fields().iter().map(|p| top_level_id(schema, p.source_id)).collect(),
    };
    for f in import.fields() {
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
        if from_path.is_none() && !columns.iter().flatten().any(|l| l.id == p.source_id) {
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
    // With the partition from the path, the data is read for the float metrics only.
    let partitioner = match from_path {
        Some(_) => None,
        None => Some(Partitioner::try_new(&projected, spec)?).filter(|p| !p.is_unpartitioned()),
    };
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
            let Some(partitioner) = &partitioner else {
                continue;
            };
            let groups = partitioner.group(&batch)?;
            for g in 0..groups.num_groups() {
                let key = groups.key_bytes(g);
                match &partition {
                    None => partition = Some((key.to_vec(), groups.partition_value(partitioner, g)?)),
                    Some((k, first)) if k.as_slice() != key => {
                        let other = groups.partition_value(partitioner, g)?;
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
    df.partition = match (from_path, partition) {
        (Some(value), _) => value,
        (None, Some((_, value))) => value,
        (None, None) if spec.fields().is_empty() => vec![],
        (None, None) => {
            return Err(validation(format!(
                "file {location} holds no rows: add_files cannot tell its partition in spec {}",
                spec.spec_id()
            )))
        }
    };
    check_required_columns(schema, &meta, &columns, location)?;
    let config = MetricsConfig::for_table(table.properties(), &import, table.default_sort_order())?;
    fill_metrics_of_columns(&mut df, &meta, &all, &columns, &config, &floats)
        .map_err(|e| e.with_context("file", location))?;
    Ok(df)
}

/// The partition tuple of a Hive-style path's values (see `import_parquet_file`).
fn path_partition(
    schema: &Schema,
    spec: &PartitionSpec,
    values: &[Option<String>],
    location: &str,
) -> Result<StructValue> {
    if values.len() != spec.fields().len() {
        return Err(validation(format!(
            "file {location}: expected {} partition values for spec {} from its path, found {}",
            spec.fields().len(),
            spec.spec_id(),
            values.len()
        )));
    }
    spec.fields()
        .iter()
        .zip(values)
        .map(|(p, text)| {
            if !p.transform.is_identity() {
                return Err(validation(format!(
                    "file {location}: a partition path gives identity values, but partition field '{}' is {}",
                    p.name, p.transform
                )));
            }
            let ty = match schema.field_by_id(p.source_id).map(|f| &f.field_type) {
                Some(Type::Primitive(ty)) => ty,
                _ => {
                    return Err(validation(format!(
                        "file {location}: partition field '{}' has no primitive source column (field id {})",
                        p.name, p.source_id
                    )))
                }
            };
            Literal::from_partition_string(ty, text.as_deref())
                .map_err(|e| e.with_context("file", location).with_context("partition field", p.name.clone()))
        })
        .collect()
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

/// The schemas of the table, the current one first, then the others newest first.
fn schemas_newest_first(table: &TableMetadata) -> Vec<&Schema> {
    let current = table.current_schema();
    let mut older: Vec<&Schema> =
        table.schemas().iter().map(|s| s.as_ref()).filter(|s| s.schema_id() != current.schema_id()).collect();
    older.sort_by_key(|s| std::cmp::Reverse(s.schema_id()));
    std::iter::once(current.as_ref()).chain(older).collect()
}

/// The current schema plus every top-level field an earlier schema had and the current one
/// dropped (as optional, renamed `<name>#<id>` should a later field have taken its name):
/// a file written before the drop carries its column, whose metrics Java's `add_files`
/// records under its id. Nested fields dropped from a surviving struct are not added.
fn import_schema(table: &TableMetadata) -> Result<Schema> {
    let current = table.current_schema();
    let mut fields: Vec<NestedField> = current.fields().iter().map(|f| f.as_ref().clone()).collect();
    let mut ids: HashSet<i32> = current.all_fields().map(|f| f.id).collect();
    let mut names: HashSet<String> = fields.iter().map(|f| f.name.clone()).collect();
    for older in schemas_newest_first(table).into_iter().skip(1) {
        for f in older.fields() {
            let mut sub = vec![f.id];
            sub.extend(older.all_fields().filter(|c| top_level_id(older, c.id) == f.id).map(|c| c.id));
            if sub.iter().any(|id| ids.contains(id)) {
                continue;
            }
            ids.extend(sub);
            let mut dropped = f.as_ref().clone();
            dropped.required = false;
            if !names.insert(dropped.name.clone()) {
                dropped.name = format!("{}#{}", dropped.name, dropped.id);
                names.insert(dropped.name.clone());
            }
            fields.push(dropped);
        }
    }
    Schema::new(current.schema_id(), fields, vec![])
}

/// The file's Arrow schema (field ids in its metadata) under the current schema's names: a
/// field with an id of the current schema takes that field's name (a renamed column), one
/// with an id the current schema lacks (a dropped column) is left out; fields without an id
/// stay as they are (and are then unknown columns, unless the table has their name).
fn in_current_names(arrow: &ArrowSchema, schema: &Schema) -> Result<ArrowSchema> {
    fn fields(fs: &Fields, schema: &Schema) -> Result<Fields> {
        let mut out = Vec::with_capacity(fs.len());
        for f in fs {
            match arrow_field_id(f)? {
                Some(id) => {
                    let Some(tf) = schema.field_by_id(id) else { continue };
                    out.push(Arc::new(field(f, schema)?.with_name(tf.name.clone())));
                }
                None => out.push(Arc::new(field(f, schema)?)),
            }
        }
        Ok(out.into())
    }
    // A field with nested struct children renamed; list elements and map entries keep
    // their names (they are not matched by name).
    fn field(f: &Field, schema: &Schema) -> Result<Field> {
        let dt = match f.data_type() {
            DataType::Struct(cs) => DataType::Struct(fields(cs, schema)?),
            DataType::List(e) => DataType::List(Arc::new(field(e, schema)?)),
            DataType::LargeList(e) => DataType::LargeList(Arc::new(field(e, schema)?)),
            DataType::Map(entries, sorted) => {
                let kv = match entries.data_type() {
                    DataType::Struct(kv) => DataType::Struct(
                        kv.iter().map(|c| field(c, schema).map(Arc::new)).collect::<Result<Vec<_>>>()?.into(),
                    ),
                    other => other.clone(),
                };
                DataType::Map(Arc::new(entries.as_ref().clone().with_data_type(kv)), *sorted)
            }
            other => other.clone(),
        };
        Ok(f.clone().with_data_type(dt))
    }
    Ok(ArrowSchema::new_with_metadata(fields(arrow.fields(), schema)?, arrow.metadata().clone()))
}

/// Two columns of one file resolving to the same field id (a renamed column under both its
/// old and new name through the name mapping, or a repeated Parquet field id) are refused:
/// which one holds the field's values is unknown, and Java's `add_files` fails on them
/// ("Multiple entries with same value").
fn check_distinct_ids(arrow: &ArrowSchema, has_ids: bool, location: &str) -> Result<()> {
    fn walk(
        fs: &Fields,
        prefix: &str,
        seen: &mut HashMap<i32, String>,
        clash: &mut Vec<String>,
    ) -> Result<()> {
        for f in fs {
            let path = if prefix.is_empty() { f.name().clone() } else { format!("{prefix}.{}", f.name()) };
            if let Some(id) = arrow_field_id(f)? {
                if let Some(first) = seen.get(&id) {
                    clash.push(format!("columns '{first}' and '{path}' both have field id {id}"));
                } else {
                    seen.insert(id, path.clone());
                }
            }
            match f.data_type() {
                DataType::Struct(cs) => walk(cs, &path, seen, clash)?,
                DataType::List(e) | DataType::LargeList(e) => {
                    walk(&Fields::from(vec![e.clone()]), &path, seen, clash)?
                }
                DataType::Map(entries, _) => {
                    if let DataType::Struct(kv) = entries.data_type() {
                        walk(kv, &path, seen, clash)?;
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
    let (mut seen, mut clash) = (HashMap::new(), Vec::new());
    walk(arrow.fields(), "", &mut seen, &mut clash)?;
    if clash.is_empty() {
        return Ok(());
    }
    let how = if has_ids { "by its Parquet field ids" } else { "by the table's name mapping" };
    Err(validation(format!(
        "file {location} has more than one column for a field ({how}): {}",
        clash.join("; ")
    )))
}

/// A file with field ids must carry the table's own: every id is one a schema of the table
/// (the current one or an earlier one) gave a field of the same name, so a file written
/// before a rename or a drop is accepted, one written for another table is not.
fn check_field_ids(table: &TableMetadata, descr: &SchemaDescriptor, location: &str) -> Result<()> {
    fn walk(t: &ParquetType, schemas: &[&Schema], problems: &mut Vec<String>) {
        let info = t.get_basic_info();
        if info.has_id() {
            let id = info.id();
            let mut names: Vec<&str> = Vec::new();
            for s in schemas {
                if let Some(f) = s.field_by_id(id) {
                    if !names.contains(&f.name.as_str()) {
                        names.push(&f.name);
                    }
                }
            }
            if names.is_empty() {
                problems.push(format!(
                    "column '{}' has field id {id}, which no schema of the table has",
                    t.name()
                ));
            } else if !names.contains(&t.name()) {
                problems.push(format!(
                    "column '{}' has field id {id}, which the table schema names '{}'",
                    t.name(),
                    names.join("' / '")
                ));
            }
        }
        if t.is_group() {
            for c in t.get_fields() {
                walk(c, schemas, problems);
            }
        }
    }
    let schemas = schemas_newest_first(table);
    let mut problems = Vec::new();
    for c in descr.root_schema().get_fields() {
        walk(c, &schemas, &mut problems);
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(validation(format!(
        "file {location} carries Parquet field ids of another schema: {}",
        problems.join("; ")
    )))
}
