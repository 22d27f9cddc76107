use super::*;
use crate::manifest::{
    DataContentType, DataFile, FileFormat, ManifestListWriter, ManifestWriter, EMPTY_NAN_VALUE_COUNTS,
    UNASSIGNED_SEQ,
};
use crate::spec::{Literal, NestedField, PrimitiveType, Type};

fn partition_type() -> StructType {
    let p = |id, name: &str, t: PrimitiveType| NestedField::optional(id, name, Type::Primitive(t));
    StructType::new(vec![
        p(1000, "category", PrimitiveType::String),
        p(1001, "ts_day", PrimitiveType::Date),
        p(1002, "id_bucket", PrimitiveType::Int),
        p(1003, "big", PrimitiveType::Long),
        p(1004, "amount", PrimitiveType::Decimal { precision: 9, scale: 2 }),
        p(1005, "u", PrimitiveType::Uuid),
        p(1006, "flag", PrimitiveType::Boolean),
        p(1007, "ts", PrimitiveType::Timestamp),
        p(1008, "tstz", PrimitiveType::Timestamptz),
        p(1009, "bin", PrimitiveType::Binary),
        p(1010, "fx", PrimitiveType::Fixed(3)),
        p(1011, "f", PrimitiveType::Float),
        p(1012, "d", PrimitiveType::Double),
        p(1013, "big_dec", PrimitiveType::Decimal { precision: 38, scale: 0 }),
        p(1014, "t", PrimitiveType::Time),
        p(1015, "fx2", PrimitiveType::Fixed(3)),
    ])
}

fn partition(i: i64) -> Vec<Option<Literal>> {
    if i % 5 == 4 {
        return vec![None; 16];
    }
    vec![
        Some(Literal::String(format!("cat-{}", i % 3))),
        Some(Literal::Date(19_000 + i as i32 - 2)),
        Some(Literal::Int((i % 16) as i32)),
        Some(Literal::Long(-i * 1_000_000_007)),
        Some(Literal::Decimal(i128::from(i) * 1234 - 5000)),
        Some(Literal::Uuid(0xf79c_3e09_677c_4bbd_a479_3f34_9cb7_85e7 + u128::from(i as u64))),
        Some(Literal::Boolean(i % 2 == 0)),
        Some(Literal::Timestamp(1_700_000_000_000_000 + i)),
        Some(Literal::Timestamptz(-1 - i)),
        Some(Literal::Binary(vec![i as u8, 0xff])),
        Some(Literal::Fixed(vec![1, 2, i as u8])),
        Some(Literal::Float(if i == 1 { f32::NAN } else { i as f32 - 1.5 })),
        Some(Literal::Double(-(i as f64))),
        Some(Literal::Decimal(-(10i128.pow(37)) - i128::from(i))),
        Some(Literal::Time(i * 1_000_000)),
        Some(Literal::Fixed(vec![9, 9, 9])),
    ]
}

fn data_file(i: i64, content: DataContentType) -> DataFile {
    let mut f = DataFile::new_data(format!("file:/tmp/t/data/f{i}.parquet"), 10 + i, 1000 + i);
    f.content = content;
    f.partition = partition(i);
    f.file_format = if i == 2 { FileFormat::Avro } else { FileFormat::Parquet };
    for col in 1..=4 {
        f.column_sizes.insert(col, 100 * i64::from(col) + i);
        f.value_counts.insert(col, 10 + i);
        f.null_value_counts.insert(col, i % 2);
        f.lower_bounds.insert(col, vec![col as u8; 8]);
        f.upper_bounds.insert(col, vec![0xff, col as u8]);
    }
    f.nan_value_counts.insert(4, 1);
    f.key_metadata = (i == 3).then(|| vec![1, 2, 3]);
    f.split_offsets = Some(vec![4, 1000 + i]);
    match content {
        DataContentType::Data => f.sort_order_id = Some(0),
        DataContentType::PositionDeletes => {
            f.referenced_data_file = Some(format!("file:/tmp/t/data/f{}.parquet", i - 1));
        }
        DataContentType::EqualityDeletes => {
            f.equality_ids = Some(vec![1, 3]);
            f.sort_order_id = Some(0);
        }
    }
    f
}

fn writer(dir: &std::path::Path, name: &str, content: ManifestContent) -> ManifestWriter {
    ManifestWriter::with_partition_type(
        dir.join(name).display().to_string(),
        42,
        content,
        r#"{"type":"struct","schema-id":0,"fields":[]}"#,
        3,
        "[]",
        partition_type(),
        2,
    )
    .unwrap()
}

#[test]
fn data_manifest_round_trip_with_inheritance_and_summaries() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = writer(dir.path(), "m0.avro", ManifestContent::Data);
    for i in 0..6 {
        w.add(data_file(i, DataContentType::Data)).unwrap();
    }
    w.existing(data_file(10, DataContentType::Data), 7, 3, Some(2)).unwrap();
    w.delete(data_file(11, DataContentType::Data), 4, Some(4)).unwrap();
    assert_eq!(w.entry_count(), 8);
    let mf = w.close().unwrap();
    assert_eq!(mf.manifest_length as u64, std::fs::metadata(&mf.manifest_path).unwrap().len());
    assert_eq!(mf.sequence_number, UNASSIGNED_SEQ);
    assert_eq!(mf.min_sequence_number, 3);
    assert_eq!(
        (mf.added_files_count, mf.existing_files_count, mf.deleted_files_count),
        (Some(6), Some(1), Some(1))
    );
    assert_eq!(mf.added_rows_count, Some((0..6).map(|i| 10 + i).sum()));

    // Summaries: over all entries (incl. deleted), null and NaN tracked, bounds typed.
    let parts = mf.partitions.clone().unwrap();
    assert_eq!(parts.len(), 16);
    assert!(parts[0].contains_null);
    assert_eq!(parts[0].lower_bound.as_deref(), Some(&b"cat-0"[..]));
    assert_eq!(parts[0].upper_bound.as_deref(), Some(&b"cat-2"[..]));
    assert_eq!(parts[1].lower_bound, Some(18_998i32.to_le_bytes().to_vec()));
    assert_eq!(parts[1].upper_bound, Some(19_009i32.to_le_bytes().to_vec()));
    assert_eq!(parts[11].contains_nan, Some(true));
    assert_eq!(parts[11].lower_bound, Some((-1.5f32).to_le_bytes().to_vec()));
    assert_eq!(parts[11].upper_bound, Some(9.5f32.to_le_bytes().to_vec()));
    assert_eq!(parts[2].contains_nan, Some(false));

    // Commit through a manifest list, then read back with inheritance.
    let list_path = dir.path().join("snap.avro").display().to_string();
    let mut lw = ManifestListWriter::new(&list_path, 42, Some(41), 9);
    lw.add(mf.clone());
    lw.write().unwrap();
    let listed = crate::manifest::read_manifest_list(&list_path).unwrap();
    assert_eq!(listed[0].sequence_number, 9);
    assert_eq!(listed[0].min_sequence_number, 3);
    let m = read_manifest_with_metadata(&listed[0]).unwrap();
    assert_eq!(m.metadata.partition_type, partition_type());
    assert_eq!(m.metadata.partition_spec_id, 3);
    assert_eq!(m.metadata.format_version, 2);
    assert_eq!(m.metadata.content, ManifestContent::Data);
    assert_eq!(m.entries.len(), 8);
    for (i, e) in m.entries.iter().take(6).enumerate() {
        assert_eq!(e.status, EntryStatus::Added);
        assert_eq!((e.snapshot_id, e.sequence_number, e.file_sequence_number), (Some(42), Some(9), Some(9)));
        let mut expected = data_file(i as i64, DataContentType::Data);
        expected.spec_id = 3;
        // NaN != NaN: compare that one field by bits.
        if i == 1 {
            assert!(matches!(e.data_file.partition[11], Some(Literal::Float(f)) if f.is_nan()));
            let mut got = e.data_file.clone();
            got.partition[11] = None;
            expected.partition[11] = None;
            assert_eq!(got, expected);
        } else {
            assert_eq!(e.data_file, expected);
        }
    }
    let ex = &m.entries[6];
    assert_eq!(
        (ex.status, ex.snapshot_id, ex.sequence_number, ex.file_sequence_number),
        (EntryStatus::Existing, Some(7), Some(3), Some(2))
    );
    let del = &m.entries[7];
    assert_eq!((del.status, del.snapshot_id, del.sequence_number), (EntryStatus::Deleted, Some(42), Some(4)));

    // The reference Avro implementation reads our file too.
    let bytes = std::fs::read(&mf.manifest_path).unwrap();
    let r = apache_avro::Reader::new(&bytes[..]).unwrap();
    assert_eq!(r.user_metadata()["content"], b"data");
    assert_eq!(r.user_metadata()["partition-spec-id"], b"3");
    assert!(r.collect::<Result<Vec<_>, _>>().unwrap().len() == 8);
}

#[test]
fn empty_metric_maps_stay_empty_maps_and_absent_ones_stay_null() {
    // Java writes `nan_value_counts` as an empty map for a file without float columns; its
    // `files` table shows `{}`, and a rewritten manifest must keep it so.
    let dir = tempfile::tempdir().unwrap();
    let mut w = writer(dir.path(), "e0.avro", ManifestContent::Data);
    let mut empty = data_file(1, DataContentType::Data);
    empty.nan_value_counts.clear();
    empty.upper_bounds.clear();
    empty.empty_metric_maps = EMPTY_NAN_VALUE_COUNTS;
    let mut absent = data_file(2, DataContentType::Data);
    absent.nan_value_counts.clear();
    w.add(empty).unwrap();
    w.add(absent).unwrap();
    let mut mf = w.close().unwrap();
    mf.sequence_number = 1;
    let m = read_manifest_with_metadata(&mf).unwrap();
    let flags: Vec<_> = m.entries.iter().map(|e| e.data_file.empty_metric_maps).collect();
    assert_eq!(flags, vec![EMPTY_NAN_VALUE_COUNTS, 0]);
    assert!(m.entries.iter().all(|e| e.data_file.nan_value_counts.is_empty()));
    // The entries after the empty map decoded whole: the map was one terminating zero.
    assert_eq!(m.entries[0].data_file.split_offsets, Some(vec![4, 1001]));
    assert_eq!(m.entries[1].data_file.file_path, "file:/tmp/t/data/f2.parquet");
}

#[test]
fn delete_manifest_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = writer(dir.path(), "d0.avro", ManifestContent::Deletes);
    w.add(data_file(1, DataContentType::PositionDeletes)).unwrap();
    w.add(data_file(2, DataContentType::EqualityDeletes)).unwrap();
    assert!(w.add(data_file(3, DataContentType::Data)).is_err());
    let mut mf = w.close().unwrap();
    mf.sequence_number = 5;
    let m = read_manifest_with_metadata(&mf).unwrap();
    assert_eq!(m.metadata.content, ManifestContent::Deletes);
    let got: Vec<_> = m
        .entries
        .iter()
        .map(|e| {
            (
                e.data_file.content,
                e.data_file.equality_ids.clone(),
                e.data_file.referenced_data_file.clone(),
                e.sequence_number,
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (DataContentType::PositionDeletes, None, Some("file:/tmp/t/data/f0.parquet".into()), Some(5)),
            (DataContentType::EqualityDeletes, Some(vec![1, 3]), None, Some(5)),
        ]
    );
}

#[test]
fn unpartitioned_and_spec_struct_constructor() {
    let dir = tempfile::tempdir().unwrap();
    let schema =
        Schema::new(0, vec![NestedField::required(1, "id", Type::Primitive(PrimitiveType::Long))], vec![])
            .unwrap();
    let spec = PartitionSpec::unpartitioned();
    let path = dir.path().join("u.avro").display().to_string();
    let mut w = ManifestWriter::new(&path, 1, ManifestContent::Data, &schema, &spec).unwrap();
    w.add(DataFile::new_data("file:/x.parquet", 1, 2)).unwrap();
    let mut mf = w.close().unwrap();
    assert_eq!(mf.partitions, Some(vec![]));
    mf.sequence_number = 1;
    let m = read_manifest_with_metadata(&mf).unwrap();
    assert_eq!(m.entries[0].data_file.partition, vec![]);
    assert_eq!(m.metadata.schema().unwrap().unwrap(), schema);
    assert!(m.metadata.partition_spec().unwrap().unwrap().is_unpartitioned());
}

#[test]
fn errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = writer(dir.path(), "m.avro", ManifestContent::Data);
    for i in 0..200 {
        w.add(data_file(i, DataContentType::Data)).unwrap();
    }
    let mut mf = w.close().unwrap();
    mf.sequence_number = 1;
    let bytes = std::fs::read(&mf.manifest_path).unwrap();
    let check = |mf: &ManifestFile, kind: crate::ErrorKind, needle: &str| {
        let e = read_manifest(mf).unwrap_err();
        assert_eq!(e.kind(), kind, "{e}");
        let s = e.to_string();
        assert!(s.contains(&mf.manifest_path) && s.contains(needle), "{s}");
    };

    let missing =
        ManifestFile { manifest_path: dir.path().join("nope.avro").display().to_string(), ..mf.clone() };
    check(&missing, crate::ErrorKind::NotFound, "nope.avro");

    // A 10 GB manifest is refused from its list entry, before a byte is read.
    let huge = ManifestFile { manifest_length: 10 << 30, ..missing.clone() };
    check(
        &huge,
        crate::ErrorKind::ResourceLimit,
        "manifest is 10240 MB (its manifest list entry's manifest_length), past the 1024 MB",
    );
    check(&huge, crate::ErrorKind::ResourceLimit, MANIFEST_MAX_ENV);

    let magic = dir.path().join("magic.avro").display().to_string();
    let mut b = bytes.clone();
    b[1] = b'x';
    std::fs::write(&magic, &b).unwrap();
    check(&ManifestFile { manifest_path: magic, ..mf.clone() }, crate::ErrorKind::InvalidData, "magic");

    // Truncated anywhere: caught by Avro framing or by the recorded length.
    for cut in [3, 100, bytes.len() / 2, bytes.len() - 16, bytes.len() - 1] {
        let p = dir.path().join(format!("cut{cut}.avro")).display().to_string();
        std::fs::write(&p, &bytes[..cut]).unwrap();
        check(&ManifestFile { manifest_path: p.clone(), ..mf.clone() }, crate::ErrorKind::InvalidData, "");
        // Even when the list's length is wrong too, the Avro decoding must not come back short silently.
        let r = Manifest::parse(&bytes[..cut]);
        assert!(r.is_err() || r.unwrap().entries.len() < 200);
    }
    // Corrupt block content.
    let p = dir.path().join("corrupt.avro").display().to_string();
    let mut b = bytes.clone();
    let n = b.len();
    for x in &mut b[n - 200..n - 20] {
        *x ^= 0x5a;
    }
    std::fs::write(&p, &b).unwrap();
    check(&ManifestFile { manifest_path: p, ..mf.clone() }, crate::ErrorKind::InvalidData, "");
    // Count mismatch with the list.
    let wrong = ManifestFile { added_files_count: Some(199), ..mf.clone() };
    check(&wrong, crate::ErrorKind::InvalidData, "entries");
}
