//! Rows of a metadata table as plain values (`Cell`) and their conversion to Arrow arrays of
//! a declared Arrow type. Metadata tables are small (one row per snapshot, manifest or file)
//! and deeply nested (structs of maps and lists); building them row by row and converting
//! column by column keeps each table's code a list of its fields, in Java's order.

use std::sync::Arc;

use arrow_array::{
    new_null_array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, FixedSizeBinaryArray,
    Float32Array, Float64Array, Int32Array, Int64Array, ListArray, MapArray, RecordBatch, StringArray,
    StructArray, Time64MicrosecondArray, TimestampMicrosecondArray, TimestampNanosecondArray,
};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, Field, Fields, Schema as ArrowSchema, SchemaRef, TimeUnit};

use crate::error::{invalid_data, Result};
use crate::spec::{Literal, PrimitiveType};

/// One value of a metadata table cell. Timestamps are `Long` microseconds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cell {
    Null,
    Bool(bool),
    Int(i32),
    Long(i64),
    Str(String),
    Bytes(Vec<u8>),
    /// An Iceberg value (partition values, bounds).
    Lit(Literal),
    Struct(Vec<Cell>),
    List(Vec<Cell>),
    Map(Vec<(Cell, Cell)>),
}

impl Cell {
    pub(crate) fn opt_int(v: Option<i32>) -> Cell {
        v.map_or(Cell::Null, Cell::Int)
    }
    pub(crate) fn opt_long(v: Option<i64>) -> Cell {
        v.map_or(Cell::Null, Cell::Long)
    }
    pub(crate) fn opt_str(v: Option<&str>) -> Cell {
        v.map_or(Cell::Null, |s| Cell::Str(s.to_string()))
    }
    pub(crate) fn opt_lit(v: Option<Literal>) -> Cell {
        v.map_or(Cell::Null, Cell::Lit)
    }
}

/// A field of a metadata table schema (no field-id metadata: these columns are not stored).
pub(crate) fn field(name: &str, dt: DataType, nullable: bool) -> Field {
    Field::new(name, dt, nullable)
}

pub(crate) fn timestamptz() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some(crate::arrow::UTC_TZ.into()))
}

/// `map<key, value>` with a required key and, as in Java's metadata schemas, a required value.
pub(crate) fn map_type(key: DataType, value: DataType, value_nullable: bool) -> DataType {
    let entries =
        Fields::from(vec![Field::new("key", key, false), Field::new("value", value, value_nullable)]);
    DataType::Map(Arc::new(Field::new("entries", DataType::Struct(entries), false)), false)
}

pub(crate) fn list_type(element: DataType, element_nullable: bool) -> DataType {
    DataType::List(Arc::new(Field::new("element", element, element_nullable)))
}

/// Builds a record batch from rows of cells, one cell per schema field.
pub(crate) fn batch(schema: SchemaRef, rows: Vec<Vec<Cell>>) -> Result<RecordBatch> {
    let n = schema.fields().len();
    let mut columns: Vec<Vec<Cell>> = (0..n).map(|_| Vec::with_capacity(rows.len())).collect();
    let num_rows = rows.len();
    for (r, row) in rows.into_iter().enumerate() {
        if row.len() != n {
            return Err(invalid_data(format!(
                "metadata table row {r} has {} values, the schema {n} columns",
                row.len()
            )));
        }
        for (c, cell) in row.into_iter().enumerate() {
            columns[c].push(cell);
        }
    }
    let arrays = schema
        .fields()
        .iter()
        .zip(columns)
        .map(|(f, cells)| {
            to_array(f.data_type(), cells).map_err(|e| e.with_context("column", f.name().clone()))
        })
        .collect::<Result<Vec<_>>>()?;
    let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(num_rows));
    RecordBatch::try_new_with_options(schema, arrays, &options)
        .map_err(|e| invalid_data("cannot assemble a metadata table batch").with_source(e))
}

/// A schema of the given fields.
pub(crate) fn schema_ref(fields: Vec<Field>) -> SchemaRef {
    Arc::new(ArrowSchema::new(fields))
}

fn mismatch(dt: &DataType, cell: &Cell) -> crate::Error {
    invalid_data(format!("expected a value of Arrow type {dt}, found {cell:?}"))
}

fn nulls_of(cells: &[Cell]) -> Option<NullBuffer> {
    if cells.iter().any(|c| matches!(c, Cell::Null)) {
        Some(NullBuffer::from_iter(cells.iter().map(|c| !matches!(c, Cell::Null))))
    } else {
        None
    }
}

/// The cells as one Arrow array of type `dt`.
pub(crate) fn to_array(dt: &DataType, cells: Vec<Cell>) -> Result<ArrayRef> {
    macro_rules! vals {
        ($($pat:pat => $v:expr),+) => {
            cells
                .iter()
                .map(|c| match c {
                    Cell::Null => Ok(None),
                    $($pat => Ok(Some($v)),)+
                    other => Err(mismatch(dt, other)),
                })
                .collect::<Result<Vec<_>>>()?
        };
    }
    macro_rules! prim {
        ($arr:ty, $($pat:pat => $v:expr),+) => {
            Arc::new(<$arr>::from(vals!($($pat => $v),+))) as ArrayRef
        };
    }
    let err = |e: arrow_schema::ArrowError| {
        invalid_data(format!("cannot build an Arrow {dt} column")).with_source(e)
    };
    Ok(match dt {
        DataType::Null => new_null_array(dt, cells.len()),
        DataType::Boolean => prim!(BooleanArray, Cell::Bool(b) => *b, Cell::Lit(Literal::Boolean(b)) => *b),
        DataType::Int32 => prim!(Int32Array, Cell::Int(v) => *v, Cell::Lit(Literal::Int(v)) => *v),
        DataType::Int64 => prim!(
            Int64Array,
            Cell::Long(v) => *v,
            Cell::Lit(Literal::Long(v)) => *v,
            // a value written before an int -> long promotion
            Cell::Lit(Literal::Int(v)) => i64::from(*v)
        ),
        DataType::Float32 => prim!(Float32Array, Cell::Lit(Literal::Float(v)) => *v),
        DataType::Float64 => prim!(
            Float64Array,
            Cell::Lit(Literal::Double(v)) => *v,
            Cell::Lit(Literal::Float(v)) => f64::from(*v)
        ),
        DataType::Date32 => prim!(Date32Array, Cell::Lit(Literal::Date(v)) => *v),
        DataType::Time64(TimeUnit::Microsecond) => {
            prim!(Time64MicrosecondArray, Cell::Lit(Literal::Time(v)) => *v)
        }
        DataType::Timestamp(TimeUnit::Microsecond, tz) => {
            let v = vals!(
                Cell::Long(v) => *v,
                Cell::Lit(Literal::Timestamp(v)) => *v,
                Cell::Lit(Literal::Timestamptz(v)) => *v
            );
            Arc::new(TimestampMicrosecondArray::from(v).with_timezone_opt(tz.clone()))
        }
        DataType::Timestamp(TimeUnit::Nanosecond, tz) => {
            let v =
                vals!(Cell::Lit(Literal::TimestampNs(v)) => *v, Cell::Lit(Literal::TimestamptzNs(v)) => *v);
            Arc::new(TimestampNanosecondArray::from(v).with_timezone_opt(tz.clone()))
        }
        DataType::Decimal128(p, s) => {
            let v = vals!(Cell::Lit(Literal::Decimal(v)) => *v);
            Arc::new(Decimal128Array::from(v).with_precision_and_scale(*p, *s).map_err(err)?)
        }
        DataType::Utf8 => {
            let vals = cells
                .iter()
                .map(|c| match c {
                    Cell::Null => Ok(None),
                    Cell::Str(s) | Cell::Lit(Literal::String(s)) => Ok(Some(s.as_str())),
                    other => Err(mismatch(dt, other)),
                })
                .collect::<Result<Vec<_>>>()?;
            Arc::new(StringArray::from(vals))
        }
        DataType::Binary => {
            let vals = cells
                .iter()
                .map(|c| match c {
                    Cell::Null => Ok(None),
                    Cell::Bytes(b) | Cell::Lit(Literal::Binary(b)) | Cell::Lit(Literal::Fixed(b)) => {
                        Ok(Some(b.as_slice()))
                    }
                    other => Err(mismatch(dt, other)),
                })
                .collect::<Result<Vec<_>>>()?;
            Arc::new(BinaryArray::from(vals))
        }
        DataType::FixedSizeBinary(size) => {
            let vals = cells
                .iter()
                .map(|c| match c {
                    Cell::Null => Ok(None),
                    Cell::Lit(Literal::Fixed(b)) | Cell::Bytes(b) => Ok(Some(b.clone())),
                    Cell::Lit(Literal::Uuid(u)) => Ok(Some(u.to_be_bytes().to_vec())),
                    other => Err(mismatch(dt, other)),
                })
                .collect::<Result<Vec<_>>>()?;
            if vals.iter().all(Option::is_none) {
                new_null_array(dt, vals.len())
            } else {
                Arc::new(
                    FixedSizeBinaryArray::try_from_sparse_iter_with_size(vals.into_iter(), *size)
                        .map_err(err)?,
                )
            }
        }
        DataType::Struct(fields) => struct_array(fields, cells)?,
        DataType::List(elem) => {
            let nulls = nulls_of(&cells);
            let mut lengths = Vec::with_capacity(cells.len());
            let mut values = Vec::new();
            for c in cells {
                match c {
                    Cell::Null => lengths.push(0),
                    Cell::List(items) => {
                        lengths.push(items.len());
                        values.extend(items);
                    }
                    other => return Err(mismatch(dt, &other)),
                }
            }
            let values = to_array(elem.data_type(), values)?;
            Arc::new(
                ListArray::try_new(elem.clone(), OffsetBuffer::from_lengths(lengths), values, nulls)
                    .map_err(err)?,
            )
        }
        DataType::Map(entries, sorted) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return Err(invalid_data(format!("map entries of {dt} are not a struct")));
            };
            let nulls = nulls_of(&cells);
            let mut lengths = Vec::with_capacity(cells.len());
            let mut pairs = Vec::new();
            for c in cells {
                match c {
                    Cell::Null => lengths.push(0),
                    Cell::Map(items) => {
                        lengths.push(items.len());
                        pairs.extend(items.into_iter().map(|(k, v)| Cell::Struct(vec![k, v])));
                    }
                    other => return Err(mismatch(dt, &other)),
                }
            }
            let entries_array = struct_array(kv, pairs)?;
            let entries_array = entries_array
                .as_any()
                .downcast_ref::<StructArray>()
                .cloned()
                .ok_or_else(|| invalid_data("map entries did not build as a struct"))?;
            Arc::new(
                MapArray::try_new(
                    entries.clone(),
                    OffsetBuffer::from_lengths(lengths),
                    entries_array,
                    nulls,
                    *sorted,
                )
                .map_err(err)?,
            )
        }
        other => return Err(invalid_data(format!("metadata tables have no column of Arrow type {other}"))),
    })
}

fn struct_array(fields: &Fields, cells: Vec<Cell>) -> Result<ArrayRef> {
    let nulls = nulls_of(&cells);
    let rows = cells.len();
    let mut children: Vec<Vec<Cell>> = fields.iter().map(|_| Vec::with_capacity(rows)).collect();
    for c in cells {
        match c {
            Cell::Null => children.iter_mut().for_each(|ch| ch.push(Cell::Null)),
            Cell::Struct(values) if values.len() == fields.len() => {
                for (ch, v) in children.iter_mut().zip(values) {
                    ch.push(v);
                }
            }
            other => {
                return Err(invalid_data(format!(
                    "expected a struct of {} fields ({}), found {other:?}",
                    fields.len(),
                    fields.iter().map(|f| f.name().as_str()).collect::<Vec<_>>().join(", ")
                )))
            }
        }
    }
    let arrays = fields
        .iter()
        .zip(children)
        .map(|(f, ch)| to_array(f.data_type(), ch).map_err(|e| e.with_context("field", f.name().clone())))
        .collect::<Result<Vec<_>>>()?;
    if fields.is_empty() {
        return Ok(Arc::new(StructArray::new_empty_fields(rows, nulls)));
    }
    Ok(Arc::new(
        StructArray::try_new(fields.clone(), arrays, nulls)
            .map_err(|e| invalid_data("cannot build a struct column").with_source(e))?,
    ))
}

/// The Arrow type of an Iceberg primitive (partition values, bounds), without field ids.
pub(crate) fn primitive(ty: &PrimitiveType) -> Result<DataType> {
    crate::arrow::primitive_to_arrow(ty)
}

/// A struct type of optional fields named as given.
pub(crate) fn struct_of(fields: Vec<Field>) -> DataType {
    DataType::Struct(Fields::from(fields))
}

#[cfg(test)]
mod tests {
    use arrow_array::Array;

    use super::*;

    #[test]
    fn nested_cells_build_arrays() {
        let dt = struct_of(vec![
            field("a", DataType::Int32, true),
            field("m", map_type(DataType::Utf8, DataType::Int64, false), true),
            field("l", list_type(DataType::Utf8, false), true),
        ]);
        let cells = vec![
            Cell::Struct(vec![
                Cell::Int(1),
                Cell::Map(vec![(Cell::Str("k".into()), Cell::Long(2))]),
                Cell::List(vec![Cell::Str("x".into())]),
            ]),
            Cell::Null,
            Cell::Struct(vec![Cell::Null, Cell::Null, Cell::List(vec![])]),
        ];
        let a = to_array(&dt, cells).unwrap();
        assert_eq!(a.len(), 3);
        assert_eq!(a.null_count(), 1);
        let bad = to_array(&DataType::Int32, vec![Cell::Str("x".into())]);
        assert!(bad.unwrap_err().to_string().contains("Int32"));
    }
}
