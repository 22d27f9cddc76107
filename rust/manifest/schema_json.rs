//! Builds Avro schema JSON text the way Iceberg Java (Avro's `Schema.toString`) prints it:
//! compact, keys in Avro's order (`name`, `type`, `doc`, `default`, then `field-id`).

/// Quotes a JSON string.
pub(crate) fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

/// A record schema under construction.
pub(crate) struct JsonWriter {
    out: String,
    first: bool,
}

impl JsonWriter {
    pub fn record(name: &str) -> Self {
        JsonWriter {
            out: format!("{{\"type\":\"record\",\"name\":{},\"fields\":[", quote(name)),
            first: true,
        }
    }

    /// Adds a field; `optional` wraps the type as `["null", T]` with a null default.
    pub fn field(&mut self, name: &str, ty: &str, doc: Option<&str>, optional: bool, field_id: i32) {
        self.field_with(name, ty, doc, optional, field_id, None);
    }

    /// Adds a field, with `iceberg-field-name` when the Avro name was sanitised.
    pub fn field_with(
        &mut self,
        name: &str,
        ty: &str,
        doc: Option<&str>,
        optional: bool,
        field_id: i32,
        iceberg_name: Option<&str>,
    ) {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        self.out.push_str("{\"name\":");
        self.out.push_str(&quote(name));
        self.out.push_str(",\"type\":");
        // An `unknown` value is Avro `null` itself, not a union with it (Java's AvroSchemaUtil).
        if optional && ty != "\"null\"" {
            self.out.push_str("[\"null\",");
            self.out.push_str(ty);
            self.out.push(']');
        } else {
            self.out.push_str(ty);
        }
        if let Some(d) = doc {
            self.out.push_str(",\"doc\":");
            self.out.push_str(&quote(d));
        }
        if optional {
            self.out.push_str(",\"default\":null");
        }
        if let Some(n) = iceberg_name {
            self.out.push_str(",\"iceberg-field-name\":");
            self.out.push_str(&quote(n));
        }
        self.out.push_str(",\"field-id\":");
        self.out.push_str(&field_id.to_string());
        self.out.push('}');
    }

    pub fn finish(mut self) -> String {
        self.out.push_str("]}");
        self.out
    }
}

/// An array with its `element-id`.
pub(crate) fn array(items: &str, element_id: i32) -> String {
    format!("{{\"type\":\"array\",\"items\":{items},\"element-id\":{element_id}}}")
}

/// Iceberg's int-keyed map: an array of `k<key>_v<value>` records, `logicalType` map.
pub(crate) fn int_map(key_id: i32, value_id: i32, value_ty: &str) -> String {
    let mut r = JsonWriter::record(&format!("k{key_id}_v{value_id}"));
    r.field("key", "\"int\"", None, false, key_id);
    r.field("value", value_ty, None, false, value_id);
    format!("{{\"type\":\"array\",\"items\":{},\"logicalType\":\"map\"}}", r.finish())
}

/// One field of an Iceberg schema JSON, keys in Java's order (`id`, `name`, `required`,
/// `type`, `doc`); `ty` is already JSON text.
pub(crate) fn iceberg_field(id: i32, name: &str, required: bool, ty: &str, doc: Option<&str>) -> String {
    let mut s = format!("{{\"id\":{id},\"name\":{},\"required\":{required},\"type\":{ty}", quote(name));
    if let Some(d) = doc {
        s.push_str(",\"doc\":");
        s.push_str(&quote(d));
    }
    s.push('}');
    s
}
