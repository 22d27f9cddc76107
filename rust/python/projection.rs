//! Binding of partition pruning: a row filter projected through a partition spec (inclusive
//! or strict) and evaluated on partition tuples, as the planner and the residual evaluator
//! do (for tests against Iceberg Java's `Projections` + `Evaluator`).

use pyo3::prelude::*;

use super::errors::PyResultExt;
use crate::error::{invalid_data, Result};
use crate::expr::{bind, inclusive_projection, strict_projection, Expression, StructEvaluator};
use crate::spec::{Literal, PartitionSpec, Schema, StructValue, Type};

fn tuples(spec: &PartitionSpec, schema: &Schema, partitions: &[String]) -> Result<Vec<StructValue>> {
    let ptype = spec.partition_type(schema)?;
    partitions
        .iter()
        .map(|p| {
            let v: serde_json::Value = serde_json::from_str(p).map_err(|e| {
                invalid_data(format!("expected a JSON array partition tuple, found '{p}'")).with_source(e)
            })?;
            let items =
                v.as_array().ok_or_else(|| invalid_data(format!("expected a JSON array, found {p}")))?;
            if items.len() != ptype.fields.len() {
                return Err(invalid_data(format!(
                    "expected {} partition values, found {} in {p}",
                    ptype.fields.len(),
                    items.len()
                )));
            }
            items
                .iter()
                .zip(ptype.fields.iter())
                .map(|(x, f)| match (&f.field_type, x) {
                    (_, serde_json::Value::Null) => Ok(None),
                    (Type::Primitive(t), x) => Literal::from_json(t, x).map(Some),
                    (t, _) => {
                        Err(invalid_data(format!("partition field {} has non-primitive type {t:?}", f.id)))
                    }
                })
                .collect()
        })
        .collect()
}

/// For each partition tuple (a JSON array of single values, null for null), whether the
/// filter (unbound JSON, bound to `schema_json`) projected through the spec keeps it:
/// inclusive (may hold a matching row) or strict (all its rows match).
#[pyfunction]
#[pyo3(signature = (expr_json, schema_json, spec_json, partitions, strict=false))]
fn partitions_matching(
    expr_json: &str,
    schema_json: &str,
    spec_json: &str,
    partitions: Vec<String>,
    strict: bool,
) -> PyResult<Vec<bool>> {
    let e = Expression::from_json_str(expr_json).py()?;
    let schema = Schema::from_json_str(schema_json).py()?;
    let spec_value: serde_json::Value = serde_json::from_str(spec_json)
        .map_err(|e| invalid_data("expected a partition spec JSON object").with_source(e))
        .py()?;
    let spec = PartitionSpec::from_json(&spec_value).py()?;
    let bound = bind(&e, &schema, true).py()?;
    let projected =
        if strict { strict_projection(&bound, &spec) } else { inclusive_projection(&bound, &spec) }.py()?;
    let ev = StructEvaluator::new(projected, &spec, strict);
    Ok(tuples(&spec, &schema, &partitions).py()?.iter().map(|t| ev.eval(t)).collect())
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(partitions_matching, m)?)?;
    Ok(())
}
