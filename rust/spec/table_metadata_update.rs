//! Metadata changes in the Iceberg REST spec's vocabulary (`add-schema`, `set-current-schema`,
//! `add-spec`, `set-default-spec`, `add-sort-order`, `set-default-sort-order`,
//! `set-snapshot-ref`, `remove-snapshot-ref`, `set-properties`, `remove-properties`,
//! `upgrade-format-version`, `set-location`), applied to a base version with the rules of Java's
//! `TableMetadata.Builder`: an added schema, spec or sort order equal to an existing one reuses
//! its id, `-1` names the last one added, `last-column-id` and `last-partition-id` only grow,
//! and moving `main` moves the current snapshot and logs it.
//!
//! Schema, spec, sort-order and snapshot-management operations (`table.update_schema()`,
//! `update_spec()`, `replace_sort_order()`, `manage_snapshots()`) are built on the Python side as
//! lists of these updates and applied here in one new version.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::partition::PartitionSpec;
use super::schema::Schema;
use super::snapshot::{SnapshotLogEntry, SnapshotRef};
use super::sort_order::SortOrder;
use super::table_metadata::TableMetadata;
use crate::error::{invalid_data, validation, Result};

/// One metadata update, as the REST spec's `TableUpdate` objects.
#[derive(Debug, Clone)]
pub enum MetadataUpdate {
    AddSchema {
        schema: Schema,
        last_column_id: Option<i32>,
    },
    SetCurrentSchema {
        schema_id: i32,
    },
    AddSpec {
        spec: PartitionSpec,
    },
    SetDefaultSpec {
        spec_id: i32,
    },
    AddSortOrder {
        order: SortOrder,
    },
    SetDefaultSortOrder {
        order_id: i32,
    },
    SetSnapshotRef {
        name: String,
        reference: SnapshotRef,
    },
    RemoveSnapshotRef {
        name: String,
    },
    SetProperties {
        updates: BTreeMap<String, String>,
    },
    RemoveProperties {
        removals: Vec<String>,
    },
    UpgradeFormatVersion {
        format_version: i32,
    },
    SetLocation {
        location: String,
    },
    /// A statistics file of a snapshot (the spec's `statistics` entry), replacing the one of
    /// that snapshot.
    SetStatistics {
        statistics: Value,
    },
    RemoveStatistics {
        snapshot_id: i64,
    },
    SetPartitionStatistics {
        statistics: Value,
    },
    RemovePartitionStatistics {
        snapshot_id: i64,
    },
}

/// `-1` in `set-current-schema`, `set-default-spec`, `set-default-sort-order`: the last added.
const LAST_ADDED: i32 = -1;

fn field<'a>(o: &'a Value, key: &str, action: &str) -> Result<&'a Value> {
    o.get(key).ok_or_else(|| invalid_data(format!("metadata update '{action}' needs field '{key}'")))
}

fn int_field(o: &Value, key: &str, action: &str) -> Result<i64> {
    let v = field(o, key, action)?;
    v.as_i64().ok_or_else(|| {
        invalid_data(format!("metadata update '{action}': '{key}' must be an integer, found {v}"))
    })
}

fn i32_field(o: &Value, key: &str, action: &str) -> Result<i32> {
    let v = int_field(o, key, action)?;
    i32::try_from(v)
        .map_err(|_| invalid_data(format!("metadata update '{action}': '{key}' {v} is out of range")))
}

/// A `statistics` / `partition-statistics` object of an update, with its `snapshot-id` and
/// `statistics-path`.
fn statistics_entry(o: &Value, key: &str, action: &str) -> Result<Value> {
    let entry = field(o, key, action)?;
    entry_snapshot_id(entry)?;
    str_field(entry, "statistics-path", action)?;
    Ok(entry.clone())
}

fn entry_snapshot_id(entry: &Value) -> Result<i64> {
    int_field(entry, "snapshot-id", "statistics")
}

fn str_field<'a>(o: &'a Value, key: &str, action: &str) -> Result<&'a str> {
    let v = field(o, key, action)?;
    v.as_str().ok_or_else(|| {
        invalid_data(format!("metadata update '{action}': '{key}' must be a string, found {v}"))
    })
}

impl MetadataUpdate {
    /// Parses one REST `TableUpdate` object.
    pub fn from_json(v: &Value) -> Result<Self> {
        let action = v
            .get("action")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid_data(format!("a metadata update needs a string 'action', found {v}")))?;
        Ok(match action {
            "add-schema" => MetadataUpdate::AddSchema {
                schema: Schema::from_json(field(v, "schema", action)?)?,
                last_column_id: match v.get("last-column-id") {
                    None | Some(Value::Null) => None,
                    Some(_) => Some(i32_field(v, "last-column-id", action)?),
                },
            },
            "set-current-schema" => MetadataUpdate::SetCurrentSchema { schema_id: i32_field(v, "schema-id", action)? },
            "add-spec" => MetadataUpdate::AddSpec { spec: PartitionSpec::from_json(field(v, "spec", action)?)? },
            "set-default-spec" => MetadataUpdate::SetDefaultSpec { spec_id: i32_field(v, "spec-id", action)? },
            "add-sort-order" => {
                let order: SortOrder = serde_json::from_value(field(v, "sort-order", action)?.clone())
                    .map_err(|e| invalid_data("metadata update 'add-sort-order': bad sort order").with_source(e))?;
                MetadataUpdate::AddSortOrder { order }
            }
            "set-default-sort-order" => {
                MetadataUpdate::SetDefaultSortOrder { order_id: i32_field(v, "sort-order-id", action)? }
            }
            "set-snapshot-ref" => {
                let name = str_field(v, "ref-name", action)?.to_string();
                let reference: SnapshotRef = serde_json::from_value(v.clone())
                    .map_err(|e| invalid_data(format!("metadata update 'set-snapshot-ref' of '{name}'")).with_source(e))?;
                MetadataUpdate::SetSnapshotRef { name, reference }
            }
            "remove-snapshot-ref" => {
                MetadataUpdate::RemoveSnapshotRef { name: str_field(v, "ref-name", action)?.to_string() }
            }
            "set-properties" => {
                let updates: BTreeMap<String, String> = serde_json::from_value(field(v, "updates", action)?.clone())
                    .map_err(|e| invalid_data("metadata update 'set-properties': expected string values").with_source(e))?;
                MetadataUpdate::SetProperties { updates }
            }
            "remove-properties" => {
                let removals: Vec<String> = serde_json::from_value(field(v, "removals", action)?.clone())
                    .map_err(|e| invalid_data("metadata update 'remove-properties': expected strings").with_source(e))?;
                MetadataUpdate::RemoveProperties { removals }
            }
            "upgrade-format-version" => {
                MetadataUpdate::UpgradeFormatVersion { format_version: i32_field(v, "format-version", action)? }
            }
            "set-location" => MetadataUpdate::SetLocation { location: str_field(v, "location", action)?.to_string() },
            "set-statistics" => MetadataUpdate::SetStatistics { statistics: statistics_entry(v, "statistics", action)? },
            "remove-statistics" => MetadataUpdate::RemoveStatistics { snapshot_id: int_field(v, "snapshot-id", action)? },
            "set-partition-statistics" => MetadataUpdate::SetPartitionStatistics {
                statistics: statistics_entry(v, "partition-statistics", action)?,
            },
            "remove-partition-statistics" => {
                MetadataUpdate::RemovePartitionStatistics { snapshot_id: int_field(v, "snapshot-id", action)? }
            }
            other => {
                return Err(invalid_data(format!(
                    "unknown metadata update action '{other}': expected one of add-schema, set-current-schema, \
                     add-spec, set-default-spec, add-sort-order, set-default-sort-order, set-snapshot-ref, \
                     remove-snapshot-ref, set-properties, remove-properties, upgrade-format-version, set-location, \
                     set-statistics, remove-statistics, set-partition-statistics, remove-partition-statistics"
                )))
            }
        })
    }

    /// Parses a JSON array of updates.
    pub fn list_from_json_str(s: &str) -> Result<Vec<Self>> {
        let v: Value = serde_json::from_str(s)
            .map_err(|e| invalid_data("metadata updates are not valid JSON").with_source(e))?;
        match v {
            Value::Array(items) => items.iter().map(MetadataUpdate::from_json).collect(),
            other => Err(invalid_data(format!("expected a JSON array of metadata updates, found {other}"))),
        }
    }
}

/// What the builder remembers between updates of one version (Java's `lastAdded*Id`).
#[derive(Default)]
struct LastAdded {
    schema: Option<i32>,
    spec: Option<i32>,
    order: Option<i32>,
}

impl TableMetadata {
    /// The next version with `updates` applied in order (see the module doc). An update that
    /// does not apply (an unknown schema, spec, order or snapshot id, a `-1` with nothing added)
    /// is an error naming it; nothing is half-applied.
    pub fn apply_updates(&self, updates: &[MetadataUpdate], now_ms: i64) -> Result<TableMetadata> {
        let mut next = self.with_properties(std::iter::empty(), std::iter::empty())?;
        next.last_updated_ms = now_ms;
        let mut last = LastAdded::default();
        for u in updates {
            next.apply_update(u, &mut last, now_ms)?;
        }
        next.trim_metadata_log();
        Ok(next)
    }

    fn apply_update(&mut self, u: &MetadataUpdate, last: &mut LastAdded, now_ms: i64) -> Result<()> {
        match u {
            MetadataUpdate::AddSchema { schema, last_column_id } => {
                let id = self.add_schema(schema, *last_column_id)?;
                last.schema = Some(id);
            }
            MetadataUpdate::SetCurrentSchema { schema_id } => {
                let id = resolve_last("schema", *schema_id, last.schema)?;
                if self.schema_by_id(id).is_none() {
                    return Err(validation(format!("cannot set current schema to unknown schema id {id}")));
                }
                self.current_schema_id = id;
                let schema = Arc::clone(self.current_schema());
                for spec in &self.partition_specs {
                    if spec.spec_id == self.default_spec_id {
                        spec.validate(&schema).map_err(|e| {
                            validation(format!("schema {id} does not fit the default partition spec: {e}"))
                        })?;
                    }
                }
                // Java's TableMetadata.Builder checks the default sort order too (a dropped
                // sort column: "Cannot find source column for sort field")
                if let Some(order) = self.sort_order_by_id(self.default_sort_order_id) {
                    order.validate(&schema).map_err(|e| {
                        validation(format!(
                            "schema {id} does not fit the default sort order (cannot find source column for \
                             sort field; replace the sort order first): {e}"
                        ))
                    })?;
                }
            }
            MetadataUpdate::AddSpec { spec } => {
                let id = self.add_spec(spec)?;
                last.spec = Some(id);
            }
            MetadataUpdate::SetDefaultSpec { spec_id } => {
                let id = resolve_last("partition spec", *spec_id, last.spec)?;
                let spec = self
                    .spec_by_id(id)
                    .ok_or_else(|| validation(format!("cannot set default spec to unknown spec id {id}")))?;
                spec.validate(self.current_schema())?;
                self.default_spec_id = id;
            }
            MetadataUpdate::AddSortOrder { order } => {
                let id = self.add_sort_order(order)?;
                last.order = Some(id);
            }
            MetadataUpdate::SetDefaultSortOrder { order_id } => {
                let id = resolve_last("sort order", *order_id, last.order)?;
                if self.sort_order_by_id(id).is_none() {
                    return Err(validation(format!(
                        "cannot set default sort order to unknown order id {id}"
                    )));
                }
                self.default_sort_order_id = id;
            }
            MetadataUpdate::SetSnapshotRef { name, reference } => self.set_ref(name, reference, now_ms)?,
            MetadataUpdate::RemoveSnapshotRef { name } => {
                if self.refs.remove(name).is_some() && name == SnapshotRef::MAIN_BRANCH {
                    // Java's Builder.removeRef: the table has no current snapshot any more.
                    self.current_snapshot_id = None;
                    self.snapshot_log.clear();
                }
            }
            MetadataUpdate::SetProperties { updates } => {
                *self = self.with_properties(updates.clone(), std::iter::empty())?.relog_from(self);
            }
            MetadataUpdate::RemoveProperties { removals } => {
                *self = self.with_properties(std::iter::empty(), removals.clone())?.relog_from(self);
            }
            MetadataUpdate::UpgradeFormatVersion { format_version } => {
                let updates = [("format-version".to_string(), format_version.to_string())];
                *self = self.with_properties(updates, std::iter::empty())?.relog_from(self);
            }
            MetadataUpdate::SetLocation { location } => {
                *self = self.with_location(location)?.relog_from(self);
            }
            MetadataUpdate::SetStatistics { statistics } => {
                let sid = entry_snapshot_id(statistics)?;
                self.snapshot_by_id(sid).ok_or_else(|| {
                    invalid_data(format!("metadata update 'set-statistics': no snapshot {sid} in the table"))
                })?;
                self.statistics.retain(|e| entry_snapshot_id(e).ok() != Some(sid));
                self.statistics.push(statistics.clone());
            }
            MetadataUpdate::RemoveStatistics { snapshot_id } => {
                self.statistics.retain(|e| entry_snapshot_id(e).ok() != Some(*snapshot_id));
            }
            MetadataUpdate::SetPartitionStatistics { statistics } => {
                let sid = entry_snapshot_id(statistics)?;
                self.partition_statistics.retain(|e| entry_snapshot_id(e).ok() != Some(sid));
                self.partition_statistics.push(statistics.clone());
            }
            MetadataUpdate::RemovePartitionStatistics { snapshot_id } => {
                self.partition_statistics.retain(|e| entry_snapshot_id(e).ok() != Some(*snapshot_id));
            }
        }
        Ok(())
    }

    /// `with_properties`/`with_location` start a new version (logging this one's file); inside
    /// one `apply_updates` the version is still being built, so keep its log and time.
    fn relog_from(mut self, building: &TableMetadata) -> TableMetadata {
        self.metadata_log = building.metadata_log.clone();
        self.last_updated_ms = building.last_updated_ms;
        self.metadata_location = None;
        self
    }

    /// Java's `addSchema`: an existing schema with the same fields and identifier fields is
    /// reused; otherwise the new schema gets the highest id + 1. `last-column-id` grows to cover
    /// the schema's highest field id (and the given value).
    fn add_schema(&mut self, schema: &Schema, last_column_id: Option<i32>) -> Result<i32> {
        schema.check_compatibility(self.format_version())?;
        let highest = schema.highest_field_id().max(last_column_id.unwrap_or(i32::MIN));
        if let Some(lc) = last_column_id {
            if lc < self.last_column_id {
                return Err(validation(format!(
                    "invalid last column id {lc}: expected at least the table's {}",
                    self.last_column_id
                )));
            }
        }
        let same = self.schemas.iter().find(|s| {
            s.as_struct() == schema.as_struct() && s.identifier_field_ids() == schema.identifier_field_ids()
        });
        let id = match same {
            Some(s) => s.schema_id(),
            None => {
                let id = self.schemas.iter().map(|s| s.schema_id()).max().map_or(0, |m| m + 1);
                self.schemas.push(Arc::new(schema.clone().with_schema_id(id)));
                id
            }
        };
        self.last_column_id = self.last_column_id.max(highest);
        Ok(id)
    }

    /// Java's `addPartitionSpec`: a spec with the same fields as an existing one reuses its id;
    /// otherwise highest + 1. Field ids must be assigned (>= 1000); `last-partition-id` grows.
    fn add_spec(&mut self, spec: &PartitionSpec) -> Result<i32> {
        if let Some(f) = spec.fields.iter().find(|f| f.field_id < super::PARTITION_DATA_ID_START) {
            return Err(validation(format!(
                "partition field '{}' has id {}: expected an assigned id >= {}",
                f.name,
                f.field_id,
                super::PARTITION_DATA_ID_START
            )));
        }
        // Java's `compatibleWith`: the same source, transform and name per position; the field
        // ids of the existing spec win, and `last-partition-id` stays as it is.
        if let Some(s) = self.partition_specs.iter().find(|s| same_partitioning(s, spec)) {
            return Ok(s.spec_id);
        }
        spec.validate(self.current_schema())?;
        if self.format_version() == 1 {
            // v1 readers assign partition field ids by position: 1000, 1001, ...
            for (i, f) in spec.fields.iter().enumerate() {
                let expected = super::PARTITION_DATA_ID_START + i as i32;
                if f.field_id != expected {
                    return Err(validation(format!(
                        "format v1 needs sequential partition field ids: field '{}' has id {}, expected {expected}",
                        f.name, f.field_id
                    )));
                }
            }
        }
        let id = self.partition_specs.iter().map(|s| s.spec_id).max().map_or(0, |m| m + 1);
        self.partition_specs.push(PartitionSpec::new(id, spec.fields.clone()));
        self.last_partition_id = self.last_partition_id.max(spec.last_assigned_field_id());
        Ok(id)
    }

    /// Java's `addSortOrder`: the unsorted order is always 0, an existing order with the same
    /// fields reuses its id, otherwise highest + 1.
    fn add_sort_order(&mut self, order: &SortOrder) -> Result<i32> {
        if order.is_unsorted() {
            return Ok(SortOrder::UNSORTED_ORDER_ID);
        }
        order.validate(self.current_schema())?;
        let id = match self.sort_orders.iter().find(|o| o.fields == order.fields) {
            Some(o) => o.order_id,
            None => {
                let id = self.sort_orders.iter().map(|o| o.order_id).max().map_or(1, |m| m + 1).max(1);
                self.sort_orders.push(SortOrder::new(id, order.fields.clone()));
                id
            }
        };
        Ok(id)
    }

    /// Java's `setRef`: the snapshot must exist; moving `main` sets the current snapshot and
    /// appends a snapshot-log entry at this version's time.
    fn set_ref(&mut self, name: &str, reference: &SnapshotRef, now_ms: i64) -> Result<()> {
        if name.is_empty() {
            return Err(validation("a ref needs a name"));
        }
        if self.snapshot_by_id(reference.snapshot_id).is_none() {
            return Err(validation(format!(
                "cannot set ref '{name}' to unknown snapshot {}",
                reference.snapshot_id
            )));
        }
        if name == SnapshotRef::MAIN_BRANCH && !reference.is_branch() {
            return Err(validation("ref 'main' must be a branch, found a tag"));
        }
        if self.refs.get(name) == Some(reference) {
            return Ok(());
        }
        self.refs.insert(name.to_string(), reference.clone());
        if name == SnapshotRef::MAIN_BRANCH {
            self.current_snapshot_id = Some(reference.snapshot_id);
            self.snapshot_log
                .push(SnapshotLogEntry { timestamp_ms: now_ms, snapshot_id: reference.snapshot_id });
        }
        Ok(())
    }
}

fn same_partitioning(a: &PartitionSpec, b: &PartitionSpec) -> bool {
    a.fields.len() == b.fields.len()
        && a.fields.iter().zip(&b.fields).all(|(x, y)| {
            x.source_id == y.source_id
                && x.transform.to_string() == y.transform.to_string()
                && x.name == y.name
        })
}

fn resolve_last(what: &str, id: i32, last: Option<i32>) -> Result<i32> {
    if id != LAST_ADDED {
        return Ok(id);
    }
    last.ok_or_else(|| {
        validation(format!("cannot use the last added {what} (-1): none was added in this change"))
    })
}

#[cfg(test)]
#[path = "table_metadata_update_tests.rs"]
mod tests;
