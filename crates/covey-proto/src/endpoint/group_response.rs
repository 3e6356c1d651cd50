//! Responses to requests that came to a multicast group (RFC 7252 §8.2): each waits,
//! encoded in its incoming exchange, for a random instant within the leisure, then leaves
//! through `poll_transmit`.

use crate::endpoint::{Endpoint, RespondError, TimerKind};
use crate::exchange::incoming_exchange::{IncomingState, ResponseTarget};
use crate::message::wire::Outgoing;
use crate::storage::slab::SlabKey;
use crate::Instant;

impl Endpoint {
    /// Answers group request `key` at a random instant within the leisure (RFC 7252
    /// §8.2): its response waits, encoded, in the incoming exchange.
    pub(crate) fn respond_to_multicast(
        &mut self,
        now: Instant,
        key: SlabKey,
        target: ResponseTarget,
        mut m: Outgoing<'_>,
    ) -> Result<(), RespondError> {
        let Some(peer) = self.peer_for(target.remote, now) else {
            self.remove_incoming(key);
            return Err(RespondError::Overload);
        };
        let reuse = self.lifetimes.mid_reuse;
        let Some(mid) = self.peers.allocate_mid(peer, now, reuse) else {
            self.remove_incoming(key);
            return Err(RespondError::Overload);
        };
        m.message_id = mid;
        if !self.incoming.encode_response(key, &m, &mut self.pool) {
            return Err(RespondError::TooLarge);
        }
        if let Some(inc) = self.incoming.get_mut(key) {
            inc.state = IncomingState::DelayedResponse;
        }
        // RFC 7252 §8.2: answer at a random instant within the leisure period.
        let size = self.incoming.bytes(key).len();
        let leisure = self.config.leisure_for(size);
        let delay = crate::transmission_parameters::fraction(leisure, self.rng.next_u32());
        self.set_timer_for(TimerKind::Incoming, key, now + delay);
        Ok(())
    }

    /// A delayed (multicast) response left through `poll_transmit`.
    pub(crate) fn finish_delayed_response(&mut self, key: SlabKey) {
        self.remove_incoming(key);
    }
}
