//! The write task of a merge-on-read DELETE (Spark's `SparkPositionDeltaWrite` for a
//! delete): for each planned `FileScanTask` (its residual is the delete condition), read the
//! positions of the rows the residual matches — through the same reader as every scan, so a
//! delete and a filtered read agree row for row, and rows an older delete already removed
//! are not deleted twice — and write them as position-delete files.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::Array;

use super::position_delete_writer::{DeleteGranularity, PositionDeleteWriter};
use crate::arrow::{read_task, ReadOptions, ROW_POS_FIELD_ID};
use crate::error::{invalid_data, Result};
use crate::manifest::{DataContentType, DataFile};
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
    /// File-scoped position-delete files whose positions were merged into the new files
    /// (file granularity, as Java 1.10's Spark writer does): the commit removes them.
    pub replaced_deletes: Vec<DataFile>,
}

/// Writes position deletes for the rows of `tasks` that their residual filters match.
/// On error every file written is deleted.
pub fn delete_rows(
    table: Arc<TableMetadata>,
    tasks: &[FileScanTask],
    write_id: &str,
    task_id: u32,
) -> Result<DeleteTaskResult> {
    let mut writer = PositionDeleteWriter::try_new(table, write_id, task_id)?;
    let projected = Schema::new(
        0,
        vec![NestedField::required(ROW_POS_FIELD_ID, "_pos", Type::Primitive(PrimitiveType::Long))],
        vec![],
    )?;
    let merge_previous = writer.granularity() == DeleteGranularity::File;
    let mut deleted = 0i64;
    let mut replaced = Vec::new();
    for task in tasks {
        let reader = read_task(task, &projected, ReadOptions::default())?;
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
        if any && merge_previous {
            replaced.extend(merge_previous_deletes(&mut writer, task)?);
        }
    }
    let delete_files = writer.close()?;
    Ok(DeleteTaskResult { delete_files, deleted_rows: deleted, replaced_deletes: replaced })
}

/// Adds the positions of the file-scoped position deletes that already apply to the task's
/// data file to `writer`, so the data file keeps one delete file; returns those files.
fn merge_previous_deletes(writer: &mut PositionDeleteWriter, task: &FileScanTask) -> Result<Vec<DataFile>> {
    let path = task.file.file_path.as_str();
    let mut out = Vec::new();
    for d in &task.deletes {
        let scoped = referenced_data_file(&d.file).is_some_and(|p| p == path);
        if d.file.content != DataContentType::PositionDeletes
            || !scoped
            || d.data_sequence_number < task.data_sequence_number
            || d.file.file_format != crate::manifest::FileFormat::Parquet
        {
            continue;
        }
        let index = crate::arrow::delete_cache::position_deletes(&d.file.file_path)?;
        writer.delete(&task.file, index.positions(path))?;
        out.push(d.file.clone());
    }
    Ok(out)
}

/// Writes position deletes from batches of (`file_path`, `pos`) rows — the `_file` / `_pos`
/// of rows an UPDATE or MERGE read — for the data files of `tasks` (which give each file's
/// spec, partition and the deletes already applying to it). A path not among them is an
/// error naming it. With file granularity, earlier file-scoped deletes of a data file that
/// gets new positions are merged in and returned as replaced, as in [`delete_rows`].
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
    let mut writer = PositionDeleteWriter::try_new(table, write_id, task_id)?;
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
    if writer.granularity() == DeleteGranularity::File {
        for path in touched {
            if let Some(task) = by_path.get(path) {
                replaced.extend(merge_previous_deletes(&mut writer, task)?);
            }
        }
    }
    Ok(DeleteTaskResult { delete_files: writer.close()?, deleted_rows: deleted, replaced_deletes: replaced })
}
