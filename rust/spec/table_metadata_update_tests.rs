use std::collections::BTreeMap;

use serde_json::json;

use super::*;
use crate::spec::snapshot::{Operation, Snapshot, Summary};
use crate::spec::types::{NestedField, PrimitiveType};

fn base() -> TableMetadata {
    let schema = Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long.into()),
            NestedField::optional(2, "data", PrimitiveType::String.into()),
        ],
        vec![],
    )
    .unwrap();
    let md = TableMetadata::new_table(schema, None, None, "file:///w/t", BTreeMap::new(), 2).unwrap();
    let mut with_snaps = md;
    for (i, id) in [11_i64, 12].iter().enumerate() {
        let snap = Snapshot {
            snapshot_id: *id,
            parent_snapshot_id: (i > 0).then_some(11),
            sequence_number: i as i64 + 1,
            timestamp_ms: 1000 + i as i64,
            manifest_list: Some(format!("file:///w/t/metadata/snap-{id}.avro")),
            manifests: None,
            summary: Summary::new(Operation::Append),
            schema_id: Some(0),
            first_row_id: None,
            added_rows: None,
        };
        with_snaps = with_snaps.add_snapshot(snap, 1000 + i as i64).unwrap();
    }
    with_snaps.with_metadata_location("file:///w/t/metadata/v3.metadata.json")
}

fn apply(md: &TableMetadata, updates: serde_json::Value) -> Result<TableMetadata> {
    let updates = MetadataUpdate::list_from_json_str(&updates.to_string())?;
    md.apply_updates(&updates, 5000)
}

fn schema_json(extra: bool) -> serde_json::Value {
    let mut fields = vec![
        json!({"id": 1, "name": "id", "required": true, "type": "long"}),
        json!({"id": 2, "name": "data", "required": false, "type": "string"}),
    ];
    if extra {
        fields.push(json!({"id": 3, "name": "extra", "required": false, "type": "int"}));
    }
    json!({"type": "struct", "schema-id": 99, "fields": fields})
}

#[test]
fn added_schema_gets_the_next_id_and_an_equal_one_is_reused() {
    let md = base();
    let next = apply(
        &md,
        json!([{"action": "add-schema", "schema": schema_json(true), "last-column-id": 3},
               {"action": "set-current-schema", "schema-id": -1}]),
    )
    .unwrap();
    assert_eq!(next.current_schema_id(), 1);
    assert_eq!(next.last_column_id(), 3);
    assert_eq!(next.schemas().len(), 2);
    // The previous file is logged once, the new version has no location yet.
    assert_eq!(next.metadata_log().len(), 1);
    assert!(next.metadata_location().is_none());
    assert_eq!(next.last_updated_ms(), 5000);

    let back = apply(
        &next,
        json!([{"action": "add-schema", "schema": schema_json(false)},
               {"action": "set-current-schema", "schema-id": -1}]),
    )
    .unwrap();
    assert_eq!(back.current_schema_id(), 0, "an equal schema is reused, as Java does");
    assert_eq!(back.schemas().len(), 2);
    assert_eq!(back.last_column_id(), 3, "last-column-id never goes down");
}

#[test]
fn last_added_without_an_add_is_an_error() {
    let err = apply(&base(), json!([{"action": "set-current-schema", "schema-id": -1}])).unwrap_err();
    assert!(err.to_string().contains("none was added"), "{err}");
    let err = apply(&base(), json!([{"action": "set-current-schema", "schema-id": 7}])).unwrap_err();
    assert!(err.to_string().contains("unknown schema id 7"), "{err}");
}

#[test]
fn added_spec_and_sort_order() {
    let md = base();
    let spec = json!({"spec-id": 0, "fields": [
        {"source-id": 1, "field-id": 1000, "name": "id_bucket", "transform": "bucket[4]"}]});
    let next = apply(
        &md,
        json!([{"action": "add-spec", "spec": spec}, {"action": "set-default-spec", "spec-id": -1},
               {"action": "add-sort-order", "sort-order": {"order-id": 1, "fields": [
                   {"transform": "identity", "source-id": 2, "direction": "asc", "null-order": "nulls-first"}]}},
               {"action": "set-default-sort-order", "sort-order-id": -1}]),
    )
    .unwrap();
    assert_eq!(next.default_spec_id(), 1);
    assert_eq!(next.last_partition_id(), 1000);
    assert_eq!(next.default_sort_order_id(), 1);
    // The unpartitioned spec again reuses spec 0.
    let back = apply(
        &next,
        json!([{"action": "add-spec", "spec": {"spec-id": 5, "fields": []}},
               {"action": "set-default-spec", "spec-id": -1}]),
    )
    .unwrap();
    assert_eq!(back.default_spec_id(), 0);
    assert_eq!(back.partition_specs().len(), 2);
    let err = apply(
        &md,
        json!([{"action": "add-spec", "spec": {"spec-id": 0, "fields": [
            {"source-id": 9, "field-id": 1000, "name": "x", "transform": "identity"}]}}]),
    )
    .unwrap_err();
    assert!(err.to_string().contains('9'), "{err}");
}

#[test]
fn a_schema_without_the_sort_orders_column_is_refused_as_java_refuses_it() {
    // Java's TableMetadata.Builder: "Cannot find source column for sort field" when a column
    // of the default sort order is dropped (the soak, seed 316909072); icefloe committed it,
    // leaving a sort order over a missing column.
    let sorted = apply(
        &base(),
        json!([{"action": "add-sort-order", "sort-order": {"order-id": 1, "fields": [
                   {"transform": "identity", "source-id": 2, "direction": "asc", "null-order": "nulls-last"}]}},
               {"action": "set-default-sort-order", "sort-order-id": -1}]),
    )
    .unwrap();
    let without_data = json!({"type": "struct", "schema-id": 1, "fields": [
        {"id": 1, "name": "id", "required": true, "type": "long"}]});
    let err = apply(
        &sorted,
        json!([{"action": "add-schema", "schema": without_data, "last-column-id": 2},
               {"action": "set-current-schema", "schema-id": -1}]),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("sort field") && err.to_string().contains("source column id 2"),
        "{err}"
    );
    // Unsorted again first, then the column can go.
    let unsorted = apply(&sorted, json!([{"action": "set-default-sort-order", "sort-order-id": 0}])).unwrap();
    apply(
        &unsorted,
        json!([{"action": "add-schema", "schema": without_data, "last-column-id": 2},
               {"action": "set-current-schema", "schema-id": -1}]),
    )
    .unwrap();
}

#[test]
fn moving_main_moves_the_current_snapshot_and_logs_it() {
    let md = base();
    let next = apply(
        &md,
        json!([{"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 11, "type": "branch"},
               {"action": "set-snapshot-ref", "ref-name": "audit", "snapshot-id": 12, "type": "branch",
                "min-snapshots-to-keep": 3},
               {"action": "set-snapshot-ref", "ref-name": "v1", "snapshot-id": 11, "type": "tag",
                "max-ref-age-ms": 1000}]),
    )
    .unwrap();
    assert_eq!(next.current_snapshot_id(), Some(11));
    assert_eq!(next.snapshot_log().last().map(|e| (e.snapshot_id, e.timestamp_ms)), Some((11, 5000)));
    assert!(next.refs()["audit"].is_branch());
    assert!(!next.refs()["v1"].is_branch());

    let removed = apply(&next, json!([{"action": "remove-snapshot-ref", "ref-name": "v1"}])).unwrap();
    assert!(!removed.refs().contains_key("v1"));
    assert_eq!(removed.current_snapshot_id(), Some(11));

    let err = apply(
        &md,
        json!([{"action": "set-snapshot-ref", "ref-name": "b", "snapshot-id": 77, "type": "branch"}]),
    )
    .unwrap_err();
    assert!(err.to_string().contains("unknown snapshot 77"), "{err}");
    let err = apply(
        &md,
        json!([{"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 11, "type": "tag"}]),
    )
    .unwrap_err();
    assert!(err.to_string().contains("must be a branch"), "{err}");
}

#[test]
fn properties_and_format_version_in_one_version() {
    let md = base();
    let next = apply(
        &md,
        json!([{"action": "set-properties", "updates": {"a": "1", "b": "2"}},
               {"action": "remove-properties", "removals": ["b"]},
               {"action": "upgrade-format-version", "format-version": 3}]),
    )
    .unwrap();
    assert_eq!(next.property("a"), Some("1"));
    assert_eq!(next.property("b"), None);
    assert_eq!(next.format_version(), 3);
    assert_eq!(next.metadata_log().len(), 1, "one new version, one log entry");
}

#[test]
fn malformed_updates_are_errors() {
    for bad in [
        json!({"action": "add-schema"}),
        json!([{"action": "explode"}]),
        json!([{"no": "action"}]),
        json!([{"action": "set-properties", "updates": {"a": 1}}]),
    ] {
        assert!(MetadataUpdate::list_from_json_str(&bad.to_string()).is_err(), "{bad}");
    }
}

#[test]
fn spec_reuse_follows_java_compatible_with_and_v1_needs_sequential_ids() {
    let md = base();
    let bucket = |id: i32| {
        json!({"spec-id": 0, "fields": [
            {"source-id": 1, "field-id": id, "name": "id_bucket", "transform": "bucket[4]"}]})
    };
    let next = apply(&md, json!([{"action": "add-spec", "spec": bucket(1000)}])).unwrap();
    assert_eq!(next.last_partition_id(), 1000);
    // Same source, transform and name: Java's compatibleWith reuses spec 1 whatever the field
    // ids, and last-partition-id does not move.
    let again = apply(
        &next,
        json!([{"action": "add-spec", "spec": bucket(1005)}, {"action": "set-default-spec", "spec-id": -1}]),
    )
    .unwrap();
    assert_eq!(again.default_spec_id(), 1);
    assert_eq!(again.partition_specs().len(), 2);
    assert_eq!(again.last_partition_id(), 1000);

    let v1 = TableMetadata::new_table(
        md.current_schema().as_ref().clone(),
        None,
        None,
        "file:///w/v1",
        BTreeMap::new(),
        1,
    )
    .unwrap();
    let err = apply(&v1, json!([{"action": "add-spec", "spec": bucket(1001)}])).unwrap_err();
    assert!(err.to_string().contains("sequential"), "{err}");
    let ok = apply(&v1, json!([{"action": "add-spec", "spec": bucket(1000)}])).unwrap();
    assert_eq!(ok.partition_specs().len(), 2);
}

#[test]
fn statistics_are_set_per_snapshot_replaced_and_removed() {
    let md = base();
    let stats = |sid: i64, path: &str| {
        json!({"snapshot-id": sid, "statistics-path": path, "file-size-in-bytes": 10,
        "file-footer-size-in-bytes": 5, "blob-metadata": []})
    };
    let next = apply(
        &md,
        json!([{"action": "set-statistics", "snapshot-id": 11, "statistics": stats(11, "/a.stats")},
               {"action": "set-statistics", "snapshot-id": 12, "statistics": stats(12, "/b.stats")},
               {"action": "set-statistics", "snapshot-id": 11, "statistics": stats(11, "/c.stats")}]),
    )
    .unwrap();
    let paths: Vec<&str> = next.statistics().iter().filter_map(|e| e["statistics-path"].as_str()).collect();
    assert_eq!(paths, vec!["/b.stats", "/c.stats"]); // 11's first file replaced
    let next = apply(&next, json!([{"action": "remove-statistics", "snapshot-id": 12}])).unwrap();
    assert_eq!(next.statistics().len(), 1);
    let next = apply(
        &next,
        json!([{"action": "set-partition-statistics", "partition-statistics":
                 {"snapshot-id": 12, "statistics-path": "/p.parquet", "file-size-in-bytes": 3}},
               {"action": "remove-partition-statistics", "snapshot-id": 11}]),
    )
    .unwrap();
    assert_eq!(next.partition_statistics().len(), 1);
    // A statistics file of no snapshot of the table, or one without its path, is refused.
    let err =
        apply(&md, json!([{"action": "set-statistics", "statistics": stats(99, "/x.stats")}])).unwrap_err();
    assert!(err.to_string().contains("no snapshot 99"), "{err}");
    let err =
        apply(&md, json!([{"action": "set-statistics", "statistics": {"snapshot-id": 11}}])).unwrap_err();
    assert!(err.to_string().contains("statistics-path"), "{err}");
}
