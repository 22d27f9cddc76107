//! v3 `variant` columns. Parquet stores an unshredded variant as a group (annotated `VARIANT`,
//! carrying the column's field id) of two required binary children without field ids,
//! `metadata` and `value`; icefloe reads it as the Arrow struct of those two buffers
//! (`schema::variant_fields`) and writes such a struct back as that group (the annotation:
//! `writer::parquet_writer::parquet_schema`). A shredded variant (a `typed_value` child) is
//! refused by name rather than read without its shredded values. Input to a write is the same
//! struct, children found by name (Spark's Arrow form has `value` first): each non-null row
//! needs both buffers, and a metadata buffer of a version this encoding knows.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, BinaryArray, StructArray};
use arrow_cast::{cast_with_options, CastOptions};
use arrow_schema::{DataType, Fields};

use super::field_match::Match;
use super::schema::{VARIANT_METADATA, VARIANT_VALUE};
use crate::error::{invalid_data, not_supported, validation, Error, Result};
use crate::spec::NestedField;

/// The child of a variant group that holds shredded values.
const TYPED_VALUE: &str = "typed_value";
/// The Variant encoding version in the low four bits of a metadata buffer's header byte.
const VARIANT_VERSION: u8 = 1;

/// A variant column (a file's, or a write's input) as the Arrow struct `target` (`metadata`,
/// `value`).
pub(crate) fn adapt_variant(
    array: &ArrayRef,
    f: &NestedField,
    target: &Fields,
    path: &str,
    m: Match,
) -> Result<ArrayRef> {
    let err = |msg: String| -> Error {
        match m {
            Match::ById => invalid_data(msg),
            Match::ByName => validation(msg),
        }
    };
    let source = match m {
        Match::ById => "in the data file",
        Match::ByName => "in the input",
    };
    let sa = array.as_any().downcast_ref::<StructArray>().ok_or_else(|| {
        err(format!(
            "expected a variant struct (metadata, value) for field '{path}' (id {}), found Arrow type {} \
             {source}",
            f.id,
            array.data_type()
        ))
    })?;
    let child = |name: &str| sa.fields().iter().position(|c| c.name() == name).map(|i| sa.column(i));
    if child(TYPED_VALUE).is_some() {
        return Err(not_supported(format!(
            "column '{path}' (field id {}) holds a shredded variant (a '{TYPED_VALUE}' group), which \
             icefloe cannot {} yet{}",
            f.id,
            if m == Match::ById { "read" } else { "write" },
            if m == Match::ById { "; select the other columns" } else { "" }
        )));
    }
    let mut columns = Vec::with_capacity(2);
    for name in [VARIANT_METADATA, VARIANT_VALUE] {
        let col = child(name).ok_or_else(|| {
            err(format!(
                "expected a '{name}' child in variant field '{path}' (id {}), found children [{}] {source}",
                f.id,
                sa.fields().iter().map(|c| c.name().as_str()).collect::<Vec<_>>().join(", ")
            ))
        })?;
        let binary = if col.data_type() == &DataType::Binary {
            col.clone()
        } else {
            let strict = CastOptions { safe: false, ..Default::default() };
            cast_with_options(col, &DataType::Binary, &strict).map_err(|e| {
                err(format!(
                    "expected binary for '{path}.{name}' (id {}), found Arrow type {} {source}: {e}",
                    f.id,
                    col.data_type()
                ))
            })?
        };
        columns.push(binary);
    }
    if m == Match::ByName {
        check_input(sa, &columns, f, path)?;
    }
    let out = StructArray::try_new_with_length(target.clone(), columns, sa.nulls().cloned(), sa.len())
        .map_err(|e| err(format!("cannot take variant field '{path}' (id {}): {e}", f.id)))?;
    Ok(Arc::new(out))
}

/// A write's variant values: every non-null row has both buffers, a non-empty value and a
/// metadata buffer whose header names encoding version 1 (what readers check first).
fn check_input(sa: &StructArray, columns: &[ArrayRef], f: &NestedField, path: &str) -> Result<()> {
    let as_binary = |c: &ArrayRef| c.as_any().downcast_ref::<BinaryArray>().cloned();
    let (Some(metadata), Some(value)) =
        (columns.first().and_then(as_binary), columns.get(1).and_then(as_binary))
    else {
        return Err(validation(format!(
            "variant field '{path}' (id {}): expected two binary children",
            f.id
        )));
    };
    for row in 0..sa.len() {
        if sa.is_null(row) {
            continue;
        }
        let problem = if metadata.is_null(row) || value.is_null(row) {
            Some("a null metadata or value buffer in a non-null variant".to_string())
        } else if value.value(row).is_empty() {
            Some("an empty value buffer".to_string())
        } else {
            match metadata.value(row).first() {
                None => Some("an empty metadata buffer".to_string()),
                Some(h) if h & 0x0F != VARIANT_VERSION => {
                    Some(format!("metadata of encoding version {} (expected {VARIANT_VERSION})", h & 0x0F))
                }
                Some(_) => None,
            }
        };
        if let Some(p) = problem {
            return Err(validation(format!(
                "column '{path}' (field id {}) row {row}: {p}; a variant is written as Spark's and \
                 Parquet's binary encoding (metadata, value)",
                f.id
            )));
        }
    }
    Ok(())
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
    fn shredded_and_missing_children_are_refused_by_name() {
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
        assert!(e.to_string().contains("expected a variant struct"), "{e}");
    }

    #[test]
    fn input_in_sparks_order_is_taken_and_malformed_values_are_refused() {
        // Spark's Arrow form: value first. A null row may hold anything.
        let input = group(
            vec![("value", binary(&[b"\x0cA", b""])), ("metadata", binary(&[b"\x01\x00\x00", b""]))],
            Some(NullBuffer::from(vec![true, false])),
        );
        let out = adapt_variant(&input, &field(), &variant_fields(), "v", Match::ByName).expect("taken");
        let s = out.as_any().downcast_ref::<StructArray>().expect("struct");
        assert_eq!(s.fields(), &variant_fields());
        assert_eq!(s.column(1).as_any().downcast_ref::<BinaryArray>().expect("bin").value(0), b"\x0cA");
        assert!(s.is_null(1));

        for (metadata, value, expected) in [
            (&b"\x02\x00\x00"[..], &b"\x00"[..], "row 0: metadata of encoding version 2 (expected 1)"),
            (&b""[..], &b"\x00"[..], "row 0: an empty metadata buffer"),
            (&b"\x01\x00\x00"[..], &b""[..], "row 0: an empty value buffer"),
        ] {
            let bad = group(vec![("metadata", binary(&[metadata])), ("value", binary(&[value]))], None);
            let e = adapt_variant(&bad, &field(), &variant_fields(), "v", Match::ByName).unwrap_err();
            assert_eq!(e.kind(), crate::error::ErrorKind::Validation);
            assert!(e.to_string().contains(&format!("column 'v' (field id 7) {expected}")), "{e}");
        }
        let shredded = group(
            vec![
                ("metadata", binary(&[b"\x01\x00\x00"])),
                ("value", binary(&[b"\x00"])),
                ("typed_value", Arc::new(Int32Array::from(vec![1]))),
            ],
            None,
        );
        let e = adapt_variant(&shredded, &field(), &variant_fields(), "v", Match::ByName).unwrap_err();
        assert!(e.to_string().contains("cannot write yet"), "{e}");
    }
}
