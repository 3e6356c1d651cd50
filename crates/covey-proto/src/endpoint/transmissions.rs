//! The endpoint's side of confirmable transmissions: it lends [`Transmissions`] the peers,
//! timers, buffers and counters they touch, queues the copies they send, and passes the end
//! of a transmission on to its owner in the layers above.

use super::Endpoint;
use crate::message::outbox::OutSource;
use crate::message::reliability::{Context, Timeout};
use crate::message::transmission::{Transmission, TransmissionEnd, TransmissionOwner};
use crate::storage::slab::SlabKey;
use crate::Instant;

/// The [`Context`] of `$endpoint`'s transmissions, borrowed field by field so the
/// transmissions themselves stay free to borrow.
macro_rules! transmission_context {
    ($endpoint:expr) => {
        &mut Context {
            peers: &mut $endpoint.peers,
            timers: &mut $endpoint.timers,
            timer_layout: &$endpoint.timer_layout,
            pool: &mut $endpoint.pool,
            stats: &mut $endpoint.stats,
            rng: &mut $endpoint.rng,
            params: &$endpoint.config.transmission,
        }
    };
}

impl Endpoint {
    /// Sends the CON already encoded into reserved transmission `key` and arms its timer.
    /// `ongoing` is the number of other exchanges in flight to the peer (blind RTO).
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
        let cx = transmission_context!(self);
        self.transmissions
            .arm(cx, now, key, message_id, owner, ongoing);
    }

    /// Ends a transmission; on ACK an RTT sample goes to the peer's estimator. A CON
    /// notification's copy was its round's representation, which it no longer needs.
    pub(crate) fn end_transmission(
        &mut self,
        now: Instant,
        key: SlabKey,
        end: TransmissionEnd,
    ) -> Option<Transmission> {
        let cx = transmission_context!(self);
        let t = self.transmissions.end(cx, now, key, end)?;
        if let TransmissionOwner::Notification(observer) = t.owner {
            // A protected notification held its own copy, not its round's.
            let shared = self.observers.get(observer).filter(|o| !o.is_protected());
            if let Some(resource) = shared.map(|o| o.resource) {
                self.observers.release_round(resource, &mut self.pool);
            }
        }
        Some(t)
    }

    /// The timer of the transmission at slab index `index` fired: its copy goes again, or
    /// it ends as timed out and its owner hears of it.
    pub(crate) fn on_transmission_timeout(&mut self, now: Instant, index: usize) {
        let cx = transmission_context!(self);
        match self.transmissions.on_timeout(cx, now, index) {
            Timeout::Nothing => {}
            Timeout::Retransmit(key, destination) => {
                self.queue_datagram(destination, OutSource::Transmission(key));
            }
            Timeout::GaveUp(key) => {
                if let Some(t) = self.end_transmission(now, key, TransmissionEnd::TimedOut) {
                    self.on_transmission_ended(now, t, TransmissionEnd::TimedOut);
                }
            }
        }
    }

    /// What happens when a CON transmission ends, by its owner.
    pub(crate) fn on_transmission_ended(
        &mut self,
        now: Instant,
        t: Transmission,
        end: TransmissionEnd,
    ) {
        match t.owner {
            #[cfg(feature = "client")]
            TransmissionOwner::Request(key) => self.on_request_transmission_ended(now, key, t, end),
            #[cfg(feature = "client")]
            TransmissionOwner::Ping(key) => self.on_ping_ended(now, key, end),
            TransmissionOwner::SeparateResponse => {}
            #[cfg(feature = "address-validation")]
            TransmissionOwner::AddressCheck(incoming) => self.on_address_check_ended(now, incoming),
            TransmissionOwner::Notification(observer) => {
                self.on_notification_ended(now, observer, end == TransmissionEnd::Acknowledged)
            }
        }
    }
}
