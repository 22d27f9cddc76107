//! Partitioned writers over rolling Parquet files (Java's `FanoutDataWriter` and
//! `ClusteredDataWriter`):
//!
//! - fanout: any input order; one open file per partition key, at most `max_open_files`
//!   at a time: opening one more closes the least recently used (later rows of that key
//!   start a new file).
//! - clustered: input grouped by partition; one open file; a key that comes back after
//!   its file was closed is an error (as in Java), since it would silently make small files.
//!
//! With a sort order, each partition's rows go through a [`Sorter`] (`sorter.rs`): buffered
//! up to `sort_buffer_bytes` of Arrow memory over all partitions (then the largest buffer is
//! spilled as a sorted run), and written in sort order when the partition closes, so its
//! files are each sorted and hold disjoint key ranges one after the other.

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_select::take::take_record_batch;

use super::metrics::MetricsConfig;
use super::parquet_writer::ParquetWriterProps;
use super::partitioner::{FxBuild, Grouping, Partitioner};
use super::rolling::RollingDataWriter;
use super::sorter::{SortBuffer, Sorter, SpillDir};
use crate::error::{validation, Error, ErrorKind, Result};
use crate::manifest::DataFile;
use crate::spec::{LocationProvider, PartitionSpec, Schema, SortOrder};

type PathGen = Box<dyn FnMut() -> String>;

fn internal(msg: &'static str, e: arrow_schema::ArrowError) -> Error {
    Error::new(ErrorKind::Internal, msg).with_source(e)
}

struct Open {
    writer: RollingDataWriter<PathGen>,
    seq: u64,
    last_used: u64,
    buffer: SortBuffer,
}

/// Settings shared by every file of one write task.
pub(crate) struct FileSettings {
    pub schema: Arc<Schema>,
    pub spec: PartitionSpec,
    /// Where each new file goes (data root, object-storage layout).
    pub locations: Arc<LocationProvider>,
    pub props: ParquetWriterProps,
    pub metrics: Arc<MetricsConfig>,
    pub write_id: String,
    pub task_id: u32,
    /// Appended to every file name before `.parquet` (`-deletes` for delete files).
    pub file_suffix: &'static str,
}

pub(crate) struct PartitionedWriter {
    files: FileSettings,
    partitioner: Partitioner,
    clustered: bool,
    max_open: usize,
    sorter: Option<Sorter>,
    /// Sorting: Arrow bytes buffered over all open partitions, and where runs spill.
    buffered: usize,
    spill: SpillDir,
    counter: Rc<Cell<u32>>,
    open: HashMap<Box<[u8]>, Open, FxBuild>,
    /// Clustered mode: keys whose file was closed (they must not come back).
    closed: HashSet<Box<[u8]>, FxBuild>,
    tick: u64,
    done: Vec<(u64, DataFile)>,
}

impl PartitionedWriter {
    pub(crate) fn try_new(
        files: FileSettings,
        clustered: bool,
        max_open: usize,
        sorter: Option<Sorter>,
    ) -> Result<Self> {
        let partitioner = Partitioner::try_new(&files.schema, &files.spec)?;
        Ok(PartitionedWriter {
            files,
            partitioner,
            clustered,
            max_open: max_open.max(1),
            sorter,
            buffered: 0,
            spill: SpillDir::default(),
            counter: Rc::new(Cell::new(0)),
            open: HashMap::default(),
            closed: HashSet::default(),
            tick: 0,
            done: Vec::new(),
        })
    }

    /// Writes a batch conformed to the table schema.
    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let grouping = self.partitioner.group(batch)?;
        if grouping.num_groups() == 1 {
            return self.write_group(&grouping, 0, batch.clone());
        }
        if self.clustered {
            // Runs of rows with the same key, in input order: zero-copy slices.
            let mut start = 0usize;
            let g = &grouping.group_of_row;
            while start < g.len() {
                let mut end = start + 1;
                while end < g.len() && g[end] == g[start] {
                    end += 1;
                }
                self.write_group(&grouping, g[start] as usize, batch.slice(start, end - start))?;
                start = end;
            }
            return Ok(());
        }
        // Fanout: one take puts every group's rows together, then zero-copy slices.
        let (perm, starts) = grouping.permutation();
        let sorted = take_record_batch(batch, &arrow_array::UInt32Array::from(perm))
            .map_err(|e| internal("cannot split batch by partition", e))?;
        for g in 0..grouping.num_groups() {
            self.write_group(&grouping, g, sorted.slice(starts[g], starts[g + 1] - starts[g]))?;
        }
        Ok(())
    }

    fn write_group(&mut self, grouping: &Grouping, g: usize, rows: RecordBatch) -> Result<()> {
        let key = grouping.key_bytes(g);
        self.tick += 1;
        if !self.open.contains_key(key) {
            if self.clustered {
                if self.closed.contains(key) {
                    return Err(validation(format!(
                        "incoming rows are not clustered by partition: partition {} came back after its \
                         file was closed; cluster the input by partition or use the fanout writer",
                        self.files.spec.partition_path(
                            &self.files.schema,
                            &grouping.partition_value(&self.partitioner, g)?
                        )?
                    )));
                }
                let keys: Vec<Box<[u8]>> = self.open.keys().cloned().collect();
                for k in keys {
                    self.close_one(&k)?;
                    self.closed.insert(k);
                }
            } else if self.open.len() >= self.max_open {
                let lru = self.open.iter().min_by_key(|(_, o)| o.last_used).map(|(k, _)| k.clone());
                if let Some(k) = lru {
                    self.close_one(&k)?;
                }
            }
            let writer = self.new_writer(grouping, g)?;
            let seq = self.tick;
            self.open.insert(key.into(), Open { writer, seq, last_used: seq, buffer: SortBuffer::default() });
        }
        let tick = self.tick;
        let open = self
            .open
            .get_mut(key)
            .ok_or_else(|| Error::new(ErrorKind::Internal, "partition writer vanished"))?;
        open.last_used = tick;
        let Some(sorter) = &self.sorter else { return open.writer.write(&rows) };
        self.buffered += open.buffer.push(rows);
        while self.buffered >= sorter.buffer_bytes {
            // Spill the largest buffer: fewest runs for the memory freed.
            let Some(largest) = self.open.values_mut().max_by_key(|o| o.buffer.bytes) else { break };
            if largest.buffer.bytes == 0 {
                break;
            }
            self.buffered = self.buffered.saturating_sub(largest.buffer.bytes);
            sorter.spill(&mut largest.buffer, &mut self.spill)?;
        }
        Ok(())
    }

    fn new_writer(&self, grouping: &Grouping, g: usize) -> Result<RollingDataWriter<PathGen>> {
        let f = &self.files;
        let values = grouping.partition_value(&self.partitioner, g)?;
        let dir = if self.partitioner.is_unpartitioned() {
            None
        } else {
            Some(f.spec.partition_path(&f.schema, &values)?)
        };
        let locations = f.locations.clone();
        let counter = self.counter.clone();
        let (task_id, write_id, suffix) = (f.task_id, f.write_id.clone(), f.file_suffix);
        let gen: PathGen = Box::new(move || {
            let n = counter.get() + 1;
            counter.set(n);
            locations
                .new_data_location(dir.as_deref(), &format!("{task_id:05}-{write_id}-{n:05}{suffix}.parquet"))
        });
        Ok(RollingDataWriter::new(
            f.schema.clone(),
            f.props.clone(),
            f.metrics.clone(),
            values,
            f.spec.spec_id(),
            gen,
        ))
    }

    fn close_one(&mut self, key: &[u8]) -> Result<()> {
        let Some(mut open) = self.open.remove(key) else { return Ok(()) };
        if let Some(s) = &self.sorter {
            self.buffered = self.buffered.saturating_sub(open.buffer.bytes);
            let writer = &mut open.writer;
            if let Err(e) = s.drain(&mut open.buffer, &mut self.spill, &mut |b| writer.write(b)) {
                let _ = open.writer.abort();
                return Err(e);
            }
        }
        let seq = open.seq;
        let files = open.writer.close()?;
        self.done.extend(files.into_iter().map(|f| (seq, f)));
        Ok(())
    }

    /// Closes every file; files come back in the order their partitions were first seen.
    pub(crate) fn close(mut self) -> Result<Vec<DataFile>> {
        let mut keys: Vec<(u64, Box<[u8]>)> = self.open.iter().map(|(k, o)| (o.seq, k.clone())).collect();
        keys.sort();
        for (_, k) in keys {
            if let Err(e) = self.close_one(&k) {
                self.abort();
                return Err(e);
            }
        }
        let mut done = std::mem::take(&mut self.done);
        done.sort_by_key(|(seq, _)| *seq);
        let sort_order_id = self.sorter.as_ref().map_or(SortOrder::UNSORTED_ORDER_ID, |s| s.order_id);
        Ok(done
            .into_iter()
            .map(|(_, mut f)| {
                f.sort_order_id = Some(sort_order_id);
                f
            })
            .collect())
    }

    /// Deletes every file written so far.
    pub(crate) fn abort(&mut self) {
        for (_, o) in self.open.drain() {
            let _ = o.writer.abort();
        }
        for (_, f) in self.done.drain(..) {
            let _ = crate::io::delete_file(&f.file_path);
        }
    }
}
