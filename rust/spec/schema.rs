//! Table schemas: a struct of fields with ids, identifier fields, and id/name indexes.

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{json, Value};

use super::types::{NestedField, NestedFieldRef, StructType, Type};
use crate::error::{invalid_data, validation, Result};

/// An Iceberg schema. Indexes cover nested fields too: `by_id` holds every field id
/// (struct fields, list elements, map keys/values), `by_name` their dotted full names
/// in Java's style (`a.b`, `l.element`, `m.key`, `m.value`).
#[derive(Debug, Clone)]
pub struct Schema {
    schema_id: i32,
    identifier_field_ids: Vec<i32>,
    r#struct: StructType,
    by_id: HashMap<i32, NestedFieldRef>,
    by_name: HashMap<String, i32>,
    parent: HashMap<i32, i32>,
    highest_field_id: i32,
}

impl PartialEq for Schema {
    fn eq(&self, other: &Self) -> bool {
        self.schema_id == other.schema_id
            && self.identifier_field_ids == other.identifier_field_ids
            && self.r#struct == other.r#struct
    }
}

impl Schema {
    /// Builds a schema and its indexes; duplicate field ids or names are an error.
    pub fn new(schema_id: i32, fields: Vec<NestedField>, identifier_field_ids: Vec<i32>) -> Result<Self> {
        Self::from_struct(schema_id, StructType::new(fields), identifier_field_ids)
    }

    pub fn from_struct(schema_id: i32, r#struct: StructType, identifier_field_ids: Vec<i32>) -> Result<Self> {
        let mut s = Schema {
            schema_id,
            identifier_field_ids,
            r#struct,
            by_id: HashMap::new(),
            by_name: HashMap::new(),
            parent: HashMap::new(),
            highest_field_id: 0,
        };
        let fields = s.r#struct.fields.clone();
        for f in &fields {
            s.index(f, "", None)?;
        }
        for id in &s.identifier_field_ids {
            let f = s
                .by_id
                .get(id)
                .ok_or_else(|| validation(format!("identifier field id {id} is not in the schema")))?;
            if !f.required || !f.field_type.is_primitive() {
                return Err(validation(format!(
                    "identifier field '{}' (id {id}) must be a required primitive",
                    f.name
                )));
            }
        }
        Ok(s)
    }

    fn index(&mut self, f: &NestedFieldRef, prefix: &str, parent: Option<i32>) -> Result<()> {
        let name = if prefix.is_empty() { f.name.clone() } else { format!("{prefix}.{}", f.name) };
        if self.by_id.insert(f.id, f.clone()).is_some() {
            return Err(invalid_data(format!("duplicate field id {} (field '{name}')", f.id)));
        }
        if self.by_name.insert(name.clone(), f.id).is_some() {
            return Err(invalid_data(format!("duplicate field name '{name}'")));
        }
        if let Some(p) = parent {
            self.parent.insert(f.id, p);
        }
        self.highest_field_id = self.highest_field_id.max(f.id);
        match &f.field_type {
            Type::Primitive(_) => {}
            Type::Struct(st) => {
                for c in &st.fields {
                    self.index(c, &name, Some(f.id))?;
                }
            }
            Type::List(l) => self.index(&l.element_field, &name, Some(f.id))?,
            Type::Map(m) => {
                self.index(&m.key_field, &name, Some(f.id))?;
                self.index(&m.value_field, &name, Some(f.id))?;
            }
        }
        Ok(())
    }

    pub fn schema_id(&self) -> i32 {
        self.schema_id
    }

    pub fn with_schema_id(mut self, id: i32) -> Self {
        self.schema_id = id;
        self
    }

    pub fn identifier_field_ids(&self) -> &[i32] {
        &self.identifier_field_ids
    }

    pub fn as_struct(&self) -> &StructType {
        &self.r#struct
    }

    pub fn fields(&self) -> &[NestedFieldRef] {
        &self.r#struct.fields
    }

    pub fn highest_field_id(&self) -> i32 {
        self.highest_field_id
    }

    /// Every field, nested ones included (in no particular order).
    pub fn all_fields(&self) -> impl Iterator<Item = &NestedFieldRef> {
        self.by_id.values()
    }

    /// Any field (nested too) by id.
    pub fn field_by_id(&self, id: i32) -> Option<&NestedFieldRef> {
        self.by_id.get(&id)
    }

    /// Any field by its dotted full name, case-sensitive.
    pub fn field_by_name(&self, name: &str) -> Option<&NestedFieldRef> {
        self.by_name.get(name).and_then(|id| self.by_id.get(id))
    }

    /// Case-insensitive lookup; an ambiguous name is an error.
    pub fn field_by_name_case_insensitive(&self, name: &str) -> Result<Option<&NestedFieldRef>> {
        let lower = name.to_lowercase();
        let mut hits = self.by_name.iter().filter(|(n, _)| n.to_lowercase() == lower);
        match (hits.next(), hits.next()) {
            (None, _) => Ok(None),
            (Some((_, id)), None) => Ok(self.by_id.get(id)),
            (Some((a, _)), Some((b, _))) => {
                Err(validation(format!("field name '{name}' is ambiguous: matches '{a}' and '{b}'")))
            }
        }
    }

    /// Java's `Schema.checkCompatibility`, run whenever a schema is added to a table: the types
    /// of format v3 (nanosecond timestamps, `unknown`, `variant`, `geometry`, `geography`) and
    /// non-null initial defaults are refused below v3, naming every offending column.
    pub fn check_compatibility(&self, format_version: i32) -> Result<()> {
        const V3: i32 = 3;
        if format_version >= V3 {
            return Ok(());
        }
        // The full name is looked up only for an offending field (it is a scan of the names).
        let name = |f: &NestedField| self.name_by_id(f.id).unwrap_or(&f.name).to_string();
        let mut problems: Vec<(i32, String)> = Vec::new();
        for f in self.all_fields() {
            if let Type::Primitive(p) = &f.field_type {
                use super::types::PrimitiveType as P;
                if matches!(p, P::TimestampNs | P::TimestamptzNs | P::Unknown | P::Variant)
                    || p.is_geospatial()
                {
                    let n = name(f);
                    problems.push((f.id, format!("Invalid type for {n}: {p} is not supported until v{V3}")));
                }
            }
            if let Some(d) = f.default_json(super::types::DefaultKind::Initial) {
                let n = name(f);
                problems.push((
                    f.id,
                    format!("Invalid initial default for {n}: non-null default ({d}) is not supported until v{V3}"),
                ));
            }
        }
        if problems.is_empty() {
            return Ok(());
        }
        problems.sort();
        let lines: Vec<String> = problems.into_iter().map(|(_, p)| p).collect();
        Err(validation(format!("Invalid schema for v{format_version}:\n- {}", lines.join("\n- "))))
    }

    /// The dotted full name of a field id.
    pub fn name_by_id(&self, id: i32) -> Option<&str> {
        self.by_name.iter().find(|(_, v)| **v == id).map(|(k, _)| k.as_str())
    }

    /// The id of the field containing `id`, if it is nested.
    pub fn parent_id(&self, id: i32) -> Option<i32> {
        self.parent.get(&id).copied()
    }

    /// A schema of the top-level columns named in `names` (in schema order), keeping ids.
    /// Nested names select the whole top-level column that holds them.
    pub fn select(&self, names: &[&str], case_sensitive: bool) -> Result<Schema> {
        let mut keep = std::collections::HashSet::new();
        for n in names {
            let f = if case_sensitive {
                self.field_by_name(n).cloned()
            } else {
                self.field_by_name_case_insensitive(n)?.cloned()
            };
            let f = f.ok_or_else(|| {
                validation(format!(
                    "cannot select column '{n}': not in the schema (columns: {})",
                    self.fields().iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join(", ")
                ))
            })?;
            let mut id = f.id;
            while let Some(p) = self.parent_id(id) {
                id = p;
            }
            keep.insert(id);
        }
        let fields: Vec<NestedFieldRef> =
            self.fields().iter().filter(|f| keep.contains(&f.id)).cloned().collect();
        Schema::from_struct(self.schema_id, StructType { fields }, vec![])
    }

    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "type": "struct",
            "schema-id": self.schema_id,
            "fields": self.r#struct.fields.iter().map(|f| serde_json::to_value(f.as_ref()).unwrap_or(Value::Null)).collect::<Vec<_>>(),
        });
        if let (false, Some(o)) = (self.identifier_field_ids.is_empty(), v.as_object_mut()) {
            o.insert("identifier-field-ids".into(), json!(self.identifier_field_ids));
        }
        v
    }

    pub fn from_json(v: &Value) -> Result<Self> {
        let t = Type::from_json(v)?;
        let st = match t {
            Type::Struct(s) => s,
            other => return Err(invalid_data(format!("expected a struct schema, found {other}"))),
        };
        let schema_id = v.get("schema-id").and_then(Value::as_i64).unwrap_or(0) as i32;
        let ids = match v.get("identifier-field-ids") {
            Some(Value::Array(a)) => a
                .iter()
                .map(|x| {
                    x.as_i64()
                        .map(|i| i as i32)
                        .ok_or_else(|| invalid_data(format!("bad identifier field id {x}")))
                })
                .collect::<Result<Vec<_>>>()?,
            _ => vec![],
        };
        Schema::from_struct(schema_id, st, ids)
    }

    pub fn to_json_string(&self) -> String {
        self.to_json().to_string()
    }

    pub fn from_json_str(s: &str) -> Result<Self> {
        let v: Value =
            serde_json::from_str(s).map_err(|e| invalid_data("schema is not valid JSON").with_source(e))?;
        Schema::from_json(&v)
    }
}

impl Serialize for Schema {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Schema {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Schema::from_json(&v).map_err(serde::de::Error::custom)
    }
}

pub type SchemaRef = Arc<Schema>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::types::PrimitiveType;

    fn sample() -> Schema {
        Schema::new(
            0,
            vec![
                NestedField::required(1, "id", PrimitiveType::Long.into()),
                NestedField::optional(
                    2,
                    "s",
                    Type::Struct(StructType::new(vec![NestedField::optional(
                        3,
                        "x",
                        PrimitiveType::String.into(),
                    )])),
                ),
                NestedField::optional(4, "l", Type::list(5, PrimitiveType::Int.into(), false)),
            ],
            vec![1],
        )
        .unwrap()
    }

    #[test]
    fn indexes_nested() {
        let s = sample();
        assert_eq!(s.highest_field_id(), 5);
        assert_eq!(s.field_by_name("s.x").unwrap().id, 3);
        assert_eq!(s.field_by_name("l.element").unwrap().id, 5);
        assert_eq!(s.parent_id(3), Some(2));
        assert_eq!(s.field_by_name_case_insensitive("ID").unwrap().unwrap().id, 1);
    }

    #[test]
    fn json_round_trip() {
        let s = sample();
        let back = Schema::from_json(&s.to_json()).unwrap();
        assert_eq!(s, back);
        assert_eq!(back.identifier_field_ids(), &[1]);
    }

    #[test]
    fn select_keeps_top_level() {
        let s = sample().select(&["s.x", "id"], true).unwrap();
        assert_eq!(s.fields().iter().map(|f| f.id).collect::<Vec<_>>(), vec![1, 2]);
        assert!(sample().select(&["nope"], true).is_err());
    }

    #[test]
    fn duplicate_ids_rejected() {
        let r = Schema::new(
            0,
            vec![
                NestedField::required(1, "a", PrimitiveType::Long.into()),
                NestedField::required(1, "b", PrimitiveType::Long.into()),
            ],
            vec![],
        );
        assert!(r.is_err());
    }

    #[test]
    fn v3_types_and_initial_defaults_are_refused_below_v3_as_java() {
        let geometry = PrimitiveType::Geometry { crs: crate::spec::DEFAULT_CRS.into() };
        let mut with_default = NestedField::optional(4, "d", PrimitiveType::Int.into());
        with_default.initial_default = Some(serde_json::json!(7));
        let schema = Schema::new(
            0,
            vec![
                NestedField::required(1, "id", PrimitiveType::Long.into()),
                NestedField::optional(
                    2,
                    "s",
                    Type::Struct(StructType::new(vec![NestedField::optional(3, "g", geometry.into())])),
                ),
                with_default,
                NestedField::optional(5, "ts", PrimitiveType::TimestampNs.into()),
            ],
            vec![],
        )
        .unwrap();
        assert!(schema.check_compatibility(3).is_ok());
        assert!(sample().check_compatibility(1).is_ok());
        let err = schema.check_compatibility(2).unwrap_err().to_string();
        assert!(
            err.contains(
                "Invalid schema for v2:\n- Invalid type for s.g: geometry(OGC:CRS84) is not supported until v3\n\
                 - Invalid initial default for d: non-null default (7) is not supported until v3\n\
                 - Invalid type for ts: timestamp_ns is not supported until v3"
            ),
            "{err}"
        );
    }
}
