//! Iceberg data types: primitives, struct, list, map, and their JSON form.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{json, Map, Value};

use crate::error::{invalid_data, Result};

/// Iceberg primitive types (spec "Primitive Types"), including the v3 nanosecond timestamps.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PrimitiveType {
    Boolean,
    Int,
    Long,
    Float,
    Double,
    Decimal {
        precision: u32,
        scale: u32,
    },
    Date,
    Time,
    Timestamp,
    Timestamptz,
    TimestampNs,
    TimestamptzNs,
    String,
    Uuid,
    Fixed(u64),
    Binary,
    /// v3 `unknown`: a column of nulls only, never stored in data files (spec "Primitive
    /// Types"); reads as an Arrow `Null` column.
    Unknown,
    /// v3 `variant`: semi-structured values in the Variant binary encoding (a `metadata` and a
    /// `value` buffer per row). Read as an Arrow struct of the two binary buffers, as Parquet
    /// stores an unshredded variant; not written by icefloe yet.
    Variant,
    /// v3 `geometry(C)`: WKB values with planar edges in the coordinate reference system `C`
    /// (default `OGC:CRS84`). Arrow `Binary` tagged `geoarrow.wkb`; Parquet BYTE_ARRAY with the
    /// GEOMETRY logical type. The CRS is kept as written and compared ignoring case ([`Crs`]).
    Geometry {
        crs: Crs,
    },
    /// v3 `geography(C, A)`: WKB values whose edges follow algorithm `A` (default `spherical`)
    /// on the CRS `C` (default `OGC:CRS84`).
    Geography {
        crs: Crs,
        algorithm: EdgeAlgorithm,
    },
}

/// The coordinate reference system of a `geometry` / `geography`, kept as written and compared
/// as Java's `GeometryType.equals` compares it: ignoring case, character by character
/// (`String.equalsIgnoreCase`), so `geometry(ogc:crs84)` from another writer is the same type
/// as icefloe's `geometry(OGC:CRS84)`. Hashing folds case the same way, as Eq requires.
#[derive(Debug, Clone)]
pub struct Crs(String);

impl Crs {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Each character as `equalsIgnoreCase` compares it: lower case of its (single-character)
    /// upper case.
    fn folded(&self) -> impl Iterator<Item = char> + '_ {
        fn single(mut it: impl Iterator<Item = char>, c: char) -> char {
            match (it.next(), it.next()) {
                (Some(m), None) => m,
                _ => c,
            }
        }
        self.0.chars().map(|c| {
            let upper = single(c.to_uppercase(), c);
            single(upper.to_lowercase(), upper)
        })
    }
}

impl PartialEq for Crs {
    fn eq(&self, other: &Self) -> bool {
        self.folded().eq(other.folded())
    }
}

impl Eq for Crs {}

impl std::hash::Hash for Crs {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        for c in self.folded() {
            c.hash(state);
        }
    }
}

impl std::ops::Deref for Crs {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Crs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for Crs {
    fn from(s: &str) -> Self {
        Crs(s.to_string())
    }
}

impl From<String> for Crs {
    fn from(s: String) -> Self {
        Crs(s)
    }
}

/// The CRS of a `geometry` / `geography` whose type names none (spec "Primitive Types").
pub const DEFAULT_CRS: &str = "OGC:CRS84";

/// How a `geography`'s edges between two points are interpolated (the spec's algorithms).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum EdgeAlgorithm {
    #[default]
    Spherical,
    Vincenty,
    Thomas,
    Andoyer,
    Karney,
}

impl EdgeAlgorithm {
    /// The spec's lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            EdgeAlgorithm::Spherical => "spherical",
            EdgeAlgorithm::Vincenty => "vincenty",
            EdgeAlgorithm::Thomas => "thomas",
            EdgeAlgorithm::Andoyer => "andoyer",
            EdgeAlgorithm::Karney => "karney",
        }
    }

    /// Parses a name in any case, as Java's `EdgeAlgorithm.fromName`.
    pub fn parse(name: &str) -> Result<Self> {
        let name = name.trim();
        Ok(match name.to_ascii_lowercase().as_str() {
            "spherical" => EdgeAlgorithm::Spherical,
            "vincenty" => EdgeAlgorithm::Vincenty,
            "thomas" => EdgeAlgorithm::Thomas,
            "andoyer" => EdgeAlgorithm::Andoyer,
            "karney" => EdgeAlgorithm::Karney,
            _ => {
                return Err(invalid_data(format!(
                "expected an edge interpolation algorithm (spherical, vincenty, thomas, andoyer, karney), \
                     found '{name}'"
            )))
            }
        })
    }
}

impl PrimitiveType {
    /// `geometry` or `geography`: WKB values, never compared by their bytes.
    pub fn is_geospatial(&self) -> bool {
        matches!(self, PrimitiveType::Geometry { .. } | PrimitiveType::Geography { .. })
    }
}

/// Parses `geometry`, `geometry(C)`, `geography`, `geography(C)` and `geography(C, A)` in any
/// case with optional whitespace, as Java's `Types.fromTypeName`; `None` for other names.
fn parse_geospatial(t: &str) -> Option<Result<PrimitiveType>> {
    let lower = t.to_ascii_lowercase();
    let (is_geometry, rest) = if let Some(r) = lower.strip_prefix("geometry") {
        (true, &t[t.len() - r.len()..])
    } else if let Some(r) = lower.strip_prefix("geography") {
        (false, &t[t.len() - r.len()..])
    } else {
        return None;
    };
    let rest = rest.trim();
    let params = if rest.is_empty() {
        None
    } else {
        match rest.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
            Some(inner) => Some(inner),
            None => return None,
        }
    };
    let bad_crs = || invalid_data(format!("invalid CRS in type '{t}': expected a non-empty CRS"));
    Some((|| {
        let Some(inner) = params else {
            return Ok(if is_geometry {
                PrimitiveType::Geometry { crs: DEFAULT_CRS.into() }
            } else {
                PrimitiveType::Geography { crs: DEFAULT_CRS.into(), algorithm: EdgeAlgorithm::Spherical }
            });
        };
        if is_geometry {
            let crs = inner.trim();
            if crs.is_empty() || crs.contains(')') {
                return Err(bad_crs());
            }
            return Ok(PrimitiveType::Geometry { crs: crs.into() });
        }
        let (crs, algorithm) = match inner.split_once(',') {
            Some((crs, alg)) => (crs.trim(), EdgeAlgorithm::parse(alg)?),
            None => (inner.trim(), EdgeAlgorithm::Spherical),
        };
        if crs.is_empty() {
            return Err(bad_crs());
        }
        Ok(PrimitiveType::Geography { crs: crs.into(), algorithm })
    })())
}

impl PrimitiveType {
    /// Parses the JSON/string form: `long`, `decimal(9, 2)` (with or without the space), `fixed[16]`.
    pub fn parse(s: &str) -> Result<Self> {
        let t = s.trim();
        let p = match t {
            "boolean" => PrimitiveType::Boolean,
            "int" => PrimitiveType::Int,
            "long" => PrimitiveType::Long,
            "float" => PrimitiveType::Float,
            "double" => PrimitiveType::Double,
            "date" => PrimitiveType::Date,
            "time" => PrimitiveType::Time,
            "timestamp" => PrimitiveType::Timestamp,
            "timestamptz" => PrimitiveType::Timestamptz,
            "timestamp_ns" => PrimitiveType::TimestampNs,
            "timestamptz_ns" => PrimitiveType::TimestamptzNs,
            "string" => PrimitiveType::String,
            "uuid" => PrimitiveType::Uuid,
            "binary" => PrimitiveType::Binary,
            "unknown" => PrimitiveType::Unknown,
            "variant" => PrimitiveType::Variant,
            _ => {
                if let Some(inner) = t.strip_prefix("decimal(").and_then(|r| r.strip_suffix(')')) {
                    let (p, s) = inner
                        .split_once(',')
                        .ok_or_else(|| invalid_data(format!("expected decimal(P, S), found '{t}'")))?;
                    let precision = p
                        .trim()
                        .parse::<u32>()
                        .map_err(|_| invalid_data(format!("bad decimal precision in '{t}'")))?;
                    let scale = s
                        .trim()
                        .parse::<u32>()
                        .map_err(|_| invalid_data(format!("bad decimal scale in '{t}'")))?;
                    if precision == 0 || precision > 38 || scale > precision {
                        return Err(invalid_data(format!(
                            "expected decimal precision 1..=38 and scale <= precision, found '{t}'"
                        )));
                    }
                    PrimitiveType::Decimal { precision, scale }
                } else if let Some(inner) = t.strip_prefix("fixed[").and_then(|r| r.strip_suffix(']')) {
                    let len = inner
                        .trim()
                        .parse::<u64>()
                        .map_err(|_| invalid_data(format!("bad fixed length in '{t}'")))?;
                    PrimitiveType::Fixed(len)
                } else if let Some(geo) = parse_geospatial(t) {
                    geo?
                } else {
                    return Err(invalid_data(format!("unknown Iceberg primitive type '{t}'")));
                }
            }
        };
        Ok(p)
    }
}

impl fmt::Display for PrimitiveType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PrimitiveType::Boolean => f.write_str("boolean"),
            PrimitiveType::Int => f.write_str("int"),
            PrimitiveType::Long => f.write_str("long"),
            PrimitiveType::Float => f.write_str("float"),
            PrimitiveType::Double => f.write_str("double"),
            // Java writes the space; readers accept both.
            PrimitiveType::Decimal { precision, scale } => write!(f, "decimal({precision}, {scale})"),
            PrimitiveType::Date => f.write_str("date"),
            PrimitiveType::Time => f.write_str("time"),
            PrimitiveType::Timestamp => f.write_str("timestamp"),
            PrimitiveType::Timestamptz => f.write_str("timestamptz"),
            PrimitiveType::TimestampNs => f.write_str("timestamp_ns"),
            PrimitiveType::TimestamptzNs => f.write_str("timestamptz_ns"),
            PrimitiveType::String => f.write_str("string"),
            PrimitiveType::Uuid => f.write_str("uuid"),
            PrimitiveType::Fixed(l) => write!(f, "fixed[{l}]"),
            PrimitiveType::Binary => f.write_str("binary"),
            PrimitiveType::Unknown => f.write_str("unknown"),
            PrimitiveType::Variant => f.write_str("variant"),
            // Java 1.12 names the CRS and algorithm even when they are the defaults.
            PrimitiveType::Geometry { crs } => write!(f, "geometry({crs})"),
            PrimitiveType::Geography { crs, algorithm } => {
                write!(f, "geography({crs}, {})", algorithm.name())
            }
        }
    }
}

/// A field of a struct (or the element/key/value of a list/map) with its Iceberg field id.
#[derive(Debug, Clone, PartialEq)]
pub struct NestedField {
    pub id: i32,
    pub name: String,
    pub required: bool,
    pub field_type: Type,
    pub doc: Option<String>,
    /// v3 defaults, kept as their JSON single-value form.
    pub initial_default: Option<Value>,
    pub write_default: Option<Value>,
}

pub type NestedFieldRef = Arc<NestedField>;

/// Which of a field's v3 default values (spec "Default values").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefaultKind {
    /// `initial-default`: the value of rows in data files written before the field existed.
    Initial,
    /// `write-default`: the value writers store when their input does not supply the field.
    Write,
}

impl DefaultKind {
    /// The spec's (and the schema JSON's) name of the default.
    pub fn as_str(self) -> &'static str {
        match self {
            DefaultKind::Initial => "initial-default",
            DefaultKind::Write => "write-default",
        }
    }
}

impl NestedField {
    pub fn new(id: i32, name: impl Into<String>, field_type: Type, required: bool) -> Self {
        Self {
            id,
            name: name.into(),
            required,
            field_type,
            doc: None,
            initial_default: None,
            write_default: None,
        }
    }

    pub fn required(id: i32, name: impl Into<String>, field_type: Type) -> Self {
        Self::new(id, name, field_type, true)
    }

    pub fn optional(id: i32, name: impl Into<String>, field_type: Type) -> Self {
        Self::new(id, name, field_type, false)
    }

    pub fn with_doc(mut self, doc: impl Into<String>) -> Self {
        self.doc = Some(doc.into());
        self
    }

    /// Sets both defaults, as Java's `addColumn(..., default)` does.
    pub fn with_defaults(mut self, initial: Option<Value>, write: Option<Value>) -> Self {
        self.initial_default = initial;
        self.write_default = write;
        self
    }

    /// The field's default of `kind` in its JSON single-value form; `None` when it is unset or
    /// JSON null (the spec's null default).
    pub fn default_json(&self, kind: DefaultKind) -> Option<&Value> {
        match kind {
            DefaultKind::Initial => self.initial_default.as_ref(),
            DefaultKind::Write => self.write_default.as_ref(),
        }
        .filter(|v| !v.is_null())
    }

    fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("id".into(), json!(self.id));
        m.insert("name".into(), json!(self.name));
        m.insert("required".into(), json!(self.required));
        m.insert("type".into(), self.field_type.to_json());
        if let Some(d) = &self.doc {
            m.insert("doc".into(), json!(d));
        }
        if let Some(d) = &self.initial_default {
            m.insert("initial-default".into(), d.clone());
        }
        if let Some(d) = &self.write_default {
            m.insert("write-default".into(), d.clone());
        }
        Value::Object(m)
    }

    fn from_json(v: &Value) -> Result<Self> {
        let o = v.as_object().ok_or_else(|| invalid_data(format!("expected a field object, found {v}")))?;
        let id = get_i32(o, "id", "field")?;
        let name = o
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid_data(format!("field {id} has no string 'name'")))?;
        let required = o
            .get("required")
            .and_then(Value::as_bool)
            .ok_or_else(|| invalid_data(format!("field {id} has no boolean 'required'")))?;
        let ty = o.get("type").ok_or_else(|| invalid_data(format!("field {id} has no 'type'")))?;
        Ok(NestedField {
            id,
            name: name.to_string(),
            required,
            field_type: Type::from_json(ty)
                .map_err(|e| e.with_context("column", format!("{name} (id {id})")))?,
            doc: o.get("doc").and_then(Value::as_str).map(str::to_string),
            initial_default: o.get("initial-default").cloned(),
            write_default: o.get("write-default").cloned(),
        })
    }
}

/// A struct type: an ordered list of fields.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StructType {
    pub fields: Vec<NestedFieldRef>,
}

impl StructType {
    pub fn new(fields: Vec<NestedField>) -> Self {
        Self { fields: fields.into_iter().map(Arc::new).collect() }
    }

    pub fn field_by_id(&self, id: i32) -> Option<&NestedFieldRef> {
        self.fields.iter().find(|f| f.id == id)
    }

    pub fn field_by_name(&self, name: &str) -> Option<&NestedFieldRef> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// A list type; the element is a field so it carries an id and a required flag.
#[derive(Debug, Clone, PartialEq)]
pub struct ListType {
    pub element_field: NestedFieldRef,
}

/// A map type; key and value are fields with ids. Keys are always required.
#[derive(Debug, Clone, PartialEq)]
pub struct MapType {
    pub key_field: NestedFieldRef,
    pub value_field: NestedFieldRef,
}

/// Any Iceberg type.
#[derive(Debug, Clone, PartialEq)]
pub enum Type {
    Primitive(PrimitiveType),
    Struct(StructType),
    List(ListType),
    Map(MapType),
}

impl From<PrimitiveType> for Type {
    fn from(p: PrimitiveType) -> Self {
        Type::Primitive(p)
    }
}

impl Type {
    pub fn is_primitive(&self) -> bool {
        matches!(self, Type::Primitive(_))
    }

    pub fn as_primitive(&self) -> Option<&PrimitiveType> {
        match self {
            Type::Primitive(p) => Some(p),
            _ => None,
        }
    }

    pub fn as_struct(&self) -> Option<&StructType> {
        match self {
            Type::Struct(s) => Some(s),
            _ => None,
        }
    }

    pub fn list(element_id: i32, element: Type, element_required: bool) -> Type {
        Type::List(ListType {
            element_field: Arc::new(NestedField::new(element_id, "element", element, element_required)),
        })
    }

    pub fn map(key_id: i32, key: Type, value_id: i32, value: Type, value_required: bool) -> Type {
        Type::Map(MapType {
            key_field: Arc::new(NestedField::new(key_id, "key", key, true)),
            value_field: Arc::new(NestedField::new(value_id, "value", value, value_required)),
        })
    }

    /// The spec's JSON form: a string for primitives, an object for nested types.
    pub fn to_json(&self) -> Value {
        match self {
            Type::Primitive(p) => Value::String(p.to_string()),
            Type::Struct(s) => json!({
                "type": "struct",
                "fields": s.fields.iter().map(|f| f.to_json()).collect::<Vec<_>>(),
            }),
            Type::List(l) => json!({
                "type": "list",
                "element-id": l.element_field.id,
                "element": l.element_field.field_type.to_json(),
                "element-required": l.element_field.required,
            }),
            Type::Map(m) => json!({
                "type": "map",
                "key-id": m.key_field.id,
                "key": m.key_field.field_type.to_json(),
                "value-id": m.value_field.id,
                "value": m.value_field.field_type.to_json(),
                "value-required": m.value_field.required,
            }),
        }
    }

    pub fn from_json(v: &Value) -> Result<Self> {
        match v {
            Value::String(s) => Ok(Type::Primitive(PrimitiveType::parse(s)?)),
            Value::Object(o) => match o.get("type").and_then(Value::as_str) {
                Some("struct") => {
                    let fields = o
                        .get("fields")
                        .and_then(Value::as_array)
                        .ok_or_else(|| invalid_data("struct type has no 'fields' array"))?;
                    let fields = fields.iter().map(NestedField::from_json).collect::<Result<Vec<_>>>()?;
                    Ok(Type::Struct(StructType::new(fields)))
                }
                Some("list") => {
                    let id = get_i32(o, "element-id", "list")?;
                    let el = o.get("element").ok_or_else(|| invalid_data("list type has no 'element'"))?;
                    let req = o.get("element-required").and_then(Value::as_bool).ok_or_else(|| {
                        invalid_data(format!("list element {id} has no boolean 'element-required'"))
                    })?;
                    Ok(Type::list(id, Type::from_json(el)?, req))
                }
                Some("map") => {
                    let kid = get_i32(o, "key-id", "map")?;
                    let vid = get_i32(o, "value-id", "map")?;
                    let k = o.get("key").ok_or_else(|| invalid_data("map type has no 'key'"))?;
                    let val = o.get("value").ok_or_else(|| invalid_data("map type has no 'value'"))?;
                    let req = o.get("value-required").and_then(Value::as_bool).ok_or_else(|| {
                        invalid_data(format!("map value {vid} has no boolean 'value-required'"))
                    })?;
                    Ok(Type::map(kid, Type::from_json(k)?, vid, Type::from_json(val)?, req))
                }
                other => Err(invalid_data(format!("expected type struct, list or map, found {other:?}"))),
            },
            _ => Err(invalid_data(format!("expected a type string or object, found {v}"))),
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Primitive(p) => write!(f, "{p}"),
            Type::Struct(s) => {
                f.write_str("struct<")?;
                for (i, fl) in s.fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}: {}", fl.name, fl.field_type)?;
                }
                f.write_str(">")
            }
            Type::List(l) => write!(f, "list<{}>", l.element_field.field_type),
            Type::Map(m) => write!(f, "map<{}, {}>", m.key_field.field_type, m.value_field.field_type),
        }
    }
}

pub(crate) fn get_i32(o: &Map<String, Value>, key: &str, what: &str) -> Result<i32> {
    o.get(key)
        .and_then(Value::as_i64)
        .and_then(|v| i32::try_from(v).ok())
        .ok_or_else(|| invalid_data(format!("{what} has no integer '{key}'")))
}

impl Serialize for Type {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Type {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Type::from_json(&v).map_err(serde::de::Error::custom)
    }
}

impl Serialize for NestedField {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

impl<'de> Deserialize<'de> for NestedField {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        NestedField::from_json(&v).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v3_types_load_by_name_and_round_trip() {
        for t in ["geometry(srid:4326)", "geography(srid:4326, spherical)", "geography(EPSG:4269, karney)"] {
            let v = serde_json::json!({"id": 7, "name": "shape", "required": false, "type": t});
            let f = NestedField::from_json(&v).expect(t);
            assert_eq!(f.to_json()["type"], serde_json::json!(t));
        }
        let v = serde_json::json!({"id": 9, "name": "v", "required": false, "type": "variant"});
        let f = NestedField::from_json(&v).expect("variant");
        assert_eq!(f.field_type, Type::Primitive(PrimitiveType::Variant));
        assert_eq!(f.to_json()["type"], serde_json::json!("variant"));
        let u = serde_json::json!({"id": 8, "name": "u", "required": false, "type": "unknown"});
        assert_eq!(
            NestedField::from_json(&u).expect("unknown").field_type,
            Type::Primitive(PrimitiveType::Unknown)
        );
        let bad = serde_json::json!({"id": 1, "name": "x", "required": false, "type": "nonsense"});
        assert!(NestedField::from_json(&bad).expect_err("bad").to_string().contains("x (id 1)"));
    }

    #[test]
    fn geospatial_types_parse_as_java_and_print_their_defaults() {
        let geometry = |c: &str| PrimitiveType::Geometry { crs: c.into() };
        let geography = |c: &str, a| PrimitiveType::Geography { crs: c.into(), algorithm: a };
        let cases = [
            ("geometry", geometry(DEFAULT_CRS), "geometry(OGC:CRS84)"),
            ("Geometry ( srid:3857 )", geometry("srid:3857"), "geometry(srid:3857)"),
            ("geometry(srid: 3857)", geometry("srid: 3857"), "geometry(srid: 3857)"),
            (
                "geography",
                geography(DEFAULT_CRS, EdgeAlgorithm::Spherical),
                "geography(OGC:CRS84, spherical)",
            ),
            (
                "geography(EPSG:4326)",
                geography("EPSG:4326", EdgeAlgorithm::Spherical),
                "geography(EPSG:4326, spherical)",
            ),
            ("GEOGRAPHY(x ,VINCENTY)", geography("x", EdgeAlgorithm::Vincenty), "geography(x, vincenty)"),
        ];
        for (text, ty, shown) in cases {
            let parsed = PrimitiveType::parse(text).expect(text);
            assert_eq!(parsed, ty, "{text}");
            assert_eq!(parsed.to_string(), shown);
            assert_eq!(PrimitiveType::parse(shown).expect(shown), ty);
        }
        for bad in
            ["geometry()", "geometry( )", "geography(, spherical)", "geography(x, planar)", "geometryx"]
        {
            assert!(PrimitiveType::parse(bad).is_err(), "{bad}");
        }
        let err = PrimitiveType::parse("geography(x, planar)").expect_err("planar").to_string();
        assert!(err.contains("found 'planar'"), "{err}");
    }

    #[test]
    fn geospatial_crs_compares_ignoring_case_as_java_and_keeps_its_spelling() {
        use std::collections::HashSet;
        let lower = PrimitiveType::parse("geometry(ogc:crs84)").expect("lower");
        let upper = PrimitiveType::parse("geometry").expect("default");
        assert_eq!(lower, upper);
        assert_eq!(HashSet::from([lower.clone(), upper.clone()]).len(), 1);
        // As written: the type prints (and so is stored) with the writer's spelling.
        assert_eq!(lower.to_string(), "geometry(ogc:crs84)");
        assert!(crate::arrow::can_write_as(&upper, &lower));
        let geog = |t: &str| PrimitiveType::parse(t).expect(t);
        assert_eq!(geog("geography(epsg:4326, karney)"), geog("geography(EPSG:4326, karney)"));
        assert_ne!(geog("geography(EPSG:4326, karney)"), geog("geography(EPSG:4326, vincenty)"));
        assert_ne!(geog("geometry(EPSG:4326)"), geog("geometry(EPSG:3857)"));
        assert_ne!(geog("geometry(EPSG:4326)"), geog("geography(EPSG:4326)"));
    }

    #[test]
    fn primitive_round_trip() {
        for s in [
            "boolean",
            "int",
            "long",
            "float",
            "double",
            "decimal(9, 2)",
            "date",
            "time",
            "timestamp",
            "timestamptz",
            "string",
            "uuid",
            "fixed[16]",
            "binary",
        ] {
            assert_eq!(PrimitiveType::parse(s).unwrap().to_string(), s);
        }
        assert_eq!(
            PrimitiveType::parse("decimal(38,10)").unwrap(),
            PrimitiveType::Decimal { precision: 38, scale: 10 }
        );
        assert!(PrimitiveType::parse("decimal(39, 1)").is_err());
        assert!(PrimitiveType::parse("varchar").is_err());
    }

    #[test]
    fn nested_round_trip() {
        let v = json!({"type": "struct", "fields": [
            {"id": 1, "name": "a", "required": true, "type": {"type": "list", "element-id": 3, "element": "int", "element-required": false}},
            {"id": 2, "name": "m", "required": false, "type": {"type": "map", "key-id": 4, "key": "string", "value-id": 5, "value": {"type": "struct", "fields": [{"id": 6, "name": "x", "required": false, "type": "double", "doc": "d"}]}, "value-required": true}}
        ]});
        let t = Type::from_json(&v).unwrap();
        assert_eq!(t.to_json(), v);
    }
}
