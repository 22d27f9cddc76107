//! FileIO: local files for now (paths or `file:` URLs); object stores come later by URL scheme.

use std::path::PathBuf;

use crate::error::{Error, ErrorKind, Result};

/// Turns a table location or file path (`/abs/path`, `file:/abs`, `file:///abs`) into a local path.
pub fn local_path(location: &str) -> Result<PathBuf> {
    if let Some(rest) = location.strip_prefix("file://") {
        return Ok(PathBuf::from(rest));
    }
    if let Some(rest) = location.strip_prefix("file:") {
        return Ok(PathBuf::from(rest));
    }
    if location.contains("://") {
        return Err(Error::new(
            ErrorKind::NotSupported,
            format!("only local file locations are supported yet, found '{location}'"),
        ));
    }
    Ok(PathBuf::from(location))
}

/// Reads a whole (small) file: metadata, manifests, manifest lists.
pub fn read_file(location: &str) -> Result<Vec<u8>> {
    let p = local_path(location)?;
    std::fs::read(&p).map_err(|e| {
        let kind = if e.kind() == std::io::ErrorKind::NotFound { ErrorKind::NotFound } else { ErrorKind::Io };
        Error::new(kind, "cannot read file").with_context("file", location).with_source(e)
    })
}

/// Writes a new file, creating parent directories; fails if it already exists.
pub fn write_new_file(location: &str, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let p = local_path(location)?;
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| Error::from(e).with_context("directory", parent.display().to_string()))?;
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&p)
        .map_err(|e| Error::from(e).with_context("file", location))?;
    f.write_all(bytes).map_err(|e| Error::from(e).with_context("file", location))?;
    Ok(())
}

/// Deletes a file; a missing file is not an error (cleanup is idempotent).
pub fn delete_file(location: &str) -> Result<()> {
    let p = local_path(location)?;
    match std::fs::remove_file(&p) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::from(e).with_context("file", location)),
    }
}
