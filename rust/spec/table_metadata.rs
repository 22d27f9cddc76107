//! Table metadata, version-agnostic: schemas, specs, sort orders, properties, snapshots,
//! refs and logs, plus the builder steps a commit uses to derive the next version.
//! The JSON wire form (v1/v2/v3), with `from_json_str` and `to_json_string`, is in
//! `table_metadata_serde.rs`.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use serde_json::Value;

use super::partition::{PartitionSpec, PARTITION_DATA_ID_START, UNPARTITIONED_LAST_ASSIGNED_ID};
use super::schema::{Schema, SchemaRef};
use super::snapshot::{MetadataLogEntry, Snapshot, SnapshotLogEntry, SnapshotRef};
use super::sort_order::SortOrder;
use super::types::StructType;
use crate::error::{not_supported, validation, Result};

/// Table property: how many previous metadata files `metadata-log` keeps.
pub const PROPERTY_PREVIOUS_VERSIONS_MAX: &str = "write.metadata.previous-versions-max";
pub const PROPERTY_PREVIOUS_VERSIONS_MAX_DEFAULT: usize = 100;
/// Table property Java sets to `zstd` on new tables.
pub const PROPERTY_PARQUET_COMPRESSION: &str = "write.parquet.compression-codec";
/// Properties that are not stored (they are table metadata fields instead).
/// The newest format version icefloe reads and writes.
pub const MAX_FORMAT_VERSION: i32 = 3;
/// The first format version with row lineage (`next-row-id`, first row ids).
pub const MIN_ROW_LINEAGE_VERSION: i32 = 3;
const RESERVED_PROPERTIES: &[&str] = &["format-version", "uuid", "snapshot-count", "current-snapshot-id"];

/// One version of a table's metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct TableMetadata {
    pub(crate) format_version: i32,
    pub(crate) table_uuid: Option<String>,
    pub(crate) location: String,
    pub(crate) last_sequence_number: i64,
    pub(crate) last_updated_ms: i64,
    pub(crate) last_column_id: i32,
    pub(crate) schemas: Vec<SchemaRef>,
    pub(crate) current_schema_id: i32,
    pub(crate) partition_specs: Vec<PartitionSpec>,
    pub(crate) default_spec_id: i32,
    pub(crate) last_partition_id: i32,
    pub(crate) sort_orders: Vec<SortOrder>,
    pub(crate) default_sort_order_id: i32,
    pub(crate) properties: BTreeMap<String, String>,
    pub(crate) current_snapshot_id: Option<i64>,
    pub(crate) snapshots: Vec<Snapshot>,
    pub(crate) refs: BTreeMap<String, SnapshotRef>,
    /// Statistics files, kept as JSON (not interpreted).
    pub(crate) statistics: Vec<Value>,
    pub(crate) partition_statistics: Vec<Value>,
    pub(crate) snapshot_log: Vec<SnapshotLogEntry>,
    pub(crate) metadata_log: Vec<MetadataLogEntry>,
    /// v3 row lineage.
    pub(crate) next_row_id: Option<i64>,
    /// v3 `encryption-keys`, kept as JSON (icefloe neither encrypts nor decrypts; keeping
    /// them lets Java go on reading a table icefloe committed to).
    pub(crate) encryption_keys: Vec<Value>,
    /// The file this version was read from (not serialized).
    pub(crate) metadata_location: Option<String>,
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

impl TableMetadata {
    // ---- getters -----------------------------------------------------------------

    pub fn format_version(&self) -> i32 {
        self.format_version
    }

    /// The table UUID (absent only in some old v1 tables).
    pub fn table_uuid(&self) -> Option<&str> {
        self.table_uuid.as_deref()
    }

    pub fn location(&self) -> &str {
        &self.location
    }

    /// Where this table's new data, delete and metadata files go (its write properties).
    pub fn location_provider(&self) -> super::LocationProvider {
        super::LocationProvider::new(&self.location, &self.properties)
    }

    pub fn last_sequence_number(&self) -> i64 {
        self.last_sequence_number
    }

    pub fn last_updated_ms(&self) -> i64 {
        self.last_updated_ms
    }

    pub fn last_column_id(&self) -> i32 {
        self.last_column_id
    }

    pub fn schemas(&self) -> &[SchemaRef] {
        &self.schemas
    }

    /// The partition type of one of the table's specs: as [`PartitionSpec::partition_type`]
    /// over the current schema, a field whose source column was dropped typed as in the
    /// newest older schema that has it (its values in manifests keep their type).
    pub fn partition_type_of(&self, spec: &PartitionSpec) -> Result<StructType> {
        let mut older: Vec<SchemaRef> = self.schemas.clone();
        older.sort_by_key(|s| s.schema_id());
        spec.partition_type_in(self.current_schema(), &older)
    }

    pub fn current_schema_id(&self) -> i32 {
        self.current_schema_id
    }

    /// The current schema. Parsing and the builders guarantee it exists.
    pub fn current_schema(&self) -> &SchemaRef {
        self.schema_by_id(self.current_schema_id).unwrap_or(&self.schemas[0])
    }

    pub fn schema_by_id(&self, id: i32) -> Option<&SchemaRef> {
        self.schemas.iter().find(|s| s.schema_id() == id)
    }

    pub fn partition_specs(&self) -> &[PartitionSpec] {
        &self.partition_specs
    }

    pub fn default_spec_id(&self) -> i32 {
        self.default_spec_id
    }

    /// The default partition spec. Parsing and the builders guarantee it exists.
    pub fn default_spec(&self) -> &PartitionSpec {
        self.spec_by_id(self.default_spec_id).unwrap_or(&self.partition_specs[0])
    }

    pub fn spec_by_id(&self, id: i32) -> Option<&PartitionSpec> {
        self.partition_specs.iter().find(|s| s.spec_id == id)
    }

    pub fn last_partition_id(&self) -> i32 {
        self.last_partition_id
    }

    pub fn sort_orders(&self) -> &[SortOrder] {
        &self.sort_orders
    }

    pub fn default_sort_order_id(&self) -> i32 {
        self.default_sort_order_id
    }

    /// The default sort order. Parsing and the builders guarantee it exists.
    pub fn default_sort_order(&self) -> &SortOrder {
        self.sort_order_by_id(self.default_sort_order_id).unwrap_or(&self.sort_orders[0])
    }

    pub fn sort_order_by_id(&self, id: i32) -> Option<&SortOrder> {
        self.sort_orders.iter().find(|s| s.order_id == id)
    }

    pub fn properties(&self) -> &BTreeMap<String, String> {
        &self.properties
    }

    pub fn property(&self, key: &str) -> Option<&str> {
        self.properties.get(key).map(String::as_str)
    }

    pub fn current_snapshot_id(&self) -> Option<i64> {
        self.current_snapshot_id
    }

    pub fn current_snapshot(&self) -> Option<&Snapshot> {
        self.current_snapshot_id.and_then(|id| self.snapshot_by_id(id))
    }

    pub fn snapshot_by_id(&self, id: i64) -> Option<&Snapshot> {
        self.snapshots.iter().find(|s| s.snapshot_id == id)
    }

    pub fn snapshots(&self) -> &[Snapshot] {
        &self.snapshots
    }

    pub fn refs(&self) -> &BTreeMap<String, SnapshotRef> {
        &self.refs
    }

    /// The snapshot a branch or tag points at.
    pub fn snapshot_for_ref(&self, name: &str) -> Option<&Snapshot> {
        self.refs.get(name).and_then(|r| self.snapshot_by_id(r.snapshot_id))
    }

    /// The schema a snapshot was written with (its `schema-id`), else the current schema.
    pub fn schema_for_snapshot(&self, snapshot: &Snapshot) -> &SchemaRef {
        snapshot.schema_id.and_then(|id| self.schema_by_id(id)).unwrap_or_else(|| self.current_schema())
    }

    pub fn snapshot_log(&self) -> &[SnapshotLogEntry] {
        &self.snapshot_log
    }

    pub fn metadata_log(&self) -> &[MetadataLogEntry] {
        &self.metadata_log
    }

    pub fn statistics(&self) -> &[Value] {
        &self.statistics
    }

    pub fn partition_statistics(&self) -> &[Value] {
        &self.partition_statistics
    }

    pub fn next_row_id(&self) -> Option<i64> {
        self.next_row_id
    }

    pub fn metadata_location(&self) -> Option<&str> {
        self.metadata_location.as_deref()
    }

    /// Sets the file this version lives at (after the catalog wrote or read it).
    pub fn with_metadata_location(mut self, location: impl Into<String>) -> Self {
        self.metadata_location = Some(location.into());
        self
    }

    // ---- commit helpers ------------------------------------------------------------

    /// The sequence number the next snapshot gets: last + 1 for v2+, 0 for v1.
    pub fn next_sequence_number(&self) -> i64 {
        if self.format_version >= 2 {
            self.last_sequence_number + 1
        } else {
            0
        }
    }

    /// A new positive snapshot id that no existing snapshot uses (Java: the absolute value
    /// of a random UUID's two halves XORed).
    pub fn new_snapshot_id(&self) -> i64 {
        let used: HashSet<i64> = self.snapshots.iter().map(|s| s.snapshot_id).collect();
        loop {
            let u = uuid::Uuid::new_v4().as_u128();
            let id = ((u >> 64) as i64 ^ u as i64).wrapping_abs();
            if id > 0 && !used.contains(&id) {
                return id;
            }
        }
    }

    /// Metadata for a new table. The schema keeps its field ids and gets schema id 0;
    /// the spec (field ids assigned from 1000 where missing, i.e. <= 0) becomes spec 0;
    /// a sorted order becomes order 1 next to the unsorted order 0. Adds
    /// `write.parquet.compression-codec=zstd` unless set, as Java does.
    pub fn new_table(
        schema: Schema,
        spec: Option<PartitionSpec>,
        sort_order: Option<SortOrder>,
        location: &str,
        properties: BTreeMap<String, String>,
        format_version: i32,
    ) -> Result<Self> {
        if !(1..=MAX_FORMAT_VERSION).contains(&format_version) {
            return Err(not_supported(format!(
                "cannot create a table with format version {format_version}: expected 1, 2 or 3"
            )));
        }
        let location = location.trim_end_matches('/');
        if location.is_empty() {
            return Err(validation("cannot create a table without a location"));
        }
        let schema = schema.with_schema_id(0);
        schema.check_compatibility(format_version)?;

        let mut spec = spec.unwrap_or_default();
        spec.spec_id = 0;
        let mut next_id =
            spec.fields.iter().map(|f| f.field_id).max().unwrap_or(0).max(UNPARTITIONED_LAST_ASSIGNED_ID);
        for f in spec.fields.iter_mut().filter(|f| f.field_id <= 0) {
            next_id += 1;
            f.field_id = next_id;
        }
        if let Some(f) = spec.fields.iter().find(|f| f.field_id < PARTITION_DATA_ID_START) {
            return Err(validation(format!(
                "partition field '{}' has id {}: partition field ids start at {PARTITION_DATA_ID_START}",
                f.name, f.field_id
            )));
        }
        spec.validate(&schema)?;
        let last_partition_id = spec.last_assigned_field_id();

        let mut sort_orders = vec![SortOrder::unsorted()];
        let mut default_sort_order_id = SortOrder::UNSORTED_ORDER_ID;
        if let Some(order) = sort_order.filter(|o| !o.is_unsorted()) {
            let order = SortOrder::new(1, order.fields);
            order.validate(&schema)?;
            default_sort_order_id = order.order_id;
            sort_orders.push(order);
        }

        let mut properties = properties;
        for k in RESERVED_PROPERTIES {
            properties.remove(*k);
        }
        properties.entry(PROPERTY_PARQUET_COMPRESSION.to_string()).or_insert_with(|| "zstd".to_string());

        Ok(TableMetadata {
            format_version,
            table_uuid: Some(uuid::Uuid::new_v4().hyphenated().to_string()),
            location: location.to_string(),
            last_sequence_number: 0,
            last_updated_ms: now_ms(),
            last_column_id: schema.highest_field_id(),
            schemas: vec![Arc::new(schema)],
            current_schema_id: 0,
            partition_specs: vec![spec],
            default_spec_id: 0,
            last_partition_id,
            sort_orders,
            default_sort_order_id,
            properties,
            current_snapshot_id: None,
            snapshots: Vec::new(),
            refs: BTreeMap::new(),
            statistics: Vec::new(),
            partition_statistics: Vec::new(),
            snapshot_log: Vec::new(),
            metadata_log: Vec::new(),
            next_row_id: (format_version >= MIN_ROW_LINEAGE_VERSION).then_some(0),
            encryption_keys: Vec::new(),
            metadata_location: None,
        })
    }

    /// The starting point of the next version: the previous metadata file appended to
    /// `metadata-log` (when this version has a location), last-updated-ms set, no location.
    pub(super) fn next_version(&self, now_ms: i64) -> TableMetadata {
        let mut next = self.clone();
        if let Some(loc) = &self.metadata_location {
            next.metadata_log
                .push(MetadataLogEntry { timestamp_ms: self.last_updated_ms, metadata_file: loc.clone() });
        }
        next.last_updated_ms = now_ms;
        next.metadata_location = None;
        next
    }

    /// Trims `metadata-log` to `write.metadata.previous-versions-max` (at least 1).
    pub(crate) fn trim_metadata_log(&mut self) {
        let max = self
            .properties
            .get(PROPERTY_PREVIOUS_VERSIONS_MAX)
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or(PROPERTY_PREVIOUS_VERSIONS_MAX_DEFAULT)
            .max(1);
        if self.metadata_log.len() > max {
            let drop = self.metadata_log.len() - max;
            self.metadata_log.drain(..drop);
        }
    }

    /// The next version with `snapshot` added and made current on `main`: appends the
    /// snapshot and a snapshot-log entry, bumps last-sequence-number, sets last-updated-ms
    /// to `now_ms` and logs the previous metadata file.
    pub fn add_snapshot(&self, snapshot: Snapshot, now_ms: i64) -> Result<TableMetadata> {
        self.add_snapshot_to(snapshot, Some(SnapshotRef::MAIN_BRANCH), now_ms)
    }

    /// [`Self::add_snapshot`] onto `branch`: the branch (created as a plain branch when
    /// missing) points at the snapshot; the current snapshot and the snapshot log move only
    /// for `main`, as Java's `SnapshotProducer.toBranch`. With no branch the snapshot is
    /// staged: added, but no ref points at it (Java's `stageOnly()`, for write-audit-publish).
    pub fn add_snapshot_to(
        &self,
        snapshot: Snapshot,
        branch: Option<&str>,
        now_ms: i64,
    ) -> Result<TableMetadata> {
        if snapshot.snapshot_id <= 0 {
            return Err(validation(format!("snapshot ids must be positive, found {}", snapshot.snapshot_id)));
        }
        if self.snapshot_by_id(snapshot.snapshot_id).is_some() {
            return Err(validation(format!(
                "snapshot id {} already exists in the table",
                snapshot.snapshot_id
            )));
        }
        if self.format_version >= 2 && snapshot.sequence_number <= self.last_sequence_number {
            return Err(validation(format!(
                "snapshot {} has sequence number {}, expected more than the table's last sequence number {}",
                snapshot.snapshot_id, snapshot.sequence_number, self.last_sequence_number
            )));
        }
        if self.format_version == 1 && snapshot.sequence_number != 0 {
            return Err(validation(format!(
                "snapshot {} has sequence number {} but format v1 tables have no sequence numbers",
                snapshot.snapshot_id, snapshot.sequence_number
            )));
        }
        if let Some(id) = snapshot.schema_id {
            if self.schema_by_id(id).is_none() {
                return Err(validation(format!(
                    "snapshot {} references unknown schema id {id}",
                    snapshot.snapshot_id
                )));
            }
        }
        let mut next = self.next_version(now_ms);
        let id = snapshot.snapshot_id;
        if self.format_version >= 2 {
            next.last_sequence_number = snapshot.sequence_number;
        }
        if self.format_version >= MIN_ROW_LINEAGE_VERSION {
            // Java's TableMetadata.Builder.addSnapshot: row ids move on by what it assigned.
            let table_next = self.next_row_id.unwrap_or(0);
            let (Some(first), Some(added)) = (snapshot.first_row_id, snapshot.added_rows) else {
                return Err(validation(format!(
                    "snapshot {id} of a format v3 table needs first-row-id and added-rows"
                )));
            };
            if first < table_next || added < 0 {
                return Err(validation(format!(
                    "snapshot {id} has first-row-id {first} and added-rows {added}: expected \
                     first-row-id >= the table's next-row-id {table_next} and added-rows >= 0"
                )));
            }
            next.next_row_id = Some(first.saturating_add(added));
        }
        let Some(branch) = branch else {
            next.snapshots.push(snapshot);
            next.trim_metadata_log();
            return Ok(next);
        };
        if let Some(r) = next.refs.get(branch).filter(|r| !r.is_branch()) {
            return Err(validation(format!(
                "cannot commit to '{branch}': it is a tag (of snapshot {}), not a branch",
                r.snapshot_id
            )));
        }
        if branch == SnapshotRef::MAIN_BRANCH {
            next.snapshot_log.push(SnapshotLogEntry { timestamp_ms: snapshot.timestamp_ms, snapshot_id: id });
            next.current_snapshot_id = Some(id);
        }
        next.snapshots.push(snapshot);
        match next.refs.get_mut(branch) {
            Some(r) => r.snapshot_id = id,
            None => {
                next.refs.insert(branch.to_string(), SnapshotRef::branch(id));
            }
        }
        next.trim_metadata_log();
        Ok(next)
    }

    /// The next version with properties set and removed (reserved keys are rejected).
    pub fn with_properties(
        &self,
        updates: impl IntoIterator<Item = (String, String)>,
        removals: impl IntoIterator<Item = String>,
    ) -> Result<TableMetadata> {
        let mut next = self.next_version(now_ms());
        for k in removals {
            next.properties.remove(&k);
        }
        for (k, v) in updates {
            if k == "format-version" {
                // As Java's `ALTER TABLE ... SET TBLPROPERTIES ('format-version'='3')`: an
                // upgrade of the table, not a stored property.
                let version = v
                    .trim()
                    .parse::<i32>()
                    .map_err(|_| validation(format!("format-version must be an integer, found '{v}'")))?;
                next.upgrade_format_version(version)?;
                continue;
            }
            if RESERVED_PROPERTIES.contains(&k.as_str()) {
                return Err(validation(format!("table property '{k}' is reserved and cannot be set")));
            }
            next.properties.insert(k, v);
        }
        next.trim_metadata_log();
        Ok(next)
    }

    /// Upgrades this (next) version to format `version`: the same version is no change, a
    /// lower one or one above 3 an error. Row ids start at 0 on reaching v3 (Java's
    /// `TableMetadata.Builder.upgradeFormatVersion`); files written before keep no row ids
    /// until the next snapshot's manifest list assigns them.
    fn upgrade_format_version(&mut self, version: i32) -> Result<()> {
        if version == self.format_version {
            return Ok(());
        }
        if version < self.format_version || version > MAX_FORMAT_VERSION {
            return Err(validation(format!(
                "cannot change format-version from {} to {version}: expected an upgrade to at most {MAX_FORMAT_VERSION}",
                self.format_version
            )));
        }
        if self.format_version < MIN_ROW_LINEAGE_VERSION && version >= MIN_ROW_LINEAGE_VERSION {
            self.next_row_id = Some(0);
        }
        if self.format_version < 2 && version >= 2 {
            self.last_sequence_number = 0;
        }
        self.format_version = version;
        Ok(())
    }

    /// The next version with a new table location (trailing `/` stripped).
    pub fn with_location(&self, location: &str) -> Result<TableMetadata> {
        let location = location.trim_end_matches('/');
        if location.is_empty() {
            return Err(validation("table location cannot be empty"));
        }
        let mut next = self.next_version(now_ms());
        next.location = location.to_string();
        next.trim_metadata_log();
        Ok(next)
    }
}

#[cfg(test)]
#[path = "table_metadata_tests.rs"]
mod tests;
