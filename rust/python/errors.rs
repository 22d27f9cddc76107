//! Core `Error` -> Python exception, mapped exactly once. Classes are declared under
//! `icefloe.exceptions` so tracebacks show the public module path.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

use crate::error::{Error, ErrorKind};

create_exception!(icefloe.exceptions, IcefloeError, PyException);
create_exception!(icefloe.exceptions, ValidationError, IcefloeError);
create_exception!(icefloe.exceptions, InvalidDataError, IcefloeError);
create_exception!(icefloe.exceptions, NotSupportedError, IcefloeError);
create_exception!(icefloe.exceptions, NotFoundError, IcefloeError);
create_exception!(icefloe.exceptions, CommitConflictError, IcefloeError);
create_exception!(icefloe.exceptions, IcefloeIOError, IcefloeError);
create_exception!(icefloe.exceptions, ResourceLimitError, IcefloeError);

pub(crate) fn to_py(e: Error) -> PyErr {
    let msg = e.to_string();
    match e.kind() {
        ErrorKind::Validation => ValidationError::new_err(msg),
        ErrorKind::InvalidData => InvalidDataError::new_err(msg),
        ErrorKind::NotSupported => NotSupportedError::new_err(msg),
        ErrorKind::NotFound => NotFoundError::new_err(msg),
        ErrorKind::CommitConflict => CommitConflictError::new_err(msg),
        ErrorKind::Io | ErrorKind::AlreadyExists => IcefloeIOError::new_err(msg),
        ErrorKind::ResourceLimit => ResourceLimitError::new_err(msg),
        _ => IcefloeError::new_err(msg),
    }
}

/// `.py()` turns a core `Result` into a `PyResult`.
pub(crate) trait PyResultExt<T> {
    fn py(self) -> PyResult<T>;
}

impl<T> PyResultExt<T> for crate::Result<T> {
    fn py(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("IcefloeError", py.get_type::<IcefloeError>())?;
    m.add("ValidationError", py.get_type::<ValidationError>())?;
    m.add("InvalidDataError", py.get_type::<InvalidDataError>())?;
    m.add("NotSupportedError", py.get_type::<NotSupportedError>())?;
    m.add("NotFoundError", py.get_type::<NotFoundError>())?;
    m.add("CommitConflictError", py.get_type::<CommitConflictError>())?;
    m.add("IcefloeIOError", py.get_type::<IcefloeIOError>())?;
    m.add("ResourceLimitError", py.get_type::<ResourceLimitError>())?;
    Ok(())
}
