use super::*;
use crate::manifest::DataFile;
use crate::scan::task::DeleteFileRef;

fn task(size: i64, offsets: Option<Vec<i64>>) -> FileScanTask {
    let mut f = DataFile::new_data(format!("f{size}"), 1, size);
    f.split_offsets = offsets;
    FileScanTask::whole_file(f, 0)
}

fn opts(target: i64, cost: i64, lookback: usize) -> SplitOptions {
    SplitOptions { target_size: target, open_file_cost: cost, lookback, adaptive: false }
}

#[test]
fn splits_at_offsets() {
    let mut out = vec![];
    split_task(task(100, Some(vec![4, 40, 70])), 10, &mut out);
    let r: Vec<(i64, i64)> = out.iter().map(|t| (t.start, t.length)).collect();
    assert_eq!(r, vec![(4, 36), (40, 30), (70, 30)]);
}

#[test]
fn invalid_offsets_fall_back_to_fixed_size() {
    for bad in [vec![4, 200], vec![40, 4], vec![]] {
        let mut out = vec![];
        split_task(task(25, Some(bad)), 10, &mut out);
        let r: Vec<(i64, i64)> = out.iter().map(|t| (t.start, t.length)).collect();
        assert_eq!(r, vec![(0, 10), (10, 10), (20, 5)]);
    }
}

#[test]
fn weight_counts_delete_bytes_and_one_open_cost() {
    let mut t = task(10, None);
    assert_eq!(task_weight(&t, 4), 10);
    assert_eq!(task_weight(&t, 40), 40);
    t.deletes.push(DeleteFileRef { file: DataFile::new_data("d", 1, 7), data_sequence_number: 1 });
    assert_eq!(task_weight(&t, 4), 17);
    // Delete files cost their bytes, not an open each (they are opened once per process).
    assert_eq!(task_weight(&t, 40), 40);
}

#[test]
fn packs_with_lookback_largest_first() {
    // Java BinPacking: target 10, lookback 2, weights 6,6,6,3,3.
    let tasks: Vec<_> = [6, 6, 6, 3, 3].iter().map(|&s| task(s, None)).collect();
    let out = plan_tasks(tasks, &opts(10, 1, 2));
    let sizes: Vec<Vec<i64>> = out.iter().map(|c| c.tasks.iter().map(|t| t.length).collect()).collect();
    // third 6 opens a 3rd bin -> largest (first 6) emitted; 3 -> bin 2 (6+3); 3 -> bin 3 (6+3).
    assert_eq!(sizes, vec![vec![6], vec![6, 3], vec![6, 3]]);
}

#[test]
fn oversized_task_gets_its_own_bin() {
    let out = plan_tasks(vec![task(50, None), task(2, None)], &opts(10, 1, 10));
    assert_eq!(out.len(), 2);
}

#[test]
fn adaptive_split_size_follows_java() {
    const MB: i64 = 1024 * 1024;
    // enough splits for every slot: unchanged
    assert_eq!(adjust_split_size(1024 * MB, 4, 128 * MB), 128 * MB);
    // fewer splits than slots: scan / parallelism, but at least 16 MB
    assert_eq!(adjust_split_size(200 * MB, 4, 128 * MB), 50 * MB);
    assert_eq!(adjust_split_size(17 * MB, 200, 128 * MB), 16 * MB);
    // a configured split size below 16 MB stays the floor; never raised
    assert_eq!(adjust_split_size(10 * MB, 200, 8 * MB), 8 * MB);
    assert_eq!(adjust_split_size(0, 2, 128 * MB), 16 * MB);
    // degenerate inputs do not divide by zero
    assert_eq!(adjust_split_size(100, 0, 0), 1);
}

#[test]
fn adaptive_split_property_is_read_from_the_table() -> crate::Result<()> {
    use crate::spec::{Schema, TableMetadata};
    use std::collections::BTreeMap;
    let md = TableMetadata::new_table(
        Schema::new(0, vec![], vec![])?,
        None,
        None,
        "file:///t",
        BTreeMap::new(),
        2,
    )?;
    assert!(SplitOptions::from_table(&md).adaptive);
    let off = md.with_properties([(ADAPTIVE_SPLIT_SIZE_ENABLED.to_string(), "false".to_string())], [])?;
    assert!(!SplitOptions::from_table(&off).adaptive);
    Ok(())
}
