//! The planned tasks of a scan, held compactly until they are read.
//!
//! A plan holds one task per live data file. A `FileScanTask` is laid out for everything a
//! task or its data file may carry (six metric maps, deletes, a residual filter, encryption
//! keys, v3 delete-vector and row-lineage fields): 504 bytes before its strings. For the
//! 1,000,000-file table of `make bench-scale` that was ~650 MB of tasks, most of it fields
//! that were empty. Most tasks of most plans are plain: a whole data file with no deletes, no
//! residual filter and no kept metrics. Those are held here in a 112-byte form (path,
//! partition, counts, split offsets) and become a `FileScanTask` again when read; any other
//! task is held as it is. Reading a task back gives exactly the task that was pushed.

use std::borrow::Cow;

use super::task::FileScanTask;
use crate::manifest::{DataContentType, DataFile, FileFormat};
use crate::spec::Literal;

/// The tasks of a plan, in plan order.
#[derive(Debug, Clone, Default)]
pub struct PlannedTasks {
    items: Vec<Stored>,
    /// The distinct `identity_partition_fields` of the plain tasks (one per partition spec),
    /// which each plain task names by index.
    identities: Vec<Vec<(i32, usize)>>,
}

#[derive(Debug, Clone)]
enum Stored {
    Plain(PlainTask),
    Full(Box<FileScanTask>),
}

/// A whole-file data task without deletes, residual, metrics, encryption or delete-vector
/// fields: what is left of `FileScanTask` and its `DataFile`.
#[derive(Debug, Clone)]
struct PlainTask {
    file_path: Box<str>,
    partition: Box<[Option<Literal>]>,
    split_offsets: Option<Box<[i64]>>,
    record_count: i64,
    file_size_in_bytes: i64,
    data_sequence_number: i64,
    first_row_id: Option<i64>,
    sort_order_id: Option<i32>,
    spec_id: i32,
    identity: u16,
    file_format: FileFormat,
    empty_metric_maps: u8,
    identity_columns_in_file: bool,
}

/// What callers that only count or list files read of a task, without rebuilding it.
#[derive(Debug, Clone, Copy)]
pub struct TaskSummary<'a> {
    pub file_path: &'a str,
    pub file_size_in_bytes: i64,
    pub record_count: i64,
    /// The bytes of the data file the task reads.
    pub length: i64,
    /// The bytes of the delete files attached to it.
    pub delete_bytes: i64,
}

impl TaskSummary<'_> {
    /// The bytes the task reads, its delete files included: `split::task_size_bytes` of the task.
    pub fn size_bytes(&self) -> i64 {
        self.length + self.delete_bytes
    }
}

impl PlannedTasks {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn capacity(&self) -> usize {
        self.items.capacity()
    }

    pub fn reserve(&mut self, additional: usize) {
        self.items.reserve(additional);
    }

    pub fn shrink_to_fit(&mut self) {
        self.items.shrink_to_fit();
    }

    pub fn push(&mut self, task: FileScanTask) {
        let identity = self.identity_index(&task.identity_partition_fields);
        let stored = match u16::try_from(identity) {
            Ok(identity) => PlainTask::store(task, identity),
            Err(_) => Stored::Full(Box::new(task)),
        };
        self.items.push(stored);
    }

    /// Moves `other`'s tasks to the end (a worker's tasks into the plan: the plain form is
    /// made where the task was).
    pub fn append(&mut self, other: PlannedTasks) {
        let ids: Vec<usize> = other.identities.iter().map(|v| self.identity_index(v)).collect();
        self.items.reserve(other.items.len());
        for s in other.items {
            match s {
                Stored::Plain(mut p) => {
                    let i = ids.get(usize::from(p.identity)).copied();
                    match i.and_then(|i| u16::try_from(i).ok()) {
                        Some(i) => {
                            p.identity = i;
                            self.items.push(Stored::Plain(p));
                        }
                        // More distinct identity lists than the plain form can name: whole.
                        None => {
                            let fields = i.and_then(|i| self.identities.get(i)).cloned().unwrap_or_default();
                            let mut t = p.into_task(&[]);
                            t.identity_partition_fields = fields;
                            self.items.push(Stored::Full(Box::new(t)));
                        }
                    }
                }
                full => self.items.push(full),
            }
        }
    }

    /// The index of `fields` among the identity lists, added when new.
    fn identity_index(&mut self, fields: &[(i32, usize)]) -> usize {
        match self.identities.iter().position(|v| v == fields) {
            Some(i) => i,
            None => {
                self.identities.push(fields.to_vec());
                self.identities.len() - 1
            }
        }
    }

    /// Task `i` (rebuilt when it is held in the plain form).
    pub fn get(&self, i: usize) -> Option<Cow<'_, FileScanTask>> {
        self.items.get(i).map(|s| self.task(s))
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = Cow<'_, FileScanTask>> + '_ {
        self.items.iter().map(|s| self.task(s))
    }

    /// Each task's path and sizes, without rebuilding any task.
    pub fn summaries(&self) -> impl ExactSizeIterator<Item = TaskSummary<'_>> + '_ {
        self.items.iter().map(|s| match s {
            Stored::Plain(p) => TaskSummary {
                file_path: &p.file_path,
                file_size_in_bytes: p.file_size_in_bytes,
                record_count: p.record_count,
                length: p.file_size_in_bytes,
                delete_bytes: 0,
            },
            Stored::Full(t) => TaskSummary {
                file_path: &t.file.file_path,
                file_size_in_bytes: t.file.file_size_in_bytes,
                record_count: t.file.record_count,
                length: t.length,
                delete_bytes: t.deletes.iter().map(|d| d.file.file_size_in_bytes).sum(),
            },
        })
    }

    /// The tasks that have delete files attached (never held in the plain form), to change.
    pub fn with_deletes_mut(&mut self) -> impl Iterator<Item = &mut FileScanTask> + '_ {
        self.items.iter_mut().filter_map(|s| match s {
            Stored::Full(t) if !t.deletes.is_empty() => Some(t.as_mut()),
            _ => None,
        })
    }

    pub fn into_vec(self) -> Vec<FileScanTask> {
        self.into_iter().collect()
    }

    fn task<'a>(&'a self, s: &'a Stored) -> Cow<'a, FileScanTask> {
        match s {
            Stored::Full(t) => Cow::Borrowed(t.as_ref()),
            Stored::Plain(p) => Cow::Owned(p.to_task(&self.identities)),
        }
    }
}

impl IntoIterator for PlannedTasks {
    type Item = FileScanTask;
    type IntoIter = Box<dyn Iterator<Item = FileScanTask>>;

    fn into_iter(self) -> Self::IntoIter {
        let identities = self.identities;
        Box::new(self.items.into_iter().map(move |s| match s {
            Stored::Full(t) => *t,
            Stored::Plain(p) => p.into_task(&identities),
        }))
    }
}

impl FromIterator<FileScanTask> for PlannedTasks {
    fn from_iter<I: IntoIterator<Item = FileScanTask>>(iter: I) -> Self {
        let mut tasks = PlannedTasks::new();
        tasks.extend(iter);
        tasks
    }
}

impl Extend<FileScanTask> for PlannedTasks {
    fn extend<I: IntoIterator<Item = FileScanTask>>(&mut self, iter: I) {
        let iter = iter.into_iter();
        self.items.reserve(iter.size_hint().0);
        for t in iter {
            self.push(t);
        }
    }
}

impl From<Vec<FileScanTask>> for PlannedTasks {
    fn from(tasks: Vec<FileScanTask>) -> Self {
        tasks.into_iter().collect()
    }
}

impl PlainTask {
    /// `task` in the plain form, or whole when it carries more than that form holds. Every
    /// field of the task and its data file is named here (no `..`), so a field added to
    /// either is a compile error until it is decided here.
    fn store(task: FileScanTask, identity: u16) -> Stored {
        let FileScanTask {
            file,
            start,
            length,
            data_sequence_number,
            deletes,
            residual,
            identity_partition_fields: _,
            identity_columns_in_file,
            delete_scope,
        } = &task;
        let DataFile {
            content,
            file_path: _,
            file_format: _,
            partition: _,
            record_count: _,
            file_size_in_bytes,
            column_sizes,
            value_counts,
            null_value_counts,
            nan_value_counts,
            lower_bounds,
            upper_bounds,
            key_metadata,
            split_offsets: _,
            equality_ids,
            sort_order_id: _,
            referenced_data_file,
            first_row_id: _,
            content_offset,
            content_size_in_bytes,
            spec_id: _,
            empty_metric_maps: _,
        } = file;
        let plain = *content == DataContentType::Data
            && *start == 0
            && *length == *file_size_in_bytes
            && deletes.is_empty()
            && residual.is_none()
            && delete_scope.is_none()
            && column_sizes.is_empty()
            && value_counts.is_empty()
            && null_value_counts.is_empty()
            && nan_value_counts.is_empty()
            && lower_bounds.is_empty()
            && upper_bounds.is_empty()
            && key_metadata.is_none()
            && equality_ids.is_none()
            && referenced_data_file.is_none()
            && content_offset.is_none()
            && content_size_in_bytes.is_none();
        if !plain {
            return Stored::Full(Box::new(task));
        }
        let (data_sequence_number, identity_columns_in_file) =
            (*data_sequence_number, *identity_columns_in_file);
        let f = task.file;
        Stored::Plain(PlainTask {
            file_path: f.file_path.into_boxed_str(),
            partition: f.partition.into_boxed_slice(),
            split_offsets: f.split_offsets.map(Vec::into_boxed_slice),
            record_count: f.record_count,
            file_size_in_bytes: f.file_size_in_bytes,
            data_sequence_number,
            first_row_id: f.first_row_id,
            sort_order_id: f.sort_order_id,
            spec_id: f.spec_id,
            identity,
            file_format: f.file_format,
            empty_metric_maps: f.empty_metric_maps,
            identity_columns_in_file,
        })
    }

    fn to_task(&self, identities: &[Vec<(i32, usize)>]) -> FileScanTask {
        self.clone().into_task(identities)
    }

    fn into_task(self, identities: &[Vec<(i32, usize)>]) -> FileScanTask {
        let mut file = DataFile::new_data(self.file_path, self.record_count, self.file_size_in_bytes);
        file.file_format = self.file_format;
        file.partition = self.partition.into_vec();
        file.split_offsets = self.split_offsets.map(<[i64]>::into_vec);
        file.sort_order_id = self.sort_order_id;
        file.first_row_id = self.first_row_id;
        file.spec_id = self.spec_id;
        file.empty_metric_maps = self.empty_metric_maps;
        let mut task = FileScanTask::whole_file(file, self.data_sequence_number);
        task.identity_partition_fields =
            identities.get(usize::from(self.identity)).cloned().unwrap_or_default();
        task.identity_columns_in_file = self.identity_columns_in_file;
        task
    }
}

#[cfg(test)]
#[path = "planned_tasks_tests.rs"]
mod tests;
