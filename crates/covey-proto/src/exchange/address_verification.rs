//! Which peers have shown they receive at their address (RFC 9175 §2.4 item 3). Echo values
//! are a keyed MAC (SipHash-2-4) of a time window and the peer's address, so nothing is kept
//! for a peer until it echoes one back; verified addresses live in a bounded table.

use crate::amplification_limit::AmplificationLimit;
use crate::hash::{seeded_map, AddrKey, Map};
use crate::rng::Rng;
use crate::sip::SipHasher24;
use crate::{Duration, Instant};
use core::hash::{Hash, Hasher};
use core::net::SocketAddr;

/// Length of the Echo values this endpoint issues: a window byte and a 64-bit MAC.
pub(crate) const ECHO_LEN: usize = 9;

/// Mixed into the seed for the MAC key's own random stream.
const KEY_DOMAIN: u64 = 0xEC40_A11D_5EED_0001;

/// An Echo option value issued to one address.
pub(crate) type EchoValue = [u8; ECHO_LEN];

/// Echo values and the addresses verified with them.
#[derive(Debug)]
pub(crate) struct AddressVerification {
    key: (u64, u64),
    /// Verified address -> when its verification expires.
    verified: Map<AddrKey, Instant>,
}

impl AddressVerification {
    /// A verifier keyed from the endpoint's seed (as secret as the seed is), drawn from a
    /// stream of its own so the engine's other random draws stay as they were.
    pub fn from_seed(seed: u64) -> AddressVerification {
        let mut rng = Rng::new(seed ^ KEY_DOMAIN);
        AddressVerification::new((rng.next_u64(), rng.next_u64()), rng.next_u64())
    }

    /// A verifier with MAC key `key`.
    pub fn new(key: (u64, u64), map_seed: u64) -> AddressVerification {
        AddressVerification {
            key,
            verified: seeded_map(map_seed),
        }
    }

    /// The Echo value for `addr` now.
    pub fn echo_value(
        &self,
        now: Instant,
        addr: SocketAddr,
        limit: &AmplificationLimit,
    ) -> EchoValue {
        let window = window_at(now, limit.echo_lifetime);
        let mut value = [0u8; ECHO_LEN];
        value[0] = window as u8;
        value[1..].copy_from_slice(&self.mac(window, addr).to_be_bytes());
        value
    }

    /// Whether `value` is an Echo value issued to `addr` in this window or the previous one.
    pub fn is_fresh(
        &self,
        now: Instant,
        addr: SocketAddr,
        value: &[u8],
        limit: &AmplificationLimit,
    ) -> bool {
        let Some((&window_byte, mac)) = value.split_first() else {
            return false;
        };
        let current = window_at(now, limit.echo_lifetime);
        [current, current.wrapping_sub(1)]
            .into_iter()
            .filter(|w| *w as u8 == window_byte)
            .any(|w| mac == self.mac(w, addr).to_be_bytes())
    }

    /// Records `addr` as verified until `verified_lifetime` from now; when the table is full,
    /// the entry that expires soonest (an expired one first) makes room.
    pub fn mark_verified(&mut self, now: Instant, addr: SocketAddr, limit: &AmplificationLimit) {
        let capacity = limit.max_verified_peers;
        if capacity == 0 {
            return;
        }
        let key = AddrKey(addr);
        if !self.verified.contains_key(&key) && self.verified.len() >= capacity {
            self.verified.retain(|_, expiry| *expiry > now);
            if self.verified.len() >= capacity {
                let soonest = self
                    .verified
                    .iter()
                    .min_by_key(|(_, e)| **e)
                    .map(|(k, _)| *k);
                if let Some(k) = soonest {
                    self.verified.remove(&k);
                }
            }
        }
        self.verified.insert(key, now + limit.verified_lifetime);
    }

    /// Whether `addr` is verified now.
    pub fn is_verified(&self, now: Instant, addr: SocketAddr) -> bool {
        self.verified
            .get(&AddrKey(addr))
            .is_some_and(|expiry| *expiry > now)
    }

    /// Tells whether an address counts as verified now for the tables' fairness (everyone
    /// does when the amplification limit is off, `limited` false).
    pub fn verifier(&self, now: Instant, limited: bool) -> impl Fn(&SocketAddr) -> bool + '_ {
        move |a| !limited || self.is_verified(now, *a)
    }

    /// Verified addresses held (expired ones included until they are pushed out).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.verified.len()
    }

    fn mac(&self, window: u64, addr: SocketAddr) -> u64 {
        let mut h = SipHasher24::new_with_keys(self.key.0, self.key.1);
        h.write_u64(window);
        AddrKey(addr).hash(&mut h);
        h.finish()
    }
}

/// The index of the Echo time window `now` falls in.
fn window_at(now: Instant, lifetime: Duration) -> u64 {
    let length = u64::try_from(lifetime.as_nanos())
        .unwrap_or(u64::MAX)
        .max(1);
    now.as_nanos() / length
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::{format, vec::Vec};

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn echo_values_are_bound_to_the_address_and_expire() {
        let limit = AmplificationLimit::default();
        let v = AddressVerification::new((1, 2), 3);
        let (a, b) = (addr("[2001:db8::1]:5683"), addr("[2001:db8::1]:5684"));
        let t0 = Instant::from_secs(1000);
        let value = v.echo_value(t0, a, &limit);
        assert!(v.is_fresh(t0, a, &value, &limit));
        assert!(!v.is_fresh(t0, b, &value, &limit), "another port");
        let later = t0 + limit.echo_lifetime;
        assert!(v.is_fresh(later, a, &value, &limit), "the next window");
        let stale = t0 + limit.echo_lifetime * 2;
        assert!(!v.is_fresh(stale, a, &value, &limit), "two windows on");
        let other_key = AddressVerification::new((1, 4), 3);
        assert!(!other_key.is_fresh(t0, a, &value, &limit), "another key");
        let mut forged = value;
        forged[8] ^= 1;
        assert!(!v.is_fresh(t0, a, &forged, &limit));
        assert!(!v.is_fresh(t0, a, &[], &limit));
    }

    #[test]
    fn verification_expires_and_the_table_stays_bounded() {
        let limit = AmplificationLimit {
            max_verified_peers: 2,
            ..AmplificationLimit::default()
        };
        let mut v = AddressVerification::new((1, 2), 3);
        let t0 = Instant::from_secs(10);
        let peers: Vec<SocketAddr> = (0..3)
            .map(|i| addr(&format!("192.0.2.{}:5683", i + 1)))
            .collect();
        v.mark_verified(t0, peers[0], &limit);
        v.mark_verified(t0 + Duration::from_secs(1), peers[1], &limit);
        v.mark_verified(t0 + Duration::from_secs(2), peers[2], &limit);
        assert_eq!(v.len(), 2);
        let now = t0 + Duration::from_secs(3);
        assert!(!v.is_verified(now, peers[0]), "the soonest to expire went");
        assert!(v.is_verified(now, peers[1]) && v.is_verified(now, peers[2]));
        let expired = t0 + Duration::from_secs(2) + limit.verified_lifetime;
        assert!(!v.is_verified(expired, peers[2]));
    }
}
