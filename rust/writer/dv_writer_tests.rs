//! Deletion-vector writer: one Puffin file per writer and partition spec, blobs smallest first,
//! one `DataFile` per data file as Java's `BaseDVFileWriter` builds it, and the vectors read
//! back through the reader's loader.

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
    assert_eq!(w.location(1), expected_path);
    let out = w.close().unwrap();
    assert_eq!(out.len(), 2);
    // Smallest blob first: us's one position before eu's three.

    let size = std::fs::metadata(&expected_path).unwrap().len();
    let puffin = PuffinFile::open(&expected_path, None).unwrap();
    assert!(puffin.metadata().properties[CREATED_BY].starts_with("icefloe "));
    assert_eq!(puffin.metadata().blobs.len(), 2);
    for (dv, (data, positions)) in out.iter().zip([(&files[1], vec![4]), (&files[0], vec![0, 3, 9])]) {
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
    let location = w.location(1);
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

/// A v3 table with a second spec, `bucket(4, id)`.
fn two_specs(dir: &std::path::Path) -> Arc<TableMetadata> {
    let spec = crate::spec::PartitionSpec::builder(&crate::writer::test_tables::schema())
        .bucket("id", 4)
        .unwrap()
        .build()
        .unwrap();
    Arc::new(table(dir, 3).apply_updates(&[crate::spec::MetadataUpdate::AddSpec { spec }], 0).unwrap())
}

/// Data files of two specs: one Puffin file per spec, each file's blobs in ascending size
/// (ties in path order), and the `DataFile`s in blob order. A reader going through one spec's
/// delete manifest then reads each file's blobs front to back, never a smaller one after a
/// larger one (DuckDB 1.5.5's range cache misreads a blob otherwise: `close`).
#[test]
fn one_puffin_file_per_spec_with_the_smallest_blobs_first() {
    let dir = tempfile::tempdir().unwrap();
    let md = two_specs(dir.path());
    let mut files = data_files(&md);
    let mut other = files.clone();
    for f in other.iter_mut() {
        f.file_path = f.file_path.replace(".parquet", "-spec1.parquet");
        f.spec_id = 1;
    }
    files.append(&mut other);
    let mut w = DeletionVectorWriter::try_new(md, "wdv33333", 2).unwrap();
    // spec 0: eu 3 positions, us 1; spec 1: eu 1, us 2
    let wanted: [(usize, &[i64]); 4] = [(0, &[1, 5, 7]), (1, &[2]), (2, &[6]), (3, &[0, 3])];
    for (i, positions) in wanted {
        w.delete(&files[i], positions).unwrap();
    }
    let out = w.close().unwrap();
    let order: Vec<(String, i32)> =
        out.iter().map(|f| (f.file_path.rsplit('/').next().unwrap().to_string(), f.spec_id)).collect();
    assert_eq!(
        order,
        [
            ("00002-wdv33333-00001-deletes.puffin".to_string(), 0),
            ("00002-wdv33333-00001-deletes.puffin".to_string(), 0),
            ("00002-wdv33333-00002-deletes.puffin".to_string(), 1),
            ("00002-wdv33333-00002-deletes.puffin".to_string(), 1),
        ]
    );
    let referenced: Vec<&str> = out.iter().map(|f| f.referenced_data_file.as_deref().unwrap()).collect();
    let expected: Vec<&str> = [1, 0, 2, 3].iter().map(|i| files[*i].file_path.as_str()).collect();
    assert_eq!(referenced, expected, "smallest blob first within each file");
    for pair in out.windows(2).filter(|p| p[0].file_path == p[1].file_path) {
        let (a, b) = (&pair[0], &pair[1]);
        assert!(a.content_size_in_bytes <= b.content_size_in_bytes);
        assert_eq!(b.content_offset.unwrap(), a.content_offset.unwrap() + a.content_size_in_bytes.unwrap());
    }
    for (dv, (i, positions)) in
        out.iter().zip([(1, vec![2]), (0, vec![1, 5, 7]), (2, vec![6]), (3, vec![0, 3])])
    {
        let vector = crate::arrow::delete_cache::deletion_vector(dv).unwrap();
        assert_eq!(vector.positions(&files[i].file_path), positions);
        assert_eq!((dv.spec_id, &dv.partition), (files[i].spec_id, &files[i].partition));
    }
}

/// A failure on the second spec's file removes the first's too.
#[test]
fn a_failed_close_removes_every_puffin_file_it_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let md = two_specs(dir.path());
    let files = data_files(&md);
    let mut w = DeletionVectorWriter::try_new(md, "wdv44444", 0).unwrap();
    let (first, second) = (w.location(1), w.location(2));
    w.delete(&files[0], &[1]).unwrap();
    let mut late = files[1].clone();
    late.spec_id = 1;
    w.delete(&late, &[0]).unwrap();
    // A folder where the second spec's file goes: its creation fails after the first is written.
    std::fs::create_dir_all(&second).unwrap();
    let err = w.close().unwrap_err();
    assert!(err.to_string().contains("00002-deletes.puffin"), "{err}");
    assert!(!std::path::Path::new(&first).exists(), "the first spec's Puffin file is removed");
    assert!(std::path::Path::new(&second).is_dir(), "the folder is not ours to remove");
}
