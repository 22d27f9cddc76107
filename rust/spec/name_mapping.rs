//! Name mapping (`schema.name-mapping.default`): how a reader assigns Iceberg field ids to
//! the columns of data files written without them (imported or migrated Parquet files).
//!
//! The JSON form is a list of mapped fields `{"field-id": int?, "names": [..], "fields": [..]?}`;
//! a file column matches a mapped field when its name is any of the field's names, walking
//! the column's name path (list elements are `element`, map entries `key` / `value`).

use serde::{Deserialize, Serialize};

use crate::error::{invalid_data, Result};
use crate::spec::{NestedField, Schema, Type};

/// The table property holding the default name mapping.
pub const PROPERTY_NAME_MAPPING_DEFAULT: &str = "schema.name-mapping.default";

/// One mapped field: the names (aliases) a column may have, its field id (absent = the
/// column is known but has no id), and the mapping of its children.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MappedField {
    #[serde(rename = "field-id", default, skip_serializing_if = "Option::is_none")]
    pub field_id: Option<i32>,
    pub names: Vec<String>,
    #[serde(default, skip_serializing_if = "MappedFields::is_empty")]
    pub fields: MappedFields,
}

/// The mapped fields of one level (the top level of a mapping or a field's children).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MappedFields(pub Vec<MappedField>);

impl MappedFields {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The field one of whose names is `name` (names are case-sensitive, as in Java).
    pub fn find(&self, name: &str) -> Option<&MappedField> {
        self.0.iter().find(|f| f.names.iter().any(|n| n == name))
    }

    /// The field at a name path (e.g. `["location", "element", "lat"]`).
    pub fn find_path<S: AsRef<str>>(&self, path: &[S]) -> Option<&MappedField> {
        let (first, rest) = path.split_first()?;
        let f = self.find(first.as_ref())?;
        if rest.is_empty() {
            Some(f)
        } else {
            f.fields.find_path(rest)
        }
    }
}

/// A whole name mapping.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NameMapping {
    pub fields: MappedFields,
}

impl NameMapping {
    /// Parses the JSON of `schema.name-mapping.default`, checking that no two fields of a
    /// level share a name (Java refuses such mappings too).
    pub fn from_json(s: &str) -> Result<Self> {
        let m: NameMapping = serde_json::from_str(s).map_err(|e| {
            invalid_data(format!("malformed name mapping ({PROPERTY_NAME_MAPPING_DEFAULT})")).with_source(e)
        })?;
        check_unique(&m.fields, "")?;
        Ok(m)
    }

    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string(self).map_err(|e| invalid_data("cannot serialize name mapping").with_source(e))
    }

    /// The mapping of a schema's current names (what Java's `MappingUtil.create` builds).
    pub fn from_schema(schema: &Schema) -> Self {
        NameMapping { fields: MappedFields(schema.fields().iter().map(|f| mapped(f)).collect()) }
    }

    /// The field at a name path.
    pub fn find_path<S: AsRef<str>>(&self, path: &[S]) -> Option<&MappedField> {
        self.fields.find_path(path)
    }
}

fn mapped(f: &NestedField) -> MappedField {
    let fields = match &f.field_type {
        Type::Primitive(_) => vec![],
        Type::Struct(s) => s.fields.iter().map(|c| mapped(c)).collect(),
        Type::List(l) => vec![mapped(&l.element_field)],
        Type::Map(m) => vec![mapped(&m.key_field), mapped(&m.value_field)],
    };
    MappedField { field_id: Some(f.id), names: vec![f.name.clone()], fields: MappedFields(fields) }
}

fn check_unique(level: &MappedFields, at: &str) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    for f in &level.0 {
        for n in &f.names {
            if !seen.insert(n.as_str()) {
                return Err(invalid_data(format!(
                    "name mapping has the name '{n}' twice at level '{}'",
                    if at.is_empty() { "<root>" } else { at }
                )));
            }
        }
        let child_at =
            format!("{at}{}{}", if at.is_empty() { "" } else { "." }, f.names.first().map_or("?", |s| s));
        check_unique(&f.fields, &child_at)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{PrimitiveType, StructType};

    /// The JSON Iceberg Java's `NameMappingParser.toJson(MappingUtil.create(schema))` writes.
    const JAVA: &str = r#"[ {
  "field-id" : 1, "names" : [ "id" ] }, {
  "field-id" : 2, "names" : [ "data", "payload" ] }, {
  "field-id" : 3, "names" : [ "location" ],
  "fields" : [ { "field-id" : 4, "names" : [ "element" ],
    "fields" : [ { "field-id" : 5, "names" : [ "lat" ] }, { "field-id" : 6, "names" : [ "long" ] } ] } ] }, {
  "field-id" : 7, "names" : [ "props" ],
  "fields" : [ { "field-id" : 8, "names" : [ "key" ] }, { "field-id" : 9, "names" : [ "value" ] } ] }, {
  "names" : [ "ignored" ] } ]"#;

    #[test]
    fn parses_java_json_and_finds_paths_and_aliases() {
        let m = NameMapping::from_json(JAVA).unwrap();
        assert_eq!(m.find_path(&["id"]).unwrap().field_id, Some(1));
        assert_eq!(m.find_path(&["payload"]).unwrap().field_id, Some(2));
        assert_eq!(m.find_path(&["location", "element", "long"]).unwrap().field_id, Some(6));
        assert_eq!(m.find_path(&["props", "value"]).unwrap().field_id, Some(9));
        assert_eq!(m.find_path(&["ignored"]).unwrap().field_id, None);
        assert!(m.find_path(&["location", "lat"]).is_none());
        assert!(m.find_path::<&str>(&[]).is_none());
        let back = NameMapping::from_json(&m.to_json().unwrap()).unwrap();
        assert_eq!(back, m);
    }

    #[test]
    fn refuses_duplicate_names_and_bad_json() {
        let err =
            NameMapping::from_json(r#"[{"field-id":1,"names":["a"]},{"field-id":2,"names":["b","a"]}]"#)
                .unwrap_err();
        assert!(err.to_string().contains("'a' twice"), "{err}");
        let err = NameMapping::from_json(r#"{"field-id":1}"#).unwrap_err();
        assert!(err.to_string().contains("schema.name-mapping.default"), "{err}");
    }

    #[test]
    fn from_schema_maps_every_level() {
        let s = Schema::new(
            0,
            vec![
                NestedField::required(1, "id", PrimitiveType::Long.into()),
                NestedField::optional(
                    2,
                    "points",
                    Type::list(
                        3,
                        Type::Struct(StructType::new(vec![NestedField::optional(
                            4,
                            "x",
                            PrimitiveType::Int.into(),
                        )])),
                        false,
                    ),
                ),
                NestedField::optional(
                    5,
                    "m",
                    Type::map(6, PrimitiveType::String.into(), 7, PrimitiveType::Int.into(), false),
                ),
            ],
            vec![],
        )
        .unwrap();
        let m = NameMapping::from_schema(&s);
        assert_eq!(m.find_path(&["points", "element", "x"]).unwrap().field_id, Some(4));
        assert_eq!(m.find_path(&["m", "key"]).unwrap().field_id, Some(6));
    }
}
