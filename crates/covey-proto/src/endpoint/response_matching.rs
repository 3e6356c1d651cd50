//! Responses matched to the client exchanges that await them (RFC 7252 §5.3.2): by token,
//! continuing Block2 downloads and Block1 uploads, keeping observations fresh, and handing
//! the result to the application.

use crate::endpoint::{Endpoint, TimerKind};
use crate::event::AppId;
use crate::event::{Event, Failure, RequestId, ResponseKey};
use crate::exchange::client_exchange::{BlockTransfer, ExchangeState};
use crate::hash::MidKey;
use crate::message::dedup::DedupState;
use crate::message::option_rules::unrecognised_critical_option;
use crate::message::transmission::{TransmissionEnd, TransmissionOwner};
use crate::stats::{DropCause, TRACKED_ATTEMPTS};
use crate::storage::slab::SlabKey;
use crate::Duration;
use crate::Instant;
use alloc::boxed::Box;
use alloc::vec::Vec;
use core::net::SocketAddr;
use covey_core::{uint, Block, Code, Message, MessageType, OptionNumber, Token};

impl Endpoint {
    /// Whether a response to exchange `key` carries a critical option this endpoint does
    /// not process; a protected response's OSCORE option is its exchange's to verify.
    fn refuses_critical(&self, key: SlabKey, message: &Message<'_>) -> bool {
        if unrecognised_critical_option(message).is_none() {
            return false;
        }
        #[cfg(feature = "oscore")]
        return !self.awaits_protected(key);
        #[cfg(not(feature = "oscore"))]
        {
            let _ = key;
            true
        }
    }

    /// An ACK carrying a response, for the CON `tx` owned by `owner`: it must also match
    /// the request's token.
    pub(crate) fn on_piggybacked_response(
        &mut self,
        now: Instant,
        tx: SlabKey,
        owner: TransmissionOwner,
        remote: SocketAddr,
        message: &Message<'_>,
        datagram: &[u8],
    ) {
        let TransmissionOwner::Request(ex_key) = owner else {
            self.stats.drop(DropCause::Unmatched);
            return;
        };
        if self.exchanges.get(ex_key).map(|e| e.token) != Some(message.token()) {
            self.stats.drop(DropCause::Unmatched);
            return;
        }
        if self.refuses_critical(ex_key, message) {
            // RFC 7252 §5.4.1: rejected, and rejecting an ACK means ignoring it. The
            // request did arrive, though, and its answer cannot be used: retransmitting
            // would only fetch the same answer, so the exchange fails.
            self.stats.drop(DropCause::FormatError);
            self.end_transmission(now, tx, TransmissionEnd::Acknowledged);
            self.fail_exchange(now, ex_key, Failure::ProtocolError);
            return;
        }
        if let Some(t) = self.end_transmission(now, tx, TransmissionEnd::Acknowledged) {
            if let Some(ex) = self.exchanges.get_mut(ex_key) {
                ex.retransmissions = t.retransmissions;
            }
        }
        self.on_response(now, ex_key, remote, message, datagram);
    }

    /// A CON or NON response: taken (acknowledged, remembered for duplicates under
    /// `seen`, and matched) when an outstanding request of ours has its token; false when
    /// nobody asked.
    pub(crate) fn on_separate_response(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        message: &Message<'_>,
        datagram: &[u8],
        seen: (MidKey, u64),
        lifetime: Duration,
    ) -> bool {
        let (dedup_key, print) = seen;
        let confirmable = message.message_type() == MessageType::Confirmable;
        let matched = self.exchanges.by_token(&message.token()).filter(|k| {
            self.exchanges
                .get(*k)
                .is_some_and(|e| e.multicast || e.remote == remote)
        });
        if let Some(ex_key) = matched.filter(|k| self.refuses_critical(*k, message)) {
            // RFC 7252 §5.4.1: a response with a critical option this endpoint does not
            // process is rejected (RST for a CON, silence for a NON) and its request fails,
            // unless it is one of many answers to a multicast request.
            self.stats.drop(DropCause::FormatError);
            let state = if confirmable {
                self.send_empty(remote, MessageType::Reset, message.message_id(), true)
                    .map_or(DedupState::Ignore, DedupState::Replied)
            } else {
                DedupState::Ignore
            };
            self.messages
                .remember(now, dedup_key, print, state, now + lifetime);
            if !self.exchanges.get(ex_key).is_some_and(|e| e.multicast) {
                self.fail_exchange(now, ex_key, Failure::ProtocolError);
            }
            return true;
        }
        let Some(ex_key) = matched else {
            return false;
        };
        let state = if confirmable {
            self.send_empty(
                remote,
                MessageType::Acknowledgement,
                message.message_id(),
                true,
            )
            .map_or(DedupState::Ignore, DedupState::Replied)
        } else {
            DedupState::Ignore
        };
        self.messages
            .remember(now, dedup_key, print, state, now + lifetime);
        // A separate response also proves the request arrived: stop retransmitting it.
        if let Some(ExchangeState::AwaitingAck(tx)) = self.exchanges.get(ex_key).map(|e| e.state) {
            if let Some(t) = self.end_transmission(now, tx, TransmissionEnd::Acknowledged) {
                if let Some(ex) = self.exchanges.get_mut(ex_key) {
                    ex.retransmissions = t.retransmissions;
                    ex.state = ExchangeState::AwaitingResponse;
                }
            }
        }
        self.on_response(now, ex_key, remote, message, datagram);
        true
    }

    /// A response matched exchange `key`: continue a block-wise transfer, keep an
    /// observation or multicast request open, or deliver it and end the exchange.
    pub(crate) fn on_response(
        &mut self,
        now: Instant,
        key: SlabKey,
        source: SocketAddr,
        m: &Message<'_>,
        datagram: &[u8],
    ) {
        #[cfg(feature = "oscore")]
        if self.awaits_protected(key) {
            self.on_protected_response(now, key, source, m, datagram);
            return;
        }
        self.on_plain_response(now, key, source, m, datagram, m.observe());
    }

    /// [`Self::on_response`] for a plain answer (or the inner one of an OSCORE answer),
    /// whose Observe value is `observe`.
    pub(crate) fn on_plain_response(
        &mut self,
        now: Instant,
        key: SlabKey,
        source: SocketAddr,
        m: &Message<'_>,
        datagram: &[u8],
        observe: Option<u32>,
    ) {
        let max_body = self.config.max_body_size;
        let Some(ex) = self.exchanges.get_mut(key) else {
            return;
        };
        let code = m.code();
        let mut body: Option<Vec<u8>> = None;
        let peer = ex.peer;
        self.peers.mark_responsive(peer);
        if self.answer_echo(now, key, source, m) {
            return;
        }
        let Some(ex) = self.exchanges.get_mut(key) else {
            return;
        };
        if let Some(t) = ex.transfer.as_mut() {
            if let Some(sent) = t.upload_block {
                if code == Code::CONTINUE {
                    match next_upload_block(sent, m.block1(), t.upload.len()) {
                        Some(next) => {
                            t.upload_block = Some(next);
                            self.transmit_exchange(now, key, false);
                        }
                        None => self.fail_exchange(now, key, Failure::ProtocolError),
                    }
                    return;
                }
                // Any other answer ends the upload.
                t.upload_block = None;
                t.upload = Vec::new();
            }
        }
        let observing = ex.state == ExchangeState::Observing;
        if !observing {
            if let Some(b2) = m.block2() {
                let t = ex.transfer.get_or_insert_with(Box::default);
                if ex.multicast && b2.num == 0 {
                    // Another member's answer to a multicast request starts over.
                    t.download.clear();
                }
                if let Some(failure) = take_block(t, b2, m, max_body) {
                    self.fail_exchange(now, key, failure);
                    return;
                }
                if b2.more {
                    let mut szx = b2.szx;
                    if m.option(OptionNumber::ECHO).is_some() {
                        // Blocks cut small for an address not verified yet (RFC 9175
                        // §2.4): the next request echoes the value, so ask for the largest
                        // block up to our own size that starts at this offset; it doubles
                        // at each step back to the preferred size.
                        while szx < self.config.block_szx
                            && t.download.len() % (32usize << szx) == 0
                        {
                            szx += 1;
                        }
                    }
                    let size = 16usize << szx;
                    t.download_block =
                        Block::new((t.download.len() / size) as u32, false, szx).ok();
                    self.transmit_exchange(now, key, false);
                    return;
                }
                body = Some(core::mem::take(&mut t.download));
                t.download_block = None;
            }
        }
        if ex.multicast {
            self.deliver(now, key, source, datagram, body, false);
            return;
        }
        if let Some(obs) = ex.observe.as_mut() {
            if let (true, Some(value)) = (code.is_success(), observe) {
                if !obs.accept(value, now) {
                    self.stats.drop(DropCause::StaleNotification);
                    return;
                }
                let was_counted = ex.counted;
                ex.counted = false;
                ex.state = ExchangeState::Observing;
                let peer = ex.peer;
                self.cancel_timer_for(TimerKind::Exchange, key);
                if was_counted {
                    // An established observation no longer holds an NSTART slot.
                    self.exchanges.uncount(peer);
                    self.start_queued(now, peer);
                }
                self.deliver(now, key, source, datagram, body, false);
                return;
            }
        }
        self.deliver(now, key, source, datagram, body, true);
    }

    /// Hands a response to the application; with `last`, the exchange ends.
    pub(crate) fn deliver(
        &mut self,
        now: Instant,
        key: SlabKey,
        source: SocketAddr,
        datagram: &[u8],
        body: Option<Vec<u8>>,
        last: bool,
    ) {
        let Some(held) = self.held.hold(source, body, datagram, &mut self.pool) else {
            self.stats.drop(DropCause::Overload);
            return;
        };
        let owner = if last {
            let Some(ex) = self.finish_exchange(now, key) else {
                self.release_held(held);
                return;
            };
            self.stats.completed_after[(ex.retransmissions as usize).min(TRACKED_ATTEMPTS - 1)] +=
                1;
            ex.owner
        } else {
            self.exchanges.get(key).map_or(AppId(0), |ex| ex.owner)
        };
        if !self.push_event_for(
            owner,
            Event::Response {
                id: RequestId(key),
                key: ResponseKey(held),
                last,
            },
        ) {
            self.release_held(held);
        }
    }
}

/// Adds Block2 block `b2` of response `m` to the download of `t`, or says why the transfer
/// ends (RFC 7959 §2.4: a block other than the one asked for is an error, so a server
/// cannot keep a client asking forever; the body is bounded by its Size2, with one block of
/// slack, and by `max_body`).
fn take_block(
    t: &mut BlockTransfer,
    b2: Block,
    m: &Message<'_>,
    max_body: usize,
) -> Option<Failure> {
    let asked = t.download.len();
    if b2.offset() != asked {
        let (asked, got) = (asked as u32, b2.offset().min(u32::MAX as usize) as u32);
        return Some(Failure::UnexpectedBlock { asked, got });
    }
    let etag = m.option(OptionNumber::ETAG).and_then(Token::new);
    if asked == 0 {
        t.etag = etag;
        t.size2 = None;
    } else if etag != t.etag {
        // A changed representation mid-transfer cannot be stitched together.
        return Some(Failure::ProtocolError);
    }
    let payload = m.payload();
    if b2.more && payload.len() < b2.size() {
        return Some(Failure::ShortBlock {
            offset: asked as u32,
        });
    }
    if t.size2.is_none() {
        t.size2 = m.option(OptionNumber::SIZE2).and_then(uint::decode);
    }
    // With more to come, at least one more byte must still fit.
    let total = asked + payload.len() + usize::from(b2.more);
    if total > max_body {
        return Some(Failure::ResponseTooLarge);
    }
    if let Some(size2) = t.size2 {
        if total > size2 as usize + b2.size() {
            return Some(Failure::Size2Exceeded { size2 });
        }
    }
    t.download.extend_from_slice(payload);
    None
}

/// The Block1 block after `sent`, following the server's acknowledgement and preferred
/// size (RFC 7959 §2.5); `None` when the server asks for more than there is.
fn next_upload_block(sent: Block, ack: Option<Block>, total: usize) -> Option<Block> {
    let szx = ack.map_or(sent.szx, |a| a.szx.min(sent.szx));
    let next_offset = sent.offset() + sent.size();
    if next_offset >= total {
        return None;
    }
    let size = 16usize << szx;
    let num = (next_offset / size) as u32;
    Block::new(num, next_offset + size < total, szx).ok()
}
