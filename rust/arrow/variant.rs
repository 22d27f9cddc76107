//! Reading v3 `variant` columns. Parquet stores an unshredded variant as a group (annotated
//! `VARIANT`, carrying the column's field id) of two required binary children without field
//! ids, `metadata` and `value`; icefloe reads it as the Arrow struct of those two buffers
//! (`schema::variant_fields`). A shredded variant (a `typed_value` child) is refused by name
//! rather than read without its shredded values.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, StructArray};
use arrow_cast::{cast_with_options, CastOptions};
use arrow_schema::{DataType, Fields};

use super::reader::Match;
use super::schema::{VARIANT_METADATA, VARIANT_VALUE};
use crate::error::{invalid_data, not_supported, Result};
use crate::spec::NestedField;

/// The child of a variant group that holds shredded values.
const TYPED_VALUE: &str = "typed_value";

/// A file's variant column as the Arrow struct `target` (`metadata`, `value`).
pub(crate) fn adapt_variant(
    array: &ArrayRef,
    f: &NestedField,
    target: &Fields,
    path: &str,
    m: Match,
) -> Result<ArrayRef> {
    if m == Match::ByName {
        return Err(not_supported(format!(
            "column '{path}' (field id {}) has type variant, which icefloe cannot write yet",
            f.id
        )));
    }
    let sa = array.as_any().downcast_ref::<StructArray>().ok_or_else(|| {
        invalid_data(format!(
            "expected a variant group (metadata, value) for field '{path}' (id {}), found Arrow type {} \
             in the data file",
            f.id,
            array.data_type()
        ))
    })?;
    let child = |name: &str| sa.fields().iter().position(|c| c.name() == name).map(|i| sa.column(i));
    if child(TYPED_VALUE).is_some() {
        return Err(not_supported(format!(
            "column '{path}' (field id {}) holds a shredded variant (a '{TYPED_VALUE}' group), which \
             icefloe cannot read yet; select the other columns",
            f.id
        )));
    }
    let mut columns = Vec::with_capacity(2);
    for name in [VARIANT_METADATA, VARIANT_VALUE] {
        let col = child(name).ok_or_else(|| {
            invalid_data(format!(
                "expected a '{name}' child in variant field '{path}' (id {}), found children [{}]",
                f.id,
                sa.fields().iter().map(|c| c.name().as_str()).collect::<Vec<_>>().join(", ")
            ))
        })?;
        let binary = if col.data_type() == &DataType::Binary {
            col.clone()
        } else {
            let strict = CastOptions { safe: false, ..Default::default() };
            cast_with_options(col, &DataType::Binary, &strict).map_err(|e| {
                invalid_data(format!(
                    "expected binary for '{path}.{name}' (id {}), found Arrow type {}: {e}",
                    f.id,
                    col.data_type()
                ))
            })?
        };
        columns.push(binary);
    }
    let out = StructArray::try_new_with_length(target.clone(), columns, sa.nulls().cloned(), sa.len())
        .map_err(|e| invalid_data(format!("cannot read variant field '{path}' (id {}): {e}", f.id)))?;
    Ok(Arc::new(out))
}

#[cfg(test)]
mod tests {
    use arrow_array::{BinaryArray, Int32Array};
    use arrow_buffer::NullBuffer;
    use arrow_schema::Field;

    use super::*;
    use crate::arrow::schema::variant_fields;
    use crate::spec::{PrimitiveType, Type};

    fn field() -> NestedField {
        NestedField::optional(7, "v", Type::Primitive(PrimitiveType::Variant))
    }

    fn group(children: Vec<(&str, ArrayRef)>, nulls: Option<NullBuffer>) -> ArrayRef {
        let fields: Vec<Field> =
            children.iter().map(|(n, a)| Field::new(*n, a.data_type().clone(), true)).collect();
        let arrays = children.into_iter().map(|(_, a)| a).collect();
        Arc::new(StructArray::new(fields.into(), arrays, nulls))
    }

    fn binary(values: &[&[u8]]) -> ArrayRef {
        Arc::new(BinaryArray::from_iter_values(values.iter().copied()))
    }

    #[test]
    fn an_unshredded_group_reads_as_metadata_and_value_in_parquet_order() {
        // The file's children in the other order, and a null row: read by name, nulls kept.
        let file = group(
            vec![("value", binary(&[b"\x0cA", b""])), ("metadata", binary(&[b"\x01\x00\x00", b""]))],
            Some(NullBuffer::from(vec![true, false])),
        );
        let out = adapt_variant(&file, &field(), &variant_fields(), "v", Match::ById).expect("read");
        let s = out.as_any().downcast_ref::<StructArray>().expect("struct");
        assert_eq!(s.fields(), &variant_fields());
        assert_eq!(
            s.column(0).as_any().downcast_ref::<BinaryArray>().expect("bin").value(0),
            b"\x01\x00\x00"
        );
        assert_eq!(s.column(1).as_any().downcast_ref::<BinaryArray>().expect("bin").value(0), b"\x0cA");
        assert!(s.is_valid(0) && s.is_null(1));
    }

    #[test]
    fn shredded_missing_children_and_writes_are_refused_by_name() {
        let shredded = group(
            vec![
                ("metadata", binary(&[b"\x01\x00\x00"])),
                ("value", binary(&[b""])),
                ("typed_value", Arc::new(Int32Array::from(vec![1]))),
            ],
            None,
        );
        let e = adapt_variant(&shredded, &field(), &variant_fields(), "v", Match::ById).unwrap_err();
        assert!(e.to_string().contains("'v' (field id 7) holds a shredded variant"), "{e}");

        let no_value = group(vec![("metadata", binary(&[b"\x01\x00\x00"]))], None);
        let e = adapt_variant(&no_value, &field(), &variant_fields(), "v", Match::ById).unwrap_err();
        assert!(e.to_string().contains("expected a 'value' child in variant field 'v' (id 7)"), "{e}");

        let not_a_group = binary(&[b"x"]);
        let e = adapt_variant(&not_a_group, &field(), &variant_fields(), "v", Match::ById).unwrap_err();
        assert!(e.to_string().contains("expected a variant group"), "{e}");

        let input =
            group(vec![("metadata", binary(&[b"\x01\x00\x00"])), ("value", binary(&[b"\x00"]))], None);
        let e = adapt_variant(&input, &field(), &variant_fields(), "v", Match::ByName).unwrap_err();
        assert!(e.to_string().contains("cannot write yet"), "{e}");
    }
}
