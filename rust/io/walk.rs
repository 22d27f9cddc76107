//! Listing a folder tree with each file's size and modification time (orphan-file removal
//! compares it with what the table references), skipping the names a filter refuses: a
//! refused folder is never opened, as Hadoop's `listStatus` with a path filter does.

use futures_util::TryStreamExt;
use object_store::ObjectStore;

use super::{local_error, local_path, object_error, remote, runtime, Location};
use crate::error::Result;

/// One listed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMeta {
    /// `<listed location>/<relative path>`: the location's own spelling is kept (a bare
    /// path stays bare, `file:/x` keeps its scheme).
    pub location: String,
    pub size: u64,
    /// Milliseconds since the epoch.
    pub last_modified_ms: i64,
}

/// Every file under `location` whose every path component below it passes `keep` (called
/// with a folder or file name). A missing folder lists as empty. Local folders are listed
/// level by level, the folders of a level on up to `threads` threads; an object store is
/// listed as one paginated prefix listing and filtered after.
pub fn walk(location: &str, keep: &(dyn Fn(&str) -> bool + Sync), threads: usize) -> Result<Vec<FileMeta>> {
    walk_skipping(location, keep, &|_: &str| false, threads)
}

/// [`walk`], leaving out the files whose location `skip` accepts. Locally such a file is
/// never stat-ed (its kind comes from the folder listing): orphan removal skips the files
/// the table references, half of a typical listing, without paying for their metadata.
pub fn walk_skipping(
    location: &str,
    keep: &(dyn Fn(&str) -> bool + Sync),
    skip: &(dyn Fn(&str) -> bool + Sync),
    threads: usize,
) -> Result<Vec<FileMeta>> {
    let out = std::sync::Mutex::new(Vec::new());
    walk_skipping_each(location, keep, skip, threads, &|files| {
        out.lock().unwrap_or_else(|e| e.into_inner()).extend(files)
    })?;
    Ok(out.into_inner().unwrap_or_else(|e| e.into_inner()))
}

/// [`walk_skipping`], handing the files to `each` as they are found: locally a folder's
/// files right after its listing, on the thread that listed it (every name of the folder,
/// hidden ones included, has been through `keep` by then), so work on them overlaps the
/// rest of the listing; an object store's files in one call at the end.
pub fn walk_skipping_each(
    location: &str,
    keep: &(dyn Fn(&str) -> bool + Sync),
    skip: &(dyn Fn(&str) -> bool + Sync),
    threads: usize,
    each: &(dyn Fn(Vec<FileMeta>) + Sync),
) -> Result<()> {
    let base = location.trim_end_matches('/');
    match remote(base)? {
        None => walk_local(base, keep, skip, threads, each),
        Some(r) => {
            let root = Location::parse(base)?.root();
            let prefix = if r.path.as_ref().is_empty() { None } else { Some(&r.path) };
            let prefix_len = r.path.as_ref().len();
            let objects = runtime::block_on(r.store.list(prefix).try_collect::<Vec<_>>())?
                .map_err(|e| object_error(e, base))?;
            let mut out = Vec::with_capacity(objects.len());
            for o in objects {
                let key = o.location.as_ref();
                let relative = key.get(prefix_len..).unwrap_or("").trim_start_matches('/');
                let location = format!("{root}/{key}");
                if relative.split('/').all(keep) && !skip(&location) {
                    out.push(FileMeta {
                        location,
                        size: o.size,
                        last_modified_ms: o.last_modified.timestamp_millis(),
                    });
                }
            }
            each(out);
            Ok(())
        }
    }
}

type Filter<'a> = &'a (dyn Fn(&str) -> bool + Sync);

fn walk_local(
    base: &str,
    keep: Filter<'_>,
    skip: Filter<'_>,
    threads: usize,
    each: &(dyn Fn(Vec<FileMeta>) + Sync),
) -> Result<()> {
    let mut level = vec![base.to_string()];
    while !level.is_empty() {
        let listed = crate::scan::parallel_map(&level, threads, |dir| {
            list_local(dir, keep, skip).map(|(dirs, files)| {
                if !files.is_empty() {
                    each(files);
                }
                dirs
            })
        });
        let mut next = Vec::new();
        for got in listed {
            next.extend(got?);
        }
        level = next;
    }
    Ok(())
}

/// One local folder: its kept sub-folders (locations) and kept, not skipped files. The
/// folder listing's file type spares a stat for folders and skipped files; symlinks (and
/// file systems that report no type) are stat-ed, following the link.
fn list_local(dir: &str, keep: Filter<'_>, skip: Filter<'_>) -> Result<(Vec<String>, Vec<FileMeta>)> {
    let mut dirs = Vec::new();
    let mut files = Vec::new();
    let rd = match std::fs::read_dir(local_path(dir)?) {
        Ok(rd) => rd,
        Err(e) if matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory) => {
            return Ok((dirs, files))
        }
        Err(e) => return Err(local_error(e, "directory", dir)),
    };
    for entry in rd {
        let entry = entry.map_err(|e| local_error(e, "directory", dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if !keep(&name) {
            continue;
        }
        let location = format!("{dir}/{name}");
        match entry.file_type() {
            Ok(t) if t.is_dir() => {
                dirs.push(location);
                continue;
            }
            Ok(t) if t.is_file() && skip(&location) => continue,
            _ => {}
        }
        // Follows symlinks, as Hadoop's local file system does.
        let meta = match std::fs::metadata(entry.path()) {
            Ok(m) => m,
            // Gone since the folder was read (another writer's temp file).
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(local_error(e, "file", &location)),
        };
        if meta.is_dir() {
            dirs.push(location);
        } else if !skip(&location) {
            let last_modified_ms = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
            files.push(FileMeta { location, size: meta.len(), last_modified_ms });
        }
    }
    Ok((dirs, files))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::write_file;

    fn names(mut files: Vec<FileMeta>, base: &str) -> Vec<String> {
        files.sort_by(|a, b| a.location.cmp(&b.location));
        files.into_iter().map(|f| f.location.strip_prefix(base).unwrap_or(&f.location).to_string()).collect()
    }

    #[test]
    fn walks_local_and_memory_trees_skipping_refused_names() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().display().to_string();
        for rel in ["a.txt", ".hidden", "d/b.txt", "d/_skip/c.txt", "d/e/f/g.txt", "_x=1/h.txt"] {
            write_file(&format!("{base}/{rel}"), b"12345").unwrap();
        }
        let keep = |n: &str| !n.starts_with('.') && (!n.starts_with('_') || n.starts_with("_x="));
        let files = walk(&base, &keep, 4).unwrap();
        assert!(files.iter().all(|f| f.size == 5 && f.last_modified_ms > 1_600_000_000_000));
        assert_eq!(names(files, &base), vec!["/_x=1/h.txt", "/a.txt", "/d/b.txt", "/d/e/f/g.txt"]);
        let with_scheme = walk(&format!("file:{base}/d/"), &|_: &str| true, 1).unwrap();
        assert_eq!(
            names(with_scheme, &format!("file:{base}")),
            vec!["/d/_skip/c.txt", "/d/b.txt", "/d/e/f/g.txt"]
        );
        assert!(walk(&format!("{base}/missing"), &|_: &str| true, 2).unwrap().is_empty());

        for rel in ["t/a.txt", "t/.h/x.txt", "t/m/_y.txt", "t/m/z.txt", "u/other.txt"] {
            write_file(&format!("memory://walk/{rel}"), b"1").unwrap();
        }
        let files = walk("memory://walk/t", &keep, 2).unwrap();
        assert_eq!(names(files, "memory://walk/t"), vec!["/a.txt", "/m/z.txt"]);

        // Skipped files are left out (locally without a stat); folders are still entered.
        let skip = |l: &str| l.ends_with("/b.txt") || l.ends_with("/z.txt");
        let files = walk_skipping(&base, &keep, &skip, 2).unwrap();
        assert_eq!(names(files, &base), vec!["/_x=1/h.txt", "/a.txt", "/d/e/f/g.txt"]);
        let files = walk_skipping("memory://walk/t", &keep, &skip, 2).unwrap();
        assert_eq!(names(files, "memory://walk/t"), vec!["/a.txt"]);
    }
}
