//! Writing manifests (Iceberg Java's `ManifestWriter`): entries encoded in Java's field order
//! for format v2 or v3, the partition field summaries and counts of the manifest-list entry.

use std::cmp::Ordering;

use super::avro;
use super::data_file::{DataContentType, DataFile};
use super::manifest_encode::encode_entry;
use super::manifest_entry::{EntryStatus, ManifestEntry};
use super::manifest_list::{FieldSummary, ManifestContent, ManifestFile, UNASSIGNED_SEQ};
use super::manifest_schema::{manifest_entry_iceberg_schema, manifest_entry_schema};
use crate::error::{validation, Result};
use crate::io;
use crate::spec::{Literal, NestedFieldRef, PartitionSpec, Schema, StructType, StructValue, TableMetadata};

/// Min/max/null/NaN of one partition field over all entries (Java `PartitionSummary`).
#[derive(Debug, Clone, Default)]
struct SummaryAcc {
    contains_null: bool,
    contains_nan: bool,
    lower: Option<Literal>,
    upper: Option<Literal>,
}

impl SummaryAcc {
    fn update(&mut self, v: Option<&Literal>) {
        let Some(v) = v else {
            self.contains_null = true;
            return;
        };
        let is_nan = match v {
            Literal::Float(f) => f.is_nan(),
            Literal::Double(f) => f.is_nan(),
            _ => false,
        };
        if is_nan {
            self.contains_nan = true;
            return;
        }
        if self.lower.as_ref().is_none_or(|l| v.cmp_same_type(l) == Some(Ordering::Less)) {
            self.lower = Some(v.clone());
        }
        if self.upper.as_ref().is_none_or(|u| v.cmp_same_type(u) == Some(Ordering::Greater)) {
            self.upper = Some(v.clone());
        }
    }

    fn finish(&self) -> FieldSummary {
        FieldSummary {
            contains_null: self.contains_null,
            contains_nan: Some(self.contains_nan),
            lower_bound: self.lower.as_ref().map(Literal::to_bytes),
            upper_bound: self.upper.as_ref().map(Literal::to_bytes),
        }
    }
}

/// Writes a v2 data or delete manifest like Java's `ManifestWriter`, then returns its
/// manifest-list entry ([`ManifestWriter::close`]). Sequence numbers of this commit are left
/// [`UNASSIGNED_SEQ`] for the [`super::ManifestListWriter`] to fill in.
pub struct ManifestWriter {
    path: String,
    snapshot_id: i64,
    content: ManifestContent,
    spec_id: i32,
    partition_type: StructType,
    writer: avro::ContainerWriter,
    summaries: Vec<SummaryAcc>,
    added: (i32, i64),
    existing: (i32, i64),
    deleted: (i32, i64),
    min_sequence_number: Option<i64>,
    format_version: i32,
}

impl ManifestWriter {
    /// A writer for a manifest of `content` at `path` (which must not exist), for the snapshot
    /// `snapshot_id`, written with the table schema and one partition spec.
    pub fn new(
        path: impl Into<String>,
        snapshot_id: i64,
        content: ManifestContent,
        schema: &Schema,
        spec: &PartitionSpec,
    ) -> Result<Self> {
        Self::for_version(path, snapshot_id, content, schema, spec, 2)
    }

    /// A manifest of `table` for one of its specs, in the table's format version, its
    /// partition type as [`TableMetadata::partition_type_of`] gives it.
    pub fn for_table(
        path: impl Into<String>,
        snapshot_id: i64,
        content: ManifestContent,
        table: &TableMetadata,
        spec: &PartitionSpec,
    ) -> Result<Self> {
        let partition_type = table.partition_type_of(spec)?;
        Self::for_spec(
            path,
            snapshot_id,
            content,
            table.current_schema(),
            spec,
            partition_type,
            table.format_version(),
        )
    }

    /// [`Self::new`] for a table of format `version` (2 or 3: v3 entries carry
    /// `first_row_id`, `content_offset` and `content_size_in_bytes`).
    pub fn for_version(
        path: impl Into<String>,
        snapshot_id: i64,
        content: ManifestContent,
        schema: &Schema,
        spec: &PartitionSpec,
        version: i32,
    ) -> Result<Self> {
        let partition_type = spec.partition_type(schema)?;
        Self::for_spec(path, snapshot_id, content, schema, spec, partition_type, version)
    }

    fn for_spec(
        path: impl Into<String>,
        snapshot_id: i64,
        content: ManifestContent,
        schema: &Schema,
        spec: &PartitionSpec,
        partition_type: StructType,
        version: i32,
    ) -> Result<Self> {
        let mut w = Self::with_partition_type(
            path,
            snapshot_id,
            content,
            &schema.to_json_string(),
            spec.spec_id,
            &spec.fields_to_json().to_string(),
            partition_type,
            version,
        )?;
        w.format_version = version;
        Ok(w)
    }

    /// Like [`Self::new`] with the pieces given directly: the table schema JSON, the spec id,
    /// the spec's JSON array of fields, and the partition type (one field per spec field).
    #[allow(clippy::too_many_arguments)]
    pub fn with_partition_type(
        path: impl Into<String>,
        snapshot_id: i64,
        content: ManifestContent,
        schema_json: &str,
        spec_id: i32,
        partition_spec_fields_json: &str,
        partition_type: StructType,
        version: i32,
    ) -> Result<Self> {
        if !(2..=3).contains(&version) {
            return Err(validation(format!(
                "cannot write a manifest of format version {version}: expected 2 or 3"
            )));
        }
        let path = path.into();
        let avro_schema = manifest_entry_schema(&partition_type, version)?;
        let iceberg_schema = manifest_entry_iceberg_schema(&partition_type, version);
        let spec_id_text = spec_id.to_string();
        let version_text = version.to_string();
        let meta = [
            ("schema", schema_json),
            ("partition-spec", partition_spec_fields_json),
            ("partition-spec-id", spec_id_text.as_str()),
            ("format-version", version_text.as_str()),
            ("content", content.as_str()),
            ("iceberg.schema", iceberg_schema.as_str()),
        ];
        let writer = avro::ContainerWriter::new(&avro_schema, &meta, avro::deflate());
        let summaries = vec![SummaryAcc::default(); partition_type.fields.len()];
        Ok(ManifestWriter {
            path,
            snapshot_id,
            content,
            spec_id,
            partition_type,
            writer,
            summaries,
            added: (0, 0),
            existing: (0, 0),
            deleted: (0, 0),
            min_sequence_number: None,
            format_version: version,
        })
    }

    fn check_content(&self, f: &DataFile) -> Result<()> {
        let is_data = f.content == DataContentType::Data;
        if is_data != (self.content == ManifestContent::Data) {
            return Err(validation(format!(
                "cannot write a {:?} file to a {} manifest",
                f.content,
                self.content.as_str()
            ))
            .with_context("file", f.file_path.clone()));
        }
        Ok(())
    }

    /// Writes an entry as given (status, snapshot id and sequence numbers are not changed).
    pub fn add_entry(&mut self, entry: &ManifestEntry) -> Result<()> {
        self.check_content(&entry.data_file)?;
        let rows = entry.data_file.record_count;
        let counter = match entry.status {
            EntryStatus::Added => &mut self.added,
            EntryStatus::Existing => &mut self.existing,
            EntryStatus::Deleted => &mut self.deleted,
        };
        counter.0 += 1;
        counter.1 += rows;
        if entry.data_file.partition.len() != self.summaries.len() {
            return Err(validation(format!(
                "data file has {} partition values, spec {} has {} fields",
                entry.data_file.partition.len(),
                self.spec_id,
                self.summaries.len()
            ))
            .with_context("file", entry.data_file.file_path.clone()));
        }
        // An entry copied from a manifest written before a type promotion (merge append,
        // rewrites, copy-on-write) holds partition values of the old type: write them as the
        // field's current type, as Java's writer does with the values its reader promoted.
        let promoted = promoted_partition(&entry.data_file.partition, &self.partition_type);
        let entry = match promoted {
            Some(partition) => {
                let mut e = entry.clone();
                e.data_file.partition = partition;
                std::borrow::Cow::Owned(e)
            }
            None => std::borrow::Cow::Borrowed(entry),
        };
        for (acc, v) in self.summaries.iter_mut().zip(&entry.data_file.partition) {
            acc.update(v.as_ref());
        }
        if entry.status.is_live() {
            if let Some(s) = entry.sequence_number {
                self.min_sequence_number = Some(self.min_sequence_number.map_or(s, |m| m.min(s)));
            }
        }
        encode_entry(self.writer.record_buf(), &entry, &self.partition_type, self.format_version >= 3)
            .map_err(|e| e.with_context("manifest", self.path.clone()))?;
        self.writer.end_record()
    }

    /// Adds a file written by this snapshot: ADDED, sequence numbers inherited at commit.
    pub fn add(&mut self, data_file: DataFile) -> Result<()> {
        self.add_entry(&ManifestEntry {
            status: EntryStatus::Added,
            snapshot_id: Some(self.snapshot_id),
            sequence_number: None,
            file_sequence_number: None,
            data_file,
        })
    }

    /// Adds a file written by this snapshot with an explicit data sequence number (Java's
    /// `add(file, dataSequenceNumber)`): ADDED, the file sequence number inherited at commit.
    pub fn add_with_sequence_number(&mut self, data_file: DataFile, sequence_number: i64) -> Result<()> {
        self.add_entry(&ManifestEntry {
            status: EntryStatus::Added,
            snapshot_id: Some(self.snapshot_id),
            sequence_number: Some(sequence_number),
            file_sequence_number: None,
            data_file,
        })
    }

    /// Carries over a live file from an earlier snapshot: EXISTING, with its original snapshot
    /// id and sequence numbers.
    pub fn existing(
        &mut self,
        data_file: DataFile,
        snapshot_id: i64,
        sequence_number: i64,
        file_sequence_number: Option<i64>,
    ) -> Result<()> {
        self.add_entry(&ManifestEntry {
            status: EntryStatus::Existing,
            snapshot_id: Some(snapshot_id),
            sequence_number: Some(sequence_number),
            file_sequence_number,
            data_file,
        })
    }

    /// Records a file removed by this snapshot: DELETED, this snapshot's id, the file's
    /// original sequence numbers.
    pub fn delete(
        &mut self,
        data_file: DataFile,
        sequence_number: i64,
        file_sequence_number: Option<i64>,
    ) -> Result<()> {
        self.add_entry(&ManifestEntry {
            status: EntryStatus::Deleted,
            snapshot_id: Some(self.snapshot_id),
            sequence_number: Some(sequence_number),
            file_sequence_number,
            data_file,
        })
    }

    /// Bytes written so far, finished blocks only (Java's `ManifestWriter.length()`), for
    /// rolling to a new manifest at a target size.
    pub fn length(&self) -> i64 {
        self.writer.flushed_len() as i64
    }

    /// Number of entries written so far.
    pub fn entry_count(&self) -> i64 {
        i64::from(self.added.0) + i64::from(self.existing.0) + i64::from(self.deleted.0)
    }

    /// Finishes the file, writes it to its path and returns its manifest-list entry with the
    /// exact length. (Don't commit empty manifests: Java skips them, checklist T14.)
    pub fn close(self) -> Result<ManifestFile> {
        let bytes = self.writer.finish().map_err(|e| e.with_context("file", self.path.clone()))?;
        io::write_new_file(&self.path, &bytes)?;
        Ok(ManifestFile {
            manifest_path: self.path,
            manifest_length: bytes.len() as i64,
            partition_spec_id: self.spec_id,
            content: self.content,
            sequence_number: UNASSIGNED_SEQ,
            min_sequence_number: self.min_sequence_number.unwrap_or(UNASSIGNED_SEQ),
            added_snapshot_id: self.snapshot_id,
            added_files_count: Some(self.added.0),
            existing_files_count: Some(self.existing.0),
            deleted_files_count: Some(self.deleted.0),
            added_rows_count: Some(self.added.1),
            existing_rows_count: Some(self.existing.1),
            deleted_rows_count: Some(self.deleted.1),
            partitions: Some(self.summaries.iter().map(SummaryAcc::finish).collect()),
            key_metadata: None,
            first_row_id: None,
        })
    }
}

/// `values` with each value written before a promotion of its field (int -> long, float ->
/// double) as the field's current type in `ty`; `None` when none needs it.
fn promoted_partition(values: &StructValue, ty: &StructType) -> Option<StructValue> {
    let promote = |(v, f): (&Option<Literal>, &NestedFieldRef)| {
        v.as_ref().and_then(|v| v.promoted_to(f.field_type.as_primitive()?))
    };
    if !values.iter().zip(&ty.fields).any(|x| promote(x).is_some()) {
        return None;
    }
    Some(values.iter().zip(&ty.fields).map(|x| promote(x).or_else(|| x.0.clone())).collect())
}
