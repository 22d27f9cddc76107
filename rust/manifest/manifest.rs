//! Manifests (checklist §3): entries of data or delete files of one partition spec. Reading
//! applies the spec's inheritance rules; the writer produces v2 manifests like Iceberg Java's
//! `ManifestWriter` and computes the manifest-list entry (counts, partition summaries).

use super::avro;
use super::data_file::DataContentType;
use super::manifest_decode::{compile_entry_plan, decode_entry, EntryPlan, StatsProjection};
use super::manifest_list::{ManifestContent, ManifestFile};
use crate::error::{invalid_data, resource_limit, Result};
use crate::io;
use crate::spec::{PartitionSpec, Schema, StructType};

// The entries live in `manifest_entry.rs` (which `manifest_decode` reads into); their old path
// `icefloe::manifest::manifest::{EntryStatus, ManifestEntry}` still works.
pub use super::manifest_entry::{EntryStatus, ManifestEntry};

/// The key/value metadata of a manifest file, plus the partition type its schema declares.
#[derive(Debug, Clone, PartialEq)]
pub struct ManifestMetadata {
    /// `schema`: the table schema JSON the manifest was written with.
    pub schema_json: Option<String>,
    /// `partition-spec`: the JSON array of partition fields.
    pub partition_spec_json: Option<String>,
    /// `partition-spec-id` (0 when absent).
    pub partition_spec_id: i32,
    /// `format-version` (1 when absent and the entries have no sequence numbers).
    pub format_version: i32,
    pub content: ManifestContent,
    /// One optional field per partition field (id, name, result type), from the Avro schema.
    pub partition_type: StructType,
}

impl ManifestMetadata {
    /// The table schema the manifest was written with, if recorded.
    pub fn schema(&self) -> Result<Option<Schema>> {
        self.schema_json.as_deref().map(Schema::from_json_str).transpose()
    }

    /// The partition spec the manifest was written with, if recorded.
    pub fn partition_spec(&self) -> Result<Option<PartitionSpec>> {
        let Some(text) = self.partition_spec_json.as_deref() else {
            return Ok(None);
        };
        let v: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| invalid_data("manifest partition-spec is not valid JSON").with_source(e))?;
        PartitionSpec::from_fields_json(self.partition_spec_id, &v).map(Some)
    }
}

/// A decoded manifest: its metadata and entries.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    pub metadata: ManifestMetadata,
    pub entries: Vec<ManifestEntry>,
}

impl Manifest {
    /// Decodes a manifest held in memory, entries as written (no inheritance). Errors carry
    /// no file name.
    pub fn parse(bytes: &[u8]) -> Result<Manifest> {
        Manifest::parse_projected(bytes, &StatsProjection::All)
    }

    /// [`Manifest::parse`] keeping only the column stats `stats` keeps.
    pub fn parse_projected(bytes: &[u8], stats: &StatsProjection) -> Result<Manifest> {
        let mut entries = Vec::new();
        let metadata = parse_each(bytes, stats, |e| {
            entries.push(e);
            Ok(())
        })?;
        Ok(Manifest { metadata, entries })
    }
}

/// Decodes a manifest held in memory, handing each entry (as written) to `f`; returns the
/// metadata.
fn parse_each(
    bytes: &[u8],
    stats: &StatsProjection,
    mut f: impl FnMut(ManifestEntry) -> Result<()>,
) -> Result<ManifestMetadata> {
    let container = avro::read_container(bytes)?;
    let plan: EntryPlan = compile_entry_plan(&container.schema)?;
    let meta_int = |key: &str| -> Result<Option<i32>> {
        container
            .meta_str(key)
            .map(|s| {
                s.trim()
                    .parse::<i32>()
                    .map_err(|_| invalid_data(format!("manifest metadata {key} is not an int: '{s}'")))
            })
            .transpose()
    };
    let partition_spec_id = meta_int("partition-spec-id")?.unwrap_or(0);
    let format_version = meta_int("format-version")?.unwrap_or(if plan.has_sequence_numbers { 2 } else { 1 });
    let content = match container.meta_str("content") {
        None | Some("data") => ManifestContent::Data,
        Some("deletes") => ManifestContent::Deletes,
        Some(other) => {
            return Err(invalid_data(format!(
                "expected manifest content 'data' or 'deletes', found '{other}'"
            )))
        }
    };
    container.decode_each(|c| f(decode_entry(c, &plan, partition_spec_id, stats)?))?;
    Ok(ManifestMetadata {
        schema_json: container.meta_str("schema").map(str::to_string),
        partition_spec_json: container.meta_str("partition-spec").map(str::to_string),
        partition_spec_id,
        format_version,
        content,
        partition_type: plan.partition_type,
    })
}

impl Manifest {
    /// Applies the spec's inheritance from the manifest-list entry: a null snapshot id takes the
    /// manifest's `added_snapshot_id`; null sequence numbers take the manifest's sequence number
    /// for ADDED entries, or always when that is 0 (v1). Also sets every file's `spec_id`.
    pub fn inherit(&mut self, manifest: &ManifestFile) {
        let seq = manifest.sequence_number;
        let mut row_ids = RowIds::new(manifest);
        for e in &mut self.entries {
            inherit_entry(e, manifest, seq);
            row_ids.assign(e);
        }
    }
}

/// First row id inheritance (v3 row lineage, Java `ManifestReader.idAssigner`): in a data
/// manifest with a `first_row_id`, each live data file without one takes the next id, and
/// the next id moves on by its record count; a manifest without one (written before v3)
/// leaves every file without one. Entries must come in file order.
struct RowIds(Option<i64>);

impl RowIds {
    fn new(manifest: &ManifestFile) -> Self {
        RowIds(match manifest.content {
            ManifestContent::Data => manifest.first_row_id,
            ManifestContent::Deletes => None,
        })
    }

    fn assign(&mut self, e: &mut ManifestEntry) {
        let f = &mut e.data_file;
        if f.content != DataContentType::Data {
            return;
        }
        match &mut self.0 {
            None => f.first_row_id = None,
            Some(next) => {
                if e.status != EntryStatus::Deleted && f.first_row_id.is_none() {
                    f.first_row_id = Some(*next);
                    *next = next.saturating_add(f.record_count.max(0));
                }
            }
        }
    }
}

#[inline]
fn inherit_entry(e: &mut ManifestEntry, manifest: &ManifestFile, seq: i64) {
    if e.snapshot_id.is_none() {
        e.snapshot_id = Some(manifest.added_snapshot_id);
    }
    let inherit_seq = seq == 0 || e.status == EntryStatus::Added;
    if e.sequence_number.is_none() && inherit_seq {
        e.sequence_number = Some(seq);
    }
    if e.file_sequence_number.is_none() && inherit_seq {
        e.file_sequence_number = Some(seq);
    }
    e.data_file.spec_id = manifest.partition_spec_id;
}

fn read_checked(manifest: &ManifestFile, stats: &StatsProjection) -> Result<Manifest> {
    // The list's counts size the vector; never more than the file could hold.
    let listed = [manifest.added_files_count, manifest.existing_files_count, manifest.deleted_files_count];
    let n: i64 = listed.iter().map(|c| i64::from(c.unwrap_or(0).max(0))).sum();
    let mut entries = Vec::with_capacity((n.min(manifest.manifest_length / 8).max(0)) as usize);
    let metadata = read_each(manifest, stats, |e| {
        entries.push(e);
        Ok(())
    })?;
    Ok(Manifest { metadata, entries })
}

/// The environment variable that sets the largest manifest icefloe reads (MB).
pub const MANIFEST_MAX_ENV: &str = "ICEFLOE_MANIFEST_MAX_MB";

/// Default largest manifest: 1 GB. A manifest is read into memory whole and its entries
/// streamed from there; Java's writers roll manifests at 8 MB
/// (`commit.manifest.target-size-bytes`), so a manifest past this is damage or a runaway
/// writer, and the driver fails with a clear error instead of being OOM-killed.
pub const DEFAULT_MANIFEST_MAX_MB: i64 = 1024;

fn manifest_max_bytes() -> i64 {
    let mb = std::env::var(MANIFEST_MAX_ENV).ok().and_then(|v| v.trim().parse::<i64>().ok());
    mb.unwrap_or(DEFAULT_MANIFEST_MAX_MB).saturating_mul(1 << 20)
}

/// Refuses a manifest whose recorded length is past `ICEFLOE_MANIFEST_MAX_MB`, before any
/// byte of it is read.
fn check_manifest_size(manifest: &ManifestFile) -> Result<()> {
    let max = manifest_max_bytes();
    if manifest.manifest_length <= max {
        return Ok(());
    }
    Err(resource_limit(format!(
        "manifest is {} MB (its manifest list entry's manifest_length), past the {} MB icefloe reads into \
         memory ({MANIFEST_MAX_ENV}); raise it where the driver has the memory, then rewrite_manifests()",
        manifest.manifest_length >> 20,
        max >> 20
    ))
    .with_context("file", manifest.manifest_path.as_str()))
}

fn read_each(
    manifest: &ManifestFile,
    stats: &StatsProjection,
    mut f: impl FnMut(ManifestEntry) -> Result<()>,
) -> Result<ManifestMetadata> {
    let path = manifest.manifest_path.as_str();
    check_manifest_size(manifest)?;
    let bytes = io::read_file(path)?;
    // The list records the exact length (T2): a shorter file lost whole blocks, which Avro
    // alone cannot notice.
    if bytes.len() as i64 != manifest.manifest_length {
        return Err(invalid_data(format!(
            "manifest is {} bytes but the manifest list records {} (truncated or replaced file)",
            bytes.len(),
            manifest.manifest_length
        ))
        .with_context("file", path));
    }
    let seq = manifest.sequence_number;
    let mut n = 0i64;
    let mut row_ids = RowIds::new(manifest);
    let metadata = parse_each(&bytes, stats, |mut e| {
        inherit_entry(&mut e, manifest, seq);
        row_ids.assign(&mut e);
        n += 1;
        f(e)
    })
    .map_err(|e| e.with_context("file", path))?;
    let counts = [manifest.added_files_count, manifest.existing_files_count, manifest.deleted_files_count];
    if counts.iter().all(Option::is_some) {
        let expected: i64 = counts.iter().map(|c| i64::from(c.unwrap_or(0))).sum();
        if expected != n {
            return Err(invalid_data(format!(
                "manifest has {n} entries but the manifest list counts {expected}"
            ))
            .with_context("file", path));
        }
    }
    Ok(metadata)
}

/// Streams a manifest named by a manifest-list entry: each entry, with inheritance applied
/// and only the column stats `stats` keeps, goes to `f` as it is decoded (no entry vector);
/// returns the metadata. Checks as [`read_manifest`] does (after the entries: a caller
/// must drop what it built from them when this fails).
pub fn read_manifest_each(
    manifest: &ManifestFile,
    stats: &StatsProjection,
    f: impl FnMut(ManifestEntry) -> Result<()>,
) -> Result<ManifestMetadata> {
    read_each(manifest, stats, f)
}

/// Reads a manifest named by a manifest-list entry, with inheritance applied: every entry has
/// a snapshot id, and sequence numbers wherever the spec defines them. Checks the file length
/// and the entry count against the list.
pub fn read_manifest(manifest: &ManifestFile) -> Result<Vec<ManifestEntry>> {
    Ok(read_checked(manifest, &StatsProjection::All)?.entries)
}

/// [`read_manifest`], also returning the manifest's metadata.
pub fn read_manifest_with_metadata(manifest: &ManifestFile) -> Result<Manifest> {
    read_checked(manifest, &StatsProjection::All)
}

/// [`read_manifest_with_metadata`] keeping only the column stats `stats` keeps (the scan
/// planner's fast path: the maps it does not read are skipped without allocating).
pub fn read_manifest_projected(manifest: &ManifestFile, stats: &StatsProjection) -> Result<Manifest> {
    read_checked(manifest, stats)
}

#[cfg(test)]
#[path = "manifest_tests.rs"]
mod tests;
