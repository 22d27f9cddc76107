//! Row-group pruning from Parquet column statistics: the InclusiveMetricsEvaluator's rules
//! applied to one row group's min/max/null counts (Java `ParquetMetricsRowGroupFilter` in
//! spirit). For the reader: `row_group_may_match(&expr, rg, &columns)` where `columns` maps
//! an Iceberg field id to the Parquet leaf column index of a *non-repeated* column (values
//! inside lists/maps have per-element statistics that say nothing per row: leave them out).
//!
//! Statistics are converted to Iceberg single-value bytes: plain-encoded min/max already are
//! for booleans, ints, longs, floats, doubles, strings, binary and fixed; decimals stored as
//! INT32/INT64 are re-encoded; timestamps are used only in the unit the Iceberg type has
//! (micros, or nanos for `timestamp_ns`); NaN or missing min/max mean no bounds;
//! deprecated (signed-order) byte-array statistics are ignored.

use std::collections::HashMap;

use parquet::basic::{LogicalType, TimeUnit, Type as PhysicalType};
use parquet::file::metadata::RowGroupMetaData;
use parquet::file::statistics::Statistics;

use super::bind::BoundExpr;
use super::metrics_evaluator::{FileStats, InclusiveMetricsEvaluator};
use crate::spec::{Literal, PrimitiveType};

/// May a row of this row group match `expr`? `false` only when the statistics prove not.
pub fn row_group_may_match(expr: &BoundExpr, rg: &RowGroupMetaData, columns: &HashMap<i32, usize>) -> bool {
    RowGroupEvaluator::new(expr).eval(rg, columns)
}

/// Binds once, evaluates many row groups.
#[derive(Debug, Clone)]
pub struct RowGroupEvaluator {
    inner: InclusiveMetricsEvaluator,
    /// (field id, Iceberg type) of every column the expression reads.
    fields: Vec<(i32, PrimitiveType)>,
}

impl RowGroupEvaluator {
    pub fn new(expr: &BoundExpr) -> Self {
        let mut fields: Vec<(i32, PrimitiveType)> = vec![];
        expr.visit_predicates(&mut |p| {
            if !fields.iter().any(|(id, _)| *id == p.term.field_id) {
                fields.push((p.term.field_id, p.term.ty.clone()));
            }
        });
        Self { inner: InclusiveMetricsEvaluator::new(expr), fields }
    }

    pub fn eval(&self, rg: &RowGroupMetaData, columns: &HashMap<i32, usize>) -> bool {
        let mut stats =
            RowGroupStats { record_count: rg.num_rows(), cols: Vec::with_capacity(self.fields.len()) };
        for (id, ty) in &self.fields {
            if let Some(c) = columns.get(id).filter(|i| **i < rg.num_columns()).map(|i| rg.column(*i)) {
                stats.cols.push((*id, column_stats(ty, c)));
            }
        }
        self.inner.eval(&stats)
    }
}

#[derive(Debug, Default)]
struct ColStats {
    values: Option<i64>,
    nulls: Option<i64>,
    nans: Option<i64>,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
}

struct RowGroupStats {
    record_count: i64,
    cols: Vec<(i32, ColStats)>,
}

impl RowGroupStats {
    fn col(&self, id: i32) -> Option<&ColStats> {
        self.cols.iter().find(|(i, _)| *i == id).map(|(_, c)| c)
    }
}

impl FileStats for RowGroupStats {
    fn record_count(&self) -> i64 {
        self.record_count
    }
    fn value_count(&self, id: i32) -> Option<i64> {
        self.col(id)?.values
    }
    fn null_count(&self, id: i32) -> Option<i64> {
        self.col(id)?.nulls
    }
    fn has_null_counts(&self) -> bool {
        self.cols.iter().any(|(_, c)| c.nulls.is_some())
    }
    fn nan_count(&self, id: i32) -> Option<i64> {
        self.col(id)?.nans
    }
    fn lower_bound(&self, id: i32) -> Option<&[u8]> {
        self.col(id)?.lower.as_deref()
    }
    fn upper_bound(&self, id: i32) -> Option<&[u8]> {
        self.col(id)?.upper.as_deref()
    }
}

fn column_stats(ty: &PrimitiveType, c: &parquet::file::metadata::ColumnChunkMetaData) -> ColStats {
    let Some(s) = c.statistics() else {
        return ColStats { values: Some(c.num_values()), ..Default::default() };
    };
    let mut out = ColStats {
        values: Some(c.num_values()),
        nulls: s.null_count_opt().and_then(|n| i64::try_from(n).ok()),
        nans: s.nan_count_opt().and_then(|n| i64::try_from(n).ok()),
        lower: None,
        upper: None,
    };
    let logical = c.column_descr().logical_type_ref();
    if let (Some(lo), Some(hi)) = (s.min_bytes_opt(), s.max_bytes_opt()) {
        out.lower = bound_bytes(ty, s, logical, lo);
        out.upper = bound_bytes(ty, s, logical, hi);
        if out.lower.is_none() || out.upper.is_none() {
            out.lower = None;
            out.upper = None;
        }
    }
    out
}

/// Plain-encoded Parquet min/max -> Iceberg single-value bytes of `ty`, or `None`.
fn bound_bytes(
    ty: &PrimitiveType,
    s: &Statistics,
    logical: Option<&LogicalType>,
    raw: &[u8],
) -> Option<Vec<u8>> {
    use PrimitiveType as P;
    let physical = s.physical_type();
    let unit_ok = |want: TimeUnit| match logical {
        Some(LogicalType::Timestamp(t)) => t.unit == want,
        Some(LogicalType::Time(t)) => t.unit == want,
        None => want == TimeUnit::MICROS, // legacy converted types: Iceberg writes micros
        _ => false,
    };
    match (ty, physical) {
        (P::Boolean, PhysicalType::BOOLEAN) => Some(raw.to_vec()),
        (P::Int | P::Date, PhysicalType::INT32) => Some(raw.to_vec()),
        (P::Long, PhysicalType::INT32 | PhysicalType::INT64) => Some(raw.to_vec()),
        (P::Time | P::Timestamp | P::Timestamptz, PhysicalType::INT64) if unit_ok(TimeUnit::MICROS) => {
            Some(raw.to_vec())
        }
        (P::TimestampNs | P::TimestamptzNs, PhysicalType::INT64) if unit_ok(TimeUnit::NANOS) => {
            Some(raw.to_vec())
        }
        (P::Float, PhysicalType::FLOAT) => {
            let v = f32::from_le_bytes(raw.try_into().ok()?);
            (!v.is_nan()).then(|| raw.to_vec())
        }
        (P::Double, PhysicalType::FLOAT | PhysicalType::DOUBLE) => {
            let nan = match raw.len() {
                4 => f32::from_le_bytes(raw.try_into().ok()?).is_nan(),
                _ => f64::from_le_bytes(raw.try_into().ok()?).is_nan(),
            };
            (!nan).then(|| raw.to_vec())
        }
        (P::Decimal { .. }, PhysicalType::INT32) => {
            Some(Literal::Decimal(i128::from(i32::from_le_bytes(raw.try_into().ok()?))).to_bytes())
        }
        (P::Decimal { .. }, PhysicalType::INT64) => {
            Some(Literal::Decimal(i128::from(i64::from_le_bytes(raw.try_into().ok()?))).to_bytes())
        }
        (
            P::Decimal { .. } | P::String | P::Binary | P::Fixed(_) | P::Uuid,
            PhysicalType::BYTE_ARRAY | PhysicalType::FIXED_LEN_BYTE_ARRAY,
        ) => {
            if s.is_min_max_deprecated() {
                return None; // signed byte order: not Iceberg's
            }
            Some(raw.to_vec())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{Float64Array, Int64Array, RecordBatch, StringArray};
    use arrow::datatypes::{DataType, Field, Schema as ArrowSchema};
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::WriterProperties;
    use parquet::file::reader::{FileReader, SerializedFileReader};

    use super::*;
    use crate::expr::bind::tests::schema;
    use crate::expr::{bind, parse_filter};

    /// Two row groups: ids 1..=3 (names a*, one null) and 10..=12 (names b*, f has NaN).
    fn parquet_file() -> bytes::Bytes {
        let s = Arc::new(ArrowSchema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
            Field::new("f", DataType::Float64, true),
        ]));
        let props = WriterProperties::builder().set_max_row_group_row_count(Some(3)).build();
        let mut buf = vec![];
        let mut w = ArrowWriter::try_new(&mut buf, s.clone(), Some(props)).unwrap();
        let b = RecordBatch::try_new(
            s,
            vec![
                Arc::new(Int64Array::from(vec![1, 2, 3, 10, 11, 12])),
                Arc::new(StringArray::from(vec![
                    Some("apple"),
                    None,
                    Some("avocado"),
                    Some("banana"),
                    Some("berry"),
                    Some("bob"),
                ])),
                Arc::new(Float64Array::from(vec![
                    Some(1.0),
                    Some(2.0),
                    Some(3.0),
                    Some(f64::NAN),
                    None,
                    Some(5.0),
                ])),
            ],
        )
        .unwrap();
        w.write(&b).unwrap();
        w.close().unwrap();
        bytes::Bytes::from(buf)
    }

    #[test]
    fn prunes_row_groups() {
        let r = SerializedFileReader::new(parquet_file()).unwrap();
        let md = r.metadata();
        assert_eq!(md.num_row_groups(), 2);
        // schema(): id = 1 (long), name = 4 (string); use f = 7 only as a float column test
        let cols = HashMap::from([(1, 0usize), (4, 1usize)]);
        let keep = |f: &str| -> Vec<bool> {
            let e = bind(&parse_filter(f).unwrap(), &schema(), true).unwrap();
            let ev = RowGroupEvaluator::new(&e);
            md.row_groups().iter().map(|rg| ev.eval(rg, &cols)).collect()
        };
        assert_eq!(keep("id = 2"), vec![true, false]);
        assert_eq!(keep("id > 3"), vec![false, true]);
        assert_eq!(keep("id < 1"), vec![false, false]);
        assert_eq!(keep("id IN (5, 11)"), vec![false, true]);
        assert_eq!(keep("name LIKE 'b%'"), vec![false, true]);
        assert_eq!(keep("name IS NULL"), vec![true, false]);
        assert_eq!(keep("name = 'apple' OR id = 12"), vec![true, true]);
        assert_eq!(keep("i = 1"), vec![true, true]); // column not in the map: may match
    }
}
