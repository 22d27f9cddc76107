//! Golden tests: manifest lists and manifests written by Iceberg Java 1.10 (tests/data/golden),
//! decoded here and compared field by field with Java's own decoding (the `.json` twins).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

use super::avro;
use super::manifest_schema;
use super::*;

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden")
}

fn golden_files(suffix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(golden_dir())
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| p.to_string_lossy().ends_with(suffix));
    v.sort();
    v
}

fn load_json(avro_path: &std::path::Path) -> Value {
    let p = avro_path.with_extension("json");
    serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Java paths are absolute under a temp warehouse; the JSON writes it as `<warehouse>`.
fn assert_path(actual: &str, expected: &Value, what: &str) {
    let exp = expected.as_str().unwrap();
    let suffix = exp.split("<warehouse>").last().unwrap();
    assert!(actual.ends_with(suffix), "{what}: {actual} does not end with {suffix}");
}

fn opt_i64(v: &Value) -> Option<i64> {
    v.as_i64()
}

fn opt_hex(v: &Option<Vec<u8>>) -> Value {
    v.as_ref().map_or(Value::Null, |b| Value::String(hex(b)))
}

fn assert_manifest_file(m: &ManifestFile, j: &Value, ctx: &str) {
    assert_path(&m.manifest_path, &j["path"], ctx);
    assert_eq!(m.manifest_length, j["length"].as_i64().unwrap(), "{ctx} length");
    assert_eq!(i64::from(m.partition_spec_id), j["partition_spec_id"].as_i64().unwrap(), "{ctx}");
    assert_eq!(m.content as i64, j["content"].as_i64().unwrap(), "{ctx} content");
    assert_eq!(m.sequence_number, j["sequence_number"].as_i64().unwrap(), "{ctx} seq");
    assert_eq!(m.min_sequence_number, j["min_sequence_number"].as_i64().unwrap(), "{ctx} min seq");
    assert_eq!(m.added_snapshot_id, j["added_snapshot_id"].as_i64().unwrap(), "{ctx}");
    assert_eq!(m.added_files_count.map(i64::from), opt_i64(&j["added_files_count"]), "{ctx}");
    assert_eq!(m.existing_files_count.map(i64::from), opt_i64(&j["existing_files_count"]), "{ctx}");
    assert_eq!(m.deleted_files_count.map(i64::from), opt_i64(&j["deleted_files_count"]), "{ctx}");
    assert_eq!(m.added_rows_count, opt_i64(&j["added_rows_count"]), "{ctx}");
    assert_eq!(m.existing_rows_count, opt_i64(&j["existing_rows_count"]), "{ctx}");
    assert_eq!(m.deleted_rows_count, opt_i64(&j["deleted_rows_count"]), "{ctx}");
    assert_eq!(opt_hex(&m.key_metadata), j["key_metadata"], "{ctx}");
    let parts: Option<Vec<Value>> = m.partitions.as_ref().map(|ps| {
        ps.iter()
            .map(|p| {
                serde_json::json!({
                    "contains_null": p.contains_null,
                    "contains_nan": p.contains_nan,
                    "lower_bound": opt_hex(&p.lower_bound),
                    "upper_bound": opt_hex(&p.upper_bound),
                })
            })
            .collect()
    });
    assert_eq!(parts.map_or(Value::Null, Value::Array), j["partitions"], "{ctx} partitions");
}

#[test]
fn golden_manifest_lists() {
    let files = golden_files("_manifest_list.avro");
    assert!(files.len() >= 10, "golden manifest lists missing: {files:?}");
    for f in files {
        let ctx = f.file_name().unwrap().to_string_lossy().to_string();
        let j = load_json(&f);
        let got = read_manifest_list(f.to_str().unwrap()).unwrap_or_else(|e| panic!("{ctx}: {e}"));
        let exp = j["manifests"].as_array().unwrap();
        assert_eq!(got.len(), exp.len(), "{ctx}");
        for (m, e) in got.iter().zip(exp) {
            assert_manifest_file(m, e, &ctx);
        }
        // Our writer's schema is Java's, byte for byte, for v2 lists.
        let bytes = std::fs::read(&f).unwrap();
        let c = avro::read_container(&bytes).unwrap();
        if c.meta_str("format-version") == Some("2") {
            assert_eq!(c.meta_str("avro.schema").unwrap(), manifest_list::manifest_list_schema_v2(), "{ctx}");
            assert_eq!(
                c.meta_str("iceberg.schema").unwrap(),
                manifest_list::manifest_list_iceberg_schema_v2(),
                "{ctx}"
            );
            let snap = &j["snapshot"];
            assert_eq!(c.meta_str("snapshot-id").unwrap(), snap["snapshot_id"].to_string());
            let parent = snap["parent_snapshot_id"].as_i64().map_or("null".to_string(), |p| p.to_string());
            assert_eq!(c.meta_str("parent-snapshot-id").unwrap(), parent);
            assert_eq!(c.meta_str("sequence-number").unwrap(), snap["sequence_number"].to_string());
        }
    }
}

fn count_map(m: &BTreeMap<i32, i64>) -> Value {
    Value::Object(m.iter().map(|(k, v)| (k.to_string(), Value::from(*v))).collect())
}

fn bytes_map(m: &BTreeMap<i32, Vec<u8>>) -> Value {
    Value::Object(m.iter().map(|(k, v)| (k.to_string(), Value::String(hex(v)))).collect())
}

/// Java prints an absent metrics map as null; ours are empty maps.
fn null_as_empty(v: &Value) -> Value {
    if v.is_null() {
        Value::Object(Default::default())
    } else {
        v.clone()
    }
}

fn assert_entry(e: &ManifestEntry, j: &Value, partition_type: &crate::spec::StructType, ctx: &str) {
    assert_eq!(e.status as i64, j["status"].as_i64().unwrap(), "{ctx} status");
    assert_eq!(e.snapshot_id, opt_i64(&j["snapshot_id"]), "{ctx} snapshot_id");
    assert_eq!(e.sequence_number, opt_i64(&j["sequence_number"]), "{ctx} sequence_number");
    assert_eq!(e.file_sequence_number, opt_i64(&j["file_sequence_number"]), "{ctx} file_sequence_number");
    let f = &e.data_file;
    let d = &j["data_file"];
    assert_eq!(f.content as i64, d["content"].as_i64().unwrap(), "{ctx}");
    assert_path(&f.file_path, &d["file_path"], ctx);
    assert_eq!(f.file_format.as_str(), d["file_format"].as_str().unwrap(), "{ctx}");
    assert_eq!(i64::from(f.spec_id), d["spec_id"].as_i64().unwrap(), "{ctx}");
    let parts = d["partition"].as_array().unwrap();
    assert_eq!(f.partition.len(), parts.len(), "{ctx} partition arity");
    for ((v, field), p) in f.partition.iter().zip(&partition_type.fields).zip(parts) {
        assert_eq!(i64::from(field.id), p["field_id"].as_i64().unwrap(), "{ctx}");
        assert_eq!(field.name, p["name"].as_str().unwrap(), "{ctx}");
        assert_eq!(field.field_type.to_string(), p["result_type"].as_str().unwrap(), "{ctx} {}", field.name);
        match v {
            None => assert!(p["value"].is_null(), "{ctx} {} expected {}", field.name, p["value"]),
            Some(lit) => {
                assert!(lit.matches_type(field.field_type.as_primitive().unwrap()), "{ctx}");
                assert_eq!(hex(&lit.to_bytes()), p["value_hex"].as_str().unwrap(), "{ctx} {}", field.name);
            }
        }
    }
    assert_eq!(f.record_count, d["record_count"].as_i64().unwrap(), "{ctx}");
    assert_eq!(f.file_size_in_bytes, d["file_size_in_bytes"].as_i64().unwrap(), "{ctx}");
    assert_eq!(count_map(&f.column_sizes), null_as_empty(&d["column_sizes"]), "{ctx} column_sizes");
    assert_eq!(count_map(&f.value_counts), null_as_empty(&d["value_counts"]), "{ctx} value_counts");
    assert_eq!(count_map(&f.null_value_counts), null_as_empty(&d["null_value_counts"]), "{ctx}");
    assert_eq!(count_map(&f.nan_value_counts), null_as_empty(&d["nan_value_counts"]), "{ctx}");
    assert_eq!(bytes_map(&f.lower_bounds), null_as_empty(&d["lower_bounds"]), "{ctx} lower_bounds");
    assert_eq!(bytes_map(&f.upper_bounds), null_as_empty(&d["upper_bounds"]), "{ctx} upper_bounds");
    assert_eq!(opt_hex(&f.key_metadata), d["key_metadata"], "{ctx}");
    assert_eq!(serde_json::to_value(&f.split_offsets).unwrap(), d["split_offsets"], "{ctx}");
    assert_eq!(serde_json::to_value(&f.equality_ids).unwrap(), d["equality_ids"], "{ctx}");
    assert_eq!(serde_json::to_value(f.sort_order_id).unwrap(), d["sort_order_id"], "{ctx}");
    let rdf = d.get("referenced_data_file").cloned().unwrap_or(Value::Null);
    match &f.referenced_data_file {
        None => assert!(rdf.is_null(), "{ctx}"),
        Some(p) => assert_path(p, &rdf, ctx),
    }
}

/// The manifest-list entry Java used, pointing at the golden copy of the manifest.
fn manifest_file_for(avro_path: &std::path::Path, j: &Value) -> ManifestFile {
    let lists = golden_files("_manifest_list.avro");
    let golden = avro_path.file_name().unwrap().to_string_lossy().to_string();
    for l in lists {
        let lj = load_json(&l);
        for (i, m) in lj["manifests"].as_array().unwrap().iter().enumerate() {
            if m["golden_file"].as_str() == Some(golden.as_str()) {
                let mut mf = read_manifest_list(l.to_str().unwrap()).unwrap().swap_remove(i);
                mf.manifest_path = avro_path.to_str().unwrap().to_string();
                assert_manifest_file(
                    &ManifestFile {
                        manifest_path: m["path"].as_str().unwrap().replace("<warehouse>", ""),
                        ..mf.clone()
                    },
                    &j["manifest"],
                    &golden,
                );
                return mf;
            }
        }
    }
    panic!("no manifest list refers to {golden}");
}

#[test]
fn golden_manifests() {
    let mut files = golden_files("_m0.avro");
    files.retain(|p| !p.to_string_lossy().ends_with("_manifest_list.avro"));
    assert!(files.len() >= 10, "golden manifests missing: {files:?}");
    let mut saw_delete = false;
    let mut saw_v1 = false;
    for f in files {
        let ctx = f.file_name().unwrap().to_string_lossy().to_string();
        let j = load_json(&f);
        let mf = manifest_file_for(&f, &j);
        let m = read_manifest_with_metadata(&mf).unwrap_or_else(|e| panic!("{ctx}: {e}"));
        let exp = j["entries"].as_array().unwrap();
        assert_eq!(m.entries.len(), exp.len(), "{ctx}");
        for (e, je) in m.entries.iter().zip(exp) {
            assert_entry(e, je, &m.metadata.partition_type, &ctx);
        }
        // Metadata: the spec as Java reports it.
        let spec = m.metadata.partition_spec().unwrap().unwrap();
        assert_eq!(spec.to_json(), j["partition_spec"], "{ctx}");
        assert!(m.metadata.schema().unwrap().is_some(), "{ctx}");
        assert_eq!(m.metadata.content, mf.content, "{ctx}");
        saw_delete |= m.metadata.content == ManifestContent::Deletes;
        saw_v1 |= m.metadata.format_version == 1;

        let bytes = std::fs::read(&f).unwrap();
        let c = avro::read_container(&bytes).unwrap();
        if m.metadata.format_version == 2 {
            // Our writer's schema text is Java's, byte for byte.
            let pt = &m.metadata.partition_type;
            assert_eq!(
                c.meta_str("avro.schema").unwrap(),
                manifest_schema::manifest_entry_schema_v2(pt).unwrap(),
                "{ctx}"
            );
            assert_eq!(
                c.meta_str("iceberg.schema").unwrap(),
                manifest_schema::manifest_entry_iceberg_schema_v2(pt),
                "{ctx}"
            );
            rewrite_and_compare(&m, &mf, &c, &ctx);
        }
    }
    assert!(saw_delete && saw_v1);
}

/// Writes the Java manifest's entries again with our writer; the result must decode to the
/// same entries and produce the same manifest-list summary as Java's.
fn rewrite_and_compare(m: &Manifest, mf: &ManifestFile, c: &avro::Container, ctx: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rewritten.avro").display().to_string();
    let raw = Manifest::parse(&std::fs::read(&mf.manifest_path).unwrap()).unwrap();
    let mut w = ManifestWriter::with_partition_type(
        &path,
        mf.added_snapshot_id,
        mf.content,
        c.meta_str("schema").unwrap(),
        m.metadata.partition_spec_id,
        c.meta_str("partition-spec").unwrap(),
        m.metadata.partition_type.clone(),
        2,
    )
    .unwrap();
    for e in &raw.entries {
        w.add_entry(e).unwrap();
    }
    let mut written = w.close().unwrap();
    assert_eq!(written.partitions, mf.partitions, "{ctx}: partition summaries differ from Java's");
    assert_eq!(written.added_files_count, mf.added_files_count, "{ctx}");
    assert_eq!(written.added_rows_count, mf.added_rows_count, "{ctx}");
    written.sequence_number = mf.sequence_number;
    let again = read_manifest_with_metadata(&written).unwrap();
    assert_eq!(again.entries, m.entries, "{ctx}: rewritten entries differ");
    assert_eq!(again.metadata.partition_type, m.metadata.partition_type, "{ctx}");
}

/// A projected decode keeps exactly the chosen columns' stats of the full decode, and
/// everything else of every entry.
#[test]
fn golden_manifests_projected_stats() {
    let mut files = golden_files("_m0.avro");
    files.retain(|p| !p.to_string_lossy().ends_with("_manifest_list.avro"));
    assert!(!files.is_empty());
    let mut kept_some = false;
    for f in files {
        let ctx = f.file_name().unwrap().to_string_lossy().to_string();
        let bytes = std::fs::read(&f).unwrap();
        let full = Manifest::parse(&bytes).unwrap_or_else(|e| panic!("{ctx}: {e}"));
        for ids in [vec![], vec![1], vec![2, 1, 2], (1..40).collect::<Vec<i32>>()] {
            let proj = StatsProjection::only(ids.iter().copied());
            let got = Manifest::parse_projected(&bytes, &proj).unwrap();
            let mut expected = full.clone();
            for e in &mut expected.entries {
                let d = &mut e.data_file;
                let keep = |id: &i32, _: &mut _| ids.contains(id);
                d.column_sizes.retain(keep);
                d.value_counts.retain(keep);
                d.null_value_counts.retain(keep);
                d.nan_value_counts.retain(keep);
                d.lower_bounds.retain(|id, _| ids.contains(id));
                d.upper_bounds.retain(|id, _| ids.contains(id));
                kept_some |= !ids.is_empty() && !d.lower_bounds.is_empty();
            }
            assert_eq!(got, expected, "{ctx}: stats of {ids:?}");
        }
        assert_eq!(Manifest::parse_projected(&bytes, &StatsProjection::All).unwrap(), full);
    }
    assert!(kept_some, "no golden manifest had bounds for the projected columns");
}

#[test]
fn stats_projection_covers_and_union() {
    let all = StatsProjection::All;
    let a = StatsProjection::only([3, 1, 1]);
    let b = StatsProjection::only([2]);
    assert_eq!(a, StatsProjection::Only(vec![1, 3]));
    assert!(all.covers(&a) && !a.covers(&all) && a.covers(&StatsProjection::only([])));
    assert!(!a.covers(&b) && a.union(&b).covers(&a) && a.union(&b).covers(&b));
    assert_eq!(a.union(&all), StatsProjection::All);
    assert!(a.keeps(3) && !a.keeps(2) && all.keeps(2));
    let many = StatsProjection::only(0..100);
    assert!(many.keeps(99) && !many.keeps(100));
}
