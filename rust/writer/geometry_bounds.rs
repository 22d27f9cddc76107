//! The bounding box of a file's `geometry` values, as Iceberg Java 1.12's
//! `GeometryBoundsBuilder` computes it for a data file's lower and upper bounds: the X and Y
//! ranges of every coordinate of every WKB value (Z and M are read past, not bounded), NaN
//! ordinates left out. A value that is not valid WKB (an unknown type or dimension, a child of
//! the wrong type or dimension, a count past the end, an open or short polygon ring, trailing
//! bytes) leaves the file without geometry bounds, as Java's does. `geography` columns get
//! none: Java 1.12 bounds only planar edges.
//!
//! Written by hand: the field's WKB crates parse into geometry objects, where a bound needs only
//! a pass over the coordinates, and none reproduces Java's acceptance rules.

/// The WKB geometry types (ISO codes modulo 1000).
const POINT: u32 = 1;
const LINE_STRING: u32 = 2;
const POLYGON: u32 = 3;
const MULTI_POINT: u32 = 4;
const MULTI_LINE_STRING: u32 = 5;
const MULTI_POLYGON: u32 = 6;
const GEOMETRY_COLLECTION: u32 = 7;
const ANY_TYPE: u32 = 0;
/// Deeper nesting is refused (a collection of collections ... as invalid WKB), bounding the
/// recursion on untrusted input.
const MAX_DEPTH: usize = 64;

#[derive(Debug, Clone, Copy, Default)]
struct Range {
    lower: f64,
    upper: f64,
    has_value: bool,
}

impl Range {
    fn add(&mut self, v: f64) {
        if v.is_nan() {
            return;
        }
        if self.has_value {
            self.lower = self.lower.min(v);
            self.upper = self.upper.max(v);
        } else {
            *self = Range { lower: v, upper: v, has_value: true };
        }
    }
}

/// Accumulates the X / Y bounds of WKB values.
#[derive(Debug, Clone, Default)]
pub struct GeometryBounds {
    x: Range,
    y: Range,
    incomplete: bool,
}

struct Invalid;

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    little_endian: bool,
}

impl Reader<'_> {
    fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn need(&self, n: u64) -> Result<(), Invalid> {
        if (self.remaining() as u64) < n {
            return Err(Invalid);
        }
        Ok(())
    }

    fn u8(&mut self) -> Result<u8, Invalid> {
        let b = *self.buf.get(self.pos).ok_or(Invalid)?;
        self.pos += 1;
        Ok(b)
    }

    fn u32(&mut self) -> Result<u32, Invalid> {
        let b: [u8; 4] =
            self.buf.get(self.pos..self.pos + 4).ok_or(Invalid)?.try_into().map_err(|_| Invalid)?;
        self.pos += 4;
        Ok(if self.little_endian { u32::from_le_bytes(b) } else { u32::from_be_bytes(b) })
    }

    fn f64(&mut self) -> Result<f64, Invalid> {
        let b: [u8; 8] =
            self.buf.get(self.pos..self.pos + 8).ok_or(Invalid)?.try_into().map_err(|_| Invalid)?;
        self.pos += 8;
        Ok(if self.little_endian { f64::from_le_bytes(b) } else { f64::from_be_bytes(b) })
    }

    /// An element count, which cannot exceed the bytes left (each element takes one at least).
    fn count(&mut self) -> Result<u32, Invalid> {
        let n = self.u32()?;
        if u64::from(n) > self.remaining() as u64 {
            return Err(Invalid);
        }
        Ok(n)
    }
}

impl GeometryBounds {
    /// Adds one WKB value (a null is not added). An invalid value makes the bounds absent.
    pub fn add(&mut self, wkb: &[u8]) {
        if self.incomplete {
            return;
        }
        let mut r = Reader { buf: wkb, pos: 0, little_endian: true };
        let ok = self.geometry(&mut r, ANY_TYPE, None, 0).is_ok() && r.remaining() == 0;
        if !ok {
            self.incomplete = true;
        }
    }

    /// The lower and upper bounds in the spec's single-value form (x:y, little-endian doubles),
    /// or `None` when a value was invalid or no coordinate had both an X and a Y.
    pub fn bounds(&self) -> Option<(Vec<u8>, Vec<u8>)> {
        if self.incomplete || !self.x.has_value || !self.y.has_value {
            return None;
        }
        let point = |x: f64, y: f64| [x.to_le_bytes(), y.to_le_bytes()].concat();
        Some((point(self.x.lower, self.y.lower), point(self.x.upper, self.y.upper)))
    }

    fn geometry(
        &mut self,
        r: &mut Reader,
        expected: u32,
        dims: Option<u32>,
        depth: usize,
    ) -> Result<(), Invalid> {
        if depth > MAX_DEPTH {
            return Err(Invalid);
        }
        r.need(5)?;
        r.little_endian = match r.u8()? {
            0 => false,
            1 => true,
            _ => return Err(Invalid),
        };
        let code = r.u32()?;
        let (group, kind) = (code / 1000, code % 1000);
        if !(POINT..=GEOMETRY_COLLECTION).contains(&kind) || group > 3 {
            return Err(Invalid);
        }
        if (expected != ANY_TYPE && kind != expected) || dims.is_some_and(|g| g != group) {
            return Err(Invalid);
        }
        // XY, XYZ, XYM, XYZM.
        let ordinates = match group {
            0 => 2,
            3 => 4,
            _ => 3,
        };
        match kind {
            POINT => self.coordinate(r, ordinates),
            LINE_STRING => self.sequence(r, ordinates),
            POLYGON => {
                for _ in 0..r.count()? {
                    self.ring(r, ordinates)?;
                }
                Ok(())
            }
            _ => {
                let child = match kind {
                    MULTI_POINT => POINT,
                    MULTI_LINE_STRING => LINE_STRING,
                    MULTI_POLYGON => POLYGON,
                    _ => ANY_TYPE,
                };
                for _ in 0..r.count()? {
                    self.geometry(r, child, Some(group), depth + 1)?;
                }
                Ok(())
            }
        }
    }

    fn xy(r: &mut Reader, ordinates: u64) -> Result<(f64, f64), Invalid> {
        r.need(ordinates * 8)?;
        let (x, y) = (r.f64()?, r.f64()?);
        for _ in 2..ordinates {
            r.f64()?;
        }
        Ok((x, y))
    }

    fn coordinate(&mut self, r: &mut Reader, ordinates: u64) -> Result<(), Invalid> {
        let (x, y) = Self::xy(r, ordinates)?;
        self.x.add(x);
        self.y.add(y);
        Ok(())
    }

    fn sequence(&mut self, r: &mut Reader, ordinates: u64) -> Result<(), Invalid> {
        let n = r.count()?;
        r.need(u64::from(n) * ordinates * 8)?;
        for _ in 0..n {
            self.coordinate(r, ordinates)?;
        }
        Ok(())
    }

    /// A ring: empty, or at least 4 points whose first and last are equal (NaN never is).
    fn ring(&mut self, r: &mut Reader, ordinates: u64) -> Result<(), Invalid> {
        let n = r.count()?;
        r.need(u64::from(n) * ordinates * 8)?;
        if n == 0 {
            return Ok(());
        }
        if n < 4 {
            return Err(Invalid);
        }
        let first = Self::xy(r, ordinates)?;
        self.x.add(first.0);
        self.y.add(first.1);
        for _ in 1..n - 1 {
            self.coordinate(r, ordinates)?;
        }
        let last = Self::xy(r, ordinates)?;
        self.x.add(last.0);
        self.y.add(last.1);
        #[allow(clippy::float_cmp)]
        if first.0 != last.0 || first.1 != last.1 {
            return Err(Invalid);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(x: f64, y: f64) -> Vec<u8> {
        let mut b = vec![1, 1, 0, 0, 0];
        b.extend(x.to_le_bytes());
        b.extend(y.to_le_bytes());
        b
    }

    fn corners(g: &GeometryBounds) -> Option<[f64; 4]> {
        let (lo, hi) = g.bounds()?;
        let d = |b: &[u8], i: usize| f64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
        Some([d(&lo, 0), d(&lo, 1), d(&hi, 0), d(&hi, 1)])
    }

    #[test]
    fn bounds_cover_every_coordinate_and_skip_nan() {
        let mut g = GeometryBounds::default();
        g.add(&point(1.5, -2.0));
        // A big-endian XYZ point: Z read past.
        let mut z = vec![0, 0, 0, 0x03, 0xe9];
        for v in [-7.0f64, 4.0, 100.0] {
            z.extend(v.to_be_bytes());
        }
        g.add(&z);
        g.add(&point(f64::NAN, 9.0));
        g.add(&point(f64::INFINITY, f64::NAN));
        assert_eq!(corners(&g), Some([-7.0, -2.0, f64::INFINITY, 9.0]));
    }

    #[test]
    fn polygons_and_collections_follow_javas_rules() {
        let ring = |pts: &[(f64, f64)]| {
            let mut b = vec![1, 3, 0, 0, 0, 1, 0, 0, 0];
            b.extend((pts.len() as u32).to_le_bytes());
            for (x, y) in pts {
                b.extend(x.to_le_bytes());
                b.extend(y.to_le_bytes());
            }
            b
        };
        let square = ring(&[(0.0, 0.0), (0.0, 2.0), (3.0, 2.0), (0.0, 0.0)]);
        let mut collection = vec![1, 7, 0, 0, 0, 2, 0, 0, 0];
        collection.extend(&square);
        collection.extend(point(-1.0, 5.0));
        let mut g = GeometryBounds::default();
        g.add(&collection);
        assert_eq!(corners(&g), Some([-1.0, 0.0, 3.0, 5.0]));

        for bad in [
            ring(&[(0.0, 0.0), (1.0, 1.0), (0.0, 0.0)]), // under 4 points
            ring(&[(0.0, 0.0), (1.0, 1.0), (2.0, 0.0), (0.0, 1.0)]), // open
            {
                let mut p = point(1.0, 1.0);
                p.push(0); // trailing byte
                p
            },
            vec![1, 8, 0, 0, 0],                                        // unknown type
            vec![1, 4, 0, 0, 0, 1, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0], // multipoint of a line
            point(1.0, 1.0)[..12].to_vec(),                             // cut short
            vec![2, 1, 0, 0, 0],                                        // byte order
        ] {
            let mut g = GeometryBounds::default();
            g.add(&point(5.0, 5.0));
            g.add(&bad);
            assert!(g.bounds().is_none(), "{bad:?}");
        }
        let mut empty = GeometryBounds::default();
        empty.add(&point(f64::NAN, f64::NAN));
        assert!(empty.bounds().is_none());
    }
}
