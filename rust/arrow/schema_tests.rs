use super::*;

fn nested_schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long.into()),
            NestedField::optional(
                2,
                "s",
                Type::Struct(StructType::new(vec![
                    NestedField::optional(5, "x", PrimitiveType::String.into()),
                    NestedField::required(6, "y", PrimitiveType::Decimal { precision: 9, scale: 2 }.into()),
                ])),
            ),
            NestedField::optional(3, "l", Type::list(7, PrimitiveType::Timestamptz.into(), false)),
            NestedField::optional(
                4,
                "m",
                Type::map(8, PrimitiveType::String.into(), 9, PrimitiveType::Uuid.into(), true),
            ),
        ],
        vec![],
    )
    .unwrap()
}

fn id_of(f: &Field) -> i32 {
    arrow_field_id(f).unwrap().unwrap()
}

#[test]
fn to_arrow_has_ids_everywhere() {
    let a = schema_to_arrow(&nested_schema()).unwrap();
    assert_eq!(id_of(a.field(0)), 1);
    assert!(!a.field(0).is_nullable());
    match a.field(2).data_type() {
        DataType::List(el) => {
            assert_eq!(el.name(), "element");
            assert_eq!(id_of(el), 7);
            assert_eq!(el.data_type(), &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())));
        }
        other => panic!("{other}"),
    }
    match a.field(3).data_type() {
        DataType::Map(e, false) => {
            assert_eq!(e.name(), "key_value");
            let DataType::Struct(kv) = e.data_type() else { panic!() };
            assert_eq!((kv[0].name().as_str(), id_of(&kv[0]), kv[0].is_nullable()), ("key", 8, false));
            assert_eq!((kv[1].name().as_str(), id_of(&kv[1]), kv[1].is_nullable()), ("value", 9, false));
            assert_eq!(kv[1].data_type(), &DataType::FixedSizeBinary(16));
        }
        other => panic!("{other}"),
    }
    // Round trip keeps ids; uuid comes back as fixed[16] (no extension metadata).
    let back = schema_from_arrow(&a).unwrap();
    assert_eq!(back.fields()[..3], nested_schema().fields()[..3]);
    assert_eq!(back.field_by_id(9).unwrap().field_type, PrimitiveType::Fixed(16).into());
}

#[test]
fn fresh_ids_follow_java_order() {
    let mut a = schema_to_arrow(&nested_schema()).unwrap();
    // Drop one id: every id is then reassigned.
    let mut fields: Vec<Field> = a.fields().iter().map(|f| f.as_ref().clone()).collect();
    fields[0] = fields[0].clone().with_metadata(HashMap::new());
    a = ArrowSchema::new(fields);
    let s = schema_from_arrow(&a).unwrap();
    let ids: Vec<(String, i32)> = ["id", "s", "l", "m", "s.x", "s.y", "l.element", "m.key", "m.value"]
        .iter()
        .map(|n| (n.to_string(), s.field_by_name(n).unwrap().id))
        .collect();
    let want: Vec<(String, i32)> = [
        ("id", 1),
        ("s", 2),
        ("l", 3),
        ("m", 4),
        ("s.x", 5),
        ("s.y", 6),
        ("l.element", 7),
        ("m.key", 8),
        ("m.value", 9),
    ]
    .iter()
    .map(|(n, i)| (n.to_string(), *i))
    .collect();
    assert_eq!(ids, want);
}

#[test]
fn nesting_beyond_the_limit_is_a_clear_error_not_a_stack_overflow() {
    fn nested(levels: usize) -> ArrowSchema {
        let mut dt = DataType::Int32;
        for i in 0..levels {
            dt = if i % 2 == 0 {
                DataType::Struct(vec![Field::new(format!("f{i}"), dt, true)].into())
            } else {
                DataType::List(Arc::new(Field::new("element", dt, true)))
            };
        }
        ArrowSchema::new(vec![Field::new("top", dt, true)])
    }
    assert!(schema_from_arrow(&nested(MAX_NESTING)).is_ok());
    let err = schema_from_arrow(&nested(MAX_NESTING + 1)).expect_err("too deep");
    assert!(err.to_string().contains("at most 32 levels"), "{err}");
    assert!(err.to_string().contains("found deeper nesting at field 'top."), "{err}");
    // far deeper than a recursive walk's stack would survive; the check is iterative
    // (the schema itself is leaked: Arrow's own drop of it would recurse)
    let deep = nested(200_000);
    let err = schema_from_arrow(&deep).expect_err("too deep");
    assert!(err.to_string().contains("at most 32 levels"), "{err}");
    std::mem::forget(deep);
}

#[test]
fn fresh_ids_depth_first_per_struct() {
    // a: struct<b: struct<c>, d>, e  -> a=1, e=2, b=3, d=4, c=5 (Java AssignFreshIds)
    let inner = DataType::Struct(Fields::from(vec![Field::new("c", DataType::Int32, true)]));
    let a = DataType::Struct(Fields::from(vec![
        Field::new("b", inner, true),
        Field::new("d", DataType::Utf8View, true),
    ]));
    let s = schema_from_arrow(&ArrowSchema::new(vec![
        Field::new("a", a, true),
        Field::new("e", DataType::LargeUtf8, false),
    ]))
    .unwrap();
    for (n, id) in [("a", 1), ("e", 2), ("a.b", 3), ("a.d", 4), ("a.b.c", 5)] {
        assert_eq!(s.field_by_name(n).unwrap().id, id, "{n}");
    }
    assert!(s.field_by_name("e").unwrap().required);
    assert_eq!(s.field_by_name("a.d").unwrap().field_type, PrimitiveType::String.into());
}

#[test]
fn timestamps_and_errors() {
    let fields = vec![
        Field::new("ms", DataType::Timestamp(TimeUnit::Millisecond, None), true),
        Field::new("ns", DataType::Timestamp(TimeUnit::Nanosecond, Some("+00:00".into())), true),
    ];
    let s = schema_from_arrow(&ArrowSchema::new(fields.clone())).unwrap();
    assert_eq!(s.fields()[0].field_type, PrimitiveType::Timestamp.into());
    assert_eq!(s.fields()[1].field_type, PrimitiveType::Timestamptz.into());
    let s =
        schema_from_arrow_with(&ArrowSchema::new(fields), FromArrowOptions { nanosecond_timestamps: true })
            .unwrap();
    assert_eq!(s.fields()[1].field_type, PrimitiveType::TimestamptzNs.into());
    let err = schema_from_arrow(&ArrowSchema::new(vec![Field::new(
        "dur",
        DataType::Duration(TimeUnit::Second),
        true,
    )]))
    .unwrap_err();
    assert!(err.to_string().contains("'dur'"), "{err}");
}
