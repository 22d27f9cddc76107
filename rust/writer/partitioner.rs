//! Vectorised partitioning of a batch: each partition field's transform runs on the whole
//! source column (`spec::transform_arrow`), the key columns are encoded into comparable
//! row bytes (arrow-row), and rows are grouped by those bytes with one hash lookup per row.
//! A `Literal` is built only once per group (for the DataFile's partition tuple and path).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use arrow::row::{RowConverter, Rows, SortField};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int32Type, Int64Type, Time64MicrosecondType,
    TimestampMicrosecondType, TimestampNanosecondType,
};
use arrow_array::{Array, ArrayRef, RecordBatch};

use crate::error::{not_supported, validation, Error, ErrorKind, Result};
use crate::spec::{
    apply_transform_array, Literal, NestedField, NestedFieldRef, PartitionSpec, PrimitiveType, Schema,
    StructValue, Transform, Type,
};

/// FxHash (rustc's hasher): a few cycles per word; keys here are short and not adversarial.
#[derive(Default)]
pub(crate) struct FxHasher(u64);

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            self.add(w);
        }
        let mut rest = 0u64;
        for (i, b) in chunks.remainder().iter().enumerate() {
            rest |= u64::from(*b) << (8 * i);
        }
        self.add(rest ^ (bytes.len() as u64) << 56);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

impl FxHasher {
    #[inline]
    fn add(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

pub(crate) type FxBuild = BuildHasherDefault<FxHasher>;

/// One partition field: where its source column is and how to transform it.
#[derive(Debug, Clone)]
struct KeyField {
    /// The source's position: a top-level column, then a field of each struct below it.
    path: Vec<usize>,
    source: PrimitiveType,
    transform: Transform,
    result: PrimitiveType,
    name: String,
    field_id: i32,
}

impl KeyField {
    /// A truncated decimal can need one digit more than its type holds
    /// (`truncate[50](-9999999.99)` is `-10000000.00`, past `decimal(9, 2)`): such a partition
    /// value cannot be stored as the field's type, and Iceberg Java refuses the write too.
    fn check_fits(&self, key: &ArrayRef) -> Result<()> {
        let PrimitiveType::Decimal { precision, .. } = &self.result else {
            return Ok(());
        };
        let Some(values) = key.as_primitive_opt::<Decimal128Type>() else {
            return Ok(());
        };
        let limit = 10u128.checked_pow(*precision).unwrap_or(u128::MAX);
        match values.iter().flatten().find(|v| v.unsigned_abs() >= limit) {
            None => Ok(()),
            Some(v) => Err(validation(format!(
                "partition field '{}' (id {}): {} of a value gives {}, which its type {} cannot hold \
                 (Iceberg Java refuses to write it too)",
                self.name,
                self.field_id,
                self.transform,
                self.transform.to_human_string(&self.result, Some(&Literal::Decimal(v))),
                self.result
            ))),
        }
    }
}

/// Computes partition keys for batches conformed to the table schema.
pub struct Partitioner {
    fields: Vec<KeyField>,
    converter: Option<RowConverter>,
}

impl std::fmt::Debug for Partitioner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Partitioner").field("fields", &self.fields).finish()
    }
}

/// The rows of a batch grouped by partition key, groups in first-seen order.
pub struct Grouping {
    /// The transformed key columns (one per partition field).
    keys: Vec<ArrayRef>,
    rows: Option<Rows>,
    /// Group index of every row.
    pub group_of_row: Vec<u32>,
    /// First row of every group (where its key is read from).
    pub first_row: Vec<u32>,
    /// Number of rows of every group.
    pub sizes: Vec<u32>,
}

impl Grouping {
    pub fn num_groups(&self) -> usize {
        self.first_row.len()
    }

    /// The comparable bytes of group `g`'s key (equal bytes <=> equal partition tuples).
    pub fn key_bytes(&self, g: usize) -> &[u8] {
        match &self.rows {
            Some(rows) => rows.row(self.first_row[g] as usize).data(),
            None => &[],
        }
    }

    /// The partition tuple of group `g`, typed by each field's result type.
    pub fn partition_value(&self, p: &Partitioner, g: usize) -> Result<StructValue> {
        let row = self.first_row[g] as usize;
        p.fields.iter().zip(&self.keys).map(|(f, k)| literal_at(k, &f.result, row)).collect()
    }

    /// Row indices ordered by group (a stable counting sort), with each group's start offset.
    pub fn permutation(&self) -> (Vec<u32>, Vec<usize>) {
        let mut starts = Vec::with_capacity(self.sizes.len() + 1);
        let mut acc = 0usize;
        for s in &self.sizes {
            starts.push(acc);
            acc += *s as usize;
        }
        starts.push(acc);
        let mut next = starts.clone();
        let mut perm = vec![0u32; self.group_of_row.len()];
        for (row, g) in self.group_of_row.iter().enumerate() {
            let slot = &mut next[*g as usize];
            perm[*slot] = row as u32;
            *slot += 1;
        }
        (perm, starts)
    }
}

/// The position of field `id` among `fields`, through struct columns only.
pub(crate) fn struct_path(fields: &[NestedFieldRef], id: i32) -> Option<(Vec<usize>, &NestedField)> {
    for (i, f) in fields.iter().enumerate() {
        if f.id == id {
            return Some((vec![i], f));
        }
        if let Type::Struct(st) = &f.field_type {
            if let Some((mut path, found)) = struct_path(&st.fields, id) {
                path.insert(0, i);
                return Some((path, found));
            }
        }
    }
    None
}

/// The source values at `path` of `batch`: a field of a null struct is null.
pub(crate) fn source_array(batch: &RecordBatch, path: &[usize]) -> Result<ArrayRef> {
    let not_struct = || validation("a partition or sort source's parent column is not a struct");
    let (first, rest) = path.split_first().ok_or_else(|| validation("empty source column path"))?;
    let mut array = batch.columns().get(*first).ok_or_else(not_struct)?.clone();
    for i in rest {
        let parent = array.as_struct_opt().ok_or_else(not_struct)?;
        let child = parent.columns().get(*i).ok_or_else(not_struct)?.clone();
        array = crate::arrow::null_where_parent_null(parent, child).map_err(arrow_err)?;
    }
    Ok(array)
}

impl Partitioner {
    /// Resolves each partition field's source column: a top-level column or a field of
    /// nested structs (Iceberg partitions by no field inside a list or a map).
    pub fn try_new(schema: &Schema, spec: &PartitionSpec) -> Result<Self> {
        let mut fields = Vec::new();
        for pf in spec.fields() {
            let (path, field) = struct_path(schema.fields(), pf.source_id).ok_or_else(|| {
                not_supported(format!(
                    "partition field '{}' has source field id {} which is neither a column nor a field \
                     of a struct column",
                    pf.name, pf.source_id
                ))
            })?;
            let source = field.field_type.as_primitive().cloned().ok_or_else(|| {
                validation(format!("partition field '{}' has a non-primitive source column", pf.name))
            })?;
            let result = pf.transform.result_type(&source).map_err(|e| {
                validation(format!("partition field '{}' (id {}): {}", pf.name, pf.field_id, e.message()))
            })?;
            fields.push(KeyField {
                path,
                source,
                transform: pf.transform.clone(),
                result,
                name: pf.name.clone(),
                field_id: pf.field_id,
            });
        }
        let converter = if fields.is_empty() {
            None
        } else {
            let sort_fields = fields
                .iter()
                .map(|f| crate::arrow::primitive_to_arrow(&f.result).map(SortField::new))
                .collect::<Result<Vec<_>>>()?;
            Some(RowConverter::new(sort_fields).map_err(arrow_err)?)
        };
        Ok(Partitioner { fields, converter })
    }

    pub fn is_unpartitioned(&self) -> bool {
        self.fields.is_empty()
    }

    /// Partition key of every row of `batch` (conformed to the table schema), grouped.
    pub fn group(&self, batch: &RecordBatch) -> Result<Grouping> {
        let n = batch.num_rows();
        let Some(converter) = &self.converter else {
            return Ok(Grouping {
                keys: vec![],
                rows: None,
                group_of_row: vec![0; n],
                first_row: if n > 0 { vec![0] } else { vec![] },
                sizes: if n > 0 { vec![n as u32] } else { vec![] },
            });
        };
        let keys = self
            .fields
            .iter()
            .map(|f| {
                let key =
                    apply_transform_array(&f.transform, &f.source, source_array(batch, &f.path)?.as_ref())?;
                f.check_fits(&key)?;
                Ok(key)
            })
            .collect::<Result<Vec<_>>>()?;
        let rows = converter.convert_columns(&keys).map_err(arrow_err)?;
        let mut index: HashMap<&[u8], u32, FxBuild> = HashMap::default();
        let mut group_of_row = Vec::with_capacity(n);
        let (mut first_row, mut sizes) = (Vec::new(), Vec::<u32>::new());
        // Runs of equal keys (clustered or low-cardinality input) skip the hash lookup.
        let mut prev: Option<(&[u8], u32)> = None;
        for (i, row) in rows.iter().enumerate() {
            let bytes = row.data();
            let g = match prev {
                Some((p, g)) if p == bytes => g,
                _ => {
                    let next = first_row.len() as u32;
                    let g = *index.entry(bytes).or_insert(next);
                    if g == next {
                        first_row.push(i as u32);
                        sizes.push(0);
                    }
                    prev = Some((bytes, g));
                    g
                }
            };
            sizes[g as usize] += 1;
            group_of_row.push(g);
        }
        drop(index);
        Ok(Grouping { keys, rows: Some(rows), group_of_row, first_row, sizes })
    }
}

fn arrow_err(e: arrow_schema::ArrowError) -> Error {
    Error::new(ErrorKind::Internal, "cannot encode partition keys").with_source(e)
}

/// Shared so writers can hold it while a grouping borrows rows from it.
pub type PartitionerRef = Arc<Partitioner>;

/// The Iceberg value at `row` of a primitive column already conformed to the table's type.
pub(crate) fn literal_at(array: &ArrayRef, ty: &PrimitiveType, row: usize) -> Result<Option<Literal>> {
    if array.is_null(row) {
        return Ok(None);
    }
    use PrimitiveType as P;
    let bad =
        || Error::new(ErrorKind::Internal, format!("column of {ty} has Arrow type {}", array.data_type()));
    Ok(Some(match ty {
        P::Boolean => Literal::Boolean(array.as_boolean_opt().ok_or_else(bad)?.value(row)),
        P::Int => Literal::Int(array.as_primitive_opt::<Int32Type>().ok_or_else(bad)?.value(row)),
        P::Long => Literal::Long(array.as_primitive_opt::<Int64Type>().ok_or_else(bad)?.value(row)),
        P::Float => Literal::Float(array.as_primitive_opt::<Float32Type>().ok_or_else(bad)?.value(row)),
        P::Double => Literal::Double(array.as_primitive_opt::<Float64Type>().ok_or_else(bad)?.value(row)),
        P::Decimal { .. } => {
            Literal::Decimal(array.as_primitive_opt::<Decimal128Type>().ok_or_else(bad)?.value(row))
        }
        P::Date => Literal::Date(array.as_primitive_opt::<Date32Type>().ok_or_else(bad)?.value(row)),
        P::Time => {
            Literal::Time(array.as_primitive_opt::<Time64MicrosecondType>().ok_or_else(bad)?.value(row))
        }
        P::Timestamp => Literal::Timestamp(
            array.as_primitive_opt::<TimestampMicrosecondType>().ok_or_else(bad)?.value(row),
        ),
        P::Timestamptz => Literal::Timestamptz(
            array.as_primitive_opt::<TimestampMicrosecondType>().ok_or_else(bad)?.value(row),
        ),
        P::TimestampNs => Literal::TimestampNs(
            array.as_primitive_opt::<TimestampNanosecondType>().ok_or_else(bad)?.value(row),
        ),
        P::TimestamptzNs => Literal::TimestamptzNs(
            array.as_primitive_opt::<TimestampNanosecondType>().ok_or_else(bad)?.value(row),
        ),
        P::String => Literal::String(array.as_string_opt::<i32>().ok_or_else(bad)?.value(row).to_string()),
        P::Uuid => {
            let b = array.as_fixed_size_binary_opt().ok_or_else(bad)?.value(row);
            Literal::Uuid(u128::from_be_bytes(b.try_into().map_err(|_| bad())?))
        }
        P::Fixed(_) => Literal::Fixed(array.as_fixed_size_binary_opt().ok_or_else(bad)?.value(row).to_vec()),
        P::Binary => Literal::Binary(array.as_binary_opt::<i32>().ok_or_else(bad)?.value(row).to_vec()),
        // An Arrow `Null` column has no validity buffer, so `is_null` above says false.
        P::Unknown => return Ok(None),
        P::Variant | P::Geometry { .. } | P::Geography { .. } => return Err(bad()),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::PartitionField;
    use arrow_array::Decimal128Array;
    use arrow_schema::{DataType, Field, Schema as ArrowSchema};

    fn grouping_of(unscaled: Vec<Option<i128>>) -> Result<Grouping> {
        let ty = PrimitiveType::Decimal { precision: 9, scale: 2 };
        let schema = Schema::new(0, vec![NestedField::optional(1, "d", Type::Primitive(ty))], vec![])?;
        let spec =
            PartitionSpec::new(0, vec![PartitionField::new(1, 1000, "d_trunc", Transform::Truncate(50))]);
        let array = Decimal128Array::from(unscaled).with_precision_and_scale(9, 2).map_err(arrow_err)?;
        let arrow = ArrowSchema::new(vec![Field::new("d", DataType::Decimal128(9, 2), true)]);
        let batch = RecordBatch::try_new(Arc::new(arrow), vec![Arc::new(array)]).map_err(arrow_err)?;
        Partitioner::try_new(&schema, &spec)?.group(&batch)
    }

    #[test]
    fn a_truncated_decimal_past_its_precision_is_refused_naming_the_field() {
        // truncate[50] of 9999999.99 is 9999999.50 and of -9999999.49 is -9999999.50: they fit.
        assert!(grouping_of(vec![Some(999_999_999), Some(-999_999_949), None]).is_ok());
        // truncate[50] of -9999999.99 is -10000000.00: ten digits, past decimal(9, 2).
        let err =
            grouping_of(vec![Some(1), Some(-999_999_999)]).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("'d_trunc' (id 1000)") && err.contains("-10000000.00"), "{err}");
    }
}
