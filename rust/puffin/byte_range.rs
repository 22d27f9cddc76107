//! Reading a byte range of a Puffin file (a blob, or a deletion vector at the offset its
//! manifest entry gives) checked against the file's length, and bytes as hex for the messages
//! about them. Shared by the container (`file.rs`) and the deletion vectors
//! (`deletion_vector.rs`).

use bytes::Bytes;
use parquet::file::reader::{ChunkReader, Length};

use crate::error::{invalid_data, not_supported, Error, ErrorKind, Result};
use crate::io::InputFile;

/// Reads `len` bytes at `offset` of an opened file, after checking that they lie inside it (so
/// a bad offset or length from metadata never allocates more than the file holds).
pub(crate) fn read_range(input: &InputFile, location: &str, offset: u64, len: u64) -> Result<Bytes> {
    let size = input.len();
    let end = offset.checked_add(len).filter(|end| *end <= size).ok_or_else(|| {
        invalid_data(format!(
            "byte range at offset {offset} of length {len} runs past the end of the {size}-byte file"
        ))
        .with_context("file", location)
    })?;
    let want = usize::try_from(len).map_err(|_| {
        not_supported(format!("byte range of {len} bytes does not fit in memory"))
            .with_context("file", location)
    })?;
    let got = input.get_bytes(offset, want).map_err(|e| {
        Error::new(ErrorKind::Io, format!("cannot read bytes {offset}..{end}"))
            .with_context("file", location)
            .with_source(e)
    })?;
    if got.len() != want {
        return Err(invalid_data(format!(
            "read of bytes {offset}..{end} expected {want} bytes, found {}",
            got.len()
        ))
        .with_context("file", location));
    }
    Ok(got)
}

/// Bytes as hex for messages (`50464131`).
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
