//! Tests of the Avro container codec: round trips, codecs, corrupt and truncated input.

use super::*;

#[test]
fn varint_round_trip() {
    let mut buf = Vec::new();
    let vals = [0i64, 1, -1, 63, -64, 64, 300, i32::MAX as i64, i64::MAX, i64::MIN];
    for v in vals {
        write_long(&mut buf, v);
    }
    let mut c = Cursor::new(&buf);
    for v in vals {
        assert_eq!(c.read_long().unwrap(), v);
    }
    assert!(c.is_empty());
    assert!(Cursor::new(&[0x80]).read_long().is_err());
}

#[test]
fn parses_iceberg_attributes() {
    let s = r#"{"type":"record","name":"r","fields":[
        {"name":"a","type":["null",{"type":"long","logicalType":"timestamp-micros","adjust-to-utc":false}],"default":null,"field-id":1000},
        {"name":"_x2Db","type":{"type":"fixed","name":"f16","size":16,"logicalType":"uuid"},"field-id":1001,"iceberg-field-name":"-b"},
        {"name":"c","type":"f16","field-id":1002}]}"#;
    let n = parse_schema(s).unwrap();
    let r = n.as_record().unwrap();
    assert_eq!(r.fields[0].field_id, Some(1000));
    assert_eq!(r.fields[0].node.non_null().logical, Logical::TimestampMicros { utc: false });
    assert_eq!(r.fields[1].name, "-b");
    assert_eq!(r.fields[2].node.kind, Kind::Fixed(16));
    assert_eq!(r.fields[2].node.logical, Logical::Uuid);
}

#[test]
fn container_round_trip_and_apache_avro_reads_it() {
    let schema = r#"{"type":"record","name":"x","fields":[{"name":"a","type":"long"},{"name":"b","type":["null","string"],"default":null}]}"#;
    let mut w = ContainerWriter::new(schema, &[("k", "v")], deflate());
    for i in 0..20_000i64 {
        let b = w.record_buf();
        write_long(b, i);
        write_opt(b, (i % 2 == 0).then(|| format!("s{i}")), |o, s| write_bytes(o, s.as_bytes()));
        w.end_record().unwrap();
    }
    let bytes = w.finish().unwrap();
    let c = read_container(&bytes).unwrap();
    assert_eq!(c.meta_str("k"), Some("v"));
    assert!(c.blocks.len() > 1);
    let node = c.schema.clone();
    let rec = node.as_record().unwrap().clone();
    let got = c
        .decode_all(|cur| {
            let a = cur.read_long()?;
            let b = cur
                .read_optional(&rec.fields[1].node)?
                .map(|_| cur.read_str().map(str::to_string))
                .transpose()?;
            Ok((a, b))
        })
        .unwrap();
    assert_eq!(got.len(), 20_000);
    assert_eq!(got[4], (4, Some("s4".to_string())));
    assert_eq!(got[5], (5, None));
    // The reference implementation agrees.
    let n = apache_avro::Reader::new(&bytes[..]).unwrap().count();
    assert_eq!(n, 20_000);
}

#[test]
fn huge_counts_in_a_corrupt_file_are_errors_not_panics() {
    let schema =
        r#"{"type":"record","name":"x","fields":[{"name":"a","type":{"type":"array","items":"long"}}]}"#;
    let mut w = ContainerWriter::new(schema, &[], Codec::Null);
    let b = w.record_buf();
    write_long(b, i64::MAX); // an array block claiming 2^63 items
    write_long(b, 1);
    w.end_record().unwrap();
    let bytes = w.finish().unwrap();
    let c = read_container(&bytes).unwrap();
    let node = c.schema.as_record().unwrap().fields[0].node.clone();
    assert!(c.decode_all(|cur| cur.skip(&node)).is_err());
}

#[test]
fn inflate_appends_whatever_the_ratio_and_refuses_truncated_streams() {
    use std::io::Write;
    for data in [vec![7u8; 1 << 20], (0..200_000u32).flat_map(|i| i.to_le_bytes()).collect(), vec![]] {
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(&data).unwrap();
        let z = e.finish().unwrap();
        let mut out = b"head".to_vec();
        inflate_into(&z, &mut out).unwrap();
        assert_eq!(&out[..4], b"head");
        assert_eq!(&out[4..], &data[..]);
        if z.len() > 8 {
            assert!(inflate_into(&z[..z.len() / 2], &mut Vec::new()).is_err());
        }
    }
}

#[test]
fn skip_varints_lands_where_reading_does() {
    // values of every varint length, in runs that cross 8-byte words at every offset
    let vals: Vec<i64> = (0..300i64)
        .map(|i| match i % 7 {
            0 => i,
            1 => -i * 1000,
            2 => i64::MAX - i,
            3 => i64::MIN + i,
            4 => 1 << (i % 63),
            5 => -(1 << (i % 40)),
            _ => 64,
        })
        .collect();
    let mut buf = Vec::new();
    for &v in &vals {
        write_long(&mut buf, v);
    }
    write_long(&mut buf, 12345); // a sentinel after the skipped run
    for skip in [0usize, 1, 2, 7, 8, 9, 63, 64, 65, 299, 300] {
        for start in [0usize, 1, 3] {
            let mut a = Cursor::new(&buf);
            let mut b = Cursor::new(&buf);
            for _ in 0..start {
                a.read_long().unwrap();
                b.read_long().unwrap();
            }
            let n = skip.min(vals.len() - start);
            for _ in 0..n {
                a.read_long().unwrap();
            }
            b.skip_varints(n).unwrap();
            assert_eq!(a.pos, b.pos, "skip {n} from {start}");
            if start + n == vals.len() {
                assert_eq!(b.read_long().unwrap(), 12345);
            }
        }
    }
    // past the end: an error, not a panic
    let mut c = Cursor::new(&buf);
    assert!(c.skip_varints(vals.len() + 2).is_err());
    assert!(Cursor::new(&[0x80, 0x80]).skip_varints(1).is_err());
}
