//! Binding of `rewrite_table_path`'s snapshot files (rust/maintenance/rewrite_table_path.rs):
//! the manifest lists, manifests and position delete files rewritten into the staging folder.

use std::collections::HashSet;

use pyo3::prelude::*;

use super::errors::PyResultExt;
use super::metadata::PyTableMetadata;
use crate::maintenance::rewrite_table_path::{rewrite_snapshot_files, PathRewrite};

/// `(source or staged file, target file)` pairs.
type CopyPlan = Vec<(String, String)>;

/// Rewrites the manifest lists of `snapshot_ids`, their manifests (incrementally: those added
/// by a snapshot of `delta_snapshot_ids`) and the position delete files of those into
/// `staging` (ending with `/`): `(copy plan [(source, target)], manifests rewritten, delete
/// files rewritten)`. Deletes what it wrote on error.
#[pyfunction]
#[pyo3(signature = (metadata, snapshot_ids, delta_snapshot_ids, incremental, source_prefix, target_prefix, staging))]
#[allow(clippy::too_many_arguments)]
fn rewrite_table_path_files(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    snapshot_ids: Vec<i64>,
    delta_snapshot_ids: Vec<i64>,
    incremental: bool,
    source_prefix: String,
    target_prefix: String,
    staging: String,
) -> PyResult<(CopyPlan, usize, usize)> {
    let end = metadata.inner.clone();
    let delta: HashSet<i64> = delta_snapshot_ids.into_iter().collect();
    let paths = PathRewrite { source: source_prefix, target: target_prefix, staging };
    let done =
        py.detach(move || rewrite_snapshot_files(&end, &snapshot_ids, &delta, incremental, &paths)).py()?;
    Ok((done.copy_plan.into_iter().collect(), done.manifests, done.delete_files))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(rewrite_table_path_files, m)?)?;
    Ok(())
}
