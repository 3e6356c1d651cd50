//! Checking an unverified client's address before a response its budget cannot carry: the
//! response waits in the body cache while a CoAP ping (an Empty CON, RFC 7252 §4.3) goes to
//! the client, which RFC 7252 endpoints answer with an RST (aiocoap and Californium do;
//! libcoap's client does not). That RST carries the ping's message ID, which only the
//! receiver saw, so it verifies the address and the response then goes whole, at full block
//! size. A client still silent when the piggyback window closes gets the response cut to its
//! budget, as without the check (piggy-backed, and with Echo where there is room). Four
//! bytes and one round trip buy what would otherwise be a transfer in 16-byte blocks for a
//! client that does not know Echo.

use crate::endpoint::{Endpoint, TimerKind};
use crate::event::IncomingId;
use crate::exchange::incoming_exchange::{AddressCheck, IncomingState};
use crate::message::transmission::{TransmissionEnd, TransmissionOwner};
use crate::message::wire::Outgoing;
use crate::request::Response;
use crate::storage::slab::SlabKey;
use crate::Instant;
use alloc::vec::Vec;
use covey_core::{CoapOption, Code, Message, MessageType};

/// The size of a ping: an Empty message is its header alone.
pub(crate) const PING_LEN: usize = 4;

impl Endpoint {
    /// Holds `response` to incoming request `key` in the body cache and pings its unverified
    /// sender; false (nothing held) when a check was tried already, the budget has no room
    /// for the ping, or nothing is free to hold it with.
    pub(crate) fn hold_for_address_check(
        &mut self,
        now: Instant,
        key: SlabKey,
        response: &Response<'_>,
    ) -> bool {
        let Some(inc) = self.incoming.get(key) else {
            return false;
        };
        let remote = inc.remote;
        if inc.address_check != AddressCheck::None
            || inc.from_cache
            || inc.group().is_some()
            || self.remaining_budget(now, remote) < PING_LEN
            // The held body must outlive the wait (at most the piggyback window).
            || self.config.block_cache_lifetime <= self.config.piggyback_window
            || !self
                .address_validation
                .may_validate_by_acknowledgement(remote)
        {
            return false;
        }
        let reuse = self.lifetimes.mid_reuse;
        let Some(peer) = self.peer_for(remote, now) else {
            return false;
        };
        let Some(mid) = self.peers.allocate_mid(peer, now, reuse) else {
            return false;
        };
        self.cache_body(now, key, response);
        let Some(transfer) = self.incoming_transfer_key(key) else {
            return false;
        };
        if !self.block_transfers.has_body(&transfer) {
            return false;
        }
        let Some(tx) = self.transmissions.reserve(peer, remote) else {
            self.block_transfers.take_body(&transfer);
            return false;
        };
        let ping = Outgoing {
            message_type: MessageType::Confirmable,
            code: Code::EMPTY,
            message_id: mid,
            token: &[],
            options: &[],
            extra: &[],
            payload: &[],
        };
        if self
            .transmissions
            .buf_mut(tx)
            .encode(&ping, &mut self.pool)
            .is_err()
        {
            self.transmissions.unreserve(tx);
            self.block_transfers.take_body(&transfer);
            return false;
        }
        if let Some(inc) = self.incoming.get_mut(key) {
            inc.address_check = AddressCheck::Pending(tx);
        }
        // The wait is no longer than a piggy-backed answer may take.
        let window = self.config.piggyback_window;
        self.set_timer_for(TimerKind::Incoming, key, now + window);
        let ongoing = self.exchanges.in_flight(peer);
        self.start_transmission(now, tx, mid, TransmissionOwner::AddressCheck(key), ongoing);
        true
    }

    /// Stops waiting for the answer to the ping checking incoming request `key`'s sender:
    /// the ping is not repeated, and the held response goes cut to the budget.
    pub(crate) fn give_up_address_check(&mut self, now: Instant, key: SlabKey) {
        if let Some(AddressCheck::Pending(tx)) = self.incoming.get(key).map(|i| i.address_check) {
            self.end_transmission(now, tx, TransmissionEnd::TimedOut);
        }
        self.on_address_check_ended(now, key);
    }

    /// The ping checking incoming request `key`'s sender ended, answered (the address is
    /// verified by now) or not: its held response goes, whole or cut to the budget.
    pub(crate) fn on_address_check_ended(&mut self, now: Instant, key: SlabKey) {
        let Some(inc) = self.incoming.get_mut(key) else {
            return;
        };
        if !matches!(inc.address_check, AddressCheck::Pending(_))
            || inc.state != IncomingState::Waiting
        {
            return;
        }
        inc.address_check = AddressCheck::Done;
        let Some(transfer) = self.incoming_transfer_key(key) else {
            self.remove_incoming(key);
            return;
        };
        let Some(cached) = self.block_transfers.take_body(&transfer) else {
            self.remove_incoming(key);
            return;
        };
        let Ok(head) = Message::parse(&cached.head) else {
            self.remove_incoming(key);
            return;
        };
        let options: Vec<CoapOption<'_>> = head.options().collect();
        let response = Response {
            code: head.code(),
            options: &options,
            payload: &cached.body,
        };
        if self.respond(now, IncomingId(key), &response).is_err() {
            self.remove_incoming(key);
        }
    }
}
