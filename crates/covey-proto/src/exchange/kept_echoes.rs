//! Echo values servers sent with responses other than 4.01 (RFC 9175 §2.3), kept to go with
//! the next request to each server: one per server, in a bounded table.

use crate::hash::{seeded_map, AddrKey, Map};
use core::net::SocketAddr;

/// Longest Echo value (RFC 9175 §2.2.1).
const MAX_ECHO_LEN: usize = 40;

/// An Echo value kept for the next request to a server.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KeptEcho {
    len: u8,
    bytes: [u8; MAX_ECHO_LEN],
}

impl KeptEcho {
    /// A copy of `value`, if it is a valid Echo value (1–40 bytes).
    pub fn new(value: &[u8]) -> Option<KeptEcho> {
        if value.is_empty() || value.len() > MAX_ECHO_LEN {
            return None;
        }
        let mut bytes = [0u8; MAX_ECHO_LEN];
        bytes[..value.len()].copy_from_slice(value);
        Some(KeptEcho {
            len: value.len() as u8,
            bytes,
        })
    }

    /// The value.
    pub fn value(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

/// Echo values servers sent with responses other than 4.01, one per server, bounded.
#[derive(Debug)]
pub(crate) struct KeptEchoes {
    values: Map<AddrKey, KeptEcho>,
    capacity: usize,
}

impl KeptEchoes {
    /// A table holding at most `capacity` values.
    pub fn new(capacity: usize, seed: u64) -> KeptEchoes {
        KeptEchoes {
            values: seeded_map(seed.rotate_left(17)),
            capacity,
        }
    }

    /// Keeps `echo` for the next request to `server`.
    pub fn keep(&mut self, server: SocketAddr, echo: KeptEcho) {
        let key = AddrKey(server);
        if !self.values.contains_key(&key) && self.values.len() >= self.capacity {
            // Full: one value is forgotten; its server will ask again with 4.01.
            let Some(other) = self.values.keys().next().copied() else {
                return;
            };
            self.values.remove(&other);
        }
        self.values.insert(key, echo);
    }

    /// The value kept for `server`, which goes with one request only.
    pub fn take(&mut self, server: SocketAddr) -> Option<KeptEcho> {
        if self.values.is_empty() {
            return None;
        }
        self.values.remove(&AddrKey(server))
    }
}
