//! Confirmable transmissions (RFC 7252 §4.2): retransmission with the peer's RTO estimator,
//! ACK and RST matching, RTT samples.
//!
//! [`Transmissions`] owns every CON awaiting its ACK: its record, its current copy and its
//! entry in the index by message ID. It knows nothing of who sent the CON; it takes the
//! peers, timers, buffers and counters it touches as a [`Context`] and tells its caller what
//! happened, and the endpoint passes that on to the owner (an exchange, an observer, ...).

use crate::cc::RtoEstimator;
use crate::hash::MidKey;
use crate::message::peer::{PeerKey, PeerTable};
use crate::message::transmission::{Transmission, TransmissionEnd, TransmissionOwner};
use crate::message::transmission_index::TransmissionIndex;
use crate::rng::Rng;
use crate::stats::{Stats, TRACKED_ATTEMPTS};
use crate::storage::buffer_pool::BufferPool;
use crate::storage::datagram_buf::{DatagramBuf, SlotBufs};
use crate::storage::slab::{Slab, SlabKey};
use crate::storage::timer_layout::{TimerKind, TimerLayout};
use crate::storage::timer_queue::TimerQueue;
use crate::transmission_parameters::TransmissionParameters;
use crate::{Duration, Instant};
use core::net::SocketAddr;

/// What the transmissions touch of the endpoint around them.
pub(crate) struct Context<'a> {
    pub peers: &'a mut PeerTable,
    pub timers: &'a mut TimerQueue,
    pub timer_layout: &'a TimerLayout,
    pub pool: &'a mut BufferPool,
    pub stats: &'a mut Stats,
    pub rng: &'a mut Rng,
    pub params: &'a TransmissionParameters,
}

impl Context<'_> {
    fn set_timer(&mut self, key: SlabKey, at: Instant) {
        let id = self.timer_layout.id(TimerKind::Transmission, key);
        self.timers.set(id, at);
    }

    fn cancel_timer(&mut self, key: SlabKey) {
        let id = self.timer_layout.id(TimerKind::Transmission, key);
        self.timers.cancel(id);
    }
}

/// What a transmission's timer did.
#[derive(Debug)]
pub(crate) enum Timeout {
    /// Nothing: no transmission at that index.
    Nothing,
    /// The CON goes again (its timer is armed): queue its copy for `destination`.
    Retransmit(SlabKey, SocketAddr),
    /// MAX_RETRANSMIT reached (or an address check, which is never repeated): end it as
    /// timed out and tell its owner.
    GaveUp(SlabKey),
}

/// The CON messages awaiting their ACK, their current copies and their index by
/// (destination, message ID).
#[derive(Debug)]
pub(crate) struct Transmissions {
    slab: Slab<Transmission>,
    bufs: SlotBufs,
    /// Transmissions by (destination, message ID), for ACK and RST matching.
    index: TransmissionIndex,
}

impl Transmissions {
    /// Room for `capacity` transmissions at once; `seed` keys the index.
    pub fn new(capacity: usize, seed: u64) -> Transmissions {
        Transmissions {
            slab: Slab::with_capacity(capacity),
            bufs: SlotBufs::default(),
            index: TransmissionIndex::new(seed),
        }
    }

    pub fn get(&self, key: SlabKey) -> Option<&Transmission> {
        self.slab.get(key)
    }

    pub fn is_full(&self) -> bool {
        self.slab.is_full()
    }

    /// The current copy of transmission `key` (empty when there is none).
    pub fn bytes(&self, key: SlabKey) -> &[u8] {
        match self.slab.get(key) {
            Some(_) => self.bufs.get(key.index()),
            None => &[],
        }
    }

    /// The buffer of transmission `key` to encode its message into.
    pub fn buf_mut(&mut self, key: SlabKey) -> &mut DatagramBuf {
        self.bufs.slot(key.index())
    }

    /// The transmission of the CON with message ID `message_id` sent to `remote`, which an
    /// ACK or RST from there answers.
    pub fn find(&self, remote: SocketAddr, message_id: u16) -> Option<SlabKey> {
        self.index.find(&self.slab, MidKey::new(remote, message_id))
    }

    /// Reserves a transmission slot; the caller encodes into [`buf_mut`](Self::buf_mut),
    /// then [`arm`](Self::arm)s it or gives it back with [`unreserve`](Self::unreserve).
    pub fn reserve(&mut self, peer: PeerKey, destination: SocketAddr) -> Option<SlabKey> {
        self.slab
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

    /// Gives back a slot reserved for a message that could not be encoded.
    pub fn unreserve(&mut self, key: SlabKey) {
        self.slab.remove(key);
    }

    /// Arms reserved transmission `key` as message `message_id` of `owner`: its first
    /// timeout drawn from the peer's RTO (`ongoing` other exchanges in flight to it, for a
    /// blind RTO) and dithered, and its timer set. The caller queues the first copy.
    pub fn arm(
        &mut self,
        cx: &mut Context<'_>,
        now: Instant,
        key: SlabKey,
        message_id: u16,
        owner: TransmissionOwner,
        ongoing: usize,
    ) {
        let Some((peer, destination)) = self.slab.get(key).map(|t| (t.peer, t.destination)) else {
            return;
        };
        let draw = cx.rng.next_u32();
        cx.peers.hold(peer);
        cx.peers.touch(peer, now);
        let base_rto = match cx.peers.estimator_mut(peer) {
            Some(e) => e.base_rto(now, ongoing),
            None => cx.params.ack_timeout,
        };
        // Dithering: uniform in [RTO, RTO * ACK_RANDOM_FACTOR].
        let timeout = cx.params.dither(base_rto, draw);
        if let Some(t) = self.slab.get_mut(key) {
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
        self.index.insert(&self.slab, key);
        cx.set_timer(key, now + timeout);
    }

    /// Gives transmission `key` message ID `mid` (a newer notification replacing the one in
    /// flight); returns the ID it had.
    pub fn renumber(&mut self, key: SlabKey, mid: u16) -> Option<u16> {
        let t = self.slab.get_mut(key)?;
        let old = MidKey::new(t.destination, t.message_id);
        t.message_id = mid;
        self.index.remove(key, old);
        self.index.insert(&self.slab, key);
        Some(old.mid)
    }

    /// Hands transmission `key` to another owner (an error replacing a notification in
    /// flight keeps its retransmission counter and timer).
    pub fn set_owner(&mut self, key: SlabKey, owner: TransmissionOwner) {
        if let Some(t) = self.slab.get_mut(key) {
            t.owner = owner;
        }
    }

    /// Ends a transmission and returns it; on ACK an RTT sample goes to the peer's
    /// estimator.
    pub fn end(
        &mut self,
        cx: &mut Context<'_>,
        now: Instant,
        key: SlabKey,
        end: TransmissionEnd,
    ) -> Option<Transmission> {
        let t = self.slab.remove(key)?;
        self.bufs.release(key.index(), cx.pool);
        self.index
            .remove(key, MidKey::new(t.destination, t.message_id));
        cx.cancel_timer(key);
        cx.peers.release(t.peer);
        cx.peers.touch(t.peer, now);
        if end != TransmissionEnd::TimedOut {
            cx.peers.mark_responsive(t.peer);
        }
        if end == TransmissionEnd::Acknowledged {
            if let Some(e) = cx.peers.estimator_mut(t.peer) {
                let rtt = now.saturating_duration_since(t.first_sent);
                e.on_sample(now, rtt, t.retransmissions);
                cx.stats.rtt_samples += 1;
                cx.stats.rtt_total += rtt;
            }
        }
        Some(t)
    }

    /// The timer of the transmission at slab index `index` fired: back off and go again, or
    /// give up.
    pub fn on_timeout(&mut self, cx: &mut Context<'_>, now: Instant, index: usize) -> Timeout {
        let Some(key) = self.slab.key_at(index) else {
            return Timeout::Nothing;
        };
        let max_retransmit = cx.params.max_retransmit;
        let Some(t) = self.slab.get_mut(key) else {
            return Timeout::Nothing;
        };
        let peer = t.peer;
        // An address check is not repeated: its response goes cut to the budget instead.
        #[cfg(feature = "address-validation")]
        let repeat = !matches!(t.owner, TransmissionOwner::AddressCheck(_));
        #[cfg(not(feature = "address-validation"))]
        let repeat = true;
        if repeat && t.retransmissions < max_retransmit {
            t.retransmissions += 1;
            let attempt = t.retransmissions as usize;
            let destination = t.destination;
            let (base, previous) = (t.base_rto, t.timeout);
            let next = match cx.peers.estimator_mut(peer) {
                Some(e) => {
                    e.on_timeout(now);
                    e.next_timeout(base, previous)
                }
                // Doubled as a sum: `Duration`'s multiplication divides 64 bits.
                None => previous + previous,
            };
            if let Some(t) = self.slab.get_mut(key) {
                t.timeout = next;
            }
            cx.stats.retransmissions[(attempt - 1).min(TRACKED_ATTEMPTS - 1)] += 1;
            cx.set_timer(key, now + next);
            Timeout::Retransmit(key, destination)
        } else {
            if let Some(e) = cx.peers.estimator_mut(peer) {
                e.on_timeout(now);
            }
            Timeout::GaveUp(key)
        }
    }
}
