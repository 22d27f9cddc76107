//! Reader resource bounds at full scale (issue 13; `make bench-bounds`, not in `make test`):
//! each case runs in its own process (`cargo bench --bench resource_bounds -- <case>`) and
//! prints its outcome, wall time and the process's peak RSS (`VmHWM`).
//!
//! - `eq100m`: an equality-delete file of 100,000,000 distinct long keys (`BOUNDS_KEYS`)
//!   loaded as a reader loads it: under the default 2 GB budget a `ResourceLimit` error;
//!   with `ICEFLOE_EQUALITY_DELETE_MEMORY_MB` raised, a complete set.
//! - `wide1m`: table metadata whose schema has 1,000,000 columns (`BOUNDS_COLUMNS`), parsed.
//! - `manifest10g`: a manifest list entry recording a 10 GB manifest, read.

use std::sync::Arc;
use std::time::Instant;

use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use icefloe::arrow::equality_deletes::EqualityDeleteSet;
use icefloe::arrow::schema::schema_to_arrow;
use icefloe::manifest::{read_manifest, ManifestContent, ManifestFile};
use icefloe::spec::{NestedField, PrimitiveType, Schema, TableMetadata};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

fn peak_rss_mb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb >> 10)
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn eq100m() {
    let keys = env_usize("BOUNDS_KEYS", 100_000_000) as i64;
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("eq.parquet");
    let field = NestedField::optional(1, "id", PrimitiveType::Long.into());
    let schema = Schema::new(0, vec![field.clone()], vec![]).expect("schema");
    let arrow = Arc::new(schema_to_arrow(&schema).expect("arrow schema"));
    let t = Instant::now();
    let props = WriterProperties::builder().set_compression(Compression::SNAPPY).build();
    let file = std::fs::File::create(&path).expect("create");
    let mut w = ArrowWriter::try_new(file, arrow.clone(), Some(props)).expect("writer");
    let chunk = 1 << 20;
    let mut start = 0i64;
    while start < keys {
        let end = (start + chunk).min(keys);
        let col: ArrayRef = Arc::new(Int64Array::from_iter_values(start..end));
        w.write(&RecordBatch::try_new(arrow.clone(), vec![col]).expect("batch")).expect("write");
        start = end;
    }
    w.close().expect("close");
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    println!("eq100m: wrote {keys} keys ({} MB) in {:.1} s", size >> 20, t.elapsed().as_secs_f64());
    let p = path.to_str().expect("utf-8 path");
    let t = Instant::now();
    let budget =
        std::env::var("ICEFLOE_EQUALITY_DELETE_MEMORY_MB").unwrap_or_else(|_| "2048 (default)".into());
    match EqualityDeleteSet::load(&[1], &[p], &|_| Some(field.clone())) {
        Ok(set) => println!(
            "eq100m: budget {budget} MB: loaded {} keys ({} MB by its estimate) in {:.1} s, peak RSS {} MB",
            set.len(),
            set.memory_bytes() >> 20,
            t.elapsed().as_secs_f64(),
            peak_rss_mb()
        ),
        Err(e) => println!(
            "eq100m: budget {budget} MB: {:?} after {:.1} s, peak RSS {} MB: {e}",
            e.kind(),
            t.elapsed().as_secs_f64(),
            peak_rss_mb()
        ),
    }
}

fn wide1m() {
    let n = env_usize("BOUNDS_COLUMNS", 1_000_000);
    let mut fields = String::with_capacity(n * 64);
    for i in 0..n {
        if i > 0 {
            fields.push(',');
        }
        fields
            .push_str(&format!(r#"{{"id": {}, "name": "c{i}", "required": false, "type": "long"}}"#, i + 1));
    }
    let text = format!(
        r#"{{"format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1", "location": "/tmp/wide",
        "last-sequence-number": 0, "last-updated-ms": 1, "last-column-id": {n}, "current-schema-id": 0,
        "schemas": [{{"type": "struct", "schema-id": 0, "fields": [{fields}]}}], "default-spec-id": 0,
        "partition-specs": [{{"spec-id": 0, "fields": []}}], "last-partition-id": 999,
        "default-sort-order-id": 0, "sort-orders": [{{"order-id": 0, "fields": []}}], "properties": {{}},
        "current-snapshot-id": -1, "snapshots": [], "snapshot-log": [], "metadata-log": []}}"#
    );
    drop(fields);
    let before = peak_rss_mb();
    let t = Instant::now();
    match TableMetadata::from_json_str(&text, None) {
        Ok(m) => println!(
            "wide1m: {n} columns ({} MB of JSON) parsed in {:.1} s; peak RSS {} MB (before: {before} MB); {} fields",
            text.len() >> 20,
            t.elapsed().as_secs_f64(),
            peak_rss_mb(),
            m.current_schema().fields().len()
        ),
        Err(e) => println!("wide1m: {e} after {:.1} s, peak RSS {} MB", t.elapsed().as_secs_f64(), peak_rss_mb()),
    }
}

fn manifest10g() {
    let mf = ManifestFile {
        manifest_path: "/nonexistent/10g-m0.avro".into(),
        manifest_length: 10 << 30,
        partition_spec_id: 0,
        content: ManifestContent::Data,
        sequence_number: 1,
        min_sequence_number: 1,
        added_snapshot_id: 1,
        added_files_count: None,
        existing_files_count: None,
        deleted_files_count: None,
        added_rows_count: None,
        existing_rows_count: None,
        deleted_rows_count: None,
        partitions: None,
        key_metadata: None,
        first_row_id: None,
    };
    let t = Instant::now();
    match read_manifest(&mf) {
        Ok(_) => println!("manifest10g: read (unexpected)"),
        Err(e) => println!(
            "manifest10g: {:?} in {:.3} s, peak RSS {} MB: {e}",
            e.kind(),
            t.elapsed().as_secs_f64(),
            peak_rss_mb()
        ),
    }
}

fn main() {
    // `cargo bench` passes `--bench`; the case is the first other argument.
    let case = std::env::args().skip(1).find(|a| !a.starts_with("--")).unwrap_or_default();
    match case.as_str() {
        "eq100m" => eq100m(),
        "wide1m" => wide1m(),
        "manifest10g" => manifest10g(),
        other => {
            eprintln!("resource_bounds: unknown case '{other}' (eq100m, wide1m, manifest10g)");
            std::process::exit(2);
        }
    }
}
