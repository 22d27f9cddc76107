//! Position deletes: reading position-delete files (`file_path`, `pos`) into per-data-file
//! sorted position lists, and turning those into Parquet row selections so deleted rows are
//! skipped while decoding rather than filtered afterwards.

use std::collections::HashMap;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::Array;
use arrow_buffer::BooleanBufferBuilder;
use parquet::arrow::arrow_reader::{RowSelection, RowSelector};

use super::reader::read_parquet;
use crate::error::{invalid_data, Result};
use crate::spec::{NestedField, PrimitiveType, Schema};

/// Reserved field id of a position-delete file's `file_path` column.
pub const DELETE_FILE_PATH_ID: i32 = 2147483546;
/// Reserved field id of a position-delete file's `pos` column.
pub const DELETE_FILE_POS_ID: i32 = 2147483545;

/// The content of one position-delete file: for each data file path it names, the deleted
/// row positions, sorted ascending (Java writes them sorted by file_path, pos; we sort anyway).
#[derive(Debug, Default)]
pub struct PositionDeleteIndex {
    by_path: HashMap<String, Vec<i64>>,
    entries: usize,
}

impl PositionDeleteIndex {
    /// The deleted positions (sorted) of one data file: a deletion vector, decoded.
    pub fn single(data_file: String, positions: Vec<i64>) -> Self {
        let entries = positions.len();
        PositionDeleteIndex { by_path: HashMap::from([(data_file, positions)]), entries }
    }

    /// Deleted positions of `data_file` (sorted, possibly with duplicates), empty when none.
    pub fn positions(&self, data_file: &str) -> &[i64] {
        self.by_path.get(data_file).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The data file paths with deleted positions (in no particular order).
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.by_path.keys().map(String::as_str)
    }

    /// Number of (file_path, pos) rows held: the cache's weight.
    pub fn len(&self) -> usize {
        self.entries
    }

    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }
}

fn delete_schema() -> Result<Schema> {
    Schema::new(
        0,
        vec![
            NestedField::required(DELETE_FILE_PATH_ID, "file_path", PrimitiveType::String.into()),
            NestedField::required(DELETE_FILE_POS_ID, "pos", PrimitiveType::Long.into()),
        ],
        vec![],
    )
}

/// Reads a whole position-delete file, streaming, into a per-data-file index.
pub fn load_position_deletes(path: &str) -> Result<PositionDeleteIndex> {
    let wrap = |e: crate::error::Error| e.with_file_role("position delete file", path);
    let schema = delete_schema()?;
    let reader = read_parquet(path, &schema, 65536).map_err(wrap)?;
    let mut index = PositionDeleteIndex::default();
    for batch in reader {
        let batch = batch.map_err(wrap)?;
        let paths = batch.column(0).as_string::<i32>();
        let pos = batch.column(1).as_primitive::<Int64Type>();
        if paths.null_count() > 0 || pos.null_count() > 0 {
            return Err(invalid_data("position delete file has a null file_path or pos")
                .with_context("delete file", path));
        }
        let mut i = 0;
        while i < batch.num_rows() {
            // Rows come in runs of one data file path: look the path up once per run.
            let p = paths.value(i);
            let mut j = i + 1;
            while j < batch.num_rows() && paths.value(j) == p {
                j += 1;
            }
            let list = match index.by_path.get_mut(p) {
                Some(l) => l,
                None => index.by_path.entry(p.to_string()).or_default(),
            };
            list.extend_from_slice(pos.values().get(i..j).unwrap_or_default());
            index.entries += j - i;
            i = j;
        }
    }
    for list in index.by_path.values_mut() {
        if !list.is_sorted() {
            list.sort_unstable();
        }
    }
    Ok(index)
}

/// Merges several sorted position lists into one sorted list without duplicates.
pub fn merge_positions(lists: &[&[i64]]) -> Vec<i64> {
    let non_empty: Vec<&[i64]> = lists.iter().copied().filter(|l| !l.is_empty()).collect();
    let mut out: Vec<i64> = match non_empty.as_slice() {
        [] => return vec![],
        [one] => one.to_vec(),
        many => {
            let mut v = Vec::with_capacity(many.iter().map(|l| l.len()).sum());
            many.iter().for_each(|l| v.extend_from_slice(l));
            v.sort_unstable();
            v
        }
    };
    out.dedup();
    out
}

/// Below this many rows per selector on average, a selection is built as a bitmap rather
/// than as selectors (parquet's own `RowSelectionPolicy::Auto` default): scattered deletes
/// make one selector per deleted row and per kept run, which parquet would turn into a
/// bitmap anyway.
const MASK_BELOW_ROWS_PER_SELECTOR: i64 = 32;

/// A selection of rows over the chosen row groups (in file order) that skips `deleted`
/// (sorted, deduplicated file positions), plus, when `with_runs`, the selected file positions
/// as `(first position, count)` runs in output order (for `_pos`; empty otherwise).
///
/// `groups` are the chosen row groups as `(first row position in the file, row count)`.
/// Dense deletes give a bitmap-backed selection, sparse ones a selector-backed one; both
/// select the same rows.
pub fn row_selection(
    groups: &[(i64, i64)],
    deleted: &[i64],
    with_runs: bool,
) -> (RowSelection, Vec<(i64, i64)>) {
    // the deletes that fall into each group, as index ranges of `deleted`
    let mut spans = Vec::with_capacity(groups.len());
    let mut d = 0;
    for &(first, count) in groups {
        let end = first.saturating_add(count);
        d += deleted.get(d..).unwrap_or_default().partition_point(|&p| p < first);
        let n = deleted.get(d..).unwrap_or_default().partition_point(|&p| p < end);
        spans.push(d..d + n);
        d += n;
    }
    let total: i64 = groups.iter().map(|g| g.1).sum();
    let hits: i64 = spans.iter().map(|r| r.len() as i64).sum();
    let runs = if with_runs { kept_runs(groups, deleted, &spans) } else { Vec::new() };
    if hits > 0 && total < MASK_BELOW_ROWS_PER_SELECTOR * (2 * hits + 1) {
        let mut mask = BooleanBufferBuilder::new(total as usize);
        mask.append_n(total as usize, true);
        let mut offset = 0usize;
        for (&(first, count), span) in groups.iter().zip(&spans) {
            for &p in deleted.get(span.clone()).unwrap_or_default() {
                mask.set_bit(offset + (p - first) as usize, false);
            }
            offset += count as usize;
        }
        return (RowSelection::from_boolean_buffer(mask.finish()), runs);
    }
    let mut selectors: Vec<RowSelector> = Vec::with_capacity(2 * hits as usize + groups.len());
    let mut push = |sel: RowSelector| {
        if sel.row_count == 0 {
            return;
        }
        match selectors.last_mut() {
            Some(last) if last.skip == sel.skip => last.row_count += sel.row_count,
            _ => selectors.push(sel),
        }
    };
    for (&(first, count), span) in groups.iter().zip(&spans) {
        let mut cursor = first;
        for &p in deleted.get(span.clone()).unwrap_or_default() {
            if p < cursor {
                continue; // a repeated position
            }
            push(RowSelector::select((p - cursor) as usize));
            push(RowSelector::skip(1));
            cursor = p + 1;
        }
        push(RowSelector::select((first + count - cursor) as usize));
    }
    (RowSelection::from(selectors), runs)
}

/// The kept file positions as `(first, count)` runs, in order: each group minus its deletes.
fn kept_runs(groups: &[(i64, i64)], deleted: &[i64], spans: &[std::ops::Range<usize>]) -> Vec<(i64, i64)> {
    let mut runs = Vec::new();
    for (&(first, count), span) in groups.iter().zip(spans) {
        let mut cursor = first;
        for &p in deleted.get(span.clone()).unwrap_or_default() {
            if p < cursor {
                continue; // a repeated position
            }
            if p > cursor {
                runs.push((cursor, p - cursor));
            }
            cursor = p + 1;
        }
        if first + count > cursor {
            runs.push((cursor, first + count - cursor));
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_skips_deleted_rows_across_groups() {
        // groups: rows 0..5 and 10..14 (group 5..10 left out by the byte range)
        let groups = [(0, 5), (10, 4)];
        let (sel, runs) = row_selection(&groups, &[1, 2, 4, 7, 10, 13, 99], true);
        let v: Vec<RowSelector> = sel.into();
        assert_eq!(
            v,
            vec![
                RowSelector::select(1),
                RowSelector::skip(2),
                RowSelector::select(1),
                RowSelector::skip(2),
                RowSelector::select(2),
                RowSelector::skip(1),
            ]
        );
        assert_eq!(runs, vec![(0, 1), (3, 1), (11, 2)]);
        let (sel, runs) = row_selection(&groups, &[], true);
        assert_eq!(Vec::<RowSelector>::from(sel), vec![RowSelector::select(9)]);
        assert_eq!(runs, vec![(0, 5), (10, 4)]);
        let (_, runs) = row_selection(&groups, &[1, 2], false);
        assert!(runs.is_empty(), "runs are built only when asked for");
    }

    /// The selected positions, one by one, of a selection over `groups`.
    fn selected(groups: &[(i64, i64)], sel: RowSelection) -> Vec<i64> {
        let positions: Vec<i64> = groups.iter().flat_map(|&(f, n)| f..f + n).collect();
        let mut out = Vec::new();
        let mut at = 0usize;
        for s in Vec::<RowSelector>::from(sel) {
            if !s.skip {
                out.extend_from_slice(&positions[at..at + s.row_count]);
            }
            at += s.row_count;
        }
        assert_eq!(at, positions.len(), "the selection covers every row of the groups");
        out
    }

    #[test]
    fn dense_deletes_give_a_bitmap_sparse_ones_selectors_both_exact() {
        let groups = [(0, 1000), (1000, 500), (3000, 2000)];
        let mut seed = 7u64;
        let mut next = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            seed >> 33
        };
        for every in [2u64, 3, 10, 50, 200, 5000] {
            let mut deleted: Vec<i64> = (0..6000i64).filter(|_| next() % every == 0).collect();
            // the last row of a group, past every group, and repeats
            deleted.extend([4999, 4999, 5000, 7000, 10, 10, 1000]);
            deleted.sort_unstable();
            if every == 3 {
                deleted.dedup(); // the others keep repeated positions, which must change nothing
            }
            let (sel, runs) = row_selection(&groups, &deleted, true);
            let dense = every <= 50; // ~every/2 rows per selector against the 32 threshold
            assert_eq!(sel.as_mask().is_some(), dense, "1 in {every} deleted");
            let want: Vec<i64> = groups
                .iter()
                .flat_map(|&(f, n)| f..f + n)
                .filter(|p| deleted.binary_search(p).is_err())
                .collect();
            let from_runs: Vec<i64> = runs.iter().flat_map(|&(f, n)| f..f + n).collect();
            assert_eq!(from_runs, want, "runs, 1 in {every}");
            assert_eq!(selected(&groups, sel), want, "selection, 1 in {every}");
        }
    }

    #[test]
    fn merge_dedups() {
        assert_eq!(merge_positions(&[&[1, 5], &[], &[2, 5, 9]]), vec![1, 2, 5, 9]);
        assert!(merge_positions(&[&[], &[]]).is_empty());
    }

    #[test]
    fn reads_java_golden_position_delete_files() {
        for name in ["v2_deletes_position_delete_1_1.parquet", "v2_deletes_position_delete_1_2.parquet"] {
            let path = format!("{}/tests/data/golden/{name}", env!("CARGO_MANIFEST_DIR"));
            let idx = load_position_deletes(&path).unwrap();
            assert_eq!(idx.len(), 1);
            let (p, v) = idx.by_path.iter().next().unwrap();
            assert!(p.ends_with(".parquet") && v.len() == 1 && v[0] >= 0, "{p} {v:?}");
        }
        let err = load_position_deletes("/nonexistent/del.parquet").unwrap_err();
        assert!(err.to_string().contains("/nonexistent/del.parquet"), "{err}");
    }
}
