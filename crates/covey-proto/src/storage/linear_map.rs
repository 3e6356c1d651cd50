//! The engine's map without hashing, for a build without the `hash-tables` feature (a node's
//! firmware): entries in a vector, found by comparing keys. A node's tables hold a handful
//! of entries each (`Config::mote`), where a scan costs less than hashing and the hash
//! tables' code costs kilobytes of flash. Only the methods the engine calls.

use alloc::vec::Vec;

/// A map kept as a vector of (key, value) pairs, in no particular order.
#[derive(Debug, Clone)]
pub(crate) struct LinearMap<K, V> {
    entries: Vec<(K, V)>,
}

impl<K: PartialEq, V> LinearMap<K, V> {
    /// An empty map; it grows as entries arrive (the tables using it bound them).
    pub fn new() -> LinearMap<K, V> {
        LinearMap {
            entries: Vec::new(),
        }
    }

    fn position(&self, key: &K) -> Option<usize> {
        self.entries.iter().position(|(k, _)| k == key)
    }

    /// The value of `key`.
    pub fn get(&self, key: &K) -> Option<&V> {
        self.position(key).map(|i| &self.entries[i].1)
    }

    /// The value of `key`, to change (by uploads and address credit).
    #[cfg(any(feature = "block1-uploads", feature = "address-validation", test))]
    pub fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        self.position(key).map(|i| &mut self.entries[i].1)
    }

    /// Whether `key` has a value (asked by the tables of the client and of address
    /// validation).
    #[cfg(any(feature = "client", feature = "address-validation", test))]
    pub fn contains_key(&self, key: &K) -> bool {
        self.position(key).is_some()
    }

    /// Sets `key`'s value; returns the one it replaced.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.position(&key) {
            Some(i) => Some(core::mem::replace(&mut self.entries[i].1, value)),
            None => {
                self.entries.push((key, value));
                None
            }
        }
    }

    /// Removes `key`; returns its value.
    pub fn remove(&mut self, key: &K) -> Option<V> {
        self.position(key).map(|i| self.entries.swap_remove(i).1)
    }

    /// Whether the map holds nothing.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every key, in no particular order.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub fn keys(&self) -> impl Iterator<Item = &K> {
        self.entries.iter().map(|(k, _)| k)
    }
}

// What the tables of block-wise transfers and address validation walk.
#[cfg_attr(
    not(any(
        feature = "block1-uploads",
        feature = "block2-cache",
        feature = "address-validation"
    )),
    allow(dead_code)
)]
impl<K, V> LinearMap<K, V> {
    /// Keeps the entries `keep` says yes to.
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        self.entries.retain_mut(|(k, v)| keep(k, v));
    }

    /// Entries held (the client's tables count them too).
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Every entry, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    /// Every value, in no particular order.
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.entries.iter().map(|(_, v)| v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u8, u32),
        Remove(u8),
        GetMut(u8, u32),
        RetainEven,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u8..16, any::<u32>()).prop_map(|(k, v)| Op::Insert(k, v)),
            (0u8..16).prop_map(Op::Remove),
            (0u8..16, any::<u32>()).prop_map(|(k, v)| Op::GetMut(k, v)),
            Just(Op::RetainEven),
        ]
    }

    proptest! {
        /// Any sequence of operations leaves the map as std's HashMap.
        #[test]
        fn behaves_as_a_hash_map(ops in proptest::collection::vec(op(), 0..200)) {
            let (mut map, mut model) = (LinearMap::new(), HashMap::new());
            for op in ops {
                match op {
                    Op::Insert(k, v) => prop_assert_eq!(map.insert(k, v), model.insert(k, v)),
                    Op::Remove(k) => prop_assert_eq!(map.remove(&k), model.remove(&k)),
                    Op::GetMut(k, v) => {
                        if let (Some(a), Some(b)) = (map.get_mut(&k), model.get_mut(&k)) {
                            (*a, *b) = (v, v);
                        }
                    }
                    Op::RetainEven => {
                        map.retain(|_, v| *v % 2 == 0);
                        model.retain(|_, v| *v % 2 == 0);
                    }
                }
                prop_assert_eq!(map.len(), model.len());
                for k in 0u8..16 {
                    prop_assert_eq!(map.get(&k), model.get(&k));
                    prop_assert_eq!(map.contains_key(&k), model.contains_key(&k));
                }
                let mut entries: Vec<_> = map.iter().map(|(k, v)| (*k, *v)).collect();
                entries.sort();
                let mut want: Vec<_> = model.iter().map(|(k, v)| (*k, *v)).collect();
                want.sort();
                prop_assert_eq!(entries, want);
                prop_assert_eq!(map.values().count(), model.len());
                prop_assert_eq!(map.keys().count(), model.len());
                prop_assert_eq!(map.is_empty(), model.is_empty());
            }
        }
    }
}
