//! Position-delete files (spec: "Position Delete Files"; Iceberg Java's
//! `PositionDeleteWriter` / Spark's `SparkPositionDeltaWrite`): Parquet files of
//! `file_path` (field id 2147483546) and `pos` (2147483545), rows sorted by path then
//! position, in the partition of the data files they reference.
//!
//! Granularity (`write.delete.granularity`): `file` (the default, as Java 1.10 writes them)
//! makes one delete file per data file with `referenced_data_file` set, which readers apply
//! to that file only; `partition` makes one file per partition covering several data files,
//! with the `file_path` / `pos` counts and bounds dropped as Java drops them (checklist T6).
//!
//! Positions are collected first (8 bytes a deleted row) and written on `close`, so the
//! rows can be sorted and duplicates (a row named twice by one operation) dropped. Deleting a
//! row an older delete already covers is prevented upstream: the positions come from reads
//! that apply the existing deletes.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};

use super::deleted_positions::{DeletedPositions, Target};
use super::metrics::MetricsConfig;
use super::parquet_writer::{ParquetWriterProps, TARGET_FILE_SIZE_BYTES};
use super::rolling::RollingDataWriter;
use crate::arrow::schema_to_arrow;
use crate::error::{invalid_data, validation, Result};
use crate::io::delete_file;
use crate::manifest::{DataContentType, DataFile};
use crate::spec::{LocationProvider, NestedField, PrimitiveType, Schema, TableMetadata, Type};

/// Reserved field id of a position-delete file's `file_path` column.
pub const DELETE_FILE_PATH_FIELD_ID: i32 = 2147483546;
/// Reserved field id of a position-delete file's `pos` column.
pub const DELETE_FILE_POS_FIELD_ID: i32 = 2147483545;
/// `write.delete.granularity`: `file` or `partition`.
pub const WRITE_DELETE_GRANULARITY: &str = "write.delete.granularity";
/// `write.delete.target-file-size-bytes` (Java's default 64 MiB).
pub const DELETE_TARGET_FILE_SIZE_BYTES: &str = "write.delete.target-file-size-bytes";
const DEFAULT_DELETE_TARGET_FILE_SIZE_BYTES: u64 = 64 * 1024 * 1024;
/// Rows per batch handed to the Parquet writer.
const BATCH_ROWS: usize = 65536;

/// How many data files one position-delete file may cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeleteGranularity {
    /// One delete file per data file (`referenced_data_file` set).
    #[default]
    File,
    /// One delete file per partition.
    Partition,
}

impl DeleteGranularity {
    /// From the table property (default `file`).
    pub fn from_properties(props: &BTreeMap<String, String>) -> Result<Self> {
        match props.get(WRITE_DELETE_GRANULARITY).map(|s| s.trim().to_ascii_lowercase()) {
            None => Ok(DeleteGranularity::File),
            Some(s) if s == "file" => Ok(DeleteGranularity::File),
            Some(s) if s == "partition" => Ok(DeleteGranularity::Partition),
            Some(other) => Err(validation(format!(
                "expected '{WRITE_DELETE_GRANULARITY}' to be 'file' or 'partition', found '{other}'"
            ))),
        }
    }
}

/// The schema of a position-delete file.
pub fn position_delete_schema() -> Result<Schema> {
    Schema::new(
        0,
        vec![
            NestedField::required(
                DELETE_FILE_PATH_FIELD_ID,
                "file_path",
                Type::Primitive(PrimitiveType::String),
            ),
            NestedField::required(DELETE_FILE_POS_FIELD_ID, "pos", Type::Primitive(PrimitiveType::Long)),
        ],
        vec![],
    )
}

/// Collects deleted row positions per data file and writes them as position-delete files.
#[derive(Debug)]
pub struct PositionDeleteWriter {
    table: Arc<TableMetadata>,
    schema: Arc<Schema>,
    props: ParquetWriterProps,
    metrics: Arc<MetricsConfig>,
    granularity: DeleteGranularity,
    locations: Arc<LocationProvider>,
    write_id: String,
    task_id: u32,
    targets: DeletedPositions,
}

impl PositionDeleteWriter {
    /// A writer for `table` (its properties, specs and data location); files are named
    /// `<task_id:05>-<write_id>-<n:05>-deletes.parquet` under the data file's partition.
    pub fn try_new(table: Arc<TableMetadata>, write_id: &str, task_id: u32) -> Result<Self> {
        let properties = table.properties();
        let mut delete_props = properties.clone();
        let target = properties
            .get(DELETE_TARGET_FILE_SIZE_BYTES)
            .cloned()
            .unwrap_or_else(|| DEFAULT_DELETE_TARGET_FILE_SIZE_BYTES.to_string());
        delete_props.insert(TARGET_FILE_SIZE_BYTES.to_string(), target);
        let props = ParquetWriterProps::from_table_properties(&delete_props)
            .map_err(|e| e.with_context("property", DELETE_TARGET_FILE_SIZE_BYTES))?;
        let schema = position_delete_schema()?;
        // Java's MetricsConfig.forPositionDelete: full metrics for file_path and pos.
        let full = BTreeMap::from([("write.metadata.metrics.default".to_string(), "full".to_string())]);
        let metrics = Arc::new(MetricsConfig::from_table_properties(&full, &schema)?);
        let granularity = DeleteGranularity::from_properties(properties)?;
        let locations = Arc::new(LocationProvider::new(table.location(), properties));
        Ok(PositionDeleteWriter {
            table,
            schema: Arc::new(schema),
            props,
            metrics,
            granularity,
            locations,
            write_id: write_id.to_string(),
            task_id,
            targets: DeletedPositions::default(),
        })
    }

    /// Overrides the table's granularity.
    pub fn with_granularity(mut self, granularity: DeleteGranularity) -> Self {
        self.granularity = granularity;
        self
    }

    /// Records deleted positions of the data file `data_file` (its spec id and partition
    /// locate the delete file). Positions may come in any order and repeat.
    pub fn delete(&mut self, data_file: &DataFile, positions: &[i64]) -> Result<()> {
        self.targets.record(data_file, positions)
    }

    /// Rolls to a new file at this size instead of `write.delete.target-file-size-bytes`
    /// (a rewrite's group max output size).
    pub fn with_target_file_size(mut self, bytes: i64) -> Self {
        if bytes > 0 {
            self.props.target_file_size_bytes = bytes as u64;
        }
        self
    }

    /// The granularity files are written with.
    pub fn granularity(&self) -> DeleteGranularity {
        self.granularity
    }

    /// Rows recorded so far (before removing duplicates).
    pub fn pending_rows(&self) -> usize {
        self.targets.pending_rows()
    }

    /// Writes the delete files and returns them; on error deletes every file it wrote.
    pub fn close(self) -> Result<Vec<DataFile>> {
        let mut groups: BTreeMap<(i32, String), Vec<(String, Target)>> = BTreeMap::new();
        let mut n = 0usize;
        for (path, t) in self.targets.iter() {
            let key = match self.granularity {
                DeleteGranularity::File => {
                    n += 1;
                    (t.spec_id, format!("{n:012}"))
                }
                DeleteGranularity::Partition => (t.spec_id, format!("{:?}", t.partition)),
            };
            groups.entry(key).or_default().push((path.clone(), t.clone()));
        }
        let mut written: Vec<DataFile> = Vec::new();
        let counter = std::rc::Rc::new(std::cell::Cell::new(0u32));
        for targets in groups.into_values() {
            match self.write_group(targets, &counter) {
                Ok(files) => written.extend(files),
                Err(e) => {
                    for f in &written {
                        let _ = delete_file(&f.file_path);
                    }
                    return Err(e);
                }
            }
        }
        Ok(written)
    }

    /// Writes one delete file (rolling at the delete target size) for data files of one
    /// partition, in path order.
    fn write_group(
        &self,
        mut targets: Vec<(String, Target)>,
        counter: &std::rc::Rc<std::cell::Cell<u32>>,
    ) -> Result<Vec<DataFile>> {
        let Some((_, first)) = targets.first() else { return Ok(vec![]) };
        let (spec_id, partition) = (first.spec_id, first.partition.clone());
        let spec = self.table.spec_by_id(spec_id).ok_or_else(|| {
            validation(format!("data file has unknown partition spec id {spec_id}"))
                .with_context("table", self.table.location().to_string())
        })?;
        let dir = if spec.fields().is_empty() {
            None
        } else {
            Some(spec.partition_path(self.table.current_schema(), &partition)?)
        };
        let locations = self.locations.clone();
        let (task_id, write_id, counter) = (self.task_id, self.write_id.clone(), counter.clone());
        let gen = move || {
            let n = counter.get() + 1;
            counter.set(n);
            locations
                .new_data_location(dir.as_deref(), &format!("{task_id:05}-{write_id}-{n:05}-deletes.parquet"))
        };
        let mut writer = RollingDataWriter::new(
            self.schema.clone(),
            self.props.clone(),
            self.metrics.clone(),
            partition,
            spec_id,
            gen,
        );
        let arrow_schema = Arc::new(schema_to_arrow(&self.schema)?);
        let paths: BTreeSet<String> = targets.iter().map(|(p, _)| p.clone()).collect();
        for (path, t) in targets.iter_mut() {
            t.positions.sort_unstable();
            t.positions.dedup();
            for chunk in t.positions.chunks(BATCH_ROWS) {
                let paths: ArrayRef =
                    Arc::new(StringArray::from_iter_values(std::iter::repeat_n(path.as_str(), chunk.len())));
                let pos: ArrayRef = Arc::new(Int64Array::from(chunk.to_vec()));
                let batch = RecordBatch::try_new(arrow_schema.clone(), vec![paths, pos])
                    .map_err(|e| invalid_data("cannot build a position-delete batch").with_source(e))?;
                writer.write(&batch)?;
            }
        }
        let mut files = writer.close()?;
        for f in &mut files {
            f.content = DataContentType::PositionDeletes;
            f.sort_order_id = None;
            if paths.len() == 1 {
                f.referenced_data_file = paths.first().cloned();
            } else {
                // A file covering several data files: no counts or bounds on file_path / pos
                // (Java's MetricsUtil.copyWithoutFieldCountsAndBounds), so readers never take
                // it for a file-scoped delete (T6).
                for id in [DELETE_FILE_PATH_FIELD_ID, DELETE_FILE_POS_FIELD_ID] {
                    f.value_counts.remove(&id);
                    f.null_value_counts.remove(&id);
                    f.nan_value_counts.remove(&id);
                    f.lower_bounds.remove(&id);
                    f.upper_bounds.remove(&id);
                }
            }
        }
        Ok(files)
    }
}

#[cfg(test)]
#[path = "position_delete_writer_tests.rs"]
mod tests;
