//! Puffin writer tests: the files we write for Java's golden deletion vectors
//! (tests/data/golden/v3_dv_*.puffin) are Java's bytes, and our reader reads them back.

use std::path::PathBuf;

use serde_json::Value;

use super::*;
use crate::puffin::{load_deletion_vector, PuffinFile};

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden")
}

/// (name, puffin bytes, positions of its one DV) of every golden Puffin file.
fn goldens() -> Vec<(String, Vec<u8>, Vec<u64>)> {
    let mut out = Vec::new();
    for name in ["v3_dv_array", "v3_dv_run", "v3_dv_bitmap"] {
        let bytes = std::fs::read(golden_dir().join(format!("{name}.puffin"))).unwrap();
        let json: Value =
            serde_json::from_slice(&std::fs::read(golden_dir().join(format!("{name}.json"))).unwrap())
                .unwrap();
        let dvs = json["deletion_vectors"].as_array().unwrap();
        assert_eq!(dvs.len(), 1, "{name}");
        let positions = dvs[0]["positions"].as_array().unwrap().iter().map(|p| p.as_u64().unwrap()).collect();
        out.push((name.to_string(), bytes, positions));
    }
    out
}

fn java_created_by(meta: &crate::puffin::FileMetadata) -> String {
    meta.properties[CREATED_BY].clone()
}

/// `bytes` with the one occurrence of `from` replaced by `to`.
fn replace_once(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let at = bytes.windows(from.len()).position(|w| w == from).unwrap();
    assert!(bytes[at + 1..].windows(from.len()).all(|w| w != from));
    [&bytes[..at], to, &bytes[at + from.len()..]].concat()
}

#[test]
fn deletion_vector_files_are_javas_bytes_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    for (name, java, positions) in goldens() {
        let java_meta = PuffinFile::parse_footer(&java, &name).unwrap();
        let data_file = java_meta.blobs[0].referenced_data_file().unwrap().to_string();
        let dv = DeletionVector::from_positions(positions.iter().copied()).unwrap();

        // With Java's created-by, the very same bytes.
        let path = dir.path().join(format!("{name}-java.puffin")).to_string_lossy().into_owned();
        let mut w =
            PuffinWriter::create(&path, vec![(CREATED_BY.into(), java_created_by(&java_meta))]).unwrap();
        let blob = w.write(Blob::deletion_vector(&dv, &data_file).unwrap()).unwrap();
        let size = w.finish().unwrap();
        let ours = std::fs::read(&path).unwrap();
        assert_eq!(size, ours.len() as u64, "{name}");
        assert_eq!(blob, java_meta.blobs[0], "{name}");
        assert!(ours == java, "{name}: bytes differ from Java's\n{}", String::from_utf8_lossy(&ours));

        // With ours: only the created-by value (and so the payload size) differs.
        let path = dir.path().join(format!("{name}.puffin")).to_string_lossy().into_owned();
        let mut w = PuffinWriter::create_default(&path).unwrap();
        let blob = w.write(Blob::deletion_vector(&dv, &data_file).unwrap()).unwrap();
        w.finish().unwrap();
        let ours = std::fs::read(&path).unwrap();
        let expected = replace_once(&java, java_created_by(&java_meta).as_bytes(), created_by().as_bytes());
        let footer_len = |b: &[u8]| i32::from_le_bytes(b[b.len() - 12..b.len() - 8].try_into().unwrap());
        let diff = created_by().len() as i32 - java_created_by(&java_meta).len() as i32;
        assert_eq!(footer_len(&ours), footer_len(&java) + diff, "{name}");
        assert_eq!(ours[..ours.len() - 12], expected[..expected.len() - 12], "{name}");

        let opened = PuffinFile::open(&path, None).unwrap();
        assert_eq!(
            opened.metadata().properties[CREATED_BY],
            format!("icefloe {}", env!("CARGO_PKG_VERSION"))
        );
        assert_eq!(opened.metadata().blobs, vec![blob.clone()], "{name}");
        assert_eq!(opened.read_deletion_vector(&blob).unwrap(), dv, "{name}");
        let loaded = load_deletion_vector(&path, blob.offset, blob.length, Some(ours.len() as u64)).unwrap();
        assert_eq!(loaded.iter().collect::<Vec<_>>(), positions, "{name}");
    }
}

#[test]
fn several_blobs_follow_each_other_from_offset_4() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("multi.puffin").to_string_lossy().into_owned();
    let a = DeletionVector::from_positions([1, 2, 3]).unwrap();
    let b = DeletionVector::from_positions((0..5000).map(|p| p * 3)).unwrap();
    let mut w = PuffinWriter::create_default(&path).unwrap();
    let ma = w.write(Blob::deletion_vector(&a, "s3://b/t/data/a.parquet").unwrap()).unwrap();
    let mb = w.write(Blob::deletion_vector(&b, "s3://b/t/data/b.parquet").unwrap()).unwrap();
    w.finish().unwrap();
    assert_eq!(ma.offset, 4);
    assert_eq!(mb.offset, ma.offset + ma.length);
    let f = PuffinFile::open(&path, None).unwrap();
    assert_eq!(f.metadata().blobs, vec![ma.clone(), mb.clone()]);
    assert_eq!(f.read_deletion_vector(&ma).unwrap(), a);
    assert_eq!(f.read_deletion_vector(&mb).unwrap(), b);
    assert_eq!(mb.cardinality().unwrap(), Some(5000));
    assert_eq!(mb.referenced_data_file(), Some("s3://b/t/data/b.parquet"));
}

#[test]
fn abort_removes_the_file_and_bad_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gone.puffin").to_string_lossy().into_owned();
    let mut w = PuffinWriter::create_default(&path).unwrap();
    w.write(Blob::deletion_vector(&DeletionVector::from_positions([7]).unwrap(), "x").unwrap()).unwrap();
    w.abort();
    assert!(!std::path::Path::new(&path).exists());

    let props = vec![("k".to_string(), "1".to_string()), ("k".to_string(), "2".to_string())];
    let err = PuffinWriter::create(&path, props.clone()).unwrap_err();
    assert!(err.to_string().contains("'k' twice") && err.to_string().contains(&path), "{err}");
    assert!(!std::path::Path::new(&path).exists());

    let mut w = PuffinWriter::create_default(&path).unwrap();
    let blob = Blob { properties: props, ..Blob::deletion_vector(&DeletionVector::default(), "x").unwrap() };
    assert!(w.write(blob).is_err());
    w.abort();
    // An existing file is never overwritten.
    std::fs::write(&path, b"keep").unwrap();
    assert!(PuffinWriter::create_default(&path).is_err());
    assert_eq!(std::fs::read(&path).unwrap(), b"keep");
}

#[test]
fn writes_to_an_object_store_through_file_io() {
    let path = "memory://puffintest/t/data/00000-w1-00001-deletes.puffin";
    let dv = DeletionVector::from_positions([0, 5, 1 << 20]).unwrap();
    let mut w = PuffinWriter::create_default(path).unwrap();
    let blob = w.write(Blob::deletion_vector(&dv, "memory://puffintest/t/data/a.parquet").unwrap()).unwrap();
    let size = w.finish().unwrap();
    assert_eq!(crate::io::read_file(path).unwrap().len() as u64, size);
    let loaded = load_deletion_vector(path, blob.offset, blob.length, Some(size)).unwrap();
    assert_eq!(loaded, dv);

    let gone = "memory://puffintest/t/data/00000-w2-00001-deletes.puffin";
    let mut w = PuffinWriter::create_default(gone).unwrap();
    w.write(Blob::deletion_vector(&dv, "x").unwrap()).unwrap();
    w.abort();
    assert!(!crate::io::exists(gone).unwrap());
}
