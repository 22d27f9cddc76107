//! Entry points of the fuzz targets (`fuzz/`, `make fuzz`) and of the corpus regression
//! test that `cargo test` runs on stable (`fuzz_corpus_tests.rs`). Each takes bytes an
//! attacker controls (a file another program wrote, a filter a user typed, a task the
//! driver sent) and decodes them as icefloe does. An error is a fine answer; a panic, a
//! hang or an unbounded allocation is a finding. Where a decode succeeds, what icefloe
//! would do next with the value (serialize it into a commit, bind it, evaluate it) runs
//! too, and a value icefloe writes must read back.

use crate::expr::{bind, parse_filter, Expression};
use crate::manifest::{read_manifest_list_bytes, Manifest};
use crate::puffin::{read_deletion_vector, PuffinFile};
use crate::scan::FileScanTask;
use crate::spec::{Literal, PrimitiveType, Schema, TableMetadata};

/// A fuzz target: the `fuzz/fuzz_targets/<name>.rs` binary and the `fuzz/corpus/<name>`
/// folder share its name.
pub type Target = fn(&[u8]);

/// The fuzz targets by name (see the module doc).
pub const TARGETS: &[(&str, Target)] = &[
    ("table_metadata", table_metadata),
    ("manifest", manifest),
    ("manifest_list", manifest_list),
    ("single_value", single_value),
    ("filter", filter),
    ("scan_task", scan_task),
    ("puffin", puffin),
];

/// A `*.metadata.json` (v1, v2, v3): parsed, written as a commit would, and read back.
pub fn table_metadata(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(metadata) = TableMetadata::from_json_str(text, Some("fuzz.metadata.json".into())) else { return };
    let _ = metadata.current_schema().to_json_string();
    if let Ok(written) = metadata.to_json_string() {
        let again = TableMetadata::from_json_str(&written, None);
        assert!(again.is_ok(), "icefloe cannot read metadata it wrote: {again:?}\n{written}");
    }
}

/// A manifest (Avro, any block codec), entries and column stats decoded.
pub fn manifest(data: &[u8]) {
    if let Ok(m) = Manifest::parse(data) {
        for e in &m.entries {
            let _ = e.data_file.file_path.len();
        }
    }
}

/// A manifest list (Avro).
pub fn manifest_list(data: &[u8]) {
    let _ = read_manifest_list_bytes(data);
}

/// The types single values are decoded as (the first input byte picks one).
const TYPES: &[PrimitiveType] = &[
    PrimitiveType::Boolean,
    PrimitiveType::Int,
    PrimitiveType::Long,
    PrimitiveType::Float,
    PrimitiveType::Double,
    PrimitiveType::Decimal { precision: 9, scale: 2 },
    PrimitiveType::Decimal { precision: 38, scale: 10 },
    PrimitiveType::Date,
    PrimitiveType::Time,
    PrimitiveType::Timestamp,
    PrimitiveType::Timestamptz,
    PrimitiveType::TimestampNs,
    PrimitiveType::TimestamptzNs,
    PrimitiveType::String,
    PrimitiveType::Uuid,
    PrimitiveType::Fixed(3),
    PrimitiveType::Binary,
    PrimitiveType::Unknown,
];

/// A single value in its binary form (bounds in manifests) and in its JSON form (defaults,
/// partition values of REST and metadata), both ways.
pub fn single_value(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else { return };
    let Some(ty) = TYPES.get(usize::from(pick) % TYPES.len()) else { return };
    if let Ok(lit) = Literal::from_bytes(ty, rest) {
        let bytes = lit.to_bytes();
        let again = Literal::from_bytes(ty, &bytes);
        assert!(again.is_ok(), "icefloe cannot read the {ty} bound it wrote: {again:?}");
        if let Ok(json) = lit.to_json(ty) {
            let again = Literal::from_json(ty, &json);
            assert!(again.is_ok(), "icefloe cannot read the {ty} JSON value it wrote ({json}): {again:?}");
        }
    }
    if let Ok(json) = serde_json::from_slice::<serde_json::Value>(rest) {
        if let Ok(lit) = Literal::from_json(ty, &json) {
            let _ = lit.to_json(ty);
            let _ = lit.to_bytes();
        }
    }
}

/// The schema filters are bound against: one column of each common type.
fn filter_schema() -> Option<Schema> {
    let json = r#"{"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "id", "required": true, "type": "long"},
        {"id": 2, "name": "data", "required": false, "type": "string"},
        {"id": 3, "name": "ts", "required": false, "type": "timestamptz"},
        {"id": 4, "name": "d", "required": false, "type": "decimal(9, 2)"},
        {"id": 5, "name": "f", "required": false, "type": "double"},
        {"id": 6, "name": "day", "required": false, "type": "date"},
        {"id": 7, "name": "s", "required": false, "type": {"type": "struct", "fields": [
            {"id": 8, "name": "x", "required": false, "type": "int"}]}}]}"#;
    Schema::from_json_str(json).ok()
}

/// A row filter as a user writes it (`scan(row_filter=...)`), bound and serialized, and
/// the same bytes read as the filter JSON a driver sends.
pub fn filter(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Some(schema) = filter_schema() else { return };
    if let Ok(e) = parse_filter(text) {
        let json = e.to_json().to_string();
        let again = Expression::from_json_str(&json);
        assert!(again.is_ok(), "icefloe cannot read the filter JSON it wrote ({json}): {again:?}");
        if let Ok(bound) = bind(&e, &schema, false) {
            let _ = bound.to_json();
        }
    }
    if let Ok(e) = Expression::from_json_str(text) {
        let _ = bind(&e, &schema, true);
    }
}

/// A file scan task as an executor receives it from the driver.
pub fn scan_task(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(task) = FileScanTask::from_json(text) {
        let _ = task.to_json();
    }
}

/// A Puffin file's footer, and a deletion-vector blob.
pub fn puffin(data: &[u8]) {
    let _ = PuffinFile::parse_footer(data, "fuzz.puffin");
    if let Ok(dv) = read_deletion_vector(data, "fuzz.puffin") {
        let _ = dv.cardinality();
    }
}
