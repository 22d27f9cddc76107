//! Bindings of the metadata tables: `inspect_table(metadata, name, snapshot_id)` returns Arrow
//! record batches (Java's columns and types; at least one, one per manifest for the tables of
//! manifest entries) through the C Data Interface.

use arrow::pyarrow::PyArrowType;
use arrow_array::RecordBatch;
use pyo3::prelude::*;

use super::errors::PyResultExt;
use super::metadata::PyTableMetadata;
use crate::inspect::{inspect, snapshot_own_entries, MetadataTable};

/// The metadata table `name` (`snapshots`, `files`, `all_entries`, ...) of `metadata`, at
/// `snapshot_id` (default: the current snapshot) for the tables of one snapshot.
#[pyfunction]
#[pyo3(signature = (metadata, name, snapshot_id=None))]
fn inspect_table(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    name: &str,
    snapshot_id: Option<i64>,
) -> PyResult<Vec<PyArrowType<RecordBatch>>> {
    let table = MetadataTable::parse(name).py()?;
    let md = metadata.inner.clone();
    let batches = py.detach(move || inspect(&md, table, snapshot_id)).py()?;
    Ok(batches.into_iter().map(PyArrowType).collect())
}

/// The `entries` rows of the manifests snapshot `snapshot_id` wrote itself: every entry it
/// added or deleted (an incremental computation's input; `crate::inspect::snapshot_own_entries`).
#[pyfunction]
fn inspect_snapshot_own_entries(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    snapshot_id: i64,
) -> PyResult<Vec<PyArrowType<RecordBatch>>> {
    let md = metadata.inner.clone();
    let batches = py
        .detach(move || match crate::scan::select_snapshot(&md, Some(snapshot_id))? {
            Some(snapshot) => snapshot_own_entries(&md, snapshot),
            None => crate::inspect::entries(&md, Some(None)),
        })
        .py()?;
    Ok(batches.into_iter().map(PyArrowType).collect())
}

/// The names of the metadata tables.
#[pyfunction]
fn metadata_table_names() -> Vec<&'static str> {
    MetadataTable::ALL.iter().map(|t| t.name()).collect()
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(inspect_table, m)?)?;
    m.add_function(wrap_pyfunction!(inspect_snapshot_own_entries, m)?)?;
    m.add_function(wrap_pyfunction!(metadata_table_names, m)?)?;
    Ok(())
}
