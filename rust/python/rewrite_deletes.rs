//! Bindings of `rewrite_position_delete_files` (rust/maintenance/rewrite_position_deletes.rs,
//! rust/commit/rewrite_position_deletes.rs): the plan, the rewrite of one group, the commit.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use pyo3::prelude::*;

use super::errors::PyResultExt;
use super::metadata::PyTableMetadata;
use crate::commit::RewritePositionDeletes;
use crate::error::invalid_data;
use crate::expr::{bind, Expression};
use crate::maintenance::rewrite_position_deletes::{
    live_data_files, plan_rewrite_position_deletes, rewrite_delete_group, DeleteGroup, DeleteRewriteOptions,
};
use crate::manifest::DataFile;
use crate::scan::{BoundFilter, ScanFilterRef};

/// Plans the rewrite of the current snapshot's position delete files by Java's bin-pack
/// rules: `(snapshot id, groups)`, each a JSON object with `partition`, `files` (each `file`
/// and `data_sequence_number`), `input_size`, `max_output_file_size` and
/// `max_data_sequence_number`.
#[pyfunction]
#[pyo3(signature = (
    metadata, *, filter_json=None, case_sensitive=true, target_file_size_bytes=None,
    min_file_size_bytes=None, max_file_size_bytes=None, min_input_files=None,
    max_file_group_size_bytes=None, max_file_group_input_files=None, rewrite_all=false
))]
#[allow(clippy::too_many_arguments)] // the Python keyword arguments, one by one
fn plan_rewrite_position_delete_files(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    filter_json: Option<String>,
    case_sensitive: bool,
    target_file_size_bytes: Option<i64>,
    min_file_size_bytes: Option<i64>,
    max_file_size_bytes: Option<i64>,
    min_input_files: Option<usize>,
    max_file_group_size_bytes: Option<i64>,
    max_file_group_input_files: Option<i64>,
    rewrite_all: bool,
) -> PyResult<(Option<i64>, Vec<String>)> {
    let md = metadata.inner.clone();
    let options = DeleteRewriteOptions {
        target_file_size_bytes,
        min_file_size_bytes,
        max_file_size_bytes,
        min_input_files,
        max_file_group_size_bytes,
        max_file_group_input_files,
        rewrite_all,
    };
    py.detach(move || -> crate::Result<(Option<i64>, Vec<String>)> {
        let filter: Option<ScanFilterRef> = match filter_json {
            None => None,
            Some(j) => {
                let bound = bind(&Expression::from_json_str(&j)?, md.current_schema(), case_sensitive)?;
                Some(Arc::new(BoundFilter::new(bound, md.partition_specs())?))
            }
        };
        let plan = plan_rewrite_position_deletes(&md, filter, &options)?;
        let groups = plan
            .groups
            .iter()
            .map(|g| {
                serde_json::to_string(g)
                    .map_err(|e| invalid_data("cannot serialize a delete rewrite group").with_source(e))
            })
            .collect::<crate::Result<Vec<_>>>()?;
        Ok((plan.snapshot_id, groups))
    })
    .py()
}

/// Rewrites the groups (JSON from the plan) of `metadata`'s current snapshot: for each, the
/// new delete files (descriptors) and the positions kept and dropped as dangling.
#[pyfunction]
#[pyo3(signature = (metadata, groups, write_id, task_id))]
fn rewrite_position_delete_groups(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    groups: Vec<String>,
    write_id: String,
    task_id: u32,
) -> PyResult<Vec<(Vec<String>, i64, i64)>> {
    let md = metadata.inner.clone();
    py.detach(move || -> crate::Result<Vec<(Vec<String>, i64, i64)>> {
        let groups: Vec<DeleteGroup> = groups
            .iter()
            .map(|g| {
                serde_json::from_str(g)
                    .map_err(|e| invalid_data("cannot parse a delete rewrite group").with_source(e))
            })
            .collect::<crate::Result<_>>()?;
        let live: HashMap<String, DataFile> = live_data_files(&md)?;
        let mut out = Vec::with_capacity(groups.len());
        for (i, g) in groups.iter().enumerate() {
            let task = task_id.saturating_add(i as u32);
            let r = rewrite_delete_group(md.clone(), g, &live, &write_id, task)?;
            let descriptors =
                r.added.iter().map(DataFile::to_descriptor).collect::<crate::Result<Vec<_>>>()?;
            out.push((descriptors, r.positions_kept, r.positions_dropped));
        }
        Ok(out)
    })
    .py()
}

fn parse_files(descriptors: &[String]) -> PyResult<Vec<DataFile>> {
    descriptors.iter().map(|d| DataFile::from_descriptor(d)).collect::<Result<Vec<_>, _>>().py()
}

/// A `replace` snapshot replacing `rewritten_files` (descriptors) by `added` (descriptor,
/// data sequence number) pairs, validated as Java's `RewritePositionDeletesCommitManager`.
#[pyfunction]
#[pyo3(signature = (metadata, start_snapshot_id, rewritten_files, added, *, snapshot_properties=None))]
fn rewrite_position_deletes(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    start_snapshot_id: Option<i64>,
    rewritten_files: Vec<String>,
    added: Vec<(String, i64)>,
    snapshot_properties: Option<BTreeMap<String, String>>,
) -> PyResult<(PyTableMetadata, Vec<String>)> {
    let (descriptors, seqs): (Vec<String>, Vec<i64>) = added.into_iter().unzip();
    let rw = RewritePositionDeletes {
        start_snapshot_id,
        rewritten: parse_files(&rewritten_files)?,
        added: parse_files(&descriptors)?.into_iter().zip(seqs).collect(),
        summary_properties: snapshot_properties.unwrap_or_default(),
    };
    let base = metadata.inner.clone();
    let now = chrono::Utc::now().timestamp_millis();
    let (md, written) = py.detach(move || crate::commit::rewrite_position_deletes(&base, rw, now)).py()?;
    Ok((PyTableMetadata::new(md), written))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(plan_rewrite_position_delete_files, m)?)?;
    m.add_function(wrap_pyfunction!(rewrite_position_delete_groups, m)?)?;
    m.add_function(wrap_pyfunction!(rewrite_position_deletes, m)?)?;
    Ok(())
}
