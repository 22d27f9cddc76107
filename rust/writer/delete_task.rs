//! The write task of a merge-on-read DELETE (Spark's `SparkPositionDeltaWrite` for a
//! delete): for each planned `FileScanTask` (its residual is the delete condition), read the
//! positions of the rows the residual matches — through the same reader as every scan, so a
//! delete and a filtered read agree row for row, and rows an older delete already removed
//! are not deleted twice — and write them as position-delete files: Parquet on format v2,
//! deletion vectors on v3 (Java's `SparkPositionDeltaWrite` picks its DV writer by the same
//! rule). Both keep one delete file per touched data file by merging its earlier deletes into
//! the new one (see [`merge_previous_deletes`]).

use std::collections::HashSet;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::Array;

use super::dv_writer::DeletionVectorWriter;
use super::position_delete_writer::{DeleteGranularity, PositionDeleteWriter};
use crate::arrow::{contains_field_id, delete_cache, read_task, ReadOptions, ROW_POS_FIELD_ID};
use crate::error::{invalid_data, Result};
use crate::expr::BoundExpr;
use crate::manifest::{DataContentType, DataFile, FileFormat};
use crate::scan::delete_file_index::referenced_data_file;
use crate::scan::FileScanTask;
use crate::spec::{NestedField, PrimitiveType, Schema, TableMetadata, Type};

/// What one delete task wrote.
#[derive(Debug, Default)]
pub struct DeleteTaskResult {
    /// The position-delete files written.
    pub delete_files: Vec<DataFile>,
    /// Rows deleted.
    pub deleted_rows: i64,
    /// File-scoped position-delete files and deletion vectors whose positions were merged
    /// into the new files (v2 with file granularity, and v3, as Java 1.10's Spark writer
    /// does): the commit removes them.
    pub replaced_deletes: Vec<DataFile>,
}

/// The task's delete writer: deletion vectors on format v3 and later, Parquet before.
enum Writer {
    Parquet(PositionDeleteWriter),
    Dv(DeletionVectorWriter),
}

impl Writer {
    fn try_new(table: Arc<TableMetadata>, write_id: &str, task_id: u32) -> Result<Self> {
        Ok(if table.format_version() >= 3 {
            Writer::Dv(DeletionVectorWriter::try_new(table, write_id, task_id)?)
        } else {
            Writer::Parquet(PositionDeleteWriter::try_new(table, write_id, task_id)?)
        })
    }

    fn delete(&mut self, data_file: &DataFile, positions: &[i64]) -> Result<()> {
        match self {
            Writer::Parquet(w) => w.delete(data_file, positions),
            Writer::Dv(w) => w.delete(data_file, positions),
        }
    }

    /// Whether a data file's earlier deletes go into its new delete file: always for
    /// vectors (a data file has at most one), with file granularity for Parquet.
    fn merges_previous(&self) -> bool {
        match self {
            Writer::Parquet(w) => w.granularity() == DeleteGranularity::File,
            Writer::Dv(_) => true,
        }
    }

    fn close(self) -> Result<Vec<DataFile>> {
        match self {
            Writer::Parquet(w) => w.close(),
            Writer::Dv(w) => w.close(),
        }
    }
}

/// Writes position deletes for the rows of `tasks` that their residual filters match.
/// On error every file written is deleted.
pub fn delete_rows(
    table: Arc<TableMetadata>,
    tasks: &[FileScanTask],
    write_id: &str,
    task_id: u32,
) -> Result<DeleteTaskResult> {
    let opts = ReadOptions::for_table(&table)?;
    delete_rows_read(table, tasks, write_id, task_id, opts)
}

/// Converts equality deletes to position deletes: writes position deletes (deletion vectors
/// on v3, merged with the data file's earlier ones as [`delete_rows`] does) for exactly the
/// rows of `tasks` that their equality deletes remove (the reader's
/// [`ReadOptions::equality_deleted_only`]: the same key maps and sequence-number rules as
/// every read). Rows earlier position deletes removed are not deleted twice.
pub fn convert_equality_deletes(
    table: Arc<TableMetadata>,
    tasks: &[FileScanTask],
    write_id: &str,
    task_id: u32,
) -> Result<DeleteTaskResult> {
    let opts = ReadOptions { equality_deleted_only: true, ..ReadOptions::for_table(&table)? };
    delete_rows_read(table, tasks, write_id, task_id, opts)
}

/// What a delete task reads: `_pos` (first), plus the top-level columns holding the fields
/// its residual filter reads (the reader itself adds only top-level primitive columns, so
/// a filter on a struct's field, or on a column whose name has a dot, needs them here).
fn delete_projection(schema: &Schema, task: &FileScanTask) -> Result<Schema> {
    let mut fields =
        vec![NestedField::required(ROW_POS_FIELD_ID, "_pos", Type::Primitive(PrimitiveType::Long))];
    if let Some(v) = &task.residual {
        let residual =
            BoundExpr::from_json(v).map_err(|e| e.with_context("file", task.file.file_path.clone()))?;
        let mut ids = HashSet::new();
        residual.visit_predicates(&mut |p| {
            ids.insert(p.term.field_id);
        });
        fields.extend(
            schema
                .fields()
                .iter()
                .filter(|f| ids.iter().any(|id| contains_field_id(f, *id)))
                .map(|f| f.as_ref().clone()),
        );
    }
    Schema::new(0, fields, vec![])
}

fn delete_rows_read(
    table: Arc<TableMetadata>,
    tasks: &[FileScanTask],
    write_id: &str,
    task_id: u32,
    opts: ReadOptions,
) -> Result<DeleteTaskResult> {
    let schema = table.current_schema().clone();
    let mut writer = Writer::try_new(table, write_id, task_id)?;
    let merge_previous = writer.merges_previous();
    let mut deleted = 0i64;
    let mut replaced = Vec::new();
    // A data file split over several tasks has its earlier deletes merged once.
    let mut merged: std::collections::HashSet<&str> = Default::default();
    for task in tasks {
        let projected = delete_projection(&schema, task)?;
        let reader = read_task(task, &projected, opts.clone())?;
        let mut any = false;
        for batch in reader {
            let batch = batch?;
            let pos = batch.column(0).as_primitive_opt::<Int64Type>().ok_or_else(|| {
                invalid_data("expected the _pos column to be int64")
                    .with_context("file", task.file.file_path.clone())
            })?;
            writer.delete(&task.file, pos.values())?;
            deleted += pos.len() as i64;
            any |= !pos.is_empty();
        }
        if any && merge_previous && merged.insert(task.file.file_path.as_str()) {
            replaced.extend(merge_previous_deletes(&mut writer, task)?);
        }
    }
    let delete_files = writer.close()?;
    Ok(DeleteTaskResult { delete_files, deleted_rows: deleted, replaced_deletes: replaced })
}

/// Adds the positions of the deletes that already apply to the task's data file to `writer`,
/// so the data file keeps one delete file; returns the files the commit removes.
///
/// Parquet (v2, file granularity): the file-scoped Parquet position deletes, merged and
/// replaced. Vectors (v3), as Java's `BaseDVFileWriter` with Spark's `PreviousDeleteLoader`
/// (`SparkBatchQueryScan.rewritableDeletes(forDVs = true)`: every non-equality delete of
/// the task): the data file's vector if it has one (which already holds every earlier
/// position delete, so the v2 files are not read), else every v2 position delete applying
/// to it, file- or partition-scoped; replaced are the vector and the file-scoped files only
/// (`ContentFileUtil.isFileScoped`: a partition-scoped file also covers other data files).
/// The deletes taken are the ones the reader applied (see `arrow::delete_filter`), so no row
/// it treated as deleted comes back.
fn merge_previous_deletes(writer: &mut Writer, task: &FileScanTask) -> Result<Vec<DataFile>> {
    let path = task.file.file_path.as_str();
    let applies = |d: &&crate::scan::DeleteFileRef| {
        d.file.content == DataContentType::PositionDeletes
            && d.data_sequence_number >= task.data_sequence_number
    };
    let file_scoped = |f: &DataFile| referenced_data_file(f).is_some_and(|p| p == path);
    let mut out = Vec::new();
    if matches!(writer, Writer::Parquet(_)) {
        for d in task.deletes.iter().filter(applies) {
            if !file_scoped(&d.file) || d.file.file_format != FileFormat::Parquet {
                continue;
            }
            let index = delete_cache::position_deletes(&d.file.file_path)?;
            writer.delete(&task.file, index.positions(path))?;
            out.push(d.file.clone());
        }
        return Ok(out);
    }
    let (dvs, v2): (Vec<_>, Vec<_>) =
        task.deletes.iter().filter(applies).partition(|d| d.file.file_format == FileFormat::Puffin);
    if dvs.is_empty() {
        for d in v2 {
            let index = delete_cache::position_deletes(&d.file.file_path)?;
            writer.delete(&task.file, index.positions(path))?;
            if file_scoped(&d.file) {
                out.push(d.file.clone());
            }
        }
        return Ok(out);
    }
    for d in dvs {
        if d.file.referenced_data_file.as_deref() != Some(path) {
            return Err(invalid_data(format!(
                "a deletion vector for {} is attached to {path}",
                d.file.referenced_data_file.as_deref().unwrap_or("no data file")
            ))
            .with_context("delete file", d.file.file_path.clone()));
        }
        writer.delete(&task.file, delete_cache::deletion_vector(&d.file)?.positions(path))?;
        out.push(d.file.clone());
    }
    // v2 files beside a vector (the planner attaches none): the vector holds their positions.
    out.extend(v2.into_iter().filter(|d| file_scoped(&d.file)).map(|d| d.file.clone()));
    Ok(out)
}

/// Writes position deletes from batches of (`file_path`, `pos`) rows — the `_file` / `_pos`
/// of rows an UPDATE or MERGE read — for the data files of `tasks` (which give each file's
/// spec, partition and the deletes already applying to it). A path not among them is an
/// error naming it. Earlier deletes of a data file that gets new positions are merged in and
/// returned as replaced, as in [`delete_rows`].
pub fn write_position_deletes(
    table: Arc<TableMetadata>,
    tasks: &[FileScanTask],
    batches: impl Iterator<Item = Result<arrow_array::RecordBatch>>,
    write_id: &str,
    task_id: u32,
) -> Result<DeleteTaskResult> {
    use std::collections::{BTreeSet, HashMap};
    let by_path: HashMap<&str, &FileScanTask> =
        tasks.iter().map(|t| (t.file.file_path.as_str(), t)).collect();
    let mut writer = Writer::try_new(table, write_id, task_id)?;
    let mut deleted = 0i64;
    let mut touched: BTreeSet<&str> = BTreeSet::new();
    for batch in batches {
        let batch = batch?;
        let (Some(paths), Some(pos)) = (batch.column_by_name("file_path"), batch.column_by_name("pos"))
        else {
            return Err(crate::error::validation(format!(
                "expected position-delete rows with columns file_path and pos, found {:?}",
                batch.schema().fields().iter().map(|f| f.name().clone()).collect::<Vec<_>>()
            )));
        };
        let paths = arrow_cast::cast(paths, &arrow_schema::DataType::Utf8)
            .map_err(|e| invalid_data("cannot read file_path as strings").with_source(e))?;
        let paths = paths.as_string::<i32>();
        let pos = arrow_cast::cast(pos, &arrow_schema::DataType::Int64)
            .map_err(|e| invalid_data("cannot read pos as int64").with_source(e))?;
        let pos = pos.as_primitive::<Int64Type>();
        if paths.null_count() > 0 || pos.null_count() > 0 {
            return Err(crate::error::validation(
                "position-delete rows must not have a null file_path or pos",
            ));
        }
        // Runs of equal paths (the usual order: one file's rows together).
        let mut start = 0usize;
        while start < batch.num_rows() {
            let path = paths.value(start);
            let mut end = start + 1;
            while end < batch.num_rows() && paths.value(end) == path {
                end += 1;
            }
            let task = by_path.get(path).ok_or_else(|| {
                crate::error::validation("a position delete names a data file the operation did not read")
                    .with_context("data file", path.to_string())
            })?;
            writer.delete(&task.file, &pos.values()[start..end])?;
            touched.insert(task.file.file_path.as_str());
            deleted += (end - start) as i64;
            start = end;
        }
    }
    let mut replaced = Vec::new();
    if writer.merges_previous() {
        for path in touched {
            if let Some(task) = by_path.get(path) {
                replaced.extend(merge_previous_deletes(&mut writer, task)?);
            }
        }
    }
    Ok(DeleteTaskResult { delete_files: writer.close()?, deleted_rows: deleted, replaced_deletes: replaced })
}

#[cfg(test)]
#[path = "delete_task_tests.rs"]
mod tests;
