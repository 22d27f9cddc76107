//! The `deletion-vector-v1` blob (format v3): the positions deleted from one data file.
//!
//! A blob is `length (4, big-endian) | magic D1 D3 39 64 | vector | CRC-32 (4, big-endian)`,
//! where `length` and the CRC cover the magic and the vector. The vector is a 64-bit roaring
//! bitmap in the "portable" format: an 8-byte little-endian count of 32-bit bitmaps, then for
//! each, in ascending unsigned key order, its 4-byte little-endian key (the positions' high 32
//! bits) and a standard 32-bit roaring bitmap of the low 32 bits. (The big-endian framing is
//! Delta's, kept for compatibility.)
//!
//! The 32-bit bitmaps are read and written by the `roaring` crate. The 64-bit framing is ours,
//! not `RoaringTreemap`'s: its layout is the same, but we want the spec's checks (keys
//! ascending, top bit clear, no trailing bytes) and to keep what Java wrote (Java writes an
//! empty bitmap for every key below the largest, which a treemap would drop), so a decoded
//! vector serializes back to the same bytes.

use bytes::Bytes;
use roaring::RoaringBitmap;

use super::byte_range::{hex, read_range};
use crate::error::{invalid_data, validation, Error, Result};
use crate::io::InputFile;

/// The magic bytes that open a deletion vector, after its length.
pub const DV_MAGIC: [u8; 4] = [0xD1, 0xD3, 0x39, 0x64];
/// The largest position a vector can hold: the spec keeps the top bit clear.
pub const MAX_POSITION: u64 = i64::MAX as u64;

/// Length (4) + magic (4) before the vector, CRC (4) after it.
const FRAMING_BYTES: usize = 12;
/// The smallest serialized 32-bit bitmap: cookie (4) + container count (4), no containers.
const MIN_BITMAP_BYTES: usize = 8;

/// The positions deleted from one data file, as 32-bit roaring bitmaps keyed by each
/// position's high 32 bits.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DeletionVector {
    /// Ascending unsigned keys, each at most 0x7FFF_FFFF; bitmaps may be empty when decoded
    /// from a writer that stores gaps (Java does), never when built from positions.
    bitmaps: Vec<(u32, RoaringBitmap)>,
    cardinality: u64,
}

impl DeletionVector {
    /// A vector holding `positions` (any order, duplicates allowed), run-length optimised as
    /// Java's writer does before serializing. Positions above [`MAX_POSITION`] are refused.
    pub fn from_positions(positions: impl IntoIterator<Item = u64>) -> Result<Self> {
        let mut by_key: std::collections::BTreeMap<u32, RoaringBitmap> = Default::default();
        for pos in positions {
            if pos > MAX_POSITION {
                return Err(validation(format!(
                    "deletion vector position expected at most {MAX_POSITION}, found {pos}"
                )));
            }
            // High and low halves: the casts keep exactly the 32 bits each stands for.
            by_key.entry((pos >> 32) as u32).or_default().insert(pos as u32);
        }
        let mut bitmaps: Vec<(u32, RoaringBitmap)> = by_key.into_iter().collect();
        for (_, b) in &mut bitmaps {
            b.optimize();
        }
        let cardinality = bitmaps.iter().map(|(_, b)| b.len()).sum();
        Ok(Self { bitmaps, cardinality })
    }

    /// The number of deleted positions.
    pub fn cardinality(&self) -> u64 {
        self.cardinality
    }

    pub fn is_empty(&self) -> bool {
        self.cardinality == 0
    }

    /// Whether the row at `pos` is deleted.
    pub fn contains(&self, pos: u64) -> bool {
        let key = (pos >> 32) as u32;
        pos <= MAX_POSITION
            && self
                .bitmaps
                .binary_search_by_key(&key, |(k, _)| *k)
                .ok()
                .and_then(|i| self.bitmaps.get(i))
                .is_some_and(|(_, b)| b.contains(pos as u32))
    }

    /// The deleted positions in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.bitmaps.iter().flat_map(|(key, b)| {
            let high = u64::from(*key) << 32;
            b.iter().map(move |low| high | u64::from(low))
        })
    }

    /// The deleted positions, ascending, as the position-delete row selection takes them
    /// (`location` names the Puffin file in errors).
    ///
    /// Run containers make this list up to thousands of times larger than the blob: check the
    /// cardinality against the delete file's `record_count` first ([`Self::check_cardinality`]).
    pub fn to_sorted_positions(&self, location: &str) -> Result<Vec<i64>> {
        let too_many = || {
            invalid_data(format!(
                "deletion vector of {} positions is too large to list in memory",
                self.cardinality
            ))
            .with_context("file", location)
        };
        let n = usize::try_from(self.cardinality)
            .ok()
            .filter(|n| n.checked_mul(8).is_some_and(|b| b <= isize::MAX as usize))
            .ok_or_else(too_many)?;
        let mut out = Vec::with_capacity(n);
        for pos in self.iter() {
            // Keys are at most 0x7FFF_FFFF (checked on decode and build), so this never fails.
            out.push(i64::try_from(pos).map_err(|_| {
                invalid_data(format!("deletion vector position {pos} is above {MAX_POSITION}"))
                    .with_context("file", location)
            })?);
        }
        Ok(out)
    }

    /// Checks the cardinality against what metadata says (the delete file's `record_count` or
    /// the blob's `cardinality` property), as Java does on every read.
    pub fn check_cardinality(&self, expected: u64, location: &str) -> Result<()> {
        if self.cardinality != expected {
            return Err(invalid_data(format!(
                "deletion vector cardinality expected {expected} (from metadata), found {} positions",
                self.cardinality
            ))
            .with_context("file", location));
        }
        Ok(())
    }

    /// The blob bytes: length, magic, portable vector, CRC-32. A vector decoded from a blob
    /// gives back the same bytes; one built with [`Self::from_positions`] gives Java's bytes
    /// whenever all positions are below 2^32 (above that Java also writes empty bitmaps for the
    /// missing lower keys, which we do not).
    pub fn serialize(&self) -> Result<Vec<u8>> {
        let vector_len = 8 + self.bitmaps.iter().map(|(_, b)| 4 + b.serialized_size()).sum::<usize>();
        let data_len = u32::try_from(DV_MAGIC.len() + vector_len)
            .ok()
            .filter(|n| i32::try_from(*n).is_ok())
            .ok_or_else(|| {
                validation(format!(
                    "deletion vector of {vector_len} bytes is over the 2 GiB a blob's length field can hold"
                ))
            })?;
        let mut out = Vec::with_capacity(vector_len + FRAMING_BYTES);
        out.extend_from_slice(&data_len.to_be_bytes());
        out.extend_from_slice(&DV_MAGIC);
        out.extend_from_slice(&(self.bitmaps.len() as u64).to_le_bytes());
        for (key, bitmap) in &self.bitmaps {
            out.extend_from_slice(&key.to_le_bytes());
            bitmap.serialize_into(&mut out).map_err(|e| {
                Error::new(crate::ErrorKind::Internal, "cannot serialize a roaring bitmap").with_source(e)
            })?;
        }
        let crc = crc32fast::hash(out.get(4..).unwrap_or_default());
        out.extend_from_slice(&crc.to_be_bytes());
        Ok(out)
    }
}

/// Decodes one `deletion-vector-v1` blob: exactly the `content_size_in_bytes` bytes at
/// `content_offset` of the Puffin file at `location` (which only names the file in errors).
/// Checks the length field, the magic and the CRC-32, and that the vector is well formed.
pub fn read_deletion_vector(bytes: &[u8], location: &str) -> Result<DeletionVector> {
    decode(bytes, location, None)
}

/// Reads and decodes the deletion vector at `offset` (`content_offset`) of `length`
/// (`content_size_in_bytes`) bytes in the Puffin file at `location`, local or on an object
/// store; `file_size` (`file_size_in_bytes`) saves a HEAD request.
pub fn load_deletion_vector(
    location: &str,
    offset: u64,
    length: u64,
    file_size: Option<u64>,
) -> Result<DeletionVector> {
    let input = InputFile::open(location, file_size)?;
    let bytes: Bytes = read_range(&input, location, offset, length)?;
    decode(&bytes, location, Some(offset))
}

/// [`read_deletion_vector`] with the blob's offset for messages.
pub(crate) fn decode(bytes: &[u8], location: &str, offset: Option<u64>) -> Result<DeletionVector> {
    let err = |msg: String| {
        let at = offset.map(|o| format!(" at offset {o}")).unwrap_or_default();
        invalid_data(format!("deletion vector{at}: {msg}")).with_context("file", location)
    };
    let total = bytes.len();
    let (len_bytes, rest) = bytes
        .split_first_chunk::<4>()
        .filter(|_| total >= FRAMING_BYTES)
        .ok_or_else(|| err(format!("blob expected at least {FRAMING_BYTES} bytes, found {total}")))?;
    let data_len = u32::from_be_bytes(*len_bytes);
    let expected_len = total - 8;
    if usize::try_from(data_len).ok() != Some(expected_len) {
        return Err(err(format!(
            "length field expected {expected_len} (blob of {total} bytes minus length and CRC), found {data_len}"
        )));
    }
    let (data, crc_bytes) = rest.split_at(expected_len);
    let (magic, vector) = data.split_at(DV_MAGIC.len());
    if magic != DV_MAGIC {
        return Err(err(format!("magic expected {}, found {}", hex(&DV_MAGIC), hex(magic))));
    }
    let stored_crc =
        crc_bytes.try_into().map(u32::from_be_bytes).map_err(|_| err("CRC-32 missing".into()))?;
    let crc = crc32fast::hash(data);
    if crc != stored_crc {
        return Err(err(format!(
            "CRC-32 expected 0x{stored_crc:08x} (stored), found 0x{crc:08x} (computed)"
        )));
    }
    decode_portable(vector).map_err(err)
}

/// Decodes the portable 64-bit roaring format; errors are messages for [`decode`] to frame.
fn decode_portable(vector: &[u8]) -> std::result::Result<DeletionVector, String> {
    let (count_bytes, mut rest) = vector
        .split_first_chunk::<8>()
        .ok_or_else(|| format!("vector expected an 8-byte bitmap count, found {} bytes", vector.len()))?;
    let count = u64::from_le_bytes(*count_bytes);
    // Each bitmap takes its key and at least an empty bitmap's header: refuse counts the bytes
    // cannot hold before looping on them.
    let fits = (rest.len() / (4 + MIN_BITMAP_BYTES)) as u64;
    if count > fits {
        return Err(format!(
            "vector declares {count} bitmaps, but its {} remaining bytes hold at most {fits}",
            rest.len()
        ));
    }
    let mut bitmaps: Vec<(u32, RoaringBitmap)> = Vec::new();
    let mut cardinality = 0u64;
    for i in 0..count {
        let (key_bytes, after) = rest
            .split_first_chunk::<4>()
            .ok_or_else(|| format!("bitmap {i} of {count}: key expected 4 bytes, found {}", rest.len()))?;
        let key = u32::from_le_bytes(*key_bytes);
        if key > (MAX_POSITION >> 32) as u32 {
            return Err(format!(
                "bitmap {i}: key expected at most 0x7fffffff (positions are positive), found 0x{key:08x}"
            ));
        }
        if let Some((last, _)) = bitmaps.last() {
            if key <= *last {
                return Err(format!(
                    "bitmap {i}: keys expected in ascending order, found {key} after {last}"
                ));
            }
        }
        rest = after;
        // `deserialize_from` advances `rest` past exactly the bytes it read.
        let bitmap = RoaringBitmap::deserialize_from(&mut rest)
            .map_err(|e| format!("bitmap {i} (key {key}) is not a valid roaring bitmap: {e}"))?;
        cardinality += bitmap.len();
        bitmaps.push((key, bitmap));
    }
    if !rest.is_empty() {
        return Err(format!("{} bytes left over after the last of {count} bitmaps", rest.len()));
    }
    Ok(DeletionVector { bitmaps, cardinality })
}
