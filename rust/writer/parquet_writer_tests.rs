use arrow_array::builder::{Int32Builder, MapBuilder, StringBuilder};
use arrow_array::*;
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::DataType;
use parquet::basic::{TimeUnit as PqTimeUnit, Type as PhysicalType};
use parquet::file::reader::{FileReader, SerializedFileReader};

use super::*;
use crate::spec::{Literal, NestedField, StructType};
use crate::writer::MetricsConfig;
use std::fs::File;

pub(crate) fn all_types_schema() -> Schema {
    let p = |t: PrimitiveType| -> Type { t.into() };
    Schema::new(
        0,
        vec![
            NestedField::optional(1, "b", p(PrimitiveType::Boolean)),
            NestedField::optional(2, "i", p(PrimitiveType::Int)),
            NestedField::required(3, "l", p(PrimitiveType::Long)),
            NestedField::optional(4, "f", p(PrimitiveType::Float)),
            NestedField::optional(5, "d", p(PrimitiveType::Double)),
            NestedField::optional(6, "dec9", p(PrimitiveType::Decimal { precision: 9, scale: 2 })),
            NestedField::optional(7, "dec18", p(PrimitiveType::Decimal { precision: 18, scale: 3 })),
            NestedField::optional(8, "dec38", p(PrimitiveType::Decimal { precision: 38, scale: 10 })),
            NestedField::optional(9, "dt", p(PrimitiveType::Date)),
            NestedField::optional(10, "t", p(PrimitiveType::Time)),
            NestedField::optional(11, "ts", p(PrimitiveType::Timestamp)),
            NestedField::optional(12, "tstz", p(PrimitiveType::Timestamptz)),
            NestedField::optional(13, "s", p(PrimitiveType::String)),
            NestedField::optional(14, "u", p(PrimitiveType::Uuid)),
            NestedField::optional(15, "fx", p(PrimitiveType::Fixed(3))),
            NestedField::optional(16, "bin", p(PrimitiveType::Binary)),
            NestedField::optional(
                17,
                "st",
                Type::Struct(StructType::new(vec![
                    NestedField::optional(18, "x", p(PrimitiveType::Double)),
                    NestedField::optional(19, "y", p(PrimitiveType::String)),
                ])),
            ),
            NestedField::optional(20, "lst", Type::list(21, p(PrimitiveType::Double), false)),
            NestedField::optional(
                22,
                "m",
                Type::map(23, p(PrimitiveType::String), 24, p(PrimitiveType::Int), false),
            ),
        ],
        vec![],
    )
    .unwrap()
}

pub(crate) const LONG_S0: &str = "héllo wörld 日本語 and more than sixteen";
pub(crate) const LONG_S3: &str = "😀 emoji and a string longer than sixteen chars";

/// 4 rows: NaN, ±0.0, nulls, non-ASCII strings > 16 chars, pre-1970 dates/timestamps.
pub(crate) fn all_types_batch(schema: &Schema) -> RecordBatch {
    let arrow = Arc::new(schema_to_arrow(schema).unwrap());
    let dec = |v: Vec<Option<i128>>, p: u8, s: i8| -> ArrayRef {
        Arc::new(Decimal128Array::from(v).with_precision_and_scale(p, s).unwrap())
    };
    let uuid_a = [0x80u8; 16];
    let uuid_b = [0x01u8; 16];
    let DataType::Struct(st_fields) = arrow.field(16).data_type().clone() else { panic!() };
    let st = StructArray::try_new(
        st_fields,
        vec![
            Arc::new(Float64Array::from(vec![Some(1.0), Some(f64::NAN), Some(f64::NAN), None])),
            Arc::new(StringArray::from(vec![Some("p"), Some("hidden"), None, Some("q")])),
        ],
        Some(NullBuffer::from(vec![true, false, true, true])),
    )
    .unwrap();
    let DataType::List(el) = arrow.field(17).data_type().clone() else { panic!() };
    let lst = ListArray::try_new(
        el,
        OffsetBuffer::from_lengths([2, 0, 0, 1]),
        Arc::new(Float64Array::from(vec![Some(1.0), Some(f64::NAN), Some(2.0)])),
        Some(NullBuffer::from(vec![true, true, false, true])),
    )
    .unwrap();
    let DataType::Map(entries, _) = arrow.field(18).data_type().clone() else { panic!() };
    let DataType::Struct(kv) = entries.data_type().clone() else { panic!() };
    let mut mb = MapBuilder::new(None, StringBuilder::new(), Int32Builder::new());
    mb.keys().append_value("k");
    mb.values().append_value(1);
    mb.append(true).unwrap();
    mb.append(true).unwrap();
    mb.append(false).unwrap();
    mb.keys().append_value("z");
    mb.values().append_null();
    mb.append(true).unwrap();
    let built = mb.finish();
    let m = MapArray::try_new(
        entries.clone(),
        built.offsets().clone(),
        StructArray::try_new(kv, built.entries().columns().to_vec(), None).unwrap(),
        built.nulls().cloned(),
        false,
    )
    .unwrap();
    let cols: Vec<ArrayRef> = vec![
        Arc::new(BooleanArray::from(vec![Some(true), Some(false), None, Some(true)])),
        Arc::new(Int32Array::from(vec![Some(-5), Some(7), None, Some(0)])),
        Arc::new(Int64Array::from(vec![i64::MIN, 3, 10, -1])),
        Arc::new(Float32Array::from(vec![Some(f32::NAN), Some(-0.0), Some(0.0), None])),
        Arc::new(Float64Array::from(vec![Some(2.5), Some(f64::NAN), Some(-3.0), None])),
        dec(vec![Some(-12345), Some(999), None, Some(0)], 9, 2),
        dec(vec![Some(-1), Some(1), None, Some(5)], 18, 3),
        dec(vec![Some(-(10i128.pow(30))), Some(10i128.pow(25)), None, Some(7)], 38, 10),
        Arc::new(Date32Array::from(vec![Some(-1), Some(19782), None, Some(-25567)])),
        Arc::new(Time64MicrosecondArray::from(vec![Some(0), Some(86_399_999_999), None, Some(5)])),
        Arc::new(TimestampMicrosecondArray::from(vec![
            Some(-1),
            Some(1_000_000),
            None,
            Some(-2_208_988_800_000_000),
        ])),
        Arc::new(
            TimestampMicrosecondArray::from(vec![
                Some(-1),
                Some(1_000_000),
                None,
                Some(-2_208_988_800_000_000),
            ])
            .with_timezone("UTC"),
        ),
        Arc::new(StringArray::from(vec![Some(LONG_S0), Some("a"), None, Some(LONG_S3)])),
        Arc::new(
            FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                vec![Some(uuid_a), Some(uuid_b), None, Some(uuid_a)].into_iter(),
                16,
            )
            .unwrap(),
        ),
        Arc::new(
            FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                vec![Some([1u8, 2, 3]), Some([0xff; 3]), None, Some([0u8; 3])].into_iter(),
                3,
            )
            .unwrap(),
        ),
        Arc::new(BinaryArray::from(vec![Some(&b""[..]), Some(&[0xffu8; 20][..]), None, Some(&b"abc"[..])])),
        Arc::new(st),
        Arc::new(lst),
        Arc::new(m),
    ];
    RecordBatch::try_new(arrow, cols).unwrap()
}

fn write_one(dir: &std::path::Path, props: BTreeMap<String, String>) -> (DataFile, Schema) {
    let schema = all_types_schema();
    let batch = all_types_batch(&schema);
    let path = dir.join("f.parquet");
    let p = ParquetWriterProps::from_table_properties(&props).unwrap();
    let mc = Arc::new(MetricsConfig::from_table_properties(&props, &schema).unwrap());
    let mut w = ParquetFileWriter::try_new(path.to_str().unwrap(), Arc::new(schema.clone()), &p, mc).unwrap();
    w.write(&batch).unwrap();
    (w.close(vec![], 0).unwrap(), schema)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn props_from_table_properties() {
    let d = ParquetWriterProps::from_table_properties(&BTreeMap::new()).unwrap();
    assert_eq!(d, ParquetWriterProps::default());
    let m: BTreeMap<String, String> = [
        (COMPRESSION_CODEC, "GZIP"),
        (COMPRESSION_LEVEL, "9"),
        (ROW_GROUP_SIZE_BYTES, "1024"),
        (TARGET_FILE_SIZE_BYTES, "4096"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let p = ParquetWriterProps::from_table_properties(&m).unwrap();
    assert_eq!(p.compression, Compression::GZIP(GzipLevel::try_new(9).unwrap()));
    assert_eq!((p.row_group_size_bytes, p.target_file_size_bytes), (1024, 4096));
    for (k, v) in [(COMPRESSION_CODEC, "lzo"), (TARGET_FILE_SIZE_BYTES, "big"), (COMPRESSION_LEVEL, "99")] {
        let mut m = BTreeMap::new();
        m.insert(COMPRESSION_CODEC.to_string(), "zstd".to_string());
        m.insert(k.to_string(), v.to_string());
        let e = ParquetWriterProps::from_table_properties(&m).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Validation, "{k}={v}: {e}");
    }
    for c in ["snappy", "lz4", "uncompressed", "brotli", "zstd"] {
        let m = BTreeMap::from([(COMPRESSION_CODEC.to_string(), c.to_string())]);
        ParquetWriterProps::from_table_properties(&m).unwrap();
    }
}

#[test]
fn parquet_schema_has_ids_and_iceberg_types() {
    let dir = tempfile::tempdir().unwrap();
    let (df, _) = write_one(dir.path(), BTreeMap::new());
    let reader = SerializedFileReader::new(File::open(&df.file_path).unwrap()).unwrap();
    let descr = reader.metadata().file_metadata().schema_descr_ptr();
    assert_eq!(descr.root_schema().name(), "table");
    // Every node has an id except the root and the repeated list/map wrapper groups.
    fn check(t: &ParquetType, wrapper: bool, seen: &mut Vec<i32>) {
        let info = t.get_basic_info();
        if wrapper {
            assert!(!info.has_id(), "wrapper {} has an id", info.name());
        } else {
            assert!(info.has_id(), "{} has no field id", info.name());
            seen.push(info.id());
        }
        if t.is_group() {
            let is_wrapper_parent =
                matches!(info.logical_type_ref(), Some(LogicalType::List | LogicalType::Map));
            for c in t.get_fields() {
                check(c, is_wrapper_parent, seen);
            }
        }
    }
    let mut seen = vec![];
    for c in descr.root_schema().get_fields() {
        check(c, false, &mut seen);
    }
    seen.sort();
    assert_eq!(seen, (1..=24).collect::<Vec<_>>());
    let col = |name: &str| descr.columns().iter().find(|c| c.path().string() == name).unwrap().clone();
    assert_eq!(col("dec9").physical_type(), PhysicalType::INT32);
    assert_eq!(col("dec18").physical_type(), PhysicalType::INT64);
    assert_eq!(col("dec38").physical_type(), PhysicalType::FIXED_LEN_BYTE_ARRAY);
    assert_eq!(col("dec38").type_length(), 16);
    assert_eq!(col("u").physical_type(), PhysicalType::FIXED_LEN_BYTE_ARRAY);
    assert_eq!(col("u").logical_type_ref(), Some(&LogicalType::Uuid));
    assert_eq!(col("s").logical_type_ref(), Some(&LogicalType::String));
    let ts = |adj| Some(LogicalType::timestamp(adj, PqTimeUnit::MICROS));
    assert_eq!(col("ts").logical_type_ref().cloned(), ts(false));
    assert_eq!(col("tstz").logical_type_ref().cloned(), ts(true));
    assert_eq!(col("ts").physical_type(), PhysicalType::INT64);
    assert_eq!(col("t").logical_type_ref().cloned(), Some(LogicalType::time(false, PqTimeUnit::MICROS)));
    assert_eq!(col("lst.list.element").self_type().get_basic_info().id(), 21);
    assert_eq!(col("m.key_value.key").self_type().get_basic_info().id(), 23);
    assert_eq!(col("m.key_value.value").self_type().get_basic_info().id(), 24);
    assert!(descr.columns().iter().all(|c| c.physical_type() != PhysicalType::INT96));
}

#[test]
fn metrics_match_the_data() {
    let dir = tempfile::tempdir().unwrap();
    let (df, schema) = write_one(dir.path(), BTreeMap::new());
    assert_eq!(df.record_count, 4);
    assert_eq!(df.file_size_in_bytes as u64, std::fs::metadata(&df.file_path).unwrap().len());
    assert_eq!(df.split_offsets, Some(vec![4]));
    // column sizes for every leaf, counts only outside lists/maps
    assert_eq!(
        df.column_sizes.keys().copied().collect::<Vec<_>>(),
        vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 19, 21, 23, 24]
    );
    let top: Vec<i32> = (1..=16).chain([18, 19]).collect();
    assert_eq!(df.value_counts.keys().copied().collect::<Vec<_>>(), top);
    for id in 1..=16 {
        assert_eq!(df.value_counts[&id], 4, "value count {id}");
    }
    let nulls: BTreeMap<i32, i64> = [
        (1, 1),
        (2, 1),
        (3, 0),
        (4, 1),
        (5, 1),
        (6, 1),
        (7, 1),
        (8, 1),
        (9, 1),
        (10, 1),
        (11, 1),
        (12, 1),
        (13, 1),
        (14, 1),
        (15, 1),
        (16, 1),
        (18, 2),
        (19, 2),
    ]
    .into();
    assert_eq!(df.null_value_counts, nulls);
    // st.x: the row where st is null counts as a null, like every other column type
    assert_eq!(df.value_counts[&18], 4);
    // st.y: footer counts (Java): all 4 slots, 2 nulls (one from the null struct)
    assert_eq!(df.value_counts[&19], 4);
    assert_eq!(df.nan_value_counts, BTreeMap::from([(4, 1), (5, 1), (18, 1)]));
    let lb = |id: i32| df.lower_bounds.get(&id).map(|b| hex(b));
    let ub = |id: i32| df.upper_bounds.get(&id).map(|b| hex(b));
    let lit = |l: Literal| Some(hex(&l.to_bytes()));
    assert_eq!((lb(1), ub(1)), (lit(Literal::Boolean(false)), lit(Literal::Boolean(true))));
    assert_eq!((lb(2), ub(2)), (lit(Literal::Int(-5)), lit(Literal::Int(7))));
    assert_eq!((lb(3), ub(3)), (lit(Literal::Long(i64::MIN)), lit(Literal::Long(10))));
    assert_eq!((lb(4), ub(4)), (lit(Literal::Float(-0.0)), lit(Literal::Float(0.0))));
    assert_eq!(lb(4), Some("00000080".to_string()));
    assert_eq!((lb(5), ub(5)), (lit(Literal::Double(-3.0)), lit(Literal::Double(2.5))));
    assert_eq!((lb(6), ub(6)), (lit(Literal::Decimal(-12345)), lit(Literal::Decimal(999))));
    assert_eq!((lb(7), ub(7)), (lit(Literal::Decimal(-1)), lit(Literal::Decimal(5))));
    assert_eq!(
        (lb(8), ub(8)),
        (lit(Literal::Decimal(-(10i128.pow(30)))), lit(Literal::Decimal(10i128.pow(25))))
    );
    assert_eq!((lb(9), ub(9)), (lit(Literal::Date(-25567)), lit(Literal::Date(19782))));
    assert_eq!((lb(10), ub(10)), (lit(Literal::Time(0)), lit(Literal::Time(86_399_999_999))));
    assert_eq!(
        (lb(11), ub(11)),
        (lit(Literal::Timestamp(-2_208_988_800_000_000)), lit(Literal::Timestamp(1_000_000)))
    );
    assert_eq!(
        (lb(12), ub(12)),
        (lit(Literal::Timestamptz(-2_208_988_800_000_000)), lit(Literal::Timestamptz(1_000_000)))
    );
    // strings: code-point order (the emoji sorts last), truncated to 16 code points
    let lo: String = "a".to_string();
    let hi_prefix: String = LONG_S3.chars().take(16).collect();
    assert_eq!(lb(13), lit(Literal::String(lo)));
    let want_hi = crate::spec::truncate_upper_string(LONG_S3, 16).unwrap();
    assert_eq!(ub(13), lit(Literal::String(want_hi.clone())));
    assert_eq!(want_hi.chars().count(), 16);
    assert_ne!(want_hi, hi_prefix);
    assert_eq!((lb(14), ub(14)), (None, None), "no uuid bounds (T7)");
    assert_eq!((lb(15), ub(15)), (Some("000000".into()), Some("ffffff".into())));
    // binary: the 20 x 0xff value cannot be incremented -> no upper bound
    assert_eq!((lb(16), ub(16)), (Some(String::new()), None));
    assert_eq!((lb(18), ub(18)), (lit(Literal::Double(1.0)), lit(Literal::Double(1.0))));
    assert_eq!((lb(19), ub(19)), (lit(Literal::String("p".into())), lit(Literal::String("q".into()))));
    for id in [21, 23, 24] {
        assert!(lb(id).is_none() && ub(id).is_none() && !df.value_counts.contains_key(&id));
    }
    // The file reads back through the field-id reader.
    let back: Vec<RecordBatch> =
        crate::arrow::read_parquet(&df.file_path, &schema, 3).unwrap().collect::<Result<Vec<_>>>().unwrap();
    let back = arrow_select::concat::concat_batches(&back[0].schema(), &back).unwrap();
    let orig = all_types_batch(&schema);
    for i in 0..orig.num_columns() {
        if matches!(i, 3 | 4 | 16 | 17) {
            continue; // NaN != NaN
        }
        assert_eq!(back.column(i).as_ref(), orig.column(i).as_ref(), "column {i}");
    }
}

#[test]
fn metrics_modes() {
    let dir = tempfile::tempdir().unwrap();
    let props: BTreeMap<String, String> = [
        ("write.metadata.metrics.default", "counts"),
        ("write.metadata.metrics.column.s", "full"),
        ("write.metadata.metrics.column.i", "none"),
        ("write.metadata.metrics.column.bin", "truncate(2)"),
        ("write.metadata.metrics.column.fx", "truncate(2)"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let (df, _) = write_one(dir.path(), props);
    assert!(!df.value_counts.contains_key(&2) && !df.column_sizes.contains_key(&2));
    assert!(df.value_counts.contains_key(&3) && !df.lower_bounds.contains_key(&3));
    assert_eq!(df.lower_bounds[&13], b"a".to_vec());
    assert_eq!(df.upper_bounds[&13], LONG_S3.as_bytes());
    assert_eq!(df.lower_bounds[&16], b"".to_vec());
    assert_eq!(df.upper_bounds.get(&16), None);
    // fixed is never truncated (Java)
    assert_eq!(df.upper_bounds[&15], vec![0xff; 3]);
    assert!(!df.lower_bounds.contains_key(&4) && df.nan_value_counts[&4] == 1);
    let e = MetricsConfig::from_table_properties(
        &BTreeMap::from([("write.metadata.metrics.default".to_string(), "truncate(x)".to_string())]),
        &all_types_schema(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("truncate(x)"));
}

/// A column of unique values is written PLAIN, one of repeated values with a dictionary, as
/// Java's writer decides it over the first page; the rows held back for that decision (here
/// 50,000 rows in 4,096-row batches, and a 3-row file closed before its first page filled)
/// are all in the file.
#[test]
fn dictionary_only_where_it_pays() {
    let schema = Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long.into()),
            NestedField::optional(2, "qty", PrimitiveType::Int.into()),
            NestedField::optional(3, "name", PrimitiveType::String.into()),
        ],
        vec![],
    )
    .unwrap();
    let arrow = Arc::new(schema_to_arrow(&schema).unwrap());
    let batch = |from: i64, n: i64| {
        RecordBatch::try_new(
            arrow.clone(),
            vec![
                Arc::new(Int64Array::from_iter_values(from..from + n)),
                Arc::new(Int32Array::from_iter(
                    (from..from + n).map(|i| (i % 7 != 0).then_some((i % 100) as i32)),
                )),
                Arc::new(StringArray::from_iter_values((from..from + n).map(|i| format!("user_{}", i % 50)))),
            ],
        )
        .unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let p = ParquetWriterProps::default();
    let mc = Arc::new(MetricsConfig::from_table_properties(&BTreeMap::new(), &schema).unwrap());
    for (name, total) in [("big.parquet", 50_000i64), ("small.parquet", 3)] {
        let path = dir.path().join(name);
        let mut w =
            ParquetFileWriter::try_new(path.to_str().unwrap(), Arc::new(schema.clone()), &p, mc.clone())
                .unwrap();
        let mut from = 0;
        while from < total {
            let n = 4096.min(total - from);
            w.write(&batch(from, n)).unwrap();
            from += n;
        }
        let df = w.close(vec![], 0).unwrap();
        assert_eq!(df.record_count, total);
        let reader = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
        let dictionary: Vec<bool> = reader
            .metadata()
            .row_group(0)
            .columns()
            .iter()
            .map(|c| c.dictionary_page_offset().is_some())
            .collect();
        // Three distinct values in three rows: no column repeats, none pays for a dictionary.
        let expected = if total > 3 { vec![false, true, true] } else { vec![false, false, false] };
        assert_eq!(dictionary, expected, "{name}: dictionary pages of id, qty, name");
        let back = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
            File::open(&path).unwrap(),
        )
        .unwrap()
        .with_batch_size(total as usize)
        .build()
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
        let want = batch(0, total);
        for i in 0..3 {
            assert_eq!(back.column(i).as_ref(), want.column(i).as_ref(), "{name}: column {i}");
        }
    }
}

/// Rows held back before the writer opens do not keep the buffers of the batch they were
/// sliced from alive: a 100-row slice of a 200,000-row batch is copied, and its rows land
/// in the file.
#[test]
fn held_back_slices_do_not_pin_their_parent_batch() {
    let schema =
        Schema::new(0, vec![NestedField::required(1, "name", PrimitiveType::String.into())], vec![]).unwrap();
    let arrow = Arc::new(schema_to_arrow(&schema).unwrap());
    let names = StringArray::from_iter_values((0..200_000).map(|i| format!("name-{i:08}")));
    let parent = RecordBatch::try_new(arrow, vec![Arc::new(names)]).unwrap();
    let slice = parent.slice(1_000, 100);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("held.parquet");
    let mc = Arc::new(MetricsConfig::from_table_properties(&BTreeMap::new(), &schema).unwrap());
    let mut w = ParquetFileWriter::try_new(
        path.to_str().unwrap(),
        Arc::new(schema.clone()),
        &ParquetWriterProps::default(),
        mc,
    )
    .unwrap();
    w.write(&slice).unwrap();
    let held = w.held_bytes();
    assert!(held > 0 && held < parent.get_array_memory_size() / 100, "{held}");
    // A batch of its own is held as it is.
    let own = RecordBatch::try_new(
        slice.schema(),
        vec![Arc::new(StringArray::from_iter_values((0..100).map(|i| format!("own-{i}"))))],
    )
    .unwrap();
    w.write(&own).unwrap();
    drop(parent);
    let df = w.close(vec![], 0).unwrap();
    assert_eq!(df.record_count, 200);
    let file = std::fs::File::open(&path).unwrap();
    let rows: Vec<String> = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap()
        .flat_map(|b| {
            let b = b.unwrap();
            let c = b.column(0).as_any().downcast_ref::<StringArray>().unwrap().clone();
            c.iter().map(|v| v.unwrap().to_string()).collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(rows[0], "name-00001000");
    assert_eq!(rows[99], "name-00001099");
    assert_eq!(rows[100], "own-0");
}

#[test]
fn variants_are_written_as_javas_annotated_groups_with_its_counts() {
    use crate::spec::{NestedField, PrimitiveType, Schema, StructType, Type};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let variant = || Type::Primitive(PrimitiveType::Variant);
    let inner = StructType::new(vec![NestedField::optional(4, "w", variant())]);
    let schema = Schema::new(
        0,
        vec![
            NestedField::required(1, "id", Type::Primitive(PrimitiveType::Long)),
            NestedField::optional(2, "v", variant()),
            NestedField::optional(3, "s", Type::Struct(inner)),
        ],
        vec![],
    )
    .expect("schema");
    let arrow = Arc::new(schema_to_arrow(&schema).expect("arrow"));
    let DataType::Struct(vf) = arrow.field(1).data_type().clone() else { panic!("variant struct") };
    let bin = |v: &[&[u8]]| -> ArrayRef { Arc::new(BinaryArray::from_iter_values(v.iter().copied())) };
    // Rows: an int8 variant 7, a null variant, the variant null (value 0x00).
    let v = StructArray::try_new(
        vf.clone(),
        vec![bin(&[&b"\x01\x00\x00"[..], b"", b"\x01\x00\x00"]), bin(&[&b"\x0c\x07"[..], b"", b"\x00"])],
        Some(NullBuffer::from(vec![true, false, true])),
    )
    .expect("v");
    let DataType::Struct(sf) = arrow.field(2).data_type().clone() else { panic!("struct") };
    let w = StructArray::try_new(vf, vec![bin(&[&b"\x01\x00\x00"[..]; 3]), bin(&[&b"\x00"[..]; 3])], None)
        .expect("w");
    let s = StructArray::try_new(sf, vec![Arc::new(w)], Some(NullBuffer::from(vec![true, true, false])))
        .expect("s");
    let batch = RecordBatch::try_new(
        arrow.clone(),
        vec![Arc::new(Int64Array::from(vec![1, 2, 3])), Arc::new(v), Arc::new(s)],
    )
    .expect("batch");
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("v.parquet");
    let df = write_one_file(&path, schema, &batch);

    // TypeToMessageType's form: VARIANT(1) group with the field id, required binary children
    // without ids, metadata first.
    let reader = SerializedFileReader::new(File::open(&path).expect("open")).expect("reader");
    let descr = reader.metadata().file_metadata().schema_descr_ptr();
    for (group, id) in
        [(&descr.root_schema().get_fields()[1], 2), (&descr.root_schema().get_fields()[2].get_fields()[0], 4)]
    {
        let info = group.get_basic_info();
        assert_eq!((info.has_id(), info.id()), (true, id));
        assert_eq!(info.logical_type_ref(), Some(&LogicalType::variant(Some(1))));
        let children: Vec<_> = group.get_fields().iter().map(|c| c.name().to_string()).collect();
        assert_eq!(children, ["metadata", "value"]);
        for c in group.get_fields() {
            assert!(!c.get_basic_info().has_id());
            assert_eq!(c.get_basic_info().repetition(), parquet::basic::Repetition::REQUIRED);
            assert_eq!(c.get_physical_type(), PhysicalType::BYTE_ARRAY);
        }
    }
    // Java's metrics of an unshredded variant: value and null counts, no bounds, no size.
    assert_eq!((df.value_counts.get(&2), df.null_value_counts.get(&2)), (Some(&3), Some(&1)));
    assert_eq!((df.value_counts.get(&4), df.null_value_counts.get(&4)), (Some(&3), Some(&1)));
    for id in [2, 4] {
        assert!(!df.column_sizes.contains_key(&id) && !df.lower_bounds.contains_key(&id), "{id}");
        assert!(!df.upper_bounds.contains_key(&id), "{id}");
    }
    assert_eq!(df.value_counts.get(&1), Some(&3));

    // The buffers come back as written.
    let back = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).expect("open"))
        .expect("builder")
        .build()
        .expect("reader")
        .next()
        .expect("a batch")
        .expect("read");
    let v = back.column(1).as_any().downcast_ref::<StructArray>().expect("struct");
    assert!(v.is_valid(0) && v.is_null(1) && v.is_valid(2));
    let value = v.column_by_name("value").expect("value");
    assert_eq!(value.as_any().downcast_ref::<BinaryArray>().expect("bin").value(0), b"\x0c\x07");
}

#[test]
fn geospatial_columns_are_written_as_javas_annotated_wkb_with_javas_metrics() {
    use crate::spec::{EdgeAlgorithm, PrimitiveType, Type};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::basic::EdgeInterpolationAlgorithm;
    let geometry = Type::Primitive(PrimitiveType::Geometry { crs: "OGC:CRS84".into() });
    let geography = Type::Primitive(PrimitiveType::Geography {
        crs: "srid:4326".into(),
        algorithm: EdgeAlgorithm::Karney,
    });
    let inner = StructType::new(vec![NestedField::optional(4, "pt", geometry.clone())]);
    let schema = Schema::new(
        0,
        vec![
            NestedField::required(1, "id", Type::Primitive(PrimitiveType::Long)),
            NestedField::optional(2, "g", geometry),
            NestedField::optional(3, "s", Type::Struct(inner)),
            NestedField::optional(5, "geog", geography),
        ],
        vec![],
    )
    .expect("schema");
    let arrow = Arc::new(schema_to_arrow(&schema).expect("arrow"));
    assert_eq!(
        arrow.field(1).metadata().get("ARROW:extension:name").map(String::as_str),
        Some("geoarrow.wkb")
    );
    // POINT(1 2), POINT(3 4) as little-endian WKB.
    let p = |x: f64, y: f64| -> Vec<u8> {
        let mut b = vec![1u8, 1, 0, 0, 0];
        b.extend_from_slice(&x.to_le_bytes());
        b.extend_from_slice(&y.to_le_bytes());
        b
    };
    let (a, b) = (p(1.0, 2.0), p(3.0, 4.0));
    let wkb = |v: Vec<Option<&[u8]>>| -> ArrayRef { Arc::new(BinaryArray::from(v)) };
    let DataType::Struct(sf) = arrow.field(2).data_type().clone() else { panic!("struct") };
    let s = StructArray::try_new(sf, vec![wkb(vec![Some(&a), None, Some(&b)])], None).expect("s");
    let batch = RecordBatch::try_new(
        arrow.clone(),
        vec![
            Arc::new(Int64Array::from(vec![1, 2, 3])),
            wkb(vec![Some(&a), Some(&b), None]),
            Arc::new(s),
            wkb(vec![None, None, Some(&a)]),
        ],
    )
    .expect("batch");
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("g.parquet");
    let df = write_one_file(&path, schema, &batch);

    // TypeToMessageType's form: BYTE_ARRAY with the logical type naming the CRS (and algorithm).
    let reader = SerializedFileReader::new(File::open(&path).expect("open")).expect("reader");
    let descr = reader.metadata().file_metadata().schema_descr_ptr();
    let logical = |i: usize| descr.column(i).logical_type_ref().cloned();
    assert_eq!(descr.column(1).physical_type(), PhysicalType::BYTE_ARRAY);
    assert_eq!(logical(1), Some(LogicalType::geometry(Some("OGC:CRS84".into()))));
    assert_eq!(logical(2), Some(LogicalType::geometry(Some("OGC:CRS84".into()))));
    assert_eq!(
        logical(3),
        Some(LogicalType::geography(Some("srid:4326".into()), Some(EdgeInterpolationAlgorithm::KARNEY)))
    );
    // Java 1.12's metrics: value and null counts; a geometry's bounding box (x:y), none for a
    // geography.
    for (id, nulls) in [(2, 1), (4, 1), (5, 2)] {
        assert_eq!(
            (df.value_counts.get(&id), df.null_value_counts.get(&id)),
            (Some(&3), Some(&nulls)),
            "{id}"
        );
    }
    let xy = |x: f64, y: f64| [x.to_le_bytes(), y.to_le_bytes()].concat();
    for id in [2, 4] {
        assert_eq!(
            (df.lower_bounds.get(&id), df.upper_bounds.get(&id)),
            (Some(&xy(1.0, 2.0)), Some(&xy(3.0, 4.0)))
        );
    }
    assert!(!df.lower_bounds.contains_key(&5) && !df.upper_bounds.contains_key(&5));
    assert!(df.lower_bounds.contains_key(&1));

    // The WKB comes back byte for byte.
    let back = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).expect("open"))
        .expect("builder")
        .build()
        .expect("reader")
        .next()
        .expect("a batch")
        .expect("read");
    let g = back.column(1).as_any().downcast_ref::<BinaryArray>().expect("binary");
    assert_eq!((g.value(0), g.value(1), g.is_null(2)), (&a[..], &b[..], true));
}

/// Writes `batch` as one data file at `path` with the default table properties.
fn write_one_file(path: &std::path::Path, schema: Schema, batch: &RecordBatch) -> crate::manifest::DataFile {
    write_one_file_with(path, schema, batch, BTreeMap::new())
}

/// [`write_one_file`] with table properties.
fn write_one_file_with(
    path: &std::path::Path,
    schema: Schema,
    batch: &RecordBatch,
    props: BTreeMap<String, String>,
) -> crate::manifest::DataFile {
    let p = ParquetWriterProps::from_table_properties(&props).expect("props");
    let mc = Arc::new(MetricsConfig::from_table_properties(&props, &schema).expect("metrics"));
    let mut writer =
        ParquetFileWriter::try_new(path.to_str().expect("path"), Arc::new(schema), &p, mc).expect("writer");
    writer.write(batch).expect("write");
    writer.close(vec![], 0).expect("close")
}

#[test]
fn a_geometry_column_in_counts_mode_gets_no_bounds() {
    use crate::spec::{PrimitiveType, Type};
    let schema = Schema::new(
        0,
        vec![NestedField::optional(
            1,
            "g",
            Type::Primitive(PrimitiveType::Geometry { crs: "OGC:CRS84".into() }),
        )],
        vec![],
    )
    .expect("schema");
    let arrow = Arc::new(schema_to_arrow(&schema).expect("arrow"));
    let mut wkb = vec![1u8, 1, 0, 0, 0];
    wkb.extend(1.0f64.to_le_bytes());
    wkb.extend(2.0f64.to_le_bytes());
    let batch =
        RecordBatch::try_new(arrow, vec![Arc::new(BinaryArray::from(vec![Some(&wkb[..])]))]).expect("batch");
    let dir = tempfile::tempdir().expect("dir");
    let props = BTreeMap::from([("write.metadata.metrics.column.g".to_string(), "counts".to_string())]);
    let df = write_one_file_with(&dir.path().join("c.parquet"), schema.clone(), &batch, props);
    assert_eq!((df.value_counts.get(&1), df.null_value_counts.get(&1)), (Some(&1), Some(&0)));
    assert!(df.lower_bounds.is_empty() && df.upper_bounds.is_empty());
    let df = write_one_file(&dir.path().join("b.parquet"), schema, &batch);
    assert!(df.lower_bounds.contains_key(&1) && df.upper_bounds.contains_key(&1));
}
