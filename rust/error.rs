//! One error type for the whole core, translated to Python exactly once (in `python/`).

use std::fmt;

/// What went wrong, coarse enough to map onto one Python exception class each.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// Bad input from a user: a schema that does not fit, a bad argument.
    Validation,
    /// A file or metadata that does not follow the Iceberg spec (corrupt or unexpected).
    InvalidData,
    /// A feature the spec allows but icefloe does not implement yet.
    NotSupported,
    /// A file that should exist does not.
    NotFound,
    /// An I/O failure (permissions, disk, network).
    Io,
    /// The table changed underneath a commit.
    CommitConflict,
    /// A file that must be created new already exists (a lost conditional create).
    AlreadyExists,
    /// A bug in icefloe: an invariant did not hold.
    Internal,
    /// Valid input that needs more than a stated budget (memory, size) to process.
    ResourceLimit,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            ErrorKind::Validation => "validation error",
            ErrorKind::InvalidData => "invalid data",
            ErrorKind::NotSupported => "not supported",
            ErrorKind::NotFound => "not found",
            ErrorKind::Io => "I/O error",
            ErrorKind::CommitConflict => "commit conflict",
            ErrorKind::AlreadyExists => "already exists",
            ErrorKind::Internal => "internal error",
            ErrorKind::ResourceLimit => "resource limit",
        };
        f.write_str(s)
    }
}

/// The core's error: a kind, a message saying what was expected and what was found,
/// context naming where (file path, field id, ...), and the underlying cause.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    context: Vec<(&'static str, String)>,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into(), context: Vec::new(), source: None }
    }

    /// Adds a `key: value` pair saying where the error happened (e.g. `("file", path)`).
    pub fn with_context(mut self, key: &'static str, value: impl Into<String>) -> Self {
        self.context.push((key, value.into()));
        self
    }

    /// Names the role of `path` (`key`, e.g. "position delete file"): the context entry
    /// `file: path` a lower layer added takes the key instead of the path being named twice.
    pub fn with_file_role(mut self, key: &'static str, path: &str) -> Self {
        match self.context.iter_mut().find(|(k, v)| *k == "file" && v == path) {
            Some(entry) => entry.0 = key,
            None => self.context.push((key, path.to_string())),
        }
        self
    }

    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Box::new(source));
        self
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    pub fn context(&self) -> &[(&'static str, String)] {
        &self.context
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)?;
        for (k, v) in &self.context {
            write!(f, " ({k}: {v})")?;
        }
        if let Some(src) = &self.source {
            write!(f, ": {src}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_ref().map(|s| s.as_ref() as &(dyn std::error::Error + 'static))
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        let kind = match e.kind() {
            std::io::ErrorKind::NotFound => ErrorKind::NotFound,
            std::io::ErrorKind::AlreadyExists => ErrorKind::AlreadyExists,
            _ => ErrorKind::Io,
        };
        Error::new(kind, "I/O operation failed").with_source(e)
    }
}

/// Shorthand constructors used throughout the core.
pub fn invalid_data(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidData, message)
}

pub fn validation(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Validation, message)
}

pub fn not_supported(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::NotSupported, message)
}

pub fn resource_limit(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::ResourceLimit, message)
}
