//! Which socket a datagram leaves on when the driver has several: the one the peer last
//! spoke to, else the first that can reach its address family.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use crate::socket::Socket;

/// Peers remembered at most; past that the table starts over (a cache, not state).
const MAX_ROUTES: usize = 65_536;

/// The socket each peer was last heard on.
#[derive(Debug, Default)]
pub(crate) struct PeerRoutes {
    learned: HashMap<SocketAddr, usize>,
}

impl PeerRoutes {
    /// Remembers that `peer` spoke to socket `index` (only useful with several sockets).
    pub fn learn(&mut self, sockets: usize, peer: SocketAddr, index: usize) {
        if sockets < 2 {
            return;
        }
        if self.learned.len() >= MAX_ROUTES && !self.learned.contains_key(&peer) {
            self.learned.clear();
        }
        self.learned.insert(peer, index);
    }

    /// The socket to send to `destination` on.
    pub fn choose(&self, sockets: &[Arc<Socket>], destination: SocketAddr) -> Option<usize> {
        if sockets.len() == 1 {
            return sockets[0].can_reach(destination).then_some(0);
        }
        if let Some(&i) = self.learned.get(&destination) {
            return Some(i);
        }
        sockets.iter().position(|s| s.can_reach(destination))
    }
}
