//! Deletion-vector files (format v3; Iceberg Java's `BaseDVFileWriter`): the positions deleted
//! from each data file as one `deletion-vector-v1` blob, all blobs of one writer in one Puffin
//! file, and one position-delete `DataFile` per blob pointing into it.
//!
//! The Puffin file goes to the table's data location with no partition folder (it may hold
//! the vectors of data files of several partitions; Java's `OutputFileFactory.newOutputFile()`
//! places it the same way), named `<task_id:05>-<write_id>-00001-deletes.puffin` so a failed
//! write's abort, which deletes every file carrying the write id, finds it.
//!
//! Positions are collected first (8 bytes a deleted row) and encoded on `close`. Merging a data
//! file's earlier deletes into its new vector is the caller's (`delete_task`), as with
//! [`super::PositionDeleteWriter`]: give them to [`DeletionVectorWriter::delete`] as well.

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

    /// The location of the Puffin file `close` writes.
    pub fn location(&self) -> String {
        let name = format!("{:05}-{}-00001-deletes.puffin", self.task_id, self.write_id);
        self.locations.new_data_location(None, &name)
    }

    /// Writes one Puffin file holding a vector per data file (in path order) and returns one
    /// `DataFile` per vector; nothing when no positions were recorded. On error the Puffin
    /// file is removed.
    pub fn close(self) -> Result<Vec<DataFile>> {
        if self.targets.is_empty() {
            return Ok(vec![]);
        }
        for (path, t) in self.targets.iter() {
            if self.table.spec_by_id(t.spec_id).is_none() {
                return Err(validation(format!("data file has unknown partition spec id {}", t.spec_id))
                    .with_context("data file", path.clone())
                    .with_context("table", self.table.location().to_string()));
            }
        }
        let location = self.location();
        let mut writer = PuffinWriter::create_default(&location)?;
        let mut blobs: Vec<(&str, &Target, BlobMetadata, u64)> = Vec::with_capacity(self.targets.len());
        for (path, t) in self.targets.iter() {
            // `delete` refused negative positions; one would turn into a value above
            // `MAX_POSITION` here, which `from_positions` refuses too.
            let dv = DeletionVector::from_positions(t.positions.iter().map(|p| *p as u64));
            let written = dv.and_then(|dv| {
                let meta = writer.write(Blob::deletion_vector(&dv, path)?)?;
                Ok((meta, dv.cardinality()))
            });
            match written {
                Ok((meta, cardinality)) => blobs.push((path.as_str(), t, meta, cardinality)),
                Err(e) => {
                    writer.abort();
                    return Err(e.with_context("data file", path.clone()));
                }
            }
        }
        let size = writer.finish()?;
        let files = blobs
            .into_iter()
            .map(|(path, t, blob, cardinality)| data_file(&location, size, path, t, &blob, cardinality))
            .collect::<Result<Vec<_>>>();
        if files.is_err() {
            let _ = crate::io::delete_file(&location);
        }
        files
    }
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
