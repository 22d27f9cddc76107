//! Row keys: each row of some columns as one byte string (the arrow-row encoding), so that
//! rows of any type (nested, with nulls) can be grouped and compared as one binary column.
//! Equal keys mean equal values, nulls equal to nulls (as Spark's `Row.equals`, which the
//! changelog's carry-over removal and update detection compare rows with).

use arrow_array::{Array, ArrayRef, LargeBinaryArray, RecordBatch};
use arrow_row::{RowConverter, SortField};

use crate::error::{invalid_data, not_supported, Result};

/// The row keys of `columns` of `batch` (in that order), one binary value per row (64-bit offsets: the keys of a large batch may pass 2 GB).
pub fn row_keys(batch: &RecordBatch, columns: &[String]) -> Result<LargeBinaryArray> {
    let mut arrays: Vec<ArrayRef> = Vec::with_capacity(columns.len());
    for name in columns {
        let col = batch.column_by_name(name).ok_or_else(|| {
            let names: Vec<&str> = batch.schema_ref().fields().iter().map(|f| f.name().as_str()).collect();
            invalid_data(format!(
                "row keys: no column '{name}' in the batch (columns: [{}])",
                names.join(", ")
            ))
        })?;
        arrays.push(col.clone());
    }
    if arrays.is_empty() {
        return Err(invalid_data("row keys need at least one column"));
    }
    let fields = arrays.iter().map(|a| SortField::new(a.data_type().clone())).collect();
    let converter = RowConverter::new(fields)
        .map_err(|e| not_supported(format!("row keys cannot encode columns {columns:?}: {e}")))?;
    let rows = converter
        .convert_columns(&arrays)
        .map_err(|e| invalid_data(format!("row keys of columns {columns:?}: {e}")))?;
    let keys = LargeBinaryArray::from_iter_values(rows.iter());
    debug_assert_eq!(keys.len(), batch.num_rows());
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int64Array, StringArray};

    use super::*;

    #[test]
    fn equal_rows_have_equal_keys_and_nulls_match_nulls() {
        let batch = RecordBatch::try_from_iter([
            ("id", Arc::new(Int64Array::from(vec![Some(1), Some(1), None, None, Some(2)])) as ArrayRef),
            ("s", Arc::new(StringArray::from(vec![Some("a"), Some("a"), None, None, Some("a")])) as ArrayRef),
        ])
        .unwrap();
        let keys = row_keys(&batch, &["id".into(), "s".into()]).unwrap();
        assert_eq!(keys.value(0), keys.value(1));
        assert_eq!(keys.value(2), keys.value(3));
        assert_ne!(keys.value(0), keys.value(4));
        assert_ne!(keys.value(0), keys.value(2));
        let only_s = row_keys(&batch, &["s".into()]).unwrap();
        assert_eq!(only_s.value(0), only_s.value(4));
        assert!(row_keys(&batch, &["missing".into()]).unwrap_err().to_string().contains("missing"));
    }
}
