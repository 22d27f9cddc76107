//! A semi-join key set: the distinct join keys of a MERGE's source, probed by the target scan
//! on the executors so that only target rows that can match a source row leave Rust (the
//! other rows of a 10M-row target never become Spark rows). Keys compare as SQL `=` does:
//! a null key matches nothing. One long key column (the primary-key case) is a hash set of
//! `i64`; any other key is hashed by its arrow-row encoding.

use std::collections::HashSet;
use std::hash::BuildHasherDefault;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch};
use arrow_cast::cast;
use arrow_row::{RowConverter, SortField};
use arrow_schema::DataType;
use arrow_select::filter::filter_record_batch;

use super::equality_deletes::FxHasher;
use crate::error::{invalid_data, not_supported, Result};

type FxBuild = BuildHasherDefault<FxHasher>;

enum Keys {
    Long(HashSet<i64, FxBuild>),
    Rows { converter: RowConverter, rows: HashSet<Box<[u8]>, FxBuild> },
}

/// The distinct non-null keys of some rows, with the Arrow types they were given as.
pub struct KeySet {
    types: Vec<DataType>,
    keys: Keys,
}

impl std::fmt::Debug for KeySet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeySet").field("types", &self.types).field("keys", &self.len()).finish()
    }
}

/// Rows where every key column is non-null.
fn all_valid(cols: &[ArrayRef], len: usize) -> Vec<bool> {
    let mut valid = vec![true; len];
    for c in cols {
        if c.null_count() > 0 {
            for (i, v) in valid.iter_mut().enumerate() {
                *v = *v && c.is_valid(i);
            }
        }
    }
    valid
}

impl KeySet {
    /// The keys of `cols` (one array per key column, all of one length); rows with a null key
    /// are left out (they can match nothing).
    pub fn from_columns(cols: &[ArrayRef]) -> Result<Self> {
        let first = cols.first().ok_or_else(|| invalid_data("a key set needs at least one key column"))?;
        let len = first.len();
        if cols.iter().any(|c| c.len() != len) {
            return Err(invalid_data("the key columns of a key set differ in length"));
        }
        let types: Vec<DataType> = cols.iter().map(|c| c.data_type().clone()).collect();
        for t in &types {
            if t.is_nested() || matches!(t, DataType::Float16 | DataType::Float32 | DataType::Float64) {
                // Floats: SQL `=` makes 0.0 equal -0.0 and NaN equal NaN, bit patterns do not.
                return Err(not_supported(format!("a key set cannot hold keys of type {t}")));
            }
        }
        let valid = all_valid(cols, len);
        let keys = if types.len() == 1 && types[0] == DataType::Int64 {
            let a = first.as_primitive::<Int64Type>();
            let mut set = HashSet::with_capacity_and_hasher(len, FxBuild::default());
            for (i, v) in a.values().iter().enumerate() {
                if valid[i] {
                    set.insert(*v);
                }
            }
            Keys::Long(set)
        } else {
            let fields = types.iter().map(|t| SortField::new(t.clone())).collect();
            let converter = RowConverter::new(fields)
                .map_err(|e| not_supported("cannot hash these key types").with_source(e))?;
            let encoded = converter
                .convert_columns(cols)
                .map_err(|e| invalid_data("cannot encode the keys").with_source(e))?;
            let mut rows = HashSet::with_capacity_and_hasher(len, FxBuild::default());
            for (i, row) in encoded.iter().enumerate() {
                if valid[i] {
                    rows.insert(row.as_ref().into());
                }
            }
            Keys::Rows { converter, rows }
        };
        Ok(KeySet { types, keys })
    }

    /// Number of distinct keys.
    pub fn len(&self) -> usize {
        match &self.keys {
            Keys::Long(s) => s.len(),
            Keys::Rows { rows, .. } => rows.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Which rows of `cols` (the probe side's key columns, in the set's order; cast to the
    /// set's types when they differ) have a key in the set. A null key is never in it.
    pub fn contains_mask(&self, cols: &[ArrayRef]) -> Result<BooleanArray> {
        if cols.len() != self.types.len() {
            return Err(invalid_data(format!(
                "a key set of {} columns probed with {} columns",
                self.types.len(),
                cols.len()
            )));
        }
        let cols = cols
            .iter()
            .zip(&self.types)
            .map(|(c, t)| {
                if c.data_type() == t {
                    Ok(c.clone())
                } else {
                    cast(c, t).map_err(|e| {
                        invalid_data(format!(
                            "cannot compare keys of type {} with keys of type {t}",
                            c.data_type()
                        ))
                        .with_source(e)
                    })
                }
            })
            .collect::<Result<Vec<_>>>()?;
        let len = cols.first().map_or(0, |c| c.len());
        let valid = all_valid(&cols, len);
        match &self.keys {
            Keys::Long(set) => {
                let a = cols[0].as_primitive::<Int64Type>();
                Ok(a.values().iter().zip(&valid).map(|(v, ok)| Some(*ok && set.contains(v))).collect())
            }
            Keys::Rows { converter, rows } => {
                let encoded = converter
                    .convert_columns(&cols)
                    .map_err(|e| invalid_data("cannot encode the probed keys").with_source(e))?;
                Ok(encoded.iter().zip(&valid).map(|(r, ok)| Some(*ok && rows.contains(r.as_ref()))).collect())
            }
        }
    }

    /// The rows of `batch` whose columns `key_columns` hold a key of the set.
    pub fn semi_join(&self, batch: &RecordBatch, key_columns: &[String]) -> Result<RecordBatch> {
        let cols = key_columns
            .iter()
            .map(|name| {
                batch.column_by_name(name).cloned().ok_or_else(|| {
                    invalid_data(format!("the batch has no key column {name:?} to probe the key set with"))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let mask = self.contains_mask(&cols)?;
        filter_record_batch(batch, &mask)
            .map_err(|e| invalid_data("cannot filter the batch by its keys").with_source(e))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int32Array, Int64Array, StringArray};

    use super::*;

    fn mask(m: BooleanArray) -> Vec<bool> {
        m.iter().map(|v| v.unwrap_or(false)).collect()
    }

    #[test]
    fn long_keys_match_values_and_never_null() {
        let keys: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), Some(5), None, Some(5)]));
        let set = KeySet::from_columns(&[keys]).unwrap();
        assert_eq!(set.len(), 2);
        let probe: ArrayRef = Arc::new(Int64Array::from(vec![Some(5), Some(2), None, Some(1)]));
        assert_eq!(mask(set.contains_mask(&[probe]).unwrap()), vec![true, false, false, true]);
        // An int column probes a long set by value.
        let ints: ArrayRef = Arc::new(Int32Array::from(vec![1, 3]));
        assert_eq!(mask(set.contains_mask(&[ints]).unwrap()), vec![true, false]);
    }

    #[test]
    fn composite_keys_match_whole_tuples() {
        let a: ArrayRef = Arc::new(StringArray::from(vec![Some("x"), Some("y"), Some("z")]));
        let b: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), Some(2), None]));
        let set = KeySet::from_columns(&[a, b]).unwrap();
        assert_eq!(set.len(), 2, "the tuple with a null is left out");
        let pa: ArrayRef = Arc::new(StringArray::from(vec![Some("x"), Some("x"), Some("z"), None]));
        let pb: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), Some(2), None, Some(1)]));
        assert_eq!(mask(set.contains_mask(&[pa, pb]).unwrap()), vec![true, false, false, false]);
    }

    #[test]
    fn floats_and_wrong_arity_are_refused() {
        let f: ArrayRef = Arc::new(arrow_array::Float64Array::from(vec![0.0]));
        assert!(KeySet::from_columns(&[f]).is_err());
        let k: ArrayRef = Arc::new(Int64Array::from(vec![1]));
        let set = KeySet::from_columns(std::slice::from_ref(&k)).unwrap();
        assert!(set.contains_mask(&[k.clone(), k]).is_err());
        assert!(KeySet::from_columns(&[]).is_err());
    }

    #[test]
    fn semi_join_keeps_matching_rows() {
        let k: ArrayRef = Arc::new(Int64Array::from(vec![2, 4]));
        let set = KeySet::from_columns(&[k]).unwrap();
        let batch = RecordBatch::try_from_iter([
            ("id", Arc::new(Int64Array::from(vec![1, 2, 3, 4])) as ArrayRef),
            ("v", Arc::new(StringArray::from(vec!["a", "b", "c", "d"])) as ArrayRef),
        ])
        .unwrap();
        let out = set.semi_join(&batch, &["id".to_string()]).unwrap();
        assert_eq!(out.num_rows(), 2);
        assert!(set.semi_join(&batch, &["nope".to_string()]).is_err());
    }
}
