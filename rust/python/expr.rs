//! Bindings of the expression room: parse a filter string, bind an expression to a schema,
//! and evaluate the InclusiveMetricsEvaluator on one file (for tests against Iceberg Java).

use pyo3::prelude::*;

use super::errors::PyResultExt;
use crate::error::invalid_data;
use crate::expr::{
    bind, parse_filter as core_parse_filter, BoundExpr, Expression, InclusiveMetricsEvaluator,
    StrictMetricsEvaluator,
};
use crate::manifest::DataFile;
use crate::spec::{
    parse_sort_order_terms as core_parse_sort_order_terms, Schema, TermDirection, TermNullOrder,
};

/// JSON of the unbound expression a filter string means.
#[pyfunction]
fn parse_filter(text: &str) -> PyResult<String> {
    Ok(core_parse_filter(text).py()?.to_json().to_string())
}

/// One term of a sort order string: (column paths, transform lower-cased or None, integer
/// args, "asc" / "desc" or None, "first" / "last" or None).
type PySortTerm = (Vec<Vec<String>>, Option<String>, Vec<i64>, Option<&'static str>, Option<&'static str>);

/// The terms of Iceberg Java's string form of a sort order (syntax only; the caller checks
/// transforms and columns against the table).
#[pyfunction]
fn parse_sort_order_terms(text: &str) -> PyResult<Vec<PySortTerm>> {
    let terms = core_parse_sort_order_terms(text).py()?;
    Ok(terms
        .into_iter()
        .map(|t| {
            let direction = t.direction.map(|d| match d {
                TermDirection::Asc => "asc",
                TermDirection::Desc => "desc",
            });
            let nulls = t.null_order.map(|n| match n {
                TermNullOrder::First => "first",
                TermNullOrder::Last => "last",
            });
            (t.columns, t.transform, t.args, direction, nulls)
        })
        .collect())
}

/// JSON of `expr_json` bound to the schema (field ids, types, converted literals).
#[pyfunction]
#[pyo3(signature = (expr_json, schema_json, case_sensitive=true))]
fn bind_filter(expr_json: &str, schema_json: &str, case_sensitive: bool) -> PyResult<String> {
    let e = Expression::from_json_str(expr_json).py()?;
    let s = Schema::from_json_str(schema_json).py()?;
    Ok(bind(&e, &s, case_sensitive).py()?.to_json().py()?.to_string())
}

/// May a row of this data file (descriptor JSON) match the bound filter (JSON)?
#[pyfunction]
fn eval_inclusive_metrics(data_file_json: &str, bound_json: &str) -> PyResult<bool> {
    let f = DataFile::from_descriptor(data_file_json).py()?;
    let e = BoundExpr::from_json_str(bound_json).py()?;
    Ok(InclusiveMetricsEvaluator::new(&e).eval(&f))
}

/// Do all rows of this data file (descriptor JSON) match the bound filter (JSON)?
/// (StrictMetricsEvaluator)
#[pyfunction]
fn eval_strict_metrics(data_file_json: &str, bound_json: &str) -> PyResult<bool> {
    let f = DataFile::from_descriptor(data_file_json).py()?;
    let e = BoundExpr::from_json_str(bound_json).py()?;
    Ok(StrictMetricsEvaluator::new(&e).eval(&f))
}

/// The paths of the files (descriptor JSONs) that may match the bound filter.
#[pyfunction]
fn files_matching_metrics(data_files_json: Vec<String>, bound_json: &str) -> PyResult<Vec<String>> {
    let e = BoundExpr::from_json_str(bound_json).py()?;
    let ev = InclusiveMetricsEvaluator::new(&e);
    let mut out = vec![];
    for d in &data_files_json {
        let f = DataFile::from_descriptor(d)
            .map_err(|e| invalid_data(format!("bad data file descriptor: {}", e.message())))
            .py()?;
        if ev.eval(&f) {
            out.push(f.file_path);
        }
    }
    Ok(out)
}

/// Which rows of `batch` (columns carrying their Iceberg field ids, as `read_task` returns
/// them) the filter selects: the reader's own row evaluator (SQL nulls: a null result is not
/// selected). `expr_json` is unbound and is bound to `schema_json`.
#[pyfunction]
#[pyo3(signature = (expr_json, schema_json, batch, case_sensitive=true))]
fn filter_mask(
    py: Python<'_>,
    expr_json: &str,
    schema_json: &str,
    batch: arrow::pyarrow::PyArrowType<arrow::record_batch::RecordBatch>,
    case_sensitive: bool,
) -> PyResult<arrow::pyarrow::PyArrowType<arrow::array::ArrayData>> {
    use arrow::array::Array;
    let e = Expression::from_json_str(expr_json).py()?;
    let s = Schema::from_json_str(schema_json).py()?;
    let bound = bind(&e, &s, case_sensitive).py()?;
    let batch = batch.0;
    let mask = py.detach(move || crate::expr::filter_mask(&bound, &batch)).py()?;
    Ok(arrow::pyarrow::PyArrowType(mask.to_data()))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(filter_mask, m)?)?;
    m.add_function(wrap_pyfunction!(parse_filter, m)?)?;
    m.add_function(wrap_pyfunction!(parse_sort_order_terms, m)?)?;
    m.add_function(wrap_pyfunction!(bind_filter, m)?)?;
    m.add_function(wrap_pyfunction!(eval_inclusive_metrics, m)?)?;
    m.add_function(wrap_pyfunction!(eval_strict_metrics, m)?)?;
    m.add_function(wrap_pyfunction!(files_matching_metrics, m)?)?;
    Ok(())
}
