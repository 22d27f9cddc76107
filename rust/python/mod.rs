//! The pyo3 bindings: the only module that imports pyo3. Exposed as `icefloe._native`.
//!
//! Metadata crosses as JSON strings, data as Arrow through the C Data Interface.
//! Every core `Error` is mapped to a Python exception exactly once, in `errors.rs`.
//! Heavy calls (I/O, decoding, encoding) release the GIL.

mod changelog;
mod commit;
mod convert_deletes;
mod errors;
mod expr;
mod inspect;
mod io;
mod maintenance;
mod metadata;
mod projection;
mod read;
mod rewrite;
mod rewrite_deletes;
mod rewrite_manifests;
mod rewrite_table_path;
mod scan;
mod single_value;
mod statistics;
mod write;

use arrow::pyarrow::PyArrowType;
use arrow_schema::Schema as ArrowSchema;
use pyo3::prelude::*;

use self::errors::PyResultExt;
use self::metadata::PyTableMetadata;
use crate::spec::Schema;

/// The Iceberg schema (JSON) of an Arrow schema; `nanosecond_timestamps` maps nanosecond
/// timestamps to the v3 `timestamp_ns` / `timestamptz_ns` types.
#[pyfunction]
#[pyo3(signature = (schema, nanosecond_timestamps = false))]
fn schema_from_arrow(schema: PyArrowType<ArrowSchema>, nanosecond_timestamps: bool) -> PyResult<String> {
    let opts = crate::arrow::FromArrowOptions { nanosecond_timestamps };
    let s = crate::arrow::schema_from_arrow_with(&schema.0, opts).py()?;
    Ok(s.to_json_string())
}

#[pyfunction]
fn schema_to_arrow(schema_json: &str) -> PyResult<PyArrowType<ArrowSchema>> {
    let s = Schema::from_json_str(schema_json).py()?;
    Ok(PyArrowType(crate::arrow::schema_to_arrow(&s).py()?))
}

/// `mi_option_arena_eager_commit`, the fifth of mimalloc's options in v2 and v3 alike
/// (libmimalloc-sys names no constant for it).
const MI_OPTION_ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;

#[pymodule]
#[pyo3(name = "_native")]
fn native_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // mimalloc commits each 1 GiB arena it reserves at once by default (on systems that
    // overcommit), as transparent huge pages: a process touching ~1 GB (planning 1,000,000
    // files) then held ~150 MB more and spent up to 1 s more in the kernel when the memory
    // was just freed by another process (make bench-scale). Committed as used instead.
    // SAFETY: sets an option value; no allocation is live that depends on it.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0) };
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // parquet-rs panics on some malformed files; `guarded` turns those into errors, and they
    // print nothing to the worker's stderr.
    crate::arrow::guard::install_panic_hook(|_| {});
    errors::register(m)?;
    changelog::register(m)?;
    m.add_class::<PyTableMetadata>()?;
    m.add_function(wrap_pyfunction!(schema_from_arrow, m)?)?;
    m.add_function(wrap_pyfunction!(schema_to_arrow, m)?)?;
    write::register(m)?;
    scan::register(m)?;
    read::register(m)?;
    commit::register(m)?;
    expr::register(m)?;
    io::register(m)?;
    maintenance::register(m)?;
    rewrite::register(m)?;
    rewrite_manifests::register(m)?;
    rewrite_table_path::register(m)?;
    rewrite_deletes::register(m)?;
    inspect::register(m)?;
    convert_deletes::register(m)?;
    single_value::register(m)?;
    statistics::register(m)?;
    projection::register(m)?;
    Ok(())
}
