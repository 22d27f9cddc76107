//! The snapshot files of Iceberg Java's `RewriteTablePath` action (`RewriteTablePathUtil`):
//! manifest lists, manifests and position delete files rewritten with every path under a
//! source prefix moved under a target prefix, written to a staging folder that mirrors the
//! table's layout, and the copy plan (`staged or source file -> target file`) of what they
//! reference. The metadata JSON files are the Python side's
//! (`icefloe.maintenance.rewrite_table_path`), which also validates the arguments.
//!
//! As Java:
//! - every manifest of the snapshots to move is rewritten (incrementally: those added by a
//!   snapshot new since the start version); a manifest list keeps its manifests' counts,
//!   sequence numbers and summaries;
//! - manifest entries keep status, snapshot id, sequence numbers and metrics; a position
//!   delete's `file_path` bounds are moved when they name one file, else dropped, and its
//!   size is the rewritten file's; a deletion vector's `referenced_data_file` is moved;
//! - every position delete file of a rewritten delete manifest is rewritten (Parquet rows, or
//!   the Puffin footer's `referenced-data-file` of deletion vectors); equality delete files,
//!   which hold no paths, are copied as they are;
//! - the copy plan lists live data and delete files added by a snapshot to move.
//!
//! Unlike Java, the rewritten manifests are written before the manifest lists, so a list
//! records the length of the manifest it names (Java keeps the source manifest's length; an
//! incremental run takes an older manifest's from its copy at the target, when there); and
//! a file-scoped position delete file's `referenced_data_file` is moved too (Java moves it for
//! deletion vectors only, leaving the others naming the source data file).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, RecordBatch, StringArray};
use parquet::file::reader::Length;

use crate::arrow::reader::read_parquet;
use crate::error::{invalid_data, not_supported, validation, Result};
use crate::io;
use crate::manifest::{
    read_manifest_list, DataContentType, FileFormat, Manifest, ManifestContent, ManifestFile,
    ManifestListWriter, ManifestWriter,
};
use crate::puffin::{Blob, PuffinFile, PuffinWriter};
use crate::spec::{StructType, TableMetadata};
use crate::writer::position_delete_writer::{position_delete_schema, DELETE_FILE_PATH_FIELD_ID};
use crate::writer::{MetricsConfig, ParquetFileWriter, ParquetWriterProps};

const SEPARATOR: char = '/';

/// `path` with a trailing `/` (Java's `maybeAppendFileSeparator`).
pub fn with_separator(path: &str) -> String {
    if path.ends_with(SEPARATOR) {
        path.to_string()
    } else {
        format!("{path}{SEPARATOR}")
    }
}

/// The part of `path` under `prefix` ("" when they are the same folder), as Java's
/// `RewriteTablePathUtil.relativize`: both compared with a trailing `/`.
pub fn relativize(path: &str, prefix: &str) -> Result<String> {
    let to_remove = with_separator(prefix);
    let normalized = with_separator(path);
    if !normalized.starts_with(&to_remove) {
        return Err(validation(format!("Path {normalized} does not start with {to_remove}")));
    }
    if normalized == to_remove {
        return Ok(String::new());
    }
    Ok(path.get(to_remove.len()..).unwrap_or_default().to_string())
}

/// `base` joined with `relative` (`base` itself when `relative` is empty).
fn combine(base: &str, relative: &str) -> String {
    if relative.is_empty() {
        base.to_string()
    } else {
        format!("{}{relative}", with_separator(base))
    }
}

/// `path` moved from under `source` to under `target` (Java's `newPath`).
pub fn new_path(path: &str, source: &str, target: &str) -> Result<String> {
    Ok(combine(target, &relativize(path, source)?))
}

/// Where `path` is staged: its place under `source` taken under `staging` (Java's
/// `stagingPath`).
pub fn staging_path(path: &str, source: &str, staging: &str) -> Result<String> {
    Ok(combine(staging, &relativize(path, source)?))
}

/// The prefixes of one rewrite; `staging` ends with `/`.
#[derive(Debug, Clone)]
pub struct PathRewrite {
    pub source: String,
    pub target: String,
    pub staging: String,
}

impl PathRewrite {
    fn moved(&self, path: &str) -> Result<String> {
        new_path(path, &self.source, &self.target)
    }

    fn staged(&self, path: &str) -> Result<String> {
        staging_path(path, &self.source, &self.staging)
    }
}

/// What [`rewrite_snapshot_files`] did.
#[derive(Debug, Default)]
pub struct SnapshotFilesRewrite {
    /// `(source or staged file, target file)`, without duplicates.
    pub copy_plan: BTreeSet<(String, String)>,
    /// Manifests rewritten (Java's `rewrittenManifestFilePathsCount`).
    pub manifests: usize,
    /// Position delete files (deletion vectors one by one) of the rewritten delete manifests
    /// (Java's `rewrittenDeleteFilePathsCount`).
    pub delete_files: usize,
}

/// Rewrites the manifest lists of `snapshot_ids` (snapshots of `end`), the manifests they
/// name that were added by a snapshot of `delta` (all of them when `incremental` is false)
/// and the position delete files of those, into `paths.staging`. `end` gives the format
/// version, the partition specs and the Parquet properties. On error, the files written are
/// deleted.
pub fn rewrite_snapshot_files(
    end: &TableMetadata,
    snapshot_ids: &[i64],
    delta: &HashSet<i64>,
    incremental: bool,
    paths: &PathRewrite,
) -> Result<SnapshotFilesRewrite> {
    if end.format_version() < 2 {
        return Err(not_supported(format!(
            "rewrite_table_path of a format version {} table: icefloe writes manifests of format 2 and 3",
            end.format_version()
        )));
    }
    let mut written = Vec::new();
    let done = rewrite_all(end, snapshot_ids, delta, incremental, paths, &mut written);
    if done.is_err() {
        let _ = io::delete_files(&written);
    }
    done
}

fn rewrite_all(
    end: &TableMetadata,
    snapshot_ids: &[i64],
    delta: &HashSet<i64>,
    incremental: bool,
    paths: &PathRewrite,
    written: &mut Vec<String>,
) -> Result<SnapshotFilesRewrite> {
    let mut out = SnapshotFilesRewrite::default();
    // The manifests of each list (Java: an unreadable list counts as empty, with a warning).
    let mut lists = Vec::new();
    let mut to_rewrite: BTreeMap<String, ManifestFile> = BTreeMap::new();
    for id in snapshot_ids {
        let snapshot = end
            .snapshot_by_id(*id)
            .ok_or_else(|| validation(format!("expected snapshot {id} in the end version, found none")))?;
        let Some(list) = snapshot.manifest_list.clone() else {
            return Err(not_supported("a snapshot without a manifest list (format v1 inline manifests)")
                .with_context("snapshot", id.to_string()));
        };
        let manifests = read_manifest_list(&list).unwrap_or_default();
        for m in &manifests {
            if !m.manifest_path.starts_with(&paths.source) {
                return Err(validation(format!(
                    "Encountered manifest file {} not under the source prefix {}",
                    m.manifest_path, paths.source
                )));
            }
            if !incremental || delta.contains(&m.added_snapshot_id) {
                to_rewrite.entry(m.manifest_path.clone()).or_insert_with(|| m.clone());
            }
        }
        lists.push((snapshot.clone(), list, manifests));
    }
    out.manifests = to_rewrite.len();

    let mut parsed = Vec::with_capacity(to_rewrite.len());
    for m in to_rewrite.values() {
        let bytes = io::read_file(&m.manifest_path)?;
        let manifest =
            Manifest::parse(&bytes).map_err(|e| e.with_context("file", m.manifest_path.clone()))?;
        parsed.push((m, manifest));
    }

    // Position delete files: counted by (path, offset, size) as Java's DeleteFileSet, each
    // physical file rewritten once.
    let mut identities = HashSet::new();
    let mut physical: BTreeMap<String, FileFormat> = BTreeMap::new();
    for (_, manifest) in parsed.iter().filter(|(m, _)| m.content == ManifestContent::Deletes) {
        for e in &manifest.entries {
            let f = &e.data_file;
            if f.content == DataContentType::PositionDeletes {
                identities.insert((f.file_path.clone(), f.content_offset, f.content_size_in_bytes));
                physical.entry(f.file_path.clone()).or_insert(f.file_format);
            }
        }
    }
    out.delete_files = identities.len();
    let mut sizes: HashMap<String, i64> = HashMap::new();
    for (path, format) in &physical {
        let staged = paths.staged(path)?;
        let size = match format {
            FileFormat::Puffin => rewrite_deletion_vectors(path, &staged, paths, written)?,
            FileFormat::Parquet => rewrite_position_deletes(end, path, &staged, paths, written)?,
            other => {
                return Err(not_supported(format!(
                    "rewriting a {} position delete file; icefloe rewrites Parquet and Puffin ones",
                    other.as_str()
                ))
                .with_context("file", path.clone()))
            }
        };
        sizes.insert(path.clone(), size);
    }

    let mut lengths: HashMap<String, i64> = HashMap::new();
    for (m, manifest) in parsed {
        let staged = paths.staged(&m.manifest_path)?;
        let length =
            rewrite_manifest(end, m, manifest, &staged, delta, &sizes, paths, &mut out.copy_plan, written)?;
        out.copy_plan.insert((staged, paths.moved(&m.manifest_path)?));
        lengths.insert(m.manifest_path.clone(), length);
    }

    for (snapshot, list, manifests) in lists {
        let staged = paths.staged(&list)?;
        let mut w = ManifestListWriter::new(
            staged.clone(),
            snapshot.snapshot_id,
            snapshot.parent_snapshot_id,
            snapshot.sequence_number,
        );
        if end.format_version() >= 3 {
            if let Some(first) = snapshot.first_row_id {
                w = w.with_row_lineage(first);
            }
        }
        for mut m in manifests {
            let target = paths.moved(&m.manifest_path)?;
            let length = match lengths.get(&m.manifest_path) {
                Some(length) => Some(*length),
                None => copied_length(&target)?,
            };
            if let Some(length) = length {
                lengths.insert(m.manifest_path.clone(), length);
                m.manifest_length = length;
            }
            m.manifest_path = target;
            w.add(m);
        }
        w.write().map_err(|e| e.with_context("manifest list", list.clone()))?;
        written.push(staged.clone());
        out.copy_plan.insert((staged, paths.moved(&list)?));
    }
    Ok(out)
}

/// The length of a manifest an earlier (incremental) run rewrote and the user copied to
/// `target` since: a new list names that copy, whose length is not the source manifest's
/// when the prefixes differ in length. None when nothing is there yet (Java records the
/// source length always).
fn copied_length(target: &str) -> Result<Option<i64>> {
    if !io::exists(target)? {
        return Ok(None);
    }
    Ok(Some(io::InputFile::open(target, None)?.len() as i64))
}

/// Writes `manifest` (read from `m`) to `staged` with its paths moved; adds the files it
/// lists that are to be copied to `plan`. Returns the new manifest's length.
#[allow(clippy::too_many_arguments)]
fn rewrite_manifest(
    end: &TableMetadata,
    m: &ManifestFile,
    manifest: Manifest,
    staged: &str,
    delta: &HashSet<i64>,
    sizes: &HashMap<String, i64>,
    paths: &PathRewrite,
    plan: &mut BTreeSet<(String, String)>,
    written: &mut Vec<String>,
) -> Result<i64> {
    let meta = &manifest.metadata;
    let schema_json = match &meta.schema_json {
        Some(s) => s.clone(),
        None => end.current_schema().to_json_string(),
    };
    let spec_fields = match &meta.partition_spec_json {
        Some(s) => s.clone(),
        None => end
            .spec_by_id(m.partition_spec_id)
            .map(|s| s.fields_to_json().to_string())
            .ok_or_else(|| invalid_data(format!("unknown partition spec {}", m.partition_spec_id)))?,
    };
    let partition_type: StructType = meta.partition_type.clone();
    let mut writer = ManifestWriter::with_partition_type(
        staged.to_string(),
        m.added_snapshot_id,
        m.content,
        &schema_json,
        m.partition_spec_id,
        &spec_fields,
        partition_type,
        end.format_version(),
    )?;
    for mut e in manifest.entries {
        // The snapshot that added the entry, inherited as readers do.
        let snapshot_id = e.snapshot_id.unwrap_or(m.added_snapshot_id);
        let copied = e.status.is_live() && delta.contains(&snapshot_id);
        let f = &mut e.data_file;
        let source = f.file_path.clone();
        match f.content {
            DataContentType::Data => {
                if !source.starts_with(&paths.source) {
                    return Err(validation(format!(
                        "Encountered data file {source} not under the source prefix {}",
                        paths.source
                    )));
                }
                f.file_path = paths.moved(&source)?;
                if copied {
                    plan.insert((source, f.file_path.clone()));
                }
            }
            DataContentType::PositionDeletes => {
                if !source.starts_with(&paths.source) {
                    return Err(validation(format!(
                        "Expected delete file {source} to start with prefix: {}",
                        paths.source
                    )));
                }
                f.file_path = paths.moved(&source)?;
                if let Some(size) = sizes.get(&source) {
                    f.file_size_in_bytes = *size;
                }
                move_path_bounds(f, paths)?;
                if let Some(referenced) = f.referenced_data_file.as_mut() {
                    if referenced.starts_with(&paths.source) {
                        *referenced = paths.moved(referenced)?;
                    }
                }
                if copied {
                    plan.insert((paths.staged(&source)?, f.file_path.clone()));
                }
            }
            DataContentType::EqualityDeletes => {
                if !source.starts_with(&paths.source) {
                    return Err(not_supported(format!(
                        "Expected delete file to be under the source prefix: {} but was {source}",
                        paths.source
                    )));
                }
                f.file_path = paths.moved(&source)?;
                if copied {
                    plan.insert((source, f.file_path.clone()));
                }
            }
        }
        writer.add_entry(&e)?;
    }
    let done = writer.close().map_err(|e| e.with_context("manifest", m.manifest_path.clone()))?;
    written.push(staged.to_string());
    Ok(done.manifest_length)
}

/// A position delete file's `file_path` bounds: moved when they name one data file (a
/// file-scoped delete), else dropped (Java's `ContentFileUtil.replacePathBounds`).
fn move_path_bounds(f: &mut crate::manifest::DataFile, paths: &PathRewrite) -> Result<()> {
    let id = DELETE_FILE_PATH_FIELD_ID;
    match (f.lower_bounds.get(&id), f.upper_bounds.get(&id)) {
        (Some(lower), Some(upper)) if lower == upper => {
            let path = String::from_utf8(lower.clone()).map_err(|_| {
                invalid_data("a position delete file's file_path bound is not UTF-8")
                    .with_context("file", f.file_path.clone())
            })?;
            let moved = paths.moved(&path)?.into_bytes();
            f.lower_bounds.insert(id, moved.clone());
            f.upper_bounds.insert(id, moved);
        }
        _ => {
            f.lower_bounds.remove(&id);
            f.upper_bounds.remove(&id);
        }
    }
    Ok(())
}

/// Rewrites a Parquet position delete file with its `file_path` values moved; returns the
/// new file's size (0, and no file, for a file without rows, as Java).
fn rewrite_position_deletes(
    end: &TableMetadata,
    path: &str,
    staged: &str,
    paths: &PathRewrite,
    written: &mut Vec<String>,
) -> Result<i64> {
    let schema = Arc::new(position_delete_schema()?);
    let reader =
        read_parquet(path, &schema, 65536).map_err(|e| e.with_file_role("position delete file", path))?;
    let props = ParquetWriterProps::from_table_properties(end.properties())?;
    // Java's MetricsConfig.forPositionDelete: full metrics for file_path and pos.
    let full = BTreeMap::from([("write.metadata.metrics.default".to_string(), "full".to_string())]);
    let metrics = Arc::new(MetricsConfig::from_table_properties(&full, &schema)?);
    let mut writer = ParquetFileWriter::try_new(staged, schema, &props, metrics)?;
    match write_moved(reader, path, paths, &mut writer) {
        Err(e) => {
            let _ = writer.abort();
            Err(e)
        }
        Ok(()) if writer.rows() == 0 => {
            writer.abort()?;
            Ok(0)
        }
        Ok(()) => {
            let size = writer.close(vec![], 0)?.file_size_in_bytes;
            written.push(staged.to_string());
            Ok(size)
        }
    }
}

/// The rows of `reader` (the position delete file at `path`) with their `file_path` moved,
/// written to `writer`.
fn write_moved(
    reader: impl Iterator<Item = Result<RecordBatch>>,
    path: &str,
    paths: &PathRewrite,
    writer: &mut ParquetFileWriter,
) -> Result<()> {
    for batch in reader {
        let batch = batch.map_err(|e| e.with_file_role("position delete file", path))?;
        let files = batch.column(0).as_string::<i32>();
        if files.null_count() > 0 {
            return Err(invalid_data("position delete file has a null file_path").with_context("file", path));
        }
        let mut moved = Vec::with_capacity(files.len());
        for old in files.iter().flatten() {
            if !old.starts_with(&paths.source) {
                return Err(not_supported(format!(
                    "Expected delete file to be under the source prefix: {} but was {old}",
                    paths.source
                )));
            }
            moved.push(paths.moved(old)?);
        }
        let pos = batch.column(1).as_primitive::<Int64Type>().clone();
        let columns: Vec<ArrayRef> = vec![Arc::new(StringArray::from(moved)), Arc::new(pos)];
        let out = RecordBatch::try_new(writer.arrow_schema().clone(), columns)
            .map_err(|e| invalid_data(format!("cannot build position delete rows: {e}")))?;
        writer.write(&out)?;
    }
    Ok(())
}

/// Rewrites a Puffin file of deletion vectors with each blob's `referenced-data-file` moved;
/// the blobs keep their bytes and places. Returns the new file's size.
fn rewrite_deletion_vectors(
    path: &str,
    staged: &str,
    paths: &PathRewrite,
    written: &mut Vec<String>,
) -> Result<i64> {
    let file = PuffinFile::open(path, None)?;
    let mut blobs = Vec::new();
    for meta in &file.metadata().blobs {
        if meta.compression_codec.is_some() {
            return Err(not_supported(format!(
                "a compressed '{}' blob at offset {}: icefloe rewrites uncompressed deletion vectors",
                meta.blob_type, meta.offset
            ))
            .with_context("file", path));
        }
        let mut properties = Vec::with_capacity(meta.properties.len());
        for (k, v) in &meta.properties {
            let v = if k == crate::puffin::file::REFERENCED_DATA_FILE && v.starts_with(&paths.source) {
                paths.moved(v)?
            } else {
                v.clone()
            };
            properties.push((k.clone(), v));
        }
        let data = file.read_blob(meta)?.to_vec();
        blobs.push((
            meta.offset,
            Blob {
                blob_type: meta.blob_type.clone(),
                fields: meta.fields.clone(),
                snapshot_id: meta.snapshot_id,
                sequence_number: meta.sequence_number,
                data,
                properties,
            },
        ));
    }
    let mut writer = PuffinWriter::create_default(staged)?;
    for (offset, blob) in blobs {
        let got = match writer.write(blob) {
            Ok(got) => got,
            Err(e) => {
                writer.abort();
                return Err(e);
            }
        };
        // Manifest entries point into the file by offset: the blobs must keep their places.
        if got.offset != offset {
            writer.abort();
            return Err(not_supported(format!(
                "a deletion vector blob at offset {offset} would move to {}; icefloe rewrites Puffin files whose \
                 blobs follow one another from the start",
                got.offset
            ))
            .with_context("file", path));
        }
    }
    let size = writer.finish()? as i64;
    written.push(staged.to_string());
    Ok(size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_move_as_java_moves_them() {
        assert_eq!(new_path("/a/b/data/x.parquet", "/a/b", "/c").unwrap(), "/c/data/x.parquet");
        assert_eq!(new_path("/a/b/data/x.parquet", "/a/b/", "/c/").unwrap(), "/c/data/x.parquet");
        assert_eq!(new_path("/a/b", "/a/b/", "/c").unwrap(), "/c");
        assert_eq!(staging_path("/a/b/metadata/v1.json", "/a/b", "/s/").unwrap(), "/s/metadata/v1.json");
        let err = new_path("/a/bc/x", "/a/b", "/c").unwrap_err();
        assert!(err.to_string().contains("Path /a/bc/x/ does not start with /a/b/"), "{err}");
    }
}
