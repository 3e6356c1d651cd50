//! Confirmable transmissions (RFC 7252 §4.2): retransmission with the peer's RTO estimator,
//! ACK and RST matching, RTT samples.

use crate::cc::RtoEstimator;
use crate::endpoint::{Endpoint, TimerKind};
use crate::hash::MidKey;
use crate::message::outbox::OutSource;
use crate::message::peer::PeerKey;
use crate::message::transmission::{Transmission, TransmissionEnd, TransmissionOwner};
use crate::stats::TRACKED_ATTEMPTS;
use crate::storage::slab::SlabKey;
use crate::{Duration, Instant};
use core::net::SocketAddr;

impl Endpoint {
    /// Sends the CON already encoded in `transmission_bufs[key]` and arms its timer.
    /// `ongoing` is the number of other exchanges in flight to the peer (blind RTO).
    /// `key` comes from `reserve_transmission`, which fixed the peer and destination.
    pub(crate) fn start_transmission(
        &mut self,
        now: Instant,
        key: SlabKey,
        message_id: u16,
        owner: TransmissionOwner,
        ongoing: usize,
    ) {
        self.arm_transmission(now, key, message_id, owner, ongoing);
        if let Some(destination) = self.transmissions.get(key).map(|t| t.destination) {
            self.queue_datagram(destination, OutSource::Transmission(key));
        }
    }

    /// Like [`Endpoint::start_transmission`] without queueing the first copy: the caller
    /// sends it (a CON notification goes out with its round).
    pub(crate) fn arm_transmission(
        &mut self,
        now: Instant,
        key: SlabKey,
        message_id: u16,
        owner: TransmissionOwner,
        ongoing: usize,
    ) {
        let Some((peer, destination)) =
            self.transmissions.get(key).map(|t| (t.peer, t.destination))
        else {
            return;
        };
        let draw = self.rng.next_f64();
        let base_rto = match self.peers.get_mut(peer) {
            Some(p) => {
                p.refs += 1;
                p.last_used = now;
                p.estimator.base_rto(now, ongoing)
            }
            None => self.config.transmission.ack_timeout,
        };
        // Dithering: uniform in [RTO, RTO * ACK_RANDOM_FACTOR].
        let timeout = self.config.transmission.dither(base_rto, draw);
        if let Some(t) = self.transmissions.get_mut(key) {
            *t = Transmission {
                peer,
                destination,
                message_id,
                owner,
                retransmissions: 0,
                base_rto,
                timeout,
                first_sent: now,
            };
        }
        self.transmission_index.insert(&self.transmissions, key);
        self.set_timer_for(TimerKind::Transmission, key, now + timeout);
    }

    /// Reserves a transmission slot; the caller encodes into `transmission_bufs[key]`.
    pub(crate) fn reserve_transmission(
        &mut self,
        peer: PeerKey,
        destination: SocketAddr,
    ) -> Option<SlabKey> {
        self.transmissions
            .insert(Transmission {
                peer,
                destination,
                message_id: 0,
                owner: TransmissionOwner::SeparateResponse,
                retransmissions: 0,
                base_rto: Duration::ZERO,
                timeout: Duration::ZERO,
                first_sent: Instant::ZERO,
            })
            .ok()
    }

    /// Gives transmission `key` message ID `mid` (a newer notification replacing the one in
    /// flight); returns the ID it had.
    pub(crate) fn renumber_transmission(&mut self, key: SlabKey, mid: u16) -> Option<u16> {
        let t = self.transmissions.get_mut(key)?;
        let old = MidKey::new(t.destination, t.message_id);
        t.message_id = mid;
        self.transmission_index.remove(key, old);
        self.transmission_index.insert(&self.transmissions, key);
        Some(old.mid)
    }

    /// Ends a transmission; on ACK an RTT sample goes to the peer's estimator.
    pub(crate) fn end_transmission(
        &mut self,
        now: Instant,
        key: SlabKey,
        end: TransmissionEnd,
    ) -> Option<Transmission> {
        let t = self.transmissions.remove(key)?;
        self.transmission_bufs.release(key.index(), &mut self.pool);
        if let TransmissionOwner::Notification(observer) = t.owner {
            // Its copy was its round's representation, which it no longer needs.
            if let Some(resource) = self.observers.get(observer).map(|o| o.resource) {
                self.rounds.release(resource, &mut self.pool);
            }
        }
        self.transmission_index
            .remove(key, MidKey::new(t.destination, t.message_id));
        self.cancel_timer_for(TimerKind::Transmission, key);
        if let Some(p) = self.peers.get_mut(t.peer) {
            p.refs = p.refs.saturating_sub(1);
            p.last_used = now;
            if end != TransmissionEnd::TimedOut {
                p.unresponsive = false;
            }
            if end == TransmissionEnd::Acknowledged {
                let rtt = now.saturating_duration_since(t.first_sent);
                p.estimator.on_sample(now, rtt, t.retransmissions);
                self.stats.rtt_samples += 1;
                self.stats.rtt_total += rtt;
            }
        }
        Some(t)
    }

    pub(crate) fn on_transmission_timeout(&mut self, now: Instant, index: usize) {
        let Some(key) = self.transmissions.key_at(index) else {
            return;
        };
        let max_retransmit = self.config.transmission.max_retransmit;
        let Some(t) = self.transmissions.get_mut(key) else {
            return;
        };
        let peer = t.peer;
        // An address check is not repeated: its response goes cut to the budget instead.
        let repeat = !matches!(t.owner, TransmissionOwner::AddressCheck(_));
        if repeat && t.retransmissions < max_retransmit {
            t.retransmissions += 1;
            let attempt = t.retransmissions as usize;
            let destination = t.destination;
            let (base, previous) = (t.base_rto, t.timeout);
            let next = match self.peers.get_mut(peer) {
                Some(p) => {
                    p.estimator.on_timeout(now);
                    p.estimator.next_timeout(base, previous)
                }
                None => previous * 2,
            };
            if let Some(t) = self.transmissions.get_mut(key) {
                t.timeout = next;
            }
            self.stats.retransmissions[(attempt - 1).min(TRACKED_ATTEMPTS - 1)] += 1;
            self.queue_datagram(destination, OutSource::Transmission(key));
            self.set_timer_for(TimerKind::Transmission, key, now + next);
        } else {
            if let Some(p) = self.peers.get_mut(peer) {
                p.estimator.on_timeout(now);
            }
            if let Some(t) = self.end_transmission(now, key, TransmissionEnd::TimedOut) {
                self.on_transmission_ended(now, t, TransmissionEnd::TimedOut);
            }
        }
    }
}
