//! Bindings of the spec's single-value forms (Appendix D): the binary form of bounds and
//! partition summaries, and the JSON form of defaults, between each other (for tests against
//! Iceberg Java's `Conversions` and `SingleValueParser`).

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::errors::PyResultExt;
use crate::error::invalid_data;
use crate::spec::{Literal, PrimitiveType};

fn json_literal(ty: &PrimitiveType, json: &str) -> crate::error::Result<Literal> {
    let v: serde_json::Value = serde_json::from_str(json).map_err(|e| {
        invalid_data(format!("expected a JSON value of type {ty}, found '{json}'")).with_source(e)
    })?;
    Literal::from_json(ty, &v)
}

/// The binary single value of the JSON single value `json` of type `ty` (`long`, `decimal(9, 2)`, ...).
#[pyfunction]
fn single_value_to_bytes<'py>(py: Python<'py>, ty: &str, json: &str) -> PyResult<Bound<'py, PyBytes>> {
    let t = PrimitiveType::parse(ty).py()?;
    let lit = json_literal(&t, json).py()?;
    Ok(PyBytes::new(py, &lit.to_bytes()))
}

/// The JSON single value of the binary single value `data` of type `ty`.
#[pyfunction]
fn single_value_from_bytes(ty: &str, data: &[u8]) -> PyResult<String> {
    let t = PrimitiveType::parse(ty).py()?;
    let lit = Literal::from_bytes(&t, data).py()?;
    Ok(lit.to_json(&t).py()?.to_string())
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(single_value_to_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(single_value_from_bytes, m)?)?;
    Ok(())
}
