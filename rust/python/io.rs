//! Bindings of the FileIO (rust/io/): the Python catalogs read and write metadata files,
//! list folders and clean up through the same code as the Rust core, on every storage.

use std::borrow::Cow;
use std::collections::BTreeMap;

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::errors::PyResultExt;
use crate::error::ErrorKind;
use crate::io;

/// Registers FileIO properties (PyIceberg's names: `s3.endpoint`, `s3.access-key-id`, ...)
/// for every location under `prefix`; the longest registered prefix of a location wins.
#[pyfunction]
fn register_file_io(prefix: &str, properties: BTreeMap<String, String>) -> PyResult<()> {
    io::register(prefix, properties).py()
}

/// The properties registered for a location, secrets shown as `***`.
#[pyfunction]
fn file_io_properties(location: &str) -> BTreeMap<String, String> {
    io::registered_properties(location)
}

/// Whether a property's value is a secret (never logged or shown).
#[pyfunction]
fn is_secret_property(key: &str) -> bool {
    io::is_secret(key)
}

/// (scheme kind, storage root, key) of a location: `("local", "", path)`,
/// `("s3", "s3://bucket", "a/b")`; ValidationError for an unknown scheme.
#[pyfunction]
fn parse_location(location: &str) -> PyResult<(&'static str, String, String)> {
    let l = io::Location::parse(location).py()?;
    let kind = match l.scheme {
        io::Scheme::Local => "local",
        io::Scheme::S3 => "s3",
        io::Scheme::Gcs => "gcs",
        io::Scheme::Azure => "azure",
        io::Scheme::Memory => "memory",
    };
    Ok((kind, l.root(), l.key.to_string()))
}

#[pyfunction]
fn io_read<'py>(py: Python<'py>, location: &str) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = py.detach(|| io::read_file(location)).py()?;
    Ok(PyBytes::new(py, &bytes))
}

/// Creates a file that must not exist, all or nothing; False when it already exists (a
/// lost race for a commit). NotSupportedError on a store without conditional writes.
#[pyfunction]
fn io_write_new(py: Python<'_>, location: &str, data: Cow<'_, [u8]>) -> PyResult<bool> {
    match py.detach(|| io::write_new_file(location, &data)) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e).py(),
    }
}

/// Writes a file, replacing it (hints only, never commits).
#[pyfunction]
fn io_write(py: Python<'_>, location: &str, data: Cow<'_, [u8]>) -> PyResult<()> {
    py.detach(|| io::write_file(location, &data)).py()
}

#[pyfunction]
fn io_exists(py: Python<'_>, location: &str) -> PyResult<bool> {
    py.detach(|| io::exists(location)).py()
}

/// One folder level: (sub-folder names, [(file name, size)]), sorted; a missing folder is empty.
#[pyfunction]
fn io_list_dir(py: Python<'_>, location: &str) -> PyResult<io::Listing> {
    py.detach(|| io::list_dir(location)).py()
}

/// Every file under a folder: [(location, size)], sorted.
#[pyfunction]
fn io_list(py: Python<'_>, location: &str) -> PyResult<Vec<(String, u64)>> {
    py.detach(|| io::list_recursive(location)).py()
}

/// Deletes a folder and everything in it.
#[pyfunction]
fn io_delete_prefix(py: Python<'_>, location: &str) -> PyResult<()> {
    py.detach(|| io::delete_prefix(location)).py()
}

/// Deletes files (missing ones are ignored; object stores in parallel).
#[pyfunction]
fn delete_files(py: Python<'_>, paths: Vec<String>) -> PyResult<()> {
    py.detach(move || io::delete_files(&paths)).py()
}

/// A file opened for ranged reads (`table.io.new_input(...).open()`): its length and the
/// bytes at an offset, through the same cached ranged GETs as the Parquet readers.
#[pyclass(name = "InputFileHandle", module = "icefloe._native", frozen)]
struct InputFileHandle {
    inner: io::InputFile,
}

#[pymethods]
impl InputFileHandle {
    /// Opens `location` (NotFoundError when it does not exist).
    #[new]
    fn new(py: Python<'_>, location: &str) -> PyResult<Self> {
        let inner = py.detach(|| io::InputFile::open(location, None)).py()?;
        Ok(InputFileHandle { inner })
    }

    fn __len__(&self) -> usize {
        usize::try_from(parquet::file::reader::Length::len(&self.inner)).unwrap_or(usize::MAX)
    }

    /// Up to `length` bytes from `start` (fewer at the end of the file, none past it).
    fn read_at<'py>(&self, py: Python<'py>, start: u64, length: u64) -> PyResult<Bound<'py, PyBytes>> {
        let size = parquet::file::reader::Length::len(&self.inner);
        let n = length.min(size.saturating_sub(start));
        if n == 0 {
            return Ok(PyBytes::new(py, &[]));
        }
        let want = usize::try_from(n).map_err(|_| {
            super::errors::to_py(crate::error::validation(format!("read of {n} bytes is too large")))
        })?;
        let bytes = py
            .detach(|| parquet::file::reader::ChunkReader::get_bytes(&self.inner, start, want))
            .map_err(|e| super::errors::to_py(crate::error::Error::new(ErrorKind::Io, e.to_string())))?;
        Ok(PyBytes::new(py, &bytes))
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<InputFileHandle>()?;
    m.add_function(wrap_pyfunction!(register_file_io, m)?)?;
    m.add_function(wrap_pyfunction!(file_io_properties, m)?)?;
    m.add_function(wrap_pyfunction!(is_secret_property, m)?)?;
    m.add_function(wrap_pyfunction!(parse_location, m)?)?;
    m.add_function(wrap_pyfunction!(io_read, m)?)?;
    m.add_function(wrap_pyfunction!(io_write_new, m)?)?;
    m.add_function(wrap_pyfunction!(io_write, m)?)?;
    m.add_function(wrap_pyfunction!(io_exists, m)?)?;
    m.add_function(wrap_pyfunction!(io_list_dir, m)?)?;
    m.add_function(wrap_pyfunction!(io_list, m)?)?;
    m.add_function(wrap_pyfunction!(io_delete_prefix, m)?)?;
    m.add_function(wrap_pyfunction!(delete_files, m)?)?;
    Ok(())
}
