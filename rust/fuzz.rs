//! Entry points of the fuzz targets (`fuzz/`, `make fuzz`) and of the corpus regression
//! test that `cargo test` runs on stable (`fuzz_corpus_tests.rs`). Each takes bytes an
//! attacker controls (a file another program wrote, a filter a user typed, a task the
//! driver sent) and decodes them as icefloe does. An error is a fine answer; a panic, a
//! hang or an unbounded allocation is a finding. Where a decode succeeds, what icefloe
//! would do next with the value (serialize it into a commit, bind it, evaluate it) runs
//! too, and a value icefloe writes must read back.

use crate::arrow::delete_cache;
use crate::arrow::equality_deletes::EqualityDeleteSet;
use crate::arrow::position_deletes::load_position_deletes;
use crate::arrow::read_task::{read_task, ReadOptions, FILE_PATH_FIELD_ID, ROW_POS_FIELD_ID};
use crate::error::Result;
use crate::expr::{bind, parse_filter, Expression};
use crate::io::{delete_file as delete_object, write_file};
use crate::manifest::{read_manifest_list_bytes, DataContentType, DataFile, Manifest};
use crate::puffin::{read_deletion_vector, PuffinFile};
use crate::scan::{DeleteFileRef, FileScanTask};
use crate::spec::{Literal, NestedField, PrimitiveType, Schema, TableMetadata};

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
    ("parquet_read", parquet_read),
    ("delete_file", delete_file),
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

/// The table schema Parquet inputs are read as: that of Iceberg Java's all-types golden
/// table (`tests/data/golden/all_types_metadata.json`: every common primitive, nested
/// structs, lists, maps, a list of structs and a map of lists), so its Java-written data
/// file is a seed that reaches every column reader.
const ALL_TYPES_SCHEMA: &str = r#"{"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "b", "required": false, "type": "boolean"},
    {"id": 2, "name": "i", "required": false, "type": "int"},
    {"id": 3, "name": "l", "required": false, "type": "long"},
    {"id": 4, "name": "f", "required": false, "type": "float"},
    {"id": 5, "name": "d", "required": false, "type": "double"},
    {"id": 6, "name": "dec9", "required": false, "type": "decimal(9, 2)"},
    {"id": 7, "name": "dec38", "required": false, "type": "decimal(38, 10)"},
    {"id": 8, "name": "dt", "required": false, "type": "date"},
    {"id": 9, "name": "ts", "required": false, "type": "timestamptz"},
    {"id": 10, "name": "ts_ntz", "required": false, "type": "timestamp"},
    {"id": 11, "name": "s", "required": false, "type": "string"},
    {"id": 12, "name": "bin", "required": false, "type": "binary"},
    {"id": 13, "name": "st", "required": false, "type": {"type": "struct", "fields": [
        {"id": 18, "name": "a", "required": false, "type": "int"},
        {"id": 19, "name": "b", "required": false, "type": "string"},
        {"id": 20, "name": "inner", "required": false, "type": {"type": "struct", "fields": [
            {"id": 21, "name": "x", "required": false, "type": "double"}]}}]}},
    {"id": 14, "name": "arr", "required": false, "type": {"type": "list", "element-id": 22,
        "element": "int", "element-required": false}},
    {"id": 15, "name": "m", "required": false, "type": {"type": "map", "key-id": 23, "key": "string",
        "value-id": 24, "value": "int", "value-required": false}},
    {"id": 16, "name": "arr_st", "required": false, "type": {"type": "list", "element-id": 25,
        "element": {"type": "struct", "fields": [
            {"id": 26, "name": "x", "required": false, "type": "int"},
            {"id": 27, "name": "y", "required": false, "type": "string"}]}, "element-required": false}},
    {"id": 17, "name": "m_arr", "required": false, "type": {"type": "map", "key-id": 28, "key": "int",
        "value-id": 29, "value": {"type": "list", "element-id": 30, "element": "string",
        "element-required": false}, "value-required": false}}]}"#;

/// Where the Parquet targets put their inputs (the process-wide in-memory store).
const DATA_FILE: &str = "memory://fuzz/data/data.parquet";
const POS_DELETE_FILE: &str = "memory://fuzz/data/pos-deletes.parquet";
const EQ_DELETE_FILE: &str = "memory://fuzz/data/eq-deletes.parquet";

/// Equality key sets the delete inputs are read with (`flags` bits 2-3 pick one): a long
/// (the one-long fast path), a string, an int and a string, a decimal.
const EQUALITY_IDS: [&[i32]; 4] = [&[3], &[11], &[2, 11], &[6]];

/// The Parquet targets' `init`: libFuzzer's panic hook aborts on every panic, also one
/// `arrow::guard` turns into an error (parquet-rs's own, see there); with this, a guarded
/// panic unwinds into its error and every other panic still aborts where it happened.
pub fn install_panic_hook() {
    crate::arrow::guard::install_panic_hook(|_| {});
}

/// The next length-prefixed part of a framed input (a little-endian u32, then that many
/// bytes, or what is left).
fn take_part<'a>(data: &mut &'a [u8]) -> Option<&'a [u8]> {
    let (len, rest) = data.split_first_chunk::<4>()?;
    let n = usize::try_from(u32::from_le_bytes(*len)).ok()?.min(rest.len());
    let (part, rest) = rest.split_at(n);
    *data = rest;
    Some(part)
}

fn size_of(bytes: &[u8]) -> i64 {
    i64::try_from(bytes.len()).unwrap_or(i64::MAX)
}

/// A data file read as an executor reads a scan task, with a position-delete file and an
/// equality-delete file applied. Input: a flags byte, the data file (u32 length prefix),
/// the position-delete file (u32 length prefix), the equality-delete file (the rest).
/// Flags: bit 0 attaches the position deletes, bit 1 the equality deletes (bits 2-3 pick
/// their key), bit 4 a residual filter (row-group pruning and row filtering), bit 5 reads
/// the second half of the file's bytes only (a split), bit 6 projects `_file`, `_pos` and
/// three columns, bit 7 returns only the rows the equality deletes remove.
pub fn parquet_read(data: &[u8]) {
    let _ = parquet_read_rows(data);
}

/// `parquet_read`, returning the number of rows read (the seeds' test checks them).
pub fn parquet_read_rows(data: &[u8]) -> Result<usize> {
    let Some((&flags, mut rest)) = data.split_first() else { return Ok(0) };
    let Some(file) = take_part(&mut rest) else { return Ok(0) };
    let pos = take_part(&mut rest).unwrap_or_default();
    let eq = rest;
    let _one_at_a_time = memory_files();
    delete_cache::clear();
    let rows = read_with_deletes(flags, file, pos, eq);
    delete_cache::clear();
    for path in [DATA_FILE, POS_DELETE_FILE, EQ_DELETE_FILE] {
        let _ = delete_object(path);
    }
    rows
}

/// The Parquet targets' in-memory files, one input at a time (`cargo test` runs the corpus
/// on several threads of one process).
fn memory_files() -> std::sync::MutexGuard<'static, ()> {
    static FILES: std::sync::Mutex<()> = std::sync::Mutex::new(());
    FILES.lock().unwrap_or_else(|p| p.into_inner())
}

fn read_with_deletes(flags: u8, file: &[u8], pos: &[u8], eq: &[u8]) -> Result<usize> {
    let schema = Schema::from_json_str(ALL_TYPES_SCHEMA)?;
    write_file(DATA_FILE, file)?;
    let size = size_of(file);
    let mut task = FileScanTask::whole_file(DataFile::new_data(DATA_FILE, 1000, size), 1);
    if flags & 1 != 0 {
        write_file(POS_DELETE_FILE, pos)?;
        let mut f = DataFile::new_data(POS_DELETE_FILE, 100, size_of(pos));
        f.content = DataContentType::PositionDeletes;
        task.deletes.push(DeleteFileRef { file: f, data_sequence_number: 2 });
    }
    if flags & 2 != 0 {
        write_file(EQ_DELETE_FILE, eq)?;
        let mut f = DataFile::new_data(EQ_DELETE_FILE, 100, size_of(eq));
        f.content = DataContentType::EqualityDeletes;
        let ids = EQUALITY_IDS.get(usize::from(flags >> 2) & 3).copied().unwrap_or(&[3]);
        f.equality_ids = Some(ids.to_vec());
        task.deletes.push(DeleteFileRef { file: f, data_sequence_number: 2 });
    }
    if flags & 16 != 0 {
        let filter = parse_filter("l > 3 and (s != 'x' or dec9 < 10.5) and ts is not null")?;
        task.residual = Some(bind(&filter, &schema, true)?.to_json()?);
    }
    if flags & 32 != 0 {
        task.start = size / 2;
        task.length = size - size / 2;
    }
    let projected = if flags & 64 != 0 {
        let mut fields: Vec<NestedField> =
            schema.select(&["l", "s", "m_arr"], true)?.fields().iter().map(|f| f.as_ref().clone()).collect();
        fields.push(NestedField::required(FILE_PATH_FIELD_ID, "_file", PrimitiveType::String.into()));
        fields.push(NestedField::required(ROW_POS_FIELD_ID, "_pos", PrimitiveType::Long.into()));
        Schema::new(0, fields, vec![])?
    } else {
        schema
    };
    let opts =
        ReadOptions { batch_size: 7, equality_deleted_only: flags & 128 != 0, ..ReadOptions::default() };
    let mut rows = 0;
    for batch in read_task(&task, &projected, opts)? {
        rows += batch?.num_rows();
    }
    Ok(rows)
}

/// A delete file on its own: as a position-delete file, and as an equality-delete file for
/// each key set of `EQUALITY_IDS`, with the key types from the table schema and from the
/// file itself (a key column the projection lacks).
pub fn delete_file(data: &[u8]) {
    let _one_at_a_time = memory_files();
    let _ = load_delete_file(data);
    let _ = delete_object(EQ_DELETE_FILE);
}

fn load_delete_file(data: &[u8]) -> Result<()> {
    let schema = Schema::from_json_str(ALL_TYPES_SCHEMA)?;
    write_file(EQ_DELETE_FILE, data)?;
    if let Ok(index) = load_position_deletes(EQ_DELETE_FILE) {
        let _ = index.positions(DATA_FILE).len();
    }
    let from_table = |id: i32| schema.field_by_id(id).map(|f| f.as_ref().clone());
    let from_file = |_: i32| None;
    for ids in EQUALITY_IDS {
        for known in [&from_table as &dyn Fn(i32) -> Option<NestedField>, &from_file] {
            if let Ok(set) = EqualityDeleteSet::load(ids, &[EQ_DELETE_FILE], known) {
                let _ = set.len();
            }
        }
    }
    Ok(())
}
