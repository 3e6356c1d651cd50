//! Hash maps keyed by the engine's seed, so flooding with chosen keys cannot be planned
//! from outside.

use core::hash::{Hash, Hasher};
use core::net::SocketAddr;

/// The hasher builder every engine table uses: foldhash, where the target has atomics (its
/// crate needs them even for fixed seeds).
#[cfg(all(target_has_atomic = "ptr", feature = "hash-tables"))]
pub(crate) type SeededState = foldhash::fast::FixedState;

/// The hasher builder every engine table uses: SipHash-1-3 keyed by the seed on targets
/// without atomics (MSP430), slower than foldhash but as hard to flood; and on a node whose
/// tables are scanned (no `hash-tables`), where only digests and fingerprints are hashed and
/// SipHash, which the Echo MACs need anyway, saves foldhash's code.
#[cfg(not(all(target_has_atomic = "ptr", feature = "hash-tables")))]
pub(crate) type SeededState = sip_state::SipState;

#[cfg(not(all(target_has_atomic = "ptr", feature = "hash-tables")))]
mod sip_state {
    use crate::sip::SipHasher13;

    /// SipHash-1-3 keys drawn from a seed.
    #[derive(Debug, Clone, Copy)]
    pub(crate) struct SipState {
        k0: u64,
        k1: u64,
    }

    impl SipState {
        /// Keys from `seed`, as foldhash's `FixedState::with_seed`.
        pub(crate) fn with_seed(seed: u64) -> SipState {
            SipState {
                k0: seed,
                k1: seed.rotate_left(32) ^ 0x9e37_79b9_7f4a_7c15,
            }
        }
    }

    impl core::hash::BuildHasher for SipState {
        type Hasher = SipHasher13;

        fn build_hasher(&self) -> SipHasher13 {
            SipHasher13::new_with_keys(self.k0, self.k1)
        }
    }
}

/// A hash map with the engine's hasher.
#[cfg(feature = "hash-tables")]
pub(crate) type Map<K, V> = hashbrown::HashMap<K, V, SeededState>;

/// Without the `hash-tables` feature (a node's few entries), a vector scanned in order.
#[cfg(not(feature = "hash-tables"))]
pub(crate) type Map<K, V> = crate::storage::linear_map::LinearMap<K, V>;

/// An empty map that grows as entries arrive; the tables using it bound their entries, and
/// once grown to hold them, removals leave tombstones that in-place rehashing cleans, so
/// steady state does not reallocate.
#[cfg(feature = "hash-tables")]
pub(crate) fn seeded_map<K, V>(seed: u64) -> Map<K, V> {
    Map::with_hasher(SeededState::with_seed(seed))
}

/// An empty map (a vector needs no seed).
#[cfg(not(feature = "hash-tables"))]
pub(crate) fn seeded_map<K: PartialEq, V>(_seed: u64) -> Map<K, V> {
    Map::new()
}

/// A seeded 64-bit digest of a key. Large tables key their maps by it (16-byte entries
/// instead of 40-byte addresses) and check the full key where the value leads.
pub(crate) fn digest<K: Hash>(state: &SeededState, key: &K) -> u64 {
    use core::hash::BuildHasher;
    state.hash_one(key)
}

/// A 64-bit fingerprint of a datagram, to tell a true duplicate from a reused message ID.
pub(crate) fn fingerprint(state: &SeededState, bytes: &[u8]) -> u64 {
    use core::hash::BuildHasher;
    state.hash_one(bytes)
}

/// A (peer address, message ID) map key that hashes in two word writes instead of the half
/// dozen small ones `SocketAddr`'s derived `Hash` makes: it is looked up for every datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MidKey {
    pub addr: SocketAddr,
    pub mid: u16,
}

impl MidKey {
    pub fn new(addr: SocketAddr, mid: u16) -> MidKey {
        MidKey { addr, mid }
    }
}

impl Hash for MidKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let (ip, rest) = address_words(&self.addr);
        state.write_u128(ip);
        state.write_u64(rest ^ ((self.mid as u64) << 48));
    }
}

/// A peer address as a map key, hashed like [`MidKey`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AddrKey(pub SocketAddr);

impl Hash for AddrKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let (ip, rest) = address_words(&self.0);
        state.write_u128(ip);
        state.write_u64(rest);
    }
}

/// The address as two words: the IP (IPv4 mapped into IPv6) and port, scope id and family.
fn address_words(addr: &SocketAddr) -> (u128, u64) {
    match addr {
        SocketAddr::V4(a) => (
            u128::from(a.ip().to_ipv6_mapped()),
            a.port() as u64 | 1 << 47,
        ),
        SocketAddr::V6(a) => (
            u128::from(*a.ip()),
            a.port() as u64 | (a.scope_id() as u64) << 16,
        ),
    }
}
