use super::*;
use crate::manifest::DataFile;
use crate::scan::DeleteFileRef;

fn plain(i: i64) -> FileScanTask {
    let mut f =
        DataFile::new_data(format!("s3://b/t/data/d=2024-01-0{}/f-{i}.parquet", i % 9), 10 + i, 1000 + i);
    f.partition = vec![Some(Literal::Date(19_000 + i as i32)), None];
    f.split_offsets = (i % 2 == 0).then(|| vec![4, 500]);
    f.sort_order_id = Some(0);
    f.first_row_id = (i % 3 == 0).then_some(i * 100);
    f.spec_id = (i % 2) as i32;
    f.empty_metric_maps = crate::manifest::data_file::EMPTY_NAN_VALUE_COUNTS;
    let mut t = FileScanTask::whole_file(f, i);
    t.identity_partition_fields = if i % 2 == 0 { vec![(3, 1)] } else { vec![] };
    t.identity_columns_in_file = i % 4 != 1;
    t
}

/// Tasks of every shape the plain form must not swallow.
fn others() -> Vec<FileScanTask> {
    let mut out = Vec::new();
    let mut deletes = plain(20);
    let mut pos = DataFile::new_data("s3://b/t/data/pos.parquet", 3, 300);
    pos.content = DataContentType::PositionDeletes;
    deletes.deletes = vec![DeleteFileRef { file: pos, data_sequence_number: 21 }];
    deletes.delete_scope = Some("s3://b/t/metadata/snap-1.avro".into());
    out.push(deletes);
    let mut residual = plain(21);
    residual.residual = Some(serde_json::json!({"type": "lt", "term": "x", "value": 3}));
    out.push(residual);
    let mut stats = plain(22);
    stats.file.lower_bounds.insert(1, vec![1, 0, 0, 0]);
    stats.file.value_counts.insert(1, 32);
    out.push(stats);
    let mut split = plain(23);
    split.start = 4;
    split.length = 496;
    out.push(split);
    let mut encrypted = plain(24);
    encrypted.file.key_metadata = Some(vec![9, 9]);
    out.push(encrypted);
    let mut dv = plain(25);
    dv.file.content = DataContentType::PositionDeletes;
    dv.file.file_format = FileFormat::Puffin;
    dv.file.referenced_data_file = Some("s3://b/t/data/f-1.parquet".into());
    dv.file.content_offset = Some(4);
    dv.file.content_size_in_bytes = Some(40);
    out.push(dv);
    let mut eq = plain(26);
    eq.file.equality_ids = Some(vec![1]);
    out.push(eq);
    out
}

fn held_plain(tasks: &PlannedTasks) -> usize {
    tasks.items.iter().filter(|s| matches!(s, Stored::Plain(_))).count()
}

#[test]
fn every_task_reads_back_as_pushed() {
    let mut all: Vec<FileScanTask> = (0..12).map(plain).collect();
    for (i, t) in others().into_iter().enumerate() {
        all.insert(2 * i + 1, t);
    }
    let tasks = PlannedTasks::from(all.clone());
    assert_eq!(tasks.len(), all.len());
    assert_eq!(held_plain(&tasks), 12, "the plain tasks are held plain, the others whole");
    assert_eq!(tasks.identities.len(), 2, "one identity list per distinct value");
    for (i, want) in all.iter().enumerate() {
        // FileScanTask's PartialEq compares every field, the unserialized one included.
        assert_eq!(tasks.get(i).as_deref(), Some(want), "task {i}");
    }
    assert!(tasks.get(all.len()).is_none());
    assert_eq!(tasks.iter().map(Cow::into_owned).collect::<Vec<_>>(), all);
    for (s, want) in tasks.summaries().zip(&all) {
        assert_eq!(s.file_path, want.file.file_path);
        assert_eq!(
            (s.file_size_in_bytes, s.record_count, s.length),
            (want.file.file_size_in_bytes, want.file.record_count, want.length)
        );
        assert_eq!(s.delete_bytes, want.deletes.iter().map(|d| d.file.file_size_in_bytes).sum::<i64>());
        assert_eq!(s.size_bytes(), crate::scan::task_size_bytes(want));
    }
    assert_eq!(tasks.clone().into_vec(), all);
}

#[test]
fn tasks_with_deletes_stay_reachable_for_change() {
    let mut tasks: PlannedTasks = (0..4).map(plain).chain(others()).collect();
    let changed: Vec<String> = tasks
        .with_deletes_mut()
        .map(|t| {
            t.delete_scope = Some("scope".into());
            t.file.file_path.clone()
        })
        .collect();
    assert_eq!(changed, vec!["s3://b/t/data/d=2024-01-02/f-20.parquet".to_string()]);
    let scoped: Vec<_> = tasks.iter().filter(|t| t.delete_scope.is_some()).collect();
    assert_eq!(scoped.len(), 1);
    assert_eq!(scoped[0].delete_scope.as_deref(), Some("scope"));
}

#[test]
fn the_plain_form_is_small() {
    // The point of the store: a plain task a quarter of a FileScanTask before its strings.
    assert!(std::mem::size_of::<Stored>() <= 112, "Stored is {} bytes", std::mem::size_of::<Stored>());
}

#[test]
fn appended_tasks_keep_their_identity_lists() {
    // Two workers' parts, each numbering its identity lists in the order it met them.
    let mut first: Vec<FileScanTask> = (0..4).map(plain).collect();
    first[0].identity_partition_fields = vec![(7, 0)];
    let second: Vec<FileScanTask> = (4..10).map(plain).chain(others()).collect();
    let mut tasks = PlannedTasks::from(first.clone());
    tasks.append(PlannedTasks::from(second.clone()));
    let all: Vec<FileScanTask> = first.into_iter().chain(second).collect();
    assert_eq!(tasks.len(), all.len());
    assert_eq!(tasks.identities.len(), 3);
    assert_eq!(tasks.into_vec(), all);
}
