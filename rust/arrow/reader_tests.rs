use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Int32Type, Int64Type, TimestampMicrosecondType,
};
use arrow_array::Int32Array;
use arrow_schema::{Field, Schema as ArrowSchema};

use super::*;
use crate::spec::StructType;

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/golden/all_types.parquet");
const GOLDEN_ROWS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/golden/all_types_rows.json");

fn golden_schema() -> Schema {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(GOLDEN_ROWS).unwrap()).unwrap();
    Schema::from_json(&v["schema"]).unwrap()
}

fn read_all(path: &str, s: &Schema, batch: usize) -> Vec<RecordBatch> {
    read_parquet(path, s, batch).unwrap().collect::<Result<Vec<_>>>().unwrap()
}

#[test]
fn reads_java_golden_all_types() {
    let schema = golden_schema();
    let batches = read_all(GOLDEN, &schema, 2);
    assert_eq!(batches.iter().map(|b| b.num_rows()).collect::<Vec<_>>(), vec![2, 2, 1]);
    let want = Arc::new(schema_to_arrow(&schema).unwrap());
    for b in &batches {
        assert_eq!(b.schema(), want);
    }
    let all = arrow_select::concat::concat_batches(&want, &batches).unwrap();
    let col = |name: &str| all.column_by_name(name).unwrap().clone();
    let b = col("b");
    let b = b.as_boolean();
    assert_eq!((b.value(0), b.value(1), b.is_null(2), b.value(4)), (true, false, true, true));
    let i = col("i");
    assert_eq!(i.as_primitive::<Int32Type>().value(1), i32::MIN);
    assert_eq!(col("l").as_primitive::<Int64Type>().value(2), i64::MAX);
    let f = col("f");
    let f = f.as_primitive::<Float32Type>();
    assert!(f.value(1).is_nan());
    assert!(f.value(2) == 0.0 && f.value(2).is_sign_negative());
    assert!(f.is_null(3));
    assert_eq!(col("dec9").as_primitive::<Decimal128Type>().value(0), 1420);
    assert_eq!(col("dec38").as_primitive::<Decimal128Type>().value(0), 123456789012345678900123456789);
    assert_eq!(col("dt").as_primitive::<Date32Type>().value(0), 19782);
    assert_eq!(col("dt").as_primitive::<Date32Type>().value(2), -25567);
    let ts = col("ts");
    assert_eq!(ts.as_primitive::<TimestampMicrosecondType>().value(1), -1);
    assert_eq!(ts.as_primitive::<TimestampMicrosecondType>().value(0), 1709210096789012);
    assert_eq!(col("ts_ntz").as_primitive::<TimestampMicrosecondType>().value(2), -1);
    let s = col("s");
    assert_eq!(s.as_string::<i32>().value(0), "héllo wörld 日本語");
    assert_eq!(col("bin").as_binary::<i32>().value(0), &[0, 1, 2, 3]);
    let st = col("st");
    let st = st.as_struct();
    assert!(st.is_valid(1) && st.is_null(2));
    assert_eq!(st.column(0).as_primitive::<Int32Type>().value(4), 5);
    let inner = st.column(2).as_struct();
    assert!(inner.column(0).as_primitive::<arrow_array::types::Float64Type>().value(4).is_nan());
    let arr = col("arr");
    let arr = arr.as_list::<i32>();
    assert_eq!(arr.value(0).as_primitive::<Int32Type>().values().to_vec(), vec![1, 2, 3]);
    assert_eq!(arr.value(1).len(), 0);
    assert!(arr.is_null(3));
    let m = col("m");
    let m = m.as_map();
    let e0 = m.value(0);
    assert_eq!(e0.column(0).as_string::<i32>().value(1), "k2");
    assert_eq!(e0.column(1).as_primitive::<Int32Type>().value(1), 2);
    let m_arr = col("m_arr");
    let m_arr = m_arr.as_map();
    assert_eq!(m_arr.value(1).len(), 2);
    let arr_st = col("arr_st");
    assert_eq!(arr_st.as_list::<i32>().value(1).len(), 2);
}

#[test]
fn projection_reorder_promotion_and_missing_columns() {
    let g = golden_schema();
    let st = g.field_by_id(13).unwrap();
    let Type::Struct(st_type) = &st.field_type else { panic!() };
    let projected = Schema::new(
        0,
        vec![
            NestedField::optional(11, "s", PrimitiveType::String.into()),
            NestedField::optional(2, "i_as_long", PrimitiveType::Long.into()),
            NestedField::optional(99, "added_later", PrimitiveType::Double.into()),
            NestedField::optional(
                13,
                "st",
                Type::Struct(StructType::new(vec![
                    st_type.fields[0].as_ref().clone(),
                    NestedField::optional(98, "new_child", PrimitiveType::String.into()),
                ])),
            ),
            NestedField::optional(4, "f_as_double", PrimitiveType::Double.into()),
        ],
        vec![],
    )
    .unwrap();
    let batches = read_all(GOLDEN, &projected, 1024);
    assert_eq!(batches.len(), 1);
    let b = &batches[0];
    assert_eq!(b.schema().as_ref(), &schema_to_arrow(&projected).unwrap());
    assert_eq!(b.column(0).as_string::<i32>().value(4), "a");
    assert_eq!(b.column(1).as_primitive::<Int64Type>().value(1), i64::from(i32::MIN));
    assert_eq!(b.column(2).null_count(), 5);
    let st = b.column(3).as_struct();
    assert_eq!(st.num_columns(), 2);
    assert_eq!(st.column(0).as_primitive::<Int32Type>().value(0), 1);
    assert_eq!(st.column(1).null_count(), 5);
    assert_eq!(b.column(4).as_primitive::<arrow_array::types::Float64Type>().value(0), 1.5);

    // A required column the file lacks is an error naming it and the file.
    let bad =
        Schema::new(0, vec![NestedField::required(99, "must", PrimitiveType::Int.into())], vec![]).unwrap();
    let err = read_parquet(GOLDEN, &bad, 10).unwrap_err();
    assert!(err.to_string().contains("'must'") && err.to_string().contains("all_types.parquet"), "{err}");
    // An incompatible type is an error, not silent nulls.
    let bad =
        Schema::new(0, vec![NestedField::optional(11, "s", PrimitiveType::Int.into())], vec![]).unwrap();
    let err = read_parquet(GOLDEN, &bad, 10).unwrap().next().unwrap().unwrap_err();
    assert!(err.to_string().contains("expected int for field 's'"), "{err}");
}

#[test]
fn file_without_field_ids_is_not_supported() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("noids.parquet");
    let schema = Arc::new(ArrowSchema::new(vec![Field::new("a", DataType::Int32, true)]));
    let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(Int32Array::from(vec![1, 2]))]).unwrap();
    let mut w =
        parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), schema, None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let s = Schema::new(0, vec![NestedField::optional(1, "a", PrimitiveType::Int.into())], vec![]).unwrap();
    let err = read_parquet(path.to_str().unwrap(), &s, 10).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotSupported);
    assert!(err.to_string().contains("noids.parquet"), "{err}");
}
