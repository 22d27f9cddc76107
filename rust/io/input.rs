//! Files opened for reading by the Parquet readers: a local file, or an object read by
//! ranged GETs.
//!
//! A remote file fetches its tail once when opened (footer and metadata in one request
//! for nearly every file; small files whole). The reader then declares which byte ranges it
//! will decode, grouped by row group ([`InputFile::plan`]); the first read inside a group
//! fetches all of its ranges at once (object_store coalesces ranges less than 1 MiB apart
//! and runs up to ten requests in flight), and the previous group's bytes are dropped.
//! Reads outside any plan fetch at least 1 MiB ahead.

use std::fs::File;
use std::io::{Cursor, Read};
use std::ops::Range;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use parquet::errors::ParquetError;
use parquet::file::reader::{ChunkReader, Length};

use super::location::Location;
use super::{object_error, runtime, store};
use crate::error::{Error, Result};

/// Files at most this large are fetched whole when opened.
const WHOLE_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// The tail fetched when a larger file is opened (footer + metadata, nearly always).
const TAIL_BYTES: u64 = 1024 * 1024;
/// The least a read outside any plan fetches.
const READ_AHEAD_BYTES: u64 = 1024 * 1024;

/// A file opened for reading; clones share one handle and one cache.
#[derive(Clone)]
pub enum InputFile {
    Local(Arc<File>),
    Remote(Arc<RemoteFile>),
}

impl std::fmt::Debug for InputFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InputFile::Local(_) => f.write_str("InputFile::Local"),
            InputFile::Remote(r) => {
                f.debug_struct("InputFile::Remote").field("location", &r.location).finish()
            }
        }
    }
}

impl InputFile {
    /// Opens `location`; `size` is the file's length when already known (a DataFile's
    /// `file_size_in_bytes`), which saves a HEAD request.
    pub fn open(location: &str, size: Option<u64>) -> Result<Self> {
        let loc = Location::parse(location)?;
        if loc.scheme.is_local() {
            let f =
                File::open(loc.local_path()).map_err(|e| Error::from(e).with_context("file", location))?;
            return Ok(InputFile::Local(Arc::new(f)));
        }
        let store = store::store_for(location, &loc)?;
        let path = Path::parse(loc.key).map_err(|e| object_error(e.into(), location))?;
        let size = match size.filter(|s| *s > 0) {
            Some(s) => s,
            None => runtime::block_on(store.head(&path))?.map_err(|e| object_error(e, location))?.size,
        };
        let file = RemoteFile { store, path, location: location.to_string(), size, cache: Mutex::default() };
        let tail = if size <= WHOLE_FILE_BYTES { 0..size } else { size - TAIL_BYTES..size };
        file.fetch(std::iter::once(tail).collect())?;
        Ok(InputFile::Remote(Arc::new(file)))
    }

    /// Declares the ranges the reader will decode, one list per row group in reading order.
    pub fn plan(&self, groups: Vec<Vec<Range<u64>>>) {
        if let InputFile::Remote(r) = self {
            let mut c = r.lock();
            c.plan = groups.into_iter().filter(|g| !g.is_empty()).collect();
        }
    }
}

impl Length for InputFile {
    fn len(&self) -> u64 {
        match self {
            InputFile::Local(f) => f.len(),
            InputFile::Remote(r) => r.size,
        }
    }
}

impl ChunkReader for InputFile {
    type T = Box<dyn Read + Send>;

    /// parquet-rs reads each page header from a reader asked for here, and the footer's
    /// last 8 bytes; the pages themselves it takes by `get_bytes`.
    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        if self.len().checked_sub(start) == Some(FOOTER_BYTES) {
            let b = self.get_bytes(start, FOOTER_BYTES as usize)?;
            return Ok(Box::new(EndIsError(Cursor::new(b))));
        }
        Ok(Box::new(PageHeaderRead { file: self.clone(), start, header: None }))
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        match self {
            InputFile::Local(f) => f.get_bytes(start, length),
            InputFile::Remote(r) => {
                r.bytes_from(start, Some(length as u64)).map_err(|e| ParquetError::External(Box::new(e)))
            }
        }
    }
}

/// A footer's length and magic.
const FOOTER_BYTES: u64 = 8;
/// The bytes first read for a local page header (parquet-rs's own reader buffered 8 KB).
const PAGE_HEADER_WINDOW: u64 = 8 * 1024;
/// A page header longer than this is refused (writers keep page statistics to a few KB).
const MAX_PAGE_HEADER_BYTES: usize = 16 * 1024 * 1024;

/// The reader of a page header: the header's bytes are fetched and walked at the first
/// read (`page_header`), not when the reader is made: parquet-rs also asks for a reader at
/// the start of a page whose header it had read before, and then reads nothing from it.
struct PageHeaderRead {
    file: InputFile,
    start: u64,
    header: Option<EndIsError<Cursor<Bytes>>>,
}

impl Read for PageHeaderRead {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let header = match &mut self.header {
            Some(h) => h,
            None => self.header.insert(EndIsError(Cursor::new(page_header_bytes(&self.file, self.start)?))),
        };
        header.read(buf)
    }
}

/// The bytes from `start` that hold the page header there, checked (`page_header`).
fn page_header_bytes(file: &InputFile, start: u64) -> std::io::Result<Bytes> {
    match file {
        InputFile::Local(f) => {
            let available = f.len().saturating_sub(start);
            let mut window = PAGE_HEADER_WINDOW;
            loop {
                let b = f.get_bytes(start, window.min(available) as usize).map_err(std::io::Error::other)?;
                if page_header(&b, start, window >= available)? {
                    return Ok(b);
                }
                window = window.saturating_mul(16);
            }
        }
        InputFile::Remote(r) => {
            let b = r.bytes_from(start, None).map_err(std::io::Error::other)?;
            page_header(&b, start, true)?;
            Ok(b)
        }
    }
}

/// Whether `bytes` (from byte `start` of the file; `whole`: all there is) hold a complete
/// page header; an error where they cannot. parquet-rs 60.1's Thrift decoder skips a
/// declared list of booleans one element per iteration without reading a byte, so a
/// malformed header declaring 2^31 of them costs seconds, and a header holding many such
/// lists hours (found by the `parquet_read` fuzz target). Every element takes a byte in the
/// encoding, so such a list is longer than the bytes left, and refused here.
fn page_header(bytes: &[u8], start: u64, whole: bool) -> std::io::Result<bool> {
    let header_error = |what: &str| {
        Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{what} (the page header at byte {start})"),
        ))
    };
    match super::thrift_compact::page_header_len(bytes) {
        Ok(_) => Ok(true),
        // Not Thrift the walk knows: parquet-rs's own decoder reports it.
        Err(super::thrift_compact::Stop::Bad) => Ok(true),
        Err(super::thrift_compact::Stop::Short) if whole => {
            header_error("a Parquet page header runs past the end of its column chunk")
        }
        Err(super::thrift_compact::Stop::Short) if bytes.len() >= MAX_PAGE_HEADER_BYTES => {
            header_error("a Parquet page header expected within 16 MB is longer")
        }
        Err(super::thrift_compact::Stop::Short) => Ok(false),
    }
}

/// A `Read` that fails, instead of returning 0, when asked for bytes past its end.
///
/// parquet-rs reads page headers from [`ChunkReader::get_read`]'s reader, and its Thrift
/// decoder skips unknown fields with `io::copy`, ignoring how many bytes were copied: a
/// malformed header that declares a list of 2^31 doubles would loop once per element after
/// the input ran out (found by the `parquet_read` fuzz target). A header never legitimately
/// reads to the end of its input, so an end there is an error, which stops the decode.
struct EndIsError<R>(R);

impl<R: Read> Read for EndIsError<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.read(buf)?;
        if n == 0 && !buf.is_empty() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "a Parquet page header runs past the end of its column chunk",
            ));
        }
        Ok(n)
    }
}

/// An object read by ranges.
pub struct RemoteFile {
    store: Arc<dyn ObjectStore>,
    path: Path,
    location: String,
    size: u64,
    cache: Mutex<Cache>,
}

#[derive(Default)]
struct Cache {
    /// Fetched ranges and their bytes.
    loaded: Vec<(Range<u64>, Bytes)>,
    /// The tail fetched on open (kept: the footer is read again by every builder).
    tail: Option<(Range<u64>, Bytes)>,
    plan: Vec<Vec<Range<u64>>>,
}

impl RemoteFile {
    fn lock(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Bytes from `start`: `len` of them, or (for a `Read` of unknown length) to the end of
    /// the cached range holding `start`.
    fn bytes_from(&self, start: u64, len: Option<u64>) -> Result<Bytes> {
        let want_end = start.saturating_add(len.unwrap_or(1)).min(self.size);
        if start >= self.size && len != Some(0) {
            return Err(crate::error::invalid_data(format!(
                "read at byte {start} is past the end of the {}-byte file",
                self.size
            ))
            .with_context("file", self.location.clone()));
        }
        if let Some(b) = self.cached(start, want_end, len) {
            return Ok(b);
        }
        // Miss: the planned row group holding `start`, else a read-ahead range.
        let group = {
            let c = self.lock();
            c.plan.iter().find(|g| g.iter().any(|r| r.start <= start && start < r.end)).cloned()
        };
        let ranges = match group {
            Some(g) if g.iter().any(|r| r.start <= start && want_end <= r.end) => g,
            _ => {
                let end = want_end.max(start.saturating_add(READ_AHEAD_BYTES)).min(self.size);
                std::iter::once(start..end).collect()
            }
        };
        self.fetch(ranges)?;
        self.cached(start, want_end, len).ok_or_else(|| {
            crate::error::Error::new(
                crate::error::ErrorKind::Internal,
                "fetched range does not hold the read",
            )
            .with_context("file", self.location.clone())
        })
    }

    fn cached(&self, start: u64, end: u64, len: Option<u64>) -> Option<Bytes> {
        let c = self.lock();
        c.tail.iter().chain(c.loaded.iter()).find(|(r, _)| r.start <= start && end <= r.end).map(|(r, b)| {
            let from = (start - r.start) as usize;
            let to = match len {
                Some(l) => from + l as usize,
                None => b.len(),
            };
            b.slice(from..to.min(b.len()))
        })
    }

    /// Fetches `ranges` (concurrently, coalesced) and makes them the cached set.
    fn fetch(&self, ranges: Vec<Range<u64>>) -> Result<()> {
        let got = runtime::block_on(self.store.get_ranges(&self.path, &ranges))?
            .map_err(|e| object_error(e, &self.location))?;
        let mut c = self.lock();
        let fetched: Vec<_> = ranges.into_iter().zip(got).collect();
        if c.tail.is_none() && fetched.len() == 1 && fetched[0].0.end == self.size {
            c.tail = fetched.into_iter().next();
        } else {
            c.loaded = fetched;
        }
        Ok(())
    }
}
