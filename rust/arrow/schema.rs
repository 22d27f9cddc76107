//! Iceberg schema <-> Arrow schema. Every Arrow field carries its Iceberg field id in
//! `PARQUET:field_id` metadata (list elements and map keys/values too), which is what
//! the Parquet writer turns into Parquet `field_id`s (checklist T1).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields, Schema as ArrowSchema, TimeUnit};

use super::geoarrow;
use crate::error::{invalid_data, not_supported, Result};
use crate::spec::{MapType, NestedField, PrimitiveType, Schema, StructType, Type};

/// The Arrow field metadata key holding a Parquet/Iceberg field id.
pub const PARQUET_FIELD_ID_KEY: &str = "PARQUET:field_id";

/// Arrow timezone used for Iceberg `timestamptz` / `timestamptz_ns`.
pub const UTC_TZ: &str = "UTC";

/// Converts an Iceberg schema to the Arrow schema icefloe reads and writes.
pub fn schema_to_arrow(schema: &Schema) -> Result<ArrowSchema> {
    let fields = schema.fields().iter().map(|f| field_to_arrow(f)).collect::<Result<Vec<_>>>()?;
    Ok(ArrowSchema::new(fields))
}

/// Converts one Iceberg field (with its id) to an Arrow field.
pub fn field_to_arrow(field: &NestedField) -> Result<Field> {
    let dt = type_to_arrow(&field.field_type)?;
    let arrow = with_field_id(Field::new(&field.name, dt, !field.required), field.id);
    Ok(match &field.field_type {
        Type::Primitive(PrimitiveType::Variant) => {
            let mut md = arrow.metadata().clone();
            md.insert(EXTENSION_NAME_KEY.to_string(), VARIANT_EXTENSION.to_string());
            arrow.with_metadata(md)
        }
        Type::Primitive(p) if p.is_geospatial() => {
            let mut md = arrow.metadata().clone();
            md.extend(geoarrow::extension_metadata(p).unwrap_or_default());
            arrow.with_metadata(md)
        }
        _ => arrow,
    })
}

/// Arrow's field metadata key naming an extension type.
pub const EXTENSION_NAME_KEY: &str = "ARROW:extension:name";
/// Arrow's canonical extension type for a Parquet variant (storage: `metadata`, `value`).
pub const VARIANT_EXTENSION: &str = "arrow.parquet.variant";
/// The children of a variant's Arrow struct, in Parquet's order.
pub const VARIANT_METADATA: &str = "metadata";
pub const VARIANT_VALUE: &str = "value";

/// The Arrow storage of an (unshredded) variant: the two binary buffers of each row.
pub fn variant_fields() -> Fields {
    Fields::from(vec![
        Field::new(VARIANT_METADATA, DataType::Binary, false),
        Field::new(VARIANT_VALUE, DataType::Binary, false),
    ])
}

fn with_field_id(f: Field, id: i32) -> Field {
    f.with_metadata(HashMap::from([(PARQUET_FIELD_ID_KEY.to_string(), id.to_string())]))
}

/// The Arrow type of an Iceberg type.
pub fn type_to_arrow(ty: &Type) -> Result<DataType> {
    Ok(match ty {
        Type::Primitive(p) => primitive_to_arrow(p)?,
        Type::Struct(s) => DataType::Struct(struct_fields_to_arrow(s)?),
        Type::List(l) => DataType::List(Arc::new(field_to_arrow(&l.element_field)?)),
        Type::Map(m) => {
            let key = field_to_arrow(&m.key_field)?.with_nullable(false);
            let value = field_to_arrow(&m.value_field)?;
            let entries = Field::new("key_value", DataType::Struct(Fields::from(vec![key, value])), false);
            DataType::Map(Arc::new(entries), false)
        }
    })
}

/// The Arrow fields of an Iceberg struct.
pub fn struct_fields_to_arrow(s: &StructType) -> Result<Fields> {
    Ok(Fields::from(s.fields.iter().map(|f| field_to_arrow(f)).collect::<Result<Vec<_>>>()?))
}

/// The Arrow type of an Iceberg primitive type.
pub fn primitive_to_arrow(p: &PrimitiveType) -> Result<DataType> {
    Ok(match p {
        PrimitiveType::Boolean => DataType::Boolean,
        PrimitiveType::Int => DataType::Int32,
        PrimitiveType::Long => DataType::Int64,
        PrimitiveType::Float => DataType::Float32,
        PrimitiveType::Double => DataType::Float64,
        PrimitiveType::Decimal { precision, scale } => {
            let p = u8::try_from(*precision)
                .map_err(|_| invalid_data(format!("expected decimal precision <= 38, found {precision}")))?;
            let s = i8::try_from(*scale)
                .map_err(|_| invalid_data(format!("expected decimal scale <= 38, found {scale}")))?;
            DataType::Decimal128(p, s)
        }
        PrimitiveType::Date => DataType::Date32,
        PrimitiveType::Time => DataType::Time64(TimeUnit::Microsecond),
        PrimitiveType::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, None),
        PrimitiveType::Timestamptz => DataType::Timestamp(TimeUnit::Microsecond, Some(UTC_TZ.into())),
        PrimitiveType::TimestampNs => DataType::Timestamp(TimeUnit::Nanosecond, None),
        PrimitiveType::TimestamptzNs => DataType::Timestamp(TimeUnit::Nanosecond, Some(UTC_TZ.into())),
        PrimitiveType::String => DataType::Utf8,
        PrimitiveType::Uuid => DataType::FixedSizeBinary(16),
        PrimitiveType::Fixed(len) => DataType::FixedSizeBinary(
            i32::try_from(*len)
                .map_err(|_| invalid_data(format!("fixed length {len} is too large for Arrow")))?,
        ),
        // WKB values; the field carries the `geoarrow.wkb` extension (`field_to_arrow`).
        PrimitiveType::Binary | PrimitiveType::Geometry { .. } | PrimitiveType::Geography { .. } => {
            DataType::Binary
        }
        PrimitiveType::Unknown => DataType::Null,
        PrimitiveType::Variant => DataType::Struct(variant_fields()),
    })
}

/// Options for [`schema_from_arrow_with`].
#[derive(Debug, Clone, Copy, Default)]
pub struct FromArrowOptions {
    /// Map nanosecond timestamps to the v3 `timestamp_ns`/`timestamptz_ns` types.
    /// Off by default: every timestamp unit maps to the microsecond types.
    pub nanosecond_timestamps: bool,
}

/// Converts an Arrow schema to an Iceberg schema (schema id 0). Field ids come from
/// `PARQUET:field_id` when every field (nested too) has one; otherwise fresh ids are
/// assigned in Java's `TypeUtil.assignFreshIds` order.
pub fn schema_from_arrow(schema: &ArrowSchema) -> Result<Schema> {
    schema_from_arrow_with(schema, FromArrowOptions::default())
}

/// The deepest nesting of struct, list and map types an Arrow schema may have. Table
/// metadata JSON is read with serde_json's nesting limit (128 levels), which a schema of
/// about 40 nested types reaches (each struct level is three JSON levels), so a deeper schema
/// could be written but never loaded again; and the conversions below recurse per level, so
/// the limit also bounds their stack on a schema from a user or a file footer.
pub const MAX_NESTING: usize = 32;

/// [`schema_from_arrow`] with options.
pub fn schema_from_arrow_with(schema: &ArrowSchema, opts: FromArrowOptions) -> Result<Schema> {
    check_nesting(schema.fields())?;
    let use_ids = all_fields_have_ids(schema.fields());
    let mut conv = FromArrow { opts, use_ids, next_id: 0 };
    let fields = conv.fields(schema.fields(), "")?;
    Schema::new(0, fields, vec![])
}

/// The field id stored in an Arrow field's metadata, if any.
pub fn arrow_field_id(field: &Field) -> Result<Option<i32>> {
    match field.metadata().get(PARQUET_FIELD_ID_KEY) {
        None => Ok(None),
        Some(v) => v.trim().parse::<i32>().map(Some).map_err(|_| {
            invalid_data(format!(
                "expected an integer {PARQUET_FIELD_ID_KEY} on Arrow field '{}', found '{v}'",
                field.name()
            ))
        }),
    }
}

/// Refuses a schema nested deeper than [`MAX_NESTING`] (iteratively: no recursion on
/// untrusted input), naming the first field found too deep.
fn check_nesting(fields: &Fields) -> Result<()> {
    let mut stack: Vec<(&DataType, String, usize)> =
        fields.iter().map(|f| (f.data_type(), f.name().clone(), 0)).collect();
    while let Some((dt, path, depth)) = stack.pop() {
        let children: Vec<(&DataType, &str)> = match dt {
            DataType::Struct(fs) => fs.iter().map(|f| (f.data_type(), f.name().as_str())).collect(),
            DataType::List(el)
            | DataType::LargeList(el)
            | DataType::FixedSizeList(el, _)
            | DataType::ListView(el)
            | DataType::LargeListView(el) => vec![(el.data_type(), "element")],
            DataType::Map(entries, _) => vec![(entries.data_type(), "entries")],
            DataType::Dictionary(_, value) => vec![(value.as_ref(), "")],
            _ => continue,
        };
        if depth >= MAX_NESTING {
            return Err(crate::error::validation(format!(
                "expected at most {MAX_NESTING} levels of nested struct, list and map types, \
                 found deeper nesting at field '{path}'"
            )));
        }
        for (child, name) in children {
            let child_path = if name.is_empty() { path.clone() } else { join(&path, name) };
            let child_depth = if name.is_empty() { depth } else { depth + 1 };
            stack.push((child, child_path, child_depth));
        }
    }
    Ok(())
}

fn all_fields_have_ids(fields: &Fields) -> bool {
    fields.iter().all(|f| f.metadata().contains_key(PARQUET_FIELD_ID_KEY) && children_have_ids(f.data_type()))
}

fn children_have_ids(dt: &DataType) -> bool {
    match dt {
        DataType::Struct(fs) => all_fields_have_ids(fs),
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::FixedSizeList(f, _)
        | DataType::ListView(f)
        | DataType::LargeListView(f) => {
            f.metadata().contains_key(PARQUET_FIELD_ID_KEY) && children_have_ids(f.data_type())
        }
        DataType::Map(entries, _) => match entries.data_type() {
            DataType::Struct(kv) => all_fields_have_ids(kv),
            _ => false,
        },
        _ => true,
    }
}

struct FromArrow {
    opts: FromArrowOptions,
    use_ids: bool,
    next_id: i32,
}

impl FromArrow {
    fn id_for(&mut self, f: &Field, path: &str) -> Result<i32> {
        if self.use_ids {
            arrow_field_id(f)?
                .ok_or_else(|| invalid_data(format!("Arrow field '{path}' has no {PARQUET_FIELD_ID_KEY}")))
        } else {
            self.next_id += 1;
            Ok(self.next_id)
        }
    }

    /// Java's order: ids for all fields of a struct first, then each field's children in turn.
    fn fields(&mut self, fields: &Fields, prefix: &str) -> Result<Vec<NestedField>> {
        let paths: Vec<String> = fields.iter().map(|f| join(prefix, f.name())).collect();
        let ids = fields.iter().zip(&paths).map(|(f, p)| self.id_for(f, p)).collect::<Result<Vec<_>>>()?;
        let mut out = Vec::with_capacity(fields.len());
        for ((f, id), path) in fields.iter().zip(ids).zip(&paths) {
            let ty = self.data_type(f.data_type(), f.metadata(), path)?;
            out.push(NestedField::new(id, f.name().clone(), ty, !f.is_nullable()));
        }
        Ok(out)
    }

    fn data_type(&mut self, dt: &DataType, field_meta: &arrow_schema::Metadata, path: &str) -> Result<Type> {
        Ok(match dt {
            DataType::Struct(fs) => Type::Struct(StructType::new(self.fields(fs, path)?)),
            DataType::List(el)
            | DataType::LargeList(el)
            | DataType::ListView(el)
            | DataType::LargeListView(el) => {
                let el_path = join(path, "element");
                let id = self.id_for(el, &el_path)?;
                let ty = self.data_type(el.data_type(), el.metadata(), &el_path)?;
                Type::list(id, ty, !el.is_nullable())
            }
            DataType::Map(entries, _) => {
                let kv = match entries.data_type() {
                    DataType::Struct(kv) if kv.len() == 2 => kv,
                    other => {
                        return Err(invalid_data(format!(
                            "expected Arrow map entries of struct<key, value>, found {other} (field '{path}')"
                        )))
                    }
                };
                let (k, v) = (&kv[0], &kv[1]);
                let (kp, vp) = (join(path, "key"), join(path, "value"));
                let kid = self.id_for(k, &kp)?;
                let vid = self.id_for(v, &vp)?;
                let kt = self.data_type(k.data_type(), k.metadata(), &kp)?;
                let vt = self.data_type(v.data_type(), v.metadata(), &vp)?;
                Type::Map(MapType {
                    key_field: Arc::new(NestedField::new(kid, "key", kt, true)),
                    value_field: Arc::new(NestedField::new(vid, "value", vt, !v.is_nullable())),
                })
            }
            DataType::Dictionary(_, value) => self.data_type(value, field_meta, path)?,
            DataType::FixedSizeBinary(16) if is_uuid_extension(field_meta) => {
                Type::Primitive(PrimitiveType::Uuid)
            }
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
                match geoarrow::type_from_extension(field_meta, path) {
                    Some(geo) => Type::Primitive(geo?),
                    None => Type::Primitive(PrimitiveType::Binary),
                }
            }
            other => Type::Primitive(primitive_from_arrow(other, self.opts).map_err(|e| {
                let msg = format!("{} (field '{path}')", e.message());
                crate::error::Error::new(e.kind(), msg)
            })?),
        })
    }
}

/// Arrow's canonical UUID extension (`arrow.uuid`) marks a fixed_size_binary(16) as a uuid;
/// without it a fixed_size_binary(16) is `fixed[16]` (Arrow has no other way to tell).
fn is_uuid_extension(meta: &arrow_schema::Metadata) -> bool {
    meta.get("ARROW:extension:name").is_some_and(|n| n == "arrow.uuid")
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

/// The Iceberg primitive type of an Arrow type, or a NotSupported error.
pub fn primitive_from_arrow(dt: &DataType, opts: FromArrowOptions) -> Result<PrimitiveType> {
    Ok(match dt {
        DataType::Boolean => PrimitiveType::Boolean,
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::UInt8 | DataType::UInt16 => {
            PrimitiveType::Int
        }
        DataType::Int64 | DataType::UInt32 => PrimitiveType::Long,
        DataType::Float16 | DataType::Float32 => PrimitiveType::Float,
        DataType::Float64 => PrimitiveType::Double,
        DataType::Decimal32(p, s) | DataType::Decimal64(p, s) | DataType::Decimal128(p, s) if *s >= 0 => {
            PrimitiveType::Decimal { precision: u32::from(*p), scale: *s as u32 }
        }
        DataType::Date32 | DataType::Date64 => PrimitiveType::Date,
        DataType::Time64(TimeUnit::Microsecond) => PrimitiveType::Time,
        DataType::Timestamp(unit, tz) => {
            let ns = opts.nanosecond_timestamps && *unit == TimeUnit::Nanosecond;
            match (tz.is_some(), ns) {
                (false, false) => PrimitiveType::Timestamp,
                (true, false) => PrimitiveType::Timestamptz,
                (false, true) => PrimitiveType::TimestampNs,
                (true, true) => PrimitiveType::TimestamptzNs,
            }
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => PrimitiveType::String,
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => PrimitiveType::Binary,
        DataType::FixedSizeBinary(n) if *n >= 0 => PrimitiveType::Fixed(*n as u64),
        other => {
            return Err(not_supported(format!(
            "Arrow type {other} has no Iceberg equivalent (expected boolean, integers, floats, decimal128, \
                 date, time64(us), timestamp, string, binary, fixed_size_binary, struct, list or map)"
        )))
        }
    })
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
