//! Deletion-vector files (format v3; Iceberg Java's `BaseDVFileWriter`): the positions deleted
//! from each data file as one `deletion-vector-v1` blob, the blobs of one writer in one Puffin
//! file per partition spec (see [`DeletionVectorWriter::close`] for why), and one
//! position-delete `DataFile` per blob pointing into it.
//!
//! The Puffin files go to the table's data location with no partition folder (one may hold
//! the vectors of data files of several partitions; Java's `OutputFileFactory.newOutputFile()`
//! places it the same way), named `<task_id:05>-<write_id>-<n:05>-deletes.puffin` so a failed
//! write's abort, which deletes every file carrying the write id, finds them.
//!
//! Positions are collected first (8 bytes a deleted row) and encoded on `close`. Merging a data
//! file's earlier deletes into its new vector is the caller's (`delete_task`), as with
//! [`super::PositionDeleteWriter`]: give them to [`DeletionVectorWriter::delete`] as well.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::deleted_positions::{DeletedPositions, Target};
use crate::error::{invalid_data, validation, Result};
use crate::manifest::{DataContentType, DataFile, FileFormat};
use crate::puffin::{Blob, BlobMetadata, DeletionVector, PuffinWriter};
use crate::spec::{LocationProvider, TableMetadata};

/// Collects deleted row positions per data file and writes them as deletion vectors.
#[derive(Debug)]
pub struct DeletionVectorWriter {
    table: Arc<TableMetadata>,
    locations: LocationProvider,
    write_id: String,
    task_id: u32,
    targets: DeletedPositions,
}

impl DeletionVectorWriter {
    /// A writer for `table`, which must be format v3 or later (v2 readers do not read
    /// deletion vectors).
    pub fn try_new(table: Arc<TableMetadata>, write_id: &str, task_id: u32) -> Result<Self> {
        if table.format_version() < 3 {
            return Err(validation(format!(
                "deletion vectors expected a table of format version 3 or later, found version {}",
                table.format_version()
            ))
            .with_context("table", table.location().to_string()));
        }
        let locations = LocationProvider::new(table.location(), table.properties());
        Ok(DeletionVectorWriter {
            table,
            locations,
            write_id: write_id.to_string(),
            task_id,
            targets: DeletedPositions::default(),
        })
    }

    /// Records deleted positions of the data file `data_file` (its spec id and partition go
    /// to the vector's `DataFile`). Positions may come in any order and repeat.
    pub fn delete(&mut self, data_file: &DataFile, positions: &[i64]) -> Result<()> {
        self.targets.record(data_file, positions)
    }

    /// Rows recorded so far (before removing duplicates).
    pub fn pending_rows(&self) -> usize {
        self.targets.pending_rows()
    }

    /// The location of the `n`th Puffin file `close` writes (from 1; one per partition spec
    /// among the recorded data files, in spec id order).
    pub fn location(&self, n: usize) -> String {
        let name = format!("{:05}-{}-{n:05}-deletes.puffin", self.task_id, self.write_id);
        self.locations.new_data_location(None, &name)
    }

    /// Writes the vectors, one per data file, and returns one `DataFile` per vector, grouped by
    /// Puffin file and in blob order within each; nothing when no positions were recorded.
    /// On error every Puffin file written is removed.
    ///
    /// One Puffin file per partition spec, its blobs smallest first (ties in path order). Any
    /// layout is valid Iceberg; this one is chosen for readers that read a file's blobs
    /// through a range cache in manifest order. DuckDB 1.5.5's `iceberg` extension (the newest
    /// on PyPI) widens a blob's read up to the next range it has cached when the gap is no
    /// longer than the blob, then decodes a blob lying inside that range from the range's
    /// start, silently taking another data file's vector (duckdb-iceberg PR #1182, fixed
    /// after 1.5.5; tests/interop/test_dv_layout.py). A table's delete manifests are one per
    /// spec, so the blobs of one Puffin file are read in file order only when they share a
    /// spec; and in file order a read never widens over a blob not yet read when no blob is
    /// smaller than the one before it (the rest of the file is then longer than the blob).
    pub fn close(self) -> Result<Vec<DataFile>> {
        if self.targets.is_empty() {
            return Ok(vec![]);
        }
        let mut by_spec: BTreeMap<i32, Vec<(&str, &Target)>> = BTreeMap::new();
        for (path, t) in self.targets.iter() {
            if self.table.spec_by_id(t.spec_id).is_none() {
                return Err(validation(format!("data file has unknown partition spec id {}", t.spec_id))
                    .with_context("data file", path.clone())
                    .with_context("table", self.table.location().to_string()));
            }
            by_spec.entry(t.spec_id).or_default().push((path.as_str(), t));
        }
        let mut written: Vec<String> = Vec::with_capacity(by_spec.len());
        let mut files = Vec::with_capacity(self.targets.len());
        for (n, targets) in by_spec.into_values().enumerate() {
            let location = self.location(n + 1);
            match write_puffin(&location, targets) {
                Ok(mut f) => {
                    files.append(&mut f);
                    written.push(location);
                }
                Err(e) => {
                    for location in &written {
                        let _ = crate::io::delete_file(location);
                    }
                    return Err(e);
                }
            }
        }
        Ok(files)
    }
}

/// Writes one Puffin file at `location` of the vectors of `targets` (data files of one spec),
/// smallest blob first, and returns their `DataFile`s in blob order. On error the file is
/// removed.
fn write_puffin(location: &str, targets: Vec<(&str, &Target)>) -> Result<Vec<DataFile>> {
    let mut blobs = Vec::with_capacity(targets.len());
    for (path, t) in targets {
        // `delete` refused negative positions; one would turn into a value above
        // `MAX_POSITION` here, which `from_positions` refuses too.
        let blob = DeletionVector::from_positions(t.positions.iter().map(|p| *p as u64))
            .and_then(|dv| Ok((Blob::deletion_vector(&dv, path)?, dv.cardinality())))
            .map_err(|e| e.with_context("data file", path.to_string()))?;
        blobs.push((path, t, blob));
    }
    // Stable: equal sizes keep the targets' path order.
    blobs.sort_by_key(|(_, _, (blob, _))| blob.data.len());
    let mut writer = PuffinWriter::create_default(location)?;
    let mut metas = Vec::with_capacity(blobs.len());
    for (path, t, (blob, cardinality)) in blobs {
        match writer.write(blob) {
            Ok(meta) => metas.push((path, t, meta, cardinality)),
            Err(e) => {
                writer.abort();
                return Err(e.with_context("data file", path.to_string()));
            }
        }
    }
    let size = writer.finish()?;
    let files = metas
        .into_iter()
        .map(|(path, t, blob, cardinality)| data_file(location, size, path, t, &blob, cardinality))
        .collect::<Result<Vec<_>>>();
    if files.is_err() {
        let _ = crate::io::delete_file(location);
    }
    files
}

/// The `DataFile` of one vector, as Java's `BaseDVFileWriter.createDV` builds it: position
/// deletes in Puffin format, the data file's spec and partition, the Puffin file's path and
/// size, the blob's offset and length, record count = cardinality, no column metrics.
fn data_file(
    location: &str,
    size: u64,
    referenced: &str,
    t: &Target,
    blob: &BlobMetadata,
    cardinality: u64,
) -> Result<DataFile> {
    let to_i64 = |what: &str, v: u64| {
        i64::try_from(v).map_err(|_| {
            invalid_data(format!("deletion vector {what} expected at most {}, found {v}", i64::MAX))
                .with_context("file", location)
        })
    };
    let mut f = DataFile::new_data(location, to_i64("cardinality", cardinality)?, to_i64("file size", size)?);
    f.content = DataContentType::PositionDeletes;
    f.file_format = FileFormat::Puffin;
    f.partition = t.partition.clone();
    f.spec_id = t.spec_id;
    f.referenced_data_file = Some(referenced.to_string());
    f.content_offset = Some(to_i64("offset", blob.offset)?);
    f.content_size_in_bytes = Some(to_i64("length", blob.length)?);
    Ok(f)
}

#[cfg(test)]
#[path = "dv_writer_tests.rs"]
mod tests;
