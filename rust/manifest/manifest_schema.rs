//! The v2 manifest entry schema texts, byte for byte as Iceberg Java writes them: the Avro
//! schema (`avro.schema`) and the Iceberg schema JSON (`iceberg.schema`) for a partition type.

use super::manifest_encode::decimal_required_bytes;
use super::schema_json::{self as sj, quote, JsonWriter};
use crate::error::{validation, Result};
use crate::spec::{PrimitiveType, StructType};

/// Java's `AvroSchemaUtil.makeCompatibleName`: valid Avro names pass through.
pub(crate) fn sanitize_avro_name(name: &str) -> Option<String> {
    let valid = name
        .chars()
        .enumerate()
        .all(|(i, ch)| ch == '_' || ch.is_ascii_alphabetic() || (i > 0 && ch.is_ascii_digit()))
        && !name.is_empty();
    if valid {
        return None;
    }
    let mut out = String::new();
    for (i, ch) in name.chars().enumerate() {
        if ch == '_' || ch.is_ascii_alphabetic() || (i > 0 && ch.is_ascii_digit()) {
            out.push(ch);
        } else if i == 0 && ch.is_ascii_digit() {
            out.push('_');
            out.push(ch);
        } else {
            out.push_str(&format!("_x{:X}", ch as u32));
        }
    }
    Some(out)
}

/// The Avro type text of a partition value type, as Java's `TypeToSchema` writes it.
/// Named fixed types are defined once per schema and referenced by name after that.
fn avro_type_text(ty: &PrimitiveType, defined: &mut Vec<String>) -> String {
    let mut fixed = |name: String, size: usize, extra: String| {
        if defined.contains(&name) {
            quote(&name)
        } else {
            let s = format!("{{\"type\":\"fixed\",\"name\":{},\"size\":{size}{extra}}}", quote(&name));
            defined.push(name);
            s
        }
    };
    match ty {
        PrimitiveType::Boolean => "\"boolean\"".into(),
        PrimitiveType::Int => "\"int\"".into(),
        PrimitiveType::Long => "\"long\"".into(),
        PrimitiveType::Float => "\"float\"".into(),
        PrimitiveType::Double => "\"double\"".into(),
        PrimitiveType::Date => "{\"type\":\"int\",\"logicalType\":\"date\"}".into(),
        PrimitiveType::Time => "{\"type\":\"long\",\"logicalType\":\"time-micros\"}".into(),
        PrimitiveType::Timestamp => {
            "{\"type\":\"long\",\"logicalType\":\"timestamp-micros\",\"adjust-to-utc\":false}".into()
        }
        PrimitiveType::Timestamptz => {
            "{\"type\":\"long\",\"logicalType\":\"timestamp-micros\",\"adjust-to-utc\":true}".into()
        }
        PrimitiveType::TimestampNs => {
            "{\"type\":\"long\",\"logicalType\":\"timestamp-nanos\",\"adjust-to-utc\":false}".into()
        }
        PrimitiveType::TimestamptzNs => {
            "{\"type\":\"long\",\"logicalType\":\"timestamp-nanos\",\"adjust-to-utc\":true}".into()
        }
        PrimitiveType::String => "\"string\"".into(),
        // WKB values are bytes; only `void` can partition by a geospatial column (always null).
        PrimitiveType::Binary | PrimitiveType::Geometry { .. } | PrimitiveType::Geography { .. } => {
            "\"bytes\"".into()
        }
        // Only `void` can partition by these, and its values are always null (Java's
        // AvroSchemaUtil maps `unknown` to Avro `null`).
        PrimitiveType::Unknown | PrimitiveType::Variant => "\"null\"".into(),
        PrimitiveType::Uuid => fixed("uuid_fixed".into(), 16, ",\"logicalType\":\"uuid\"".into()),
        PrimitiveType::Fixed(l) => fixed(format!("fixed_{l}"), *l as usize, String::new()),
        PrimitiveType::Decimal { precision, scale } => fixed(
            format!("decimal_{precision}_{scale}"),
            decimal_required_bytes(*precision),
            format!(",\"logicalType\":\"decimal\",\"precision\":{precision},\"scale\":{scale}"),
        ),
    }
}

/// The v2 `manifest_entry` Avro schema text for a partition type, byte for byte as Java.
#[cfg(test)]
pub(crate) fn manifest_entry_schema_v2(partition_type: &StructType) -> Result<String> {
    manifest_entry_schema(partition_type, 2)
}

/// The manifest entry Avro schema of format `version` (2, or 3 with `first_row_id`,
/// `content_offset` and `content_size_in_bytes` as Java's `V3Metadata` places them).
pub(crate) fn manifest_entry_schema(partition_type: &StructType, version: i32) -> Result<String> {
    let v3 = version >= 3;
    let mut defined = Vec::new();
    let mut p = JsonWriter::record("r102");
    for f in &partition_type.fields {
        let ty = f
            .field_type
            .as_primitive()
            .ok_or_else(|| validation(format!("partition field {} is not a primitive type", f.name)))?;
        let text = avro_type_text(ty, &mut defined);
        let sanitized = sanitize_avro_name(&f.name);
        match &sanitized {
            Some(s) => p.field_with(s, &text, None, true, f.id, Some(&f.name)),
            None => p.field(&f.name, &text, None, true, f.id),
        }
    }
    let partition = p.finish();

    let mut d = JsonWriter::record("r2");
    d.field(
        "content",
        "\"int\"",
        Some("Contents of the file: 0=data, 1=position deletes, 2=equality deletes"),
        false,
        134,
    );
    d.field("file_path", "\"string\"", Some("Location URI with FS scheme"), false, 100);
    d.field("file_format", "\"string\"", Some("File format name: avro, orc, or parquet"), false, 101);
    d.field(
        "partition",
        &partition,
        Some("Partition data tuple, schema based on the partition spec"),
        false,
        102,
    );
    d.field("record_count", "\"long\"", Some("Number of records in the file"), false, 103);
    d.field("file_size_in_bytes", "\"long\"", Some("Total file size in bytes"), false, 104);
    d.field(
        "column_sizes",
        &sj::int_map(117, 118, "\"long\""),
        Some("Map of column id to total size on disk"),
        true,
        108,
    );
    d.field(
        "value_counts",
        &sj::int_map(119, 120, "\"long\""),
        Some("Map of column id to total count, including null and NaN"),
        true,
        109,
    );
    d.field(
        "null_value_counts",
        &sj::int_map(121, 122, "\"long\""),
        Some("Map of column id to null value count"),
        true,
        110,
    );
    d.field(
        "nan_value_counts",
        &sj::int_map(138, 139, "\"long\""),
        Some("Map of column id to number of NaN values in the column"),
        true,
        137,
    );
    d.field(
        "lower_bounds",
        &sj::int_map(126, 127, "\"bytes\""),
        Some("Map of column id to lower bound"),
        true,
        125,
    );
    d.field(
        "upper_bounds",
        &sj::int_map(129, 130, "\"bytes\""),
        Some("Map of column id to upper bound"),
        true,
        128,
    );
    d.field("key_metadata", "\"bytes\"", Some("Encryption key metadata blob"), true, 131);
    d.field("split_offsets", &sj::array("\"long\"", 133), Some("Splittable offsets"), true, 132);
    d.field("equality_ids", &sj::array("\"int\"", 136), Some("Equality comparison field IDs"), true, 135);
    d.field("sort_order_id", "\"int\"", Some("Sort order ID"), true, 140);
    if v3 {
        d.field("first_row_id", "\"long\"", Some(FIRST_ROW_ID_DOC), true, 142);
    }
    d.field(
        "referenced_data_file",
        "\"string\"",
        Some("Fully qualified location (URI with FS scheme) of a data file that all deletes reference"),
        true,
        143,
    );
    if v3 {
        d.field("content_offset", "\"long\"", Some(CONTENT_OFFSET_DOC), true, 144);
        d.field("content_size_in_bytes", "\"long\"", Some(CONTENT_SIZE_DOC), true, 145);
    }
    let data_file = d.finish();

    let mut e = JsonWriter::record("manifest_entry");
    e.field("status", "\"int\"", None, false, 0);
    e.field("snapshot_id", "\"long\"", None, true, 1);
    e.field("sequence_number", "\"long\"", None, true, 3);
    e.field("file_sequence_number", "\"long\"", None, true, 4);
    e.field("data_file", &data_file, None, false, 2);
    Ok(e.finish())
}

/// The `iceberg.schema` metadata Java writes next to `avro.schema`: the entry struct as
/// Iceberg schema JSON.
#[cfg(test)]
pub(crate) fn manifest_entry_iceberg_schema_v2(partition_type: &StructType) -> String {
    manifest_entry_iceberg_schema(partition_type, 2)
}

const FIRST_ROW_ID_DOC: &str = "The first row ID assigned to the first row in the data file";
const CONTENT_OFFSET_DOC: &str = "The offset in the file where the content starts";
const CONTENT_SIZE_DOC: &str = "The length of referenced content stored in the file";

/// The `iceberg.schema` metadata of a manifest of format `version` (2 or 3).
pub(crate) fn manifest_entry_iceberg_schema(partition_type: &StructType, version: i32) -> String {
    let field = sj::iceberg_field;
    let map = |k: i32, v: i32, vt: &str| {
        format!("{{\"type\":\"map\",\"key-id\":{k},\"key\":\"int\",\"value-id\":{v},\"value\":\"{vt}\",\"value-required\":true}}")
    };
    let list = |e: i32, et: &str| {
        format!("{{\"type\":\"list\",\"element-id\":{e},\"element\":\"{et}\",\"element-required\":true}}")
    };
    let pfields: Vec<String> = partition_type
        .fields
        .iter()
        .map(|f| field(f.id, &f.name, f.required, &quote(&f.field_type.to_string()), None))
        .collect();
    let partition = format!("{{\"type\":\"struct\",\"fields\":[{}]}}", pfields.join(","));
    let mut df = vec![
        field(
            134,
            "content",
            true,
            "\"int\"",
            Some("Contents of the file: 0=data, 1=position deletes, 2=equality deletes"),
        ),
        field(100, "file_path", true, "\"string\"", Some("Location URI with FS scheme")),
        field(101, "file_format", true, "\"string\"", Some("File format name: avro, orc, or parquet")),
        field(
            102,
            "partition",
            true,
            &partition,
            Some("Partition data tuple, schema based on the partition spec"),
        ),
        field(103, "record_count", true, "\"long\"", Some("Number of records in the file")),
        field(104, "file_size_in_bytes", true, "\"long\"", Some("Total file size in bytes")),
        field(
            108,
            "column_sizes",
            false,
            &map(117, 118, "long"),
            Some("Map of column id to total size on disk"),
        ),
        field(
            109,
            "value_counts",
            false,
            &map(119, 120, "long"),
            Some("Map of column id to total count, including null and NaN"),
        ),
        field(
            110,
            "null_value_counts",
            false,
            &map(121, 122, "long"),
            Some("Map of column id to null value count"),
        ),
        field(
            137,
            "nan_value_counts",
            false,
            &map(138, 139, "long"),
            Some("Map of column id to number of NaN values in the column"),
        ),
        field(125, "lower_bounds", false, &map(126, 127, "binary"), Some("Map of column id to lower bound")),
        field(128, "upper_bounds", false, &map(129, 130, "binary"), Some("Map of column id to upper bound")),
        field(131, "key_metadata", false, "\"binary\"", Some("Encryption key metadata blob")),
        field(132, "split_offsets", false, &list(133, "long"), Some("Splittable offsets")),
        field(135, "equality_ids", false, &list(136, "int"), Some("Equality comparison field IDs")),
        field(140, "sort_order_id", false, "\"int\"", Some("Sort order ID")),
    ];
    if version >= 3 {
        df.push(field(142, "first_row_id", false, "\"long\"", Some(FIRST_ROW_ID_DOC)));
    }
    df.push(field(
        143,
        "referenced_data_file",
        false,
        "\"string\"",
        Some("Fully qualified location (URI with FS scheme) of a data file that all deletes reference"),
    ));
    if version >= 3 {
        df.push(field(144, "content_offset", false, "\"long\"", Some(CONTENT_OFFSET_DOC)));
        df.push(field(145, "content_size_in_bytes", false, "\"long\"", Some(CONTENT_SIZE_DOC)));
    }
    let data_file = format!("{{\"type\":\"struct\",\"fields\":[{}]}}", df.join(","));
    let entry = [
        field(0, "status", true, "\"int\"", None),
        field(1, "snapshot_id", false, "\"long\"", None),
        field(3, "sequence_number", false, "\"long\"", None),
        field(4, "file_sequence_number", false, "\"long\"", None),
        field(2, "data_file", true, &data_file, None),
    ];
    format!("{{\"type\":\"struct\",\"schema-id\":0,\"fields\":[{}]}}", entry.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitizes_like_java() {
        assert_eq!(sanitize_avro_name("ts_day"), None);
        assert_eq!(sanitize_avro_name("1a").as_deref(), Some("_1a"));
        assert_eq!(sanitize_avro_name("a-b").as_deref(), Some("a_x2Db"));
    }
}
