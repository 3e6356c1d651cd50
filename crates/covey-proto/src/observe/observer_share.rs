//! The observer table's fair shares: when it is full, a registration from a verified peer
//! takes the place of an observation of the source whose unverified peers hold the most, and
//! one from a peer within its share that of an observation of the peer (or source) most
//! beyond its share. The evicted observation simply ends (its client re-registers once
//! Max-Age passes without a notification, RFC 7641 §3.3.1), and a registration beyond its
//! share is served without Observe, as RFC 7641 §4.1 wants of a server that cannot add an
//! observer.

use crate::endpoint::Endpoint;
use crate::storage::fair_share::{heaviest_unverified, judge, ShareLimits, Source, Verdict};
use crate::storage::slab::SlabKey;
use crate::Instant;
use core::net::SocketAddr;

impl Endpoint {
    /// Makes room for an observer of `remote`, evicting an observation of a holder beyond
    /// its share when the table is full; false when there is none for `remote`.
    pub(crate) fn make_room_for_observer(&mut self, now: Instant, remote: SocketAddr) -> bool {
        if !self.observers.is_full() {
            return true;
        }
        if self.is_address_verified(now, remote) {
            // A verified peer takes the place of an unverified one, whatever the shares.
            if let Some(key) = self.unverified_observer(now) {
                self.stats.drop(crate::stats::DropCause::Overload);
                self.remove_observer(now, key);
                return true;
            }
        }
        if self.observer_refusals.refuses(&remote) {
            return false;
        }
        let limits = ShareLimits::new(&self.config.fair_share, self.observers.capacity());
        let held = || {
            self.observers
                .iter()
                .filter_map(|(_, o)| Some((self.peers.addr(o.peer)?, 1)))
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
            let addr = self.peers.addr(o.peer)?;
            holder.holds(&addr).then_some(key)
        });
        let Some(key) = victim else {
            return false;
        };
        self.stats.drop(crate::stats::DropCause::Overload);
        self.remove_observer(now, key);
        true
    }

    /// An observation of the source whose unverified peers hold the most of the table.
    fn unverified_observer(&self, now: Instant) -> Option<SlabKey> {
        let verified = |a: &SocketAddr| self.counts_as_verified(now, a);
        let addr_of = |o: &crate::observe::observer::Observer| self.peers.addr(o.peer);
        let held = self
            .observers
            .iter()
            .filter_map(|(_, o)| Some((addr_of(o)?, 1)));
        let source = heaviest_unverified(held, verified)?;
        self.observers.iter().find_map(|(key, o)| {
            let addr = addr_of(o)?;
            (Source::of(&addr) == source && !verified(&addr)).then_some(key)
        })
    }
}
