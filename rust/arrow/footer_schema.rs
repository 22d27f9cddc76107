//! The schema counts of a Parquet footer, checked before parquet-rs decodes the footer.
//!
//! parquet-rs 60.1 builds a group of the schema with `Vec::with_capacity(num_children)`,
//! `num_children` as the footer states it (`schema_from_array_helper`): a 9 KB file whose
//! footer gives a group 2^31 children asks for 16 GB before the first child is read, which
//! aborts the process where the allocation fails (found by the `parquet_read` fuzz target;
//! kept in `fuzz/regressions/parquet_read`). No group can have more children than schema
//! elements follow it, so that bound is checked here first.
//!
//! This walks the Thrift compact encoding of `FileMetaData` just far enough to read each
//! `SchemaElement`'s `num_children` (field 5). It is written by hand because parquet-rs
//! keeps its Thrift decoder private and the `thrift` crate allocates the lengths it reads.
//! It allocates nothing from the input and never fails on malformed Thrift: it stops and
//! leaves the error to parquet-rs, whose messages callers already see.

use parquet::file::reader::ChunkReader;

use crate::error::{invalid_data, Result};

const MAX_DEPTH: u32 = 64;

// Thrift compact protocol type ids.
const BOOL_TRUE: u8 = 1;
const BOOL_FALSE: u8 = 2;
const BYTE: u8 = 3;
const I16: u8 = 4;
const I32: u8 = 5;
const I64: u8 = 6;
const DOUBLE: u8 = 7;
const BINARY: u8 = 8;
const LIST: u8 = 9;
const SET: u8 = 10;
const MAP: u8 = 11;
const STRUCT: u8 = 12;

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
    let mut r = Compact { bytes: footer, pos: 0 };
    let mut last = 0i16;
    loop {
        let (ty, id) = r.field(&mut last)?;
        if ty == 0 {
            return None; // no schema
        }
        if id == 2 && ty == LIST {
            let (elem, count) = r.list()?;
            if elem != STRUCT || count > r.remaining() {
                return None;
            }
            let mut out = Vec::with_capacity(count);
            for _ in 0..count {
                out.push(r.schema_element()?);
            }
            return Some(out);
        }
        r.skip(ty, 0)?;
    }
}

struct Compact<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Compact<'_> {
    fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.pos)
    }

    fn byte(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    fn varint(&mut self) -> Option<u64> {
        let mut out = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            out |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(out);
            }
        }
        None
    }

    fn zigzag(&mut self) -> Option<i64> {
        let v = self.varint()?;
        Some((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    /// A field header: (type, id); type 0 is the struct's end.
    fn field(&mut self, last: &mut i16) -> Option<(u8, i16)> {
        let b = self.byte()?;
        if b == 0 {
            return Some((0, 0));
        }
        let delta = i16::from(b >> 4);
        let id = if delta == 0 { i16::try_from(self.zigzag()?).ok()? } else { last.checked_add(delta)? };
        *last = id;
        Some((b & 0x0f, id))
    }

    /// A list or set header: (element type, count).
    fn list(&mut self) -> Option<(u8, usize)> {
        let b = self.byte()?;
        let count = match b >> 4 {
            15 => usize::try_from(self.varint()?).ok()?,
            n => usize::from(n),
        };
        Some((b & 0x0f, count))
    }

    fn schema_element(&mut self) -> Option<Option<i32>> {
        let mut last = 0i16;
        let mut children = None;
        loop {
            let (ty, id) = self.field(&mut last)?;
            match (ty, id) {
                (0, _) => return Some(children),
                (I32, 5) => children = Some(i32::try_from(self.zigzag()?).ok()?),
                _ => self.skip(ty, 0)?,
            }
        }
    }

    /// Skips a value of type `ty` (a field's: booleans carry their value in the type).
    fn skip(&mut self, ty: u8, depth: u32) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        match ty {
            BOOL_TRUE | BOOL_FALSE => {}
            BYTE => {
                self.byte()?;
            }
            I16 | I32 | I64 => {
                self.varint()?;
            }
            DOUBLE => self.advance(8)?,
            BINARY => {
                let n = usize::try_from(self.varint()?).ok()?;
                self.advance(n)?;
            }
            LIST | SET => {
                let (elem, count) = self.list()?;
                self.skip_elements(elem, count, depth)?;
            }
            MAP => {
                let count = usize::try_from(self.varint()?).ok()?;
                if count > 0 {
                    let kinds = self.byte()?;
                    for _ in 0..count {
                        self.skip_element(kinds >> 4, depth)?;
                        self.skip_element(kinds & 0x0f, depth)?;
                    }
                }
            }
            STRUCT => {
                let mut last = 0i16;
                loop {
                    let (ty, _) = self.field(&mut last)?;
                    if ty == 0 {
                        break;
                    }
                    self.skip(ty, depth + 1)?;
                }
            }
            _ => return None,
        }
        Some(())
    }

    fn skip_elements(&mut self, elem: u8, count: usize, depth: u32) -> Option<()> {
        if count > self.remaining() {
            return None; // every element takes at least a byte
        }
        for _ in 0..count {
            self.skip_element(elem, depth)?;
        }
        Some(())
    }

    /// An element of a list, set or map: a boolean is a byte of its own there.
    fn skip_element(&mut self, ty: u8, depth: u32) -> Option<()> {
        if self.remaining() == 0 {
            return None;
        }
        match ty {
            BOOL_TRUE | BOOL_FALSE => self.byte().map(|_| ()),
            _ => self.skip(ty, depth + 1),
        }
    }

    fn advance(&mut self, n: usize) -> Option<()> {
        if n > self.remaining() {
            return None;
        }
        self.pos += n;
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FileMetaData { 1: version, 2: schema [root with `root_children`, then `leaves` leaves] }.
    fn footer(root_children: i32, leaves: usize) -> Vec<u8> {
        let zz = |v: i64| ((v << 1) ^ (v >> 63)) as u64;
        let varint = |mut v: u64, out: &mut Vec<u8>| loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(b);
                break;
            }
            out.push(b | 0x80);
        };
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
