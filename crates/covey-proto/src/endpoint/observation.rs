//! The endpoint's side of observations (RFC 7641 §4.1): registering an observer when an
//! observable resource answers, and ending an observation on deregistration, RST, timeout,
//! a closed port or eviction. The observers themselves are the observe layer's
//! [`Observers`](crate::observe::observers::Observers); this composes them with the peers,
//! transmissions and responses of the message and exchange layers.

use super::{Endpoint, RespondError};
use crate::exchange::incoming_exchange::{IncomingState, ObserveRequest};
use crate::message::transmission::TransmissionEnd;
use crate::observe::observer::Observer;
use crate::observe::observers::Room;
use crate::request::Response;
use crate::stats::DropCause;
use crate::storage::slab::SlabKey;
use crate::Instant;
use core::net::SocketAddr;
use covey_core::{uint, CoapOption, OptionNumber, Token};

impl Endpoint {
    /// Answers a request for an observable `resource`: an Observe 0 request with a 2.xx
    /// response registers (or renews) the client as an observer and the response carries
    /// the current sequence number; Observe 1, or a GET without Observe from a registered
    /// client, deregisters. Returns whether the client is now registered.
    pub fn respond_observable(
        &mut self,
        now: Instant,
        id: crate::IncomingId,
        resource: u64,
        response: &Response<'_>,
    ) -> Result<bool, RespondError> {
        let inc = self
            .incoming
            .get(id.0)
            .ok_or(RespondError::UnknownRequest)?;
        if inc.state != IncomingState::Waiting {
            return Err(RespondError::UnknownRequest);
        }
        // An observation is the context's that registered it: a request under another
        // context (or none) neither renews nor cancels it, nor registers beside it with
        // the same address and token (which would hide it from its own client's requests).
        let found = self.observers.find(&self.peers, inc.remote, inc.token);
        let existing = found.filter(|&o| self.registered_alike(o, id));
        let taken = found.is_some() && existing.is_none();
        #[cfg(feature = "oscore")]
        let binding = inc.oscore;
        let wants = inc.observe;
        let register = wants == ObserveRequest::Register && response.code.is_success();
        if !register {
            if let Some(o) = existing {
                self.remove_observer(now, o);
            }
            self.respond(now, id, response)?;
            return Ok(false);
        }
        let (remote, token) = (inc.remote, inc.token);
        let observer = match existing {
            Some(o) => Some(o),
            None if !taken && self.make_room_for_observer(now, remote) => {
                self.add_observer(now, remote, token, resource)
            }
            None => None,
        };
        let Some(o) = observer else {
            // No room (or the client holds its share): answer without Observe, which tells
            // the client it is not registered (RFC 7641 §4.1).
            self.respond(now, id, response)?;
            return Ok(false);
        };
        if let Some(tx) = self.observers.get(o).and_then(|obs| obs.in_flight) {
            // The response carries the current state with a newer Observe value, so a CON
            // notification still in flight is obsolete; the request shows the client is there.
            self.end_transmission(now, tx, TransmissionEnd::TimedOut);
            if let Some(obs) = self.observers.get_mut(o) {
                obs.in_flight = None;
            }
        }
        // The response carries the current state: a notification still due in a round
        // would only repeat it (and its round is the old resource's).
        self.observers.settle(o, &mut self.pool);
        let sequence = match self.observers.get_mut(o) {
            Some(obs) => {
                obs.resource = resource;
                // Notifications are bound to the newest registration.
                #[cfg(feature = "oscore")]
                {
                    obs.protected = binding.is_some();
                    match binding {
                        Some(b) => self.oscore.observations.insert(o, b),
                        None => self.oscore.observations.remove(&o),
                    };
                }
                obs.sequence = (obs.sequence + 1) & 0xFF_FFFF;
                obs.sequence
            }
            None => 0,
        };
        let mut value = [0u8; 4];
        let extra = [CoapOption {
            number: OptionNumber::OBSERVE,
            value: uint::encode(sequence, &mut value),
        }];
        self.respond_with_extra(now, id, response, &extra)?;
        Ok(true)
    }

    /// Whether observer `o` was registered under the OSCORE context (or none) request
    /// `id` came with.
    fn registered_alike(&self, o: SlabKey, id: crate::IncomingId) -> bool {
        #[cfg(feature = "oscore")]
        {
            let observer = self.oscore.observations.get(&o).map(|b| b.context);
            let request = self.incoming.get(id.0).and_then(|inc| inc.oscore);
            observer == request.map(|b| b.context)
        }
        #[cfg(not(feature = "oscore"))]
        {
            let _ = (o, id);
            true
        }
    }

    /// Number of observers registered for `resource`.
    pub fn observer_count(&self, resource: u64) -> usize {
        self.observers.count_of(resource)
    }

    /// The network says nothing listens at `remote` any more (ICMP port unreachable): its
    /// client exchanges fail as with [`Endpoint::handle_unreachable`], and the observations
    /// registered from there end, as an RST to a notification ends them (RFC 7641 §3.6,
    /// §4.5): notifying a closed port only draws more ICMP errors. Returns how many ended.
    pub fn handle_port_closed(&mut self, now: Instant, remote: SocketAddr) -> usize {
        let ended = self.end_observations_where(now, |peers, o| peers.addr(o.peer) == Some(remote));
        self.handle_unreachable(now, remote);
        ended
    }

    /// The network reported `remote` unreachable (an ICMP error the driver saw): every
    /// outstanding request to it fails with [`Failure::Unreachable`](crate::Failure) and
    /// the peer is treated as unresponsive (PROBING_RATE) until heard from.
    pub fn handle_unreachable(&mut self, now: Instant, remote: SocketAddr) {
        #[cfg(feature = "client")]
        self.fail_requests_to(now, remote);
        if let Some(k) = self.peers.lookup(&remote) {
            self.peers.mark_unresponsive(k, now);
        }
    }

    /// Ends every observation `chosen` picks; returns how many.
    pub(crate) fn end_observations_where(
        &mut self,
        now: Instant,
        chosen: impl Fn(&crate::message::peer::PeerTable, &Observer) -> bool,
    ) -> usize {
        let mut ended = 0;
        for index in 0..self.observers.slots_created() {
            let Some(key) = self.observers.key_at(index) else {
                continue;
            };
            if self
                .observers
                .get(key)
                .is_some_and(|o| chosen(&self.peers, o))
            {
                self.remove_observer(now, key);
                ended += 1;
            }
        }
        ended
    }

    fn add_observer(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        token: Token,
        resource: u64,
    ) -> Option<SlabKey> {
        let peer = self.peer_for(remote, now)?;
        let observer = Observer {
            token,
            resource,
            peer,
            sequence: self.rng.next_u64() as u32 & 0xFF_FFFF,
            in_flight: None,
            last_non_mid: None,
            replaced_mid: None,
            last_con: now,
            since_con: 0,
            due: false,
            #[cfg(feature = "oscore")]
            protected: false,
        };
        let key = self.observers.insert(&self.peers, observer, remote)?;
        self.peers.hold(peer);
        Some(key)
    }

    /// Ends observer `key`'s observation: its CON in flight ends first (its round learns
    /// the CON is gone while the observer is still there), then the observer and its hold on
    /// the peer.
    pub(crate) fn remove_observer(&mut self, now: Instant, key: SlabKey) {
        if let Some(tx) = self.observers.get(key).and_then(|o| o.in_flight) {
            self.end_transmission(now, tx, TransmissionEnd::TimedOut);
        }
        #[cfg(feature = "oscore")]
        self.oscore.observations.remove(&key);
        if let Some(o) = self.observers.remove(&self.peers, &mut self.pool, key) {
            self.peers.release(o.peer);
        }
    }

    /// Makes room for an observer of `remote`, evicting an observation of a holder beyond
    /// its share when the table is full (see [`Observers::room_for`]); false when there is
    /// none for `remote`. The evicted observation simply ends: its client re-registers once
    /// Max-Age passes without a notification (RFC 7641 §3.3.1), and a registration beyond
    /// its share is served without Observe (RFC 7641 §4.1).
    ///
    /// [`Observers::room_for`]: crate::observe::observers::Observers::room_for
    fn make_room_for_observer(&mut self, now: Instant, remote: SocketAddr) -> bool {
        let room = self.observers.room_for(
            &self.peers,
            remote,
            || self.is_address_verified(now, remote),
            self.address_validation.verifier(now),
            &self.config.fair_share,
        );
        match room {
            Room::Free => true,
            Room::Refused(beyond) => {
                if let Some(beyond) = beyond {
                    self.observers.remember_refusal(beyond);
                }
                false
            }
            Room::Evict(key) => {
                self.stats.drop(DropCause::Overload);
                self.remove_observer(now, key);
                true
            }
        }
    }

    /// A CON notification ended: acknowledged keeps the observer, RST or timeout removes it.
    pub(crate) fn on_notification_ended(&mut self, now: Instant, key: SlabKey, acknowledged: bool) {
        if let Some(o) = self.observers.get_mut(key) {
            o.in_flight = None;
        }
        if acknowledged {
            self.observers.set_mid(
                &self.peers,
                key,
                crate::observe::notification_mids::MidRole::Replaced,
                None,
            );
        } else {
            self.remove_observer(now, key);
        }
    }

    /// An RST that matched no transmission may reject a NON notification.
    pub(crate) fn reset_notification(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        mid: u16,
    ) -> bool {
        match self.observers.find_by_mid(&self.peers, remote, mid) {
            Some(key) => {
                self.remove_observer(now, key);
                true
            }
            None => false,
        }
    }
}
