//! A small bounded memory of the addresses that completed a handshake recently: they keep
//! a reserve of handshake slots that strangers cannot fill.

use std::collections::VecDeque;
use std::net::IpAddr;

/// The most recently authenticated addresses, oldest first, at most `capacity` of them.
#[derive(Debug)]
pub(crate) struct KnownPeers {
    capacity: usize,
    addresses: VecDeque<IpAddr>,
}

impl KnownPeers {
    /// An empty memory of at most `capacity` addresses.
    pub fn new(capacity: usize) -> KnownPeers {
        KnownPeers {
            capacity,
            addresses: VecDeque::new(),
        }
    }

    /// Remembers that `ip` just authenticated, forgetting the oldest address when full.
    pub fn remember(&mut self, ip: IpAddr) {
        let ip = ip.to_canonical();
        if let Some(at) = self.addresses.iter().position(|a| *a == ip) {
            self.addresses.remove(at);
        }
        if self.capacity == 0 {
            return;
        }
        if self.addresses.len() >= self.capacity {
            self.addresses.pop_front();
        }
        self.addresses.push_back(ip);
    }

    /// Whether `ip` authenticated recently.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.addresses.contains(&ip)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn the_least_recently_authenticated_address_is_forgotten_first() {
        let mut known = KnownPeers::new(2);
        known.remember(ip("192.0.2.1"));
        known.remember(ip("192.0.2.2"));
        known.remember(ip("192.0.2.1"));
        known.remember(ip("192.0.2.3"));
        assert!(known.contains(ip("::ffff:192.0.2.1")));
        assert!(!known.contains(ip("192.0.2.2")));
        assert!(known.contains(ip("192.0.2.3")));
        let mut none = KnownPeers::new(0);
        none.remember(ip("192.0.2.1"));
        assert!(!none.contains(ip("192.0.2.1")));
    }
}
