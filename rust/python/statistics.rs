//! Bindings of table statistics: the distinct-value sketches of `compute_table_stats`
//! (`NdvSketches`, fed Arrow batches), writing their Puffin file, and reading the estimates of
//! a statistics file's sketches (Java's too: zstd blobs).

use arrow::pyarrow::PyArrowType;
use arrow_array::RecordBatch;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::errors::PyResultExt;
use crate::error::validation;
use crate::puffin::{
    compact_estimate, union_compact, Blob, NdvSketch, PuffinFile, PuffinWriter, APACHE_DATASKETCHES_THETA_V1,
    NDV,
};

/// One distinct-value sketch per named column of the batches given to `update`.
#[pyclass(module = "icefloe._native")]
pub struct NdvSketches {
    columns: Vec<(String, NdvSketch)>,
}

#[pymethods]
impl NdvSketches {
    /// `columns`: (Arrow column name, Iceberg type name) of each column to sketch.
    #[new]
    fn new(columns: Vec<(String, String)>) -> PyResult<Self> {
        let columns = columns
            .into_iter()
            .map(|(name, ty)| NdvSketch::new(&ty).map(|s| (name, s)))
            .collect::<crate::Result<Vec<_>>>()
            .py()?;
        Ok(NdvSketches { columns })
    }

    /// Adds the values of one batch (every sketched column must be in it).
    fn update(&mut self, py: Python<'_>, batch: PyArrowType<RecordBatch>) -> PyResult<()> {
        let batch = batch.0;
        let columns = &mut self.columns;
        py.detach(move || -> crate::Result<()> {
            for (name, sketch) in columns.iter_mut() {
                let column = batch.column_by_name(name).ok_or_else(|| {
                    validation(format!("expected a column '{name}' in the batch to sketch, found none"))
                })?;
                sketch.update(column.as_ref())?;
            }
            Ok(())
        })
        .py()
    }

    /// `[(compact sketch bytes, estimate)]`, in the order of the columns.
    fn finish<'py>(&self, py: Python<'py>) -> Vec<(Bound<'py, PyBytes>, f64)> {
        self.columns.iter().map(|(_, s)| (PyBytes::new(py, &s.to_compact_bytes()), s.estimate())).collect()
    }
}

/// Writes a statistics file of `apache-datasketches-theta-v1` blobs at `location` (which must
/// not exist): each blob `(field id, snapshot id, sequence number, sketch bytes, ndv)`,
/// stored uncompressed with its `ndv` property. Returns `(file size, footer size)`.
#[pyfunction]
fn write_statistics_file(
    py: Python<'_>,
    location: String,
    blobs: Vec<(i32, i64, i64, Vec<u8>, String)>,
) -> PyResult<(u64, u64)> {
    py.detach(move || -> crate::Result<(u64, u64)> {
        let mut writer = PuffinWriter::create_default(&location)?;
        for (field_id, snapshot_id, sequence_number, data, ndv) in blobs {
            let blob = Blob {
                blob_type: APACHE_DATASKETCHES_THETA_V1.to_string(),
                fields: vec![field_id],
                snapshot_id,
                sequence_number,
                data,
                properties: vec![(NDV.to_string(), ndv)],
            };
            if let Err(e) = writer.write(blob) {
                writer.abort();
                return Err(e);
            }
        }
        writer.finish_sizes()
    })
    .py()
}

/// The union of compact theta sketches of one column (`compute_table_stats` on Spark: one
/// sketch per task): `(compact sketch bytes, estimate)`; of none, the empty sketch.
#[pyfunction]
fn union_theta_sketches<'py>(
    py: Python<'py>,
    sketches: Vec<Vec<u8>>,
) -> PyResult<(Bound<'py, PyBytes>, f64)> {
    let (bytes, estimate) = py.detach(move || union_compact(sketches.iter().map(Vec::as_slice))).py()?;
    Ok((PyBytes::new(py, &bytes), estimate))
}

/// One theta sketch of a statistics file: its fields, its bytes, its estimate.
type Sketch<B> = (Vec<i32>, B, f64);

/// The theta sketches of a statistics file: `[(fields, sketch bytes, estimate)]`, read from
/// the blobs themselves (decompressed: Java's are zstd).
#[pyfunction]
#[pyo3(signature = (location, file_size=None))]
fn statistics_file_sketches<'py>(
    py: Python<'py>,
    location: String,
    file_size: Option<u64>,
) -> PyResult<Vec<Sketch<Bound<'py, PyBytes>>>> {
    let found = py
        .detach(move || -> crate::Result<Vec<Sketch<Vec<u8>>>> {
            let file = PuffinFile::open(&location, file_size)?;
            let mut out = Vec::new();
            for blob in &file.metadata().blobs {
                if blob.blob_type == APACHE_DATASKETCHES_THETA_V1 {
                    let bytes = file.read_blob(blob)?;
                    let estimate =
                        compact_estimate(&bytes).map_err(|e| e.with_context("file", location.clone()))?;
                    out.push((blob.fields.clone(), bytes.to_vec(), estimate));
                }
            }
            Ok(out)
        })
        .py()?;
    Ok(found.into_iter().map(|(f, b, e)| (f, PyBytes::new(py, &b), e)).collect())
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NdvSketches>()?;
    m.add_function(wrap_pyfunction!(write_statistics_file, m)?)?;
    m.add_function(wrap_pyfunction!(union_theta_sketches, m)?)?;
    m.add_function(wrap_pyfunction!(statistics_file_sketches, m)?)?;
    Ok(())
}
