use serde_json::json;

use super::*;
use crate::spec::snapshot::{Operation, Summary};
use crate::spec::sort_order::SortField;
use crate::spec::transform::Transform;
use crate::spec::types::{NestedField, PrimitiveType};
use crate::spec::PartitionField;

fn schema() -> Schema {
    Schema::new(
        7,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long.into()),
            NestedField::optional(2, "ts", PrimitiveType::Timestamptz.into()),
        ],
        vec![],
    )
    .unwrap()
}

fn snap(id: i64, parent: Option<i64>, seq: i64) -> Snapshot {
    Snapshot {
        snapshot_id: id,
        parent_snapshot_id: parent,
        sequence_number: seq,
        timestamp_ms: 1000 + id,
        manifest_list: Some(format!("s3://b/t/metadata/snap-{id}.avro")),
        manifests: None,
        summary: Summary::new(Operation::Append),
        schema_id: Some(0),
        first_row_id: None,
        added_rows: None,
    }
}

#[test]
fn new_table_defaults() {
    let spec = PartitionSpec::new(5, vec![PartitionField::new(2, 0, "ts_day", Transform::Day)]);
    let order = SortOrder::new(3, vec![SortField::asc(1)]);
    let m =
        TableMetadata::new_table(schema(), Some(spec), Some(order), "s3://b/t/", BTreeMap::new(), 2).unwrap();
    assert_eq!(m.location(), "s3://b/t");
    assert_eq!(m.current_schema().schema_id(), 0);
    assert_eq!(m.last_column_id(), 2);
    assert_eq!(m.default_spec().fields[0].field_id, 1000);
    assert_eq!(m.default_spec().spec_id, 0);
    assert_eq!(m.last_partition_id(), 1000);
    assert_eq!(m.default_sort_order().order_id, 1);
    assert_eq!(m.sort_orders().len(), 2);
    assert_eq!(m.property(PROPERTY_PARQUET_COMPRESSION), Some("zstd"));
    let u = m.table_uuid().unwrap();
    assert_eq!(u, u.to_lowercase());
    assert!(m.current_snapshot().is_none());

    let m = TableMetadata::new_table(schema(), None, None, "/t", BTreeMap::new(), 1).unwrap();
    assert_eq!(m.last_partition_id(), 999);
    assert!(m.default_spec().is_unpartitioned());
    assert_eq!(m.default_sort_order_id(), 0);

    let bad = PartitionSpec::new(0, vec![PartitionField::new(9, 1000, "x", Transform::Identity)]);
    let e = TableMetadata::new_table(schema(), Some(bad), None, "/t", BTreeMap::new(), 2).unwrap_err();
    assert!(e.to_string().contains("source column id 9"), "{e}");
    let bad = PartitionSpec::new(0, vec![PartitionField::new(1, 1000, "x", Transform::Day)]);
    assert!(TableMetadata::new_table(schema(), Some(bad), None, "/t", BTreeMap::new(), 2).is_err());
    let bad = SortOrder::new(1, vec![SortField::asc(42)]);
    assert!(TableMetadata::new_table(schema(), None, Some(bad), "/t", BTreeMap::new(), 2).is_err());
    assert!(TableMetadata::new_table(schema(), None, None, "/t", BTreeMap::new(), 4).is_err());
}

#[test]
fn add_snapshot_and_logs() {
    let props = BTreeMap::from([(PROPERTY_PREVIOUS_VERSIONS_MAX.to_string(), "2".to_string())]);
    let mut m = TableMetadata::new_table(schema(), None, None, "/t", props, 2).unwrap();
    m = m.with_metadata_location("/t/metadata/v1.metadata.json");
    let mut parent = None;
    for (i, id) in [11i64, 12, 13].into_iter().enumerate() {
        let seq = m.next_sequence_number();
        assert_eq!(seq, i as i64 + 1);
        let prev_updated = m.last_updated_ms();
        let next = m.add_snapshot(snap(id, parent, seq), 5000 + i as i64).unwrap();
        assert_eq!(next.metadata_log().last().unwrap().timestamp_ms, prev_updated);
        assert!(next.metadata_location().is_none());
        m = next.with_metadata_location(format!("/t/metadata/v{}.metadata.json", i + 2));
        parent = Some(id);
    }
    assert_eq!(m.current_snapshot_id(), Some(13));
    assert_eq!(m.refs()["main"].snapshot_id, 13);
    assert_eq!(m.last_sequence_number(), 3);
    assert_eq!(m.last_updated_ms(), 5002);
    assert_eq!(m.snapshot_log().iter().map(|e| e.snapshot_id).collect::<Vec<_>>(), vec![11, 12, 13]);
    assert_eq!(
        m.metadata_log().iter().map(|e| e.metadata_file.as_str()).collect::<Vec<_>>(),
        vec!["/t/metadata/v2.metadata.json", "/t/metadata/v3.metadata.json"]
    );
    assert!(m.add_snapshot(snap(13, None, 4), 1).is_err());
    assert!(m.add_snapshot(snap(14, None, 3), 1).is_err());
    let id = m.new_snapshot_id();
    assert!(id > 0 && m.snapshot_by_id(id).is_none());

    // round trip through JSON
    let text = m.to_json_string().unwrap();
    let back = TableMetadata::from_json_str(&text, m.metadata_location.clone()).unwrap();
    assert_eq!(back, m);
}

#[test]
fn properties_and_location() {
    let m = TableMetadata::new_table(schema(), None, None, "/t", BTreeMap::new(), 2).unwrap();
    let m2 = m
        .with_properties(
            [("a".to_string(), "1".to_string())],
            ["write.parquet.compression-codec".to_string()],
        )
        .unwrap();
    assert_eq!(m2.property("a"), Some("1"));
    assert_eq!(m2.property(PROPERTY_PARQUET_COMPRESSION), None);
    let v3 = m.with_properties([("format-version".to_string(), "3".to_string())], []).unwrap();
    assert_eq!((v3.format_version(), v3.next_row_id(), v3.property("format-version")), (3, Some(0), None));
    assert!(v3.with_properties([("format-version".to_string(), "2".to_string())], []).is_err());
    assert!(m.with_properties([("format-version".to_string(), "4".to_string())], []).is_err());
    assert_eq!(m.with_location("/u//").unwrap().location(), "/u");
}

#[test]
fn v2_without_snapshots_writes_minus_one() {
    let m = TableMetadata::new_table(schema(), None, None, "/t", BTreeMap::new(), 2).unwrap();
    let v: Value = serde_json::from_str(&m.to_json_string().unwrap()).unwrap();
    assert_eq!(v["current-snapshot-id"], json!(-1));
    assert_eq!(v["refs"], json!({}));
    assert_eq!(v["sort-orders"], json!([{"order-id": 0, "fields": []}]));
    assert_eq!(v["last-sequence-number"], json!(0));
    let text = m.to_json_string().unwrap();
    assert!(text.starts_with(r#"{"format-version":2,"table-uuid":"#));
    assert_eq!(TableMetadata::from_json_str(&text, None).unwrap(), m);
}

#[test]
fn v1_legacy_and_v3_tolerance() {
    let v1 = json!({
        "format-version": 1, "location": "/t", "last-updated-ms": 5, "last-column-id": 2,
        "schema": {"type": "struct", "fields": [
            {"id": 1, "name": "id", "required": true, "type": "long"},
            {"id": 2, "name": "ts", "required": false, "type": "timestamptz"}]},
        "partition-spec": [{"name": "ts_day", "transform": "day", "source-id": 2}],
        "properties": {"k": "v"},
        "current-snapshot-id": 3,
        "snapshots": [{"snapshot-id": 3, "timestamp-ms": 4, "manifests": ["/t/m1.avro"]}]
    });
    let m = TableMetadata::from_json_value(&v1, None).unwrap();
    assert_eq!(m.format_version(), 1);
    assert!(m.table_uuid().is_none());
    assert_eq!(m.default_spec().fields[0].field_id, 1000);
    assert_eq!(m.last_partition_id(), 1000);
    assert_eq!(m.last_sequence_number(), 0);
    assert_eq!(m.current_snapshot().unwrap().sequence_number, 0);
    assert_eq!(m.refs()["main"].snapshot_id, 3);
    assert_eq!(m.default_sort_order(), &SortOrder::unsorted());
    let out: Value = serde_json::from_str(&m.to_json_string().unwrap()).unwrap();
    assert_eq!(out["format-version"], json!(1));
    assert!(out.get("last-sequence-number").is_none());
    assert_eq!(out["partition-spec"][0]["field-id"], json!(1000));
    assert_eq!(out["schema"]["schema-id"], json!(0));
    assert_eq!(TableMetadata::from_json_value(&out, None).unwrap(), m);
    assert_eq!(m.next_sequence_number(), 0);

    let v3 = json!({
        "format-version": 3, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1", "location": "/t",
        "last-sequence-number": 0, "last-updated-ms": 5, "last-column-id": 1, "current-schema-id": 0,
        "schemas": [{"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "t", "required": false, "type": "timestamp_ns"}]}],
        "default-spec-id": 0, "partition-specs": [{"spec-id": 0, "fields": []}], "last-partition-id": 999,
        "default-sort-order-id": 0, "sort-orders": [{"order-id": 0, "fields": []}],
        "current-snapshot-id": null, "next-row-id": 0, "encryption-keys": [], "some-future-key": {"x": 1}
    });
    let m = TableMetadata::from_json_value(&v3, None).unwrap();
    assert_eq!(m.format_version(), 3);
    assert_eq!(m.next_row_id(), Some(0));
    assert!(m.current_snapshot_id().is_none());
    let out: Value = serde_json::from_str(&m.to_json_string().unwrap()).unwrap();
    assert!(out.get("encryption-keys").is_none(), "an empty list is not written, as Java");

    // Encryption keys are kept through a commit, never dropped.
    let mut keyed = v3.clone();
    let keys = json!([{"key-id": "k1", "encrypted-key-metadata": "AAEC", "encrypted-by-id": "m", "properties": {"a": "b"}}]);
    keyed["encryption-keys"] = keys.clone();
    let m = TableMetadata::from_json_value(&keyed, None).unwrap();
    let out: Value = serde_json::from_str(&m.next_version(7).to_json_string().unwrap()).unwrap();
    assert_eq!(out["encryption-keys"], keys);
}

#[test]
fn parse_errors_name_the_problem() {
    let e = TableMetadata::from_json_str("{", Some("/t/v1.metadata.json".into())).unwrap_err();
    assert!(e.to_string().contains("/t/v1.metadata.json"), "{e}");
    let e = TableMetadata::from_json_str(r#"{"format-version": 2, "location": "/t"}"#, None).unwrap_err();
    assert!(e.to_string().contains("table-uuid"), "{e}");
    let e = TableMetadata::from_json_str(r#"{"format-version": 9}"#, None).unwrap_err();
    assert!(e.to_string().contains("format version"), "{e}");
}
