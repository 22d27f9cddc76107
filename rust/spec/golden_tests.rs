//! Tests against Iceberg Java output in `tests/data/golden/` (see its README):
//! table metadata round trips and single-value / transform vectors.

use std::path::PathBuf;

use serde_json::Value;

use super::*;

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden")
}

fn read(name: &str) -> Option<String> {
    std::fs::read_to_string(golden_dir().join(name)).ok()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

/// Parses the golden files' text form of an input value (see `value_encoding`).
fn parse_value(ty: &PrimitiveType, text: &str) -> Literal {
    let int_text = text.parse::<i64>().ok();
    match ty {
        PrimitiveType::Boolean => Literal::Boolean(text == "true"),
        PrimitiveType::Int => Literal::Int(text.parse().unwrap()),
        PrimitiveType::Long => Literal::Long(text.parse().unwrap()),
        PrimitiveType::Float => Literal::Float(text.parse().unwrap()),
        PrimitiveType::Double => Literal::Double(text.parse().unwrap()),
        PrimitiveType::Date if int_text.is_some() => Literal::Date(int_text.unwrap() as i32),
        PrimitiveType::Timestamp if int_text.is_some() => Literal::Timestamp(int_text.unwrap()),
        PrimitiveType::Timestamptz if int_text.is_some() => Literal::Timestamptz(int_text.unwrap()),
        PrimitiveType::Decimal { scale, .. } => {
            // BigDecimal text like "0E-10": re-render at the type's scale.
            let (mant, exp) = match text.split_once(['E', 'e']) {
                Some((m, e)) => (m, e.parse::<i32>().unwrap()),
                None => (text, 0),
            };
            let frac = mant.split_once('.').map(|(_, f)| f.len() as i32).unwrap_or(0);
            let unscaled: i128 = mant.replace('.', "").parse().unwrap();
            let shift = *scale as i32 - (frac - exp);
            assert!(shift >= 0, "{text}");
            Literal::Decimal(unscaled * 10i128.pow(shift as u32))
        }
        PrimitiveType::Binary | PrimitiveType::Fixed(_) => {
            Literal::from_json(ty, &Value::String(text.to_string())).unwrap()
        }
        _ => Literal::from_json(ty, &Value::String(text.to_string())).unwrap(),
    }
}

#[test]
fn golden_single_values_and_transforms() {
    let Some(text) = read("single_value_and_transforms.json") else {
        eprintln!("golden single_value_and_transforms.json missing; skipped");
        return;
    };
    let g: Value = serde_json::from_str(&text).unwrap();

    let mut checked = 0;
    for case in g["single_value"].as_array().unwrap() {
        let ty = PrimitiveType::parse(case["type"].as_str().unwrap()).unwrap();
        let value = case["value"].as_str().unwrap();
        let expected = unhex(case["bytes_hex"].as_str().unwrap());
        let lit = parse_value(&ty, value);
        assert_eq!(lit.to_bytes(), expected, "to_bytes {ty} {value}");
        let back = Literal::from_bytes(&ty, &expected).unwrap();
        assert_eq!(back.to_bytes(), expected, "from_bytes {ty} {value}");
        if !matches!(back, Literal::Float(f) if f.is_nan())
            && !matches!(back, Literal::Double(f) if f.is_nan())
        {
            assert_eq!(back, lit, "from_bytes {ty} {value}");
        }
        checked += 1;
    }
    assert!(checked >= 70);

    for case in g["murmur3_hash"].as_array().unwrap() {
        let ty = PrimitiveType::parse(case["type"].as_str().unwrap()).unwrap();
        let value = case["value"].as_str().unwrap();
        let lit = parse_value(&ty, value);
        assert_eq!(
            bucket_hash(&lit).unwrap() as i64,
            case["murmur3_32"].as_i64().unwrap(),
            "hash {ty} {value}"
        );
    }

    let mut n = 0;
    for case in g["transforms"].as_array().unwrap() {
        let t = Transform::parse(case["transform"].as_str().unwrap()).unwrap();
        let src = PrimitiveType::parse(case["source_type"].as_str().unwrap()).unwrap();
        let value = case["value"].as_str().unwrap();
        let ctx = format!("{t} on {src} {value:?}");
        let rt = PrimitiveType::parse(case["result_type"].as_str().unwrap()).unwrap();
        assert_eq!(t.result_type(&src).unwrap(), rt, "result type {ctx}");
        let lit = parse_value(&src, value);
        let out = t.apply(&lit).unwrap().unwrap();
        assert_eq!(hex(&out.to_bytes()), case["result_hex"].as_str().unwrap(), "result bytes {ctx}");
        assert_eq!(
            t.to_human_string(&src, Some(&out)),
            case["human_string"].as_str().unwrap(),
            "human string {ctx}"
        );
        n += 1;
    }
    assert!(n >= 100);
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn metadata_files() -> Vec<(String, String)> {
    let Ok(dir) = std::fs::read_dir(golden_dir()) else { return vec![] };
    let mut out: Vec<(String, String)> = dir
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with("metadata.json"))
        .filter_map(|n| read(&n).map(|t| (n, t)))
        .collect();
    out.sort();
    out
}

#[test]
fn golden_metadata_round_trips_match_java() {
    let files = metadata_files();
    if files.is_empty() {
        eprintln!("no golden metadata files; skipped");
        return;
    }
    for (name, text) in &files {
        let java: Value = serde_json::from_str(text).unwrap();
        let m = TableMetadata::from_json_str(text, Some(format!("/golden/{name}")))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(m.metadata_location(), Some(format!("/golden/{name}").as_str()));
        let ours = m.to_json_string().unwrap();
        let ours_v: Value = serde_json::from_str(&ours).unwrap();
        // Java 1.10 writes the same JSON for v1 and v2 tables that we do.
        assert_eq!(ours_v, java, "{name}: re-serialized JSON differs from Java's");
        let back = TableMetadata::from_json_str(&ours, Some(format!("/golden/{name}"))).unwrap();
        assert_eq!(back, m, "{name}: re-parse differs");
        // Java's key order at the top level: sort the keys by where each document has them.
        let order = |doc: &str| {
            let mut keys: Vec<(usize, &String)> = java
                .as_object()
                .unwrap()
                .keys()
                .map(|k| (doc.find(&format!("\"{k}\":")).unwrap_or(usize::MAX), k))
                .collect();
            keys.sort();
            keys.into_iter().map(|(_, k)| k.clone()).collect::<Vec<_>>()
        };
        assert_eq!(order(&ours), order(text), "{name}: top-level key order differs from Java's");
    }
}

#[test]
fn golden_metadata_contents() {
    let Some(text) = read("v2_all_transforms_metadata.json") else { return };
    let m = TableMetadata::from_json_str(&text, None).unwrap();
    assert_eq!(m.format_version(), 2);
    assert_eq!(m.last_sequence_number(), 2);
    assert_eq!(m.last_column_id(), 8);
    assert_eq!(m.last_partition_id(), 1007);
    let spec = m.default_spec();
    let transforms: Vec<String> = spec.fields.iter().map(|f| f.transform.to_string()).collect();
    assert_eq!(
        transforms,
        ["identity", "bucket[16]", "truncate[4]", "truncate[10]", "year", "month", "day", "hour"]
    );
    let names: Vec<&str> = spec.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        ["category", "id_bucket", "s_trunc", "n_trunc", "d_year", "ts_ntz_month", "ts_day", "ts2_hour"]
    );
    // Our builder picks the same default names and ids as Java.
    let schema = m.current_schema();
    let built = PartitionSpec::builder(schema)
        .identity("category")
        .and_then(|b| b.bucket("id", 16))
        .and_then(|b| b.truncate("s", 4))
        .and_then(|b| b.truncate("n", 10))
        .and_then(|b| b.year("d"))
        .and_then(|b| b.month("ts_ntz"))
        .and_then(|b| b.day("ts"))
        .and_then(|b| b.hour("ts2"))
        .and_then(|b| b.build())
        .unwrap();
    assert_eq!(&built, spec);
    let pt = spec.partition_type(schema).unwrap();
    assert_eq!(pt.fields[6].field_type, Type::Primitive(PrimitiveType::Date));
    assert_eq!(pt.fields[1].field_type, Type::Primitive(PrimitiveType::Int));

    let order = m.default_sort_order();
    assert_eq!(order.order_id, 1);
    assert_eq!(
        order.fields,
        vec![
            SortField::new(2, Transform::Identity, SortDirection::Ascending, NullOrder::NullsFirst),
            SortField::new(1, Transform::Identity, SortDirection::Descending, NullOrder::NullsLast),
            SortField::new(7, Transform::Day, SortDirection::Descending, NullOrder::NullsLast),
        ]
    );
    let cur = m.current_snapshot().unwrap();
    assert_eq!(m.refs()["main"].snapshot_id, cur.snapshot_id);
    assert_eq!(
        m.refs()["audit"].retention,
        SnapshotRetention::Branch {
            min_snapshots_to_keep: Some(2),
            max_snapshot_age_ms: None,
            max_ref_age_ms: Some(604800000)
        }
    );
    assert_eq!(
        m.refs()["first_load"].retention,
        SnapshotRetention::Tag { max_ref_age_ms: Some(31536000000) }
    );
    assert_eq!(m.snapshot_for_ref("first_load").unwrap().snapshot_id, m.snapshots()[0].snapshot_id);
    assert_eq!(cur.parent_snapshot_id, Some(m.snapshots()[0].snapshot_id));
    assert_eq!(cur.sequence_number, 2);
    assert_eq!(cur.summary.operation, Operation::Append);
    assert_eq!(cur.summary.get("total-records"), Some("3"));
    assert_eq!(m.metadata_log().len(), 5);

    if let Some(text) = read("v1_metadata.json") {
        let m = TableMetadata::from_json_str(&text, None).unwrap();
        assert_eq!(m.format_version(), 1);
        assert_eq!(m.last_sequence_number(), 0);
        assert!(m.snapshots().iter().all(|s| s.sequence_number == 0));
        assert_eq!(m.snapshots().len(), 2);
        assert_eq!(m.default_spec().fields[1].transform, Transform::Day);
        assert_eq!(m.next_sequence_number(), 0);
    }
    if let Some(text) = read("v2_schema_evolution_metadata.json") {
        let m = TableMetadata::from_json_str(&text, None).unwrap();
        assert_eq!(m.schemas().len(), 5);
        assert_eq!(m.current_schema_id(), 4);
        let s = m.current_schema();
        assert_eq!(s.field_by_id(1).unwrap().field_type, Type::Primitive(PrimitiveType::Long));
        assert_eq!(s.field_by_id(2).unwrap().name, "full_name");
        assert_eq!(
            m.schema_by_id(0).unwrap().field_by_id(1).unwrap().field_type,
            Type::Primitive(PrimitiveType::Int)
        );
        assert!(m.default_spec().is_unpartitioned());
    }
    if let Some(text) = read("v2_deletes_metadata.json") {
        let m = TableMetadata::from_json_str(&text, None).unwrap();
        assert_eq!(m.current_snapshot().unwrap().summary.operation, Operation::Delete);
        assert_eq!(m.property("write.delete.mode"), Some("merge-on-read"));
    }
}

/// A commit on a Java-written table produces what Java would: main moves, logs grow.
#[test]
fn golden_add_snapshot_on_java_table() {
    let Some(text) = read("v2_metadata.json") else { return };
    let m = TableMetadata::from_json_str(&text, Some("/w/v9.metadata.json".into())).unwrap();
    let seq = m.next_sequence_number();
    let id = m.new_snapshot_id();
    let snap = Snapshot {
        snapshot_id: id,
        parent_snapshot_id: m.current_snapshot_id(),
        sequence_number: seq,
        timestamp_ms: m.last_updated_ms() + 10,
        manifest_list: Some("/w/metadata/snap.avro".into()),
        manifests: None,
        summary: Summary::new(Operation::Overwrite),
        schema_id: Some(m.current_schema_id()),
        first_row_id: None,
        added_rows: None,
    };
    let next = m.add_snapshot(snap, m.last_updated_ms() + 10).unwrap();
    assert_eq!(next.last_sequence_number(), m.last_sequence_number() + 1);
    assert_eq!(next.current_snapshot_id(), Some(id));
    assert_eq!(next.metadata_log().len(), m.metadata_log().len() + 1);
    assert_eq!(next.metadata_log().last().unwrap().metadata_file, "/w/v9.metadata.json");
    assert_eq!(next.snapshot_log().last().unwrap().snapshot_id, id);
    let v: Value = serde_json::from_str(&next.to_json_string().unwrap()).unwrap();
    assert_eq!(v["refs"]["main"]["snapshot-id"], Value::from(id));
}
