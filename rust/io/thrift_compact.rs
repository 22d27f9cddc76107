//! A walker over Thrift's compact encoding (the encoding of Parquet's footer and page
//! headers), for the checks icefloe makes before parquet-rs decodes such bytes: it reads
//! the few integers a check needs and skips everything else, allocating nothing from the
//! input.
//!
//! Written by hand because parquet-rs keeps its Thrift decoder private, and the decoders
//! that reach the checked cases are parquet-rs's own (its skip loops once per declared
//! element of a list of booleans without reading a byte; it reserves a declared child count
//! before reading a child). The `thrift` crate allocates the lengths it reads.

/// Nesting deeper than this is refused (parquet-rs stops at a similar depth).
const MAX_DEPTH: u32 = 64;

// Thrift compact protocol type ids.
const BOOL_TRUE: u8 = 1;
const BOOL_FALSE: u8 = 2;
const BYTE: u8 = 3;
const I16: u8 = 4;
pub(crate) const I32: u8 = 5;
const I64: u8 = 6;
const DOUBLE: u8 = 7;
const BINARY: u8 = 8;
pub(crate) const LIST: u8 = 9;
const SET: u8 = 10;
const MAP: u8 = 11;
pub(crate) const STRUCT: u8 = 12;
const UUID: u8 = 13;

/// Why a walk stopped early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The bytes ended first, or a collection declares more elements than bytes are left
    /// (every element takes at least one byte in this encoding, a boolean too).
    Short,
    /// Not the Thrift a walk expects (an unknown type, nesting too deep).
    Bad,
}

pub(crate) type Walk<T> = std::result::Result<T, Stop>;

/// A position in compact-encoded bytes.
pub(crate) struct Compact<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Compact<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Compact { bytes, pos: 0 }
    }

    /// Bytes read so far.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.pos)
    }

    fn byte(&mut self) -> Walk<u8> {
        let b = *self.bytes.get(self.pos).ok_or(Stop::Short)?;
        self.pos += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Walk<u64> {
        let mut out = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            out |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(out);
            }
        }
        Err(Stop::Bad)
    }

    fn zigzag(&mut self) -> Walk<i64> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    /// An i32 value.
    pub(crate) fn i32(&mut self) -> Walk<i32> {
        i32::try_from(self.zigzag()?).map_err(|_| Stop::Bad)
    }

    /// A field header: (type, id), type 0 at the struct's end. `last` is the previous
    /// field's id in this struct (0 at its start).
    pub(crate) fn field(&mut self, last: &mut i16) -> Walk<(u8, i16)> {
        let b = self.byte()?;
        if b & 0x0f == 0 {
            return Ok((0, 0));
        }
        if b & 0x0f > UUID {
            return Err(Stop::Bad);
        }
        let delta = i16::from(b >> 4);
        let id = if delta == 0 {
            i16::try_from(self.zigzag()?).map_err(|_| Stop::Bad)?
        } else {
            last.checked_add(delta).ok_or(Stop::Bad)?
        };
        *last = id;
        Ok((b & 0x0f, id))
    }

    /// A list or set header: (element type, count), the count checked against the bytes
    /// left.
    pub(crate) fn list(&mut self) -> Walk<(u8, usize)> {
        let b = self.byte()?;
        let count = match b >> 4 {
            15 => usize::try_from(self.varint()?).map_err(|_| Stop::Bad)?,
            n => usize::from(n),
        };
        if count > self.remaining() {
            return Err(Stop::Short);
        }
        Ok((b & 0x0f, count))
    }

    /// Skips a field's value of type `ty` (booleans carry theirs in the field's type).
    pub(crate) fn skip(&mut self, ty: u8) -> Walk<()> {
        self.skip_at(ty, 0)
    }

    fn skip_at(&mut self, ty: u8, depth: u32) -> Walk<()> {
        if depth > MAX_DEPTH {
            return Err(Stop::Bad);
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
            UUID => self.advance(16)?,
            BINARY => {
                let n = usize::try_from(self.varint()?).map_err(|_| Stop::Bad)?;
                self.advance(n)?;
            }
            LIST | SET => {
                let (elem, count) = self.list()?;
                self.skip_elements(elem, count, depth)?;
            }
            MAP => {
                let count = usize::try_from(self.varint()?).map_err(|_| Stop::Bad)?;
                if count > 0 {
                    let kinds = self.byte()?;
                    if count > self.remaining() {
                        return Err(Stop::Short);
                    }
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
                    self.skip_at(ty, depth + 1)?;
                }
            }
            _ => return Err(Stop::Bad),
        }
        Ok(())
    }

    /// The `count` elements of type `elem` of a list whose header was read.
    pub(crate) fn skip_elements(&mut self, elem: u8, count: usize, depth: u32) -> Walk<()> {
        for _ in 0..count {
            self.skip_element(elem, depth)?;
        }
        Ok(())
    }

    /// An element of a list, set or map: a boolean is a byte of its own there.
    fn skip_element(&mut self, ty: u8, depth: u32) -> Walk<()> {
        match ty {
            BOOL_TRUE | BOOL_FALSE => self.byte().map(|_| ()),
            _ => self.skip_at(ty, depth + 1),
        }
    }

    fn advance(&mut self, n: usize) -> Walk<()> {
        if n > self.remaining() {
            return Err(Stop::Short);
        }
        self.pos += n;
        Ok(())
    }
}

/// What parquet-rs reads a known field of a struct as, whatever type the field's header
/// states (its generated readers go by field id; unknown ids are skipped by their type).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    Int,
    /// Carried in the field header's type, which must then be a boolean's.
    Bool,
    Struct(&'static [(i16, Kind)]),
}

/// Parquet's `PageHeader` as parquet-rs 60.1 reads it by default (without page statistics:
/// `read_thrift_without_stats`, the statistics fields skipped by their type): type,
/// sizes and crc; the data page, index page, dictionary page and data page v2 headers.
const PAGE_HEADER: &[(i16, Kind)] = &[
    (1, Kind::Int),
    (2, Kind::Int),
    (3, Kind::Int),
    (4, Kind::Int),
    (5, Kind::Struct(&[(1, Kind::Int), (2, Kind::Int), (3, Kind::Int), (4, Kind::Int)])),
    (6, Kind::Struct(&[])),
    (7, Kind::Struct(&[(1, Kind::Int), (2, Kind::Int), (3, Kind::Bool)])),
    (
        8,
        Kind::Struct(&[
            (1, Kind::Int),
            (2, Kind::Int),
            (3, Kind::Int),
            (4, Kind::Int),
            (5, Kind::Int),
            (6, Kind::Int),
            (7, Kind::Bool),
        ]),
    ),
];

impl Compact<'_> {
    /// Reads a struct of `fields` as parquet-rs reads it.
    fn read_struct(&mut self, fields: &[(i16, Kind)], depth: u32) -> Walk<()> {
        if depth > MAX_DEPTH {
            return Err(Stop::Bad);
        }
        let mut last = 0i16;
        loop {
            let (ty, id) = self.field(&mut last)?;
            if ty == 0 {
                return Ok(());
            }
            match fields.iter().find(|(f, _)| *f == id).map(|(_, k)| *k) {
                Some(Kind::Int) => {
                    self.varint()?;
                }
                Some(Kind::Bool) if ty == BOOL_TRUE || ty == BOOL_FALSE => {}
                Some(Kind::Bool) => return Err(Stop::Bad),
                Some(Kind::Struct(inner)) => self.read_struct(inner, depth + 1)?,
                None => self.skip_at(ty, depth + 1)?,
            }
        }
    }
}

/// Walks a Parquet page header from the start of `bytes` as parquet-rs reads it: its
/// length, or why it stopped.
pub(crate) fn page_header_len(bytes: &[u8]) -> Walk<usize> {
    let mut r = Compact::new(bytes);
    r.read_struct(PAGE_HEADER, 0)?;
    Ok(r.position())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn varint(mut v: u64, out: &mut Vec<u8>) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(b);
                break;
            }
            out.push(b | 0x80);
        }
    }

    pub(crate) fn zigzag(v: i64) -> u64 {
        ((v << 1) ^ (v >> 63)) as u64
    }

    fn struct_len(bytes: &[u8]) -> Walk<usize> {
        let mut r = Compact::new(bytes);
        r.skip(STRUCT)?;
        Ok(r.position())
    }

    #[test]
    fn reads_a_page_header_by_field_id_as_parquet_rs_does() {
        // A dictionary page header of Java's: type 2, sizes, crc, then field 7 { 1, 2, 3: true }.
        let header = [
            0x15, 4, 0x15, 0x1e, 0x15, 0x1e, 0x15, 0x8c, 0x88, 0xe7, 0xcb, 0x0e, 0x3c, 0x15, 6, 0x15, 0,
            0x11, 0, 0,
        ];
        assert_eq!(page_header_len(&header), Ok(header.len()));
        // Field 2 declared a boolean but read as an integer (0x6e), then field 8 (a data page
        // v2 header) declared a boolean but read as a struct, whose unknown field 9 is a list
        // of 2^31 booleans: parquet-rs would skip it element by element.
        let mut hostile = vec![0x22, 0x6e, 0x61, 0x99, 0xf1];
        varint(1 << 31, &mut hostile);
        hostile.extend([0u8; 32]);
        assert_eq!(page_header_len(&hostile), Err(Stop::Short));
        // A known boolean field whose header states another type: parquet-rs refuses it.
        assert_eq!(page_header_len(&[0x7c, 0x35, 0]), Err(Stop::Bad));
    }

    #[test]
    fn walks_a_struct_of_every_type() {
        // 1: i32, 2: binary "ab", 3: list<bool> [t, f], 4: map<binary, i32> {"k": 2},
        // 5: nested struct { 1: double }, 6: true (in the type), 7: uuid, end; then junk.
        let mut s = vec![0x15, 4, 0x18, 2, b'a', b'b', 0x19, 0x21, 1, 2, 0x1b, 1, 0x85, 1, b'k', 4, 0x1c];
        s.extend([0x17, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0x11, 0x1d]);
        s.extend([7u8; 16]);
        s.push(0);
        let len = s.len();
        s.extend([0xff, 0xff]);
        assert_eq!(struct_len(&s), Ok(len));
        for cut in 0..len {
            assert_eq!(struct_len(&s[..cut]), Err(Stop::Short), "cut at {cut}");
        }
    }

    #[test]
    fn a_list_longer_than_its_bytes_is_short_whatever_its_element() {
        for elem in [BOOL_TRUE, BYTE, STRUCT] {
            let mut s = vec![0x19, 0xf0 | elem];
            varint(1 << 31, &mut s);
            s.extend([0u8; 64]);
            assert_eq!(struct_len(&s), Err(Stop::Short), "element type {elem}");
        }
        let deep: Vec<u8> = std::iter::repeat_n(0x1c, 200).collect(); // structs in structs
        assert_eq!(struct_len(&deep), Err(Stop::Bad));
        assert_eq!(struct_len(&[0x1e, 0]), Err(Stop::Bad), "type 14 is not Thrift");
    }
}
