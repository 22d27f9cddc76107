//! Deleting the files maintenance found unreachable: many requests in flight, every file
//! tried, each failure reported with its file (a failed delete leaves an orphan, which is
//! harmless and what orphan removal is for; it never stops the other deletes).

use crate::error::Error;
use crate::io;
use crate::scan::parallel_map;

/// Deleting threads for files like `location`. Locally 8 per core (Iceberg Java's
/// `HadoopFileIO` bulk delete uses 4 per core, `iceberg.hadoop.delete-file-parallelism`):
/// an unlink mostly waits on the file system's journal and folder locks, so threads beyond
/// the cores overlap those waits (on ext4 with 2 cores, 50,000 unlinks: 130-200 us each on
/// 2 threads, 90-130 on 8, 55-90 on 16). Object stores: the reading threads (requests in
/// flight).
pub fn delete_threads_for(location: &str) -> usize {
    match io::Location::parse(location) {
        Ok(l) if l.scheme.is_local() => 8 * crate::scan::default_threads(),
        _ => super::reachability::threads_for(location),
    }
}

/// A file that could not be deleted.
#[derive(Debug)]
pub struct DeleteFailure {
    pub path: String,
    pub error: Error,
}

/// Deletes every file of `paths` on up to `threads` threads; a file already gone counts as
/// deleted. Locally, with `checksums`, Hadoop's `.<name>.crc` checksum beside a file (Iceberg
/// Java's local writes leave one) goes with it, so no hidden leftovers accumulate; without,
/// the caller knows there is none (orphan removal saw the folder's hidden names).
pub fn delete_all(paths: &[String], threads: usize, checksums: bool) -> Vec<DeleteFailure> {
    let results = parallel_map(paths, threads, |p| delete_one(p, checksums));
    paths
        .iter()
        .zip(results)
        .filter_map(|(p, r)| r.err().map(|error| DeleteFailure { path: p.clone(), error }))
        .collect()
}

/// Deletes one file, and locally its `.<name>.crc` checksum with it when `checksum` says
/// there may be one (best effort: the file's own delete decides the result).
pub(crate) fn delete_one(path: &str, checksum: bool) -> crate::error::Result<()> {
    io::delete_file(path)?;
    if checksum {
        remove_crc_sibling(path);
    }
    Ok(())
}

fn remove_crc_sibling(location: &str) {
    let Ok(loc) = io::Location::parse(location) else { return };
    if !loc.scheme.is_local() {
        return;
    }
    let path = loc.local_path();
    if let (Some(dir), Some(name)) = (path.parent(), path.file_name()) {
        let crc = dir.join(format!(".{}.crc", name.to_string_lossy()));
        // Best effort: most files have none.
        let _ = std::fs::remove_file(crc);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deletes_files_with_their_checksums_and_reports_failures() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display().to_string();
        std::fs::write(format!("{d}/a.parquet"), b"a").unwrap();
        std::fs::write(format!("{d}/.a.parquet.crc"), b"c").unwrap();
        std::fs::write(format!("{d}/b.avro"), b"b").unwrap();
        std::fs::create_dir(format!("{d}/sub")).unwrap();
        std::fs::write(format!("{d}/sub/x"), b"x").unwrap();
        let paths = vec![
            format!("file:{d}/a.parquet"),
            format!("{d}/b.avro"),
            format!("{d}/missing.parquet"),
            format!("{d}/sub"),
            "hdfs://nn/x".to_string(),
        ];
        let failures = delete_all(&paths, 3, true);
        let failed: Vec<&str> = failures.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(failed, vec![format!("{d}/sub").as_str(), "hdfs://nn/x"]);
        let left: Vec<String> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(left, vec!["sub".to_string()]);
    }

    #[test]
    fn without_checksums_only_the_files_go() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display().to_string();
        std::fs::write(format!("{d}/a.parquet"), b"a").unwrap();
        std::fs::write(format!("{d}/.a.parquet.crc"), b"c").unwrap();
        assert!(delete_all(&[format!("{d}/a.parquet")], 2, false).is_empty());
        let left: Vec<String> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(left, vec![".a.parquet.crc".to_string()]);
    }
}
