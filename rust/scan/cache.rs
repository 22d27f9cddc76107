//! A cache of decoded manifests, keyed by manifest path and length.
//!
//! Manifests are immutable once written (a rewrite produces a new path), so a decoded manifest
//! can be reused by any later scan that lists the same path with the same length. The cache is
//! bounded by the number of entries it holds; a manifest that does not fit is not cached.
//! Each cached manifest remembers which column stats it was decoded with
//! ([`StatsProjection`]): it serves a later scan only when it holds every stat that scan
//! needs, else the scan decodes the union and replaces it.
//! It remembers the process id that filled it and empties itself after a fork (PySpark forks
//! its Python workers).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::manifest::{Manifest, StatsProjection};

/// Default bound: about 250k manifest entries (~0.5 GB of decoded entries with full metrics).
pub const DEFAULT_MAX_ENTRIES: usize = 250_000;

#[derive(Debug, Default)]
struct Inner {
    pid: u32,
    map: HashMap<(String, i64), (Arc<Manifest>, StatsProjection)>,
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

    /// The cached manifest if it holds the stats `needed` asks for (a hit); else `Err` with
    /// the projection of a cached decode that falls short (to decode the union), if any.
    pub fn get(
        &self,
        path: &str,
        length: i64,
        needed: &StatsProjection,
    ) -> std::result::Result<Arc<Manifest>, Option<StatsProjection>> {
        let mut g = self.lock();
        let found = g.map.get(&(path.to_string(), length)).cloned();
        match found {
            Some((m, stats)) if stats.covers(needed) => {
                g.hits += 1;
                Ok(m)
            }
            other => {
                g.misses += 1;
                Err(other.map(|(_, stats)| stats))
            }
        }
    }

    /// Caches `manifest` (decoded with `stats`) unless it alone exceeds the bound; replaces a
    /// cached decode of the same file that it covers; evicts the oldest to make room.
    pub fn insert(&self, path: &str, length: i64, manifest: Arc<Manifest>, stats: StatsProjection) {
        let n = manifest.entries.len();
        if n > self.max_entries {
            return;
        }
        let mut g = self.lock();
        let key = (path.to_string(), length);
        if let Some((old, old_stats)) = g.map.get(&key) {
            if !stats.covers(old_stats) {
                return;
            }
            let old_n = old.entries.len();
            g.entries -= old_n;
            g.map.remove(&key);
            g.order.retain(|k| k != &key);
        }
        while g.entries + n > self.max_entries {
            let Some(old) = g.order.pop_front() else { break };
            if let Some((m, _)) = g.map.remove(&old) {
                g.entries -= m.entries.len();
            }
        }
        g.entries += n;
        g.order.push_back(key.clone());
        g.map.insert(key, (manifest, stats));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::{ManifestContent, ManifestMetadata};
    use crate::spec::StructType;

    fn manifest() -> Arc<Manifest> {
        Arc::new(Manifest {
            metadata: ManifestMetadata {
                schema_json: None,
                partition_spec_json: None,
                partition_spec_id: 0,
                format_version: 2,
                content: ManifestContent::Data,
                partition_type: StructType::new(vec![]),
            },
            entries: vec![],
        })
    }

    #[test]
    fn a_cached_decode_serves_only_scans_it_covers() {
        let c = ManifestCache::new(10);
        let only1 = StatsProjection::only([1]);
        assert_eq!(c.get("m", 5, &only1).err(), Some(None));
        c.insert("m", 5, manifest(), only1.clone());
        assert!(c.get("m", 5, &StatsProjection::only([])).is_ok());
        assert!(c.get("m", 5, &only1).is_ok());
        assert!(c.get("m", 6, &only1).is_err(), "another length is another file");
        // Needs more: told what is cached, so the caller decodes the union.
        assert_eq!(c.get("m", 5, &StatsProjection::only([2])).err(), Some(Some(only1.clone())));
        // A narrower decode does not replace a wider one; a wider one does.
        c.insert("m", 5, manifest(), StatsProjection::only([]));
        assert!(c.get("m", 5, &only1).is_ok());
        c.insert("m", 5, manifest(), StatsProjection::All);
        assert!(c.get("m", 5, &StatsProjection::All).is_ok());
        assert_eq!(c.stats().0, 1);
    }
}
