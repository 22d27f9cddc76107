//! Input validation for writes: checks a user's Arrow schema against the table schema
//! (every problem in one ValidationError) and conforms each batch to the table's Arrow
//! schema (by name: reorder, safe casts, a missing column as its v3 `write-default`, else
//! nulls if it is optional).

use arrow_array::{Array, RecordBatch, RecordBatchOptions};
use arrow_schema::{DataType, Field, Schema as ArrowSchema, SchemaRef};

use crate::arrow::field_match::Match;
use crate::arrow::reader::{absent, adapt, arrow_primitive_type, can_write_as};
use crate::arrow::schema::{VARIANT_METADATA, VARIANT_VALUE};
use crate::error::{validation, Result};
use crate::spec::{DefaultKind, NestedField, PrimitiveType, Schema, Type};

/// Checks that an Arrow schema can be written to a table schema: every required column present,
/// no unknown columns, every type the same or a safe widening. All problems in one error.
pub fn check_arrow_schema(schema: &Schema, arrow: &ArrowSchema) -> Result<()> {
    let mut problems = Vec::new();
    check_fields(
        schema.fields().iter().map(|f| f.as_ref()),
        arrow.fields().iter().map(|f| f.as_ref()),
        "",
        &mut problems,
    );
    if problems.is_empty() {
        Ok(())
    } else {
        Err(validation(format!(
            "the data does not fit the table schema ({} problem(s)): {}",
            problems.len(),
            problems.join("; ")
        )))
    }
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

fn check_fields<'a>(
    table: impl Iterator<Item = &'a NestedField>,
    arrow: impl Iterator<Item = &'a Field> + Clone,
    prefix: &str,
    problems: &mut Vec<String>,
) {
    let table: Vec<&NestedField> = table.collect();
    for f in &table {
        let path = join(prefix, &f.name);
        match arrow.clone().find(|a| a.name() == &f.name) {
            // A missing column is filled with its write-default (conform_batch).
            None if f.required && f.default_json(DefaultKind::Write).is_none() => {
                problems.push(format!("missing required column '{path}' ({})", f.field_type))
            }
            None => {}
            Some(a) => check_type(&f.field_type, a.data_type(), &path, problems),
        }
    }
    for a in arrow {
        if !table.iter().any(|f| &f.name == a.name()) {
            problems.push(format!("unknown column '{}' (not in the table schema)", join(prefix, a.name())));
        }
    }
}

fn check_type(ty: &Type, dt: &DataType, path: &str, problems: &mut Vec<String>) {
    let incompatible = |problems: &mut Vec<String>| {
        problems.push(format!("incompatible type for column '{path}': expected {ty}, found Arrow {dt}"))
    };
    match (ty, dt) {
        // All nulls fit any optional column (a required one fails the per-batch null check).
        (_, DataType::Null) => {}
        // A variant: the struct of its two binary buffers, by name (Spark puts `value` first).
        (Type::Primitive(PrimitiveType::Variant), DataType::Struct(fs)) => {
            let binary = |name: &str| {
                fs.iter().find(|c| c.name() == name).is_some_and(|c| {
                    matches!(c.data_type(), DataType::Binary | DataType::LargeBinary | DataType::BinaryView)
                })
            };
            if !(binary(VARIANT_METADATA) && binary(VARIANT_VALUE)) {
                incompatible(problems)
            }
        }
        (Type::Primitive(p), _) => match arrow_primitive_type(dt, p) {
            Ok(from) if can_write_as(&from, p) => {}
            _ => incompatible(problems),
        },
        (Type::Struct(st), DataType::Struct(fs)) => {
            check_fields(st.fields.iter().map(|f| f.as_ref()), fs.iter().map(|f| f.as_ref()), path, problems)
        }
        (Type::List(l), DataType::List(el) | DataType::LargeList(el)) => {
            check_type(&l.element_field.field_type, el.data_type(), &join(path, "element"), problems)
        }
        (Type::Map(m), DataType::Map(entries, _)) => match entries.data_type() {
            DataType::Struct(kv) if kv.len() == 2 => {
                check_type(&m.key_field.field_type, kv[0].data_type(), &join(path, "key"), problems);
                check_type(&m.value_field.field_type, kv[1].data_type(), &join(path, "value"), problems);
            }
            _ => incompatible(problems),
        },
        _ => incompatible(problems),
    }
}

/// Conforms a batch to the table's Arrow schema (by name: reorder, cast, fill missing columns
/// with their write-default, else nulls) and checks required fields hold no nulls.
pub fn conform_batch(schema: &Schema, target: &SchemaRef, batch: &RecordBatch) -> Result<RecordBatch> {
    let rows = batch.num_rows();
    let src = batch.schema();
    let mut cols = Vec::with_capacity(target.fields().len());
    for (f, tf) in schema.fields().iter().zip(target.fields()) {
        let col = match src.index_of(&f.name) {
            Ok(i) => adapt(batch.column(i), f, tf.data_type(), &f.name, Match::ByName)?,
            Err(_) => absent(f, tf.data_type(), rows, &f.name, Match::ByName)?,
        };
        if f.required && col.null_count() > 0 {
            return Err(validation(format!(
                "column '{}' is required but the data has {} null value(s)",
                f.name,
                col.null_count()
            )));
        }
        cols.push(col);
    }
    RecordBatch::try_new_with_options(
        target.clone(),
        cols,
        &RecordBatchOptions::new().with_row_count(Some(rows)),
    )
    .map_err(|e| validation(format!("the data does not fit the table schema: {e}")))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int32Array, Int64Array, StringArray};

    use super::*;
    use crate::arrow::schema_to_arrow;
    use crate::error::ErrorKind;
    use crate::spec::PrimitiveType;

    fn table_schema() -> Schema {
        Schema::new(
            0,
            vec![
                NestedField::required(1, "id", PrimitiveType::Long.into()),
                NestedField::optional(2, "cat", PrimitiveType::String.into()),
            ],
            vec![],
        )
        .unwrap()
    }

    #[test]
    fn binary_values_fill_a_fixed_column_of_their_length() {
        use arrow_array::{BinaryArray, FixedSizeBinaryArray};
        let schema =
            Schema::new(0, vec![NestedField::optional(1, "fx", PrimitiveType::Fixed(3).into())], vec![])
                .unwrap();
        let arrow = Arc::new(ArrowSchema::new(vec![Field::new("fx", DataType::Binary, true)]));
        check_arrow_schema(&schema, &arrow).unwrap();
        let target = Arc::new(schema_to_arrow(&schema).unwrap());
        let ok = RecordBatch::try_new(
            arrow.clone(),
            vec![Arc::new(BinaryArray::from(vec![Some(b"abc".as_ref()), None]))],
        )
        .unwrap();
        let out = conform_batch(&schema, &target, &ok).unwrap();
        let fixed = out.column(0).as_any().downcast_ref::<FixedSizeBinaryArray>().unwrap();
        assert_eq!(fixed.value(0), b"abc");
        assert!(fixed.is_null(1));
        let short =
            RecordBatch::try_new(arrow, vec![Arc::new(BinaryArray::from(vec![b"ab".as_ref()]))]).unwrap();
        let err = conform_batch(&schema, &target, &short).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Validation);
        assert!(err.to_string().contains("'fx'"), "{err}");
    }

    #[test]
    fn every_schema_problem_in_one_error() {
        let arrow = ArrowSchema::new(vec![
            Field::new("cat", DataType::Int64, true),
            Field::new("extra", DataType::Utf8, true),
        ]);
        let err = check_arrow_schema(&table_schema(), &arrow).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Validation);
        let msg = err.to_string();
        assert!(msg.contains("(3 problem(s))"), "{msg}");
        assert!(msg.contains("missing required column 'id'"), "{msg}");
        assert!(msg.contains("unknown column 'extra'"), "{msg}");
        assert!(msg.contains("incompatible type for column 'cat'"), "{msg}");
        check_arrow_schema(&table_schema(), &schema_to_arrow(&table_schema()).unwrap()).unwrap();
    }

    #[test]
    fn conform_reorders_widens_and_rejects_nulls_in_required_columns() {
        let target = Arc::new(schema_to_arrow(&table_schema()).unwrap());
        let arrow = Arc::new(ArrowSchema::new(vec![
            Field::new("cat", DataType::Utf8, true),
            Field::new("id", DataType::Int32, true),
        ]));
        let batch = RecordBatch::try_new(
            arrow.clone(),
            vec![Arc::new(StringArray::from(vec![Some("a"), None])), Arc::new(Int32Array::from(vec![1, 2]))],
        )
        .unwrap();
        let out = conform_batch(&table_schema(), &target, &batch).unwrap();
        assert_eq!(out.schema(), target);
        let ids = out.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!(ids.values().to_vec(), vec![1, 2]);
        assert_eq!(out.column(1).null_count(), 1);

        let with_null = RecordBatch::try_new(
            arrow,
            vec![Arc::new(StringArray::from(vec!["a"])), Arc::new(Int32Array::from(vec![None]))],
        )
        .unwrap();
        let err = conform_batch(&table_schema(), &target, &with_null).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Validation);
        assert!(err.to_string().contains("column 'id' is required"), "{err}");
    }

    #[test]
    fn nanoseconds_into_a_microsecond_column_only_when_no_digit_is_lost() {
        use arrow_array::types::TimestampMicrosecondType;
        use arrow_array::{cast::AsArray, StructArray, TimestampNanosecondArray};
        use arrow_schema::{Fields, TimeUnit};

        let ts = |tz: bool| {
            NestedField::optional(
                2,
                "ts",
                if tz { PrimitiveType::Timestamptz } else { PrimitiveType::Timestamp }.into(),
            )
        };
        let nested = Schema::new(
            0,
            vec![NestedField::optional(1, "s", Type::Struct(crate::spec::StructType::new(vec![ts(true)])))],
            vec![],
        )
        .unwrap();
        let flat = Schema::new(0, vec![ts(false)], vec![]).unwrap();
        let ns_field = |tz: Option<&str>| {
            Field::new("ts", DataType::Timestamp(TimeUnit::Nanosecond, tz.map(Into::into)), true)
        };
        let ns = |values: Vec<Option<i64>>, tz: Option<&str>| -> ArrayRef {
            Arc::new(TimestampNanosecondArray::from(values).with_timezone_opt(tz.map(str::to_string)))
        };

        // Whole microseconds (and nulls) are kept exactly.
        let target = Arc::new(schema_to_arrow(&flat).unwrap());
        let whole = RecordBatch::try_new(
            Arc::new(ArrowSchema::new(vec![ns_field(None)])),
            vec![ns(vec![Some(1_700_000_000_123_456_000), None, Some(-1_000)], None)],
        )
        .unwrap();
        let out = conform_batch(&flat, &target, &whole).unwrap();
        let micros = out.column(0).as_primitive::<TimestampMicrosecondType>();
        assert_eq!(micros.value(0), 1_700_000_000_123_456);
        assert!(micros.is_null(1));
        assert_eq!(micros.value(2), -1);

        // A value with sub-microsecond digits is refused, naming the column, the row and the value.
        let cut = RecordBatch::try_new(
            Arc::new(ArrowSchema::new(vec![ns_field(None)])),
            vec![ns(vec![Some(1_000), None, Some(-1_500)], None)],
        )
        .unwrap();
        let err = conform_batch(&flat, &target, &cut).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Validation);
        let msg = err.to_string();
        assert!(msg.contains("'ts'") && msg.contains("row 2") && msg.contains("-1500"), "{msg}");

        // The same inside a struct, with a time zone.
        let target = Arc::new(schema_to_arrow(&nested).unwrap());
        let child = ns(vec![Some(7)], Some("UTC"));
        let s = StructArray::new(Fields::from(vec![ns_field(Some("UTC"))]), vec![child], None);
        let batch = RecordBatch::try_new(
            Arc::new(ArrowSchema::new(vec![Field::new("s", s.data_type().clone(), true)])),
            vec![Arc::new(s) as ArrayRef],
        )
        .unwrap();
        let err = conform_batch(&nested, &target, &batch).unwrap_err();
        assert!(err.to_string().contains("'s.ts'"), "{err}");
    }
}
