//! Files written by the Parquet writers: a local file created exclusively, or an object
//! uploaded in one PUT (small) or as a multipart upload (once it passes one part).

use std::fs::File;
use std::io::Write;
use std::sync::Arc;

use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload, WriteMultipart};

use super::location::Location;
use super::{object_error, runtime, store};
use crate::error::{Error, Result};

/// Bytes buffered before a multipart upload starts; then the part size.
const PART_BYTES: usize = 8 * 1024 * 1024;
/// Parts in flight per file.
const PARTS_IN_FLIGHT: usize = 4;

/// A new file being written. [`OutputFile::finish`] makes it visible (remote) or flushes it
/// (local); [`OutputFile::abort`] removes every byte of it.
pub struct OutputFile {
    location: String,
    inner: Inner,
}

enum Inner {
    Local(File),
    Remote {
        store: Arc<dyn ObjectStore>,
        path: Path,
        buffer: Vec<u8>,
        upload: Option<WriteMultipart>,
        /// Bytes written so far.
        written: u64,
    },
    Done,
}

impl std::fmt::Debug for OutputFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputFile").field("location", &self.location).finish()
    }
}

impl OutputFile {
    /// Creates `location`; a local file must not exist yet (parent folders are created).
    pub fn create(location: &str) -> Result<Self> {
        let loc = Location::parse(location)?;
        let inner = if loc.scheme.is_local() {
            let p = loc.local_path();
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| Error::from(e).with_context("directory", parent.display().to_string()))?;
            }
            let f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&p)
                .map_err(|e| Error::from(e).with_context("file", location))?;
            Inner::Local(f)
        } else {
            let store = store::store_for(location, &loc)?;
            let path = Path::parse(loc.key).map_err(|e| object_error(e.into(), location))?;
            Inner::Remote { store, path, buffer: Vec::with_capacity(1 << 20), upload: None, written: 0 }
        };
        Ok(OutputFile { location: location.to_string(), inner })
    }

    pub fn location(&self) -> &str {
        &self.location
    }

    fn write_remote(&mut self, buf: &[u8]) -> Result<()> {
        let Inner::Remote { store, path, buffer, upload, written } = &mut self.inner else {
            return Ok(());
        };
        *written += buf.len() as u64;
        if upload.is_none() && buffer.len() + buf.len() < PART_BYTES {
            buffer.extend_from_slice(buf);
            return Ok(());
        }
        if upload.is_none() {
            let u =
                runtime::block_on(store.put_multipart(path))?.map_err(|e| object_error(e, &self.location))?;
            *upload = Some(WriteMultipart::new_with_chunk_size(u, PART_BYTES));
        }
        if let Some(w) = upload.as_mut() {
            let handle = runtime::handle()?;
            {
                let _entered = handle.enter();
                if !buffer.is_empty() {
                    w.write(buffer);
                    buffer.clear();
                }
                w.write(buf);
            }
            runtime::block_on(w.wait_for_capacity(PARTS_IN_FLIGHT))?
                .map_err(|e| object_error(e, &self.location))?;
        }
        Ok(())
    }

    /// Completes the file: flushes a local file, uploads (or completes the upload of) a
    /// remote one.
    pub fn finish(&mut self) -> Result<()> {
        match std::mem::replace(&mut self.inner, Inner::Done) {
            Inner::Local(mut f) => {
                f.flush().map_err(|e| Error::from(e).with_context("file", self.location.clone()))
            }
            Inner::Remote { store, path, buffer, upload: None, .. } => {
                runtime::block_on(store.put(&path, PutPayload::from(buffer)))?
                    .map(|_| ())
                    .map_err(|e| object_error(e, &self.location))
            }
            Inner::Remote { store, path, buffer, upload: Some(mut w), written } => {
                let handle = runtime::handle()?;
                {
                    let _entered = handle.enter();
                    w.write(&buffer);
                }
                match runtime::block_on(w.finish())? {
                    Ok(_) => Ok(()),
                    // A completion that took effect but lost its answer is retried, and the
                    // retry no longer finds the upload (404): the object tells. (Its name is
                    // this file's own: new files get unique names.)
                    Err(e) => match runtime::block_on(store.head(&path))? {
                        Ok(meta) if meta.size == written => Ok(()),
                        _ => Err(object_error(e, &self.location)),
                    },
                }
            }
            Inner::Done => Ok(()),
        }
    }

    /// Drops what was written: aborts a multipart upload, deletes the file or object.
    pub fn abort(&mut self) -> Result<()> {
        let inner = std::mem::replace(&mut self.inner, Inner::Done);
        if let Inner::Remote { upload: Some(w), .. } = inner {
            let _ = runtime::block_on(w.abort());
        }
        super::delete_file(&self.location)
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.inner {
            Inner::Local(f) => f.write(buf),
            Inner::Remote { .. } => {
                self.write_remote(buf).map_err(std::io::Error::other)?;
                Ok(buf.len())
            }
            Inner::Done => Err(std::io::Error::other(format!("{} is already closed", self.location))),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.inner {
            Inner::Local(f) => f.flush(),
            _ => Ok(()),
        }
    }
}
