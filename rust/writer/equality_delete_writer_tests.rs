//! Equality-delete writer: schema rules, file layout, and the sequence-number rule through
//! the reader (a delete never removes rows of its own commit).

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch, StringArray};

use super::*;
use crate::commit::{merge_append, row_delta, RowDelta};
use crate::spec::{PartitionSpec, PrimitiveType};
use crate::writer::write_data_files;

fn schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long.into()),
            NestedField::optional(2, "region", PrimitiveType::String.into()),
            NestedField::optional(3, "score", PrimitiveType::Double.into()),
        ],
        vec![],
    )
    .unwrap()
}

fn table(dir: &std::path::Path, partitioned: bool) -> TableMetadata {
    let schema = schema();
    let spec =
        partitioned.then(|| PartitionSpec::builder(&schema).identity("region").unwrap().build().unwrap());
    TableMetadata::new_table(schema, spec, None, dir.to_str().unwrap(), BTreeMap::new(), 2).unwrap()
}

fn rows(ids: &[i64], region: &str) -> RecordBatch {
    let s = Arc::new(crate::arrow::schema_to_arrow(&schema()).unwrap());
    RecordBatch::try_new(
        s,
        vec![
            Arc::new(Int64Array::from(ids.to_vec())),
            Arc::new(StringArray::from_iter_values(ids.iter().map(|_| region))),
            Arc::new(arrow_array::Float64Array::from_iter_values(ids.iter().map(|i| *i as f64))),
        ],
    )
    .unwrap()
}

fn keys(ids: &[i64], region: Option<&str>) -> RecordBatch {
    let s = equality_delete_schema_for(region.is_some());
    let mut cols: Vec<arrow_array::ArrayRef> = vec![Arc::new(Int64Array::from(ids.to_vec()))];
    if let Some(r) = region {
        cols.push(Arc::new(StringArray::from_iter_values(ids.iter().map(|_| r))));
    }
    RecordBatch::try_new(s, cols).unwrap()
}

fn equality_delete_schema_for(with_region: bool) -> Arc<arrow_schema::Schema> {
    let mut fields = vec![NestedField::required(1, "id", PrimitiveType::Long.into())];
    if with_region {
        fields.push(NestedField::optional(2, "region", PrimitiveType::String.into()));
    }
    Arc::new(crate::arrow::schema_to_arrow(&Schema::new(0, fields, vec![]).unwrap()).unwrap())
}

fn read_ids(md: &TableMetadata) -> Vec<i64> {
    let projected =
        Schema::new(0, vec![NestedField::required(1, "id", PrimitiveType::Long.into())], vec![]).unwrap();
    let mut out = Vec::new();
    for task in crate::scan::plan_files(md, None).unwrap() {
        for b in crate::arrow::read_task(&task, &projected, Default::default()).unwrap() {
            let b = b.unwrap();
            out.extend(b.column(0).as_any().downcast_ref::<Int64Array>().unwrap().values().iter().copied());
        }
    }
    out.sort_unstable();
    out
}

#[test]
fn schema_rules_name_the_column() {
    let dir = tempfile::tempdir().unwrap();
    let md = table(dir.path(), true);
    let err = equality_delete_schema(&md, &[1]).unwrap_err().to_string();
    assert!(err.contains("'region'") && err.contains("field id 2"), "{err}");
    let err = equality_delete_schema(&md, &[1, 2, 3]).unwrap_err().to_string();
    assert!(err.contains("'score'") && err.contains("floating-point"), "{err}");
    let err = equality_delete_schema(&md, &[9]).unwrap_err().to_string();
    assert!(err.contains("field id 9"), "{err}");
    assert!(equality_delete_schema(&md, &[]).is_err());
    let s = equality_delete_schema(&md, &[2, 1]).unwrap();
    assert_eq!(s.fields().iter().map(|f| f.id).collect::<Vec<_>>(), vec![1, 2]);
}

#[test]
fn upsert_shape_replaces_old_rows_and_keeps_its_own_inserts() {
    let dir = tempfile::tempdir().unwrap();
    let md = table(dir.path(), true);
    let files = write_data_files(&md, vec![Ok(rows(&[1, 2, 3], "eu"))].into_iter(), "w0000000", 0).unwrap();
    let (md, _) = merge_append(&md, files, &BTreeMap::new(), 1).unwrap();
    let md = md.with_metadata_location(format!("{}/metadata/v1.metadata.json", dir.path().display()));

    // Upsert ids 2 and 4: equality deletes on (id, region) plus the new rows, one commit.
    let deletes =
        write_equality_deletes(&md, &[1, 2], vec![Ok(keys(&[2, 4], Some("eu")))].into_iter(), "w1111111", 0)
            .unwrap();
    assert_eq!(deletes.len(), 1);
    let d = &deletes[0];
    assert_eq!(d.content, DataContentType::EqualityDeletes);
    assert_eq!(d.equality_ids, Some(vec![1, 2]));
    assert_eq!(d.record_count, 2);
    assert!(d.file_path.contains("/data/region=eu/") && d.file_path.ends_with("-deletes.parquet"));
    assert_eq!(d.lower_bounds[&1], 2i64.to_le_bytes().to_vec());
    let data = write_data_files(&md, vec![Ok(rows(&[2, 4], "eu"))].into_iter(), "w1111111", 1).unwrap();
    let delta = RowDelta { added_data: data, added_deletes: deletes, ..Default::default() };
    let (md2, _) = row_delta(&md, delta, 2).unwrap();
    let s = md2.current_snapshot().unwrap();
    assert_eq!(s.summary.operation, crate::spec::Operation::Overwrite);
    assert_eq!(s.summary.other["added-equality-delete-files"], "1");
    assert_eq!(s.summary.other["added-equality-deletes"], "2");
    assert_eq!(s.summary.other["total-records"], "5");
    // The old 2 is gone, the new 2 and 4 survive (same sequence number as the delete).
    assert_eq!(read_ids(&md2), vec![1, 2, 3, 4]);
}

#[test]
fn bad_key_batches_leave_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let md = table(dir.path(), false);
    let wrong = rows(&[1], "eu"); // three columns where the key schema has one
    let err = write_equality_deletes(&md, &[1], vec![Ok(wrong)].into_iter(), "w2222222", 0).unwrap_err();
    assert!(!err.to_string().is_empty());
    let data_dir = dir.path().join("data");
    let left: Vec<_> = std::fs::read_dir(&data_dir).map(|d| d.collect()).unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_counts_table_keeps_bounds_for_its_sorted_key_as_javas_for_table() {
    // Java's equality-delete writers take MetricsConfig.forTable: the sort order's columns
    // keep truncate(16) under a `counts` default
    use crate::spec::{SortField, SortOrder};
    let dir = tempfile::tempdir().unwrap();
    let props = BTreeMap::from([("write.metadata.metrics.default".to_string(), "counts".to_string())]);
    let sorted = |order| {
        TableMetadata::new_table(schema(), None, order, dir.path().to_str().unwrap(), props.clone(), 2)
            .unwrap()
    };
    let key = |md: &TableMetadata, write_id: &str| {
        let batches = vec![Ok(keys(&[2, 4], Some("eu")))].into_iter();
        let written = write_equality_deletes(md, &[1, 2], batches, write_id, 0).unwrap();
        (written[0].lower_bounds.get(&1).cloned(), written[0].lower_bounds.get(&2).cloned())
    };
    let by_id = SortOrder::new(1, vec![SortField::asc(1)]);
    assert_eq!(key(&sorted(Some(by_id)), "w2"), (Some(2i64.to_le_bytes().to_vec()), None));
    assert_eq!(key(&sorted(None), "w3"), (None, None));
}
