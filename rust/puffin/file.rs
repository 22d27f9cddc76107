//! The Puffin container: `Magic Blob₁ … Blobₙ Footer`, where the footer is
//! `Magic FooterPayload FooterPayloadSize Flags Magic` and the payload is the UTF-8 JSON
//! [`FileMetadata`] listing each blob's type, offset and length.
//!
//! Read side (`writer.rs` writes). A deletion vector does not need the footer (the manifest
//! entry holds its offset and length); the footer is for listing blobs and for checking what
//! a writer recorded.

use std::collections::BTreeMap;

use bytes::Bytes;
use parquet::file::reader::Length;
use serde::{Deserialize, Serialize};

use super::byte_range::{hex, read_range};
use super::deletion_vector::{self, DeletionVector};
use crate::error::{invalid_data, not_supported, Error, ErrorKind, Result};
use crate::io::InputFile;

/// The most bytes a compressed blob may decompress to (a sketch of 4096 entries is ~32 KiB).
const MAX_BLOB_BYTES: usize = 64 * 1024 * 1024;

/// The four bytes at the start of a Puffin file and at both ends of its footer.
pub const MAGIC: [u8; 4] = *b"PFA1";
/// The blob type of a v3 deletion vector.
pub const DELETION_VECTOR_V1: &str = "deletion-vector-v1";
/// Blob property: the location of the data file a deletion vector applies to.
pub const REFERENCED_DATA_FILE: &str = "referenced-data-file";
/// Blob property: the number of positions a deletion vector holds.
pub const CARDINALITY: &str = "cardinality";
/// File property recommended by the spec: the writing application and its version.
pub const CREATED_BY: &str = "created-by";

/// `FooterPayloadSize` (4) + `Flags` (4) + `Magic` (4): the fixed tail of every Puffin file.
const FOOTER_STRUCT_BYTES: u64 = 12;
/// Flags byte 0, bit 0: the footer payload is LZ4-compressed.
const FLAG_FOOTER_COMPRESSED: u8 = 0x01;

/// The footer payload: every blob in the file and the file's properties.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FileMetadata {
    pub blobs: Vec<BlobMetadata>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub properties: BTreeMap<String, String>,
}

/// One blob of a Puffin file as the footer describes it (field names as in the spec's JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct BlobMetadata {
    /// The blob type, e.g. [`DELETION_VECTOR_V1`].
    #[serde(rename = "type")]
    pub blob_type: String,
    /// Field ids the blob was computed for (a deletion vector lists the `_pos` column's id).
    pub fields: Vec<i32>,
    /// The snapshot the blob was computed from; -1 for deletion vectors.
    pub snapshot_id: i64,
    /// That snapshot's sequence number; -1 for deletion vectors.
    pub sequence_number: i64,
    /// Where the blob starts in the file.
    pub offset: u64,
    /// The blob's stored length (after compression, if compressed).
    pub length: u64,
    /// `lz4` or `zstd`; absent (or null) when the blob is stored uncompressed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compression_codec: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub properties: BTreeMap<String, String>,
}

impl BlobMetadata {
    /// The `referenced-data-file` property (deletion vectors).
    pub fn referenced_data_file(&self) -> Option<&str> {
        self.properties.get(REFERENCED_DATA_FILE).map(String::as_str)
    }

    /// The `cardinality` property (deletion vectors), parsed; `Ok(None)` when absent.
    pub fn cardinality(&self) -> Result<Option<u64>> {
        match self.properties.get(CARDINALITY) {
            None => Ok(None),
            Some(s) => s.parse::<u64>().map(Some).map_err(|e| {
                invalid_data(format!(
                    "blob property '{CARDINALITY}' expected a non-negative integer, found '{s}'"
                ))
                .with_source(e)
            }),
        }
    }
}

/// An open Puffin file with its footer read.
#[derive(Debug)]
pub struct PuffinFile {
    location: String,
    input: InputFile,
    metadata: FileMetadata,
}

impl PuffinFile {
    /// Opens `location` through FileIO and reads its footer. `file_size` (the delete file's
    /// `file_size_in_bytes`) saves a HEAD request on object stores.
    pub fn open(location: &str, file_size: Option<u64>) -> Result<Self> {
        let input = InputFile::open(location, file_size)?;
        let metadata = Self::read_footer(&input, location)?;
        Ok(Self { location: location.to_string(), input, metadata })
    }

    /// Reads and checks the footer of an opened file (`location` names it in errors).
    pub fn read_footer(input: &InputFile, location: &str) -> Result<FileMetadata> {
        parse_footer_with(input.len(), location, |offset, len| read_range(input, location, offset, len))
    }

    /// Reads and checks the footer of a whole Puffin file held in memory.
    pub fn parse_footer(file: &[u8], location: &str) -> Result<FileMetadata> {
        parse_footer_with(file.len() as u64, location, |offset, len| {
            let range = usize::try_from(offset)
                .ok()
                .and_then(|start| Some(start..start.checked_add(usize::try_from(len).ok()?)?));
            range.and_then(|r| file.get(r)).map(Bytes::copy_from_slice).ok_or_else(|| {
                Error::new(ErrorKind::Internal, format!("footer read {offset}+{len} outside the file"))
                    .with_context("file", location)
            })
        })
    }

    pub fn location(&self) -> &str {
        &self.location
    }

    pub fn metadata(&self) -> &FileMetadata {
        &self.metadata
    }

    /// The bytes of one blob, decompressed (`zstd`, as Java compresses statistics blobs);
    /// another codec is refused.
    pub fn read_blob(&self, blob: &BlobMetadata) -> Result<Bytes> {
        let stored = read_range(&self.input, &self.location, blob.offset, blob.length)?;
        match blob.compression_codec.as_deref() {
            None => Ok(stored),
            Some("zstd") => zstd::bulk::decompress(&stored, MAX_BLOB_BYTES).map(Bytes::from).map_err(|e| {
                invalid_data(format!(
                    "expected a zstd-compressed Puffin blob of type '{}' at offset {}, found bytes that do \
                     not decompress: {e}",
                    blob.blob_type, blob.offset
                ))
                .with_context("file", self.location.clone())
            }),
            Some(codec) => Err(not_supported(format!(
                "Puffin blob of type '{}' at offset {} is compressed with '{codec}'; only zstd is supported",
                blob.blob_type, blob.offset
            ))
            .with_context("file", self.location.clone())),
        }
    }

    /// Decodes a `deletion-vector-v1` blob of this file and checks its cardinality against the
    /// blob's `cardinality` property when the footer has one.
    pub fn read_deletion_vector(&self, blob: &BlobMetadata) -> Result<DeletionVector> {
        if blob.blob_type != DELETION_VECTOR_V1 {
            return Err(invalid_data(format!(
                "Puffin blob at offset {}: expected type '{DELETION_VECTOR_V1}', found '{}'",
                blob.offset, blob.blob_type
            ))
            .with_context("file", self.location.clone()));
        }
        if let Some(codec) = &blob.compression_codec {
            // The spec stores deletion vectors uncompressed.
            return Err(invalid_data(format!(
                "Puffin blob at offset {}: expected an uncompressed deletion vector, found one compressed \
                 with '{codec}'",
                blob.offset
            ))
            .with_context("file", self.location.clone()));
        }
        let bytes = self.read_blob(blob)?;
        let dv = deletion_vector::decode(&bytes, &self.location, Some(blob.offset))?;
        let at = |e: Error| e.with_context("file", self.location.clone());
        if let Some(expected) = blob.cardinality().map_err(at)? {
            dv.check_cardinality(expected, &self.location)?;
        }
        Ok(dv)
    }
}

/// The footer logic over any source of byte ranges (`read(offset, len)`) of a `size`-byte file.
fn parse_footer_with(
    size: u64,
    location: &str,
    read: impl Fn(u64, u64) -> Result<Bytes>,
) -> Result<FileMetadata> {
    let err = |msg: String| invalid_data(msg).with_context("file", location);
    let magic_len = MAGIC.len() as u64;
    // Leading magic + footer's opening magic + the fixed struct, with an empty payload.
    let min_size = 2 * magic_len + FOOTER_STRUCT_BYTES;
    if size < min_size {
        return Err(err(format!(
            "Puffin file expected at least {min_size} bytes (magic and footer), found {size}"
        )));
    }
    let head = read(0, magic_len)?;
    if head.as_ref() != MAGIC {
        return Err(err(format!(
            "Puffin file expected magic {} at offset 0, found {}",
            hex(&MAGIC),
            hex(&head)
        )));
    }
    let tail_at = size - FOOTER_STRUCT_BYTES;
    let tail = read(tail_at, FOOTER_STRUCT_BYTES)?;
    let (payload_size, flags, end_magic) = match tail.as_ref() {
        [a, b, c, d, f0, f1, f2, f3, m @ ..] => {
            (i32::from_le_bytes([*a, *b, *c, *d]), [*f0, *f1, *f2, *f3], m)
        }
        _ => return Err(err(format!("Puffin footer tail expected 12 bytes, found {}", tail.len()))),
    };
    if end_magic != MAGIC {
        return Err(err(format!(
            "Puffin footer expected magic {} at offset {}, found {}",
            hex(&MAGIC),
            tail_at + 8,
            hex(end_magic)
        )));
    }
    if flags[0] & FLAG_FOOTER_COMPRESSED != 0 {
        return Err(not_supported(
            "Puffin footer payload is LZ4-compressed (flag byte 0, bit 0); compressed footers are not \
             supported yet",
        )
        .with_context("file", location));
    }
    if let Some((byte, bits)) = flags
        .iter()
        .enumerate()
        .map(|(i, b)| (i, if i == 0 { b & !FLAG_FOOTER_COMPRESSED } else { *b }))
        .find(|(_, b)| *b != 0)
    {
        return Err(not_supported(format!(
            "Puffin footer sets unknown flag bits 0x{bits:02x} in flag byte {byte}"
        ))
        .with_context("file", location));
    }
    let payload_len = u64::try_from(payload_size).map_err(|_| {
        err(format!("Puffin footer payload size expected a non-negative integer, found {payload_size}"))
    })?;
    // The footer (opening magic + payload + struct) must fit after the file's leading magic.
    let footer_len = magic_len + payload_len + FOOTER_STRUCT_BYTES;
    let footer_at = size.checked_sub(footer_len).filter(|at| *at >= magic_len).ok_or_else(|| {
        err(format!(
            "Puffin footer payload size {payload_len} expected at most {} (the {size}-byte file minus \
             magic and footer framing)",
            size - min_size
        ))
    })?;
    let footer = read(footer_at, magic_len + payload_len)?;
    let (open_magic, payload) = footer.split_at(footer.len().min(MAGIC.len()));
    if open_magic != MAGIC {
        return Err(err(format!(
            "Puffin footer expected magic {} at offset {footer_at}, found {}",
            hex(&MAGIC),
            hex(open_magic)
        )));
    }
    let metadata: FileMetadata = serde_json::from_slice(payload).map_err(|e| {
        err(format!("Puffin footer payload at offset {} is not a valid FileMetadata JSON", footer_at + 4))
            .with_source(e)
    })?;
    for (i, blob) in metadata.blobs.iter().enumerate() {
        let end = blob.offset.checked_add(blob.length);
        if blob.offset < magic_len || end.is_none_or(|end| end > footer_at) {
            return Err(err(format!(
                "Puffin blob {i} ('{}') expected to lie between the leading magic and the footer \
                 (bytes 4..{footer_at}), found offset {} length {}",
                blob.blob_type, blob.offset, blob.length
            )));
        }
    }
    Ok(metadata)
}
