//! A cache of decoded manifests, keyed by manifest path and length.
//!
//! Manifests are immutable once written (a rewrite produces a new path), so a decoded manifest
//! can be reused by any later scan that lists the same path with the same length. The cache is
//! bounded by the number of entries it holds; a manifest that does not fit is not cached.
//! It remembers the process id that filled it and empties itself after a fork (PySpark forks
//! its Python workers).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::manifest::Manifest;

/// Default bound: about 250k manifest entries (~0.5 GB of decoded entries with full metrics).
pub const DEFAULT_MAX_ENTRIES: usize = 250_000;

#[derive(Debug, Default)]
struct Inner {
    pid: u32,
    map: HashMap<(String, i64), Arc<Manifest>>,
    /// Insertion order, for evicting the oldest when full.
    order: std::collections::VecDeque<(String, i64)>,
    entries: usize,
    hits: u64,
    misses: u64,
}

/// Decoded manifests shared across scans (of one table object, typically).
#[derive(Debug)]
pub struct ManifestCache {
    max_entries: usize,
    inner: Mutex<Inner>,
}

impl Default for ManifestCache {
    fn default() -> Self {
        ManifestCache::new(DEFAULT_MAX_ENTRIES)
    }
}

impl ManifestCache {
    pub fn new(max_entries: usize) -> Self {
        ManifestCache {
            max_entries,
            inner: Mutex::new(Inner { pid: std::process::id(), ..Inner::default() }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A poisoned lock only means another scan panicked mid-insert; the map is still valid.
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let pid = std::process::id();
        if g.pid != pid {
            *g = Inner { pid, ..Inner::default() };
        }
        g
    }

    pub fn get(&self, path: &str, length: i64) -> Option<Arc<Manifest>> {
        let mut g = self.lock();
        let hit = g.map.get(&(path.to_string(), length)).cloned();
        if hit.is_some() {
            g.hits += 1;
        } else {
            g.misses += 1;
        }
        hit
    }

    /// Caches `manifest` unless it alone exceeds the bound; evicts the oldest to make room.
    pub fn insert(&self, path: &str, length: i64, manifest: Arc<Manifest>) {
        let n = manifest.entries.len();
        if n > self.max_entries {
            return;
        }
        let mut g = self.lock();
        let key = (path.to_string(), length);
        if g.map.contains_key(&key) {
            return;
        }
        while g.entries + n > self.max_entries {
            let Some(old) = g.order.pop_front() else { break };
            if let Some(m) = g.map.remove(&old) {
                g.entries -= m.entries.len();
            }
        }
        g.entries += n;
        g.order.push_back(key.clone());
        g.map.insert(key, manifest);
    }

    /// (manifests cached, entries cached, hits, misses).
    pub fn stats(&self) -> (usize, usize, u64, u64) {
        let g = self.lock();
        (g.map.len(), g.entries, g.hits, g.misses)
    }

    pub fn clear(&self) {
        let mut g = self.lock();
        let pid = g.pid;
        *g = Inner { pid, ..Inner::default() };
    }
}
