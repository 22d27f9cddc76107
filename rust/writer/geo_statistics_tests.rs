//! parquet-java 1.17's GeospatialStatistics for the same values (read from footers Iceberg
//! Java wrote: tests/table/test_geospatial.py compares whole files).

use super::*;

fn point(x: f64, y: f64) -> Vec<u8> {
    let mut v = vec![1, 1, 0, 0, 0];
    v.extend(x.to_le_bytes());
    v.extend(y.to_le_bytes());
    v
}

fn point_z(x: f64, y: f64, z: f64) -> Vec<u8> {
    let mut v = vec![1];
    v.extend(1001u32.to_le_bytes());
    for c in [x, y, z] {
        v.extend(c.to_le_bytes());
    }
    v
}

fn line(pts: &[(f64, f64)]) -> Vec<u8> {
    let mut v = vec![1];
    v.extend(2u32.to_le_bytes());
    v.extend((pts.len() as u32).to_le_bytes());
    for (x, y) in pts {
        v.extend(x.to_le_bytes());
        v.extend(y.to_le_bytes());
    }
    v
}

fn collection(code: u32, parts: &[Vec<u8>]) -> Vec<u8> {
    let mut v = vec![1];
    v.extend(code.to_le_bytes());
    v.extend((parts.len() as u32).to_le_bytes());
    for p in parts {
        v.extend(p);
    }
    v
}

/// (types, [xmin, xmax, ymin, ymax], z range, m range) of the chunk's statistics.
type Summary = (Vec<i32>, Option<[f64; 4]>, Option<(f64, f64)>, Option<(f64, f64)>);

fn statistics(values: &[Vec<u8>]) -> Option<Summary> {
    let mut acc = GeometryStatistics::default();
    for v in values {
        acc.update_wkb(v);
    }
    let s = acc.finish()?;
    let types = s.geospatial_types().cloned().unwrap_or_default();
    let bbox = s.bounding_box();
    let xy = bbox.map(|b| [b.get_xmin(), b.get_xmax(), b.get_ymin(), b.get_ymax()]);
    let z = bbox.and_then(|b| Some((b.get_zmin()?, b.get_zmax()?)));
    let m = bbox.and_then(|b| Some((b.get_mmin()?, b.get_mmax()?)));
    Some((types, xy, z, m))
}

#[test]
fn an_infinite_ordinate_on_one_side_leaves_the_box_out_and_keeps_the_types() {
    let values = [
        point(1.5, -2.25),
        line(&[(0.0, 0.0), (1.0, 1.0), (2.0, 0.0)]),
        point_z(1.0, 2.0, 3.0),
        point(f64::INFINITY, 0.0),
    ];
    assert_eq!(statistics(&values), Some((vec![1, 2, 1001], None, None, None)));
}

#[test]
fn a_box_of_points_lines_and_z() {
    let values = [point(1e6, 2e6), line(&[(0.0, 0.0), (1e7, -1e7)]), point_z(-1.0, -2.0, -3.0)];
    assert_eq!(
        statistics(&values),
        Some((vec![1, 2, 1001], Some([-1.0, 1e7, -1e7, 2e6]), Some((-3.0, -3.0)), None))
    );
}

#[test]
fn infinite_ordinates_on_both_sides_are_kept() {
    // -inf - -inf is NaN, not infinite: parquet-java keeps such a range
    assert_eq!(
        statistics(&[point(f64::NEG_INFINITY, 1.0)]),
        Some((vec![1], Some([f64::NEG_INFINITY, f64::NEG_INFINITY, 1.0, 1.0]), None, None))
    );
    assert_eq!(
        statistics(&[point_z(1.0, 2.0, f64::INFINITY)]),
        Some((vec![1001], Some([1.0, 1.0, 2.0, 2.0]), Some((f64::INFINITY, f64::INFINITY)), None))
    );
}

#[test]
fn empty_values_nulls_and_values_that_are_not_wkb_add_nothing() {
    assert_eq!(statistics(&[]), None);
    assert_eq!(statistics(&[point(f64::NAN, f64::NAN), point(15.0, f64::NAN), line(&[])]), None);
    assert_eq!(statistics(&[collection(7, &[point(f64::NAN, 1.0)])]), None);
    let truncated = vec![1, 1, 0, 0, 0, 0];
    assert_eq!(
        statistics(&[truncated, vec![], point(5.0, 6.0)]),
        Some((vec![1], Some([5.0, 5.0, 6.0, 6.0]), None, None))
    );
}

#[test]
fn the_dimension_is_the_first_coordinates() {
    // a POINT Z whose Z is NaN is a POINT for parquet-java; a collection takes its first part's
    assert_eq!(
        statistics(&[point_z(1.0, 2.0, f64::NAN)]),
        Some((vec![1], Some([1.0, 1.0, 2.0, 2.0]), None, None))
    );
    let nan = f64::NAN;
    let mixed = collection(1007, &[point_z(nan, nan, nan), point_z(3.0, 4.0, 5.0), point_z(6.0, 7.0, nan)]);
    assert_eq!(statistics(&[mixed]), Some((vec![1007], Some([3.0, 6.0, 4.0, 7.0]), Some((5.0, 5.0)), None)));
}

#[test]
fn each_chunk_starts_again() {
    let mut acc = GeometryStatistics::default();
    acc.update_wkb(&point(1.0, 2.0));
    assert!(acc.finish().is_some());
    assert!(acc.finish().is_none());
}
