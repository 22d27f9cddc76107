//! Converting equality deletes: rows read equal before and after, later data with a deleted
//! key untouched, a partial filter keeping what it cannot fully convert, and the conflicts.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Int64Array, RecordBatch};

use super::*;
use crate::arrow::{read_task, ReadOptions};
use crate::commit::{merge_append, rewrite_files, RewriteFiles};
use crate::spec::Schema;
use crate::writer::test_tables::{batch, schema, table};
use crate::writer::{convert_equality_deletes, write_data_files, write_equality_deletes};

fn located(md: TableMetadata, dir: &std::path::Path, n: usize) -> TableMetadata {
    md.with_metadata_location(format!("{}/metadata/v{n}.metadata.json", dir.display()))
}

fn append(md: &TableMetadata, dir: &std::path::Path, n: usize, batches: Vec<RecordBatch>) -> TableMetadata {
    let files = write_data_files(md, batches.into_iter().map(Ok), &format!("w{n:07}"), 0).unwrap();
    let (md, _) = merge_append(md, files, &BTreeMap::new(), n as i64).unwrap();
    located(md, dir, n)
}

/// Commits an equality delete of `ids` on `id` in `region`'s partition.
fn eq_delete(
    md: &TableMetadata,
    dir: &std::path::Path,
    n: usize,
    ids: &[i64],
    region: &str,
) -> TableMetadata {
    let keys = RecordBatch::try_from_iter([(
        "id",
        Arc::new(Int64Array::from(ids.to_vec())) as arrow_array::ArrayRef,
    )])
    .unwrap();
    // The writer partitions by the table's spec, so the key rows carry the region too.
    let rows = batch(0..ids.len() as i64, region);
    let keys =
        RecordBatch::try_new(rows.schema(), vec![keys.column(0).clone(), rows.column(1).clone()]).unwrap();
    let deletes =
        write_equality_deletes(md, &[1, 2], std::iter::once(Ok(keys)), &format!("e{n:07}"), 0).unwrap();
    let delta = RowDelta { added_deletes: deletes, ..RowDelta::default() };
    let (md, _) = row_delta(md, delta, n as i64).unwrap();
    located(md, dir, n)
}

/// The ids the table reads (deletes applied), sorted.
fn ids(md: &TableMetadata) -> Vec<i64> {
    let plan = plan_scan(md, &ScanOptions::default(), None).unwrap();
    let projected = Schema::new(0, vec![schema().fields()[0].as_ref().clone()], vec![]).unwrap();
    let mut out = Vec::new();
    for t in plan.tasks.iter() {
        for b in read_task(&t, &projected, ReadOptions::default()).unwrap() {
            out.extend(b.unwrap().column(0).as_primitive::<Int64Type>().values().iter().copied());
        }
    }
    out.sort_unstable();
    out
}

fn eq_delete_count(md: &TableMetadata) -> usize {
    live_equality_deletes(md, md.current_snapshot_id().unwrap()).unwrap().len()
}

/// Plans, converts in one task and commits on `base` (the table as it is at commit time).
fn convert(
    md: &TableMetadata,
    base: &TableMetadata,
    filter: Option<ScanFilterRef>,
) -> Result<(TableMetadata, ConversionPlan, i64)> {
    let plan = plan_conversion(md, filter)?;
    static WRITES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let res = convert_equality_deletes(Arc::new(md.clone()), &plan.tasks, &format!("c{n:07}"), 0)?;
    let c = Conversion {
        start_snapshot_id: plan.snapshot_id,
        removed: plan.removed.clone(),
        covered_data_files: plan.covered_data_files.clone(),
        added: res.delete_files,
        replaced: res.replaced_deletes.iter().map(|f| f.removal_key().into_owned()).collect(),
        summary_properties: Default::default(),
    };
    let (next, _) = commit_conversion(base, &c, 99)?;
    Ok((next, plan, res.deleted_rows))
}

/// Two upsert rounds: keys deleted, then re-inserted in a later snapshot (the equality
/// deletes must not apply to them), plus a key deleted in a partition it does not live in.
fn upserted(dir: &std::path::Path, version: i32) -> TableMetadata {
    let md = located(table(dir, &[], version), dir, 0);
    let md = append(&md, dir, 1, vec![batch(0..50, "eu"), batch(100..130, "us")]);
    let md = eq_delete(&md, dir, 2, &[3, 4, 120], "eu"); // 120 lives in us: no effect
    let md = append(&md, dir, 3, vec![batch(3..5, "eu")]); // re-inserted after the delete
    let md = eq_delete(&md, dir, 4, &[4, 10], "eu");
    let md = eq_delete(&md, dir, 5, &[101], "us");
    append(&md, dir, 6, vec![batch(101..102, "us")])
}

#[test]
fn conversion_keeps_the_rows_and_removes_every_equality_delete() {
    for version in [2, 3] {
        let dir = tempfile::tempdir().unwrap();
        let md = upserted(dir.path(), version);
        let before = ids(&md);
        assert!(before.contains(&3) && before.contains(&101) && !before.contains(&10));
        assert_eq!(eq_delete_count(&md), 3);
        let (after, plan, rows) = convert(&md, &md, None).unwrap();
        assert_eq!(plan.removed.len(), 3);
        assert_eq!(ids(&after), before, "v{version}: rows changed");
        assert_eq!(eq_delete_count(&after), 0);
        // eu file 1: 3, 4, 10; eu file 3 (seq 3): 4 (the delete of seq 4 applies); us: 101.
        assert_eq!(rows, 5, "v{version}");
        let snap = after.current_snapshot().unwrap();
        assert_eq!(snap.summary.operation, crate::spec::Operation::Delete);
        assert_eq!(snap.summary.other.get("removed-equality-delete-files").map(String::as_str), Some("3"));
        // Nothing left to convert.
        let again = plan_conversion(&after, None).unwrap();
        assert!(again.tasks.is_empty() && again.removed.is_empty());
    }
}

#[test]
fn a_filter_keeps_equality_deletes_whose_scope_it_does_not_cover() {
    let dir = tempfile::tempdir().unwrap();
    let md = upserted(dir.path(), 2);
    let before = ids(&md);
    let expr =
        crate::expr::bind(&crate::expr::parse_filter("region = 'us'").unwrap(), md.current_schema(), true)
            .unwrap();
    let filter: ScanFilterRef = Arc::new(crate::scan::BoundFilter::new(expr, md.partition_specs()).unwrap());
    let (after, plan, rows) = convert(&md, &md, Some(filter)).unwrap();
    assert_eq!(plan.removed.len(), 1, "only the us delete is fully covered");
    assert_eq!(plan.kept, 2);
    assert_eq!(rows, 1);
    assert_eq!(ids(&after), before);
    assert_eq!(eq_delete_count(&after), 2);
}

#[test]
fn a_concurrent_removal_or_old_sequence_data_conflicts_and_new_data_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let md = upserted(dir.path(), 3);
    // New data meanwhile (a higher sequence number): no conflict, the new row survives.
    let moved = append(&md, dir.path(), 7, vec![batch(3..4, "eu")]);
    let (after, _, _) = convert(&md, &moved, None).unwrap();
    let mut expected = ids(&md);
    expected.push(3);
    expected.sort_unstable();
    assert_eq!(ids(&after), expected);

    // A compaction of the converted eu files of sequence number 1 meanwhile: the position
    // deletes would name files no longer live, and the rows live on in the new file.
    let plan = plan_scan(&md, &ScanOptions::default(), None).unwrap();
    let eu: Vec<DataFile> =
        plan.tasks.iter().filter(|t| t.data_sequence_number == 1).map(|t| t.file.clone()).collect();
    let new_files = write_data_files(&md, std::iter::once(Ok(batch(0..50, "eu"))), "r0000000", 0).unwrap();
    let rw = RewriteFiles {
        start_snapshot_id: md.current_snapshot_id(),
        rewritten: eu,
        added: new_files,
        use_starting_sequence_number: true,
        remove_dangling_deletes: false,
        summary_properties: Default::default(),
    };
    let (compacted, _) = rewrite_files(&md, rw, 50).unwrap();
    let err = convert(&md, &located(compacted, dir.path(), 8), None).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::CommitConflict, "{err}");
}

#[test]
fn data_added_below_a_removed_deletes_sequence_number_in_its_scope_conflicts() {
    let dir = tempfile::tempdir().unwrap();
    let md = upserted(dir.path(), 2);
    let plan = plan_conversion(&md, None).unwrap();
    // As if an eu equality delete removed by the conversion had a sequence number above the
    // data appended next (a compaction committing with an old sequence number does that).
    let mut removed = plan.removed.clone();
    let eu = removed.iter_mut().find(|d| format!("{:?}", d.file.partition).contains("\"eu\"")).unwrap();
    eu.data_sequence_number = 100;
    let moved = append(&md, dir.path(), 7, vec![batch(60..61, "us")]);
    let none = BTreeSet::new();
    validate_conversion(&moved, md.current_snapshot_id(), &removed, &none, &none).unwrap();
    let moved = append(&md, dir.path(), 7, vec![batch(60..61, "eu")]);
    let err = validate_conversion(&moved, md.current_snapshot_id(), &removed, &none, &none).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::CommitConflict);
    assert!(err.to_string().contains("data sequence number"), "{err}");
}
