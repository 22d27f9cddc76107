//! Manifest lists (checklist §2): the `manifest_file` records of one snapshot, v1 and v2 read,
//! v2 written exactly like Iceberg Java's `ManifestListWriter`.

use serde::{Deserialize, Serialize};

use super::avro::{self, write_bytes, write_long, write_opt, Container, Cursor, Kind, Node};
use super::schema_json::{self as sj, JsonWriter};
use crate::error::{invalid_data, Error, Result};
use crate::io;

/// `sequence_number` / `min_sequence_number` of a manifest not yet committed: the manifest
/// list writer replaces it with the committing snapshot's sequence number (Java's
/// `ManifestWriter.UNASSIGNED_SEQ`).
pub const UNASSIGNED_SEQ: i64 = -1;

/// `content` of a manifest (field 517).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ManifestContent {
    Data = 0,
    Deletes = 1,
}

impl ManifestContent {
    pub fn from_i32(v: i32) -> Result<Self> {
        match v {
            0 => Ok(Self::Data),
            1 => Ok(Self::Deletes),
            _ => Err(invalid_data(format!("expected manifest content 0 (data) or 1 (deletes), found {v}"))),
        }
    }

    /// The manifest file metadata form (`content`): `data` or `deletes`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Data => "data",
            Self::Deletes => "deletes",
        }
    }
}

/// Summary of one partition field over all entries of a manifest (record `r508`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FieldSummary {
    pub contains_null: bool,
    pub contains_nan: Option<bool>,
    /// Single-value bytes of the partition field's result type.
    pub lower_bound: Option<Vec<u8>>,
    pub upper_bound: Option<Vec<u8>>,
}

/// One entry of a manifest list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestFile {
    pub manifest_path: String,
    pub manifest_length: i64,
    pub partition_spec_id: i32,
    pub content: ManifestContent,
    /// 0 for v1; [`UNASSIGNED_SEQ`] for a manifest that is not committed yet.
    pub sequence_number: i64,
    pub min_sequence_number: i64,
    pub added_snapshot_id: i64,
    /// `None` (v1 only) means unknown, to be treated as non-zero.
    pub added_files_count: Option<i32>,
    pub existing_files_count: Option<i32>,
    pub deleted_files_count: Option<i32>,
    pub added_rows_count: Option<i64>,
    pub existing_rows_count: Option<i64>,
    pub deleted_rows_count: Option<i64>,
    pub partitions: Option<Vec<FieldSummary>>,
    pub key_metadata: Option<Vec<u8>>,
    /// v3 only; read, never written by the v2 writer.
    pub first_row_id: Option<i64>,
}

impl ManifestFile {
    /// True unless the counts say the manifest has no added files (null counts are non-zero).
    pub fn has_added_files(&self) -> bool {
        self.added_files_count.is_none_or(|c| c > 0)
    }

    pub fn has_existing_files(&self) -> bool {
        self.existing_files_count.is_none_or(|c| c > 0)
    }

    pub fn has_deleted_files(&self) -> bool {
        self.deleted_files_count.is_none_or(|c| c > 0)
    }
}

// ---------------------------------------------------------------------------------------------
// Reading

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Path,
    Length,
    SpecId,
    Content,
    SequenceNumber,
    MinSequenceNumber,
    SnapshotId,
    AddedFiles,
    ExistingFiles,
    DeletedFiles,
    AddedRows,
    ExistingRows,
    DeletedRows,
    Partitions,
    KeyMetadata,
    FirstRowId,
    Skip,
}

fn slot_for(id: Option<i32>, name: &str) -> Slot {
    // v1 lists from old writers name the counts `added_data_files_count` etc.; the ids agree.
    let id = id.unwrap_or(match name {
        "manifest_path" => 500,
        "manifest_length" => 501,
        "partition_spec_id" => 502,
        "added_snapshot_id" => 503,
        "added_files_count" | "added_data_files_count" => 504,
        "existing_files_count" | "existing_data_files_count" => 505,
        "deleted_files_count" | "deleted_data_files_count" => 506,
        "partitions" => 507,
        "added_rows_count" => 512,
        "existing_rows_count" => 513,
        "deleted_rows_count" => 514,
        "sequence_number" => 515,
        "min_sequence_number" => 516,
        "content" => 517,
        "key_metadata" => 519,
        "first_row_id" => 520,
        _ => -1,
    });
    match id {
        500 => Slot::Path,
        501 => Slot::Length,
        502 => Slot::SpecId,
        503 => Slot::SnapshotId,
        504 => Slot::AddedFiles,
        505 => Slot::ExistingFiles,
        506 => Slot::DeletedFiles,
        507 => Slot::Partitions,
        512 => Slot::AddedRows,
        513 => Slot::ExistingRows,
        514 => Slot::DeletedRows,
        515 => Slot::SequenceNumber,
        516 => Slot::MinSequenceNumber,
        517 => Slot::Content,
        519 => Slot::KeyMetadata,
        520 => Slot::FirstRowId,
        _ => Slot::Skip,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SummarySlot {
    ContainsNull,
    ContainsNan,
    Lower,
    Upper,
    Skip,
}

fn summary_slot_for(id: Option<i32>, name: &str) -> SummarySlot {
    let id = id.unwrap_or(match name {
        "contains_null" => 509,
        "lower_bound" => 510,
        "upper_bound" => 511,
        "contains_nan" => 518,
        _ => -1,
    });
    match id {
        509 => SummarySlot::ContainsNull,
        510 => SummarySlot::Lower,
        511 => SummarySlot::Upper,
        518 => SummarySlot::ContainsNan,
        _ => SummarySlot::Skip,
    }
}

struct ListPlan {
    fields: Vec<(Slot, Node)>,
    /// The `r508` record plan when the writer has `partitions`.
    summary: Vec<(SummarySlot, Node)>,
}

fn compile_list_plan(schema: &Node) -> Result<ListPlan> {
    let rec = schema.as_record().ok_or_else(|| invalid_data("manifest list schema is not a record"))?;
    let fields: Vec<(Slot, Node)> =
        rec.fields.iter().map(|f| (slot_for(f.field_id, &f.name), f.node.clone())).collect();
    for (required, name) in [
        (Slot::Path, "manifest_path (500)"),
        (Slot::Length, "manifest_length (501)"),
        (Slot::SpecId, "partition_spec_id (502)"),
        (Slot::SnapshotId, "added_snapshot_id (503)"),
    ] {
        if !fields.iter().any(|(s, _)| *s == required) {
            return Err(invalid_data(format!("manifest list schema has no field {name}")));
        }
    }
    let mut summary = Vec::new();
    if let Some((_, node)) = fields.iter().find(|(s, _)| *s == Slot::Partitions) {
        let Kind::Array(items) = &node.non_null().kind else {
            return Err(invalid_data("manifest list field partitions (507) is not an array"));
        };
        let r = items
            .as_record()
            .ok_or_else(|| invalid_data("manifest list partitions (507) elements are not records"))?;
        summary = r.fields.iter().map(|f| (summary_slot_for(f.field_id, &f.name), f.node.clone())).collect();
        if !summary.iter().any(|(s, _)| *s == SummarySlot::ContainsNull) {
            return Err(invalid_data("manifest list field_summary has no contains_null (509)"));
        }
    }
    Ok(ListPlan { fields, summary })
}

// Typed readers for one (possibly optional) value. Ints widen to longs (Avro promotion).

#[inline]
pub(super) fn read_opt_long(c: &mut Cursor<'_>, node: &Node) -> Result<Option<i64>> {
    match c.read_optional(node)? {
        None => Ok(None),
        Some(n) => match n.kind {
            Kind::Long | Kind::Int => Ok(Some(c.read_long()?)),
            ref k => Err(invalid_data(format!("expected an Avro long, found {k:?}"))),
        },
    }
}

#[inline]
pub(super) fn read_opt_int(c: &mut Cursor<'_>, node: &Node) -> Result<Option<i32>> {
    match c.read_optional(node)? {
        None => Ok(None),
        Some(n) => match n.kind {
            Kind::Int => Ok(Some(c.read_int()?)),
            ref k => Err(invalid_data(format!("expected an Avro int, found {k:?}"))),
        },
    }
}

#[inline]
pub(super) fn read_opt_bytes<'a>(c: &mut Cursor<'a>, node: &Node) -> Result<Option<&'a [u8]>> {
    match c.read_optional(node)? {
        None => Ok(None),
        Some(n) => match n.kind {
            Kind::Bytes | Kind::String => Ok(Some(c.read_bytes()?)),
            Kind::Fixed(len) => Ok(Some(c.read_fixed(len)?)),
            ref k => Err(invalid_data(format!("expected Avro bytes, found {k:?}"))),
        },
    }
}

#[inline]
pub(super) fn read_opt_str<'a>(c: &mut Cursor<'a>, node: &Node) -> Result<Option<&'a str>> {
    match c.read_optional(node)? {
        None => Ok(None),
        Some(n) => match n.kind {
            Kind::String | Kind::Bytes => Ok(Some(c.read_str()?)),
            ref k => Err(invalid_data(format!("expected an Avro string, found {k:?}"))),
        },
    }
}

#[inline]
pub(super) fn read_opt_bool(c: &mut Cursor<'_>, node: &Node) -> Result<Option<bool>> {
    match c.read_optional(node)? {
        None => Ok(None),
        Some(n) => match n.kind {
            Kind::Boolean => Ok(Some(c.read_bool()?)),
            ref k => Err(invalid_data(format!("expected an Avro boolean, found {k:?}"))),
        },
    }
}

pub(super) fn required<T>(v: Option<T>, what: &str) -> Result<T> {
    v.ok_or_else(|| invalid_data(format!("required field {what} is null")))
}

fn decode_summary(c: &mut Cursor<'_>, plan: &[(SummarySlot, Node)]) -> Result<FieldSummary> {
    let mut s = FieldSummary::default();
    let mut contains_null = None;
    for (slot, node) in plan {
        match slot {
            SummarySlot::ContainsNull => contains_null = read_opt_bool(c, node)?,
            SummarySlot::ContainsNan => s.contains_nan = read_opt_bool(c, node)?,
            SummarySlot::Lower => s.lower_bound = read_opt_bytes(c, node)?.map(<[u8]>::to_vec),
            SummarySlot::Upper => s.upper_bound = read_opt_bytes(c, node)?.map(<[u8]>::to_vec),
            SummarySlot::Skip => c.skip(node)?,
        }
    }
    s.contains_null = required(contains_null, "contains_null (509)")?;
    Ok(s)
}

fn decode_manifest_file(c: &mut Cursor<'_>, plan: &ListPlan) -> Result<ManifestFile> {
    let mut path = None;
    let mut length = None;
    let mut spec_id = None;
    let mut snapshot_id = None;
    let mut m = ManifestFile {
        manifest_path: String::new(),
        manifest_length: 0,
        partition_spec_id: 0,
        content: ManifestContent::Data,
        sequence_number: 0,
        min_sequence_number: 0,
        added_snapshot_id: 0,
        added_files_count: None,
        existing_files_count: None,
        deleted_files_count: None,
        added_rows_count: None,
        existing_rows_count: None,
        deleted_rows_count: None,
        partitions: None,
        key_metadata: None,
        first_row_id: None,
    };
    for (slot, node) in &plan.fields {
        match slot {
            Slot::Path => path = read_opt_str(c, node)?,
            Slot::Length => length = read_opt_long(c, node)?,
            Slot::SpecId => spec_id = read_opt_int(c, node)?,
            Slot::SnapshotId => snapshot_id = read_opt_long(c, node)?,
            Slot::Content => {
                if let Some(v) = read_opt_int(c, node)? {
                    m.content = ManifestContent::from_i32(v)?;
                }
            }
            Slot::SequenceNumber => m.sequence_number = read_opt_long(c, node)?.unwrap_or(0),
            Slot::MinSequenceNumber => m.min_sequence_number = read_opt_long(c, node)?.unwrap_or(0),
            Slot::AddedFiles => m.added_files_count = read_opt_int(c, node)?,
            Slot::ExistingFiles => m.existing_files_count = read_opt_int(c, node)?,
            Slot::DeletedFiles => m.deleted_files_count = read_opt_int(c, node)?,
            Slot::AddedRows => m.added_rows_count = read_opt_long(c, node)?,
            Slot::ExistingRows => m.existing_rows_count = read_opt_long(c, node)?,
            Slot::DeletedRows => m.deleted_rows_count = read_opt_long(c, node)?,
            Slot::KeyMetadata => m.key_metadata = read_opt_bytes(c, node)?.map(<[u8]>::to_vec),
            Slot::FirstRowId => m.first_row_id = read_opt_long(c, node)?,
            Slot::Partitions => {
                if c.read_optional(node)?.is_some() {
                    let mut v = Vec::new();
                    loop {
                        let n = c.read_block_count()?;
                        if n == 0 {
                            break;
                        }
                        v.reserve(n.min(1 << 12));
                        for _ in 0..n {
                            v.push(decode_summary(c, &plan.summary)?);
                        }
                    }
                    m.partitions = Some(v);
                }
            }
            Slot::Skip => c.skip(node)?,
        }
    }
    m.manifest_path = required(path, "manifest_path (500)")?.to_string();
    m.manifest_length = required(length, "manifest_length (501)")?;
    m.partition_spec_id = required(spec_id, "partition_spec_id (502)")?;
    // v1 lists may have a null added_snapshot_id only in legacy files; Java reads it as null.
    m.added_snapshot_id = required(snapshot_id, "added_snapshot_id (503)")?;
    Ok(m)
}

fn decode_list(container: &Container) -> Result<Vec<ManifestFile>> {
    let plan = compile_list_plan(&container.schema)?;
    container.decode_all(|c| decode_manifest_file(c, &plan))
}

/// Reads a manifest list (v1 or v2). Fields are resolved by field id; fields a v1 list lacks
/// get the v2 defaults (content data, sequence numbers 0).
pub fn read_manifest_list(path: &str) -> Result<Vec<ManifestFile>> {
    let bytes = io::read_file(path)?;
    read_manifest_list_bytes(&bytes).map_err(|e| e.with_context("file", path))
}

/// [`read_manifest_list`] on bytes already in memory (errors carry no file name).
pub fn read_manifest_list_bytes(bytes: &[u8]) -> Result<Vec<ManifestFile>> {
    let container = avro::read_container(bytes)?;
    decode_list(&container)
}

// ---------------------------------------------------------------------------------------------
// Writing

/// The v2 `manifest_file` Avro schema, field for field as Iceberg Java writes it.
#[cfg(test)]
pub(crate) fn manifest_list_schema_v2() -> String {
    manifest_list_schema(false)
}

/// The `manifest_file` Avro schema of v2, or of v3 (`first_row_id` last).
pub(crate) fn manifest_list_schema(v3: bool) -> String {
    let summary = {
        let mut r = JsonWriter::record("r508");
        r.field(
            "contains_null",
            "\"boolean\"",
            Some("True if any file has a null partition value"),
            false,
            509,
        );
        r.field("contains_nan", "\"boolean\"", Some("True if any file has a nan partition value"), true, 518);
        r.field("lower_bound", "\"bytes\"", Some("Partition lower bound for all files"), true, 510);
        r.field("upper_bound", "\"bytes\"", Some("Partition upper bound for all files"), true, 511);
        r.finish()
    };
    let partitions = sj::array(&summary, 508);
    let mut r = JsonWriter::record("manifest_file");
    r.field("manifest_path", "\"string\"", Some("Location URI with FS scheme"), false, 500);
    r.field("manifest_length", "\"long\"", Some("Total file size in bytes"), false, 501);
    r.field("partition_spec_id", "\"int\"", Some("Spec ID used to write"), false, 502);
    r.field("content", "\"int\"", Some("Contents of the manifest: 0=data, 1=deletes"), false, 517);
    r.field("sequence_number", "\"long\"", Some("Sequence number when the manifest was added"), false, 515);
    r.field("min_sequence_number", "\"long\"", Some("Lowest sequence number in the manifest"), false, 516);
    r.field("added_snapshot_id", "\"long\"", Some("Snapshot ID that added the manifest"), false, 503);
    r.field("added_files_count", "\"int\"", Some("Added entry count"), false, 504);
    r.field("existing_files_count", "\"int\"", Some("Existing entry count"), false, 505);
    r.field("deleted_files_count", "\"int\"", Some("Deleted entry count"), false, 506);
    r.field("added_rows_count", "\"long\"", Some("Added rows count"), false, 512);
    r.field("existing_rows_count", "\"long\"", Some("Existing rows count"), false, 513);
    r.field("deleted_rows_count", "\"long\"", Some("Deleted rows count"), false, 514);
    r.field("partitions", &partitions, Some("Summary for each partition"), true, 507);
    r.field("key_metadata", "\"bytes\"", Some("Encryption key metadata blob"), true, 519);
    if v3 {
        r.field("first_row_id", "\"long\"", Some(FIRST_ROW_ID_DOC), true, 520);
    }
    r.finish()
}

const FIRST_ROW_ID_DOC: &str = "Starting row ID to assign to new rows in ADDED data files";

/// The `iceberg.schema` metadata Java writes in v2 manifest lists.
#[cfg(test)]
pub(crate) fn manifest_list_iceberg_schema_v2() -> String {
    manifest_list_iceberg_schema(false)
}

/// The `iceberg.schema` metadata of a v2 or (with `v3`) v3 manifest list.
pub(crate) fn manifest_list_iceberg_schema(v3: bool) -> String {
    let f = sj::iceberg_field;
    let summary = [
        f(509, "contains_null", true, "\"boolean\"", Some("True if any file has a null partition value")),
        f(518, "contains_nan", false, "\"boolean\"", Some("True if any file has a nan partition value")),
        f(510, "lower_bound", false, "\"binary\"", Some("Partition lower bound for all files")),
        f(511, "upper_bound", false, "\"binary\"", Some("Partition upper bound for all files")),
    ];
    let partitions = format!(
        "{{\"type\":\"list\",\"element-id\":508,\"element\":{{\"type\":\"struct\",\"fields\":[{}]}},\"element-required\":true}}",
        summary.join(",")
    );
    let mut fields = vec![
        f(500, "manifest_path", true, "\"string\"", Some("Location URI with FS scheme")),
        f(501, "manifest_length", true, "\"long\"", Some("Total file size in bytes")),
        f(502, "partition_spec_id", true, "\"int\"", Some("Spec ID used to write")),
        f(517, "content", true, "\"int\"", Some("Contents of the manifest: 0=data, 1=deletes")),
        f(515, "sequence_number", true, "\"long\"", Some("Sequence number when the manifest was added")),
        f(516, "min_sequence_number", true, "\"long\"", Some("Lowest sequence number in the manifest")),
        f(503, "added_snapshot_id", true, "\"long\"", Some("Snapshot ID that added the manifest")),
        f(504, "added_files_count", true, "\"int\"", Some("Added entry count")),
        f(505, "existing_files_count", true, "\"int\"", Some("Existing entry count")),
        f(506, "deleted_files_count", true, "\"int\"", Some("Deleted entry count")),
        f(512, "added_rows_count", true, "\"long\"", Some("Added rows count")),
        f(513, "existing_rows_count", true, "\"long\"", Some("Existing rows count")),
        f(514, "deleted_rows_count", true, "\"long\"", Some("Deleted rows count")),
        f(507, "partitions", false, &partitions, Some("Summary for each partition")),
        f(519, "key_metadata", false, "\"binary\"", Some("Encryption key metadata blob")),
    ];
    if v3 {
        fields.push(f(520, "first_row_id", false, "\"long\"", Some(FIRST_ROW_ID_DOC)));
    }
    format!("{{\"type\":\"struct\",\"schema-id\":0,\"fields\":[{}]}}", fields.join(","))
}

/// Writes a v2 manifest list like Java's `ManifestListWriter.V2Writer`.
///
/// Manifests whose `sequence_number` / `min_sequence_number` is [`UNASSIGNED_SEQ`] (written
/// by this commit) get the snapshot's sequence number, as Java assigns them at commit time.
pub struct ManifestListWriter {
    path: String,
    snapshot_id: i64,
    parent_snapshot_id: Option<i64>,
    sequence_number: i64,
    manifests: Vec<ManifestFile>,
    /// v3: the snapshot's first row id (the table's `next-row-id`), from which data
    /// manifests without a `first_row_id` are assigned theirs.
    first_row_id: Option<i64>,
}

impl ManifestListWriter {
    pub fn new(
        path: impl Into<String>,
        snapshot_id: i64,
        parent_snapshot_id: Option<i64>,
        sequence_number: i64,
    ) -> Self {
        ManifestListWriter {
            path: path.into(),
            snapshot_id,
            parent_snapshot_id,
            sequence_number,
            manifests: Vec::new(),
            first_row_id: None,
        }
    }

    /// Writes a v3 list: data manifests without a `first_row_id` get the next ids from
    /// `first_row_id` on, each moving them on by its added + existing rows (Java's
    /// `ManifestListWriter.V3Writer`); see [`Self::next_row_id`].
    pub fn with_row_lineage(mut self, first_row_id: i64) -> Self {
        self.first_row_id = Some(first_row_id);
        self
    }

    /// The row id after the last one this v3 list assigns (None for v2): the table's next
    /// `next-row-id`; minus `first_row_id`, the snapshot's `added-rows`.
    pub fn next_row_id(&self) -> Result<Option<i64>> {
        let Some(mut next) = self.first_row_id else { return Ok(None) };
        for m in &self.manifests {
            if m.content == ManifestContent::Data && m.first_row_id.is_none() {
                next = next.saturating_add(manifest_rows(m)?);
            }
        }
        Ok(Some(next))
    }

    pub fn add(&mut self, manifest: ManifestFile) {
        self.manifests.push(manifest);
    }

    pub fn add_all(&mut self, manifests: impl IntoIterator<Item = ManifestFile>) {
        self.manifests.extend(manifests);
    }

    /// Encodes the list in memory: the file's bytes and the manifests as written
    /// (sequence numbers assigned).
    pub fn to_bytes(&self) -> Result<(Vec<u8>, Vec<ManifestFile>)> {
        let v3 = self.first_row_id.is_some();
        let schema = manifest_list_schema(v3);
        let iceberg_schema = manifest_list_iceberg_schema(v3);
        let snapshot_id = self.snapshot_id.to_string();
        let parent = self.parent_snapshot_id.map_or_else(|| "null".to_string(), |p| p.to_string());
        let seq = self.sequence_number.to_string();
        let first = self.first_row_id.map(|v| v.to_string()).unwrap_or_default();
        let mut meta = vec![
            ("snapshot-id", snapshot_id.as_str()),
            ("parent-snapshot-id", parent.as_str()),
            ("sequence-number", seq.as_str()),
        ];
        if v3 {
            meta.push(("first-row-id", first.as_str()));
        }
        meta.push(("format-version", if v3 { "3" } else { "2" }));
        meta.push(("iceberg.schema", iceberg_schema.as_str()));
        let mut w = avro::ContainerWriter::new(&schema, &meta, avro::deflate());
        let mut written = Vec::with_capacity(self.manifests.len());
        let mut next_row_id = self.first_row_id;
        for m in &self.manifests {
            let mut m = self.assign_sequence_numbers(m)?;
            if let Some(next) = next_row_id.as_mut() {
                if m.content == ManifestContent::Data && m.first_row_id.is_none() {
                    m.first_row_id = Some(*next);
                    *next = next.saturating_add(manifest_rows(&m)?);
                }
            }
            encode_manifest_file(w.record_buf(), &m, v3)?;
            w.end_record()?;
            written.push(m);
        }
        Ok((w.finish()?, written))
    }

    fn assign_sequence_numbers(&self, m: &ManifestFile) -> Result<ManifestFile> {
        let mut m = m.clone();
        if m.sequence_number == UNASSIGNED_SEQ {
            if m.added_snapshot_id != self.snapshot_id {
                return Err(invalid_data(format!(
                    "manifest {} has no sequence number but was added by snapshot {}, not {}",
                    m.manifest_path, m.added_snapshot_id, self.snapshot_id
                )));
            }
            m.sequence_number = self.sequence_number;
        }
        if m.min_sequence_number == UNASSIGNED_SEQ {
            // Every entry inherits the sequence number assigned above.
            m.min_sequence_number = m.sequence_number;
        }
        Ok(m)
    }

    /// Writes the list to its path (which must not exist) and returns its exact length.
    pub fn write(self) -> Result<i64> {
        Ok(self.write_with_manifests()?.0)
    }

    /// Like [`Self::write`], also returning the manifests as written.
    pub fn write_with_manifests(self) -> Result<(i64, Vec<ManifestFile>)> {
        let (bytes, written) = self.to_bytes().map_err(|e| e.with_context("file", self.path.clone()))?;
        io::write_new_file(&self.path, &bytes)?;
        Ok((bytes.len() as i64, written))
    }
}

/// The rows a data manifest's files hold (added + existing): the row ids a v3 list gives it.
fn manifest_rows(m: &ManifestFile) -> Result<i64> {
    match (m.added_rows_count, m.existing_rows_count) {
        (Some(a), Some(e)) if a >= 0 && e >= 0 => Ok(a.saturating_add(e)),
        (a, e) => Err(invalid_data(format!(
            "a v3 manifest list needs the added and existing row counts of data manifests, found {a:?} and {e:?}"
        ))
        .with_context("manifest", m.manifest_path.clone())),
    }
}

fn encode_manifest_file(out: &mut Vec<u8>, m: &ManifestFile, v3: bool) -> Result<()> {
    let count = |v: Option<i32>, what: &str| -> Result<i32> {
        v.ok_or_else(|| {
            Error::new(crate::ErrorKind::Validation, format!("v2 manifest lists require {what}"))
                .with_context("manifest", m.manifest_path.clone())
        })
    };
    let rows = |v: Option<i64>, what: &str| -> Result<i64> {
        v.ok_or_else(|| {
            Error::new(crate::ErrorKind::Validation, format!("v2 manifest lists require {what}"))
                .with_context("manifest", m.manifest_path.clone())
        })
    };
    write_bytes(out, m.manifest_path.as_bytes());
    write_long(out, m.manifest_length);
    write_long(out, i64::from(m.partition_spec_id));
    write_long(out, m.content as i64);
    write_long(out, m.sequence_number);
    write_long(out, m.min_sequence_number);
    write_long(out, m.added_snapshot_id);
    write_long(out, i64::from(count(m.added_files_count, "added_files_count")?));
    write_long(out, i64::from(count(m.existing_files_count, "existing_files_count")?));
    write_long(out, i64::from(count(m.deleted_files_count, "deleted_files_count")?));
    write_long(out, rows(m.added_rows_count, "added_rows_count")?);
    write_long(out, rows(m.existing_rows_count, "existing_rows_count")?);
    write_long(out, rows(m.deleted_rows_count, "deleted_rows_count")?);
    write_opt(out, m.partitions.as_ref(), |out, parts| {
        if !parts.is_empty() {
            write_long(out, parts.len() as i64);
            for p in parts {
                out.push(u8::from(p.contains_null));
                write_opt(out, p.contains_nan, |o, b| o.push(u8::from(b)));
                write_opt(out, p.lower_bound.as_deref(), write_bytes);
                write_opt(out, p.upper_bound.as_deref(), write_bytes);
            }
        }
        write_long(out, 0);
    });
    write_opt(out, m.key_metadata.as_deref(), write_bytes);
    if v3 {
        write_opt(out, m.first_row_id, write_long);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample(i: i64) -> ManifestFile {
        ManifestFile {
            manifest_path: format!("/tmp/t/metadata/m{i}.avro"),
            manifest_length: 1000 + i,
            partition_spec_id: 1,
            content: if i % 2 == 0 { ManifestContent::Data } else { ManifestContent::Deletes },
            sequence_number: 7,
            min_sequence_number: 3,
            added_snapshot_id: 99,
            added_files_count: Some(1),
            existing_files_count: Some(2),
            deleted_files_count: Some(3),
            added_rows_count: Some(10),
            existing_rows_count: Some(20),
            deleted_rows_count: Some(30),
            partitions: Some(vec![
                FieldSummary {
                    contains_null: true,
                    contains_nan: Some(false),
                    lower_bound: Some(vec![1, 0, 0, 0]),
                    upper_bound: Some(vec![9, 0, 0, 0]),
                },
                FieldSummary {
                    contains_null: true,
                    contains_nan: None,
                    lower_bound: None,
                    upper_bound: None,
                },
            ]),
            key_metadata: (i == 1).then(|| vec![0xde, 0xad]),
            first_row_id: None,
        }
    }

    #[test]
    fn round_trip_with_assignment_and_metadata() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("snap-1.avro").display().to_string();
        let mut w = ManifestListWriter::new(&path, 99, None, 7);
        let mut unassigned = sample(0);
        unassigned.sequence_number = UNASSIGNED_SEQ;
        unassigned.min_sequence_number = UNASSIGNED_SEQ;
        unassigned.partitions = Some(vec![]);
        w.add(unassigned);
        w.add_all([sample(1), sample(2)]);
        let len = w.write().unwrap();
        assert_eq!(len as u64, std::fs::metadata(&path).unwrap().len());

        let got = read_manifest_list(&path).unwrap();
        let mut expected0 = sample(0);
        expected0.min_sequence_number = 7;
        expected0.partitions = Some(vec![]);
        assert_eq!(got, vec![expected0, sample(1), sample(2)]);

        let bytes = std::fs::read(&path).unwrap();
        let r = apache_avro::Reader::new(&bytes[..]).unwrap();
        let meta = r.user_metadata();
        assert_eq!(meta["parent-snapshot-id"], b"null");
        assert_eq!(meta["snapshot-id"], b"99");
        assert_eq!(meta["sequence-number"], b"7");
        assert_eq!(meta["format-version"], b"2");
        assert_eq!(r.count(), 3);
        let c = avro::read_container(&bytes).unwrap();
        assert_eq!(c.meta_str("avro.codec"), Some("deflate"));
    }

    #[test]
    fn unassigned_sequence_of_other_snapshot_is_an_error() {
        let mut w = ManifestListWriter::new("/nonexistent/x.avro", 5, Some(4), 2);
        let mut m = sample(0);
        m.sequence_number = UNASSIGNED_SEQ;
        w.add(m);
        assert!(w.to_bytes().is_err());
    }

    #[test]
    fn errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.avro").display().to_string();
        let e = read_manifest_list(&missing).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::NotFound);
        assert!(e.to_string().contains("missing.avro"), "{e}");

        let path = dir.path().join("l.avro").display().to_string();
        let mut w = ManifestListWriter::new(&path, 99, Some(98), 7);
        w.add_all((0..50).map(sample));
        w.write().unwrap();
        let bytes = std::fs::read(&path).unwrap();

        let bad = dir.path().join("bad.avro").display().to_string();
        let mut wrong = bytes.clone();
        wrong[0] = b'X';
        std::fs::write(&bad, &wrong).unwrap();
        let e = read_manifest_list(&bad).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidData);
        assert!(e.to_string().contains("bad.avro") && e.to_string().contains("magic"), "{e}");

        for cut in [10, bytes.len() / 2, bytes.len() - 1, bytes.len() - 17] {
            let t = dir.path().join(format!("trunc{cut}.avro")).display().to_string();
            std::fs::write(&t, &bytes[..cut]).unwrap();
            let e = read_manifest_list(&t).unwrap_err();
            assert!(e.to_string().contains(&format!("trunc{cut}.avro")), "{e}");
        }
    }
}
