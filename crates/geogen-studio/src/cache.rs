//! A bounded in-memory cache of encoded tiles, so a map panned back and forth, or many viewers of
//! one served world, render each tile once. Keyed by the tile's ETag (the script's hash and the
//! whole request), so an edited script never serves a stale tile. Bounded in bytes; the least
//! recently used tiles leave first; the budget is `--cache-mb` (64 MiB by default, 0 keeps none).

use std::collections::HashMap;

use axum::body::Bytes;

/// Bytes the studio and the tile server keep at most: about a thousand typical 256² tiles.
pub(crate) const DEFAULT_BUDGET: usize = 64 << 20;

pub(crate) struct TileCache {
    budget: usize,
    used: usize,
    clock: u64,
    entries: HashMap<String, Entry>,
}

struct Entry {
    last_used: u64,
    bytes: Bytes,
}

impl TileCache {
    pub(crate) fn new(budget: usize) -> TileCache {
        TileCache { budget, used: 0, clock: 0, entries: HashMap::new() }
    }

    pub(crate) fn get(&mut self, key: &str) -> Option<Bytes> {
        self.clock += 1;
        let clock = self.clock;
        self.entries.get_mut(key).map(|entry| {
            entry.last_used = clock;
            entry.bytes.clone()
        })
    }

    /// Keeps `bytes` under `key`, evicting the least recently used tiles until it fits; a tile
    /// larger than the whole budget is not kept, nor any tile under a budget of 0 (no cache).
    pub(crate) fn insert(&mut self, key: String, bytes: Bytes) {
        if self.budget == 0 || bytes.len() > self.budget {
            return;
        }
        self.clock += 1;
        if let Some(old) = self.entries.remove(&key) {
            self.used -= old.bytes.len();
        }
        while self.used + bytes.len() > self.budget {
            // A linear scan: the budget holds about a thousand tiles, and a miss already costs a
            // render, which is far more.
            let Some(oldest) = self.entries.iter().min_by_key(|(_, e)| e.last_used).map(|(k, _)| k.clone()) else {
                break;
            };
            if let Some(gone) = self.entries.remove(&oldest) {
                self.used -= gone.bytes.len();
            }
        }
        self.used += bytes.len();
        self.entries.insert(key, Entry { last_used: self.clock, bytes });
    }

    #[cfg(test)]
    fn used(&self) -> usize {
        self.used
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tile(len: usize) -> Bytes {
        Bytes::from(vec![7; len])
    }

    #[test]
    fn keeps_within_its_budget_and_evicts_the_least_recently_used() {
        let mut cache = TileCache::new(300);
        cache.insert("a".into(), tile(100));
        cache.insert("b".into(), tile(100));
        cache.insert("c".into(), tile(100));
        assert!(cache.get("a").is_some(), "a is now the most recently used");
        cache.insert("d".into(), tile(100));
        assert!(cache.get("b").is_none(), "b was the least recently used");
        assert!(cache.get("a").is_some() && cache.get("c").is_some() && cache.get("d").is_some());
        assert_eq!(cache.used(), 300);
        cache.insert("e".into(), tile(250));
        assert_eq!(cache.used(), 250);
        assert!(cache.get("e").is_some());
    }

    #[test]
    fn the_budget_holds_whatever_comes_and_zero_keeps_nothing() {
        for budget in [0usize, 1, 1000, 64 << 10] {
            let mut cache = TileCache::new(budget);
            // A fixed pseudo-random walk of keys and sizes, some keys reused.
            let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
            for _ in 0..2000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let key = format!("k{}", x % 300);
                cache.insert(key.clone(), tile((x >> 20) as usize % 5000));
                assert!(cache.used() <= budget, "{} > {budget}", cache.used());
                let counted: usize = cache.entries.values().map(|e| e.bytes.len()).sum();
                assert_eq!(counted, cache.used());
                if budget == 0 {
                    assert!(cache.get(&key).is_none());
                }
            }
        }
    }

    #[test]
    fn a_tile_larger_than_the_budget_is_not_kept_and_a_key_is_replaced_not_doubled() {
        let mut cache = TileCache::new(100);
        cache.insert("huge".into(), tile(101));
        assert!(cache.get("huge").is_none());
        assert_eq!(cache.used(), 0);
        cache.insert("a".into(), tile(60));
        cache.insert("a".into(), tile(40));
        assert_eq!(cache.used(), 40);
        assert_eq!(cache.get("a").unwrap().len(), 40);
    }
}
