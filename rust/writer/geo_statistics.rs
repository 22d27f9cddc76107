//! The GeospatialStatistics of a GEOMETRY column chunk in a Parquet footer, as parquet-java
//! 1.17 writes them for Iceberg Java's tables (its `GeospatialStatistics.Builder` over JTS's
//! reading of each WKB value):
//!
//! - a value JTS reads as empty adds nothing: a point whose X or Y is NaN, a line string or
//!   polygon without coordinates, a collection of empty parts; nor does a value that is not WKB;
//! - the geometry types are ISO WKB codes, sorted: the value's type, plus 1000 when the first
//!   coordinate has a Z that is not NaN and 2000 when it has such an M (not the header's
//!   dimension: a `POINT Z` whose Z is NaN counts as a `POINT`);
//! - the bounding box is the X / Y range of the coordinates (NaN left out), with the Z and M
//!   ranges where there are any; it is left out when X or Y has no finite extent (no values,
//!   or an infinite ordinate on one side only: parquet-java's `isXYEmpty`), and so is a Z or M
//!   range without one;
//! - a chunk of nulls and empty values gets no statistics; GEOGRAPHY chunks get none
//!   (parquet-java has no spherical bounder).
//!
//! The box comes from arrow-rs's bounder (`parquet-geospatial`, the parquet crate's `geospatial`
//! feature) and the values are read by the `wkb` crate; what is written by hand is parquet-java's
//! choice of what counts, which neither crate makes (the crate's own accumulator writes an
//! infinite box, counts empty points, takes the dimension from the header and drops the whole
//! chunk's statistics for one value that is not WKB).

use std::sync::{Arc, Once};

use geo_traits::{
    CoordTrait, Dimensions, GeometryCollectionTrait, GeometryTrait, GeometryType, LineStringTrait,
    MultiLineStringTrait, MultiPointTrait, MultiPolygonTrait, PointTrait, PolygonTrait,
};
use parquet::basic::LogicalType;
use parquet::geospatial::accumulator::{
    init_geo_stats_accumulator_factory, GeoStatsAccumulator, GeoStatsAccumulatorFactory,
    VoidGeoStatsAccumulator,
};
use parquet::geospatial::bounding_box::BoundingBox;
use parquet::geospatial::statistics::GeospatialStatistics;
use parquet::schema::types::ColumnDescPtr;
use parquet_geospatial::bounding::GeometryBounder;
use parquet_geospatial::interval::IntervalTrait;
use wkb::reader::Wkb;

/// Makes the parquet crate's writers use parquet-java's rules (once a process, before the first
/// Parquet file is written).
pub fn install() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // Fails only if a factory was set before: none other is in this process.
        let _ = init_geo_stats_accumulator_factory(Arc::new(JavaRules));
    });
}

/// The accumulator factory: parquet-java's statistics for GEOMETRY chunks, none for others.
#[derive(Debug)]
struct JavaRules;

impl GeoStatsAccumulatorFactory for JavaRules {
    fn new_accumulator(&self, descr: &ColumnDescPtr) -> Box<dyn GeoStatsAccumulator> {
        match descr.logical_type_ref() {
            Some(LogicalType::Geometry { .. }) => Box::new(GeometryStatistics::default()),
            _ => Box::new(VoidGeoStatsAccumulator::default()),
        }
    }
}

/// One GEOMETRY chunk's statistics as parquet-java gathers them.
#[derive(Debug)]
pub(crate) struct GeometryStatistics {
    bounder: GeometryBounder,
    types: Vec<i32>,
}

impl Default for GeometryStatistics {
    fn default() -> Self {
        Self { bounder: GeometryBounder::empty(), types: Vec::new() }
    }
}

impl GeoStatsAccumulator for GeometryStatistics {
    fn is_valid(&self) -> bool {
        true
    }

    fn update_wkb(&mut self, wkb: &[u8]) {
        let Ok(geometry) = Wkb::try_new(wkb) else {
            return; // not WKB: parquet-java skips what JTS cannot read
        };
        let Some(first) = first_coordinate(&geometry) else {
            return; // empty for JTS
        };
        let code = type_code(&geometry, first);
        if !self.types.contains(&code) {
            self.types.push(code);
        }
        // The bounder reads the same value again; it fails only on what `try_new` refused.
        let _ = self.bounder.update_wkb(wkb);
    }

    fn finish(&mut self) -> Option<Box<GeospatialStatistics>> {
        let bounder = std::mem::replace(&mut self.bounder, GeometryBounder::empty());
        let mut types = std::mem::take(&mut self.types);
        if types.is_empty() {
            return None; // nulls and empty values only
        }
        types.sort_unstable();
        // parquet-java's `isXEmpty` / `isYEmpty` ...: `Double.isInfinite(min - max)`, which
        // holds for an empty range (+inf, -inf) and a range open on one side only.
        let range = |lo: f64, hi: f64| (!(lo - hi).is_infinite()).then_some((lo, hi));
        let (x, y, z, m) = (bounder.x(), bounder.y(), bounder.z(), bounder.m());
        let bbox = match (range(x.lo(), x.hi()), range(y.lo(), y.hi())) {
            (Some((xmin, xmax)), Some((ymin, ymax))) => {
                let mut bbox = BoundingBox::new(xmin, xmax, ymin, ymax);
                if let Some((zmin, zmax)) = range(z.lo(), z.hi()) {
                    bbox = bbox.with_zrange(zmin, zmax);
                }
                if let Some((mmin, mmax)) = range(m.lo(), m.hi()) {
                    bbox = bbox.with_mrange(mmin, mmax);
                }
                Some(bbox)
            }
            _ => None,
        };
        Some(Box::new(GeospatialStatistics::new(bbox, Some(types))))
    }
}

/// The Z and M of the first coordinate JTS reads from `g` (NaN where the value has none), in
/// JTS's coordinate order; None when JTS reads `g` as empty.
fn first_coordinate(g: &Wkb<'_>) -> Option<(f64, f64)> {
    match g.as_type() {
        GeometryType::Point(p) => point(p),
        GeometryType::LineString(l) => l.coords().next().map(|c| z_m(&c)),
        GeometryType::Polygon(p) => p.exterior().and_then(|r| r.coords().next()).map(|c| z_m(&c)),
        GeometryType::MultiPoint(ps) => ps.points().find_map(|p| point(&p)),
        GeometryType::MultiLineString(ls) => {
            ls.line_strings().find_map(|l| l.coords().next().map(|c| z_m(&c)))
        }
        GeometryType::MultiPolygon(ps) => {
            ps.polygons().find_map(|p| p.exterior().and_then(|r| r.coords().next()).map(|c| z_m(&c)))
        }
        GeometryType::GeometryCollection(gs) => gs.geometries().find_map(|g| first_coordinate(g)),
        _ => None,
    }
}

/// A point's coordinate unless JTS reads it as empty (an X or a Y that is NaN).
fn point(p: &impl PointTrait<T = f64>) -> Option<(f64, f64)> {
    let c = p.coord()?;
    (!c.x().is_nan() && !c.y().is_nan()).then(|| z_m(&c))
}

fn z_m(c: &impl CoordTrait<T = f64>) -> (f64, f64) {
    let nth = |n: usize| c.nth(n).unwrap_or(f64::NAN);
    match c.dim() {
        Dimensions::Xyz => (nth(2), f64::NAN),
        Dimensions::Xym => (f64::NAN, nth(2)),
        Dimensions::Xyzm => (nth(2), nth(3)),
        _ => (f64::NAN, f64::NAN),
    }
}

/// parquet-java's `GeospatialTypes` code: the value's type, its dimension from the first
/// coordinate.
fn type_code(g: &Wkb<'_>, (z, m): (f64, f64)) -> i32 {
    let base = match g.as_type() {
        GeometryType::Point(_) => 1,
        GeometryType::LineString(_) => 2,
        GeometryType::Polygon(_) => 3,
        GeometryType::MultiPoint(_) => 4,
        GeometryType::MultiLineString(_) => 5,
        GeometryType::MultiPolygon(_) => 6,
        _ => 7,
    };
    base + if z.is_nan() { 0 } else { 1000 } + if m.is_nan() { 0 } else { 2000 }
}

#[cfg(test)]
#[path = "geo_statistics_tests.rs"]
mod tests;
