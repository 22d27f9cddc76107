use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, Decimal128Type, Int32Type, TimestampMicrosecondType};
use arrow_array::Array;
use serde_json::json;

use super::*;
use crate::arrow::schema::type_to_arrow;
use crate::error::ErrorKind;
use crate::spec::{PrimitiveType, StructType};

fn array(f: &NestedField, kind: DefaultKind, rows: usize) -> Result<Option<ArrayRef>> {
    let dt = type_to_arrow(&f.field_type).unwrap();
    default_array(f, kind, &dt, rows, &f.name)
}

#[test]
fn primitive_defaults_by_kind() {
    let f = NestedField::optional(5, "c", PrimitiveType::Int.into())
        .with_defaults(Some(json!(42)), Some(json!(7)));
    let init = array(&f, DefaultKind::Initial, 3).unwrap().unwrap();
    assert_eq!(init.as_primitive::<Int32Type>().values().to_vec(), vec![42; 3]);
    let write = array(&f, DefaultKind::Write, 2).unwrap().unwrap();
    assert_eq!(write.as_primitive::<Int32Type>().values().to_vec(), vec![7; 2]);
    // JSON null and an unset default are the null default.
    let f = NestedField::optional(5, "c", PrimitiveType::Int.into()).with_defaults(Some(Value::Null), None);
    assert!(array(&f, DefaultKind::Initial, 3).unwrap().is_none());
    assert!(array(&f, DefaultKind::Write, 3).unwrap().is_none());
}

#[test]
fn date_timestamp_decimal_and_string_defaults() {
    let cases = [
        (PrimitiveType::Date, json!("2024-02-29")),
        (PrimitiveType::Timestamptz, json!("2024-02-29T12:34:56.789012+00:00")),
        (PrimitiveType::Decimal { precision: 9, scale: 2 }, json!("-12.50")),
        (PrimitiveType::String, json!("héllo")),
    ];
    let mut out = vec![];
    for (i, (ty, v)) in cases.into_iter().enumerate() {
        let f = NestedField::required(i as i32, "c", ty.into()).with_defaults(Some(v), None);
        let a = array(&f, DefaultKind::Initial, 2).unwrap().unwrap();
        assert_eq!((a.len(), a.null_count()), (2, 0));
        out.push(a);
    }
    assert_eq!(out[0].as_primitive::<Date32Type>().value(1), 19782);
    assert_eq!(out[1].as_primitive::<TimestampMicrosecondType>().value(0), 1709210096789012);
    assert_eq!(out[2].as_primitive::<Decimal128Type>().value(0), -1250);
    assert_eq!(out[3].as_string::<i32>().value(1), "héllo");
}

#[test]
fn struct_default_takes_each_fields_own_default() {
    let st = Type::Struct(StructType::new(vec![
        NestedField::required(11, "x", PrimitiveType::Int.into()).with_defaults(Some(json!(1)), None),
        NestedField::optional(12, "y", PrimitiveType::Int.into()).with_defaults(Some(json!(2)), None),
        NestedField::optional(13, "z", PrimitiveType::Int.into()),
    ]));
    let f = NestedField::optional(10, "p", st.clone()).with_defaults(Some(json!({"12": 5})), None);
    let a = array(&f, DefaultKind::Initial, 2).unwrap().unwrap();
    let s = a.as_struct();
    assert_eq!(s.null_count(), 0);
    assert_eq!(s.column(0).as_primitive::<Int32Type>().value(1), 1);
    assert_eq!(s.column(1).as_primitive::<Int32Type>().value(1), 5);
    assert_eq!(s.column(2).null_count(), 2);
    // No write-default on the required x: a struct write-default cannot be built.
    let f = NestedField::optional(10, "p", st).with_defaults(None, Some(json!({})));
    let err = array(&f, DefaultKind::Write, 2).unwrap_err();
    assert!(err.to_string().contains("'p.x' (id 11)"), "{err}");
}

/// A Java data file read with fields added after it was written: top-level (a required
/// one with a default) and inside an existing struct; a struct absent from the file and
/// without a default of its own stays null.
#[test]
fn reading_a_file_without_the_column_returns_its_initial_default() {
    use crate::arrow::read_parquet;
    use crate::spec::Schema;
    let path = format!("{}/tests/data/golden/all_types.parquet", env!("CARGO_MANIFEST_DIR"));
    let with = |f: NestedField, d: Value| f.with_defaults(Some(d.clone()), Some(d));
    let st = Type::Struct(StructType::new(vec![
        NestedField::optional(14, "a", PrimitiveType::Int.into()),
        with(NestedField::optional(501, "later", PrimitiveType::String.into()), json!("dflt")),
    ]));
    let absent_struct = Type::Struct(StructType::new(vec![with(
        NestedField::required(503, "x", PrimitiveType::Int.into()),
        json!(3),
    )]));
    let schema = Schema::new(
        0,
        vec![
            NestedField::optional(2, "i", PrimitiveType::Int.into()),
            with(NestedField::required(500, "req", PrimitiveType::Long.into()), json!(42)),
            NestedField::optional(13, "st", st),
            NestedField::optional(502, "s2", absent_struct),
        ],
        vec![],
    )
    .unwrap();
    let batches: Vec<_> = read_parquet(&path, &schema, 10).unwrap().collect::<Result<_>>().unwrap();
    let b = &batches[0];
    assert_eq!(b.num_rows(), 5);
    let req = b.column(1).as_primitive::<arrow_array::types::Int64Type>();
    assert_eq!((req.null_count(), req.value(4)), (0, 42));
    let st = b.column(2).as_struct();
    let later = st.column(1).as_string::<i32>();
    // Rows 2 and 3 have a null struct in the file: null, whatever the child's default.
    assert_eq!((0..5).map(|i| st.is_valid(i)).collect::<Vec<_>>(), vec![true, true, false, false, true]);
    assert_eq!((later.value(0), later.value(4)), ("dflt", "dflt"));
    assert_eq!(b.column(3).null_count(), 5);
}

/// A write whose input lacks columns stores their write-default; a required column
/// without one is still refused.
#[test]
fn writing_input_without_the_column_stores_its_write_default() {
    use std::sync::Arc;

    use arrow_array::{Int64Array, RecordBatch};
    use arrow_schema::{Field, Schema as ArrowSchema};

    use crate::arrow::schema_to_arrow;
    use crate::spec::Schema;
    use crate::writer::{check_arrow_schema, conform_batch};
    let table = |req_default: Option<Value>| {
        Schema::new(
            0,
            vec![
                NestedField::required(1, "id", PrimitiveType::Long.into()),
                NestedField::required(2, "req", PrimitiveType::String.into())
                    .with_defaults(Some(json!("old")), req_default),
                NestedField::optional(3, "opt", PrimitiveType::Int.into())
                    .with_defaults(Some(json!(1)), Some(json!(2))),
            ],
            vec![],
        )
        .unwrap()
    };
    let input = Arc::new(ArrowSchema::new(vec![Field::new("id", DataType::Int64, false)]));
    let batch = RecordBatch::try_new(input.clone(), vec![Arc::new(Int64Array::from(vec![1, 2]))]).unwrap();
    let schema = table(Some(json!("new")));
    check_arrow_schema(&schema, &input).unwrap();
    let out = conform_batch(&schema, &Arc::new(schema_to_arrow(&schema).unwrap()), &batch).unwrap();
    assert_eq!(out.column(1).as_string::<i32>().value(1), "new");
    assert_eq!(out.column(2).as_primitive::<Int32Type>().values().to_vec(), vec![2, 2]);
    let schema = table(None);
    let err = check_arrow_schema(&schema, &input).unwrap_err();
    assert!(err.to_string().contains("missing required column 'req'"), "{err}");
}

#[test]
fn invalid_and_unsupported_defaults_are_errors_naming_the_field() {
    let f = NestedField::optional(5, "c", PrimitiveType::Int.into()).with_defaults(Some(json!("x")), None);
    let err = array(&f, DefaultKind::Initial, 1).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidData);
    assert!(err.to_string().contains("initial-default of field 'c' (id 5)"), "{err}");
    let f = NestedField::optional(6, "l", Type::list(7, PrimitiveType::Int.into(), false))
        .with_defaults(Some(json!([1])), None);
    assert_eq!(array(&f, DefaultKind::Initial, 1).unwrap_err().kind(), ErrorKind::NotSupported);
}
