//! Bindings for changelog reads: row keys for grouping changelog rows (carry-over removal,
//! update detection) by any column types.

use arrow::pyarrow::PyArrowType;
use arrow::record_batch::RecordBatch;
use arrow_array::{Array, ArrayRef};
use pyo3::prelude::*;

use super::errors::PyResultExt;

/// One binary key per row of `batch`: equal keys exactly when the rows' `columns` hold equal
/// values (nulls equal to nulls).
#[pyfunction]
fn row_keys(
    py: Python<'_>,
    batch: PyArrowType<RecordBatch>,
    columns: Vec<String>,
) -> PyResult<PyArrowType<arrow::array::ArrayData>> {
    let batch = batch.0;
    let keys = py.detach(move || crate::arrow::row_keys::row_keys(&batch, &columns)).py()?;
    let keys: ArrayRef = std::sync::Arc::new(keys);
    Ok(PyArrowType(keys.to_data()))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(row_keys, m)?)?;
    Ok(())
}
