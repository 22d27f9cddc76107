//! The schema counts of a Parquet footer, checked before parquet-rs decodes the footer.
//!
//! parquet-rs 60.1 builds a group of the schema with `Vec::with_capacity(num_children)`,
//! `num_children` as the footer states it (`schema_from_array_helper`): a 9 KB file whose
//! footer gives a group 2^31 children asks for 16 GB before the first child is read, which
//! aborts the process where the allocation fails (found by the `parquet_read` fuzz target;
//! kept in `fuzz/regressions/parquet_read`). No group can have more children than schema
//! elements follow it, so that bound is checked here first.
//!
//! This walks the Thrift of `FileMetaData` (`io::thrift_compact`) just far enough to read
//! each `SchemaElement`'s `num_children` (field 5). It never fails on malformed Thrift: it
//! stops and leaves the error to parquet-rs, whose messages callers already see.
//!
//! `parquet_err` here is the error for a Parquet file parquet-rs cannot read, which every
//! reader of Parquet files (`guard`, `reader`, `read_task`) gives.

use bytes::Bytes;
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};
use parquet::file::reader::ChunkReader;

use crate::error::{invalid_data, Error, Result};
use crate::io::thrift_compact::{Compact, Stop, Walk, I32, LIST, STRUCT};

/// The footer of `file`, checked, then decoded by parquet-rs from the same bytes (one read
/// of the footer). A file without a plain `PAR1` footer, or whose stated footer length does
/// not fit, is left to parquet-rs's own reader and its errors (`what` names the operation in
/// them).
pub(crate) fn read_metadata<R: ChunkReader>(file: &R, path: &str, what: &str) -> Result<ParquetMetaData> {
    let decode_err = |e| parquet_err(e, what, path);
    match footer_bytes(file) {
        Some(footer) => {
            check_footer_thrift(&footer, path)?;
            ParquetMetaDataReader::decode_metadata(&footer).map_err(decode_err)
        }
        None => ParquetMetaDataReader::new().parse_and_finish(file).map_err(decode_err),
    }
}

/// The error for a Parquet file parquet-rs cannot read: `what` failed, on the file `path`.
pub(crate) fn parquet_err(e: parquet::errors::ParquetError, what: &str, path: &str) -> Error {
    invalid_data(what).with_context("file", path).with_source(e)
}

/// The footer's Thrift bytes, where the tail is a plain `PAR1` footer whose length fits.
fn footer_bytes<R: ChunkReader>(file: &R) -> Option<Bytes> {
    let len = file.len();
    if len < 12 {
        return None;
    }
    let tail = file.get_bytes(len - 8, 8).ok()?;
    if tail.get(4..8)? != b"PAR1" {
        return None;
    }
    let size = u64::from(u32::from_le_bytes(<[u8; 4]>::try_from(tail.get(..4)?).ok()?));
    if size + 8 > len {
        return None;
    }
    file.get_bytes(len - 8 - size, size as usize).ok()
}

/// Refuses a footer whose Thrift runs past its end, or whose schema gives a group more
/// children than elements follow it. Thrift the walk does not know is left to parquet-rs.
fn check_footer_thrift(footer: &[u8], path: &str) -> Result<()> {
    match schema_children(footer) {
        Ok(Some(children)) => check_children(&children, path),
        Ok(None) | Err(Stop::Bad) => Ok(()),
        // parquet-rs 60.1 skips a field it does not know one declared element at a time,
        // and a boolean element without reading its byte: a declared list of 2^31 booleans
        // loops 2^31 times (found by the `parquet_read` fuzz target). Every element takes a
        // byte, so such a list runs past the footer's end, which this walk sees.
        Err(Stop::Short) => Err(invalid_data(format!(
            "Parquet footer: expected Thrift within its {} bytes, found a field or list running past its end",
            footer.len()
        ))
        .with_context("file", path)),
    }
}

/// Each group's children are at most the elements after it.
fn check_children(children: &[Option<i32>], path: &str) -> Result<()> {
    for (i, n) in children.iter().enumerate() {
        let after = children.len() - i - 1;
        if let Some(n) = n.filter(|n| *n > 0 && *n as usize > after) {
            return Err(invalid_data(format!(
                "Parquet footer: schema element {i} expected at most {after} children (the \
                 elements after it), found {n}"
            ))
            .with_context("file", path));
        }
    }
    Ok(())
}

/// One walk over the whole `FileMetaData` by its fields' declared types: the
/// `num_children` of every schema element (None without a schema list of structs).
fn schema_children(footer: &[u8]) -> Walk<Option<Vec<Option<i32>>>> {
    let mut r = Compact::new(footer);
    let mut last = 0i16;
    let mut children = None;
    loop {
        let (ty, id) = r.field(&mut last)?;
        if ty == 0 {
            return Ok(children);
        }
        if id == 2 && ty == LIST {
            let (elem, count) = r.list()?;
            if elem != STRUCT {
                r.skip_elements(elem, count, 0)?;
                continue;
            }
            let mut out = Vec::with_capacity(count); // at most the bytes left
            for _ in 0..count {
                out.push(schema_element(&mut r)?);
            }
            children = Some(out);
        } else {
            r.skip(ty)?;
        }
    }
}

fn schema_element(r: &mut Compact<'_>) -> Walk<Option<i32>> {
    let mut last = 0i16;
    let mut children = None;
    loop {
        match r.field(&mut last)? {
            (0, _) => return Ok(children),
            (I32, 5) => children = Some(r.i32()?),
            (ty, _) => r.skip(ty)?,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::thrift_compact::tests::{varint, zigzag as zz};

    /// FileMetaData { 1: version, 2: schema [root with `root_children`, then `leaves` leaves] }.
    fn footer(root_children: i32, leaves: usize) -> Vec<u8> {
        let mut out = vec![0x15]; // field 1, i32
        varint(zz(2), &mut out);
        let n = 1 + leaves;
        out.push(0x19); // field 2, list
        out.push(0xf0 | STRUCT);
        varint(n as u64, &mut out);
        // root: 4: name "r", 5: num_children
        out.extend([0x48, 1, b'r', 0x15]);
        varint(zz(i64::from(root_children)), &mut out);
        out.push(0);
        for _ in 0..leaves {
            // 1: type (i32), 3: repetition (i32), 4: name "c", a map and a nested struct skipped
            out.extend([0x15, 2, 0x25, 0, 0x18, 1, b'c', 0x1b, 1, 0x85, 1, b'k', 4, 0x4c, 0x15, 4, 0, 0]);
        }
        out.push(0);
        out
    }

    #[test]
    fn reads_the_children_counts_and_refuses_too_many() {
        assert_eq!(schema_children(&footer(2, 2)), Ok(Some(vec![Some(2), None, None])));
        assert!(check_children(&[Some(2), None, None], "f").is_ok());
        let err = check_footer_thrift(&footer(i32::MAX, 2), "f").unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("schema element 0 expected at most 2 children") && msg.contains("2147483647"),
            "{msg}"
        );
        assert!(msg.contains("file"), "{msg}");
    }

    #[test]
    fn a_cut_footer_is_refused_and_unknown_thrift_left_to_parquet_rs() {
        let whole = footer(2, 2);
        assert!(check_footer_thrift(&whole, "f").is_ok());
        for cut in 0..whole.len() - 1 {
            let err = check_footer_thrift(&whole[..cut], "f").unwrap_err();
            assert!(err.to_string().contains("running past its end"), "cut at {cut}: {err}");
        }
        let long = [0x19, 0xfc, 0xff, 0xff, 0xff, 0x0f]; // a list longer than its bytes
        assert_eq!(schema_children(&long), Err(Stop::Short));
        let deep: Vec<u8> = std::iter::repeat_n(0x1c, 200).collect(); // structs in structs
        assert_eq!(schema_children(&deep), Err(Stop::Bad));
        assert!(check_footer_thrift(&deep, "f").is_ok());
    }
}
