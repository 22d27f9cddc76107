//! Planning and rewriting position delete files (Iceberg Java's
//! `RewritePositionDeleteFilesSparkAction` with `BinPackRewritePositionDeletePlanner`, 1.10).
//!
//! Plan:
//! 1. The live position delete files of the current snapshot (deletion vectors included)
//!    whose partition may match the filter (Java applies only the partition part of it).
//!    On a format v3 table with no Parquet position delete left, there is nothing to do
//!    (Java: "already rewritten to DVs").
//! 2. Grouped by partition (the values of every partition field of the table, across specs,
//!    as Java coerces them to the table's combined partition type).
//! 3. Per partition: files outside `[min-file-size-bytes, max-file-size-bytes]` (sizes: a
//!    DV's blob, else the file), bin-packed into groups of at most
//!    `max-file-group-size-bytes`; a group is kept with more than one file and at least
//!    `min-input-files`, or more than one file and more bytes than the target, or more bytes
//!    than the max. `rewrite-all` keeps every file and group. The target defaults to the
//!    table's `write.delete.target-file-size-bytes` (64 MiB).
//!
//! Rewrite of a group: every position is read; positions whose data file is no longer live
//! in the table (dangling: the file was compacted or overwritten away) are dropped; the rest
//! are written sorted by (file_path, pos) with the table's delete granularity (`file`: one
//! delete file per data file, Java's default) rolling at the group's max output size, or as
//! deletion vectors on format v3. The new files keep the group's highest data sequence
//! number (`commit::rewrite_position_deletes`).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::arrow::delete_cache::deletion_vector;
use crate::arrow::position_deletes::load_position_deletes;
use crate::error::{validation, Result};
use crate::maintenance::rewrite_plan::{RewriteOptions, Thresholds};
use crate::manifest::{
    read_manifest, read_manifest_list, DataContentType, DataFile, FileFormat, ManifestContent,
};
use crate::scan::{plan_files, ScanFilterRef};
use crate::spec::{Literal, TableMetadata};
use crate::writer::{DeleteGranularity, DeletionVectorWriter, PositionDeleteWriter};

/// Java's `write.delete.target-file-size-bytes` default.
pub const DEFAULT_DELETE_TARGET_FILE_SIZE_BYTES: i64 = 64 * 1024 * 1024;

/// The planner's options (Java's option names); `None` means Java's default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeleteRewriteOptions {
    pub target_file_size_bytes: Option<i64>,
    pub min_file_size_bytes: Option<i64>,
    pub max_file_size_bytes: Option<i64>,
    pub min_input_files: Option<usize>,
    pub max_file_group_size_bytes: Option<i64>,
    pub max_file_group_input_files: Option<i64>,
    pub rewrite_all: bool,
}

impl DeleteRewriteOptions {
    fn thresholds(&self, table: &TableMetadata) -> Result<Thresholds> {
        let target = match self.target_file_size_bytes {
            Some(t) => t,
            None => match table.property("write.delete.target-file-size-bytes") {
                Some(v) => v.trim().parse::<i64>().map_err(|_| {
                    validation(format!(
                        "expected an integer for table property 'write.delete.target-file-size-bytes', found '{v}'"
                    ))
                })?,
                None => DEFAULT_DELETE_TARGET_FILE_SIZE_BYTES,
            },
        };
        RewriteOptions {
            target_file_size_bytes: Some(target),
            min_file_size_bytes: self.min_file_size_bytes,
            max_file_size_bytes: self.max_file_size_bytes,
            min_input_files: self.min_input_files,
            max_file_group_size_bytes: self.max_file_group_size_bytes,
            max_file_group_input_files: self.max_file_group_input_files,
            rewrite_all: self.rewrite_all,
            ..Default::default()
        }
        .thresholds(table)
    }
}

/// A live position delete file with its data sequence number.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct LiveDeleteFile {
    pub file: DataFile,
    pub data_sequence_number: i64,
}

impl LiveDeleteFile {
    /// Java's `ContentScanTask.length`: a DV's blob size, else the file size.
    pub fn length(&self) -> i64 {
        match (self.file.file_format, self.file.content_size_in_bytes) {
            (FileFormat::Puffin, Some(n)) => n,
            _ => self.file.file_size_in_bytes,
        }
    }
}

/// One group of delete files rewritten together.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct DeleteGroup {
    /// The partition, as `field id=value` pairs of the table's partition fields.
    pub partition: String,
    pub files: Vec<LiveDeleteFile>,
    pub input_size: i64,
    pub max_output_file_size: i64,
    /// The data sequence number the new files get (Java's `maxRewrittenDataSequenceNumber`).
    pub max_data_sequence_number: i64,
}

/// A plan: the snapshot read and the groups to rewrite.
#[derive(Debug, Clone, Default)]
pub struct DeletePlan {
    pub snapshot_id: Option<i64>,
    pub groups: Vec<DeleteGroup>,
}

/// The live position delete files of the current snapshot that the filter may match.
fn live_position_deletes(
    table: &TableMetadata,
    filter: Option<&ScanFilterRef>,
) -> Result<Vec<LiveDeleteFile>> {
    let Some(list) = table.current_snapshot().and_then(|s| s.manifest_list.as_deref()) else {
        return Ok(vec![]);
    };
    let mut out = Vec::new();
    for m in read_manifest_list(list)? {
        if m.content != ManifestContent::Deletes {
            continue;
        }
        let spec = table.spec_by_id(m.partition_spec_id).ok_or_else(|| {
            validation(format!("unknown partition spec id {}", m.partition_spec_id))
                .with_context("manifest", m.manifest_path.clone())
        })?;
        if let Some(f) = filter {
            if !f.manifest_may_match(&m, spec)? {
                continue;
            }
        }
        for e in read_manifest(&m)? {
            if !e.status.is_live() || e.data_file.content != DataContentType::PositionDeletes {
                continue;
            }
            let mut file = e.data_file;
            file.spec_id = m.partition_spec_id;
            if let Some(f) = filter {
                if !f.file_may_match(&file, spec)? {
                    continue;
                }
            }
            let seq = e.sequence_number.ok_or_else(|| {
                validation("a live manifest entry has no data sequence number after inheritance")
                    .with_context("manifest", m.manifest_path.clone())
            })?;
            out.push(LiveDeleteFile { file, data_sequence_number: seq });
        }
    }
    Ok(out)
}

/// The file's partition on the table's combined partition type: (field id, value) for every
/// partition field of any spec, null where the file's spec lacks the field.
fn combined_partition(table: &TableMetadata, file: &DataFile) -> Result<Vec<(i32, Option<Literal>)>> {
    let spec = table
        .spec_by_id(file.spec_id)
        .ok_or_else(|| validation(format!("unknown partition spec id {}", file.spec_id)))?;
    let mut values: BTreeMap<i32, Option<Literal>> = BTreeMap::new();
    for s in table.partition_specs() {
        for f in s.fields() {
            values.insert(f.field_id, None);
        }
    }
    for (f, v) in spec.fields().iter().zip(&file.partition) {
        values.insert(f.field_id, v.clone());
    }
    Ok(values.into_iter().collect())
}

fn partition_label(values: &[(i32, Option<Literal>)]) -> String {
    values
        .iter()
        .map(|(id, v)| match v {
            Some(v) => format!("{id}={v:?}"),
            None => format!("{id}=null"),
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Plans the rewrite of `table`'s current snapshot (see the module doc).
pub fn plan_rewrite_position_deletes(
    table: &TableMetadata,
    filter: Option<ScanFilterRef>,
    options: &DeleteRewriteOptions,
) -> Result<DeletePlan> {
    let th = options.thresholds(table)?;
    let snapshot_id = table.current_snapshot_id();
    let files = live_position_deletes(table, filter.as_ref())?;
    if table.format_version() >= 3 && files.iter().all(|f| f.file.file_format == FileFormat::Puffin) {
        return Ok(DeletePlan { snapshot_id, groups: vec![] });
    }
    let mut order: Vec<Vec<(i32, Option<Literal>)>> = Vec::new();
    let mut by_partition: HashMap<String, Vec<LiveDeleteFile>> = HashMap::new();
    for f in files {
        let key = combined_partition(table, &f.file)?;
        let label = partition_label(&key);
        if !by_partition.contains_key(&label) {
            order.push(key);
        }
        by_partition.entry(label).or_default().push(f);
    }
    let mut groups = Vec::new();
    for key in order {
        let label = partition_label(&key);
        let files = by_partition.remove(&label).unwrap_or_default();
        let selected: Vec<LiveDeleteFile> = if th.rewrite_all {
            files
        } else {
            files.into_iter().filter(|f| f.length() < th.min || f.length() > th.max).collect()
        };
        for g in crate::maintenance::rewrite_plan::pack(
            selected,
            th.max_group_size,
            th.max_group_files,
            LiveDeleteFile::length,
        ) {
            let input_size: i64 = g.iter().map(LiveDeleteFile::length).sum();
            let keep = (g.len() > 1 && g.len() >= th.min_input_files)
                || (g.len() > 1 && input_size > th.target)
                || input_size > th.max;
            if !th.rewrite_all && !keep {
                continue;
            }
            let max_seq = g.iter().map(|f| f.data_sequence_number).max().unwrap_or(0);
            groups.push(DeleteGroup {
                partition: label.clone(),
                input_size,
                max_output_file_size: th.write_max_file_size(),
                max_data_sequence_number: max_seq,
                files: g,
            });
        }
    }
    Ok(DeletePlan { snapshot_id, groups })
}

/// The live data files of `table`'s current snapshot, by path.
pub fn live_data_files(table: &TableMetadata) -> Result<HashMap<String, DataFile>> {
    Ok(plan_files(table, None)?.into_iter().map(|t| (t.file.file_path.clone(), t.file)).collect())
}

/// What rewriting one group wrote.
#[derive(Debug, Clone, Default)]
pub struct GroupRewrite {
    pub added: Vec<DataFile>,
    /// Positions kept (written) and dropped as dangling.
    pub positions_kept: i64,
    pub positions_dropped: i64,
}

/// Rewrites one group (see the module doc): reads its positions, drops the dangling ones,
/// writes the rest. Files are named with `write_id` and `task_id`; on error nothing is left.
pub fn rewrite_delete_group(
    table: Arc<TableMetadata>,
    group: &DeleteGroup,
    live: &HashMap<String, DataFile>,
    write_id: &str,
    task_id: u32,
) -> Result<GroupRewrite> {
    let mut positions: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for f in &group.files {
        let index = if f.file.file_format == FileFormat::Puffin {
            deletion_vector(&f.file)?
        } else {
            Arc::new(load_position_deletes(&f.file.file_path)?)
        };
        for path in index.paths() {
            let ps = index.positions(path);
            if !ps.is_empty() {
                positions.entry(path.to_string()).or_default().extend_from_slice(ps);
            }
        }
    }
    let mut out = GroupRewrite::default();
    let v3 = table.format_version() >= 3;
    let mut parquet = None;
    let mut dvs = None;
    if v3 {
        dvs = Some(DeletionVectorWriter::try_new(table.clone(), write_id, task_id)?);
    } else {
        let granularity = DeleteGranularity::from_properties(table.properties())?;
        parquet = Some(
            PositionDeleteWriter::try_new(table.clone(), write_id, task_id)?
                .with_granularity(granularity)
                .with_target_file_size(group.max_output_file_size),
        );
    }
    for (path, mut ps) in positions {
        ps.sort_unstable();
        ps.dedup();
        let Some(data_file) = live.get(&path) else {
            out.positions_dropped += ps.len() as i64;
            continue;
        };
        out.positions_kept += ps.len() as i64;
        if let Some(w) = parquet.as_mut() {
            w.delete(data_file, &ps)?;
        }
        if let Some(w) = dvs.as_mut() {
            w.delete(data_file, &ps)?;
        }
    }
    out.added = match (parquet, dvs) {
        (Some(w), _) => w.close()?,
        (_, Some(w)) => w.close()?,
        _ => vec![],
    };
    Ok(out)
}

#[cfg(test)]
#[path = "rewrite_position_deletes_tests.rs"]
mod tests;
