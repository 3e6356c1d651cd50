//! Hash maps keyed by the engine's seed, so flooding with chosen keys cannot be planned
//! from outside.

/// The hasher builder every engine table uses.
pub(crate) type SeededState = foldhash::fast::FixedState;

/// A hash map with the engine's hasher, created with its full capacity.
pub(crate) type Map<K, V> = hashbrown::HashMap<K, V, SeededState>;

/// A map that holds `capacity` entries without reallocating: twice the buckets, so
/// tombstones from removals are cleaned by in-place rehashing instead of growth.
pub(crate) fn map_with_capacity<K, V>(capacity: usize, seed: u64) -> Map<K, V> {
    Map::with_capacity_and_hasher(
        capacity.saturating_mul(2).max(4),
        SeededState::with_seed(seed),
    )
}

/// A 64-bit fingerprint of a datagram, to tell a true duplicate from a reused message ID.
pub(crate) fn fingerprint(state: &SeededState, bytes: &[u8]) -> u64 {
    use core::hash::BuildHasher;
    state.hash_one(bytes)
}
