//! An index of `u32` values (slab indices, sequence numbers) by a 64-bit digest of the key
//! they stand for, compared in full by the caller's `eq`: a hash table with the
//! `hash-tables` feature, a vector scanned in order without it (a node's tables hold a
//! handful of entries, and the hash table's code costs kilobytes of flash there).

#[cfg(any(test, not(feature = "hash-tables")))]
use alloc::vec::Vec;

/// The index the engine's tables use.
#[cfg(feature = "hash-tables")]
pub(crate) type DigestTable = HashedDigests;
/// The index the engine's tables use.
#[cfg(not(feature = "hash-tables"))]
pub(crate) type DigestTable = LinearDigests;

/// Values in a hash table by digest; several may share one.
#[cfg(feature = "hash-tables")]
#[derive(Debug, Default)]
pub(crate) struct HashedDigests(hashbrown::HashTable<u32>);

#[cfg(feature = "hash-tables")]
impl HashedDigests {
    /// An empty index.
    pub fn new() -> HashedDigests {
        HashedDigests::default()
    }

    /// The value with digest `digest` that `eq` accepts.
    pub fn find(&self, digest: u64, eq: impl FnMut(&u32) -> bool) -> Option<&u32> {
        self.0.find(digest, eq)
    }

    /// The value with digest `digest` that `eq` accepts, to change in place.
    pub fn find_mut(&mut self, digest: u64, eq: impl FnMut(&u32) -> bool) -> Option<&mut u32> {
        self.0.find_mut(digest, eq)
    }

    /// Removes the value with digest `digest` that `eq` accepts; returns it.
    pub fn remove(&mut self, digest: u64, eq: impl FnMut(&u32) -> bool) -> Option<u32> {
        self.0.find_entry(digest, eq).ok().map(|e| e.remove().0)
    }

    /// Adds `value` under `digest` without looking for an equal one; `rehash` gives the
    /// digest of a value already held, for the table to grow.
    pub fn insert_unique(&mut self, digest: u64, value: u32, rehash: impl Fn(&u32) -> u64) {
        self.0.insert_unique(digest, value, rehash);
    }

    /// Values held.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.0.len()
    }
}

/// Values in a vector with their digests, scanned in order; several may share one.
#[cfg(any(test, not(feature = "hash-tables")))]
#[derive(Debug, Default)]
pub(crate) struct LinearDigests(Vec<(u64, u32)>);

#[cfg(any(test, not(feature = "hash-tables")))]
impl LinearDigests {
    /// An empty index.
    pub fn new() -> LinearDigests {
        LinearDigests::default()
    }

    fn position(&self, digest: u64, mut eq: impl FnMut(&u32) -> bool) -> Option<usize> {
        self.scan(digest, &mut eq)
    }

    /// The first entry with digest `digest` that `eq` accepts: the scan is compiled once,
    /// not in each caller's instance (each `eq` stays its own function).
    #[cfg_attr(target_os = "none", inline(never))]
    fn scan(&self, digest: u64, eq: &mut dyn FnMut(&u32) -> bool) -> Option<usize> {
        self.0.iter().position(|(d, v)| *d == digest && eq(v))
    }

    /// The value with digest `digest` that `eq` accepts.
    pub fn find(&self, digest: u64, eq: impl FnMut(&u32) -> bool) -> Option<&u32> {
        self.position(digest, eq).map(|i| &self.0[i].1)
    }

    /// The value with digest `digest` that `eq` accepts, to change in place.
    pub fn find_mut(&mut self, digest: u64, eq: impl FnMut(&u32) -> bool) -> Option<&mut u32> {
        self.position(digest, eq).map(|i| &mut self.0[i].1)
    }

    /// Removes the value with digest `digest` that `eq` accepts; returns it.
    pub fn remove(&mut self, digest: u64, eq: impl FnMut(&u32) -> bool) -> Option<u32> {
        self.position(digest, eq).map(|i| self.0.swap_remove(i).1)
    }

    /// Adds `value` under `digest` without looking for an equal one (`rehash` is for the
    /// hash table, which grows).
    pub fn insert_unique(&mut self, digest: u64, value: u32, rehash: impl Fn(&u32) -> u64) {
        let _ = rehash;
        self.0.push((digest, value));
    }

    /// Values held.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.0.len()
    }
}

#[cfg(test)]
mod linear_tests {
    use super::*;

    #[test]
    fn the_scan_passes_over_other_digests_and_values_eq_refuses() {
        let mut t = LinearDigests::new();
        for (digest, value) in [(1, 10), (2, 20), (1, 11), (1, 12)] {
            t.insert_unique(digest, value, |_| 0);
        }
        let mut asked = Vec::new();
        let found = t.scan(1, &mut |&v| {
            asked.push(v);
            v == 11
        });
        assert_eq!(found, Some(2));
        assert_eq!(
            asked,
            [10, 11],
            "eq sees only entries with the digest, in order"
        );
        assert_eq!(t.scan(2, &mut |&v| v == 11), None);
        assert_eq!(t.scan(3, &mut |_| true), None);
    }
}

#[cfg(all(test, feature = "hash-tables"))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u32),
        Remove(u32),
        Replace(u32, u32),
    }

    /// A value's digest: a few collide on purpose, so `eq` has to tell them apart.
    fn digest(value: &u32) -> u64 {
        u64::from(*value % 5)
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u32..20).prop_map(Op::Insert),
            (0u32..20).prop_map(Op::Remove),
            (0u32..20, 0u32..20).prop_map(|(a, b)| Op::Replace(a, b)),
        ]
    }

    proptest! {
        /// The vector answers every operation as the hash table does.
        #[test]
        fn the_linear_index_answers_as_the_hash_table(ops in proptest::collection::vec(op(), 0..200)) {
            let (mut hashed, mut linear) = (HashedDigests::new(), LinearDigests::new());
            for op in ops {
                match op {
                    Op::Insert(v) => {
                        hashed.insert_unique(digest(&v), v, digest);
                        linear.insert_unique(digest(&v), v, digest);
                    }
                    Op::Remove(v) => prop_assert_eq!(
                        hashed.remove(digest(&v), |&x| x == v),
                        linear.remove(digest(&v), |&x| x == v)
                    ),
                    // Replacing keeps the digest's class, as the engine's re-pointing does.
                    Op::Replace(v, w) => {
                        let w = w - w % 5 + v % 5;
                        let (a, b) = (hashed.find_mut(digest(&v), |&x| x == v), linear.find_mut(digest(&v), |&x| x == v));
                        prop_assert_eq!(a.is_some(), b.is_some());
                        if let (Some(a), Some(b)) = (a, b) {
                            (*a, *b) = (w, w);
                        }
                    }
                }
                prop_assert_eq!(hashed.len(), linear.len());
                for v in 0u32..25 {
                    prop_assert_eq!(
                        hashed.find(digest(&v), |&x| x == v).is_some(),
                        linear.find(digest(&v), |&x| x == v).is_some()
                    );
                }
            }
        }
    }
}
