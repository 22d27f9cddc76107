//! The write task behind `write_data_files`: validate and conform each batch (see
//! `input_schema.rs`), partition it with vectorised transforms (`partitioner.rs`) and write
//! rolling Parquet files under `<data location>/<partition path>/` through a fanout or
//! clustered writer (`partitioned.rs`). On error every file written is deleted.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

// Re-exported so `writer::data_writer::{check_arrow_schema, conform_batch}` keep working.
pub use super::input_schema::{check_arrow_schema, conform_batch};
use super::metrics::MetricsConfig;
use super::parquet_writer::ParquetWriterProps;
use super::partitioned::{FileSettings, PartitionedWriter};
use super::sorter::Sorter;
use super::zorder::ZOrder;
use crate::arrow::schema_to_arrow;
use crate::arrow::{LAST_UPDATED_SEQ_FIELD_ID, ROW_ID_FIELD_ID};
use crate::error::{validation, Result};
use crate::manifest::DataFile;
use crate::spec::{
    LocationProvider, NestedField, PartitionSpec, PrimitiveType, Schema, SortOrder, TableMetadata,
};

pub use crate::spec::location_provider::{WRITE_DATA_PATH, WRITE_FOLDER_STORAGE_PATH};
/// Fanout writer bound (icefloe's own property; Java's fanout writer has no bound).
pub const WRITE_FANOUT_MAX_OPEN_FILES: &str = "write.fanout.max-open-files";
pub const DEFAULT_MAX_OPEN_FILES: usize = 1000;
/// Arrow memory a sorting write task buffers (over all its partitions) before it spills the
/// largest partition's rows as a sorted run.
pub const DEFAULT_SORT_BUFFER_BYTES: usize = 256 * 1024 * 1024;

/// How rows reach the files of their partitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WriterMode {
    /// Fanout (safe for any input order). Clustered input still makes one file per
    /// partition with fanout; `Clustered` only saves the open files.
    #[default]
    Auto,
    Fanout,
    /// Input grouped by partition: one open file; a partition that comes back is an error.
    Clustered,
}

impl WriterMode {
    pub fn parse(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(WriterMode::Auto),
            "fanout" => Ok(WriterMode::Fanout),
            "clustered" => Ok(WriterMode::Clustered),
            other => {
                Err(validation(format!("expected writer mode auto, fanout or clustered, found '{other}'")))
            }
        }
    }
}

/// Options of one write task (all optional; defaults from the table properties).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteOptions {
    pub mode: WriterMode,
    /// Fanout: open files at most (default `write.fanout.max-open-files` or 1000).
    pub max_open_files: Option<usize>,
    /// Sort rows within each file by the table's default sort order.
    pub sort: bool,
    /// When sorting: Arrow bytes buffered over all partitions before the largest is spilled
    /// as a sorted run to merge at the end (default 256 MiB).
    pub sort_buffer_bytes: Option<usize>,
    /// Roll files at this size instead of the table's `write.target-file-size-bytes` (a
    /// rewrite writes to its group's max output file size, as Java's rewrite runners do).
    pub target_file_size_bytes: Option<u64>,
    /// Partition the files by this spec of the table instead of the default spec (a
    /// rewrite's `output-spec-id`).
    pub spec_id: Option<i32>,
    /// When sorting: sort by this order instead of the table's default; the files record
    /// its order id (a rewrite's `sort_order`: the id of the table's order with the same
    /// fields, or 0 when it is none of them, as Java records).
    pub sort_order: Option<SortOrder>,
    /// When sorting: sort by this z-order's z-values instead of a sort order (Java's
    /// z-order rewrite); the files record the unsorted order id, as Java's do.
    pub zorder: Option<ZOrder>,
}

/// Writes `batches` into data files of `table` (current schema, default spec, properties).
/// Files are named `<task_id:05>-<write_id>-<n:05>.parquet`.
pub fn write_data_files(
    table: &TableMetadata,
    batches: impl Iterator<Item = Result<RecordBatch>>,
    write_id: &str,
    task_id: u32,
) -> Result<Vec<DataFile>> {
    write_data_files_opts(table, batches, write_id, task_id, &WriteOptions::default())
}

/// Whether writes to `table` sort by default: it has a sort order this writer can sort by
/// (primitive columns, or fields of struct columns). Iceberg Java's Spark writes order a sorted table's rows
/// within each task (`SparkWriteUtil.writeOrdering`), so each file holds a sorted run.
pub fn sorts_by_default(table: &TableMetadata) -> bool {
    matches!(Sorter::try_new(table.current_schema(), table.default_sort_order(), 1), Ok(Some(_)))
}

/// [`write_data_files`] with options (writer mode, open-file bound, sorting).
pub fn write_data_files_opts(
    table: &TableMetadata,
    batches: impl Iterator<Item = Result<RecordBatch>>,
    write_id: &str,
    task_id: u32,
    options: &WriteOptions,
) -> Result<Vec<DataFile>> {
    // v3 row lineage: rows that carry `_row_id` / `_last_updated_sequence_number` (updated
    // or copied rows, as Java's writers keep them) are written with those columns.
    let mut batches = batches.peekable();
    let schema = match batches.peek() {
        Some(Ok(b)) => write_schema(table, b.schema().as_ref())?,
        _ => table.current_schema().clone(),
    };
    let spec = match options.spec_id {
        None => table.default_spec(),
        Some(id) => table.spec_by_id(id).ok_or_else(|| {
            let ids: Vec<i32> = table.partition_specs().iter().map(|s| s.spec_id()).collect();
            validation(format!("expected a partition spec id of the table {ids:?} to write with, found {id}"))
        })?,
    };
    let task = WriteTask::new(
        &schema,
        spec,
        options.sort_order.as_ref().unwrap_or_else(|| table.default_sort_order()),
        table.default_sort_order(),
        table.location(),
        table.properties(),
        write_id,
        task_id,
        options,
        "",
    )?;
    task.run(batches)
}

/// The schema data files of `table` are written with from rows of schema `input`: the
/// table's, plus the row lineage columns when the table is v3 and `input` carries them.
pub fn write_schema(table: &TableMetadata, input: &arrow_schema::Schema) -> Result<Arc<Schema>> {
    if table.format_version() >= 3 && has_lineage_columns(input) {
        Ok(Arc::new(with_lineage_fields(table.current_schema())?))
    } else {
        Ok(table.current_schema().clone())
    }
}

/// Whether `schema` holds a v3 row lineage column.
fn has_lineage_columns(schema: &arrow_schema::Schema) -> bool {
    schema.fields().iter().any(|f| f.name() == ROW_ID_NAME || f.name() == LAST_UPDATED_NAME)
}

const ROW_ID_NAME: &str = "_row_id";
const LAST_UPDATED_NAME: &str = "_last_updated_sequence_number";

/// `schema` plus the row lineage columns (optional longs with their reserved field ids),
/// the schema of a data file that keeps rows' lineage.
fn with_lineage_fields(schema: &Schema) -> Result<Schema> {
    let mut fields: Vec<NestedField> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
    fields.push(NestedField::optional(ROW_ID_FIELD_ID, ROW_ID_NAME, PrimitiveType::Long.into()));
    fields.push(NestedField::optional(
        LAST_UPDATED_SEQ_FIELD_ID,
        LAST_UPDATED_NAME,
        PrimitiveType::Long.into(),
    ));
    Schema::new(schema.schema_id(), fields, schema.identifier_field_ids().to_vec())
}

/// [`write_data_files`] with the table's pieces given separately (unsorted, default options).
pub fn write_data_files_with(
    schema: &Schema,
    spec: &PartitionSpec,
    location: &str,
    properties: &BTreeMap<String, String>,
    batches: impl Iterator<Item = Result<RecordBatch>>,
    write_id: &str,
    task_id: u32,
) -> Result<Vec<DataFile>> {
    let unsorted = SortOrder::unsorted();
    write_unsorted(schema, spec, &unsorted, location, properties, batches, write_id, task_id, "")
}

/// [`write_data_files_with`] for delete files: names end in `-deletes.parquet`; metrics as
/// Java's for the table's sort order `table_order`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn write_delete_files_with(
    schema: &Schema,
    spec: &PartitionSpec,
    table_order: &SortOrder,
    location: &str,
    properties: &BTreeMap<String, String>,
    batches: impl Iterator<Item = Result<RecordBatch>>,
    write_id: &str,
    task_id: u32,
) -> Result<Vec<DataFile>> {
    write_unsorted(schema, spec, table_order, location, properties, batches, write_id, task_id, "-deletes")
}

#[allow(clippy::too_many_arguments)]
fn write_unsorted(
    schema: &Schema,
    spec: &PartitionSpec,
    table_order: &SortOrder,
    location: &str,
    properties: &BTreeMap<String, String>,
    batches: impl Iterator<Item = Result<RecordBatch>>,
    write_id: &str,
    task_id: u32,
    file_suffix: &'static str,
) -> Result<Vec<DataFile>> {
    let opts = WriteOptions::default();
    let order = SortOrder::unsorted();
    WriteTask::new(
        schema,
        spec,
        &order,
        table_order,
        location,
        properties,
        write_id,
        task_id,
        &opts,
        file_suffix,
    )?
    .run(batches)
}

struct WriteTask {
    schema: Arc<Schema>,
    target: SchemaRef,
    writer: PartitionedWriter,
    checked: Option<SchemaRef>,
}

impl WriteTask {
    #[allow(clippy::too_many_arguments)]
    fn new(
        schema: &Schema,
        spec: &PartitionSpec,
        order: &SortOrder,
        table_order: &SortOrder,
        location: &str,
        properties: &BTreeMap<String, String>,
        write_id: &str,
        task_id: u32,
        options: &WriteOptions,
        file_suffix: &'static str,
    ) -> Result<Self> {
        let locations = Arc::new(LocationProvider::new(location, properties));
        let mut props = ParquetWriterProps::from_table_properties(properties)?;
        if let Some(t) = options.target_file_size_bytes.filter(|t| *t > 0) {
            props.target_file_size_bytes = t;
        }
        let max_open = match (options.max_open_files, properties.get(WRITE_FANOUT_MAX_OPEN_FILES)) {
            (Some(n), _) => n,
            (None, Some(v)) => v.trim().parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(|| {
                validation(format!(
                    "expected a positive integer for table property '{WRITE_FANOUT_MAX_OPEN_FILES}', found '{v}'"
                ))
            })?,
            (None, None) => DEFAULT_MAX_OPEN_FILES,
        };
        if max_open == 0 {
            return Err(validation("max_open_files must be positive, found 0"));
        }
        let sorter = if options.sort {
            let cap = options.sort_buffer_bytes.unwrap_or(DEFAULT_SORT_BUFFER_BYTES);
            match &options.zorder {
                Some(z) => Some(Sorter::z_order(schema, z, cap)?),
                None => Sorter::try_new(schema, order, cap)?,
            }
        } else {
            None
        };
        let files = FileSettings {
            schema: Arc::new(schema.clone()),
            spec: spec.clone(),
            locations,
            // Java's `MetricsConfig.forTable`: the table's sort order, whatever this write sorts by
            metrics: Arc::new(MetricsConfig::for_table(properties, schema, table_order)?),
            props,
            write_id: write_id.to_string(),
            task_id,
            file_suffix,
        };
        let clustered = options.mode == WriterMode::Clustered;
        Ok(WriteTask {
            schema: Arc::new(schema.clone()),
            target: Arc::new(schema_to_arrow(schema)?),
            writer: PartitionedWriter::try_new(files, clustered, max_open, sorter)?,
            checked: None,
        })
    }

    fn run(mut self, batches: impl Iterator<Item = Result<RecordBatch>>) -> Result<Vec<DataFile>> {
        for batch in batches {
            if let Err(e) = batch.and_then(|b| self.write(&b)) {
                self.writer.abort();
                return Err(e);
            }
        }
        self.writer.close()
    }

    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let src = batch.schema();
        if self.checked.as_ref() != Some(&src) {
            check_arrow_schema(&self.schema, &src)?;
            self.checked = Some(src);
        }
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let batch = conform_batch(&self.schema, &self.target, batch)?;
        self.writer.write(&batch)
    }
}

#[cfg(test)]
#[path = "data_writer_tests.rs"]
mod tests;
