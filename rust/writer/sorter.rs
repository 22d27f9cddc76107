//! Sorting a partition's rows by the table's sort order in bounded memory, so that the
//! files a task writes for one partition are sorted as a whole and hold disjoint key ranges
//! one after the other (what Iceberg Java gets from Spark's sort before its rolling writer;
//! a sort compaction's point is files whose bounds do not overlap).
//!
//! Rows are buffered; when the writer's budget is reached a buffer is sorted and spilled as a
//! run (an Arrow IPC file in a private folder under `ICEFLOE_SPILL_DIR`, Spark's
//! `SPARK_LOCAL_DIRS` or the temporary folder, removed when the writer goes). At the end a
//! partition with no runs is sorted in memory; otherwise its runs are merged (at most
//! [`MAX_FAN_IN`] at a time) into the rolling writer. Buffers are sorted by Arrow's lexsort
//! and runs merged by comparing `arrow-row` rows of the transformed sort columns; both order
//! by the same options (nulls, direction; floats by total order), which a test checks.

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use arrow::compute::{lexsort_to_indices, SortColumn, SortOptions};
use arrow::ipc::reader::FileReader;
use arrow::ipc::writer::FileWriter;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_row::{RowConverter, Rows, SortField};
use arrow_schema::{ArrowError, SchemaRef};
use arrow_select::concat::concat_batches;
use arrow_select::interleave::interleave_record_batch;
use arrow_select::take::take_record_batch;

use super::partitioner::{source_array, struct_path};
use super::zorder::{BoundZOrder, ZOrder};
use crate::error::{validation, Error, ErrorKind, Result};
use crate::spec::{
    apply_transform_array, NullOrder, PrimitiveType, Schema, SortDirection, SortOrder, Transform,
};

/// Rows per batch of a spilled run and of the merged output.
const RUN_BATCH_ROWS: usize = 8192;
/// Runs merged at once; more are first merged into longer runs (open files stay bounded).
pub(crate) const MAX_FAN_IN: usize = 64;
/// Where spilled runs go, before Spark's local folders and the temporary folder.
pub const SPILL_DIR_ENV: &str = "ICEFLOE_SPILL_DIR";

/// Sorting rows by a sort order (its keys), or by a z-order (one key, the z-value).
#[derive(Debug)]
pub(crate) struct Sorter {
    pub(crate) order_id: i32,
    keys: Vec<SortKey>,
    /// Arrow bytes buffered (over all partitions of a writer) before the largest is spilled.
    pub(crate) buffer_bytes: usize,
    /// Made from the first batch's key types; every row of a writer goes through this one.
    converter: OnceLock<RowConverter>,
}

/// A partition's rows waiting to be sorted: the batches in memory and the runs spilled.
#[derive(Debug, Default)]
pub(crate) struct SortBuffer {
    batches: Vec<RecordBatch>,
    pub(crate) bytes: usize,
    runs: Vec<PathBuf>,
}

impl SortBuffer {
    pub(crate) fn push(&mut self, rows: RecordBatch) -> usize {
        let n = rows.get_array_memory_size();
        self.bytes += n;
        self.batches.push(rows);
        n
    }
}

/// A private folder for spilled runs, made at the first spill and removed with everything in
/// it when dropped (after a finished, failed or abandoned write alike).
#[derive(Debug, Default)]
pub(crate) struct SpillDir {
    path: Option<PathBuf>,
    next: u64,
}

impl SpillDir {
    fn new_file(&mut self) -> Result<PathBuf> {
        let dir = match &self.path {
            Some(p) => p.clone(),
            None => {
                let base = spill_base();
                let dir = base.join(format!("icefloe-sort-{}", uuid::Uuid::new_v4()));
                std::fs::create_dir_all(&dir).map_err(|e| {
                    Error::new(ErrorKind::Io, "cannot create a folder for sorted runs")
                        .with_source(e)
                        .with_context("folder", dir.display().to_string())
                })?;
                self.path = Some(dir.clone());
                dir
            }
        };
        self.next += 1;
        Ok(dir.join(format!("run-{:06}.arrow", self.next)))
    }
}

impl Drop for SpillDir {
    fn drop(&mut self) {
        if let Some(p) = &self.path {
            let _ = std::fs::remove_dir_all(p);
        }
    }
}

fn spill_base() -> PathBuf {
    let from_env = |k: &str| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.split(',').map(str::trim).find(|s| !s.is_empty()).map(PathBuf::from))
    };
    from_env(SPILL_DIR_ENV).or_else(|| from_env("SPARK_LOCAL_DIRS")).unwrap_or_else(std::env::temp_dir)
}

fn arrow_err<'a>(msg: &'static str, path: &'a Path) -> impl FnOnce(ArrowError) -> Error + 'a {
    move |e| Error::new(ErrorKind::Io, msg).with_source(e).with_context("file", path.display().to_string())
}

fn io_err<'a>(msg: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> Error + 'a {
    move |e| Error::new(ErrorKind::Io, msg).with_source(e).with_context("file", path.display().to_string())
}

fn internal(msg: &'static str) -> impl FnOnce(ArrowError) -> Error {
    move |e| Error::new(ErrorKind::Internal, msg).with_source(e)
}

/// Checks that rows of `schema` can be sorted by `order` (a custom order given to a write):
/// it has fields, each on a primitive column or struct field, with a transform that applies.
pub fn check_sort_order(schema: &Schema, order: &SortOrder) -> Result<()> {
    match Sorter::try_new(schema, order, 1)? {
        Some(_) => Ok(()),
        None => Err(validation("expected a sort order with at least one field, found none")),
    }
}

/// What rows are ordered by.
#[derive(Debug)]
enum SortKey {
    /// A sort field: the source's path (a column, then fields of structs), its type,
    /// transform, order.
    Field(Vec<usize>, PrimitiveType, Transform, SortOptions),
    /// Java's z-order: the rows' z-values (binary), ascending.
    ZOrder(BoundZOrder),
}

impl SortKey {
    fn values(&self, batch: &RecordBatch) -> Result<ArrayRef> {
        match self {
            SortKey::Field(path, ty, t, _) => {
                apply_transform_array(t, ty, source_array(batch, path)?.as_ref())
            }
            SortKey::ZOrder(z) => z.z_values(batch),
        }
    }

    fn options(&self) -> SortOptions {
        match self {
            SortKey::Field(_, _, _, opts) => *opts,
            // Java's `ICEZVALUE ASC NULLS LAST` (z-values are never null).
            SortKey::ZOrder(_) => SortOptions { descending: false, nulls_first: false },
        }
    }
}

impl Sorter {
    /// Sorting by `zorder`'s z-values (Iceberg Java's z-order rewrite); the files record
    /// the unsorted order id, as Java's do.
    pub(crate) fn z_order(schema: &Schema, zorder: &ZOrder, buffer_bytes: usize) -> Result<Self> {
        Ok(Sorter {
            order_id: SortOrder::UNSORTED_ORDER_ID,
            keys: vec![SortKey::ZOrder(zorder.bind(schema)?)],
            buffer_bytes: buffer_bytes.max(1),
            converter: OnceLock::new(),
        })
    }

    /// `None` when the order is unsorted. Sort keys are primitive columns or fields of
    /// struct columns.
    pub(crate) fn try_new(schema: &Schema, order: &SortOrder, buffer_bytes: usize) -> Result<Option<Self>> {
        if order.is_unsorted() {
            return Ok(None);
        }
        let mut keys = Vec::new();
        for f in &order.fields {
            let (col, field) = struct_path(schema.fields(), f.source_id).ok_or_else(|| {
                crate::error::not_supported(format!(
                    "sort order {} uses field id {} which is neither a column nor a field of a struct column",
                    order.order_id, f.source_id
                ))
            })?;
            let ty = field.field_type.as_primitive().cloned().ok_or_else(|| {
                validation(format!(
                    "sort order {}: expected a primitive column to sort by, found column '{}' of type {}",
                    order.order_id, field.name, field.field_type
                ))
            })?;
            // A custom order (a rewrite's `sort_order`) is checked here, before any row is
            // read: a transform that does not apply would otherwise fail mid-write.
            if !matches!(f.transform, Transform::Unknown(_)) && !f.transform.can_transform(&ty) {
                return Err(validation(format!(
                    "sort order {}: expected a transform that applies to column '{}' of type {ty}, found {}",
                    order.order_id, field.name, f.transform
                )));
            }
            let opts = SortOptions {
                descending: f.direction == SortDirection::Descending,
                nulls_first: f.null_order == NullOrder::NullsFirst,
            };
            keys.push(SortKey::Field(col, ty, f.transform.clone(), opts));
        }
        Ok(Some(Sorter {
            order_id: order.order_id,
            keys,
            buffer_bytes: buffer_bytes.max(1),
            converter: OnceLock::new(),
        }))
    }

    /// The sort keys of `batch` as comparable rows.
    fn key_rows(&self, batch: &RecordBatch) -> Result<Rows> {
        let columns = self.keys.iter().map(|k| k.values(batch)).collect::<Result<Vec<ArrayRef>>>()?;
        let converter = match self.converter.get() {
            Some(c) => c,
            None => {
                let fields = columns
                    .iter()
                    .zip(&self.keys)
                    .map(|(c, k)| SortField::new_with_options(c.data_type().clone(), k.options()))
                    .collect();
                let made = RowConverter::new(fields).map_err(internal("cannot compare sort keys"))?;
                self.converter.get_or_init(|| made)
            }
        };
        converter.convert_columns(&columns).map_err(internal("cannot compare sort keys"))
    }

    /// `batch`'s rows in sort order. Arrow's lexsort here (several times faster than sorting
    /// by key rows on one primitive column); it orders as the key rows do (nulls and
    /// direction by the same options, floats by total order), which the merge relies on.
    pub(crate) fn sort(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        let columns = self
            .keys
            .iter()
            .map(|k| Ok(SortColumn { values: k.values(batch)?, options: Some(k.options()) }))
            .collect::<Result<Vec<_>>>()?;
        let idx = lexsort_to_indices(&columns, None).map_err(internal("cannot sort rows"))?;
        take_record_batch(batch, &idx).map_err(internal("cannot sort rows"))
    }

    fn sort_buffered(&self, buf: &mut SortBuffer) -> Result<Option<RecordBatch>> {
        let batches = std::mem::take(&mut buf.batches);
        buf.bytes = 0;
        let Some(first) = batches.first() else { return Ok(None) };
        let all = concat_batches(&first.schema(), &batches).map_err(internal("cannot sort rows"))?;
        drop(batches);
        self.sort(&all).map(Some)
    }

    /// Sorts the buffered rows of `buf` and writes them to a new run file.
    pub(crate) fn spill(&self, buf: &mut SortBuffer, dir: &mut SpillDir) -> Result<()> {
        let Some(sorted) = self.sort_buffered(buf)? else { return Ok(()) };
        let path = dir.new_file()?;
        let mut w = RunWriter::create(&path, &sorted.schema())?;
        w.write(&sorted)?;
        w.finish()?;
        buf.runs.push(path);
        Ok(())
    }

    /// Hands every row of `buf` to `sink` in sort order, in batches: sorted in memory when
    /// nothing was spilled, else merged from the runs (the rows in memory becoming the last).
    pub(crate) fn drain(
        &self,
        buf: &mut SortBuffer,
        dir: &mut SpillDir,
        sink: &mut dyn FnMut(&RecordBatch) -> Result<()>,
    ) -> Result<()> {
        if buf.runs.is_empty() {
            return match self.sort_buffered(buf)? {
                Some(sorted) => sink(&sorted),
                None => Ok(()),
            };
        }
        self.spill(buf, dir)?;
        let mut runs = std::mem::take(&mut buf.runs);
        while runs.len() > MAX_FAN_IN {
            let rest = runs.split_off(MAX_FAN_IN);
            let path = dir.new_file()?;
            let mut w: Option<RunWriter> = None;
            self.merge(&runs, &mut |b| {
                if w.is_none() {
                    w = Some(RunWriter::create(&path, &b.schema())?);
                }
                match w.as_mut() {
                    Some(w) => w.write(b),
                    None => Ok(()),
                }
            })?;
            if let Some(w) = w {
                w.finish()?;
            }
            for r in &runs {
                let _ = std::fs::remove_file(r);
            }
            runs = rest;
            runs.push(path);
        }
        self.merge(&runs, sink)?;
        for r in &runs {
            let _ = std::fs::remove_file(r);
        }
        Ok(())
    }

    /// K-way merge of sorted runs into `sink`, `RUN_BATCH_ROWS` rows at a time.
    fn merge(&self, runs: &[PathBuf], sink: &mut dyn FnMut(&RecordBatch) -> Result<()>) -> Result<()> {
        let mut cursors = Vec::with_capacity(runs.len());
        let mut sources: Vec<RecordBatch> = Vec::new();
        for path in runs {
            if let Some(c) = Cursor::open(self, path, &mut sources)? {
                cursors.push(c);
            }
        }
        let mut heap: Vec<usize> = (0..cursors.len()).collect();
        let less = |cursors: &[Cursor], a: usize, b: usize| {
            let (x, y) = (&cursors[a], &cursors[b]);
            (x.rows.row(x.pos), a) < (y.rows.row(y.pos), b)
        };
        for i in (0..heap.len() / 2).rev() {
            sift_down(&mut heap, i, &|a, b| less(&cursors, a, b));
        }
        let mut picked: Vec<(usize, usize)> = Vec::with_capacity(RUN_BATCH_ROWS);
        while let Some(&top) = heap.first() {
            let c = &mut cursors[top];
            picked.push((c.source, c.pos));
            c.pos += 1;
            if c.pos == c.batch_rows && !c.advance(self, &mut sources)? {
                let last = heap.len() - 1;
                heap.swap(0, last);
                heap.pop();
            }
            sift_down(&mut heap, 0, &|a, b| less(&cursors, a, b));
            if picked.len() == RUN_BATCH_ROWS {
                emit(&sources, &picked, sink)?;
                picked.clear();
                // Keep only the batches the cursors still read from.
                let live: Vec<RecordBatch> =
                    heap.iter().map(|&i| sources[cursors[i].source].clone()).collect();
                for (k, &i) in heap.iter().enumerate() {
                    cursors[i].source = k;
                }
                sources = live;
            }
        }
        if !picked.is_empty() {
            emit(&sources, &picked, sink)?;
        }
        Ok(())
    }
}

fn emit(
    sources: &[RecordBatch],
    picked: &[(usize, usize)],
    sink: &mut dyn FnMut(&RecordBatch) -> Result<()>,
) -> Result<()> {
    let refs: Vec<&RecordBatch> = sources.iter().collect();
    let out = interleave_record_batch(&refs, picked).map_err(internal("cannot merge sorted runs"))?;
    sink(&out)
}

/// Restores the heap property below `i` (`less` orders cursor indices; smallest on top).
fn sift_down(heap: &mut [usize], mut i: usize, less: &dyn Fn(usize, usize) -> bool) {
    loop {
        let (l, r) = (2 * i + 1, 2 * i + 2);
        let mut m = i;
        if l < heap.len() && less(heap[l], heap[m]) {
            m = l;
        }
        if r < heap.len() && less(heap[r], heap[m]) {
            m = r;
        }
        if m == i {
            return;
        }
        heap.swap(i, m);
        i = m;
    }
}

/// The read position in one run: its current batch (as `sources[source]`) and key rows.
struct Cursor {
    reader: FileReader<BufReader<File>>,
    path: PathBuf,
    source: usize,
    rows: Rows,
    pos: usize,
    batch_rows: usize,
}

impl Cursor {
    fn open(sorter: &Sorter, path: &Path, sources: &mut Vec<RecordBatch>) -> Result<Option<Cursor>> {
        let file = File::open(path).map_err(io_err("cannot open a sorted run", path))?;
        let mut reader = FileReader::try_new(BufReader::new(file), None)
            .map_err(arrow_err("cannot read a sorted run", path))?;
        let Some(batch) = next_batch(&mut reader, path)? else { return Ok(None) };
        let rows = sorter.key_rows(&batch)?;
        let c = Cursor {
            reader,
            path: path.to_path_buf(),
            source: sources.len(),
            rows,
            pos: 0,
            batch_rows: batch.num_rows(),
        };
        sources.push(batch);
        Ok(Some(c))
    }

    /// Loads the run's next non-empty batch; false at its end.
    fn advance(&mut self, sorter: &Sorter, sources: &mut Vec<RecordBatch>) -> Result<bool> {
        let Some(batch) = next_batch(&mut self.reader, &self.path)? else { return Ok(false) };
        self.rows = sorter.key_rows(&batch)?;
        self.pos = 0;
        self.batch_rows = batch.num_rows();
        self.source = sources.len();
        sources.push(batch);
        Ok(true)
    }
}

fn next_batch(reader: &mut FileReader<BufReader<File>>, path: &Path) -> Result<Option<RecordBatch>> {
    for next in reader.by_ref() {
        let batch = next.map_err(arrow_err("cannot read a sorted run", path))?;
        if batch.num_rows() > 0 {
            return Ok(Some(batch));
        }
    }
    Ok(None)
}

/// Writes one sorted run in `RUN_BATCH_ROWS` batches (uncompressed: read back once, soon).
struct RunWriter {
    writer: FileWriter<BufWriter<File>>,
    path: PathBuf,
}

impl RunWriter {
    fn create(path: &Path, schema: &SchemaRef) -> Result<RunWriter> {
        let file = File::create(path).map_err(io_err("cannot create a sorted run", path))?;
        let writer = FileWriter::try_new(BufWriter::new(file), schema)
            .map_err(arrow_err("cannot write a sorted run", path))?;
        Ok(RunWriter { writer, path: path.to_path_buf() })
    }

    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let mut start = 0;
        while start < batch.num_rows() {
            let len = RUN_BATCH_ROWS.min(batch.num_rows() - start);
            self.writer
                .write(&batch.slice(start, len))
                .map_err(arrow_err("cannot write a sorted run", &self.path))?;
            start += len;
        }
        Ok(())
    }

    fn finish(mut self) -> Result<()> {
        self.writer.finish().map_err(arrow_err("cannot write a sorted run", &self.path))
    }
}

#[cfg(test)]
#[path = "sorter_tests.rs"]
mod tests;
