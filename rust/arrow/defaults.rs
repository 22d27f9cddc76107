//! Columns filled from a field's format-v3 default value (spec "Default values"): the
//! `initial-default` for rows of data files written before the field existed, the
//! `write-default` for writes whose input does not supply the field. A primitive default is
//! a JSON single value (`Literal::from_json`); a struct default is an object by field id
//! (Java writes `{}`) whose missing fields take their own default of the same kind.

use arrow_array::{new_null_array, ArrayRef, StructArray};
use arrow_schema::DataType;
use serde_json::Value;

use super::constants::constant_array;
use crate::error::{invalid_data, not_supported, Result};
use crate::spec::{DefaultKind, Literal, NestedField, Type};

/// `rows` copies of the `kind` default of `f` as an array of Arrow type `target`, or `None`
/// when the field has no such default (its value is then null). `path` names the field.
pub(crate) fn default_array(
    f: &NestedField,
    kind: DefaultKind,
    target: &DataType,
    rows: usize,
    path: &str,
) -> Result<Option<ArrayRef>> {
    match f.default_json(kind) {
        Some(v) => value_array(f, kind, v, target, rows, path).map(Some),
        None => Ok(None),
    }
}

fn value_array(
    f: &NestedField,
    kind: DefaultKind,
    v: &Value,
    target: &DataType,
    rows: usize,
    path: &str,
) -> Result<ArrayRef> {
    let bad =
        |what: String| invalid_data(format!("the {} of field '{path}' (id {}) {what}", kind.as_str(), f.id));
    match (&f.field_type, target) {
        (Type::Primitive(p), _) => {
            let lit = Literal::from_json(p, v).map_err(|e| bad(format!("is invalid: {}", e.message())))?;
            constant_array(Some(&lit), p, target, rows)
        }
        (Type::Struct(st), DataType::Struct(target_fields)) => {
            let obj = v.as_object().ok_or_else(|| bad(format!("must be a JSON object, found {v}")))?;
            let mut cols = Vec::with_capacity(target_fields.len());
            for (child, tf) in st.fields.iter().zip(target_fields.iter()) {
                let cpath = format!("{path}.{}", child.name);
                let given = obj.get(&child.id.to_string()).filter(|c| !c.is_null());
                let col = match given {
                    Some(cv) => value_array(child, kind, cv, tf.data_type(), rows, &cpath)?,
                    None => match default_array(child, kind, tf.data_type(), rows, &cpath)? {
                        Some(a) => a,
                        None if child.required => {
                            return Err(bad(format!(
                                "gives no value for its required field '{cpath}' (id {}), which has no {}",
                                child.id,
                                kind.as_str()
                            )))
                        }
                        None => new_null_array(tf.data_type(), rows),
                    },
                };
                cols.push(col);
            }
            let out = StructArray::try_new_with_length(target_fields.clone(), cols, None, rows)
                .map_err(|e| bad("does not fit its struct type".into()).with_source(e))?;
            Ok(std::sync::Arc::new(out))
        }
        (t, _) => Err(not_supported(format!(
            "a non-null {} of a {} field is not supported (field '{path}', id {}); Iceberg Java allows only null",
            kind.as_str(),
            match t {
                Type::List(_) => "list",
                Type::Map(_) => "map",
                _ => "nested",
            },
            f.id
        ))),
    }
}

#[cfg(test)]
#[path = "defaults_tests.rs"]
mod tests;
