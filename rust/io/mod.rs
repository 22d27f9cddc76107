//! FileIO: every byte icefloe reads or writes goes through here, chosen by the location's
//! scheme (see [`location`]): local paths and `file:` URLs, `s3://` / `s3a://`, `gs://`,
//! `abfss://` / `az://`, and `memory://` for tests.
//!
//! Object stores come from the `object_store` crate. Local files do not go through its
//! `LocalFileSystem`: that store percent-encodes file names, while Iceberg Java (Hadoop)
//! keeps `%XX` of partition paths literally on disk, and a filesystem commit needs an
//! exclusive hard link, which it does not offer as such.

mod input;
mod location;
mod output;
pub(crate) mod runtime;
mod store;
pub(crate) mod thrift_compact;
mod walk;

use futures_util::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};

pub use input::InputFile;
pub use location::{Location, Scheme};
pub use output::OutputFile;
pub use store::{is_secret, redacted, register, registered_properties};
pub use walk::{walk, walk_skipping, walk_skipping_each, FileMeta};

use crate::error::{Error, ErrorKind, Result};

/// An object-store error as a core error naming the object (the location, never a secret).
pub(crate) fn object_error(e: object_store::Error, location: &str) -> Error {
    let (kind, what) = match &e {
        object_store::Error::NotFound { .. } => (ErrorKind::NotFound, "file does not exist"),
        object_store::Error::AlreadyExists { .. } | object_store::Error::Precondition { .. } => {
            (ErrorKind::AlreadyExists, "file already exists")
        }
        object_store::Error::NotImplemented { .. } => {
            (ErrorKind::NotSupported, "not supported by this object store")
        }
        object_store::Error::InvalidPath { .. } => (ErrorKind::Validation, "not a valid object key"),
        _ => (ErrorKind::Io, "object store request failed"),
    };
    Error::new(kind, what).with_context("file", location).with_source(e)
}

/// Turns a local location (`/abs/path`, `file:/abs`, `file:///abs`) into a path; other
/// schemes are refused (for the few callers that need a local file, such as tests).
pub fn local_path(location: &str) -> Result<std::path::PathBuf> {
    let loc = Location::parse(location)?;
    if !loc.scheme.is_local() {
        return Err(Error::new(ErrorKind::NotSupported, format!("'{location}' is not a local file")));
    }
    Ok(loc.local_path())
}

struct Remote<'a> {
    store: std::sync::Arc<dyn ObjectStore>,
    path: Path,
    location: &'a str,
}

/// The store and key of a remote location, or None for a local one.
fn remote(location: &str) -> Result<Option<Remote<'_>>> {
    let loc = Location::parse(location)?;
    if loc.scheme.is_local() {
        return Ok(None);
    }
    let store = store::store_for(location, &loc)?;
    let path = Path::parse(loc.key).map_err(|e| object_error(e.into(), location))?;
    Ok(Some(Remote { store, path, location }))
}

fn local_error(e: std::io::Error, what: &'static str, location: &str) -> Error {
    Error::from(e).with_context(what, location)
}

/// Reads a whole (small) file: metadata, manifests, manifest lists, delete files.
pub fn read_file(location: &str) -> Result<Vec<u8>> {
    match remote(location)? {
        None => std::fs::read(local_path(location)?).map_err(|e| {
            let kind =
                if e.kind() == std::io::ErrorKind::NotFound { ErrorKind::NotFound } else { ErrorKind::Io };
            Error::new(kind, "cannot read file").with_context("file", location).with_source(e)
        }),
        Some(r) => {
            let got = runtime::block_on(async { r.store.get(&r.path).await?.bytes().await })?;
            got.map(|b| b.to_vec()).map_err(|e| object_error(e, r.location))
        }
    }
}

/// Creates a file that must not exist yet, all or nothing: readers never see part of it,
/// and of two writers creating the same name exactly one succeeds (the other gets
/// `ErrorKind::AlreadyExists`). Locally a hard link of a complete temp file (rename would
/// replace); on an object store a conditional PUT (`If-None-Match: *`). A store without
/// conditional writes is refused (`NotSupported`), never silently overwritten.
pub fn write_new_file(location: &str, bytes: &[u8]) -> Result<()> {
    match remote(location)? {
        None => write_new_local(location, bytes),
        Some(r) => {
            let opts = PutOptions { mode: PutMode::Create, ..Default::default() };
            let put = runtime::block_on(r.store.put_opts(&r.path, PutPayload::from(bytes.to_vec()), opts))?;
            match put {
                Ok(_) => Ok(()),
                Err(e @ object_store::Error::NotImplemented { .. }) => Err(Error::new(
                    ErrorKind::NotSupported,
                    "this object store cannot create a file only if it does not exist (a conditional \
                     write), which a filesystem-catalog commit needs to never lose an update; use the \
                     SQL or REST catalog for tables on it",
                )
                .with_context("file", location)
                .with_source(e)),
                Err(e) => Err(object_error(e, location)),
            }
        }
    }
}

/// The name of a local temp file next to its target: `<uuid>.tmp`. Not hidden on purpose: a
/// process killed inside a write leaves it behind, and `remove_orphan_files` skips hidden
/// names (Java's rule), so a hidden temp file would never be cleaned up. It can never match
/// a metadata file name (`v<N>.metadata.json`, `<N>-<uuid>.metadata.json`, `snap-*`).
fn temp_name() -> String {
    format!("{}.tmp", uuid::Uuid::new_v4().simple())
}

fn write_new_local(location: &str, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let path = local_path(location)?;
    let dir = path.parent().map(|p| p.to_path_buf()).unwrap_or_default();
    std::fs::create_dir_all(&dir).map_err(|e| local_error(e, "directory", &dir.display().to_string()))?;
    let tmp = dir.join(temp_name());
    let written = (|| -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()
    })();
    if let Err(e) = written {
        // No room, no permission: the file was not created. (Falling back to writing the
        // final name here would leave a partial `v<N>.metadata.json` on a full disk.)
        let _ = std::fs::remove_file(&tmp);
        return Err(local_error(e, "file", location));
    }
    let linked = std::fs::hard_link(&tmp, &path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            Err(Error::new(ErrorKind::AlreadyExists, "file already exists").with_context("file", location))
        }
        // A filesystem without hard links: an exclusive create (the name is still claimed
        // exclusively; a reader may see the file while it is being written). A failed write
        // removes the part written: the name was ours, and a partial commit must not stand.
        Err(_) => {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
                .map_err(|e| local_error(e, "file", location))?;
            f.write_all(bytes).and_then(|_| f.sync_all()).map_err(|e| {
                let _ = std::fs::remove_file(&path);
                local_error(e, "file", location)
            })
        }
    }
}

/// Writes a file, replacing it when it exists (atomic locally: temp file + rename). For
/// hints such as `version-hint.text`, never for commits.
pub fn write_file(location: &str, bytes: &[u8]) -> Result<()> {
    match remote(location)? {
        None => {
            let path = local_path(location)?;
            let dir = path.parent().map(|p| p.to_path_buf()).unwrap_or_default();
            std::fs::create_dir_all(&dir)
                .map_err(|e| local_error(e, "directory", &dir.display().to_string()))?;
            let tmp = dir.join(temp_name());
            let res = std::fs::write(&tmp, bytes).and_then(|_| std::fs::rename(&tmp, &path));
            if res.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            res.map_err(|e| local_error(e, "file", location))
        }
        Some(r) => runtime::block_on(r.store.put(&r.path, PutPayload::from(bytes.to_vec())))?
            .map(|_| ())
            .map_err(|e| object_error(e, location)),
    }
}

/// Deletes a file; a missing file is not an error (cleanup is idempotent).
pub fn delete_file(location: &str) -> Result<()> {
    match remote(location)? {
        None => match std::fs::remove_file(local_path(location)?) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(local_error(e, "file", location)),
        },
        Some(r) => match runtime::block_on(r.store.delete(&r.path))? {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(object_error(e, location)),
        },
    }
}

/// Deletes many files (object stores: batched, several requests in flight); missing files
/// are ignored. Returns the first error after trying every file.
pub fn delete_files(locations: &[String]) -> Result<()> {
    let mut first = None;
    let mut remote_jobs = Vec::new();
    for l in locations {
        match remote(l) {
            Ok(None) => {
                if let Err(e) = delete_file(l) {
                    first.get_or_insert(e);
                }
            }
            Ok(Some(r)) => remote_jobs.push((r.store, r.path, l.clone())),
            Err(e) => {
                first.get_or_insert(e);
            }
        }
    }
    if !remote_jobs.is_empty() {
        let results = runtime::block_on(async {
            futures_util::stream::iter(remote_jobs)
                .map(|(store, path, l)| async move { (store.delete(&path).await, l) })
                .buffer_unordered(16)
                .collect::<Vec<_>>()
                .await
        })?;
        for (res, l) in results {
            match res {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => {
                    first.get_or_insert(object_error(e, &l));
                }
            }
        }
    }
    first.map_or(Ok(()), Err)
}

/// Whether a file exists.
pub fn exists(location: &str) -> Result<bool> {
    match remote(location)? {
        None => Ok(local_path(location)?.exists()),
        Some(r) => match runtime::block_on(r.store.head(&r.path))? {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(object_error(e, location)),
        },
    }
}

/// One level of a folder: (names of sub-folders, (name, size) of files), each sorted.
/// A missing folder lists as empty.
pub type Listing = (Vec<String>, Vec<(String, u64)>);

pub fn list_dir(location: &str) -> Result<Listing> {
    let location = location.trim_end_matches('/');
    match remote(location)? {
        None => {
            let mut dirs = Vec::new();
            let mut files = Vec::new();
            let rd = match std::fs::read_dir(local_path(location)?) {
                Ok(rd) => rd,
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                    ) =>
                {
                    return Ok((dirs, files))
                }
                Err(e) => return Err(local_error(e, "directory", location)),
            };
            for entry in rd {
                let entry = entry.map_err(|e| local_error(e, "directory", location))?;
                let name = entry.file_name().to_string_lossy().into_owned();
                let meta = match entry.metadata() {
                    Ok(m) => m,
                    // Gone since the directory was read: another writer's temp file (commits
                    // link a complete temp file into place, then remove it).
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(local_error(e, "file", &format!("{location}/{name}"))),
                };
                if meta.is_dir() {
                    dirs.push(name);
                } else {
                    files.push((name, meta.len()));
                }
            }
            dirs.sort();
            files.sort();
            Ok((dirs, files))
        }
        Some(r) => {
            let prefix = if r.path.as_ref().is_empty() { None } else { Some(&r.path) };
            let got = runtime::block_on(r.store.list_with_delimiter(prefix))?
                .map_err(|e| object_error(e, location))?;
            let mut dirs: Vec<String> =
                got.common_prefixes.iter().filter_map(|p| p.filename().map(str::to_string)).collect();
            let mut files: Vec<(String, u64)> = got
                .objects
                .iter()
                .filter_map(|o| o.location.filename().map(|n| (n.to_string(), o.size)))
                .collect();
            dirs.sort();
            files.sort();
            Ok((dirs, files))
        }
    }
}

/// Every file under a folder, recursively: (location, size).
pub fn list_recursive(location: &str) -> Result<Vec<(String, u64)>> {
    let base = location.trim_end_matches('/');
    match remote(base)? {
        None => {
            let mut out = Vec::new();
            let mut stack = vec![base.to_string()];
            while let Some(dir) = stack.pop() {
                let (dirs, files) = list_dir(&dir)?;
                stack.extend(dirs.into_iter().map(|d| format!("{dir}/{d}")));
                out.extend(files.into_iter().map(|(f, s)| (format!("{dir}/{f}"), s)));
            }
            out.sort();
            Ok(out)
        }
        Some(r) => {
            let loc = Location::parse(base)?;
            let root = loc.root();
            let prefix = if r.path.as_ref().is_empty() { None } else { Some(&r.path) };
            let objects = runtime::block_on(r.store.list(prefix).try_collect::<Vec<_>>())?
                .map_err(|e| object_error(e, base))?;
            let mut out: Vec<_> =
                objects.into_iter().map(|o| (format!("{root}/{}", o.location.as_ref()), o.size)).collect();
            out.sort();
            Ok(out)
        }
    }
}

/// Deletes a folder and everything under it (a table's files on `purge`).
pub fn delete_prefix(location: &str) -> Result<()> {
    match remote(location)? {
        None => match std::fs::remove_dir_all(local_path(location)?) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(local_error(e, "directory", location)),
        },
        Some(_) => {
            let files: Vec<String> = list_recursive(location)?.into_iter().map(|(l, _)| l).collect();
            delete_files(&files)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_store_round_trip_and_conditional_create() {
        let loc = "memory://iotest/t/metadata/v1.metadata.json";
        write_new_file(loc, b"one").unwrap();
        assert_eq!(read_file(loc).unwrap(), b"one");
        let e = write_new_file(loc, b"two").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::AlreadyExists, "{e}");
        assert!(e.to_string().contains(loc), "{e}");
        assert_eq!(read_file(loc).unwrap(), b"one");
        write_file("memory://iotest/t/metadata/version-hint.text", b"1").unwrap();
        write_file("memory://iotest/t/data/a=1/f.parquet", b"x").unwrap();
        let (dirs, files) = list_dir("memory://iotest/t/metadata/").unwrap();
        assert!(dirs.is_empty());
        assert_eq!(files, vec![("v1.metadata.json".into(), 3), ("version-hint.text".into(), 1)]);
        assert_eq!(
            list_dir("memory://iotest/t").unwrap().0,
            vec!["data".to_string(), "metadata".to_string()]
        );
        assert_eq!(
            list_recursive("memory://iotest/t/data").unwrap()[0].0,
            "memory://iotest/t/data/a=1/f.parquet"
        );
        assert!(exists(loc).unwrap());
        delete_prefix("memory://iotest/t").unwrap();
        assert!(!exists(loc).unwrap());
        let e = read_file(loc).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound);
        delete_file(loc).unwrap();
    }

    #[test]
    fn local_conditional_create_is_exclusive() {
        let dir = tempfile::tempdir().unwrap();
        let loc = format!("{}/m/v1.metadata.json", dir.path().display());
        write_new_file(&loc, b"a").unwrap();
        assert_eq!(write_new_file(&loc, b"b").unwrap_err().kind(), ErrorKind::AlreadyExists);
        assert_eq!(read_file(&format!("file://{loc}")).unwrap(), b"a");
        // No temp files left behind.
        assert_eq!(list_dir(&format!("{}/m", dir.path().display())).unwrap().1.len(), 1);
    }

    #[test]
    fn output_and_input_files_on_memory() {
        use parquet::file::reader::ChunkReader;
        use std::io::Write;
        let loc = "memory://iotest2/big.bin";
        let data: Vec<u8> = (0..20_000_000u32).map(|i| (i % 251) as u8).collect();
        let mut out = OutputFile::create(loc).unwrap();
        for chunk in data.chunks(3_000_000) {
            out.write_all(chunk).unwrap();
        }
        out.finish().unwrap();
        let input = InputFile::open(loc, None).unwrap();
        assert_eq!(parquet::file::reader::Length::len(&input), data.len() as u64);
        input.plan(vec![vec![100..5000, 9_000_000..9_100_000]]);
        assert_eq!(&input.get_bytes(200, 10).unwrap()[..], &data[200..210]);
        assert_eq!(&input.get_bytes(9_000_500, 1000).unwrap()[..], &data[9_000_500..9_001_500]);
        assert_eq!(&input.get_bytes(15_000_000, 7).unwrap()[..], &data[15_000_000..15_000_007]);
        assert_eq!(&input.get_bytes(19_999_990, 10).unwrap()[..], &data[19_999_990..]);
        let mut out = OutputFile::create("memory://iotest2/aborted.bin").unwrap();
        out.abort().unwrap();
        assert!(!exists("memory://iotest2/aborted.bin").unwrap());
    }
}
