//! The peer table's fair shares: when it is full, a new verified peer takes the place of an
//! unverified peer of the source whose unverified peers are most, a new peer from a source
//! within its share that of a peer of the source most beyond its share (ending that peer's
//! observations), and a new peer from a source beyond its share may only replace an idle
//! peer of its own source.

use crate::endpoint::Endpoint;
use crate::message::peer::PeerKey;
use crate::storage::fair_share::{
    heaviest, heaviest_unverified, judge, Holder, ShareLimits, Source, Verdict,
};
use crate::Instant;
use core::net::SocketAddr;

impl Endpoint {
    /// Makes room in the full peer table for `addr`; false when it must be refused.
    pub(crate) fn make_room_for_peer(&mut self, now: Instant, addr: SocketAddr) -> bool {
        if self.is_address_verified(now, addr) {
            // A verified peer takes the place of an unverified one, whatever the shares.
            let victim = {
                let verified = self.address_validation.verifier(now);
                let held = self.peers.addrs().map(|a| (a, 1));
                heaviest_unverified(held, &verified).and_then(|source| {
                    self.peer_to_free(|a| Source::of(a) == source && !verified(a))
                })
            };
            if victim.is_some_and(|v| self.free_peer(now, v)) {
                return true;
            }
        }
        // Beyond its share, a source may only replace one of its own idle peers.
        let own = Holder::Source(Source::of(&addr));
        if self.peers.refuses(&addr) {
            return self
                .peers
                .evict_idle_of(|a| own.holds(a), |k| self.exchanges.is_busy(k));
        }
        let limits = ShareLimits::new(&self.config.fair_share, self.peers.capacity());
        let held = || self.peers.addrs().map(|a| (a, 1));
        match judge(held, &addr, 1, limits) {
            Verdict::Refuse(beyond) => {
                self.peers.remember_refusal(beyond);
                self.peers
                    .evict_idle_of(|a| own.holds(a), |k| self.exchanges.is_busy(k))
            }
            Verdict::Full => self.peers.evict_idle(|k| self.exchanges.is_busy(k)),
            Verdict::Evict(holder) => {
                self.free_peer_of(now, holder)
                    || self.peers.evict_idle(|k| self.exchanges.is_busy(k))
            }
        }
    }

    /// Makes room in the full peer table for a peer we send a request of our own to:
    /// an idle peer goes first, else a peer of the source most beyond its share; false if
    /// neither can go.
    pub(crate) fn make_room_for_own_request(&mut self, now: Instant) -> bool {
        if self.peers.evict_idle(|k| self.exchanges.is_busy(k)) {
            return true;
        }
        let limits = ShareLimits::new(&self.config.fair_share, self.peers.capacity());
        let held = || self.peers.addrs().map(|a| (a, 1));
        heaviest(held, limits).is_some_and(|holder| self.free_peer_of(now, holder))
    }

    /// Forgets a peer of `holder` with no exchange of ours under way, an idle one first,
    /// else the least recently used, ending the observations it holds; false if none could
    /// be freed.
    fn free_peer_of(&mut self, now: Instant, holder: Holder) -> bool {
        let victim = self.peer_to_free(|a| holder.holds(a));
        victim.is_some_and(|v| self.free_peer(now, v))
    }

    /// The peer whose address `chosen` picks that may go: no exchange of ours under way, an
    /// idle one first, else the least recently used.
    fn peer_to_free(&self, chosen: impl Fn(&SocketAddr) -> bool) -> Option<PeerKey> {
        self.peers.to_free(chosen, |k| self.exchanges.is_busy(k))
    }

    /// Forgets peer `victim`, ending the observations it holds; false if it could not go.
    fn free_peer(&mut self, now: Instant, victim: PeerKey) -> bool {
        self.end_observations_where(now, |_, o| o.peer == victim);
        self.peers.remove_unreferenced(victim)
    }
}
