//! Bindings of compaction (rust/maintenance/rewrite_plan.rs, rust/commit/rewrite_files.rs): the rewrite plan of
//! `rewrite_data_files` and the `replace` snapshot that commits it.

use std::collections::BTreeMap;
use std::sync::Arc;

use pyo3::prelude::*;

use super::errors::PyResultExt;
use super::metadata::PyTableMetadata;
use crate::commit::RewriteFiles;
use crate::expr::{bind, Expression};
use crate::maintenance::rewrite_plan::{plan_rewrite, RewriteOptions};
use crate::manifest::DataFile;
use crate::scan::{BoundFilter, FileScanTask, ScanFilterRef};

/// Plans a rewrite of the current snapshot by Java's bin-pack rules. Returns
/// `(snapshot id, groups)`, each group a JSON object: `partition`, `input_size`,
/// `expected_output_files`, `split_size`, `max_output_file_size`, `tasks` (the whole-file
/// tasks, deletes attached), `combined` (the tasks each output file is written from) and
/// `plain_files` (see `plain_files`).
#[pyfunction]
#[pyo3(signature = (
    metadata, *, filter_json=None, case_sensitive=true, target_file_size_bytes=None,
    min_file_size_bytes=None, max_file_size_bytes=None, min_input_files=None,
    delete_file_threshold=None, delete_ratio_threshold=None, max_file_group_size_bytes=None,
    max_file_group_input_files=None, rewrite_all=false, max_files_to_rewrite=None, rewrite_job_order=None, output_spec_id=None
))]
#[allow(clippy::too_many_arguments)] // the Python keyword arguments, one by one
fn plan_rewrite_data_files(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    filter_json: Option<String>,
    case_sensitive: bool,
    target_file_size_bytes: Option<i64>,
    min_file_size_bytes: Option<i64>,
    max_file_size_bytes: Option<i64>,
    min_input_files: Option<usize>,
    delete_file_threshold: Option<usize>,
    delete_ratio_threshold: Option<f64>,
    max_file_group_size_bytes: Option<i64>,
    max_file_group_input_files: Option<i64>,
    rewrite_all: bool,
    max_files_to_rewrite: Option<i64>,
    rewrite_job_order: Option<String>,
    output_spec_id: Option<i32>,
) -> PyResult<(Option<i64>, Vec<String>)> {
    let md = metadata.inner.clone();
    let options = RewriteOptions {
        target_file_size_bytes,
        min_file_size_bytes,
        max_file_size_bytes,
        min_input_files,
        delete_file_threshold,
        delete_ratio_threshold,
        max_file_group_size_bytes,
        max_file_group_input_files,
        rewrite_all,
        max_files_to_rewrite,
        rewrite_job_order,
        output_spec_id,
    };
    py.detach(move || -> crate::Result<(Option<i64>, Vec<String>)> {
        let filter: Option<ScanFilterRef> = match filter_json {
            None => None,
            Some(j) => {
                let bound = bind(&Expression::from_json_str(&j)?, md.current_schema(), case_sensitive)?;
                Some(Arc::new(BoundFilter::new(bound, md.partition_specs())?))
            }
        };
        let plan = plan_rewrite(&md, filter, &options)?;
        let lookback = crate::scan::SplitOptions::from_table(&md).lookback;
        let groups = plan
            .groups
            .iter()
            .map(|g| {
                let packed = g.combined_tasks(lookback);
                serde_json::to_string(&serde_json::json!({
                    "partition": g.partition,
                    "input_size": g.input_size,
                    "expected_output_files": g.expected_output_files,
                    "split_size": g.split_size,
                    "max_output_file_size": g.max_output_file_size,
                    "output_spec_id": g.output_spec_id,
                    "tasks": g.tasks,
                    "combined": packed.iter().map(|c| &c.tasks).collect::<Vec<_>>(),
                    "plain_files": plain_files(&g.tasks),
                }))
                .map_err(|e| crate::error::invalid_data("cannot serialize a rewrite group").with_source(e))
            })
            .collect::<crate::Result<Vec<_>>>()?;
        Ok((plan.snapshot_id, groups))
    })
    .py()
}

/// (path, file size, record count) of the group's files that a plain Parquet reader reads as
/// Iceberg does (`FileScanTask::plain_parquet_blocker`, judged on the planner's whole-file
/// tasks, which know whether each identity partition column is in the file): the files a
/// sort rewrite on Spark may hand to Spark's own Parquet source.
fn plain_files(tasks: &[FileScanTask]) -> Vec<(&str, i64, i64)> {
    tasks
        .iter()
        .filter(|t| t.plain_parquet_blocker().is_none())
        .map(|t| (t.file.file_path.as_str(), t.file.file_size_in_bytes, t.file.record_count))
        .collect()
}

fn parse_files(descriptors: &[String]) -> PyResult<Vec<DataFile>> {
    descriptors.iter().map(|d| DataFile::from_descriptor(d)).collect::<Result<Vec<_>, _>>().py()
}

/// A `replace` snapshot rewriting `rewritten_files` into `added_files` (descriptors), after
/// validating the snapshots committed since `start_snapshot_id` (Java's `RewriteFiles`).
#[pyfunction]
#[pyo3(signature = (
    metadata, start_snapshot_id, rewritten_files, added_files, *,
    use_starting_sequence_number=true, remove_dangling_deletes=false, snapshot_properties=None
))]
#[allow(clippy::too_many_arguments)]
fn rewrite_files(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    start_snapshot_id: Option<i64>,
    rewritten_files: Vec<String>,
    added_files: Vec<String>,
    use_starting_sequence_number: bool,
    remove_dangling_deletes: bool,
    snapshot_properties: Option<BTreeMap<String, String>>,
) -> PyResult<(PyTableMetadata, Vec<String>)> {
    let rw = RewriteFiles {
        start_snapshot_id,
        rewritten: parse_files(&rewritten_files)?,
        added: parse_files(&added_files)?,
        use_starting_sequence_number,
        remove_dangling_deletes,
        summary_properties: snapshot_properties.unwrap_or_default(),
    };
    let base = metadata.inner.clone();
    let now = chrono::Utc::now().timestamp_millis();
    let (md, written) = py.detach(move || crate::commit::rewrite_files(&base, rw, now)).py()?;
    Ok((PyTableMetadata::new(md), written))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(plan_rewrite_data_files, m)?)?;
    m.add_function(wrap_pyfunction!(rewrite_files, m)?)?;
    Ok(())
}
