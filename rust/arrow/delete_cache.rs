//! Process-global cache of loaded delete files, so the tasks of one executor process that
//! share delete files (a partition's position deletes, a table's equality deletes) read
//! and hash them once. PID-checked: PySpark forks its Python workers, and a child must not
//! trust a parent's half-built state. Bounded by entry weight (positions + keys); the
//! oldest entries go first when over budget. Loads are single-flight: when several tasks of
//! one process miss the same key at once, one loads it and the others wait for its result
//! instead of each building a copy (a 5M-key equality set built by 4 reader threads at once
//! otherwise costs 4x the time and memory).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};

use super::equality_deletes::SharedEqualityDeletes;
use super::position_deletes::{load_position_deletes, PositionDeleteIndex};
use crate::error::Result;
use crate::manifest::DataFile;

/// Default budget: 64M positions/keys (roughly 1-2 GB at worst).
const DEFAULT_BUDGET: usize = 64 << 20;

#[derive(Clone)]
enum Entry {
    Pos(Arc<PositionDeleteIndex>),
    Eq(Arc<SharedEqualityDeletes>),
}

impl Entry {
    fn weight(&self) -> usize {
        match self {
            Entry::Pos(p) => p.len().max(1),
            Entry::Eq(e) => e.len().max(1),
        }
    }
}

struct Cache {
    pid: u32,
    map: HashMap<String, Entry>,
    /// One gate per key being loaded; waiters lock it, then look in `map` again.
    loading: HashMap<String, Arc<Mutex<()>>>,
    order: VecDeque<String>,
    weight: usize,
    budget: usize,
}

impl Cache {
    fn new() -> Self {
        let budget = std::env::var("ICEFLOE_DELETE_CACHE_ENTRIES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(DEFAULT_BUDGET);
        Cache {
            pid: std::process::id(),
            map: HashMap::new(),
            loading: HashMap::new(),
            order: VecDeque::new(),
            weight: 0,
            budget,
        }
    }

    fn insert(&mut self, key: String, e: Entry) {
        let w = e.weight();
        if w > self.budget {
            return;
        }
        while self.weight + w > self.budget {
            let Some(old) = self.order.pop_front() else { break };
            if let Some(o) = self.map.remove(&old) {
                self.weight -= o.weight();
            }
        }
        if let Some(o) = self.map.insert(key.clone(), e) {
            self.weight -= o.weight();
            self.order.retain(|k| k != &key);
        }
        self.order.push_back(key);
        self.weight += w;
    }
}

fn cache() -> std::sync::MutexGuard<'static, Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    let m = CACHE.get_or_init(|| Mutex::new(Cache::new()));
    // A panic while holding the lock cannot leave the map inconsistent in a way that
    // matters (entries are immutable Arcs): recover the guard.
    let mut g = m.lock().unwrap_or_else(|p| p.into_inner());
    if g.pid != std::process::id() {
        *g = Cache::new();
    }
    g
}

fn get(key: &str) -> Option<Entry> {
    cache().map.get(key).cloned()
}

/// The entry under `key`, from the cache or from `load` (at most one load per key at a time
/// in this process; a failed load is not cached, and the next waiter tries itself).
fn get_or_load(key: String, load: impl FnOnce() -> Result<Entry>) -> Result<Entry> {
    let gate = {
        let mut g = cache();
        if let Some(e) = g.map.get(&key) {
            return Ok(e.clone());
        }
        g.loading.entry(key.clone()).or_default().clone()
    };
    let _held = gate.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(e) = get(&key) {
        return Ok(e);
    }
    let loaded = load();
    let mut g = cache();
    if g.loading.get(&key).is_some_and(|current| Arc::ptr_eq(current, &gate)) {
        g.loading.remove(&key);
    }
    let e = loaded?;
    g.insert(key, e.clone());
    Ok(e)
}

/// The position-delete file at `path`, loaded once per process.
pub fn position_deletes(path: &str) -> Result<Arc<PositionDeleteIndex>> {
    let key = format!("pos\u{0}{path}");
    match get_or_load(key, || Ok(Entry::Pos(Arc::new(load_position_deletes(path)?))))? {
        Entry::Pos(p) => Ok(p),
        Entry::Eq(_) => Err(crate::error::invalid_data("delete cache: a position key holds an equality set")),
    }
}

/// The positions a deletion vector deletes from its data file, cached by the blob's place
/// (a Puffin file may hold the DVs of many data files).
pub fn deletion_vector(dv: &DataFile) -> Result<Arc<PositionDeleteIndex>> {
    let path = dv.file_path.as_str();
    let (Some(offset), Some(length), Some(data_file)) =
        (dv.content_offset, dv.content_size_in_bytes, dv.referenced_data_file.as_ref())
    else {
        return Err(crate::error::invalid_data(
            "a deletion vector needs content_offset, content_size_in_bytes and referenced_data_file",
        )
        .with_context("delete file", path));
    };
    let key = format!("dv\u{0}{path}\u{0}{offset}\u{0}{length}");
    let load = || {
        let bad = |what: &str, v: i64| {
            crate::error::invalid_data(format!("deletion vector {what} must be >= 0, found {v}"))
                .with_context("delete file", path)
        };
        let offset = u64::try_from(offset).map_err(|_| bad("content_offset", offset))?;
        let length = u64::try_from(length).map_err(|_| bad("content_size_in_bytes", length))?;
        let size = u64::try_from(dv.file_size_in_bytes).ok();
        let vector = crate::puffin::load_deletion_vector(path, offset, length, size)?;
        // A DV's record_count is its cardinality: a vector with fewer positions lost deletes.
        let expected = u64::try_from(dv.record_count).map_err(|_| bad("record_count", dv.record_count))?;
        vector.check_cardinality(expected, path)?;
        let positions = vector.to_sorted_positions(path)?;
        Ok(Entry::Pos(Arc::new(PositionDeleteIndex::single(data_file.clone(), positions))))
    };
    match get_or_load(key, load)? {
        Entry::Pos(p) => Ok(p),
        Entry::Eq(_) => Err(crate::error::invalid_data("delete cache: a DV key holds an equality set")),
    }
}

/// The equality delete set under `key` (built from the key ids, types and file paths), or
/// the result of `load`, cached.
pub fn equality_deletes(
    key: &str,
    load: impl FnOnce() -> Result<SharedEqualityDeletes>,
) -> Result<Arc<SharedEqualityDeletes>> {
    let key = format!("eq\u{0}{key}");
    match get_or_load(key, || Ok(Entry::Eq(Arc::new(load()?))))? {
        Entry::Eq(e) => Ok(e),
        Entry::Pos(_) => {
            Err(crate::error::invalid_data("delete cache: an equality key holds a position index"))
        }
    }
}

/// Drops every cached delete file (tests; memory pressure).
pub fn clear() {
    let mut g = cache();
    g.map.clear();
    g.loading.clear();
    g.order.clear();
    g.weight = 0;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use crate::arrow::equality_deletes::EqualityDeleteSet;
    use crate::spec::{NestedField, PrimitiveType};

    fn empty_set() -> Result<SharedEqualityDeletes> {
        let id = NestedField::optional(1, "id", PrimitiveType::Long.into());
        Ok(SharedEqualityDeletes::new(EqualityDeleteSet::load(&[1], &[], &|_| Some(id.clone()))?, &[]))
    }

    #[test]
    fn concurrent_misses_load_once() {
        let loads = AtomicUsize::new(0);
        let key = format!("single-flight-{}", std::process::id());
        let sets: Vec<Arc<SharedEqualityDeletes>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        equality_deletes(&key, || {
                            loads.fetch_add(1, Ordering::SeqCst);
                            std::thread::sleep(Duration::from_millis(100));
                            empty_set()
                        })
                    })
                })
                .collect();
            handles.into_iter().filter_map(|h| h.join().ok()).collect::<Result<Vec<_>>>()
        })
        .unwrap_or_default();
        assert_eq!(sets.len(), 4);
        assert_eq!(loads.load(Ordering::SeqCst), 1, "the same key was loaded more than once");
        assert!(sets.windows(2).all(|w| Arc::ptr_eq(&w[0], &w[1])));
    }

    #[test]
    fn a_failed_load_is_not_cached() {
        let key = format!("fails-once-{}", std::process::id());
        let first = equality_deletes(&key, || Err(crate::error::invalid_data("boom")));
        assert!(first.is_err());
        let second = equality_deletes(&key, empty_set);
        assert!(second.is_ok());
    }
}
