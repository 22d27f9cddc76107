//! The versioned JSON wire form of table metadata: reads v1, v2 and (tolerantly) v3,
//! writes the v1 or v2 shape in Java's key order. The domain struct lives in
//! `table_metadata.rs`; this file only translates, and gives it its `from_json_str`,
//! `from_json_value` and `to_json_string`.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};

use super::partition::{PartitionSpec, UNPARTITIONED_LAST_ASSIGNED_ID};
use super::schema::Schema;
use super::snapshot::{MetadataLogEntry, Snapshot, SnapshotLogEntry, SnapshotRef};
use super::sort_order::SortOrder;
use super::table_metadata::TableMetadata;
use crate::error::{invalid_data, not_supported, Result};

impl TableMetadata {
    /// Parses a `*.metadata.json` document (v1, v2, or v3 read tolerantly).
    /// `metadata_location` is the file it came from, kept for the next commit's log.
    pub fn from_json_str(s: &str, metadata_location: Option<String>) -> Result<Self> {
        from_json_str(s, metadata_location)
    }

    /// Parses an already-decoded JSON document.
    pub fn from_json_value(v: &Value, metadata_location: Option<String>) -> Result<Self> {
        from_json_value(v, metadata_location)
    }

    /// Serializes in Java's key order: the v2 shape for format 2, the v1 shape (with
    /// `schema` and `partition-spec`) for format 1.
    pub fn to_json_string(&self) -> Result<String> {
        to_json_string(self)
    }
}

/// The wire form in Java's key order (`TableMetadataParser.toJson`).
#[derive(Serialize)]
struct TableMetadataWire<'a> {
    #[serde(rename = "format-version")]
    format_version: i32,
    #[serde(rename = "table-uuid", skip_serializing_if = "Option::is_none")]
    table_uuid: Option<&'a str>,
    location: &'a str,
    #[serde(rename = "last-sequence-number", skip_serializing_if = "Option::is_none")]
    last_sequence_number: Option<i64>,
    #[serde(rename = "last-updated-ms")]
    last_updated_ms: i64,
    #[serde(rename = "last-column-id")]
    last_column_id: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    schema: Option<Value>,
    #[serde(rename = "current-schema-id")]
    current_schema_id: i32,
    schemas: Vec<Value>,
    #[serde(rename = "partition-spec", skip_serializing_if = "Option::is_none")]
    partition_spec: Option<Value>,
    #[serde(rename = "default-spec-id")]
    default_spec_id: i32,
    #[serde(rename = "partition-specs")]
    partition_specs: Vec<Value>,
    #[serde(rename = "last-partition-id")]
    last_partition_id: i32,
    #[serde(rename = "default-sort-order-id")]
    default_sort_order_id: i32,
    #[serde(rename = "sort-orders")]
    sort_orders: &'a [SortOrder],
    properties: &'a BTreeMap<String, String>,
    #[serde(rename = "current-snapshot-id")]
    current_snapshot_id: Value,
    #[serde(rename = "next-row-id", skip_serializing_if = "Option::is_none")]
    next_row_id: Option<i64>,
    refs: &'a BTreeMap<String, SnapshotRef>,
    snapshots: &'a [Snapshot],
    statistics: &'a [Value],
    #[serde(rename = "partition-statistics")]
    partition_statistics: &'a [Value],
    #[serde(rename = "snapshot-log")]
    snapshot_log: &'a [SnapshotLogEntry],
    #[serde(rename = "metadata-log")]
    metadata_log: &'a [MetadataLogEntry],
    #[serde(rename = "encryption-keys", skip_serializing_if = "<[Value]>::is_empty")]
    encryption_keys: &'a [Value],
}

pub(crate) fn to_json_string(m: &TableMetadata) -> Result<String> {
    let v1 = m.format_version == 1;
    let current_schema = m.current_schema();
    let default_spec = m.default_spec();
    let wire = TableMetadataWire {
        format_version: m.format_version,
        table_uuid: m.table_uuid.as_deref(),
        location: &m.location,
        last_sequence_number: (!v1).then_some(m.last_sequence_number),
        last_updated_ms: m.last_updated_ms,
        last_column_id: m.last_column_id,
        schema: if v1 { Some(current_schema.to_json()) } else { None },
        current_schema_id: m.current_schema_id,
        schemas: m.schemas.iter().map(|s| s.to_json()).collect(),
        partition_spec: if v1 { Some(default_spec.fields_to_json()) } else { None },
        default_spec_id: m.default_spec_id,
        partition_specs: m.partition_specs.iter().map(|s| s.to_json()).collect(),
        last_partition_id: m.last_partition_id,
        default_sort_order_id: m.default_sort_order_id,
        sort_orders: &m.sort_orders,
        properties: &m.properties,
        current_snapshot_id: match (m.current_snapshot_id, m.format_version >= 3) {
            (Some(id), _) => Value::from(id),
            (None, false) => Value::from(-1),
            (None, true) => Value::Null,
        },
        next_row_id: if m.format_version >= 3 { m.next_row_id.or(Some(0)) } else { None },
        refs: &m.refs,
        snapshots: &m.snapshots,
        statistics: &m.statistics,
        partition_statistics: &m.partition_statistics,
        snapshot_log: &m.snapshot_log,
        metadata_log: &m.metadata_log,
        encryption_keys: &m.encryption_keys,
    };
    serde_json::to_string(&wire).map_err(|e| invalid_data("cannot serialize table metadata").with_source(e))
}

fn get<'a>(o: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    o.get(key).filter(|v| !v.is_null())
}

fn req_i64(o: &Map<String, Value>, key: &str) -> Result<i64> {
    match get(o, key) {
        Some(v) => v
            .as_i64()
            .ok_or_else(|| invalid_data(format!("table metadata '{key}' must be an integer, found {v}"))),
        None => Err(invalid_data(format!("table metadata has no '{key}'"))),
    }
}

fn opt_i64(o: &Map<String, Value>, key: &str) -> Result<Option<i64>> {
    get(o, key)
        .map(|v| {
            v.as_i64()
                .ok_or_else(|| invalid_data(format!("table metadata '{key}' must be an integer, found {v}")))
        })
        .transpose()
}

fn opt_i32(o: &Map<String, Value>, key: &str) -> Result<Option<i32>> {
    opt_i64(o, key)?
        .map(|v| {
            i32::try_from(v)
                .map_err(|_| invalid_data(format!("table metadata '{key}' out of int range: {v}")))
        })
        .transpose()
}

fn req_str<'a>(o: &'a Map<String, Value>, key: &str) -> Result<&'a str> {
    match get(o, key) {
        Some(v) => v
            .as_str()
            .ok_or_else(|| invalid_data(format!("table metadata '{key}' must be a string, found {v}"))),
        None => Err(invalid_data(format!("table metadata has no '{key}'"))),
    }
}

fn array<'a>(o: &'a Map<String, Value>, key: &str) -> Result<Option<&'a Vec<Value>>> {
    get(o, key)
        .map(|v| {
            v.as_array()
                .ok_or_else(|| invalid_data(format!("table metadata '{key}' must be an array, found {v}")))
        })
        .transpose()
}

fn list<T: serde::de::DeserializeOwned>(o: &Map<String, Value>, key: &str) -> Result<Vec<T>> {
    match array(o, key)? {
        None => Ok(Vec::new()),
        Some(a) => a
            .iter()
            .enumerate()
            .map(|(i, v)| {
                T::deserialize(v)
                    .map_err(|e| invalid_data(format!("invalid entry {i} of table metadata '{key}': {e}")))
            })
            .collect(),
    }
}

pub(crate) fn from_json_str(s: &str, metadata_location: Option<String>) -> Result<TableMetadata> {
    let v: Value = serde_json::from_str(s).map_err(|e| {
        let mut err = invalid_data("table metadata is not valid JSON").with_source(e);
        if let Some(loc) = &metadata_location {
            err = err.with_context("file", loc.clone());
        }
        err
    })?;
    from_json_value(&v, metadata_location.clone()).map_err(|e| match metadata_location {
        Some(loc) => e.with_context("file", loc),
        None => e,
    })
}

pub(crate) fn from_json_value(v: &Value, metadata_location: Option<String>) -> Result<TableMetadata> {
    let o = v.as_object().ok_or_else(|| invalid_data("table metadata must be a JSON object"))?;
    let format_version = i32::try_from(req_i64(o, "format-version")?)
        .map_err(|_| invalid_data("table metadata 'format-version' out of range"))?;
    if !(1..=3).contains(&format_version) {
        return Err(not_supported(format!(
            "expected table format version 1, 2 or 3, found {format_version}"
        )));
    }
    let v2plus = format_version >= 2;
    let table_uuid = match get(o, "table-uuid") {
        Some(u) => Some(
            u.as_str()
                .ok_or_else(|| {
                    invalid_data(format!("table metadata 'table-uuid' must be a string, found {u}"))
                })?
                .to_string(),
        ),
        None if v2plus => return Err(invalid_data("format v2+ table metadata has no 'table-uuid'")),
        None => None,
    };
    let location = req_str(o, "location")?.to_string();
    let last_sequence_number = match opt_i64(o, "last-sequence-number")? {
        Some(n) => n,
        None if v2plus => {
            return Err(invalid_data("format v2+ table metadata has no 'last-sequence-number'"))
        }
        None => 0,
    };
    let last_updated_ms = req_i64(o, "last-updated-ms")?;
    let last_column_id = opt_i32(o, "last-column-id")?
        .ok_or_else(|| invalid_data("table metadata has no integer 'last-column-id'"))?;

    // Schemas: `schemas` + `current-schema-id`, else the v1 `schema`.
    let (schemas, current_schema_id) = match array(o, "schemas")? {
        Some(arr) => {
            let schemas =
                arr.iter().map(|s| Schema::from_json(s).map(Arc::new)).collect::<Result<Vec<_>>>()?;
            let current = match opt_i32(o, "current-schema-id")? {
                Some(id) => id,
                None if v2plus => return Err(invalid_data("table metadata has no 'current-schema-id'")),
                None => schemas.first().map(|s| s.schema_id()).unwrap_or(0),
            };
            (schemas, current)
        }
        None if v2plus => return Err(invalid_data("format v2+ table metadata has no 'schemas'")),
        None => {
            let s = get(o, "schema")
                .ok_or_else(|| invalid_data("table metadata has neither 'schemas' nor 'schema'"))?;
            let s = Schema::from_json(s)?;
            let id = s.schema_id();
            (vec![Arc::new(s)], id)
        }
    };
    if !schemas.iter().any(|s| s.schema_id() == current_schema_id) {
        return Err(invalid_data(format!(
            "current-schema-id {current_schema_id} is not among the table's schemas"
        )));
    }

    // Specs: `partition-specs` + `default-spec-id`, else the v1 `partition-spec` (spec 0).
    let (partition_specs, default_spec_id) = match array(o, "partition-specs")? {
        Some(arr) => {
            let specs = arr.iter().map(PartitionSpec::from_json).collect::<Result<Vec<_>>>()?;
            let default = match opt_i32(o, "default-spec-id")? {
                Some(id) => id,
                None if v2plus => return Err(invalid_data("table metadata has no 'default-spec-id'")),
                None => specs.first().map(|s| s.spec_id).unwrap_or(0),
            };
            (specs, default)
        }
        None if v2plus => return Err(invalid_data("format v2+ table metadata has no 'partition-specs'")),
        None => {
            let fields = get(o, "partition-spec").ok_or_else(|| {
                invalid_data("table metadata has neither 'partition-specs' nor 'partition-spec'")
            })?;
            (vec![PartitionSpec::from_fields_json(0, fields)?], 0)
        }
    };
    if !partition_specs.iter().any(|s| s.spec_id == default_spec_id) {
        return Err(invalid_data(format!(
            "default-spec-id {default_spec_id} is not among the table's partition specs"
        )));
    }
    let last_partition_id = match opt_i32(o, "last-partition-id")? {
        Some(id) => id,
        None if v2plus => return Err(invalid_data("format v2+ table metadata has no 'last-partition-id'")),
        None => partition_specs
            .iter()
            .map(|s| s.last_assigned_field_id())
            .max()
            .unwrap_or(UNPARTITIONED_LAST_ASSIGNED_ID),
    };

    let (sort_orders, default_sort_order_id) = match array(o, "sort-orders")? {
        Some(arr) => {
            let orders = arr.iter().map(SortOrder::from_json).collect::<Result<Vec<_>>>()?;
            let default = opt_i32(o, "default-sort-order-id")?.unwrap_or(SortOrder::UNSORTED_ORDER_ID);
            (orders, default)
        }
        None if v2plus => return Err(invalid_data("format v2+ table metadata has no 'sort-orders'")),
        None => (vec![SortOrder::unsorted()], SortOrder::UNSORTED_ORDER_ID),
    };
    if !sort_orders.iter().any(|s| s.order_id == default_sort_order_id) {
        return Err(invalid_data(format!(
            "default-sort-order-id {default_sort_order_id} is not among the table's sort orders"
        )));
    }

    let properties = match get(o, "properties") {
        None => BTreeMap::new(),
        Some(Value::Object(p)) => p
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                other => Err(invalid_data(format!("table property '{k}' must be a string, found {other}"))),
            })
            .collect::<Result<_>>()?,
        Some(other) => {
            return Err(invalid_data(format!("table metadata 'properties' must be an object, found {other}")))
        }
    };

    // -1, null and missing all mean "no current snapshot".
    let current_snapshot_id = opt_i64(o, "current-snapshot-id")?.filter(|id| *id != -1);
    let snapshots: Vec<Snapshot> = list(o, "snapshots")?;
    if let Some(id) = current_snapshot_id {
        if !snapshots.iter().any(|s| s.snapshot_id == id) {
            return Err(invalid_data(format!("current-snapshot-id {id} is not among the table's snapshots")));
        }
    }
    let refs = match get(o, "refs") {
        Some(r) => serde_json::from_value::<BTreeMap<String, SnapshotRef>>(r.clone())
            .map_err(|e| invalid_data(format!("invalid table metadata 'refs': {e}")))?,
        None => current_snapshot_id
            .map(|id| BTreeMap::from([(SnapshotRef::MAIN_BRANCH.to_string(), SnapshotRef::branch(id))]))
            .unwrap_or_default(),
    };
    let statistics = array(o, "statistics")?.cloned().unwrap_or_default();
    let partition_statistics = array(o, "partition-statistics")?.cloned().unwrap_or_default();
    let snapshot_log: Vec<SnapshotLogEntry> = list(o, "snapshot-log")?;
    let metadata_log: Vec<MetadataLogEntry> = list(o, "metadata-log")?;
    let next_row_id = opt_i64(o, "next-row-id")?;
    let encryption_keys = array(o, "encryption-keys")?.cloned().unwrap_or_default();

    Ok(TableMetadata {
        format_version,
        table_uuid,
        location,
        last_sequence_number,
        last_updated_ms,
        last_column_id,
        schemas,
        current_schema_id,
        partition_specs,
        default_spec_id,
        last_partition_id,
        sort_orders,
        default_sort_order_id,
        properties,
        current_snapshot_id,
        snapshots,
        refs,
        statistics,
        partition_statistics,
        snapshot_log,
        metadata_log,
        next_row_id,
        encryption_keys,
        metadata_location,
    })
}
