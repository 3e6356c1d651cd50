//! CON notifications (RFC 7641 §4.5): the periodic CON that checks an observer is still
//! there, and the CON that replaces one still in flight. Both are written from the
//! resource's round like NON notifications, so a CON in flight keeps its transmission entry
//! and timer but no copy of the representation: every retransmission is written again from
//! the round, which lasts until the last CON reading it ends.

use crate::endpoint::Endpoint;
use crate::message::transmission::TransmissionOwner;
use crate::observe::notification_mids::MidRole;
use crate::stats::DropCause;
use crate::storage::slab::SlabKey;
use crate::Instant;

/// Bytes an observer's notification adds to the round's representation besides its token:
/// the Observe option (a one-byte header and at most three bytes of value). Inserting it
/// never lengthens the options after it, whose deltas only shrink.
const OBSERVE_OPTION_MAX: usize = 4;

impl Endpoint {
    /// Makes observer `key`'s notification of the round under way a CON: a new
    /// transmission, or the one in flight with a new message ID (RFC 7641 §4.5.2: the newer
    /// state replaces it, keeping its retransmission counter and timer). The round sends
    /// its first copy. False when no message ID or transmission is free, or when the
    /// notification would not fit a datagram.
    pub(crate) fn confirm_notification(&mut self, now: Instant, key: SlabKey) -> bool {
        let reuse = self.lifetimes.mid_reuse;
        let Some(o) = self.observers.get(key) else {
            return false;
        };
        let (token, peer, resource, replaced) = (o.token, o.peer, o.resource, o.in_flight);
        let Some(template) = self.rounds.template(resource) else {
            return false;
        };
        if template.len() + token.len() + OBSERVE_OPTION_MAX > self.config.max_message_size {
            self.stats.drop(DropCause::TooLarge);
            return false;
        }
        let Some((remote, mid)) = self
            .peers
            .addr(peer)
            .and_then(|addr| Some((addr, self.peers.allocate_mid(peer, now, reuse)?)))
        else {
            return false;
        };
        match replaced {
            Some(tx) => {
                if let Some(old) = self.transmissions.renumber(tx, mid) {
                    // An RST to the replaced copy still ends the observation.
                    self.set_notification_mid(key, MidRole::Replaced, Some(old));
                }
            }
            None => {
                let Some(tx) = self.transmissions.reserve(peer, remote) else {
                    return false;
                };
                let ongoing = self.exchanges.in_flight(peer);
                self.arm_transmission(now, tx, mid, TransmissionOwner::Notification(key), ongoing);
                self.rounds.hold(resource);
                if let Some(o) = self.observers.get_mut(key) {
                    o.in_flight = Some(tx);
                }
            }
        }
        let Some(o) = self.observers.get_mut(key) else {
            return false;
        };
        o.sequence = (o.sequence + 1) & 0xFF_FFFF;
        o.last_con = now;
        o.since_con = 0;
        self.rounds.mark_due(o);
        true
    }
}
