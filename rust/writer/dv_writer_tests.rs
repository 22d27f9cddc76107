//! Deletion-vector writer: one Puffin file per writer, one `DataFile` per data file as Java's
//! `BaseDVFileWriter` builds it, and the vectors read back through the reader's loader.

use std::sync::Arc;

use super::*;
use crate::puffin::{load_deletion_vector, PuffinFile, CREATED_BY};
use crate::writer::test_tables::batch;
use crate::writer::write_data_files;

fn table(dir: &std::path::Path, version: i32) -> TableMetadata {
    crate::writer::test_tables::table(dir, &[], version)
}

/// Two uncommitted data files of a v3 table: eu (10 rows), us (5 rows).
fn data_files(md: &TableMetadata) -> Vec<DataFile> {
    let mut files = write_data_files(
        md,
        vec![Ok(batch(0..10, "eu")), Ok(batch(10..15, "us"))].into_iter(),
        "w0000000",
        0,
    )
    .unwrap();
    files.sort_by(|a, b| a.file_path.cmp(&b.file_path));
    files
}

#[test]
fn one_puffin_file_holds_a_vector_per_data_file() {
    let dir = tempfile::tempdir().unwrap();
    let md = Arc::new(table(dir.path(), 3));
    let files = data_files(&md);
    let mut w = DeletionVectorWriter::try_new(md, "wdv11111", 7).unwrap();
    w.delete(&files[0], &[9, 3, 3]).unwrap();
    w.delete(&files[1], &[4]).unwrap();
    w.delete(&files[0], &[0]).unwrap();
    w.delete(&files[1], &[]).unwrap();
    assert_eq!(w.pending_rows(), 5);
    let expected_path = format!("{}/data/00007-wdv11111-00001-deletes.puffin", dir.path().display());
    assert_eq!(w.location(), expected_path);
    let out = w.close().unwrap();
    assert_eq!(out.len(), 2);

    let size = std::fs::metadata(&expected_path).unwrap().len();
    let puffin = PuffinFile::open(&expected_path, None).unwrap();
    assert!(puffin.metadata().properties[CREATED_BY].starts_with("icefloe "));
    assert_eq!(puffin.metadata().blobs.len(), 2);
    for (dv, (data, positions)) in out.iter().zip([(&files[0], vec![0, 3, 9]), (&files[1], vec![4])]) {
        assert_eq!(dv.content, DataContentType::PositionDeletes);
        assert_eq!(dv.file_format, FileFormat::Puffin);
        assert_eq!(dv.file_path, expected_path);
        assert_eq!(dv.file_size_in_bytes, size as i64);
        assert_eq!(dv.referenced_data_file.as_deref(), Some(data.file_path.as_str()));
        assert_eq!((&dv.partition, dv.spec_id), (&data.partition, data.spec_id));
        assert_eq!(dv.record_count, positions.len() as i64, "duplicates dropped");
        assert!(dv.lower_bounds.is_empty() && dv.value_counts.is_empty() && dv.column_sizes.is_empty());
        assert_eq!(
            (dv.sort_order_id, dv.equality_ids.as_ref(), dv.split_offsets.as_ref()),
            (None, None, None)
        );
        let (offset, length) = (dv.content_offset.unwrap() as u64, dv.content_size_in_bytes.unwrap() as u64);
        let vector = load_deletion_vector(&dv.file_path, offset, length, Some(size)).unwrap();
        assert_eq!(vector.iter().collect::<Vec<_>>(), positions);
        // The reader's loader agrees (cardinality checked against record_count).
        let cached = crate::arrow::delete_cache::deletion_vector(dv).unwrap();
        assert_eq!(
            cached.positions(&data.file_path),
            positions.iter().map(|p| *p as i64).collect::<Vec<_>>()
        );
    }
    assert_eq!(out[0].content_offset, Some(4));
    assert_eq!(out[1].content_offset, Some(4 + out[0].content_size_in_bytes.unwrap()));
}

#[test]
fn nothing_recorded_writes_nothing_and_bad_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let v2 = Arc::new(table(dir.path(), 2));
    let err = DeletionVectorWriter::try_new(v2, "wdv22222", 0).unwrap_err();
    assert!(err.to_string().contains("format version 3") && err.to_string().contains("found version 2"));

    let md = Arc::new(table(dir.path(), 3));
    let files = data_files(&md);
    let w = DeletionVectorWriter::try_new(md.clone(), "wdv22222", 0).unwrap();
    let location = w.location();
    assert!(w.close().unwrap().is_empty());
    assert!(!std::path::Path::new(&location).exists());

    let mut w = DeletionVectorWriter::try_new(md.clone(), "wdv22222", 0).unwrap();
    let err = w.delete(&files[0], &[1, -4]).unwrap_err();
    assert!(err.to_string().contains("-4") && err.to_string().contains(&files[0].file_path), "{err}");
    let mut moved = files[0].clone();
    moved.partition = files[1].partition.clone();
    w.delete(&files[0], &[1]).unwrap();
    assert!(w.delete(&moved, &[2]).is_err());

    // An unknown spec id fails before any file is written.
    let mut bad = files[1].clone();
    bad.spec_id = 42;
    w.delete(&bad, &[0]).unwrap();
    let err = w.close().unwrap_err();
    assert!(err.to_string().contains("spec id 42") && err.to_string().contains(&bad.file_path), "{err}");
    assert!(!std::path::Path::new(&location).exists());
}
