//! The observer table's fair shares: when it is full, a registration from a peer within its
//! share takes the place of an observation of the peer (or source) most beyond its share,
//! which simply ends (its client re-registers once Max-Age passes without a notification,
//! RFC 7641 §3.3.1), and a registration beyond its share is served without Observe, as
//! RFC 7641 §4.1 wants of a server that cannot add an observer.

use crate::endpoint::Endpoint;
use crate::storage::fair_share::{judge, ShareLimits, Verdict};
use crate::Instant;
use core::net::SocketAddr;

impl Endpoint {
    /// Makes room for an observer of `remote`, evicting an observation of a holder beyond
    /// its share when the table is full; false when there is none for `remote`.
    pub(crate) fn make_room_for_observer(&mut self, now: Instant, remote: SocketAddr) -> bool {
        if !self.observers.is_full() {
            return true;
        }
        if self.observer_refusals.refuses(&remote) {
            return false;
        }
        let limits = ShareLimits::new(&self.config.fair_share, self.observers.capacity());
        let held = || {
            self.observers
                .iter()
                .filter_map(|(_, o)| Some((self.peers.get(o.peer)?.addr, 1)))
        };
        let holder = match judge(held, &remote, 1, limits) {
            Verdict::Evict(holder) => holder,
            Verdict::Refuse(beyond) => {
                self.observer_refusals.remember(beyond);
                return false;
            }
            Verdict::Full => return false,
        };
        let victim = self.observers.iter().find_map(|(key, o)| {
            let addr = self.peers.get(o.peer)?.addr;
            holder.holds(&addr).then_some(key)
        });
        let Some(key) = victim else {
            return false;
        };
        self.stats.drop(crate::stats::DropCause::Overload);
        self.remove_observer(now, key);
        true
    }
}
