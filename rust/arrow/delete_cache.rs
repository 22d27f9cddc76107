//! Process-global cache of loaded delete files, so the tasks of one executor process that
//! share delete files (a partition's position deletes, a table's equality deletes) read
//! and hash them once. PID-checked: PySpark forks its Python workers, and a child must not
//! trust a parent's half-built state. Bounded by entry weight (positions + keys); the
//! oldest entries go first when over budget.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};

use super::equality_deletes::EqualityDeleteSet;
use super::position_deletes::{load_position_deletes, PositionDeleteIndex};
use crate::error::Result;

/// Default budget: 64M positions/keys (roughly 1-2 GB at worst).
const DEFAULT_BUDGET: usize = 64 << 20;

#[derive(Clone)]
enum Entry {
    Pos(Arc<PositionDeleteIndex>),
    Eq(Arc<EqualityDeleteSet>),
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
        Cache { pid: std::process::id(), map: HashMap::new(), order: VecDeque::new(), weight: 0, budget }
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

/// The position-delete file at `path`, loaded once per process.
pub fn position_deletes(path: &str) -> Result<Arc<PositionDeleteIndex>> {
    let key = format!("pos\u{0}{path}");
    if let Some(Entry::Pos(p)) = get(&key) {
        return Ok(p);
    }
    // Loaded outside the lock: two tasks may load the same file at once; both results are equal.
    let idx = Arc::new(load_position_deletes(path)?);
    cache().insert(key, Entry::Pos(idx.clone()));
    Ok(idx)
}

/// The equality delete set under `key` (built from the key ids, types and file paths), or
/// the result of `load`, cached.
pub fn equality_deletes(
    key: &str,
    load: impl FnOnce() -> Result<EqualityDeleteSet>,
) -> Result<Arc<EqualityDeleteSet>> {
    let key = format!("eq\u{0}{key}");
    if let Some(Entry::Eq(e)) = get(&key) {
        return Ok(e);
    }
    let set = Arc::new(load()?);
    cache().insert(key, Entry::Eq(set.clone()));
    Ok(set)
}

/// Drops every cached delete file (tests; memory pressure).
pub fn clear() {
    let mut g = cache();
    g.map.clear();
    g.order.clear();
    g.weight = 0;
}
