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

use parquet::file::reader::ChunkReader;

use crate::error::{invalid_data, Result};
use crate::io::thrift_compact::{Compact, Stop, I32, LIST, STRUCT};

/// Refuses a footer whose schema gives a group more children than elements follow it.
/// Anything else (no footer, an encrypted one, malformed Thrift) is left to parquet-rs.
pub(crate) fn check_schema_counts<R: ChunkReader>(file: &R, path: &str) -> Result<()> {
    let len = file.len();
    if len < 12 {
        return Ok(());
    }
    let Ok(tail) = file.get_bytes(len - 8, 8) else { return Ok(()) };
    let (Some(size), Some(magic)) = (tail.get(..4), tail.get(4..8)) else { return Ok(()) };
    if magic != b"PAR1" {
        return Ok(());
    }
    let Ok(size) = <[u8; 4]>::try_from(size) else { return Ok(()) };
    let size = u64::from(u32::from_le_bytes(size));
    if size + 8 > len {
        return Ok(());
    }
    let Ok(footer) = file.get_bytes(len - 8 - size, size as usize) else { return Ok(()) };
    // parquet-rs 60.1 skips a field it does not know one declared element at a time, and a
    // boolean element without reading its byte: a declared list of 2^31 booleans loops 2^31
    // times (found by the `parquet_read` fuzz target). Every element takes a byte, so such
    // a list runs past the footer's end, which a walk by the footer's own types sees.
    if Compact::new(&footer).skip(STRUCT) == Err(Stop::Short) {
        return Err(invalid_data(format!(
            "Parquet footer: expected Thrift within its {size} bytes, found a field or list running past its end"
        ))
        .with_context("file", path));
    }
    match schema_children(&footer) {
        Some(children) => check_children(&children, path),
        None => Ok(()),
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

/// `num_children` of every schema element, or None where the bytes are not the Thrift
/// this expects.
fn schema_children(footer: &[u8]) -> Option<Vec<Option<i32>>> {
    let mut r = Compact::new(footer);
    let mut last = 0i16;
    loop {
        let (ty, id) = r.field(&mut last).ok()?;
        if ty == 0 {
            return None; // no schema
        }
        if id == 2 && ty == LIST {
            let (elem, count) = r.list().ok()?;
            if elem != STRUCT {
                return None;
            }
            let mut out = Vec::with_capacity(count); // at most the bytes left
            for _ in 0..count {
                out.push(schema_element(&mut r)?);
            }
            return Some(out);
        }
        r.skip(ty).ok()?;
    }
}

fn schema_element(r: &mut Compact<'_>) -> Option<Option<i32>> {
    let mut last = 0i16;
    let mut children = None;
    loop {
        match r.field(&mut last).ok()? {
            (0, _) => return Some(children),
            (I32, 5) => children = Some(r.i32().ok()?),
            (ty, _) => r.skip(ty).ok()?,
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
        assert_eq!(schema_children(&footer(2, 2)), Some(vec![Some(2), None, None]));
        assert!(check_children(&[Some(2), None, None], "f").is_ok());
        let err = check_children(&schema_children(&footer(i32::MAX, 2)).unwrap(), "f").unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("schema element 0 expected at most 2 children") && msg.contains("2147483647"),
            "{msg}"
        );
        assert!(msg.contains("file"), "{msg}");
    }

    #[test]
    fn malformed_thrift_is_left_to_parquet_rs() {
        let whole = footer(2, 2);
        for cut in 0..whole.len() - 1 {
            // Never a panic; a cut footer either reads or gives up.
            let _ = schema_children(&whole[..cut]);
        }
        assert_eq!(
            schema_children(&[0x19, 0xfc, 0xff, 0xff, 0xff, 0x0f]),
            None,
            "a list longer than its bytes"
        );
        let deep: Vec<u8> = std::iter::repeat_n(0x1c, 200).collect(); // structs in structs
        assert_eq!(schema_children(&deep), None);
    }
}
