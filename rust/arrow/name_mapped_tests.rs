//! Reading a Parquet file written without field ids through a name mapping: aliases,
//! nested struct / list / map columns, unmapped columns ignored, new columns as nulls.

use std::fs::File;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type, Int64Type};
use arrow_array::{
    Array, ArrayRef, Float64Array, Int32Array, Int64Array, ListArray, MapArray, RecordBatch, StringArray,
    StructArray,
};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, Field, Fields, Schema as ArrowSchema};
use parquet::arrow::ArrowWriter;

use crate::arrow::{read_task, ReadOptions};
use crate::error::ErrorKind;
use crate::manifest::DataFile;
use crate::scan::FileScanTask;
use crate::spec::{NameMapping, NestedField, PrimitiveType, Schema, StructType, Type};

/// 3 rows: id, payload (mapped by its alias), loc{lat, extra}, pts list<{x}>, props map, junk.
fn write_file_without_ids(path: &str) -> i64 {
    let loc_fields = Fields::from(vec![
        Field::new("lat", DataType::Float64, true),
        Field::new("extra", DataType::Int32, true),
    ]);
    let pt_fields = Fields::from(vec![Field::new("x", DataType::Int32, true)]);
    let pt_el = Arc::new(Field::new("element", DataType::Struct(pt_fields.clone()), true));
    let kv = Fields::from(vec![
        Field::new("key", DataType::Utf8, false),
        Field::new("value", DataType::Int32, true),
    ]);
    let entries = Arc::new(Field::new("key_value", DataType::Struct(kv.clone()), false));
    let loc = StructArray::new(
        loc_fields.clone(),
        vec![
            Arc::new(Float64Array::from(vec![Some(1.5), None, Some(3.5)])),
            Arc::new(Int32Array::from(vec![7, 8, 9])),
        ],
        Some(vec![true, true, false].into()),
    );
    let pts = ListArray::new(
        pt_el.clone(),
        OffsetBuffer::new(vec![0, 2, 2, 3].into()),
        Arc::new(StructArray::new(pt_fields, vec![Arc::new(Int32Array::from(vec![10, 11, 12]))], None)),
        None,
    );
    let props = MapArray::new(
        entries.clone(),
        OffsetBuffer::new(vec![0, 1, 1, 3].into()),
        StructArray::new(
            kv,
            vec![Arc::new(StringArray::from(vec!["a", "b", "c"])), Arc::new(Int32Array::from(vec![1, 2, 3]))],
            None,
        ),
        None,
        false,
    );
    let schema = Arc::new(ArrowSchema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("payload", DataType::Utf8, true),
        Field::new("loc", loc.data_type().clone(), true),
        Field::new("pts", pts.data_type().clone(), true),
        Field::new("props", props.data_type().clone(), true),
        Field::new("junk", DataType::Int32, true),
    ]));
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(vec![1, 2, 3])),
        Arc::new(StringArray::from(vec![Some("a"), None, Some("c")])),
        Arc::new(loc),
        Arc::new(pts),
        Arc::new(props),
        Arc::new(Int32Array::from(vec![100, 200, 300])),
    ];
    let batch = RecordBatch::try_new(schema.clone(), cols).unwrap();
    let mut w = ArrowWriter::try_new(File::create(path).unwrap(), schema, None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    std::fs::metadata(path).unwrap().len() as i64
}

const MAPPING: &str = r#"[
  {"field-id": 1, "names": ["id"]},
  {"field-id": 2, "names": ["data", "payload"]},
  {"field-id": 3, "names": ["loc"], "fields": [{"field-id": 4, "names": ["lat"]}, {"field-id": 5, "names": ["extra"]}]},
  {"field-id": 6, "names": ["pts"], "fields": [{"field-id": 7, "names": ["element"], "fields": [{"field-id": 8, "names": ["x"]}]}]},
  {"field-id": 9, "names": ["props"], "fields": [{"field-id": 10, "names": ["key"]}, {"field-id": 11, "names": ["value"]}]}
]"#;

/// The table's schema: `payload` renamed `data`, `loc.extra` dropped, `added` new.
fn table_schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long.into()),
            NestedField::optional(2, "data", PrimitiveType::String.into()),
            NestedField::optional(
                3,
                "loc",
                Type::Struct(StructType::new(vec![NestedField::optional(
                    4,
                    "lat",
                    PrimitiveType::Double.into(),
                )])),
            ),
            NestedField::optional(
                6,
                "pts",
                Type::list(
                    7,
                    Type::Struct(StructType::new(vec![NestedField::optional(
                        8,
                        "x",
                        PrimitiveType::Long.into(),
                    )])),
                    false,
                ),
            ),
            NestedField::optional(
                9,
                "props",
                Type::map(10, PrimitiveType::String.into(), 11, PrimitiveType::Int.into(), false),
            ),
            NestedField::optional(20, "added", PrimitiveType::String.into()),
        ],
        vec![],
    )
    .unwrap()
}

fn task(path: &str, size: i64) -> FileScanTask {
    FileScanTask::whole_file(DataFile::new_data(path.to_string(), 3, size), 0)
}

#[test]
fn reads_a_file_without_ids_through_the_mapping() {
    let dir = tempfile::tempdir().unwrap();
    let path = format!("{}/noids.parquet", dir.path().to_str().unwrap());
    let size = write_file_without_ids(&path);
    let mapping = Arc::new(NameMapping::from_json(MAPPING).unwrap());
    let opts = ReadOptions { name_mapping: Some(mapping), ..Default::default() };
    let schema = table_schema();
    let batches = read_task(&task(&path, size), &schema, opts)
        .unwrap()
        .collect::<crate::error::Result<Vec<_>>>()
        .unwrap();
    assert_eq!(batches.len(), 1);
    let b = &batches[0];
    assert_eq!(b.num_columns(), 6);
    assert_eq!(b.column(0).as_primitive::<Int64Type>().values().to_vec(), vec![1, 2, 3]);
    let data = b.column(1).as_string::<i32>();
    assert_eq!((data.value(0), data.is_null(1), data.value(2)), ("a", true, "c"));
    let loc = b.column(2).as_struct();
    assert_eq!(loc.num_columns(), 1);
    assert!(loc.is_valid(0) && loc.is_null(2));
    assert_eq!(loc.column(0).as_primitive::<Float64Type>().value(0), 1.5);
    let pts = b.column(3).as_list::<i32>();
    assert_eq!(
        pts.value(0).as_struct().column(0).as_primitive::<Int64Type>().values().to_vec(),
        vec![10, 11]
    );
    assert_eq!(pts.value(1).len(), 0);
    let props = b.column(4).as_map();
    assert_eq!(props.value(2).column(0).as_string::<i32>().value(1), "c");
    assert_eq!(props.value(2).column(1).as_primitive::<Int32Type>().value(1), 3);
    assert_eq!(b.column(5).null_count(), 3);

    // Projection of a nested leaf only, and a projection of nothing mapped but `added`.
    let only = Schema::new(0, vec![schema.field_by_id(9).unwrap().as_ref().clone()], vec![]).unwrap();
    let mapping = Arc::new(NameMapping::from_json(MAPPING).unwrap());
    let opts = ReadOptions { name_mapping: Some(mapping), ..Default::default() };
    let rows: usize =
        read_task(&task(&path, size), &only, opts).unwrap().map(|b| b.unwrap().num_rows()).sum();
    assert_eq!(rows, 3);
}

#[test]
fn unmapped_file_without_mapping_is_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = format!("{}/noids.parquet", dir.path().to_str().unwrap());
    let size = write_file_without_ids(&path);
    let err = read_task(&task(&path, size), &table_schema(), ReadOptions::default()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotSupported);
    assert!(err.to_string().contains("noids.parquet") && err.to_string().contains("name-mapping"), "{err}");
}

#[test]
fn a_required_column_the_mapping_cannot_find_fails() {
    let dir = tempfile::tempdir().unwrap();
    let path = format!("{}/noids.parquet", dir.path().to_str().unwrap());
    let size = write_file_without_ids(&path);
    // `id` is not in this mapping, so the file has no column for the required field 1.
    let mapping = Arc::new(NameMapping::from_json(r#"[{"field-id": 2, "names": ["payload"]}]"#).unwrap());
    let opts = ReadOptions { name_mapping: Some(mapping), ..Default::default() };
    let mut r = read_task(&task(&path, size), &table_schema(), opts).unwrap();
    let err = r.next().unwrap().unwrap_err();
    assert!(err.to_string().contains("'id'"), "{err}");
}
