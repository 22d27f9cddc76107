//! Puffin and deletion-vector tests against the files Iceberg Java 1.10 wrote
//! (tests/data/golden/v3_dv_*.puffin, made by tests/data/golden_puffin.py; each `.json` twin
//! says what Java read back), plus corrupt inputs that must fail with a clear error.

use std::path::PathBuf;

use serde_json::Value;

use super::deletion_vector::decode;
use super::*;
use crate::error::{Error, ErrorKind};

const LOC: &str = "s3://bucket/db/t/data/x-deletes.puffin";

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden")
}

/// (name, puffin bytes, JSON twin) of every golden Puffin file.
fn goldens() -> Vec<(String, Vec<u8>, Value)> {
    let mut names: Vec<String> = std::fs::read_dir(golden_dir())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("v3_dv_") && n.ends_with(".puffin"))
        .collect();
    names.sort();
    assert!(names.len() >= 3, "golden Puffin files missing: {names:?}");
    names
        .into_iter()
        .map(|n| {
            let path = golden_dir().join(&n);
            let json = std::fs::read(path.with_extension("json")).unwrap();
            (n, std::fs::read(&path).unwrap(), serde_json::from_slice(&json).unwrap())
        })
        .collect()
}

fn golden_path(name: &str) -> String {
    golden_dir().join(name).to_string_lossy().into_owned()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap()
}

/// The blob bytes a manifest entry points at.
fn blob<'a>(file: &'a [u8], dv: &Value) -> &'a [u8] {
    let at = u(&dv["content_offset"]) as usize;
    &file[at..at + u(&dv["content_size_in_bytes"]) as usize]
}

fn positions(dv: &Value) -> Vec<i64> {
    dv["positions"].as_array().unwrap().iter().map(|p| p.as_i64().unwrap()).collect()
}

/// Java paths are absolute under a temp warehouse; the JSON writes it as `<warehouse>`.
fn assert_path(actual: &str, expected: &Value) {
    let suffix = expected.as_str().unwrap().split("<warehouse>").last().unwrap();
    assert!(actual.ends_with(suffix), "{actual} does not end with {suffix}");
}

/// A well-framed blob (right length, magic and CRC) around `vector`.
fn frame(vector: &[u8]) -> Vec<u8> {
    let mut data = DV_MAGIC.to_vec();
    data.extend_from_slice(vector);
    let mut out = (data.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(&data);
    out.extend_from_slice(&crc32fast::hash(&data).to_be_bytes());
    out
}

/// The error of `r`, checked to be of `kind` and to name `location` and each of `parts`.
fn expect_err<T: std::fmt::Debug>(
    r: crate::error::Result<T>,
    kind: ErrorKind,
    location: &str,
    parts: &[&str],
) -> Error {
    let e = r.expect_err("expected an error");
    let text = e.to_string();
    assert_eq!(e.kind(), kind, "{text}");
    assert!(text.contains(location), "error does not name the file: {text}");
    for p in parts {
        assert!(text.contains(p), "error lacks '{p}': {text}");
    }
    e
}

#[test]
fn golden_deletion_vectors_decode_as_java_reads_them() {
    for (name, file, json) in goldens() {
        for dv_json in json["deletion_vectors"].as_array().unwrap() {
            let bytes = blob(&file, dv_json);
            let dv = read_deletion_vector(bytes, LOC).unwrap_or_else(|e| panic!("{name}: {e}"));
            let expected = positions(dv_json);
            assert_eq!(dv.cardinality(), u(&dv_json["record_count"]), "{name}");
            assert_eq!(dv.cardinality(), expected.len() as u64, "{name}");
            assert_eq!(dv.to_sorted_positions(LOC).unwrap(), expected, "{name}");
            assert!(dv.iter().map(|p| p as i64).eq(expected.iter().copied()), "{name}");
            for p in &expected {
                assert!(dv.contains(*p as u64), "{name}: {p}");
            }
            let absent = (0..70_000u64).filter(|p| !dv.contains(*p)).count() as u64;
            assert_eq!(absent, 70_000 - dv.cardinality(), "{name}");
            assert!(!dv.contains(1 << 40) && !dv.contains(u64::MAX), "{name}");
            dv.check_cardinality(u(&dv_json["record_count"]), LOC).unwrap();
            // Decoded and re-serialized: the same bytes.
            assert_eq!(dv.serialize().unwrap(), bytes, "{name}: round trip");
            // Built from Java's positions: Java's bytes too (same container choices and runs).
            let built = DeletionVector::from_positions(expected.iter().map(|p| *p as u64)).unwrap();
            assert_eq!(built, dv, "{name}");
            assert_eq!(built.serialize().unwrap(), bytes, "{name}: from positions");
        }
    }
}

#[test]
fn golden_files_cover_array_run_and_bitmap_containers() {
    // The 32-bit bitmap starts after length, magic, count and key (4 + 4 + 8 + 4 bytes).
    let cookie = |name: &str| {
        let (_, file, json) = goldens().into_iter().find(|(n, ..)| n == name).unwrap();
        let b = blob(&file, &json["deletion_vectors"][0]).to_vec();
        u16::from_le_bytes([b[20], b[21]])
    };
    assert_eq!(cookie("v3_dv_array.puffin"), 12346, "no run containers");
    assert_eq!(cookie("v3_dv_run.puffin"), 12347, "run containers");
    let (_, file, json) = goldens().into_iter().find(|(n, ..)| n == "v3_dv_bitmap.puffin").unwrap();
    // A bitmap container is 8 KiB: the blob is larger than that.
    assert!(blob(&file, &json["deletion_vectors"][0]).len() > 8192);
}

#[test]
fn golden_footers_read_as_java_reads_them() {
    for (name, file, json) in goldens() {
        let from_bytes = PuffinFile::parse_footer(&file, LOC).unwrap_or_else(|e| panic!("{name}: {e}"));
        let opened = PuffinFile::open(&golden_path(&name), None).unwrap();
        assert_eq!(opened.metadata(), &from_bytes, "{name}");
        let footer = &json["footer"];
        assert_eq!(
            from_bytes.properties.get(CREATED_BY).map(String::as_str),
            footer["properties"]["created-by"].as_str(),
            "{name}"
        );
        let blobs = footer["blobs"].as_array().unwrap();
        assert_eq!(from_bytes.blobs.len(), blobs.len(), "{name}");
        for (b, j) in from_bytes.blobs.iter().zip(blobs) {
            assert_eq!(b.blob_type, DELETION_VECTOR_V1, "{name}");
            assert_eq!(b.blob_type, j["type"].as_str().unwrap(), "{name}");
            let fields: Vec<i32> =
                j["fields"].as_array().unwrap().iter().map(|f| f.as_i64().unwrap() as i32).collect();
            assert_eq!(b.fields, fields, "{name}");
            assert_eq!(b.snapshot_id, j["snapshot_id"].as_i64().unwrap(), "{name}");
            assert_eq!(b.sequence_number, j["sequence_number"].as_i64().unwrap(), "{name}");
            assert_eq!((b.offset, b.length), (u(&j["offset"]), u(&j["length"])), "{name}");
            assert_eq!(b.compression_codec.as_deref(), j["compression_codec"].as_str(), "{name}");
            assert_path(b.referenced_data_file().unwrap(), &j["properties"][REFERENCED_DATA_FILE]);
            let card: u64 = j["properties"][CARDINALITY].as_str().unwrap().parse().unwrap();
            assert_eq!(b.cardinality().unwrap(), Some(card), "{name}");
            // The footer and the manifest entry (delete_files) agree.
            let dv = &json["deletion_vectors"][0];
            assert_eq!((b.offset, b.length), (u(&dv["content_offset"]), u(&dv["content_size_in_bytes"])));
            assert_path(b.referenced_data_file().unwrap(), &dv["referenced_data_file"]);
            // Read through the footer and through the manifest entry's offsets: same vector.
            let via_footer = opened.read_deletion_vector(b).unwrap();
            assert_eq!(via_footer.cardinality(), card, "{name}");
            let via_entry =
                load_deletion_vector(&golden_path(&name), b.offset, b.length, Some(file.len() as u64))
                    .unwrap();
            assert_eq!(via_entry, via_footer, "{name}");
            assert_eq!(opened.read_blob(b).unwrap().as_ref(), blob(&file, dv), "{name}");
        }
    }
}

#[test]
fn positions_round_trip_across_keys_and_containers() {
    let empty = DeletionVector::from_positions([]).unwrap();
    assert!(empty.is_empty() && !empty.contains(0));
    let bytes = empty.serialize().unwrap();
    // Java writes an empty vector as a zero count: length 12 = magic + 8.
    assert_eq!(&bytes[..12], &[0, 0, 0, 12, 0xD1, 0xD3, 0x39, 0x64, 0, 0, 0, 0]);
    assert_eq!(read_deletion_vector(&bytes, LOC).unwrap(), empty);

    let mut pos: Vec<u64> = vec![0, 1, 65_535, 65_536, (1 << 32) - 1, 1 << 32, (5 << 32) + 7, MAX];
    pos.extend(1_000..3_000);
    pos.extend((100_000..140_000).step_by(3));
    const MAX: u64 = deletion_vector::MAX_POSITION;
    let dv = DeletionVector::from_positions(pos.iter().rev().copied().chain([1, 1, 0])).unwrap();
    pos.sort_unstable();
    assert_eq!(dv.cardinality(), pos.len() as u64);
    assert!(dv.iter().eq(pos.iter().copied()));
    assert!(dv.contains(MAX) && dv.contains(1 << 32) && !dv.contains(2 << 32) && !dv.contains(MAX + 1));
    let bytes = dv.serialize().unwrap();
    let back = read_deletion_vector(&bytes, LOC).unwrap();
    assert_eq!(back, dv);
    assert_eq!(back.serialize().unwrap(), bytes);

    let e = DeletionVector::from_positions([MAX + 1]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Validation);
}

#[test]
fn java_style_empty_bitmaps_for_lower_keys_are_kept() {
    // Java writes one (possibly empty) bitmap per key below the largest: key 0 empty here.
    let mut one = Vec::new();
    roaring::RoaringBitmap::from_iter([9u32]).serialize_into(&mut one).unwrap();
    let mut empty = Vec::new();
    roaring::RoaringBitmap::new().serialize_into(&mut empty).unwrap();
    let mut vector = 2u64.to_le_bytes().to_vec();
    vector.extend(0u32.to_le_bytes().iter().chain(&empty));
    vector.extend(1u32.to_le_bytes().iter().chain(&one));
    let bytes = frame(&vector);
    let dv = read_deletion_vector(&bytes, LOC).unwrap();
    assert_eq!(dv.to_sorted_positions(LOC).unwrap(), vec![(1i64 << 32) + 9]);
    assert_eq!(dv.serialize().unwrap(), bytes);
}

#[test]
fn corrupt_blobs_fail_naming_the_file() {
    let (_, file, json) = goldens().into_iter().find(|(n, ..)| n == "v3_dv_run.puffin").unwrap();
    let good = blob(&file, &json["deletion_vectors"][0]).to_vec();
    let bad = ErrorKind::InvalidData;

    let mut crc = good.clone();
    *crc.last_mut().unwrap() ^= 0x01;
    expect_err(read_deletion_vector(&crc, LOC), bad, LOC, &["CRC-32 expected 0x", "found 0x"]);
    let mut flipped = good.clone();
    flipped[30] ^= 0x40;
    expect_err(read_deletion_vector(&flipped, LOC), bad, LOC, &["CRC-32"]);
    // Offsets appear when known.
    expect_err(decode(&crc, LOC, Some(4)), bad, LOC, &["deletion vector at offset 4: CRC-32"]);

    let mut length = good.clone();
    length[3] = length[3].wrapping_add(1);
    expect_err(read_deletion_vector(&length, LOC), bad, LOC, &["length field expected 51", "found 52"]);

    let mut magic = good.clone();
    magic[4] = 0xD2;
    expect_err(read_deletion_vector(&magic, LOC), bad, LOC, &["magic expected d1d33964, found d2d33964"]);

    for cut in [0, 1, 5, 11, 12, 20, good.len() - 1] {
        expect_err(read_deletion_vector(&good[..cut], LOC), bad, LOC, &[]);
    }
    let mut longer = good.clone();
    longer.push(0);
    expect_err(read_deletion_vector(&longer, LOC), bad, LOC, &["length field"]);

    let dv = read_deletion_vector(&good, LOC).unwrap();
    expect_err(dv.check_cardinality(56, LOC), bad, LOC, &["expected 56", "found 55"]);
}

#[test]
fn malformed_vectors_behind_a_valid_crc_fail() {
    let mut one = Vec::new();
    roaring::RoaringBitmap::from_iter([1u32, 2, 3]).serialize_into(&mut one).unwrap();
    let with = |count: u64, keys: &[u32], tail: &[u8]| {
        let mut v = count.to_le_bytes().to_vec();
        for k in keys {
            v.extend(k.to_le_bytes().iter().chain(&one));
        }
        v.extend_from_slice(tail);
        frame(&v)
    };
    let bad = ErrorKind::InvalidData;
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (with(u64::MAX, &[0], &[]), "declares 18446744073709551615 bitmaps"),
        (with(3, &[0, 1], &[]), "bitmap 2 of 3: key expected 4 bytes, found 0"),
        (with(2, &[1, 1], &[]), "ascending order"),
        (with(2, &[2, 1], &[]), "ascending order"),
        (with(1, &[0x8000_0000], &[]), "key expected at most 0x7fffffff"),
        (with(1, &[0], &[7]), "1 bytes left over"),
        (
            with(2, &[0], &[1, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0]),
            "bitmap 1 (key 1) is not a valid roaring bitmap: unknown cookie",
        ),
        (frame(&[1, 0, 0]), "8-byte bitmap count"),
        (frame(&one[..one.len() - 1]), "bitmaps, but its 13 remaining bytes hold at most 1"),
    ];
    for (bytes, msg) in cases {
        expect_err(read_deletion_vector(&bytes, LOC), bad, LOC, &[msg]);
    }
    // A truncated 32-bit bitmap inside a correctly framed vector.
    let mut v = 1u64.to_le_bytes().to_vec();
    v.extend(0u32.to_le_bytes().iter().chain(&one[..one.len() - 2]));
    expect_err(read_deletion_vector(&frame(&v), LOC), bad, LOC, &["not a valid roaring bitmap"]);
}

#[test]
fn every_truncation_and_byte_flip_of_golden_blobs_is_an_error_or_a_consistent_vector() {
    for (name, file, json) in goldens() {
        let good = blob(&file, &json["deletion_vectors"][0]).to_vec();
        for cut in 0..good.len() {
            assert!(read_deletion_vector(&good[..cut], LOC).is_err(), "{name}: cut {cut}");
        }
        // Flip each byte of the vector and fix the CRC, so the roaring decoder sees it.
        let vector = &good[8..good.len() - 4];
        let step = if vector.len() > 512 { 7 } else { 1 };
        for i in (0..vector.len()).step_by(step) {
            for mask in [0x01u8, 0x80, 0xFF] {
                let mut v = vector.to_vec();
                v[i] ^= mask;
                if let Ok(dv) = read_deletion_vector(&frame(&v), LOC) {
                    // Accepted only if it is a real vector: listing and re-encoding agree.
                    assert_eq!(dv.iter().count() as u64, dv.cardinality(), "{name}: byte {i}");
                    let again = read_deletion_vector(&dv.serialize().unwrap(), LOC).unwrap();
                    assert_eq!(again, dv, "{name}: byte {i}");
                }
            }
        }
    }
}

#[test]
fn corrupt_puffin_footers_fail_naming_the_file() {
    let (_, file, _) = goldens().into_iter().next().unwrap();
    let bad = ErrorKind::InvalidData;
    let parse = |b: &[u8]| PuffinFile::parse_footer(b, LOC);
    let n = file.len();

    for cut in [0, 3, 19] {
        expect_err(parse(&file[..cut]), bad, LOC, &["expected at least 20 bytes"]);
    }
    // Cut anywhere: the trailing magic or the payload size no longer fits.
    for cut in [n - 1, n - 4, n / 2, 40] {
        expect_err(parse(&file[..cut]), bad, LOC, &["Puffin"]);
    }
    let mut v = file.clone();
    v[n - 1] = b'2';
    expect_err(parse(&v), bad, LOC, &["expected magic 50464131", &format!("offset {}", n - 4)]);
    let mut v = file.clone();
    v[0] = b'X';
    expect_err(parse(&v), bad, LOC, &["at offset 0, found 58464131"]);
    // The footer's opening magic sits at 4 + blob length (60) in the golden file.
    let footer_at = 4 + 60;
    let mut v = file.clone();
    v[footer_at] = 0;
    expect_err(parse(&v), bad, LOC, &[&format!("magic 50464131 at offset {footer_at}")]);

    let size_at = n - 12;
    let with_size = |size: i32| {
        let mut v = file.clone();
        v[size_at..size_at + 4].copy_from_slice(&size.to_le_bytes());
        v
    };
    expect_err(parse(&with_size(-1)), bad, LOC, &["non-negative integer, found -1"]);
    expect_err(parse(&with_size(i32::MAX)), bad, LOC, &["payload size 2147483647 expected at most"]);
    expect_err(parse(&with_size(10)), bad, LOC, &["magic"]);

    let with_flags = |flags: [u8; 4]| {
        let mut v = file.clone();
        v[n - 8..n - 4].copy_from_slice(&flags);
        v
    };
    let unsupported = ErrorKind::NotSupported;
    expect_err(parse(&with_flags([1, 0, 0, 0])), unsupported, LOC, &["LZ4-compressed"]);
    expect_err(parse(&with_flags([0, 0, 2, 0])), unsupported, LOC, &["flag byte 2"]);

    // A well-framed footer whose JSON is wrong, or whose blob lies outside the blob area.
    let with_payload = |json: &str| {
        let mut v = b"PFA1PFA1".to_vec();
        v.extend_from_slice(json.as_bytes());
        v.extend_from_slice(&(json.len() as i32).to_le_bytes());
        v.extend_from_slice(&[0; 4]);
        v.extend_from_slice(b"PFA1");
        v
    };
    assert_eq!(parse(&with_payload(r#"{"blobs":[]}"#)).unwrap(), FileMetadata::default());
    expect_err(parse(&with_payload(r#"{"blobs":[{"type":"x"}]}"#)), bad, LOC, &["not a valid FileMetadata"]);
    expect_err(parse(&with_payload("not json")), bad, LOC, &["not a valid FileMetadata"]);
    let outside = r#"{"blobs":[{"type":"deletion-vector-v1","fields":[],"snapshot-id":-1,"sequence-number":-1,"offset":4,"length":10}]}"#;
    expect_err(parse(&with_payload(outside)), bad, LOC, &["expected to lie between", "offset 4 length 10"]);
}

#[test]
fn bad_ranges_and_types_fail_naming_the_file() {
    let name = "v3_dv_array.puffin";
    let path = golden_path(name);
    let size = std::fs::metadata(&path).unwrap().len();
    let bad = ErrorKind::InvalidData;
    expect_err(load_deletion_vector(&path, size - 10, 60, None), bad, &path, &["runs past the end"]);
    expect_err(load_deletion_vector(&path, u64::MAX, 2, None), bad, &path, &["runs past the end"]);
    // A range that is not the blob: the length field does not match.
    expect_err(load_deletion_vector(&path, 0, 60, None), bad, &path, &["at offset 0", "length field"]);
    expect_err(load_deletion_vector(&path, 4, 59, None), bad, &path, &["at offset 4", "length field"]);

    let file = PuffinFile::open(&path, None).unwrap();
    let mut b = file.metadata().blobs[0].clone();
    b.blob_type = "apache-datasketches-theta-v1".into();
    expect_err(file.read_deletion_vector(&b), bad, &path, &["expected type 'deletion-vector-v1'"]);
    let mut b = file.metadata().blobs[0].clone();
    b.properties.insert(CARDINALITY.into(), "7".into());
    expect_err(file.read_deletion_vector(&b), bad, &path, &["cardinality expected 7", "found 6"]);
    b.properties.insert(CARDINALITY.into(), "six".into());
    expect_err(file.read_deletion_vector(&b), bad, &path, &["found 'six'"]);
    let mut b = file.metadata().blobs[0].clone();
    b.compression_codec = Some("zstd".into());
    expect_err(file.read_deletion_vector(&b), bad, &path, &["uncompressed deletion vector", "'zstd'"]);
    expect_err(file.read_blob(&b), bad, &path, &["zstd-compressed", "do not decompress"]);
    b.compression_codec = Some("lz4".into());
    expect_err(file.read_blob(&b), ErrorKind::NotSupported, &path, &["compressed with 'lz4'", "only zstd"]);
    expect_err(
        PuffinFile::open(&golden_path("v2_deletes_position_delete_1_1.parquet"), None),
        bad,
        "parquet",
        &[],
    );
    expect_err(PuffinFile::open(&golden_path("no_such.puffin"), None), ErrorKind::NotFound, "no_such", &[]);
}
