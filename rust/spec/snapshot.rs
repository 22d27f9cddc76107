//! Snapshots, their summaries, refs (branches and tags) and the snapshot/metadata logs,
//! with their JSON forms (Java's key order when writing).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::error::{invalid_data, Error, Result};

/// The kind of change a snapshot made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Operation {
    /// Only data files were added.
    #[default]
    Append,
    /// Files were replaced without changing the table's data (compaction, manifest rewrite).
    Replace,
    /// Data and delete files were added and removed.
    Overwrite,
    /// Data files were removed or delete files added.
    Delete,
}

impl Operation {
    pub fn as_str(&self) -> &'static str {
        match self {
            Operation::Append => "append",
            Operation::Replace => "replace",
            Operation::Overwrite => "overwrite",
            Operation::Delete => "delete",
        }
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Operation {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "append" => Ok(Operation::Append),
            "replace" => Ok(Operation::Replace),
            "overwrite" => Ok(Operation::Overwrite),
            "delete" => Ok(Operation::Delete),
            _ => Err(invalid_data(format!(
                "expected a snapshot operation append, replace, overwrite or delete, found '{s}'"
            ))),
        }
    }
}

/// A snapshot summary: the operation plus string properties (counts, engine info).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Summary {
    pub operation: Operation,
    pub other: BTreeMap<String, String>,
}

impl Summary {
    pub fn new(operation: Operation) -> Self {
        Self { operation, other: BTreeMap::new() }
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.other.get(key).map(String::as_str)
    }

    /// `{"operation": ..., <other keys>}`.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("operation".into(), Value::String(self.operation.to_string()));
        for (k, v) in &self.other {
            m.insert(k.clone(), Value::String(v.clone()));
        }
        Value::Object(m)
    }

    pub fn from_json(v: &Value) -> Result<Self> {
        let o = v
            .as_object()
            .ok_or_else(|| invalid_data(format!("expected a snapshot summary object, found {v}")))?;
        let op = o
            .get("operation")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid_data("snapshot summary has no string 'operation'"))?;
        let mut other = BTreeMap::new();
        for (k, val) in o {
            if k == "operation" {
                continue;
            }
            let s = match val {
                Value::String(s) => s.clone(),
                Value::Null => continue,
                // Tolerate non-string values from other writers.
                other => other.to_string(),
            };
            other.insert(k.clone(), s);
        }
        Ok(Self { operation: op.parse()?, other })
    }
}

impl Serialize for Summary {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Summary {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Summary::from_json(&v).map_err(serde::de::Error::custom)
    }
}

/// A table snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub snapshot_id: i64,
    pub parent_snapshot_id: Option<i64>,
    /// 0 for v1 tables (and snapshots written without one).
    pub sequence_number: i64,
    pub timestamp_ms: i64,
    pub manifest_list: Option<String>,
    /// Legacy v1: manifest paths listed inline instead of a manifest list.
    pub manifests: Option<Vec<String>>,
    pub summary: Summary,
    pub schema_id: Option<i32>,
    /// v3 row lineage: the table's `next-row-id` when the snapshot was committed, and the
    /// row ids its manifest list assigned (`next-row-id` moves on by that many).
    pub first_row_id: Option<i64>,
    pub added_rows: Option<i64>,
}

/// The JSON wire form of a snapshot, in Java's key order.
#[derive(Serialize, Deserialize)]
struct SnapshotWire {
    #[serde(rename = "sequence-number", default, skip_serializing_if = "is_zero")]
    sequence_number: i64,
    #[serde(rename = "snapshot-id")]
    snapshot_id: i64,
    #[serde(rename = "parent-snapshot-id", default, skip_serializing_if = "Option::is_none")]
    parent_snapshot_id: Option<i64>,
    #[serde(rename = "timestamp-ms")]
    timestamp_ms: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    summary: Option<Summary>,
    #[serde(rename = "manifest-list", default, skip_serializing_if = "Option::is_none")]
    manifest_list: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    manifests: Option<Vec<String>>,
    #[serde(rename = "schema-id", default, skip_serializing_if = "Option::is_none")]
    schema_id: Option<i32>,
    #[serde(rename = "first-row-id", default, skip_serializing_if = "Option::is_none")]
    first_row_id: Option<i64>,
    #[serde(rename = "added-rows", default, skip_serializing_if = "Option::is_none")]
    added_rows: Option<i64>,
}

fn is_zero(v: &i64) -> bool {
    *v == 0
}

impl Serialize for Snapshot {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        SnapshotWire {
            sequence_number: self.sequence_number,
            snapshot_id: self.snapshot_id,
            parent_snapshot_id: self.parent_snapshot_id,
            timestamp_ms: self.timestamp_ms,
            summary: Some(self.summary.clone()),
            manifest_list: self.manifest_list.clone(),
            manifests: if self.manifest_list.is_some() { None } else { self.manifests.clone() },
            schema_id: self.schema_id,
            first_row_id: self.first_row_id,
            added_rows: self.added_rows,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Snapshot {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let w = SnapshotWire::deserialize(d)?;
        if w.manifest_list.is_none() && w.manifests.is_none() {
            return Err(serde::de::Error::custom(format!(
                "snapshot {} has neither 'manifest-list' nor 'manifests'",
                w.snapshot_id
            )));
        }
        Ok(Snapshot {
            snapshot_id: w.snapshot_id,
            // Some writers use -1 for "no parent".
            parent_snapshot_id: w.parent_snapshot_id.filter(|p| *p != -1),
            sequence_number: w.sequence_number,
            timestamp_ms: w.timestamp_ms,
            manifest_list: w.manifest_list,
            manifests: w.manifests,
            // v1 snapshots may lack a summary; read as append (as PyIceberg does).
            summary: w.summary.unwrap_or_default(),
            schema_id: w.schema_id,
            first_row_id: w.first_row_id,
            added_rows: w.added_rows,
        })
    }
}

impl Snapshot {
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    pub fn from_json(v: &Value) -> Result<Self> {
        Snapshot::deserialize(v).map_err(|e| invalid_data(format!("invalid snapshot: {e}")))
    }
}

/// What a ref is, with its retention settings (all optional, > 0 when set).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnapshotRetention {
    Branch {
        min_snapshots_to_keep: Option<i32>,
        max_snapshot_age_ms: Option<i64>,
        max_ref_age_ms: Option<i64>,
    },
    Tag {
        max_ref_age_ms: Option<i64>,
    },
}

impl SnapshotRetention {
    /// A branch with no retention overrides.
    pub fn branch() -> Self {
        SnapshotRetention::Branch {
            min_snapshots_to_keep: None,
            max_snapshot_age_ms: None,
            max_ref_age_ms: None,
        }
    }
}

/// A named reference to a snapshot: a branch or a tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotRef {
    pub snapshot_id: i64,
    pub retention: SnapshotRetention,
}

impl SnapshotRef {
    pub const MAIN_BRANCH: &'static str = "main";

    pub fn branch(snapshot_id: i64) -> Self {
        Self { snapshot_id, retention: SnapshotRetention::branch() }
    }

    pub fn tag(snapshot_id: i64) -> Self {
        Self { snapshot_id, retention: SnapshotRetention::Tag { max_ref_age_ms: None } }
    }

    pub fn is_branch(&self) -> bool {
        matches!(self.retention, SnapshotRetention::Branch { .. })
    }
}

#[derive(Serialize, Deserialize)]
struct SnapshotRefWire {
    #[serde(rename = "snapshot-id")]
    snapshot_id: i64,
    #[serde(rename = "type")]
    kind: String,
    #[serde(rename = "min-snapshots-to-keep", default, skip_serializing_if = "Option::is_none")]
    min_snapshots_to_keep: Option<i32>,
    #[serde(rename = "max-snapshot-age-ms", default, skip_serializing_if = "Option::is_none")]
    max_snapshot_age_ms: Option<i64>,
    #[serde(rename = "max-ref-age-ms", default, skip_serializing_if = "Option::is_none")]
    max_ref_age_ms: Option<i64>,
}

impl Serialize for SnapshotRef {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let w = match &self.retention {
            SnapshotRetention::Branch { min_snapshots_to_keep, max_snapshot_age_ms, max_ref_age_ms } => {
                SnapshotRefWire {
                    snapshot_id: self.snapshot_id,
                    kind: "branch".into(),
                    min_snapshots_to_keep: *min_snapshots_to_keep,
                    max_snapshot_age_ms: *max_snapshot_age_ms,
                    max_ref_age_ms: *max_ref_age_ms,
                }
            }
            SnapshotRetention::Tag { max_ref_age_ms } => SnapshotRefWire {
                snapshot_id: self.snapshot_id,
                kind: "tag".into(),
                min_snapshots_to_keep: None,
                max_snapshot_age_ms: None,
                max_ref_age_ms: *max_ref_age_ms,
            },
        };
        w.serialize(s)
    }
}

impl<'de> Deserialize<'de> for SnapshotRef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let w = SnapshotRefWire::deserialize(d)?;
        let retention = match w.kind.to_ascii_lowercase().as_str() {
            "branch" => SnapshotRetention::Branch {
                min_snapshots_to_keep: w.min_snapshots_to_keep,
                max_snapshot_age_ms: w.max_snapshot_age_ms,
                max_ref_age_ms: w.max_ref_age_ms,
            },
            "tag" => SnapshotRetention::Tag { max_ref_age_ms: w.max_ref_age_ms },
            other => {
                return Err(serde::de::Error::custom(format!(
                    "expected ref type 'branch' or 'tag' for snapshot {}, found '{other}'",
                    w.snapshot_id
                )))
            }
        };
        Ok(SnapshotRef { snapshot_id: w.snapshot_id, retention })
    }
}

/// An entry of `snapshot-log`: when `main` started pointing at a snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotLogEntry {
    #[serde(rename = "timestamp-ms")]
    pub timestamp_ms: i64,
    #[serde(rename = "snapshot-id")]
    pub snapshot_id: i64,
}

/// An entry of `metadata-log`: a previous metadata file and its last-updated-ms.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetadataLogEntry {
    #[serde(rename = "timestamp-ms")]
    pub timestamp_ms: i64,
    #[serde(rename = "metadata-file")]
    pub metadata_file: String,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn snapshot_round_trip() {
        let j = json!({"sequence-number": 2, "snapshot-id": 7, "parent-snapshot-id": 6, "timestamp-ms": 100,
            "summary": {"operation": "append", "added-data-files": "1"},
            "manifest-list": "s3://b/m.avro", "schema-id": 0});
        let s = Snapshot::from_json(&j).unwrap();
        assert_eq!(s.summary.operation, Operation::Append);
        assert_eq!(s.summary.get("added-data-files"), Some("1"));
        assert_eq!(s.to_json(), j);
        // Java's key order.
        let text = serde_json::to_string(&s).unwrap();
        assert!(
            text.starts_with(r#"{"sequence-number":2,"snapshot-id":7,"parent-snapshot-id":6,"timestamp-ms""#)
        );
    }

    #[test]
    fn v1_snapshots() {
        let j = json!({"snapshot-id": 7, "timestamp-ms": 100, "manifests": ["a.avro", "b.avro"]});
        let s = Snapshot::from_json(&j).unwrap();
        assert_eq!(s.sequence_number, 0);
        assert_eq!(s.manifests.as_ref().unwrap().len(), 2);
        assert_eq!(s.summary.operation, Operation::Append);
        assert!(Snapshot::from_json(&json!({"snapshot-id": 7, "timestamp-ms": 1})).is_err());
        let bad = json!({"snapshot-id": 7, "timestamp-ms": 1, "manifest-list": "x", "summary": {"operation": "merge"}});
        assert!(Snapshot::from_json(&bad).is_err());
    }

    #[test]
    fn refs_round_trip() {
        let b = json!({"snapshot-id": 1, "type": "branch", "min-snapshots-to-keep": 2, "max-ref-age-ms": 604800000});
        let r: SnapshotRef = serde_json::from_value(b.clone()).unwrap();
        assert!(r.is_branch());
        assert_eq!(serde_json::to_value(&r).unwrap(), b);
        let t = json!({"snapshot-id": 1, "type": "tag", "max-ref-age-ms": 5});
        let r: SnapshotRef = serde_json::from_value(t.clone()).unwrap();
        assert_eq!(r.retention, SnapshotRetention::Tag { max_ref_age_ms: Some(5) });
        assert_eq!(serde_json::to_value(&r).unwrap(), t);
        assert!(serde_json::from_value::<SnapshotRef>(json!({"snapshot-id": 1, "type": "x"})).is_err());
    }
}
