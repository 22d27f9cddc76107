//! The executor's read of one `FileScanTask`: the row groups of the task's byte range,
//! projected by field id (plus the key columns equality deletes need, dropped before
//! output), position deletes skipped while decoding (Parquet row selections), equality
//! deletes as a hashed anti-join, metadata columns `_file`/`_pos`, and an optional row limit.
//! Output batches hold at most `batch_size` rows; a data file is never held whole.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, BooleanArray, Int64Array, RecordBatch, RecordBatchOptions, StringArray};
use arrow_schema::SchemaRef;
use arrow_select::filter::filter_record_batch;
use parquet::arrow::arrow_reader::{ArrowReaderOptions, ParquetRecordBatchReader};
use parquet::schema::types::SchemaDescriptor;

use super::constants::constant_array;
use super::delete_filter::DeleteFilter;
use super::footer_schema::parquet_err;
use super::guard::{guarded, open_parquet};
use super::name_mapped;
use super::position_deletes::row_selection;
use super::reader::{adapt_file_batch, projection_mask};
use super::schema::schema_to_arrow;
use crate::error::{invalid_data, not_supported, Result};
use crate::expr::{filter_mask, BoundExpr, RowGroupEvaluator};
use crate::io::InputFile;
use crate::manifest::FileFormat;
use crate::scan::FileScanTask;
use crate::spec::{
    Literal, NameMapping, NestedField, PrimitiveType, Schema, TableMetadata, Type,
    PROPERTY_NAME_MAPPING_DEFAULT,
};

/// Reserved field id of the `_file` metadata column (the data file's path).
pub const FILE_PATH_FIELD_ID: i32 = 2147483646;
/// Reserved field id of the `_pos` metadata column (the row's position in its data file).
pub const ROW_POS_FIELD_ID: i32 = 2147483645;

/// Reserved field id of the `_row_id` metadata column (v3 row lineage).
pub const ROW_ID_FIELD_ID: i32 = 2147483540;
/// Reserved field id of the `_last_updated_sequence_number` metadata column (v3 row lineage).
pub const LAST_UPDATED_SEQ_FIELD_ID: i32 = 2147483539;

/// How to read a task.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// At most this many rows per output batch.
    pub batch_size: usize,
    /// Stop after this many output rows.
    pub limit: Option<usize>,
    /// The table's name mapping (`schema.name-mapping.default`), used for data files that
    /// carry no Parquet field ids.
    pub name_mapping: Option<Arc<NameMapping>>,
    /// Return only the rows the task's equality deletes remove (rows its position deletes
    /// remove are still skipped): what converting equality deletes to position deletes
    /// must delete, decided by the same key maps as every read.
    pub equality_deleted_only: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions { batch_size: 65536, limit: None, name_mapping: None, equality_deleted_only: false }
    }
}

impl ReadOptions {
    /// The defaults with `table`'s name mapping (`schema.name-mapping.default`), for reads
    /// of the table's own data files, which may be imported files without field ids.
    pub fn for_table(table: &TableMetadata) -> Result<Self> {
        let name_mapping = match table.properties().get(PROPERTY_NAME_MAPPING_DEFAULT) {
            Some(json) => Some(Arc::new(NameMapping::from_json(json)?)),
            None => None,
        };
        Ok(ReadOptions { name_mapping, ..ReadOptions::default() })
    }
}

enum OutCol {
    Data(usize),
    File,
    Pos,
    /// A row lineage column: its stored value (the read column at this index), or where
    /// null the inherited one (`Lineage`).
    RowId(usize),
    LastUpdated(usize),
}

/// What a row lineage column inherits where the data file stores null (the spec's "Row
/// Lineage"): `_row_id` = the file's `first_row_id` + `_pos`, `_last_updated_sequence_number`
/// = the file's data sequence number. A file without a `first_row_id` (written before v3,
/// never assigned one) inherits nothing: both stay null, as in Java.
#[derive(Debug, Clone, Copy)]
struct Lineage {
    first_row_id: Option<i64>,
    data_seq: i64,
}

/// Streams the rows of one task as batches of `schema_to_arrow(projected)`.
pub struct TaskReader {
    inner: Option<ParquetRecordBatchReader>,
    /// For a file without field ids: its decoded schema with the name-mapped ids attached.
    relabel: Option<SchemaRef>,
    /// Columns (of the read schema) filled with identity partition values.
    consts: Vec<PartitionConstant>,
    /// The task's residual filter, applied to every batch.
    residual: Option<BoundExpr>,
    read_schema: Schema,
    read_target: SchemaRef,
    output: SchemaRef,
    plan: Vec<OutCol>,
    /// The task's position and equality deletes (`delete_filter.rs`).
    deletes: DeleteFilter,
    /// Selected file positions as (first, count) runs, in output order; consumed for `_pos`.
    runs: std::vec::IntoIter<(i64, i64)>,
    run: (i64, i64),
    need_pos: bool,
    lineage: Lineage,
    path: String,
    remaining: Option<usize>,
    equality_deleted_only: bool,
}

impl std::fmt::Debug for TaskReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskReader").field("path", &self.path).field("output", &self.output).finish()
    }
}

/// Opens `task` for reading `projected` (which may include `_file`/`_pos`).
pub fn read_task(task: &FileScanTask, projected: &Schema, opts: ReadOptions) -> Result<TaskReader> {
    TaskReader::open(task, projected, opts)
}

impl TaskReader {
    pub fn open(task: &FileScanTask, projected: &Schema, opts: ReadOptions) -> Result<Self> {
        let path = task.file.file_path.clone();
        if task.file.file_format != FileFormat::Parquet {
            return Err(not_supported(format!(
                "{} data files are not supported",
                task.file.file_format.as_str()
            ))
            .with_context("file", path));
        }
        let output: SchemaRef = Arc::new(schema_to_arrow(projected)?);

        // The data columns to read: the projection without metadata columns, then the
        // equality keys the projection lacks.
        let mut read_fields: Vec<NestedField> = Vec::new();
        let mut plan = Vec::with_capacity(projected.fields().len());
        let mut need_pos = false;
        let lineage = Lineage { first_row_id: task.file.first_row_id, data_seq: task.data_sequence_number };
        for f in projected.fields() {
            plan.push(match f.id {
                FILE_PATH_FIELD_ID => OutCol::File,
                ROW_POS_FIELD_ID => {
                    need_pos = true;
                    OutCol::Pos
                }
                ROW_ID_FIELD_ID | LAST_UPDATED_SEQ_FIELD_ID => {
                    // The stored values (a file rewritten by Java keeps them), read as optional.
                    read_fields.push(NestedField::optional(f.id, f.name.clone(), PrimitiveType::Long.into()));
                    let i = read_fields.len() - 1;
                    if f.id == ROW_ID_FIELD_ID {
                        need_pos |= lineage.first_row_id.is_some();
                        OutCol::RowId(i)
                    } else {
                        OutCol::LastUpdated(i)
                    }
                }
                _ => {
                    read_fields.push(f.as_ref().clone());
                    OutCol::Data(read_fields.len() - 1)
                }
            });
        }
        let deletes = DeleteFilter::load(task, projected, &mut read_fields)?;
        // The residual filter: its columns are read too (and dropped before output).
        let residual = match &task.residual {
            Some(v) => Some(BoundExpr::from_json(v).map_err(|e| e.with_context("file", path.clone()))?),
            None => None,
        }
        .filter(|r| !matches!(r, BoundExpr::True));
        if let Some(r) = &residual {
            add_residual_columns(r, &mut read_fields)?;
        }
        let mut read_schema = Schema::new(projected.schema_id(), read_fields.clone(), vec![])?;
        let mut read_target: SchemaRef = Arc::new(schema_to_arrow(&read_schema)?);

        let file = InputFile::open(&path, u64::try_from(task.file.file_size_in_bytes).ok())?;
        let input = file.clone();
        let ropts = ArrowReaderOptions::new().with_skip_arrow_metadata(true);
        let builder = open_parquet(file, ropts, &path)?;
        let md = builder.metadata().clone();

        // Identity partition source columns the file lacks read as the partition value; they
        // are read as optional (absent = nulls) and replaced after decoding.
        let top_ids = name_mapped::top_level_ids(builder.parquet_schema(), opts.name_mapping.as_deref());
        let consts = partition_constants(task, &read_fields, &top_ids)?;
        if !consts.is_empty() {
            for c in &consts {
                if let Some(f) = read_fields.get_mut(c.index) {
                    f.required = false;
                }
            }
            read_schema = Schema::new(projected.schema_id(), read_fields, vec![])?;
            read_target = Arc::new(schema_to_arrow(&read_schema)?);
        }

        // Row groups whose first byte lies in the task's range and whose statistics do not
        // rule out the residual; their first row positions.
        let pruner = residual.as_ref().map(|r| {
            let columns = stats_columns(builder.parquet_schema(), opts.name_mapping.as_deref());
            (RowGroupEvaluator::new(r), columns)
        });
        let whole = task.start <= 0 && task.length >= task.file.file_size_in_bytes;
        let end = task.start.saturating_add(task.length);
        let mut groups = Vec::new();
        let mut chosen = Vec::new();
        let mut first_row = 0i64;
        for (i, rg) in md.row_groups().iter().enumerate() {
            let start = rg.columns().first().map_or(0, |c| c.byte_range().0 as i64);
            let in_range = whole || (start >= task.start && start < end);
            let may_match = || pruner.as_ref().is_none_or(|(ev, cols)| ev.eval(rg, cols));
            if in_range && !matches!(residual, Some(BoundExpr::False)) && may_match() {
                chosen.push(i);
                groups.push((first_row, rg.num_rows()));
            }
            first_row += rg.num_rows();
        }

        let deleted = deletes.deleted_positions();
        let (selection, runs) = row_selection(&groups, deleted, need_pos);

        let mapping = opts.name_mapping.as_deref();
        let mask = projection_mask(builder.parquet_schema(), &read_schema, &path, mapping)?;
        input.plan(
            chosen
                .iter()
                .filter_map(|&i| md.row_groups().get(i))
                .map(|rg| {
                    let leaves = rg.columns().iter().enumerate().filter(|(c, _)| mask.leaf_included(*c));
                    leaves.map(|(_, c)| c.byte_range()).map(|(s, l)| s..s + l).collect()
                })
                .collect(),
        );
        let unmapped = !name_mapped::file_has_field_ids(builder.parquet_schema());
        let mut builder =
            builder.with_projection(mask).with_batch_size(opts.batch_size.max(1)).with_row_groups(chosen);
        if !deleted.is_empty() {
            builder = builder.with_row_selection(selection);
        }
        let inner = guarded(&path, "cannot read Parquet file", || {
            builder.build().map_err(|e| parquet_err(e, "cannot read Parquet file", &path))
        })?;
        let relabel = match mapping {
            Some(m) if unmapped => {
                Some(name_mapped::mapped_arrow_schema(&arrow_array::RecordBatchReader::schema(&inner), m))
            }
            _ => None,
        };
        Ok(TaskReader {
            inner: Some(inner),
            relabel,
            consts,
            residual,
            read_schema,
            read_target,
            output,
            plan,
            deletes,
            runs: runs.into_iter(),
            run: (0, 0),
            need_pos,
            lineage,
            path,
            remaining: opts.limit,
            equality_deleted_only: opts.equality_deleted_only,
        })
    }

    fn fill_constants(&self, data: RecordBatch) -> Result<RecordBatch> {
        let rows = data.num_rows();
        let mut cols = data.columns().to_vec();
        for c in &self.consts {
            let target = self.read_target.field(c.index).data_type();
            let col = cols
                .get_mut(c.index)
                .ok_or_else(|| invalid_data("identity partition column out of range"))?;
            *col = constant_array(c.value.as_ref(), &c.ty, target, rows)?;
        }
        let ropts = RecordBatchOptions::new().with_row_count(Some(rows));
        RecordBatch::try_new_with_options(self.read_target.clone(), cols, &ropts)
            .map_err(|e| invalid_data("cannot fill identity partition columns").with_source(e))
    }

    /// The schema of every batch: `schema_to_arrow(projected)`.
    pub fn schema(&self) -> SchemaRef {
        self.output.clone()
    }

    /// The next `n` selected file positions.
    fn positions(&mut self, n: usize) -> Result<Int64Array> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            if self.run.1 == 0 {
                self.run = self
                    .runs
                    .next()
                    .ok_or_else(|| invalid_data("the data file has more rows than its row groups declare"))?;
                continue;
            }
            let take = (n - out.len()).min(self.run.1 as usize);
            out.extend(self.run.0..self.run.0 + take as i64);
            self.run = (self.run.0 + take as i64, self.run.1 - take as i64);
        }
        Ok(Int64Array::from(out))
    }

    fn process(&mut self, batch: RecordBatch) -> Result<Option<RecordBatch>> {
        let rows = batch.num_rows();
        let batch = match &self.relabel {
            Some(mapped) => name_mapped::relabel(&batch, mapped)?,
            None => batch,
        };
        let mut data = adapt_file_batch(&batch, &self.read_schema, &self.read_target)?;
        if !self.consts.is_empty() {
            data = self.fill_constants(data)?;
        }
        let pos = if self.need_pos { Some(Arc::new(self.positions(rows)?) as ArrayRef) } else { None };
        let mut keep: Option<BooleanArray> = self.deletes.keep_mask(&data)?;
        if self.equality_deleted_only {
            // The complement: the rows some equality delete removes (none without any).
            keep = Some(match keep {
                Some(k) => arrow::compute::not(&k)
                    .map_err(|e| invalid_data("cannot invert the equality delete mask").with_source(e))?,
                None => BooleanArray::from(vec![false; rows]),
            });
        }
        if let Some(r) = &self.residual {
            let m = filter_mask(r, &data)?;
            keep = Some(match keep {
                None => m,
                Some(k) => arrow::compute::and(&k, &m).map_err(|e| {
                    invalid_data("cannot combine the residual and delete masks").with_source(e)
                })?,
            });
        }
        let mut columns = Vec::with_capacity(self.plan.len());
        for c in &self.plan {
            columns.push(match c {
                OutCol::Data(i) => data.column(*i).clone(),
                OutCol::File => {
                    Arc::new(StringArray::from_iter_values(std::iter::repeat_n(&self.path, rows)))
                }
                OutCol::Pos => pos.clone().ok_or_else(|| invalid_data("_pos was not computed"))?,
                OutCol::RowId(i) => match self.lineage.first_row_id {
                    None => data.column(*i).clone(),
                    Some(first) => {
                        let pos = pos.as_ref().ok_or_else(|| invalid_data("_pos was not computed"))?;
                        inherit_row_ids(data.column(*i), pos, first, &self.path)?
                    }
                },
                OutCol::LastUpdated(i) => match self.lineage.first_row_id {
                    None => data.column(*i).clone(),
                    Some(_) => inherit_constant(data.column(*i), self.lineage.data_seq, &self.path)?,
                },
            });
        }
        let ropts = RecordBatchOptions::new().with_row_count(Some(rows));
        let mut out = RecordBatch::try_new_with_options(self.output.clone(), columns, &ropts)
            .map_err(|e| invalid_data("data file does not fit the projected schema").with_source(e))?;
        if let Some(k) = keep {
            if k.false_count() > 0 {
                out = filter_record_batch(&out, &k)
                    .map_err(|e| invalid_data("cannot apply equality deletes").with_source(e))?;
            }
        }
        if out.num_rows() == 0 {
            return Ok(None);
        }
        if let Some(r) = self.remaining.as_mut() {
            if out.num_rows() > *r {
                out = out.slice(0, *r);
            }
            *r -= out.num_rows();
        }
        Ok(Some(out))
    }
}

fn as_longs<'a>(a: &'a ArrayRef, what: &str, path: &str) -> Result<&'a Int64Array> {
    a.as_any().downcast_ref::<Int64Array>().ok_or_else(|| {
        invalid_data(format!("{what} must be a long column, found {}", a.data_type()))
            .with_context("file", path)
    })
}

/// `_row_id`: the stored value, or `first + _pos` where it is null.
fn inherit_row_ids(stored: &ArrayRef, pos: &ArrayRef, first: i64, path: &str) -> Result<ArrayRef> {
    let stored = as_longs(stored, "_row_id", path)?;
    let pos = as_longs(pos, "_pos", path)?;
    if stored.null_count() == 0 {
        return Ok(Arc::new(stored.clone()));
    }
    let out: Int64Array = stored
        .iter()
        .zip(pos.values().iter())
        .map(|(v, p)| Some(v.unwrap_or_else(|| first.saturating_add(*p))))
        .collect();
    Ok(Arc::new(out))
}

/// `_last_updated_sequence_number`: the stored value, or `seq` where it is null.
fn inherit_constant(stored: &ArrayRef, seq: i64, path: &str) -> Result<ArrayRef> {
    let stored = as_longs(stored, "_last_updated_sequence_number", path)?;
    if stored.null_count() == 0 {
        return Ok(Arc::new(stored.clone()));
    }
    Ok(Arc::new(stored.iter().map(|v| Some(v.unwrap_or(seq))).collect::<Int64Array>()))
}

/// Adds the top-level columns the residual reads that `read_fields` lacks. A nested column
/// outside the projection is refused: the reader cannot know its parents' types.
fn add_residual_columns(residual: &BoundExpr, read_fields: &mut Vec<NestedField>) -> Result<()> {
    let mut missing: Vec<(i32, String, PrimitiveType)> = vec![];
    residual.visit_predicates(&mut |p| {
        let t = &p.term;
        if !read_fields.iter().any(|f| contains_field_id(f, t.field_id))
            && !missing.iter().any(|m| m.0 == t.field_id)
        {
            missing.push((t.field_id, t.name.clone(), t.ty.clone()));
        }
    });
    for (id, name, ty) in missing {
        if name.contains('.') {
            return Err(not_supported(format!(
                "the residual filter reads nested field '{name}' (id {id}), which is not in the projection"
            )));
        }
        read_fields.push(NestedField::optional(id, name, Type::Primitive(ty)));
    }
    Ok(())
}

/// Is `id` the field's own id or one of its nested fields'?
pub fn contains_field_id(f: &NestedField, id: i32) -> bool {
    f.id == id
        || match &f.field_type {
            Type::Primitive(_) => false,
            Type::Struct(s) => s.fields.iter().any(|c| contains_field_id(c, id)),
            Type::List(l) => contains_field_id(&l.element_field, id),
            Type::Map(m) => contains_field_id(&m.key_field, id) || contains_field_id(&m.value_field, id),
        }
}

/// Field id -> Parquet leaf index of the file's non-repeated primitive columns, for
/// row-group statistics (values inside lists and maps have no per-row statistics).
fn stats_columns(descr: &SchemaDescriptor, mapping: Option<&NameMapping>) -> HashMap<i32, usize> {
    if !name_mapped::file_has_field_ids(descr) {
        let mut cols = mapping.map(|m| name_mapped::mapped_leaf_columns(descr, m)).unwrap_or_default();
        cols.retain(|_, i| descr.column(*i).max_rep_level() == 0);
        return cols;
    }
    let mut out = HashMap::new();
    for i in 0..descr.num_columns() {
        let c = descr.column(i);
        let info = c.self_type().get_basic_info();
        if c.max_rep_level() == 0 && info.has_id() {
            out.insert(info.id(), i);
        }
    }
    out
}

/// A read column filled with an identity partition value.
struct PartitionConstant {
    index: usize,
    value: Option<Literal>,
    ty: PrimitiveType,
}

/// The read columns that are identity partition sources absent from the data file
/// (`top_ids`: the file's top-level field ids), with the file's partition values.
fn partition_constants(
    task: &FileScanTask,
    read_fields: &[NestedField],
    top_ids: &HashSet<i32>,
) -> Result<Vec<PartitionConstant>> {
    let mut out = Vec::new();
    for &(source_id, pos) in &task.identity_partition_fields {
        let Some(index) = read_fields.iter().position(|f| f.id == source_id) else { continue };
        if top_ids.contains(&source_id) {
            continue;
        }
        let Some(NestedField { field_type: Type::Primitive(ty), .. }) = read_fields.get(index) else {
            continue;
        };
        let value = task.file.partition.get(pos).cloned().ok_or_else(|| {
            invalid_data(format!(
                "the partition tuple has {} values, the identity field of source id {source_id} is at position {pos}",
                task.file.partition.len()
            ))
        })?;
        out.push(PartitionConstant { index, value, ty: ty.clone() });
    }
    Ok(out)
}

/// The hash set of the equality delete `files` sharing key `ids`, from the process cache.
impl Iterator for TaskReader {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.remaining == Some(0) {
                self.inner = None;
                return None;
            }
            let inner = self.inner.as_mut()?;
            let decoded = guarded(&self.path, "cannot decode Parquet data", || {
                inner.next().transpose().map_err(|e| {
                    invalid_data("cannot decode Parquet data")
                        .with_source(e)
                        .with_context("file", self.path.clone())
                })
            });
            let batch = match decoded {
                Ok(Some(b)) => b,
                Ok(None) => return None,
                Err(e) => {
                    self.inner = None;
                    return Some(Err(e));
                }
            };
            match self.process(batch) {
                Ok(Some(b)) => return Some(Ok(b)),
                Ok(None) => continue,
                Err(e) => {
                    self.inner = None;
                    return Some(Err(e.with_context("file", self.path.clone())));
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "read_task_tests.rs"]
mod tests;
