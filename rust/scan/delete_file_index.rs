//! DeleteFileIndex: which delete files apply to a data file (the spec's scan-planning rules,
//! as Iceberg Java's `DeleteFileIndex` applies them).
//!
//! - Position deletes apply when `delete seq >= data seq`. A file scoped to one data file
//!   (`referenced_data_file`, or equal `file_path` lower/upper bounds, field 2147483546) is
//!   indexed by that path; any other by (spec id, partition).
//! - Equality deletes apply when `delete seq > data seq`: by (spec id, partition), or to every
//!   data file when the delete file's spec is unpartitioned ("global"). Each candidate is then
//!   pruned by the stats of its equality columns ([`can_contain_eq_deletes`], Java's
//!   `canContainEqDeletesForFile` / `rangesOverlap`).
//! - Deletion vectors (v3) are not indexed: they are refused with a clear error.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::Arc;

use crate::error::Result;
use crate::manifest::{DataContentType, DataFile, FileFormat};
use crate::spec::{Literal, PartitionSpec, PrimitiveType, Schema, StructValue};

/// Field id of the `file_path` column of position delete files.
pub const DELETE_FILE_PATH_FIELD_ID: i32 = 2147483546;

/// A delete file with its data sequence number (after inheritance).
#[derive(Debug, Clone)]
pub struct IndexedDelete {
    pub file: Arc<DataFile>,
    pub data_sequence_number: i64,
    /// Decoded stats of the equality columns (equality deletes only).
    eq_fields: Vec<EqFieldStats>,
}

/// One equality column of an equality delete file: its type and the delete file's stats.
#[derive(Debug, Clone)]
pub struct EqFieldStats {
    id: i32,
    ty: Option<PrimitiveType>,
    required: bool,
    lower: Option<Literal>,
    upper: Option<Literal>,
    null_count: Option<i64>,
    value_count: Option<i64>,
}

/// A partition tuple as a hashable key: each value's single-value binary form.
type PartitionKey = (i32, Vec<Option<Vec<u8>>>);

/// Keyed by the widened values: a data file written before its partition field's promotion
/// (an `int` value of a field that is `long` now) is in the same partition as a delete file
/// written after it.
fn partition_key(spec_id: i32, partition: &StructValue) -> PartitionKey {
    (spec_id, partition.iter().map(|v| v.as_ref().map(|v| v.widened().to_bytes())).collect())
}

/// Delete files sorted by data sequence number, for a binary search on the data file's.
#[derive(Debug, Default)]
struct SeqSorted(Vec<IndexedDelete>);

impl SeqSorted {
    fn sort(&mut self) {
        self.0.sort_by_key(|d| d.data_sequence_number);
    }
    /// Deletes with `seq >= min_seq`.
    fn at_or_after(&self, min_seq: i64) -> &[IndexedDelete] {
        let start = self.0.partition_point(|d| d.data_sequence_number < min_seq);
        &self.0[start..]
    }
}

/// The index over all live delete files of a snapshot.
#[derive(Debug, Default)]
pub struct DeleteFileIndex {
    global_eq: SeqSorted,
    eq_by_partition: HashMap<PartitionKey, SeqSorted>,
    pos_by_partition: HashMap<PartitionKey, SeqSorted>,
    pos_by_path: HashMap<String, SeqSorted>,
    /// v3 deletion vectors by the data file they belong to (at most one each).
    dv_by_path: HashMap<String, IndexedDelete>,
    len: usize,
}

/// The data file a position delete file is scoped to, if any (Java
/// `ContentFileUtil.referencedDataFileLocation`).
pub fn referenced_data_file(file: &DataFile) -> Option<String> {
    if let Some(p) = &file.referenced_data_file {
        return Some(p.clone());
    }
    let lower = file.lower_bounds.get(&DELETE_FILE_PATH_FIELD_ID)?;
    let upper = file.upper_bounds.get(&DELETE_FILE_PATH_FIELD_ID)?;
    if lower == upper {
        String::from_utf8(lower.clone()).ok()
    } else {
        None
    }
}

impl DeleteFileIndex {
    /// Builds the index. `specs` resolves each file's `spec_id`; `schema` types the equality
    /// columns. Errors on a deletion vector or an unknown spec id.
    pub fn build(
        deletes: impl IntoIterator<Item = (DataFile, i64)>,
        specs: &HashMap<i32, PartitionSpec>,
        schema: &Schema,
    ) -> Result<DeleteFileIndex> {
        let mut index = DeleteFileIndex::default();
        for (file, seq) in deletes {
            index.len += 1;
            match file.content {
                DataContentType::Data => {
                    return Err(crate::error::invalid_data("a data file was listed in a delete manifest")
                        .with_context("file", file.file_path.clone()))
                }
                DataContentType::PositionDeletes => {
                    if file.file_format == FileFormat::Puffin {
                        index.add_dv(file, seq)?;
                        continue;
                    }
                    let d =
                        IndexedDelete { file: Arc::new(file), data_sequence_number: seq, eq_fields: vec![] };
                    match referenced_data_file(&d.file) {
                        Some(path) => index.pos_by_path.entry(path).or_default().0.push(d),
                        None => {
                            let key = partition_key(d.file.spec_id, &d.file.partition);
                            index.pos_by_partition.entry(key).or_default().0.push(d)
                        }
                    }
                }
                DataContentType::EqualityDeletes => {
                    let spec = specs.get(&file.spec_id).ok_or_else(|| {
                        crate::error::invalid_data(format!(
                            "delete file names partition spec {} which the table does not have",
                            file.spec_id
                        ))
                        .with_context("delete file", file.file_path.clone())
                    })?;
                    let eq_fields = eq_field_stats(&file, schema);
                    let global = spec.is_unpartitioned();
                    let d = IndexedDelete { file: Arc::new(file), data_sequence_number: seq, eq_fields };
                    if global {
                        index.global_eq.0.push(d);
                    } else {
                        let key = partition_key(d.file.spec_id, &d.file.partition);
                        index.eq_by_partition.entry(key).or_default().0.push(d);
                    }
                }
            }
        }
        index.global_eq.sort();
        for v in index.eq_by_partition.values_mut() {
            v.sort();
        }
        for v in index.pos_by_partition.values_mut() {
            v.sort();
        }
        for v in index.pos_by_path.values_mut() {
            v.sort();
        }
        Ok(index)
    }

    /// Indexes a deletion vector: it names its data file, and a data file has at most one
    /// (Java `DeleteFileIndex`: "Can't index multiple DVs").
    fn add_dv(&mut self, file: DataFile, seq: i64) -> Result<()> {
        let path = file.file_path.clone();
        let Some(data) = file.referenced_data_file.clone() else {
            return Err(crate::error::invalid_data(
                "a deletion vector (Puffin position delete) has no referenced_data_file",
            )
            .with_context("delete file", path));
        };
        let d = IndexedDelete { file: Arc::new(file), data_sequence_number: seq, eq_fields: vec![] };
        if let Some(other) = self.dv_by_path.insert(data.clone(), d) {
            return Err(crate::error::invalid_data(format!(
                "data file {data} has two deletion vectors: {} and {path}",
                other.file.file_path
            ))
            .with_context("delete file", path));
        }
        Ok(())
    }

    /// Number of delete files indexed.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The delete files that apply to `data` (with data sequence number `seq`), in Java's
    /// order: global equality, partition equality, then the data file's deletion vector
    /// alone or else partition position and path position deletes (a DV holds every
    /// earlier position delete of its file). A DV older than its data file is an error.
    pub fn for_data_file(&self, seq: i64, data: &DataFile) -> Result<Vec<&IndexedDelete>> {
        let mut out = Vec::new();
        if self.len == 0 {
            return Ok(out);
        }
        let dv = self.dv_by_path.get(&data.file_path);
        if let Some(d) = dv {
            if d.data_sequence_number < seq {
                return Err(crate::error::invalid_data(format!(
                    "the deletion vector of {} has data sequence number {}, below the data file's {seq}",
                    data.file_path, d.data_sequence_number
                ))
                .with_context("delete file", d.file.file_path.clone()));
            }
        }
        let eq_applies = |d: &&IndexedDelete| can_contain_eq_deletes(data, &d.eq_fields);
        // Equality deletes: delete seq > data seq.
        out.extend(self.global_eq.at_or_after(seq.saturating_add(1)).iter().filter(eq_applies));
        let key = (!self.eq_by_partition.is_empty() || !self.pos_by_partition.is_empty())
            .then(|| partition_key(data.spec_id, &data.partition));
        if let Some(key) = &key {
            if let Some(eq) = self.eq_by_partition.get(key) {
                out.extend(eq.at_or_after(seq.saturating_add(1)).iter().filter(eq_applies));
            }
            // Position deletes: delete seq >= data seq.
            if let Some(pos) = self.pos_by_partition.get(key).filter(|_| dv.is_none()) {
                out.extend(pos.at_or_after(seq));
            }
        }
        if let Some(d) = dv {
            out.push(d);
        } else if let Some(pos) = self.pos_by_path.get(&data.file_path) {
            out.extend(pos.at_or_after(seq));
        }
        Ok(out)
    }
}

/// The stats of an equality delete file's equality columns, decoded once for
/// [`can_contain_eq_deletes`].
pub fn eq_field_stats(file: &DataFile, schema: &Schema) -> Vec<EqFieldStats> {
    let ids = file.equality_ids.as_deref().unwrap_or(&[]);
    ids.iter()
        .map(|&id| {
            let field = schema.field_by_id(id);
            let ty = field.and_then(|f| f.field_type.as_primitive().cloned());
            let decode = |m: &std::collections::BTreeMap<i32, Vec<u8>>| {
                ty.as_ref().and_then(|t| m.get(&id).and_then(|b| Literal::from_bytes(t, b).ok()))
            };
            EqFieldStats {
                id,
                required: field.is_some_and(|f| f.required),
                lower: decode(&file.lower_bounds),
                upper: decode(&file.upper_bounds),
                null_count: file.null_value_counts.get(&id).copied(),
                value_count: file.value_counts.get(&id).copied(),
                ty,
            }
        })
        .collect()
}

/// Java's `Comparators.forType`: Iceberg order, except that Java 1.10 compares UUIDs as two
/// signed longs (apache/iceberg#14216), which decides overlap for Java-written bounds.
fn java_cmp(a: &Literal, b: &Literal) -> Option<Ordering> {
    match (a, b) {
        (Literal::Uuid(x), Literal::Uuid(y)) => {
            let split = |u: u128| ((u >> 64) as u64 as i64, u as u64 as i64);
            Some(split(*x).cmp(&split(*y)))
        }
        _ => a.cmp_same_type(b),
    }
}

/// May the equality delete file (its equality columns' stats) delete a row of `data`?
/// Java `DeleteFileIndex.canContainEqDeletesForFile`: null-count reasoning, then the bounds
/// of each equality column must overlap. Unknown stats mean "may".
pub fn can_contain_eq_deletes(data: &DataFile, eq_fields: &[EqFieldStats]) -> bool {
    for f in eq_fields {
        let Some(ty) = &f.ty else { continue }; // nested or unknown: no stats
        let data_nulls = data.null_value_counts.get(&f.id).copied();
        let data_values = data.value_counts.get(&f.id).copied();
        let contains_null = |nulls: Option<i64>| !f.required && nulls.is_none_or(|n| n > 0);
        let all_null = |nulls: Option<i64>, values: Option<i64>| {
            !f.required && matches!((nulls, values), (Some(n), Some(v)) if n == v)
        };
        let all_non_null = |nulls: Option<i64>| f.required || nulls.is_some_and(|n| n <= 0);
        if contains_null(data_nulls) && contains_null(f.null_count) {
            continue;
        }
        if all_null(data_nulls, data_values) && all_non_null(f.null_count) {
            return false;
        }
        if all_null(f.null_count, f.value_count) && all_non_null(data_nulls) {
            return false;
        }
        let (Some(del_lower), Some(del_upper)) = (&f.lower, &f.upper) else { continue };
        let decode = |m: &std::collections::BTreeMap<i32, Vec<u8>>| {
            m.get(&f.id).and_then(|b| Literal::from_bytes(ty, b).ok())
        };
        let (Some(data_lower), Some(data_upper)) = (decode(&data.lower_bounds), decode(&data.upper_bounds))
        else {
            continue;
        };
        if !ranges_overlap(&data_lower, &data_upper, del_lower, del_upper) {
            return false;
        }
    }
    true
}

/// Do `[data_lower, data_upper]` and `[del_lower, del_upper]` intersect? (Java `rangesOverlap`;
/// values of different types are assumed to overlap.)
pub fn ranges_overlap(
    data_lower: &Literal,
    data_upper: &Literal,
    del_lower: &Literal,
    del_upper: &Literal,
) -> bool {
    if java_cmp(data_lower, del_upper) == Some(Ordering::Greater) {
        return false;
    }
    if java_cmp(del_lower, data_upper) == Some(Ordering::Greater) {
        return false;
    }
    true
}

#[cfg(test)]
#[path = "delete_file_index_tests.rs"]
mod tests;
