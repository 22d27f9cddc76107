//! Tests of the rewrite planner against Java's rules (`SizeBasedFileRewritePlanner`,
//! `BinPackRewriteFilePlanner`); the end-to-end parity with Java's procedure is in
//! tests/maintenance/test_maintenance_rewrite.py.

use std::collections::BTreeMap;

use super::{pack, plan_rewrite, RewriteOptions, Thresholds};
use crate::commit::{merge_append, row_delta, RowDelta};
use crate::manifest::{DataContentType, DataFile};
use crate::scan::FileScanTask;
use crate::spec::{Literal, TableMetadata};

const MB: i64 = 1024 * 1024;

fn th(target: i64) -> Thresholds {
    let md = table(std::path::Path::new("/tmp/none"))
        .with_properties([("write.target-file-size-bytes".to_string(), target.to_string())], [])
        .unwrap();
    RewriteOptions::default().thresholds(&md).unwrap()
}

fn table(dir: &std::path::Path) -> TableMetadata {
    crate::writer::test_tables::table(dir, &[], 2)
}

fn task(size: i64) -> FileScanTask {
    FileScanTask::whole_file(DataFile::new_data(format!("/t/{size}.parquet"), 10, size), 1)
}

#[test]
fn defaults_follow_the_target() {
    let t = th(100 * MB);
    assert_eq!((t.min, t.max, t.min_input_files), (75 * MB, 180 * MB, 5));
    assert_eq!(t.write_max_file_size(), 140 * MB);
    assert_eq!(t.delete_file_threshold, usize::MAX);
}

#[test]
fn expected_output_files_rounds_like_java() {
    let t = th(100 * MB);
    assert_eq!(t.expected_output_files(10 * MB), 1);
    // 1010 MB: remainder 10 MB <= min, average 101 MB < 110 MB: round down.
    assert_eq!(t.expected_output_files(1010 * MB), 10);
    // 1080 MB: remainder 80 MB > min 75 MB: keep the remainder file.
    assert_eq!(t.expected_output_files(1080 * MB), 11);
    // 150 MB: remainder 50 MB <= min, average 150 MB >= 110 MB: round up.
    assert_eq!(t.expected_output_files(150 * MB), 2);
    assert_eq!(t.input_split_size(10 * MB), 100 * MB, "at least the target");
    assert_eq!(t.input_split_size(150 * MB), 100 * MB, "75 MB + overhead is below the target");
    assert_eq!(t.input_split_size(1010 * MB), 101 * MB + 5 * 1024, "input / files + overhead");
}

#[test]
fn groups_need_enough_files_or_content() {
    let t = th(100 * MB);
    let small = |n: usize| (0..n).map(|_| task(MB)).collect::<Vec<_>>();
    assert!(!t.keep_group(&small(4)));
    assert!(t.keep_group(&small(5)));
    assert!(!t.keep_group(&small(1)));
    // Two files above the target together.
    assert!(t.keep_group(&[task(60 * MB), task(50 * MB)]));
    // One file larger than the max is split on its own.
    assert!(t.keep_group(&[task(200 * MB)]));
    assert!(!t.keep_group(&[task(90 * MB)]));
}

#[test]
fn files_inside_the_size_range_are_not_selected_unless_deleted_enough() {
    let t = th(100 * MB);
    assert!(!t.selected(&task(90 * MB)));
    assert!(t.selected(&task(10 * MB)));
    assert!(t.selected(&task(190 * MB)));
}

#[test]
fn pack_keeps_one_open_bin() {
    let groups = pack(vec![task(4), task(4), task(4), task(9), task(1)], 10, usize::MAX, |t| t.length);
    let sizes: Vec<Vec<i64>> = groups.iter().map(|g| g.iter().map(|t| t.length).collect()).collect();
    assert_eq!(sizes, vec![vec![4, 4], vec![4], vec![9, 1]]);
    // Java's `maxItemsPerBin` (`max-file-group-input-files`) closes a bin at that count too.
    let groups = pack(vec![task(1), task(1), task(1), task(1), task(1)], 10, 2, |t| t.length);
    assert_eq!(groups.iter().map(Vec::len).collect::<Vec<_>>(), vec![2, 2, 1]);
}

#[test]
fn options_are_checked() {
    let md = table(std::path::Path::new("/tmp/none"));
    let bad = RewriteOptions {
        target_file_size_bytes: Some(100),
        min_file_size_bytes: Some(200),
        ..Default::default()
    };
    assert!(bad.thresholds(&md).unwrap_err().to_string().contains("min-file-size-bytes"));
    let bad = RewriteOptions { min_input_files: Some(0), ..Default::default() };
    assert!(bad.thresholds(&md).is_err());
    let bad = RewriteOptions { delete_ratio_threshold: Some(1.5), ..Default::default() };
    assert!(bad.thresholds(&md).is_err());
    let bad = RewriteOptions { max_file_group_input_files: Some(-3), ..Default::default() };
    let msg = bad.thresholds(&md).unwrap_err().to_string();
    assert!(msg.contains("'max-file-group-input-files' is set to -3 but must be > 0"), "{msg}");
    let bad = RewriteOptions { output_spec_id: Some(7), ..Default::default() };
    let msg = bad.thresholds(&md).unwrap_err().to_string();
    assert!(msg.contains("Cannot use output spec id 7"), "{msg}");
    let ok = RewriteOptions { output_spec_id: Some(md.default_spec_id()), ..Default::default() };
    assert_eq!(ok.thresholds(&md).unwrap().output_spec_id, md.default_spec_id());
    let bad = RewriteOptions { max_files_to_rewrite: Some(0), ..Default::default() };
    let msg = bad.thresholds(&md).unwrap_err().to_string();
    assert!(msg.contains("'max-files-to-rewrite' is set to 0 but must be a positive integer"), "{msg}");
    let bad = RewriteOptions { rewrite_job_order: Some("largest-first".into()), ..Default::default() };
    let msg = bad.thresholds(&md).unwrap_err().to_string();
    assert!(msg.contains("found 'largest-first'"), "{msg}");
}

/// Partitions eu (6 files), us (5) and ap (7), each a kept group, in that plan order.
fn three_partition_table(dir: &std::path::Path) -> TableMetadata {
    let mut md = table(dir);
    let mut n = 0;
    for (region, files) in [("eu", 6), ("us", 5), ("ap", 7)] {
        for i in 0..files {
            n += 1;
            let mut f =
                DataFile::new_data(format!("{}/data/{region}{i}.parquet", dir.display()), 10, 1000 + i);
            f.partition = vec![Some(Literal::String(region.into()))];
            let (next, _) = merge_append(&md, vec![f], &BTreeMap::new(), n).unwrap();
            md = next.with_metadata_location(format!("{}/metadata/v{n}.json", dir.display()));
        }
    }
    md
}

fn shape(plan: &super::RewritePlan) -> Vec<(String, usize)> {
    plan.groups.iter().map(|g| (g.partition.clone(), g.tasks.len())).collect()
}

#[test]
fn max_files_to_rewrite_takes_groups_in_plan_order_and_cuts_the_last() {
    let dir = tempfile::tempdir().unwrap();
    let md = three_partition_table(dir.path());
    let all = plan_rewrite(&md, None, &RewriteOptions::default()).unwrap();
    let order: Vec<String> = all.groups.iter().map(|g| g.partition.clone()).collect();
    assert_eq!(all.groups.iter().map(|g| g.tasks.len()).sum::<usize>(), 18);
    let opts = RewriteOptions { max_files_to_rewrite: Some(8), ..Default::default() };
    let cut = plan_rewrite(&md, None, &opts).unwrap();
    let first = all.groups[0].tasks.len();
    assert_eq!(shape(&cut), vec![(order[0].clone(), first), (order[1].clone(), 8 - first)]);
    // The cut group keeps its first files, and its sizes follow them.
    let kept: Vec<&str> = cut.groups[1].tasks.iter().map(|t| t.file.file_path.as_str()).collect();
    let planned: Vec<&str> = all.groups[1].tasks.iter().map(|t| t.file.file_path.as_str()).collect();
    assert_eq!(kept, planned[..8 - first]);
    assert_eq!(cut.groups[1].input_size, cut.groups[1].tasks.iter().map(|t| t.length).sum::<i64>());
    let opts = RewriteOptions { max_files_to_rewrite: Some(100), ..Default::default() };
    assert_eq!(shape(&plan_rewrite(&md, None, &opts).unwrap()), shape(&all));
}

#[test]
fn rewrite_job_order_sorts_the_groups() {
    let dir = tempfile::tempdir().unwrap();
    let md = three_partition_table(dir.path());
    let plan = |order: &str| {
        let opts = RewriteOptions { rewrite_job_order: Some(order.into()), ..Default::default() };
        shape(&plan_rewrite(&md, None, &opts).unwrap()).into_iter().map(|(_, n)| n).collect::<Vec<_>>()
    };
    assert_eq!(plan("files-desc"), vec![7, 6, 5]);
    assert_eq!(plan("FILES-ASC"), vec![5, 6, 7]);
    assert_eq!(plan("bytes-asc"), vec![5, 6, 7]);
    assert_eq!(plan("bytes-desc"), vec![7, 6, 5]);
    let none = shape(&plan_rewrite(&md, None, &RewriteOptions::default()).unwrap());
    assert_eq!(plan("none"), none.into_iter().map(|(_, n)| n).collect::<Vec<_>>());
}

#[test]
fn plan_groups_small_files_per_partition_and_selects_deleted_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut md = table(dir.path());
    let mut n = 0;
    let mut add = |md: &mut TableMetadata, f: DataFile| {
        n += 1;
        let (next, _) = merge_append(md, vec![f], &BTreeMap::new(), n).unwrap();
        *md = next.with_metadata_location(format!("{}/metadata/v{n}.json", dir.path().display()));
    };
    let file = |name: &str, region: &str| {
        let mut f = DataFile::new_data(format!("{}/data/{name}", dir.path().display()), 100, 1000);
        f.partition = vec![Some(Literal::String(region.into()))];
        f
    };
    for i in 0..5 {
        add(&mut md, file(&format!("eu{i}.parquet"), "eu"));
    }
    for i in 0..2 {
        add(&mut md, file(&format!("us{i}.parquet"), "us"));
    }
    let plan = plan_rewrite(&md, None, &RewriteOptions::default()).unwrap();
    assert_eq!(plan.groups.len(), 1, "us has 2 < 5 files");
    assert_eq!(plan.groups[0].partition, "region=eu");
    assert_eq!(plan.groups[0].tasks.len(), 5);
    assert_eq!(plan.groups[0].expected_output_files, 1);
    assert_eq!(plan.snapshot_id, md.current_snapshot().map(|s| s.snapshot_id));

    // 40 of us0's 100 rows deleted (file-scoped): ratio 0.4 >= 0.3 rewrites us0 alone.
    let mut d = file("us0-deletes.parquet", "us");
    d.content = DataContentType::PositionDeletes;
    d.record_count = 40;
    d.referenced_data_file = Some(format!("{}/data/us0.parquet", dir.path().display()));
    let (next, _) = row_delta(&md, RowDelta { added_deletes: vec![d], ..Default::default() }, 99).unwrap();
    md = next.with_metadata_location(format!("{}/metadata/v99.json", dir.path().display()));
    let plan = plan_rewrite(&md, None, &RewriteOptions::default()).unwrap();
    let us: Vec<_> = plan.groups.iter().filter(|g| g.partition == "region=us").collect();
    assert_eq!(us.len(), 1);
    assert!(us[0].tasks.iter().any(|t| t.file.file_path.ends_with("us0.parquet")));
    let us0 = us[0].tasks.iter().find(|t| t.file.file_path.ends_with("us0.parquet")).unwrap();
    assert_eq!(us0.deletes.len(), 1, "deletes stay attached for the rewrite");
    // delete-file-threshold 1 selects it too; with the ratio threshold at 1 it is not.
    let opts = RewriteOptions { delete_ratio_threshold: Some(1.0), ..Default::default() };
    let plan = plan_rewrite(&md, None, &opts).unwrap();
    assert!(plan.groups.iter().all(|g| g.partition != "region=us"));
    let opts = RewriteOptions {
        delete_ratio_threshold: Some(1.0),
        delete_file_threshold: Some(1),
        ..Default::default()
    };
    let plan = plan_rewrite(&md, None, &opts).unwrap();
    assert!(plan.groups.iter().any(|g| g.partition == "region=us"));
}
