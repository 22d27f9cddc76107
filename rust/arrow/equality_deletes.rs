//! Equality deletes as a hashed anti-join: the keys of every equality-delete file with the
//! same `equality_ids` go into one hash map from key to the highest data sequence number of
//! a delete file holding it (memory grows with delete keys, never with data rows); a data row
//! is dropped when its key's sequence number is above the data file's (the spec's rule: an
//! equality delete applies to data with a smaller sequence number). Null-safe: a null key
//! deletes a null key, as in Java's `StructLikeSet`.
//!
//! Because the rule is decided per key, one map serves every data file of a partition scope
//! ([`SharedEqualityDeletes`]): a delete file a data file's task does not list either has a
//! sequence number not above the data file's (the rule excludes it) or was pruned by bounds
//! (no key of it can match the data file), so adding it changes no answer. After many upserts
//! (one delete file each) every task then probes one map instead of building its own set from
//! the delete files after it.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, RwLock};

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, BooleanArray};
use arrow_row::{RowConverter, SortField};
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::ArrowReaderOptions;

use super::reader::read_parquet;
use super::schema::{schema_from_arrow, type_to_arrow};
use crate::error::{invalid_data, not_supported, resource_limit, Error, Result};
use crate::io::InputFile;
use crate::spec::{NestedField, PrimitiveType, Schema, Type};

/// A multiply-rotate hasher (the Fx scheme): keys are ids and short row encodings, not
/// adversarial input, and SipHash would dominate the probe cost.
#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            self.add(u64::from_le_bytes(b));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut b = [0u8; 8];
            if let Some(head) = b.get_mut(..rest.len()) {
                head.copy_from_slice(rest);
            }
            self.add(u64::from_le_bytes(b) ^ ((rest.len() as u64) << 59));
        }
    }

    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.add(v);
    }

    #[inline]
    fn write_i64(&mut self, v: i64) {
        self.add(v as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // Fold the high bits down: hashbrown picks buckets from the low bits.
        self.0 ^ (self.0 >> 32)
    }
}

type FxBuild = BuildHasherDefault<FxHasher>;

/// Key -> the highest sequence number of a delete file holding it.
enum Keys {
    /// One long key column: the common primary-key case.
    Long { values: HashMap<i64, i64, FxBuild>, null_seq: Option<i64> },
    /// Any key: arrow-row encodings (nulls encode distinctly, so null matches null).
    Rows { converter: RowConverter, rows: HashMap<Box<[u8]>, i64, FxBuild> },
}

#[inline]
fn raise(slot: &mut i64, seq: i64) {
    if seq > *slot {
        *slot = seq;
    }
}

/// The delete keys of one `equality_ids` set, merged over all the delete files that apply.
pub struct EqualityDeleteSet {
    /// The key fields, with the types both sides are read as.
    fields: Vec<NestedField>,
    keys: Keys,
    len: usize,
    /// Bytes of the row-encoded keys (`Keys::Rows`), with their allocations.
    key_bytes: usize,
    /// The most memory the set may take (`memory_budget`).
    budget: usize,
}

/// The environment variable that sets `memory_budget` (MB).
pub const MEMORY_BUDGET_ENV: &str = "ICEFLOE_EQUALITY_DELETE_MEMORY_MB";

/// Default `memory_budget`: 2 GB, about 58M long keys (hash table buckets of 17 bytes at
/// hashbrown's 7/8 load, doubled in powers of two) or 20-40M short composite keys.
pub const DEFAULT_MEMORY_BUDGET_MB: usize = 2048;

/// The memory one equality-delete set may take on an executor (its hash table and key
/// bytes): `ICEFLOE_EQUALITY_DELETE_MEMORY_MB`, default 2048. A set that would grow past it
/// fails the read with a `ResourceLimit` error naming the delete file, instead of the
/// worker being OOM-killed (Java's `StructLikeSet` grows until the JVM dies). While the
/// table doubles, the old table is held too: the peak is up to 1.5x the budget.
pub fn memory_budget() -> usize {
    let mb = std::env::var(MEMORY_BUDGET_ENV).ok().and_then(|v| v.trim().parse::<usize>().ok());
    mb.unwrap_or(DEFAULT_MEMORY_BUDGET_MB).saturating_mul(1 << 20)
}

/// Bytes a row-encoded key takes on the heap: its bytes plus the allocation's header and
/// rounding.
fn key_allocation(len: usize) -> usize {
    len.next_multiple_of(16).saturating_add(16)
}

/// Bytes per hash-table slot: hashbrown keeps 8 buckets per 7 slots, each a (key, value)
/// pair plus one control byte.
const fn slot_bytes(pair: usize) -> usize {
    (pair + 1) * 8 / 7 + 1
}

impl std::fmt::Debug for EqualityDeleteSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EqualityDeleteSet").field("fields", &self.fields).field("keys", &self.len).finish()
    }
}

/// The widest type a key column of type `t` may have been written with later (promotions),
/// so keys from files of different schema versions compare by value.
fn widen(t: &Type) -> Type {
    match t {
        Type::Primitive(PrimitiveType::Int) => PrimitiveType::Long.into(),
        Type::Primitive(PrimitiveType::Float) => PrimitiveType::Double.into(),
        Type::Primitive(PrimitiveType::Decimal { scale, .. }) => {
            PrimitiveType::Decimal { precision: 38, scale: *scale }.into()
        }
        other => other.clone(),
    }
}

/// The key field `id` as a delete file declares it (its Parquet schema carries table field ids).
fn field_in_delete_file(path: &str, id: i32) -> Result<NestedField> {
    let file = InputFile::open(path, None).map_err(|e| e.with_file_role("equality delete file", path))?;
    let builder = super::guard::open_parquet(file, ArrowReaderOptions::new(), path)
        .map_err(|e| e.with_file_role("equality delete file", path))?;
    let schema =
        schema_from_arrow(builder.schema()).map_err(|e| e.with_file_role("equality delete file", path))?;
    schema.field_by_id(id).map(|f| f.as_ref().clone()).ok_or_else(|| {
        invalid_data(format!("equality delete file has no column with field id {id} (an equality id)"))
            .with_context("equality delete file", path)
    })
}

/// The one key column of a long-keyed set.
fn first_key_column(cols: &[ArrayRef]) -> Result<&ArrayRef> {
    cols.first().ok_or_else(|| invalid_data("an equality delete key batch has no key column"))
}

/// The most keys a set is sized for up front (8M: 128-256 MB of long keys); the count is
/// a manifest's, not trusted beyond that.
const MAX_PRESIZED_KEYS: usize = 8 << 20;

impl EqualityDeleteSet {
    /// Loads the keys of `files` (all with these `equality_ids`). `known` gives a key field's
    /// type when the caller's projection has it; other keys take the delete file's type, widened.
    pub fn load(
        equality_ids: &[i32],
        files: &[&str],
        known: &dyn Fn(i32) -> Option<NestedField>,
    ) -> Result<Self> {
        Self::load_sized(equality_ids, files, known, 0)
    }

    /// `load` of files whose every key applies to every data row (`keep_mask`).
    pub fn load_sized(
        equality_ids: &[i32],
        files: &[&str],
        known: &dyn Fn(i32) -> Option<NestedField>,
        expected_keys: usize,
    ) -> Result<Self> {
        let with_seq: Vec<(&str, i64)> = files.iter().map(|f| (*f, i64::MAX)).collect();
        Self::load_with_seqs(equality_ids, &with_seq, known, expected_keys)
    }

    /// `load`, with the hash set sized up front for `expected_keys` keys (the delete files'
    /// record counts from the manifests; capped), so a large set is not rehashed while it
    /// grows (a 5M-key set peaked ~50% above its final size when grown by doubling).
    pub fn load_with_seqs(
        equality_ids: &[i32],
        files: &[(&str, i64)],
        known: &dyn Fn(i32) -> Option<NestedField>,
        expected_keys: usize,
    ) -> Result<Self> {
        if equality_ids.is_empty() {
            let file = files.first().map(|f| f.0).unwrap_or("");
            return Err(invalid_data("equality delete file has no equality_ids")
                .with_context("equality delete file", file));
        }
        let mut fields = Vec::with_capacity(equality_ids.len());
        for &id in equality_ids {
            let f = match known(id) {
                Some(f) => f,
                None => {
                    let first =
                        files.first().ok_or_else(|| invalid_data("no equality delete files to load"))?;
                    let f = field_in_delete_file(first.0, id)?;
                    let t = widen(&f.field_type);
                    NestedField::optional(f.id, f.name, t)
                }
            };
            if !matches!(f.field_type, Type::Primitive(_)) {
                return Err(not_supported(format!(
                    "equality delete key '{}' (id {}) is not a primitive column",
                    f.name, f.id
                )));
            }
            // Keys are compared as values whatever the file says about nullability.
            fields.push(NestedField::optional(f.id, f.name.clone(), f.field_type.clone()));
        }
        let sort_fields = fields
            .iter()
            .map(|f| Ok(SortField::new(type_to_arrow(&f.field_type)?)))
            .collect::<Result<Vec<_>>>()?;
        // The record counts come from manifests: a hint only, capped so a wrong count cannot
        // allocate without bound (the set still grows past it when the files hold more).
        let capacity = expected_keys.min(MAX_PRESIZED_KEYS);
        let one_long = match fields.as_slice() {
            [only] => type_to_arrow(&only.field_type)? == DataType::Int64,
            _ => false,
        };
        let keys = if one_long {
            let mut values = HashMap::default();
            values.reserve(capacity);
            Keys::Long { values, null_seq: None }
        } else {
            let converter = RowConverter::new(sort_fields)
                .map_err(|e| not_supported("cannot hash these equality delete key types").with_source(e))?;
            let mut rows = HashMap::default();
            rows.reserve(capacity);
            Keys::Rows { converter, rows }
        };
        let mut set = EqualityDeleteSet { fields, keys, len: 0, key_bytes: 0, budget: memory_budget() };
        set.extend(files)?;
        Ok(set)
    }

    /// Adds the keys of more delete files (with their data sequence numbers).
    pub fn extend(&mut self, files: &[(&str, i64)]) -> Result<()> {
        let schema = Schema::new(0, self.fields.clone(), vec![])?;
        for (path, seq) in files {
            let wrap = |e: Error| e.with_file_role("equality delete file", path);
            for batch in read_parquet(path, &schema, 65536).map_err(wrap)? {
                let batch = batch.map_err(wrap)?;
                self.insert(batch.columns(), *seq).map_err(wrap)?;
            }
        }
        Ok(())
    }

    /// The key fields (read these from the data file, with these types).
    pub fn fields(&self) -> &[NestedField] {
        &self.fields
    }

    /// The set's memory: hash table slots and row-encoded key bytes.
    pub fn memory_bytes(&self) -> usize {
        match &self.keys {
            Keys::Long { values, .. } => values.capacity().saturating_mul(slot_bytes(16)),
            Keys::Rows { rows, .. } => {
                rows.capacity().saturating_mul(slot_bytes(24)).saturating_add(self.key_bytes)
            }
        }
    }

    /// The set's memory once `more_keys` more distinct keys of `more_key_bytes` bytes are
    /// in: the hash table grows by doubling (hashbrown: a power of two of buckets, 7/8 full).
    fn projected_bytes(&self, more_keys: usize, more_key_bytes: usize) -> usize {
        let (capacity, slot, key_bytes) = match &self.keys {
            Keys::Long { values, .. } => (values.capacity(), slot_bytes(16), 0),
            Keys::Rows { rows, .. } => (rows.capacity(), slot_bytes(24), self.key_bytes),
        };
        let needed = self.len.saturating_add(more_keys);
        let capacity = if needed <= capacity {
            capacity
        } else {
            let buckets =
                (needed.saturating_mul(8) / 7).max(8).checked_next_power_of_two().unwrap_or(usize::MAX);
            buckets / 8 * 7
        };
        capacity.saturating_mul(slot).saturating_add(key_bytes).saturating_add(more_key_bytes)
    }

    /// Refuses a batch of up to `rows` new keys (`bytes` of row encodings) whose insertion
    /// could grow the set past its budget, before the table grows.
    fn check_budget(&self, rows: usize, bytes: usize) -> Result<()> {
        let projected = self.projected_bytes(rows, bytes);
        if projected <= self.budget {
            return Ok(());
        }
        let names: Vec<&str> = self.fields.iter().map(|f| f.name.as_str()).collect();
        Err(resource_limit(format!(
            "equality deletes on ({}) need more memory than the budget: {} distinct keys so far, and the \
             next {rows} would grow the set to {} MB, past the budget of {} MB ({MEMORY_BUDGET_ENV}); raise it \
             where executors have the memory, then run convert_equality_deletes() so reads no longer hash \
             these keys",
            names.join(", "),
            self.len,
            projected >> 20,
            self.budget >> 20
        )))
    }

    /// Number of distinct keys (the cache's weight).
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn insert(&mut self, cols: &[ArrayRef], seq: i64) -> Result<()> {
        let encoded = match &self.keys {
            Keys::Rows { converter, .. } => Some(
                converter
                    .convert_columns(cols)
                    .map_err(|e| invalid_data("cannot encode equality delete keys").with_source(e))?,
            ),
            Keys::Long { .. } => None,
        };
        let (incoming, incoming_bytes) = match &encoded {
            Some(r) => (r.num_rows(), r.iter().map(|row| key_allocation(row.as_ref().len())).sum()),
            None => (first_key_column(cols)?.len(), 0),
        };
        self.check_budget(incoming, incoming_bytes)?;
        match (&mut self.keys, encoded) {
            (Keys::Long { values, null_seq }, _) => {
                let a = first_key_column(cols)?.as_primitive::<Int64Type>();
                for v in a.iter() {
                    match v {
                        Some(v) => raise(values.entry(v).or_insert(seq), seq),
                        None => raise(null_seq.get_or_insert(seq), seq),
                    }
                }
                self.len = values.len() + usize::from(null_seq.is_some());
            }
            (Keys::Rows { rows, .. }, Some(r)) => {
                for row in r.iter() {
                    match rows.get_mut(row.as_ref()) {
                        Some(s) => raise(s, seq),
                        None => {
                            self.key_bytes =
                                self.key_bytes.saturating_add(key_allocation(row.as_ref().len()));
                            rows.insert(row.as_ref().into(), seq);
                        }
                    }
                }
                self.len = rows.len();
            }
            (Keys::Rows { .. }, None) => {
                return Err(crate::error::Error::new(
                    crate::error::ErrorKind::Internal,
                    "equality delete keys were not encoded",
                ))
            }
        }
        Ok(())
    }

    /// Which data rows survive every loaded key (as if each delete applied).
    pub fn keep_mask(&self, cols: &[ArrayRef]) -> Result<BooleanArray> {
        self.keep_mask_for(cols, i64::MIN)
    }

    /// Which rows of a data file with data sequence number `data_seq` survive: a row is
    /// deleted when a delete file with a higher sequence number holds its key.
    pub fn keep_mask_for(&self, cols: &[ArrayRef], data_seq: i64) -> Result<BooleanArray> {
        match &self.keys {
            Keys::Long { values, null_seq } => {
                let a = first_key_column(cols)?.as_primitive::<Int64Type>();
                let alive = |s: Option<&i64>| s.is_none_or(|s| *s <= data_seq);
                if a.null_count() == 0 {
                    Ok(a.values().iter().map(|v| Some(alive(values.get(v)))).collect())
                } else {
                    Ok(a.iter()
                        .map(|v| {
                            Some(match v {
                                Some(v) => alive(values.get(&v)),
                                None => alive(null_seq.as_ref()),
                            })
                        })
                        .collect())
                }
            }
            Keys::Rows { converter, rows } => {
                let r = converter.convert_columns(cols).map_err(|e| {
                    invalid_data("cannot encode data keys for equality deletes").with_source(e)
                })?;
                Ok(r.iter().map(|row| Some(rows.get(row.as_ref()).is_none_or(|s| *s <= data_seq))).collect())
            }
        }
    }
}

/// One key map shared by every data file of a partition scope, grown as tasks name delete
/// files it has not loaded yet (see the module docs for why that is exact).
pub struct SharedEqualityDeletes {
    state: RwLock<(EqualityDeleteSet, HashSet<String>)>,
}

impl std::fmt::Debug for SharedEqualityDeletes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedEqualityDeletes").field("keys", &self.len()).finish()
    }
}

impl SharedEqualityDeletes {
    pub fn new(set: EqualityDeleteSet, files: &[(&str, i64)]) -> Self {
        let loaded = files.iter().map(|f| f.0.to_string()).collect();
        SharedEqualityDeletes { state: RwLock::new((set, loaded)) }
    }

    /// Loads the files of `files` not loaded yet.
    pub fn ensure(&self, files: &[(&str, i64)]) -> Result<()> {
        {
            let g = self.state.read().unwrap_or_else(|p| p.into_inner());
            if files.iter().all(|f| g.1.contains(f.0)) {
                return Ok(());
            }
        }
        let mut g = self.state.write().unwrap_or_else(|p| p.into_inner());
        let missing: Vec<(&str, i64)> = files.iter().copied().filter(|f| !g.1.contains(f.0)).collect();
        g.0.extend(&missing)?;
        for (p, _) in missing {
            g.1.insert(p.to_string());
        }
        Ok(())
    }

    pub fn fields(&self) -> Vec<NestedField> {
        self.state.read().unwrap_or_else(|p| p.into_inner()).0.fields().to_vec()
    }

    pub fn len(&self) -> usize {
        self.state.read().unwrap_or_else(|p| p.into_inner()).0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// See [`EqualityDeleteSet::keep_mask_for`].
    pub fn keep_mask_for(&self, cols: &[ArrayRef], data_seq: i64) -> Result<BooleanArray> {
        self.state.read().unwrap_or_else(|p| p.into_inner()).0.keep_mask_for(cols, data_seq)
    }
}

/// Shared handle.
pub type EqualityDeleteSetRef = Arc<SharedEqualityDeletes>;

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int64Array, RecordBatch, StringArray};
    use parquet::arrow::ArrowWriter;

    use super::*;
    use crate::arrow::schema::schema_to_arrow;
    use crate::error::ErrorKind;

    /// A delete file of `n` distinct keys: `id` (field 1) 0..n and `name` (field 2) "k<i>".
    fn delete_file(dir: &std::path::Path, n: i64) -> String {
        let schema = Schema::new(
            0,
            vec![
                NestedField::optional(1, "id", PrimitiveType::Long.into()),
                NestedField::optional(2, "name", PrimitiveType::String.into()),
            ],
            vec![],
        )
        .unwrap();
        let arrow = Arc::new(schema_to_arrow(&schema).unwrap());
        let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(0..n));
        let names: ArrayRef = Arc::new(StringArray::from_iter_values((0..n).map(|i| format!("k{i}"))));
        let path = dir.join("eq.parquet");
        let mut w = ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), arrow.clone(), None).unwrap();
        w.write(&RecordBatch::try_new(arrow, vec![ids, names]).unwrap()).unwrap();
        w.close().unwrap();
        path.to_str().unwrap().to_string()
    }

    #[test]
    fn a_set_past_its_memory_budget_fails_naming_the_file_and_the_setting() {
        let dir = tempfile::tempdir().unwrap();
        let path = delete_file(dir.path(), 200_000);
        for ids in [&[1][..], &[1, 2][..]] {
            let set = EqualityDeleteSet::load(ids, &[&path], &|_| None).unwrap();
            assert_eq!(set.len(), 200_000);
            let used = set.memory_bytes();
            // Long keys: at least 16 bytes per key; composite keys add their row bytes.
            assert!(used >= 200_000 * 16, "{used}");

            // The same file against a budget below what the set needs.
            let fields: Vec<NestedField> = set.fields().to_vec();
            let known = |id: i32| fields.iter().find(|f| f.id == id).cloned();
            let mut empty = EqualityDeleteSet::load_with_seqs(ids, &[], &known, 0).unwrap();
            empty.budget = used / 2;
            let small = empty.extend(&[(&path, 1)]).unwrap_err();
            // Refused before the table grew past the budget.
            assert!(empty.memory_bytes() <= empty.budget, "{} > {}", empty.memory_bytes(), empty.budget);
            assert_eq!(small.kind(), ErrorKind::ResourceLimit, "{small}");
            let msg = small.to_string();
            assert!(msg.contains(MEMORY_BUDGET_ENV), "{msg}");
            assert!(msg.contains(&path), "{msg}");
            assert!(msg.contains("convert_equality_deletes()"), "{msg}");
        }
    }
}
