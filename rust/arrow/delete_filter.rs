//! The merge-on-read delete filter of one task (iceberg-rust's `arrow/delete_filter.rs`):
//! which delete files apply (the spec's sequence-number rule, re-checked here because a task
//! may be built by hand, not only by the planner's delete index), the merged deleted
//! positions of position-delete files (turned into Parquet row selections by the reader, so
//! deleted rows are never decoded), and the equality-delete key maps with the mask they give
//! each decoded batch. A deletion vector (format v3) gives the positions instead of the
//! position-delete files when the data file has one.

use std::collections::BTreeMap;

use arrow_array::{ArrayRef, BooleanArray, RecordBatch};

use super::delete_cache;
use super::equality_deletes::{EqualityDeleteSet, EqualityDeleteSetRef, SharedEqualityDeletes};
use super::position_deletes::merge_positions;
use crate::error::{invalid_data, not_supported, Result};
use crate::manifest::{DataContentType, DataFile, FileFormat};
use crate::scan::FileScanTask;
use crate::spec::{NestedField, Schema};

/// The deletes of one task, loaded.
#[derive(Debug)]
pub(crate) struct DeleteFilter {
    /// Deleted row positions of the data file, ascending, from every applicable
    /// position-delete file.
    deleted: Vec<i64>,
    /// Equality key maps and the indices of their key columns in the read batch.
    eq: Vec<(EqualityDeleteSetRef, Vec<usize>)>,
    /// The data file's data sequence number (equality deletes apply above it).
    data_seq: i64,
}

impl DeleteFilter {
    /// Loads `task`'s deletes; the equality key columns `read_fields` lacks are appended to
    /// it (read from the data file, dropped before output).
    pub(crate) fn load(
        task: &FileScanTask,
        projected: &Schema,
        read_fields: &mut Vec<NestedField>,
    ) -> Result<Self> {
        let (pos_files, dvs, eq_groups) = applicable_deletes(task)?;
        let path = task.file.file_path.as_str();
        let mut lists = Vec::with_capacity(pos_files.len().max(dvs.len()));
        if dvs.is_empty() {
            for p in &pos_files {
                lists.push(delete_cache::position_deletes(p)?);
            }
        } else {
            // A data file's deletion vector holds every earlier position delete of it (Java
            // reads the DV alone; the planner attaches no other position deletes then).
            for dv in &dvs {
                if dv.referenced_data_file.as_deref() != Some(path) {
                    return Err(invalid_data(format!(
                        "a deletion vector for {} is attached to {path}",
                        dv.referenced_data_file.as_deref().unwrap_or("no data file")
                    ))
                    .with_context("delete file", dv.file_path.as_str()));
                }
                lists.push(delete_cache::deletion_vector(dv)?);
            }
        }
        let slices: Vec<&[i64]> = lists.iter().map(|d| d.positions(path)).collect();
        let deleted = merge_positions(&slices);

        let mut eq = Vec::with_capacity(eq_groups.len());
        for (ids, files) in &eq_groups {
            // A sizing hint from the manifests (saturating: the counts are not trusted).
            let expected = task
                .deletes
                .iter()
                .filter(|d| files.iter().any(|f| f.path == d.file.file_path.as_str()))
                .fold(0i64, |n, d| n.saturating_add(d.file.record_count.max(0)));
            let set = equality_set(
                ids,
                files,
                projected,
                usize::try_from(expected).unwrap_or(0),
                task.delete_scope.as_deref(),
            )?;
            let mut idx = Vec::with_capacity(ids.len());
            for kf in &set.fields() {
                let i = match read_fields.iter().position(|f| f.id == kf.id) {
                    Some(i) => i,
                    None => {
                        read_fields.push(kf.clone());
                        read_fields.len() - 1
                    }
                };
                idx.push(i);
            }
            eq.push((set, idx));
        }
        Ok(DeleteFilter { deleted, eq, data_seq: task.data_sequence_number })
    }

    /// The deleted positions (ascending) for the reader's row selection.
    pub(crate) fn deleted_positions(&self) -> &[i64] {
        &self.deleted
    }

    /// The rows of `data` (the read batch) no equality delete removes; None when the task
    /// has no equality deletes.
    pub(crate) fn keep_mask(&self, data: &RecordBatch) -> Result<Option<BooleanArray>> {
        let mut keep: Option<BooleanArray> = None;
        for (set, idx) in &self.eq {
            let cols: Vec<ArrayRef> = idx.iter().map(|&i| data.column(i).clone()).collect();
            let m = set.keep_mask_for(&cols, self.data_seq)?;
            keep = Some(match keep {
                None => m,
                Some(k) => arrow::compute::and(&k, &m)
                    .map_err(|e| invalid_data("cannot combine delete masks").with_source(e))?,
            });
        }
        Ok(keep)
    }
}

/// The delete files that apply to the task by the spec's sequence-number rule: position
/// deletes with delete seq >= data seq, equality deletes with delete seq > data seq.
/// Position delete paths, and equality delete paths grouped by their `equality_ids`.
type Applicable<'a> = (Vec<&'a str>, Vec<&'a DataFile>, BTreeMap<Vec<i32>, Vec<EqFile<'a>>>);

/// An applicable equality-delete file: its path, data sequence number and partition scope
/// (`<spec id>:<partition>`; the shared key map is per scope set).
#[derive(Debug, Clone)]
struct EqFile<'a> {
    path: &'a str,
    seq: i64,
    scope: String,
}

fn applicable_deletes(task: &FileScanTask) -> Result<Applicable<'_>> {
    let mut pos = Vec::new();
    let mut dvs = Vec::new();
    let mut eq: BTreeMap<Vec<i32>, Vec<EqFile<'_>>> = BTreeMap::new();
    for d in &task.deletes {
        let path = d.file.file_path.as_str();
        let dv =
            d.file.file_format == FileFormat::Puffin && d.file.content == DataContentType::PositionDeletes;
        if dv {
            if d.data_sequence_number >= task.data_sequence_number {
                dvs.push(&d.file);
            }
            continue;
        }
        if d.file.file_format != FileFormat::Parquet {
            return Err(not_supported(format!(
                "{} delete files are not supported",
                d.file.file_format.as_str()
            ))
            .with_context("delete file", path));
        }
        match d.file.content {
            DataContentType::PositionDeletes => {
                if d.data_sequence_number >= task.data_sequence_number {
                    pos.push(path);
                }
            }
            DataContentType::EqualityDeletes => {
                if d.data_sequence_number > task.data_sequence_number {
                    let ids = d.file.equality_ids.clone().unwrap_or_default();
                    let scope = format!("{}:{:?}", d.file.spec_id, d.file.partition);
                    eq.entry(ids).or_default().push(EqFile { path, seq: d.data_sequence_number, scope });
                }
            }
            DataContentType::Data => {
                return Err(invalid_data("a data file is attached to a task as a delete file")
                    .with_context("delete file", path));
            }
        }
    }
    Ok((pos, dvs, eq))
}

fn equality_set(
    ids: &[i32],
    files: &[EqFile<'_>],
    projected: &Schema,
    expected_keys: usize,
    snapshot_scope: Option<&str>,
) -> Result<EqualityDeleteSetRef> {
    let known = |id: i32| projected.fields().iter().find(|f| f.id == id).map(|f| f.as_ref().clone());
    let types: Vec<String> =
        ids.iter().map(|&id| known(id).map_or("?".into(), |f| f.field_type.to_string())).collect();
    // One shared map per (key columns, their types, partition scopes): every data file of a
    // scope probes the same map with its own sequence number (see equality_deletes.rs).
    // That holds only among the live delete files of one snapshot of one table: without a
    // snapshot scope, the map is keyed by the exact file list (no sharing).
    let mut with_seq: Vec<(&str, i64)> = files.iter().map(|f| (f.path, f.seq)).collect();
    with_seq.sort_unstable();
    let key = match snapshot_scope {
        Some(snapshot) => {
            let mut scopes: Vec<&str> = files.iter().map(|f| f.scope.as_str()).collect();
            scopes.sort_unstable();
            scopes.dedup();
            format!("{snapshot}\u{0}{ids:?}\u{0}{types:?}\u{0}{}", scopes.join("\u{0}"))
        }
        None => {
            let paths: Vec<&str> = with_seq.iter().map(|f| f.0).collect();
            format!("files\u{0}{ids:?}\u{0}{types:?}\u{0}{}", paths.join("\u{0}"))
        }
    };
    let set = delete_cache::equality_deletes(&key, || {
        let set = EqualityDeleteSet::load_with_seqs(ids, &with_seq, &known, expected_keys)?;
        Ok(SharedEqualityDeletes::new(set, &with_seq))
    })?;
    set.ensure(&with_seq)?;
    Ok(set)
}
