//! Partition specs: fields (source column, transform, name, field id), their JSON form,
//! the partition struct type, partition paths, and a builder with Java's default names.

use std::collections::HashSet;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{json, Value};

use super::schema::{Schema, SchemaRef};
use super::transform::Transform;
use super::types::{get_i32, NestedField, PrimitiveType, StructType, Type};
use super::values::{Literal, StructValue};
use crate::error::{invalid_data, validation, Result};

/// Partition field ids start here (Java `PartitionSpec.PARTITION_DATA_ID_START`).
pub const PARTITION_DATA_ID_START: i32 = 1000;
/// `last-partition-id` of a table that was never partitioned.
pub const UNPARTITIONED_LAST_ASSIGNED_ID: i32 = 999;

/// One field of a partition spec.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PartitionField {
    pub source_id: i32,
    pub field_id: i32,
    pub name: String,
    pub transform: Transform,
}

impl PartitionField {
    pub fn new(source_id: i32, field_id: i32, name: impl Into<String>, transform: Transform) -> Self {
        Self { source_id, field_id, name: name.into(), transform }
    }

    /// `{"name", "transform", "source-id", "field-id"}` in Java's key order.
    pub fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "transform": self.transform.to_string(),
            "source-id": self.source_id,
            "field-id": self.field_id,
        })
    }

    /// Reads a field; `default_field_id` is used when `field-id` is absent (legacy v1).
    pub fn from_json(v: &Value, default_field_id: i32) -> Result<Self> {
        let o = v
            .as_object()
            .ok_or_else(|| invalid_data(format!("expected a partition field object, found {v}")))?;
        let name = o
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid_data(format!("partition field has no string 'name': {v}")))?;
        let transform = o
            .get("transform")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid_data(format!("partition field '{name}' has no string 'transform'")))?;
        let source_id = get_i32(o, "source-id", &format!("partition field '{name}'"))?;
        let field_id = match o.get("field-id") {
            None | Some(Value::Null) => default_field_id,
            Some(_) => get_i32(o, "field-id", &format!("partition field '{name}'"))?,
        };
        Ok(Self { source_id, field_id, name: name.to_string(), transform: Transform::parse(transform)? })
    }
}

/// A partition spec: how a table's rows map to partition tuples.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct PartitionSpec {
    pub spec_id: i32,
    pub fields: Vec<PartitionField>,
}

impl PartitionSpec {
    pub fn new(spec_id: i32, fields: Vec<PartitionField>) -> Self {
        Self { spec_id, fields }
    }

    /// Spec 0 with no fields.
    pub fn unpartitioned() -> Self {
        Self::default()
    }

    /// A builder that resolves source columns by name in `schema`, assigns field ids from
    /// 1000 and Java's default names.
    pub fn builder(schema: &Schema) -> PartitionSpecBuilder<'_> {
        PartitionSpecBuilder::new(schema)
    }

    pub fn spec_id(&self) -> i32 {
        self.spec_id
    }

    pub fn fields(&self) -> &[PartitionField] {
        &self.fields
    }

    /// No fields, or only void fields.
    pub fn is_unpartitioned(&self) -> bool {
        self.fields.iter().all(|f| f.transform.is_void())
    }

    /// The highest partition field id, or 999 when there are no fields.
    pub fn last_assigned_field_id(&self) -> i32 {
        self.fields.iter().map(|f| f.field_id).max().unwrap_or(UNPARTITIONED_LAST_ASSIGNED_ID)
    }

    /// Same fields, ignoring the spec id (Java `compatibleWith`-style equality).
    pub fn fields_equal(&self, other: &PartitionSpec) -> bool {
        self.fields == other.fields
    }

    /// The source column's primitive type for a field, checked against the schema.
    pub fn source_type<'a>(&self, schema: &'a Schema, field: &PartitionField) -> Result<&'a PrimitiveType> {
        let src = schema.field_by_id(field.source_id).ok_or_else(|| {
            validation(format!(
                "partition field '{}' (id {}) references source column id {} which is not in the schema",
                field.name, field.field_id, field.source_id
            ))
        })?;
        src.field_type.as_primitive().ok_or_else(|| {
            validation(format!(
                "partition field '{}' (id {}) has a non-primitive source column '{}' ({})",
                field.name, field.field_id, src.name, src.field_type
            ))
        })
    }

    /// Checks source columns exist, are primitive, the transforms apply to them, and
    /// field names and ids are unique.
    pub fn validate(&self, schema: &Schema) -> Result<()> {
        let mut names = HashSet::new();
        let mut ids = HashSet::new();
        for f in &self.fields {
            let ty = self.source_type(schema, f)?;
            if !matches!(f.transform, Transform::Unknown(_)) {
                f.transform.result_type(ty).map_err(|_| {
                    validation(format!(
                        "partition field '{}' (id {}): transform {} cannot be applied to source column id {} of type {ty}",
                        f.name, f.field_id, f.transform, f.source_id
                    ))
                })?;
            }
            if !names.insert(f.name.as_str()) {
                return Err(validation(format!("duplicate partition field name '{}'", f.name)));
            }
            if !ids.insert(f.field_id) {
                return Err(validation(format!("duplicate partition field id {}", f.field_id)));
            }
        }
        Ok(())
    }

    /// The partition tuple's struct type: one optional field per spec field, with the
    /// partition field id, name, and the transform's result type. A field whose source
    /// column is no longer in the schema (dropped after the field left the spec) is
    /// `unknown`, as Iceberg Java types it (see [`Self::partition_type_in`]).
    pub fn partition_type(&self, schema: &Schema) -> Result<StructType> {
        self.partition_type_in(schema, &[])
    }

    /// [`Self::partition_type`], where a field whose source column left `schema` takes its
    /// type from the newest of `older` that still has the column, so the values manifests
    /// already hold keep their type (written back unchanged, and equal to the values of
    /// the delete files scoped to them); `unknown` only when no schema has it.
    pub fn partition_type_in(&self, schema: &Schema, older: &[SchemaRef]) -> Result<StructType> {
        let fields = self
            .fields
            .iter()
            .map(|f| {
                let schema = match schema.field_by_id(f.source_id) {
                    Some(_) => schema,
                    None => match older.iter().rev().find(|s| s.field_by_id(f.source_id).is_some()) {
                        Some(s) => s.as_ref(),
                        None => {
                            let unknown = PrimitiveType::Unknown.into();
                            return Ok(NestedField::optional(f.field_id, f.name.clone(), unknown));
                        }
                    },
                };
                let src = self.source_type(schema, f)?;
                let ty = f.transform.result_type(src).map_err(|e| {
                    validation(format!("partition field '{}' (id {}): {}", f.name, f.field_id, e.message()))
                })?;
                Ok(NestedField::optional(f.field_id, f.name.clone(), Type::Primitive(ty)))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(StructType::new(fields))
    }

    /// The Hive-style path of a partition tuple: `name=value` per field, URL form-encoded
    /// (space -> `+`), joined by `/`; null -> `null`. Values use the transform's human form.
    pub fn partition_path(&self, schema: &Schema, values: &StructValue) -> Result<String> {
        self.partition_path_with_type(&self.partition_type(schema)?, values)
    }

    /// As [`PartitionSpec::partition_path`], given the partition struct type (e.g. from a
    /// manifest) instead of the table schema.
    pub fn partition_path_with_type(
        &self,
        partition_type: &StructType,
        values: &StructValue,
    ) -> Result<String> {
        if values.len() != self.fields.len() || partition_type.fields.len() != self.fields.len() {
            return Err(invalid_data(format!(
                "expected a partition tuple of {} value(s) for spec {}, found {} value(s) and {} type field(s)",
                self.fields.len(),
                self.spec_id,
                values.len(),
                partition_type.fields.len()
            )));
        }
        let mut parts = Vec::with_capacity(values.len());
        for ((f, v), pf) in self.fields.iter().zip(values).zip(&partition_type.fields) {
            // For identity and truncate (the transforms whose human form needs the type, for
            // decimal scale) the result type is the source type.
            let ty = pf.field_type.as_primitive().ok_or_else(|| {
                invalid_data(format!("partition field '{}' has non-primitive type {}", f.name, pf.field_type))
            })?;
            let human = f.transform.to_human_string(ty, v.as_ref());
            parts.push(format!("{}={}", form_encode(&f.name), form_encode(&human)));
        }
        Ok(parts.join("/"))
    }

    /// Computes the partition tuple of one row given its source values by field id.
    pub fn partition_value(&self, source_value: impl Fn(i32) -> Option<Literal>) -> Result<StructValue> {
        self.fields
            .iter()
            .map(|f| match source_value(f.source_id) {
                None => Ok(None),
                Some(v) => f.transform.apply(&v),
            })
            .collect()
    }

    /// `{"spec-id": N, "fields": [...]}`.
    pub fn to_json(&self) -> Value {
        json!({"spec-id": self.spec_id, "fields": self.fields_to_json()})
    }

    /// The bare field array (v1 `partition-spec`, manifest `partition-spec` metadata).
    pub fn fields_to_json(&self) -> Value {
        Value::Array(self.fields.iter().map(PartitionField::to_json).collect())
    }

    pub fn from_json(v: &Value) -> Result<Self> {
        let o = v
            .as_object()
            .ok_or_else(|| invalid_data(format!("expected a partition spec object, found {v}")))?;
        let spec_id = get_i32(o, "spec-id", "partition spec")?;
        let fields = o
            .get("fields")
            .ok_or_else(|| invalid_data(format!("partition spec {spec_id} has no 'fields'")))?;
        Self::from_fields_json(spec_id, fields)
    }

    /// Reads a bare field array; fields without `field-id` get 1000 + position.
    pub fn from_fields_json(spec_id: i32, fields: &Value) -> Result<Self> {
        let arr = fields.as_array().ok_or_else(|| {
            invalid_data(format!("expected an array of partition fields for spec {spec_id}, found {fields}"))
        })?;
        let fields = arr
            .iter()
            .enumerate()
            .map(|(i, f)| PartitionField::from_json(f, PARTITION_DATA_ID_START + i as i32))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self { spec_id, fields })
    }
}

/// URL form encoding as Java's `URLEncoder.encode(s, UTF_8)`.
fn form_encode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

impl Serialize for PartitionSpec {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

impl<'de> Deserialize<'de> for PartitionSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        PartitionSpec::from_json(&v).map_err(serde::de::Error::custom)
    }
}

/// Builds a spec by source column name, like Java's `PartitionSpec.builderFor(schema)`.
#[derive(Debug)]
pub struct PartitionSpecBuilder<'a> {
    schema: &'a Schema,
    spec_id: i32,
    last_assigned_field_id: i32,
    fields: Vec<PartitionField>,
}

impl<'a> PartitionSpecBuilder<'a> {
    pub fn new(schema: &'a Schema) -> Self {
        Self {
            schema,
            spec_id: 0,
            last_assigned_field_id: UNPARTITIONED_LAST_ASSIGNED_ID,
            fields: Vec::new(),
        }
    }

    pub fn with_spec_id(mut self, spec_id: i32) -> Self {
        self.spec_id = spec_id;
        self
    }

    /// Field ids are assigned after this one (default 999, so the first is 1000).
    pub fn with_last_assigned_field_id(mut self, id: i32) -> Self {
        self.last_assigned_field_id = id;
        self
    }

    pub fn identity(self, source: &str) -> Result<Self> {
        self.add(source, None, Transform::Identity)
    }

    pub fn bucket(self, source: &str, n: u32) -> Result<Self> {
        self.add(source, None, Transform::Bucket(n))
    }

    pub fn truncate(self, source: &str, width: u32) -> Result<Self> {
        self.add(source, None, Transform::Truncate(width))
    }

    pub fn year(self, source: &str) -> Result<Self> {
        self.add(source, None, Transform::Year)
    }

    pub fn month(self, source: &str) -> Result<Self> {
        self.add(source, None, Transform::Month)
    }

    pub fn day(self, source: &str) -> Result<Self> {
        self.add(source, None, Transform::Day)
    }

    pub fn hour(self, source: &str) -> Result<Self> {
        self.add(source, None, Transform::Hour)
    }

    pub fn void(self, source: &str) -> Result<Self> {
        self.add(source, None, Transform::Void)
    }

    /// Adds a field on the column named `source` (dotted for nested columns). `name`
    /// defaults to Java's: the source name for identity, else `<source>_<bucket|trunc|
    /// year|month|day|hour|null>`.
    pub fn add(mut self, source: &str, name: Option<&str>, transform: Transform) -> Result<Self> {
        let src = self.schema.field_by_name(source).ok_or_else(|| {
            validation(format!("cannot partition by '{source}': no such column in the schema"))
        })?;
        let ty = src.field_type.as_primitive().ok_or_else(|| {
            validation(format!("cannot partition by '{source}': it is a {}, not a primitive", src.field_type))
        })?;
        transform
            .result_type(ty)
            .map_err(|_| validation(format!("cannot partition by {transform} of '{source}' (type {ty})")))?;
        let name = match (name, transform.default_name_suffix()) {
            (Some(n), _) => n.to_string(),
            (None, None) => source.to_string(),
            (None, Some(suffix)) => format!("{source}_{suffix}"),
        };
        if self.fields.iter().any(|f| f.name == name) {
            return Err(validation(format!("cannot add partition field '{name}': the name is already used")));
        }
        if let Some(other) = self.schema.field_by_name(&name) {
            if !(transform.is_identity() && other.id == src.id) {
                return Err(validation(format!(
                    "cannot use partition name '{name}': it conflicts with a schema column that is not its identity source"
                )));
            }
        }
        if self.fields.iter().any(|f| f.source_id == src.id && f.transform == transform) {
            return Err(validation(format!("cannot add redundant partition {transform} on '{source}'")));
        }
        self.last_assigned_field_id += 1;
        self.fields.push(PartitionField::new(src.id, self.last_assigned_field_id, name, transform));
        Ok(self)
    }

    pub fn build(self) -> Result<PartitionSpec> {
        let spec = PartitionSpec::new(self.spec_id, self.fields);
        spec.validate(self.schema)?;
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::types::PrimitiveType as P;
    use std::sync::Arc;

    fn schema() -> Schema {
        Schema::new(
            0,
            vec![
                NestedField::required(1, "id", P::Long.into()),
                NestedField::optional(2, "ts", P::Timestamptz.into()),
                NestedField::optional(3, "name", P::String.into()),
                NestedField::optional(4, "d", P::Date.into()),
                NestedField::optional(5, "amount", P::Decimal { precision: 9, scale: 2 }.into()),
                NestedField::optional(6, "bin", P::Binary.into()),
            ],
            vec![],
        )
        .unwrap()
    }

    /// A spec whose source column was dropped: typed from the newest older schema that has
    /// it, `unknown` when none does (Java's type), never an error.
    #[test]
    fn partition_type_of_a_dropped_source_column() {
        let s = schema();
        let spec = PartitionSpec::builder(&s)
            .truncate("name", 4)
            .and_then(|b| b.day("ts"))
            .and_then(|b| b.build())
            .unwrap();
        let fields: Vec<NestedField> =
            s.fields().iter().filter(|f| f.id != 3).map(|f| f.as_ref().clone()).collect();
        let dropped = Schema::new(1, fields, vec![]).unwrap();
        let unknown = spec.partition_type(&dropped).unwrap();
        assert_eq!(unknown.fields[0].field_type, Type::Primitive(P::Unknown));
        assert_eq!(unknown.fields[1].field_type, Type::Primitive(P::Date));
        let typed =
            spec.partition_type_in(&dropped, &[Arc::new(s.clone()), Arc::new(dropped.clone())]).unwrap();
        assert_eq!(typed, spec.partition_type(&s).unwrap());
    }

    #[test]
    fn builder_default_names_and_ids() {
        let s = schema();
        let spec = PartitionSpec::builder(&s)
            .bucket("id", 16)
            .and_then(|b| b.day("ts"))
            .and_then(|b| b.truncate("name", 4))
            .and_then(|b| b.identity("d"))
            .and_then(|b| b.year("ts"))
            .and_then(|b| b.month("ts"))
            .and_then(|b| b.hour("ts"))
            .and_then(|b| b.build())
            .unwrap();
        let names: Vec<_> = spec.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["id_bucket", "ts_day", "name_trunc", "d", "ts_year", "ts_month", "ts_hour"]);
        assert_eq!(
            spec.fields.iter().map(|f| f.field_id).collect::<Vec<_>>(),
            (1000..1007).collect::<Vec<_>>()
        );
        assert_eq!(spec.last_assigned_field_id(), 1006);
        let pt = spec.partition_type(&s).unwrap();
        assert_eq!(pt.fields[0].field_type, Type::Primitive(P::Int));
        assert_eq!(pt.fields[1].field_type, Type::Primitive(P::Date));
        assert_eq!(pt.fields[2].field_type, Type::Primitive(P::String));
        assert!(pt.fields.iter().all(|f| !f.required));
        assert!(PartitionSpec::builder(&s).hour("d").is_err());
        assert!(PartitionSpec::builder(&s).identity("nope").is_err());
        assert!(PartitionSpec::builder(&s).bucket("id", 2).and_then(|b| b.bucket("id", 4)).is_err());
        assert!(PartitionSpec::builder(&s).add("id", Some("name"), Transform::Bucket(2)).is_err());
    }

    #[test]
    fn json_round_trip_and_legacy_ids() {
        let s = schema();
        let spec = PartitionSpec::builder(&s)
            .bucket("id", 16)
            .and_then(|b| b.day("ts"))
            .and_then(|b| b.build())
            .unwrap();
        let j = spec.to_json();
        assert_eq!(
            j,
            json!({"spec-id": 0, "fields": [
                {"name": "id_bucket", "transform": "bucket[16]", "source-id": 1, "field-id": 1000},
                {"name": "ts_day", "transform": "day", "source-id": 2, "field-id": 1001}]})
        );
        assert_eq!(PartitionSpec::from_json(&j).unwrap(), spec);
        let legacy = json!([{"name": "a", "transform": "identity", "source-id": 1},
                            {"name": "b", "transform": "bucket[4]", "source-id": 3}]);
        let spec = PartitionSpec::from_fields_json(0, &legacy).unwrap();
        assert_eq!(spec.fields[1].field_id, 1001);
        assert!(PartitionSpec::from_json(&json!({"fields": []})).is_err());
        assert!(PartitionSpec::from_json(&json!({"spec-id": 0, "fields": [{"name": "a", "source-id": 1}]}))
            .is_err());
    }

    #[test]
    fn unpartitioned() {
        assert!(PartitionSpec::unpartitioned().is_unpartitioned());
        assert_eq!(PartitionSpec::unpartitioned().last_assigned_field_id(), 999);
        let s = schema();
        let spec = PartitionSpec::builder(&s).void("id").and_then(|b| b.build()).unwrap();
        assert_eq!(spec.fields[0].name, "id_null");
        assert!(spec.is_unpartitioned());
    }

    #[test]
    fn paths() {
        let s = schema();
        let spec = PartitionSpec::builder(&s)
            .identity("name")
            .and_then(|b| b.day("ts"))
            .and_then(|b| b.identity("amount"))
            .and_then(|b| b.identity("bin"))
            .and_then(|b| b.hour("ts"))
            .and_then(|b| b.build())
            .unwrap();
        let values = vec![
            Some(Literal::String("a b/c=d&é".into())),
            Some(Literal::Date(17486)),
            Some(Literal::Decimal(1420)),
            Some(Literal::Binary(vec![0xfb, 0xff])),
            None,
        ];
        assert_eq!(
            spec.partition_path(&s, &values).unwrap(),
            "name=a+b%2Fc%3Dd%26%C3%A9/ts_day=2017-11-16/amount=14.20/bin=%2B%2F8%3D/ts_hour=null"
        );
        assert!(spec.partition_path(&s, &vec![]).is_err());
        let pt = spec.partition_type(&s).unwrap();
        assert_eq!(
            spec.partition_path_with_type(&pt, &values).unwrap(),
            spec.partition_path(&s, &values).unwrap()
        );
        let pv = spec
            .partition_value(|id| match id {
                2 => Some(Literal::Timestamptz(-1)),
                3 => Some(Literal::String("x".into())),
                _ => None,
            })
            .unwrap();
        assert_eq!(
            pv,
            vec![
                Some(Literal::String("x".into())),
                Some(Literal::Date(-1)),
                None,
                None,
                Some(Literal::Int(-1))
            ]
        );
    }

    #[test]
    fn validate_errors() {
        let s = schema();
        let bad = PartitionSpec::new(0, vec![PartitionField::new(99, 1000, "x", Transform::Identity)]);
        let e = bad.validate(&s).unwrap_err();
        assert!(e.to_string().contains("source column id 99"), "{e}");
        let bad = PartitionSpec::new(0, vec![PartitionField::new(3, 1000, "x", Transform::Year)]);
        assert!(bad.validate(&s).is_err());
    }
}
