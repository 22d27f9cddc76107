//! Writing Puffin files: `Magic Blob₁ … Blobₙ Footer`, streamed through FileIO (a local file
//! or an object-store upload), blobs stored uncompressed and the footer payload as plain
//! UTF-8 JSON, as Iceberg Java 1.10's `PuffinWriter` writes them for deletion vectors.
//!
//! The footer JSON keeps Java's key order (`FileMetadataParser`: type, fields, snapshot-id,
//! sequence-number, offset, length, compression-codec when set, properties) and each property
//! map in the order it was given (Java's `ImmutableMap`), so a file written here for the same
//! blobs is byte for byte the file Java writes. The first blob starts at offset 4, right after
//! the leading magic.

use std::io::Write;

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use super::deletion_vector::DeletionVector;
use super::file::{BlobMetadata, CARDINALITY, CREATED_BY, DELETION_VECTOR_V1, MAGIC, REFERENCED_DATA_FILE};
use crate::error::{validation, Error, ErrorKind, Result};
use crate::io::OutputFile;

/// The reserved field id of `_pos`, which a deletion vector blob lists as its input field.
pub const ROW_POSITION_FIELD_ID: i32 = 2147483645;

/// The `created-by` value of files written here.
pub fn created_by() -> String {
    format!("icefloe {}", env!("CARGO_PKG_VERSION"))
}

/// One blob to write: its footer fields and its bytes (stored as given, uncompressed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob {
    pub blob_type: String,
    pub fields: Vec<i32>,
    pub snapshot_id: i64,
    pub sequence_number: i64,
    pub data: Vec<u8>,
    /// Written in this order (Java writes its `ImmutableMap` in insertion order).
    pub properties: Vec<(String, String)>,
}

impl Blob {
    /// The `deletion-vector-v1` blob of `dv` for the data file at `referenced_data_file`, as
    /// Java's `BaseDVFileWriter.toBlob` builds it: field `_pos`, snapshot id and sequence
    /// number -1 (inherited from the manifest entry), properties `referenced-data-file` then
    /// `cardinality`.
    pub fn deletion_vector(dv: &DeletionVector, referenced_data_file: &str) -> Result<Self> {
        Ok(Blob {
            blob_type: DELETION_VECTOR_V1.to_string(),
            fields: vec![ROW_POSITION_FIELD_ID],
            snapshot_id: -1,
            sequence_number: -1,
            data: dv.serialize()?,
            properties: vec![
                (REFERENCED_DATA_FILE.to_string(), referenced_data_file.to_string()),
                (CARDINALITY.to_string(), dv.cardinality().to_string()),
            ],
        })
    }
}

/// A blob as written: where it lies, for the footer and for the caller (a deletion vector's
/// `content_offset` / `content_size_in_bytes`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct WrittenBlob {
    blob_type: String,
    fields: Vec<i32>,
    snapshot_id: i64,
    sequence_number: i64,
    offset: u64,
    length: u64,
    properties: Vec<(String, String)>,
}

/// A Puffin file being written. [`PuffinWriter::finish`] writes the footer and completes the
/// file; [`PuffinWriter::abort`] removes it. A writer dropped unfinished leaves a partial
/// file or upload behind: callers finish or abort.
#[derive(Debug)]
pub struct PuffinWriter {
    output: OutputFile,
    location: String,
    /// Bytes written so far: the offset of the next blob.
    position: u64,
    blobs: Vec<WrittenBlob>,
    properties: Vec<(String, String)>,
}

impl PuffinWriter {
    /// Creates the file at `location` (which must not exist) and writes the leading magic.
    /// `properties` are the file's footer properties, in order (e.g. `created-by`).
    pub fn create(location: &str, properties: Vec<(String, String)>) -> Result<Self> {
        check_unique_keys(&properties, "file properties", location)?;
        let output = OutputFile::create(location)?;
        let mut w = PuffinWriter {
            output,
            location: location.to_string(),
            position: 0,
            blobs: Vec::new(),
            properties,
        };
        if let Err(e) = w.write_bytes(&MAGIC) {
            w.abort();
            return Err(e);
        }
        Ok(w)
    }

    /// [`PuffinWriter::create`] with `created-by` set to [`created_by`].
    pub fn create_default(location: &str) -> Result<Self> {
        Self::create(location, vec![(CREATED_BY.to_string(), created_by())])
    }

    pub fn location(&self) -> &str {
        &self.location
    }

    /// Appends `blob` and returns its footer entry (offset and length as stored).
    pub fn write(&mut self, blob: Blob) -> Result<BlobMetadata> {
        check_unique_keys(&blob.properties, "blob properties", &self.location)?;
        let offset = self.position;
        self.write_bytes(&blob.data)?;
        let written = WrittenBlob {
            blob_type: blob.blob_type,
            fields: blob.fields,
            snapshot_id: blob.snapshot_id,
            sequence_number: blob.sequence_number,
            offset,
            length: blob.data.len() as u64,
            properties: blob.properties,
        };
        let meta = BlobMetadata {
            blob_type: written.blob_type.clone(),
            fields: written.fields.clone(),
            snapshot_id: written.snapshot_id,
            sequence_number: written.sequence_number,
            offset: written.offset,
            length: written.length,
            compression_codec: None,
            properties: written.properties.iter().cloned().collect(),
        };
        self.blobs.push(written);
        Ok(meta)
    }

    /// Writes the footer and completes the file; returns its size in bytes. On error the
    /// file is removed.
    pub fn finish(self) -> Result<u64> {
        self.finish_sizes().map(|(size, _footer)| size)
    }

    /// [`PuffinWriter::finish`], also returning the footer's size in bytes (a statistics
    /// file's `file-footer-size-in-bytes`): `(file size, footer size)`.
    pub fn finish_sizes(mut self) -> Result<(u64, u64)> {
        let footer_start = self.position;
        let done = self.write_footer().and_then(|()| self.output.finish());
        match done {
            Ok(()) => Ok((self.position, self.position - footer_start)),
            Err(e) => {
                self.abort();
                Err(e)
            }
        }
    }

    /// Removes what was written (best effort: the caller is already handling an error).
    pub fn abort(mut self) {
        let _ = self.output.abort();
    }

    fn write_footer(&mut self) -> Result<()> {
        let payload = footer_payload(&self.blobs, &self.properties, &self.location)?;
        let size = i32::try_from(payload.len()).map_err(|_| {
            validation(format!(
                "Puffin footer payload of {} bytes is over the 2 GiB its size field can hold",
                payload.len()
            ))
            .with_context("file", self.location.clone())
        })?;
        let mut footer = Vec::with_capacity(payload.len() + 16);
        footer.extend_from_slice(&MAGIC);
        footer.extend_from_slice(&payload);
        footer.extend_from_slice(&size.to_le_bytes());
        // Flags: no compressed footer, nothing else defined.
        footer.extend_from_slice(&[0u8; 4]);
        footer.extend_from_slice(&MAGIC);
        self.write_bytes(&footer)
    }

    fn write_bytes(&mut self, bytes: &[u8]) -> Result<()> {
        self.output.write_all(bytes).map_err(|e| {
            Error::new(
                ErrorKind::Io,
                format!("cannot write {} bytes at offset {}", bytes.len(), self.position),
            )
            .with_context("file", self.location.clone())
            .with_source(e)
        })?;
        self.position += bytes.len() as u64;
        Ok(())
    }
}

/// Java's `ImmutableMap` refuses a repeated key; a JSON object with one would be ambiguous.
fn check_unique_keys(props: &[(String, String)], what: &str, location: &str) -> Result<()> {
    for (i, (k, _)) in props.iter().enumerate() {
        if props.iter().take(i).any(|(other, _)| other == k) {
            return Err(validation(format!("Puffin {what} expected unique keys, found '{k}' twice"))
                .with_context("file", location));
        }
    }
    Ok(())
}

/// A property list serialized as a JSON object in its own order.
struct OrderedMap<'a>(&'a [(String, String)]);

impl Serialize for OrderedMap<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

fn is_empty(props: &OrderedMap<'_>) -> bool {
    props.0.is_empty()
}

/// One footer blob entry, fields in `FileMetadataParser`'s order. Blobs are never
/// compressed here, so `compression-codec` is never written (Java omits it when null).
#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct BlobJson<'a> {
    #[serde(rename = "type")]
    blob_type: &'a str,
    fields: &'a [i32],
    snapshot_id: i64,
    sequence_number: i64,
    offset: u64,
    length: u64,
    #[serde(skip_serializing_if = "is_empty")]
    properties: OrderedMap<'a>,
}

#[derive(Serialize)]
struct FooterJson<'a> {
    blobs: Vec<BlobJson<'a>>,
    #[serde(skip_serializing_if = "is_empty")]
    properties: OrderedMap<'a>,
}

/// The footer payload: compact JSON, as Java's `FileMetadataParser.toJson(metadata, false)`.
fn footer_payload(blobs: &[WrittenBlob], properties: &[(String, String)], location: &str) -> Result<Vec<u8>> {
    let footer = FooterJson {
        blobs: blobs
            .iter()
            .map(|b| BlobJson {
                blob_type: &b.blob_type,
                fields: &b.fields,
                snapshot_id: b.snapshot_id,
                sequence_number: b.sequence_number,
                offset: b.offset,
                length: b.length,
                properties: OrderedMap(&b.properties),
            })
            .collect(),
        properties: OrderedMap(properties),
    };
    serde_json::to_vec(&footer).map_err(|e| {
        Error::new(ErrorKind::Internal, "cannot serialize the Puffin footer")
            .with_context("file", location)
            .with_source(e)
    })
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
