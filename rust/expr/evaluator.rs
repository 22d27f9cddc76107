//! Row-level evaluation of a bound expression on Arrow record batches: the residual filter
//! of the merge-on-read reader and overwrite-by-filter. Columns are found by Iceberg field
//! id (`PARQUET:field_id` metadata, nested structs included), falling back to the dotted
//! name. Semantics are SQL's and `icefloe.expressions.to_pyarrow`'s (keep the two in step):
//! - three-valued logic: a comparison with a null is null, `NOT null` is null, AND/OR are
//!   Kleene; the final mask selects only `true` rows;
//! - `is_nan(null)` is false, `not_nan(null)` is true (a null is not NaN);
//! - floats compare as IEEE numbers except that NaN sorts above every number: `x > 1.0`
//!   and `x >= 1.0` select NaN (Java's and Spark's order); `-0.0 = 0.0` as in Spark.

use arrow::array::{
    Array, ArrayRef, BooleanArray, Float32Array, Float64Array, RecordBatch, Scalar, StructArray,
};
use arrow::compute::kernels::{boolean, cmp, comparison};
use arrow::datatypes::{DataType, Field, Fields};

use super::bind::{BoundExpr, BoundPredicate};
use super::predicate::Operator;
use crate::error::{invalid_data, Result};
use crate::spec::Literal;

const FIELD_ID_KEY: &str = "PARQUET:field_id";

/// The rows of `batch` that satisfy `expr` (nulls already turned into `false`).
pub fn filter_mask(expr: &BoundExpr, batch: &RecordBatch) -> Result<BooleanArray> {
    let m = eval(expr, batch)?;
    if m.null_count() == 0 {
        return Ok(m);
    }
    Ok(arrow::compute::prep_null_mask_filter(&m))
}

/// `batch` restricted to the rows that satisfy `expr`.
pub fn filter_batch(expr: &BoundExpr, batch: &RecordBatch) -> Result<RecordBatch> {
    if matches!(expr, BoundExpr::True) {
        return Ok(batch.clone());
    }
    let m = filter_mask(expr, batch)?;
    arrow::compute::filter_record_batch(batch, &m).map_err(arrow_err)
}

fn arrow_err(e: arrow::error::ArrowError) -> crate::Error {
    invalid_data("row filter evaluation failed").with_source(e)
}

/// Three-valued evaluation (nulls kept).
pub fn eval(expr: &BoundExpr, batch: &RecordBatch) -> Result<BooleanArray> {
    let n = batch.num_rows();
    Ok(match expr {
        BoundExpr::True => BooleanArray::from(vec![true; n]),
        BoundExpr::False => BooleanArray::from(vec![false; n]),
        BoundExpr::And(l, r) => boolean::and_kleene(&eval(l, batch)?, &eval(r, batch)?).map_err(arrow_err)?,
        BoundExpr::Or(l, r) => boolean::or_kleene(&eval(l, batch)?, &eval(r, batch)?).map_err(arrow_err)?,
        BoundExpr::Not(c) => boolean::not(&eval(c, batch)?).map_err(arrow_err)?,
        BoundExpr::Predicate(p) => {
            let col = find_column(batch, p)?;
            eval_predicate(p, &col)?
        }
    })
}

fn field_id(f: &Field) -> Option<i32> {
    f.metadata().get(FIELD_ID_KEY).and_then(|v| v.parse().ok())
}

fn find_in(fields: &Fields, columns: &[ArrayRef], id: i32) -> Option<ArrayRef> {
    for (f, c) in fields.iter().zip(columns) {
        if field_id(f) == Some(id) {
            return Some(c.clone());
        }
        if let (DataType::Struct(children), Some(s)) =
            (f.data_type(), c.as_any().downcast_ref::<StructArray>())
        {
            if let Some(found) = find_in(children, s.columns(), id) {
                return crate::arrow::null_where_parent_null(s, found).ok();
            }
        }
    }
    None
}

fn find_column(batch: &RecordBatch, p: &BoundPredicate) -> Result<ArrayRef> {
    if let Some(c) = find_in(batch.schema().fields(), batch.columns(), p.term.field_id) {
        return Ok(c);
    }
    // By name path (batches without field ids).
    let mut parts = p.term.name.split('.');
    let first = parts.next().unwrap_or_default();
    let mut col = batch.column_by_name(first).cloned();
    for part in parts {
        col = col.and_then(|c| {
            c.as_any().downcast_ref::<StructArray>().and_then(|s| s.column_by_name(part).cloned())
        });
    }
    col.ok_or_else(|| {
        invalid_data(format!(
            "row filter column '{}' (field id {}) is not in the batch (columns: {})",
            p.term.name,
            p.term.field_id,
            batch.schema().fields().iter().map(|f| f.name().as_str()).collect::<Vec<_>>().join(", ")
        ))
    })
}

fn eval_predicate(p: &BoundPredicate, col: &ArrayRef) -> Result<BooleanArray> {
    match p.op {
        Operator::IsNull => return boolean::is_null(col).map_err(arrow_err),
        Operator::NotNull => return boolean::is_not_null(col).map_err(arrow_err),
        _ => {}
    }
    if let Some(f) = col.as_any().downcast_ref::<Float64Array>() {
        return Ok(float_predicate(p, f.len(), |i| f.is_valid(i).then(|| f.value(i))));
    }
    if let Some(f) = col.as_any().downcast_ref::<Float32Array>() {
        return Ok(float_predicate(p, f.len(), |i| f.is_valid(i).then(|| f64::from(f.value(i)))));
    }
    let scalar = |l: &Literal| -> Result<Scalar<ArrayRef>> {
        Ok(Scalar::new(crate::arrow::constants::literal_array(l, &p.term.ty, col.data_type())?))
    };
    let r = match p.op {
        Operator::IsNan => BooleanArray::from(vec![false; col.len()]),
        Operator::NotNan => BooleanArray::from(vec![true; col.len()]),
        Operator::Lt | Operator::LtEq | Operator::Gt | Operator::GtEq | Operator::Eq | Operator::NotEq => {
            let s = scalar(p.literals.first().ok_or_else(|| invalid_data("comparison without a literal"))?)?;
            let c: &dyn Array = col.as_ref();
            match p.op {
                Operator::Lt => cmp::lt(&c, &s),
                Operator::LtEq => cmp::lt_eq(&c, &s),
                Operator::Gt => cmp::gt(&c, &s),
                Operator::GtEq => cmp::gt_eq(&c, &s),
                Operator::Eq => cmp::eq(&c, &s),
                _ => cmp::neq(&c, &s),
            }
            .map_err(arrow_err)?
        }
        Operator::In | Operator::NotIn if p.literals.len() > SMALL_IN_LIST => {
            let lits = p
                .literals
                .iter()
                .map(|l| crate::arrow::constants::literal_array(l, &p.term.ty, col.data_type()))
                .collect::<Result<Vec<_>>>()?;
            let acc = in_set(col, &lits)?;
            if p.op == Operator::In {
                acc
            } else {
                boolean::not(&acc).map_err(arrow_err)?
            }
        }
        Operator::In | Operator::NotIn => {
            let c: &dyn Array = col.as_ref();
            let mut acc = BooleanArray::from(vec![false; col.len()]);
            for l in &p.literals {
                let e = cmp::eq(&c, &scalar(l)?).map_err(arrow_err)?;
                acc = boolean::or_kleene(&acc, &e).map_err(arrow_err)?;
            }
            if p.op == Operator::In {
                acc
            } else {
                boolean::not(&acc).map_err(arrow_err)?
            }
        }
        Operator::StartsWith | Operator::NotStartsWith => {
            let s = scalar(p.literals.first().ok_or_else(|| invalid_data("starts_with without a prefix"))?)?;
            let c: &dyn Array = col.as_ref();
            let r = comparison::starts_with(&c, &s).map_err(arrow_err)?;
            if p.op == Operator::StartsWith {
                r
            } else {
                boolean::not(&r).map_err(arrow_err)?
            }
        }
        Operator::IsNull | Operator::NotNull => unreachable!("handled above"),
    };
    Ok(r)
}

/// Up to this many literals an IN list is a chain of vectorised equality kernels; beyond it,
/// one pass with a hash set of the literals' row encodings (a 1,000-value IN list would
/// otherwise take 1,000 passes over the batch).
const SMALL_IN_LIST: usize = 8;

/// `col IN (lits)` with SQL's nulls (a null value gives null), by hashing Arrow's row format
/// of each value: one pass whatever the list's length, for every type the kernels compare.
fn in_set(col: &ArrayRef, lits: &[ArrayRef]) -> Result<BooleanArray> {
    use arrow_row::{RowConverter, SortField};
    let conv = RowConverter::new(vec![SortField::new(col.data_type().clone())]).map_err(arrow_err)?;
    let refs: Vec<&dyn Array> = lits.iter().map(|a| a.as_ref()).collect();
    let lit_array = arrow::compute::concat(&refs).map_err(arrow_err)?;
    let lit_rows = conv.convert_columns(&[lit_array]).map_err(arrow_err)?;
    let set: std::collections::HashSet<&[u8]> = lit_rows.iter().map(|r| r.data()).collect();
    let rows = conv.convert_columns(std::slice::from_ref(col)).map_err(arrow_err)?;
    Ok((0..col.len()).map(|i| col.is_valid(i).then(|| set.contains(rows.row(i).data()))).collect())
}

/// Floats: IEEE comparisons, NaN above every number, nulls give null.
fn float_predicate(p: &BoundPredicate, n: usize, get: impl Fn(usize) -> Option<f64>) -> BooleanArray {
    let lits: Vec<f64> = p
        .literals
        .iter()
        .filter_map(|l| match l {
            Literal::Float(x) => Some(f64::from(*x)),
            Literal::Double(x) => Some(*x),
            _ => None,
        })
        .collect();
    let lit = lits.first().copied().unwrap_or(f64::NAN);
    (0..n)
        .map(|i| {
            let v = get(i);
            match p.op {
                Operator::IsNan => Some(v.is_some_and(f64::is_nan)),
                Operator::NotNan => Some(!v.is_some_and(f64::is_nan)),
                _ => v.map(|v| match p.op {
                    Operator::Lt => v < lit,
                    Operator::LtEq => v <= lit,
                    Operator::Gt => v > lit || v.is_nan(),
                    Operator::GtEq => v >= lit || v.is_nan(),
                    Operator::Eq => v == lit,
                    Operator::NotEq => v != lit,
                    Operator::In => lits.contains(&v),
                    Operator::NotIn => !lits.contains(&v),
                    _ => false,
                }),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Arc;

    use arrow::array::{Int64Array, StringArray, TimestampMicrosecondArray};

    use super::*;
    use crate::expr::bind::tests::schema;
    use crate::expr::{bind, parse_filter};

    fn batch() -> RecordBatch {
        let md = |id: i32| HashMap::from([(FIELD_ID_KEY.to_string(), id.to_string())]);
        let fields = vec![
            Field::new("id", DataType::Int64, false).with_metadata(md(1)),
            Field::new("name", DataType::Utf8, true).with_metadata(md(4)),
            Field::new("f", DataType::Float32, true).with_metadata(md(7)),
            Field::new(
                "ts",
                DataType::Timestamp(arrow::datatypes::TimeUnit::Microsecond, Some("UTC".into())),
                true,
            )
            .with_metadata(md(3)),
        ];
        RecordBatch::try_new(
            Arc::new(arrow::datatypes::Schema::new(fields)),
            vec![
                Arc::new(Int64Array::from(vec![1, 2, 3, 4, 5])),
                Arc::new(StringArray::from(vec![
                    Some("apple"),
                    None,
                    Some("banana"),
                    Some("avocado"),
                    Some("x"),
                ])),
                Arc::new(Float32Array::from(vec![Some(1.0), Some(f32::NAN), None, Some(-0.0), Some(3.0)])),
                Arc::new(
                    TimestampMicrosecondArray::from(vec![
                        Some(0),
                        Some(86_400_000_000),
                        None,
                        Some(-1),
                        Some(5),
                    ])
                    .with_timezone("UTC"),
                ),
            ],
        )
        .unwrap()
    }

    fn rows(f: &str) -> Vec<i64> {
        let e = bind(&parse_filter(f).unwrap(), &schema(), true).unwrap();
        let out = filter_batch(&e, &batch()).unwrap();
        out.column(0).as_any().downcast_ref::<Int64Array>().unwrap().values().to_vec()
    }

    #[test]
    fn sql_semantics() {
        assert_eq!(rows("id > 2"), vec![3, 4, 5]);
        assert_eq!(rows("3 >= id"), vec![1, 2, 3]);
        assert_eq!(rows("name LIKE 'a%'"), vec![1, 4]);
        assert_eq!(rows("name NOT LIKE 'a%'"), vec![3, 5]);
        assert_eq!(rows("name != 'x'"), vec![1, 3, 4]);
        assert_eq!(rows("NOT name = 'x'"), vec![1, 3, 4]);
        assert_eq!(rows("name IN ('x', 'apple')"), vec![1, 5]);
        assert_eq!(rows("name NOT IN ('x', 'apple')"), vec![3, 4]);
        assert_eq!(rows("name IS NULL OR id = 1"), vec![1, 2]);
        assert_eq!(rows("f > 2.0"), vec![2, 5]);
        assert_eq!(rows("f >= 3.0"), vec![2, 5]);
        assert_eq!(rows("f < 2.0"), vec![1, 4]);
        assert_eq!(rows("f = 0.0"), vec![4]);
        assert_eq!(rows("f != 1.0"), vec![2, 4, 5]);
        assert_eq!(rows("isnan(f)"), vec![2]);
        assert_eq!(rows("NOT isnan(f)"), vec![1, 3, 4, 5]);
        assert_eq!(rows("f IN (1.0, 3.0)"), vec![1, 5]);
        assert_eq!(rows("ts >= '1970-01-01'"), vec![1, 2, 5]);
        assert_eq!(rows("ts < '1970-01-01'"), vec![4]);
        assert_eq!(rows("true"), vec![1, 2, 3, 4, 5]);
        assert_eq!(rows("false"), Vec::<i64>::new());
    }

    #[test]
    fn long_in_lists_hash_with_the_same_semantics() {
        let pad = |xs: &[&str]| {
            (0..20)
                .map(|i| format!("'pad{i}'"))
                .chain(xs.iter().map(|x| x.to_string()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        assert_eq!(rows(&format!("name IN ({})", pad(&["'x'", "'apple'"]))), vec![1, 5]);
        // NOT IN: the null name is neither in nor out (SQL), as with a short list.
        assert_eq!(rows(&format!("name NOT IN ({})", pad(&["'x'", "'apple'"]))), vec![3, 4]);
        let ids =
            (10..40).map(|i| i.to_string()).chain(["2".into(), "4".into()]).collect::<Vec<_>>().join(", ");
        assert_eq!(rows(&format!("id IN ({ids})")), vec![2, 4]);
        assert_eq!(rows(&format!("id NOT IN ({ids})")), vec![1, 3, 5]);
    }

    #[test]
    fn missing_column_is_named() {
        let e = bind(&parse_filter("i = 1").unwrap(), &schema(), true).unwrap();
        let err = filter_batch(&e, &batch()).unwrap_err();
        assert!(err.to_string().contains("'i'"), "{err}");
    }
}
