//! A data writer that rolls to a new Parquet file when the current one reaches the target
//! size (bytes written + the encoder's estimate of the buffered row group). On any error it
//! deletes every file it created.

use std::sync::Arc;

use arrow_array::RecordBatch;

use super::metrics::MetricsConfig;
use super::parquet_writer::{ParquetFileWriter, ParquetWriterProps};
use crate::error::Result;
use crate::io::delete_file;
use crate::manifest::DataFile;
use crate::spec::{Schema, StructValue};

/// Rows handed to the Parquet writer at a time, so the size check runs often enough to roll
/// close to the target even for large batches.
const CHUNK_ROWS: usize = 4096;

/// Writes batches of one partition into files named by `next_path`, rolling at the target size.
pub struct RollingDataWriter<F: FnMut() -> String> {
    schema: Arc<Schema>,
    props: ParquetWriterProps,
    metrics: Arc<MetricsConfig>,
    next_path: F,
    partition: StructValue,
    spec_id: i32,
    current: Option<ParquetFileWriter>,
    done: Vec<DataFile>,
}

impl<F: FnMut() -> String> std::fmt::Debug for RollingDataWriter<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RollingDataWriter")
            .field("current", &self.current)
            .field("done", &self.done.len())
            .finish()
    }
}

impl<F: FnMut() -> String> RollingDataWriter<F> {
    /// `next_path` is called once per new file. Batches must have `schema_to_arrow(schema)`.
    pub fn new(
        schema: Arc<Schema>,
        props: ParquetWriterProps,
        metrics: Arc<MetricsConfig>,
        partition: StructValue,
        spec_id: i32,
        next_path: F,
    ) -> Self {
        RollingDataWriter {
            schema,
            props,
            metrics,
            next_path,
            partition,
            spec_id,
            current: None,
            done: Vec::new(),
        }
    }

    /// Writes a batch. On error every file this writer created is deleted and the error returned;
    /// the writer must then be dropped.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        match self.write_inner(batch) {
            Ok(()) => Ok(()),
            Err(e) => {
                self.cleanup();
                Err(e)
            }
        }
    }

    fn write_inner(&mut self, batch: &RecordBatch) -> Result<()> {
        let mut offset = 0;
        while offset < batch.num_rows() {
            let len = CHUNK_ROWS.min(batch.num_rows() - offset);
            let chunk = batch.slice(offset, len);
            offset += len;
            if self.current.is_none() {
                let path = (self.next_path)();
                self.current = Some(ParquetFileWriter::try_new(
                    &path,
                    self.schema.clone(),
                    &self.props,
                    self.metrics.clone(),
                )?);
            }
            if let Some(w) = self.current.as_mut() {
                w.write(&chunk)?;
                if w.current_size() >= self.props.target_file_size_bytes {
                    self.roll()?;
                }
            }
        }
        Ok(())
    }

    fn roll(&mut self) -> Result<()> {
        if let Some(w) = self.current.take() {
            // Never an empty file (T14): a writer exists only after rows were written to it.
            let path = w.path().to_string();
            match w.close(self.partition.clone(), self.spec_id) {
                Ok(df) => self.done.push(df),
                Err(e) => {
                    let _ = delete_file(&path);
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Closes the file in progress (if any), so the next rows start a new file.
    pub fn finish_file(&mut self) -> Result<()> {
        match self.roll() {
            Ok(()) => Ok(()),
            Err(e) => {
                self.cleanup();
                Err(e)
            }
        }
    }

    /// Files completed so far (not counting the one in progress).
    pub fn completed(&self) -> &[DataFile] {
        &self.done
    }

    /// Closes the current file and returns every file written. On error all are deleted.
    pub fn close(mut self) -> Result<Vec<DataFile>> {
        match self.roll() {
            Ok(()) => Ok(std::mem::take(&mut self.done)),
            Err(e) => {
                self.cleanup();
                Err(e)
            }
        }
    }

    /// Deletes every file this writer created (completed and in progress).
    pub fn abort(mut self) -> Result<()> {
        self.cleanup();
        Ok(())
    }

    fn cleanup(&mut self) {
        if let Some(w) = self.current.take() {
            let _ = w.abort();
        }
        for df in self.done.drain(..) {
            let _ = delete_file(&df.file_path);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use arrow_array::{Int64Array, StringArray};

    use super::*;
    use crate::arrow::schema_to_arrow;
    use crate::spec::{NestedField, PrimitiveType};

    fn setup(target: &str) -> (Arc<Schema>, ParquetWriterProps, Arc<MetricsConfig>) {
        let schema = Arc::new(
            Schema::new(
                0,
                vec![
                    NestedField::required(1, "id", PrimitiveType::Long.into()),
                    NestedField::optional(2, "s", PrimitiveType::String.into()),
                ],
                vec![],
            )
            .unwrap(),
        );
        let props = BTreeMap::from([
            ("write.target-file-size-bytes".to_string(), target.to_string()),
            ("write.parquet.compression-codec".to_string(), "uncompressed".to_string()),
        ]);
        let p = ParquetWriterProps::from_table_properties(&props).unwrap();
        let m = Arc::new(MetricsConfig::from_table_properties(&props, &schema).unwrap());
        (schema, p, m)
    }

    fn batch(schema: &Schema, from: i64, n: i64) -> RecordBatch {
        let ids: Vec<i64> = (from..from + n).collect();
        let s: Vec<String> = ids.iter().map(|i| format!("row-{i:08}-some-padding-text")).collect();
        RecordBatch::try_new(
            Arc::new(schema_to_arrow(schema).unwrap()),
            vec![Arc::new(Int64Array::from(ids)), Arc::new(StringArray::from(s))],
        )
        .unwrap()
    }

    #[test]
    fn rolls_at_target_size() {
        let dir = tempfile::tempdir().unwrap();
        let (schema, p, m) = setup("65536");
        let mut n = 0;
        let base = dir.path().to_path_buf();
        let mut w = RollingDataWriter::new(schema.clone(), p, m, vec![], 0, || {
            n += 1;
            base.join(format!("f-{n:05}.parquet")).to_string_lossy().into_owned()
        });
        for i in 0..10 {
            w.write(&batch(&schema, i * 10_000, 10_000)).unwrap();
        }
        let files = w.close().unwrap();
        assert!(files.len() > 3, "expected several files, got {}", files.len());
        assert_eq!(files.iter().map(|f| f.record_count).sum::<i64>(), 100_000);
        for f in &files {
            assert_eq!(f.file_size_in_bytes as u64, std::fs::metadata(&f.file_path).unwrap().len());
            assert!(f.record_count > 0);
            // rolled near the target: never more than one chunk past it
            assert!(f.file_size_in_bytes < 65536 + 200_000, "{}", f.file_size_in_bytes);
        }
        // ids are contiguous across files in order
        let mut expect_min = 0i64;
        for f in &files {
            let lo = i64::from_le_bytes(f.lower_bounds[&1].clone().try_into().unwrap());
            assert_eq!(lo, expect_min);
            expect_min += f.record_count;
        }
    }

    #[test]
    fn no_rows_no_file_and_errors_delete_everything() {
        let dir = tempfile::tempdir().unwrap();
        let (schema, p, m) = setup("65536");
        let base = dir.path().to_path_buf();
        let w = RollingDataWriter::new(schema.clone(), p.clone(), m.clone(), vec![], 0, || {
            base.join("never.parquet").to_string_lossy().into_owned()
        });
        assert!(w.close().unwrap().is_empty());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

        // The second file's name already exists: the write fails and the first file is removed.
        let taken = dir.path().join("f-00002.parquet");
        std::fs::write(&taken, b"x").unwrap();
        let mut n = 0;
        let base = dir.path().to_path_buf();
        let mut w = RollingDataWriter::new(schema.clone(), p, m, vec![], 0, || {
            n += 1;
            base.join(format!("f-{n:05}.parquet")).to_string_lossy().into_owned()
        });
        let mut err = None;
        for i in 0..10 {
            if let Err(e) = w.write(&batch(&schema, i * 10_000, 10_000)) {
                err = Some(e);
                break;
            }
        }
        assert!(err.is_some());
        assert!(!dir.path().join("f-00001.parquet").exists());
        assert!(taken.exists(), "a file we did not create is left alone");
    }
}
