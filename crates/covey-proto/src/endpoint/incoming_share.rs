//! The incoming-request table's fair shares: when it is full, a request from a verified peer
//! takes the slot of a request from the source whose unverified peers hold the most, and
//! one from a peer within its share takes the slot of a request from the peer (or source)
//! most beyond its share; the evicted request is answered 5.03 with Max-Age, and a peer
//! beyond its share is refused the same way.

use crate::endpoint::Endpoint;
use crate::exchange::incoming_exchange::{IncomingState, ResponseTarget};
use crate::stats::DropCause;
use crate::Instant;
use core::net::SocketAddr;
use covey_core::{uint, CoapOption, Code, OptionNumber};

/// The diagnostic payload of a 5.03 for lack of room.
const BUSY: &[u8] = b"server busy";

impl Endpoint {
    /// Makes room in the full incoming table for a request from `remote` by evicting a
    /// request of a holder beyond its share; false when `remote` must be refused instead.
    pub(crate) fn make_room_for_request(&mut self, now: Instant, remote: SocketAddr) -> bool {
        let remote_verified = self.is_address_verified(now, remote);
        let key = {
            let verified = self.address_validation.verifier(now);
            self.incoming
                .victim(remote, remote_verified, &verified, &self.config.fair_share)
        };
        let Some((key, inc)) = key.and_then(|key| Some((key, self.incoming.get(key)?))) else {
            return false;
        };
        let target = inc.target();
        let answer = inc.state == IncomingState::Waiting && inc.group().is_none();
        let local = inc.local;
        self.stats.drop(DropCause::Overload);
        if answer {
            let from = self.local_id(local);
            let outer = self.messages.set_replying_from(from);
            self.reply_busy(now, target);
            self.messages.set_replying_from(outer);
        }
        self.remove_incoming(key);
        true
    }

    /// Answers 5.03 Service Unavailable with the configured Max-Age: a table is full.
    pub(crate) fn reply_busy(&mut self, now: Instant, target: ResponseTarget) {
        let mut age = [0u8; 4];
        let options = [self.busy_max_age(&mut age)];
        self.reply_now(now, target, Code::SERVICE_UNAVAILABLE, &options, BUSY);
    }

    /// The Max-Age option of a 5.03: when the client may try again.
    fn busy_max_age<'a>(&self, buf: &'a mut [u8; 4]) -> CoapOption<'a> {
        CoapOption {
            number: OptionNumber::MAX_AGE,
            value: uint::encode(self.config.overload_max_age, buf),
        }
    }
}
