//! The server role's intake: incoming requests taken in (4.02 for unrecognised critical
//! options, 5.03 under overload), duplicates answered from the reply cache, and requests
//! left unanswered timed out.

#[cfg(feature = "oscore")]
use crate::endpoint::oscore::Intake;
#[cfg(feature = "oscore")]
use crate::endpoint::oscore_outer_block::OuterBlocks;
use crate::endpoint::{Endpoint, LocalAddr, TimerKind};
use crate::event::AppId;
use crate::event::{Event, IncomingId};
#[cfg(feature = "address-validation")]
use crate::exchange::incoming_exchange::AddressCheck;
use crate::exchange::incoming_exchange::ObserveRequest;
use crate::exchange::incoming_exchange::{IncomingExchange, IncomingState, ResponseTarget};
#[cfg(feature = "oscore")]
use crate::exchange::oscore_contexts::OscoreBinding;
use crate::message::dedup::{DedupKey, DedupState};
use crate::message::option_rules::RequestOptions;
use crate::message::outbox::OutSource;
use crate::stats::DropCause;
use crate::storage::slab::SlabKey;
use crate::Instant;
use core::net::SocketAddr;
use covey_core::{uint, Block, Code, Message, MessageType};

impl Endpoint {
    pub(crate) fn remove_incoming(&mut self, key: SlabKey) {
        if self.incoming.remove(key, &mut self.pool) {
            self.cancel_timer_for(TimerKind::Incoming, key);
        }
    }

    pub(crate) fn on_incoming_timeout(&mut self, now: Instant, index: usize) {
        let Some(key) = self.incoming.key_at(index) else {
            return;
        };
        // The empty ACK leaves from the socket the request came to.
        let local = self.incoming.get(key).and_then(|inc| inc.local);
        let from = self.local_id(local);
        self.messages.set_replying_from(from);
        self.incoming_timeout(now, key);
        self.messages
            .set_replying_from(crate::message::outbox::LocalId::default());
    }

    fn incoming_timeout(&mut self, now: Instant, key: crate::storage::slab::SlabKey) {
        let Some(inc) = self.incoming.get_mut(key) else {
            return;
        };
        match inc.state {
            #[cfg(feature = "multicast")]
            IncomingState::DelayedResponse => {
                let remote = inc.remote;
                self.queue_datagram(remote, OutSource::Incoming(key));
            }
            #[cfg(feature = "address-validation")]
            IncomingState::Waiting if matches!(inc.address_check, AddressCheck::Pending(_)) => {
                // The ping checking the sender went unanswered for the piggyback window: the
                // response goes now, cut to the budget, still piggy-backed for a CON (some
                // clients cannot take a separate response block-wise).
                self.give_up_address_check(now, key);
            }
            IncomingState::Waiting if inc.confirmable && !inc.acked => {
                // The application is slow: acknowledge now, respond separately later.
                inc.acked = true;
                let (remote, mid, dedup) = (inc.remote, inc.message_id, inc.dedup);
                self.send_empty(remote, MessageType::Acknowledgement, mid, true);
                self.messages
                    .update_remembered(dedup, DedupState::EmptyAcked);
                self.stats.separate_responses += 1;
                let expiry = self.config.response_timeout;
                self.set_timer_for(TimerKind::Incoming, key, now + expiry);
            }
            IncomingState::Waiting => {
                // Never answered: forget it so the slot can serve others.
                let dedup = inc.dedup;
                self.messages.update_remembered(dedup, DedupState::Ignore);
                self.remove_incoming(key);
            }
        }
    }

    /// A request arrived (CON or NON, already known not to be a duplicate).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn handle_request(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        local_addr: LocalAddr,
        message: &Message<'_>,
        datagram: &[u8],
        dedup_key: DedupKey,
        fingerprint: u64,
    ) {
        let group = local_addr.group();
        let multicast = group.is_some();
        let confirmable = message.message_type() == MessageType::Confirmable;
        if multicast && confirmable {
            // RFC 7252 §8.1: multicast requests are NON; a CON by multicast is ignored.
            self.stats.drop(DropCause::FormatError);
            return;
        }
        let lifetime = if confirmable {
            self.lifetimes.exchange
        } else {
            self.lifetimes.non
        };
        // Until the application answers, duplicates of a CON wait for its response.
        let dedup = self.messages.remember(
            now,
            dedup_key,
            fingerprint,
            DedupState::Ignore,
            now + lifetime,
        );
        let target = ResponseTarget {
            remote,
            message_id: message.message_id(),
            token: message.token(),
            confirmable,
            acked: false,
            dedup,
            #[cfg(feature = "oscore")]
            oscore: None,
        };
        // A protected request in outer blocks is put together first (RFC 8613 §4.1.3.4.2).
        #[cfg(feature = "oscore")]
        let (whole, whole_message, outer_block1);
        #[cfg(feature = "oscore")]
        let (message, datagram) = match self.take_outer_block1(now, target, multicast, message) {
            OuterBlocks::None => {
                outer_block1 = None;
                (message, datagram)
            }
            OuterBlocks::Answered => return,
            OuterBlocks::Whole(bytes, block) => {
                whole = bytes;
                outer_block1 = Some(block);
                let Ok(parsed) = Message::parse(&whole) else {
                    return;
                };
                whole_message = parsed;
                (&whole_message, &whole[..])
            }
        };
        // An EDHOC + OSCORE request completes its handshake first, then goes on without
        // message_3 (RFC 9668 §3.3.1).
        #[cfg(feature = "edhoc")]
        let combined;
        #[cfg(feature = "edhoc")]
        let combined_message;
        #[cfg(feature = "edhoc")]
        let (message, datagram) = match !multicast && self.is_combined_edhoc(message) {
            false => (message, datagram),
            true => {
                let Some(rebuilt) = self.take_combined_edhoc(now, target, message) else {
                    return;
                };
                combined = rebuilt;
                let Ok(parsed) = Message::parse(&combined) else {
                    return;
                };
                combined_message = parsed;
                (&combined_message, &combined[..])
            }
        };
        // An OSCORE request goes on as its decrypted inner request, bound to its context.
        #[cfg(feature = "oscore")]
        match self.unprotect_request(now, target, multicast, message, datagram) {
            Intake::Plain => {}
            Intake::Refused => return,
            Intake::Challenge(binding) => {
                let binding = OscoreBinding {
                    outer_block1,
                    ..binding
                };
                self.challenge_freshness(now, target, binding);
                return;
            }
            Intake::Verified(len, binding) => {
                let binding = OscoreBinding {
                    outer_block1,
                    ..binding
                };
                let target = ResponseTarget {
                    oscore: Some(binding),
                    ..target
                };
                // Taken out while the request is taken in (which copies it); nothing on
                // that path verifies another message.
                let inner = core::mem::take(&mut self.oscore.buffers.inner);
                match Message::parse(&inner[..len]) {
                    Ok(message) => self.take_in(now, local_addr, &message, &inner[..len], target),
                    Err(_) => self.reply_now(
                        now,
                        target,
                        Code::BAD_REQUEST,
                        &[],
                        b"malformed inner request",
                    ),
                }
                self.oscore.buffers.inner = inner;
                return;
            }
        }
        self.take_in(now, local_addr, message, datagram, target);
    }

    /// Takes in a request that is not a duplicate (an OSCORE one as its inner request):
    /// options checked, block-wise and Observe read, the exchange stored and announced.
    fn take_in(
        &mut self,
        now: Instant,
        local_addr: LocalAddr,
        message: &Message<'_>,
        datagram: &[u8],
        target: ResponseTarget,
    ) {
        let (group, local) = (local_addr.group(), local_addr.socket);
        let multicast = group.is_some();
        let (remote, confirmable, dedup) = (target.remote, target.confirmable, target.dedup);
        let scan = RequestOptions::scan(message);
        if let Some(number) = scan.unrecognised_critical {
            if multicast {
                self.stats.drop(DropCause::MulticastSuppressed);
                return;
            }
            if !confirmable {
                // RFC 7252 §5.4.1: a NON with an unrecognised critical option is rejected.
                self.send_empty(remote, MessageType::Reset, message.message_id(), false);
                return;
            }
            let mut text = [0; UNRECOGNISED_TEXT_LEN];
            let diagnostic = unrecognised_option_text(number.0, &mut text);
            self.reply_now(now, target, Code::BAD_OPTION, &[], diagnostic);
            return;
        }
        if scan.proxy.is_some() {
            // RFC 7252 §5.7.2: a request for a proxy, and this endpoint is none.
            self.reply_error(
                now,
                target,
                multicast,
                Code::PROXYING_NOT_SUPPORTED,
                b"this server is not a proxy",
            );
            return;
        }
        // RFC 9528 Appendix A.2: EDHOC in the clear at /.well-known/edhoc, answered here.
        #[cfg(feature = "edhoc")]
        if target.oscore.is_none()
            && !multicast
            && super::edhoc::is_edhoc_request(message)
            && self.answer_edhoc(now, target, message)
        {
            return;
        }
        let verified = self.take_echo(now, remote, message);
        let block2 = match scan.block2.map(Block::decode) {
            Some(Err(_)) => {
                self.reply_error(
                    now,
                    target,
                    multicast,
                    Code::BAD_REQUEST,
                    b"invalid Block2 option",
                );
                return;
            }
            Some(Ok(b)) => Some(b),
            None => None,
        };
        let mut body = None;
        let mut block1 = None;
        match scan.block1.map(Block::decode) {
            Some(Err(_)) => {
                self.reply_error(
                    now,
                    target,
                    multicast,
                    Code::BAD_REQUEST,
                    b"invalid Block1 option",
                );
                return;
            }
            #[cfg(feature = "block1-uploads")]
            Some(Ok(b)) => {
                let size1 = scan.size1.and_then(uint::decode);
                let Some(whole) = self.receive_block1(now, target, multicast, message, b, size1)
                else {
                    return;
                };
                body = Some(whole);
                block1 = Some(b);
            }
            // Without uploads, a body whole in block 0 is this request's own payload.
            #[cfg(not(feature = "block1-uploads"))]
            Some(Ok(b)) if b.num == 0 && !b.more => block1 = Some(b),
            #[cfg(not(feature = "block1-uploads"))]
            Some(Ok(_)) => {
                self.reply_error(
                    now,
                    target,
                    multicast,
                    Code::BAD_OPTION,
                    b"Block1 uploads of more than one block are not supported",
                );
                return;
            }
            None => {}
        }
        let mut observe = match scan.observe.and_then(uint::decode) {
            Some(0) if matches!(message.code(), Code::GET | Code::FETCH) => {
                ObserveRequest::Register
            }
            Some(1) => ObserveRequest::Deregister,
            _ => ObserveRequest::None,
        };
        if observe == ObserveRequest::Register && !verified && multicast {
            // A registration by multicast is served as a plain GET (RFC 9175 §2.4): its
            // notifications would go to an address nobody verified. A unicast one is
            // answered with a CON, whose ACK verifies the address (see `respond`).
            observe = ObserveRequest::None;
        }
        if self.incoming.is_full() {
            self.make_room_for_request(now, remote);
        }
        // A request larger than a datagram (an OSCORE one put together from outer blocks,
        // RFC 8613 §4.1.3.4.2) is kept as its head, with its payload as the body.
        let mut datagram = datagram;
        if body.is_none() && datagram.len() > self.config.max_message_size {
            let payload = message.payload();
            body = Some(payload.to_vec());
            datagram = &datagram[..datagram.len() - payload.len() - 1];
        }
        let exchange = IncomingExchange {
            remote,
            message_id: message.message_id(),
            token: message.token(),
            confirmable,
            #[cfg(feature = "multicast")]
            group,
            local,
            on_loopback: local_addr.on_loopback,
            destination: local_addr.destination,
            dedup,
            #[cfg(feature = "block2-cache")]
            from_cache: false,
            acked: false,
            state: IncomingState::Waiting,
            body,
            block1,
            block2,
            observe,
            #[cfg(feature = "address-validation")]
            address_check: AddressCheck::None,
            #[cfg(feature = "oscore")]
            oscore: target.oscore,
        };
        let Some(key) = self.incoming.insert(exchange, datagram, &mut self.pool) else {
            self.stats.drop(DropCause::Overload);
            if multicast {
                return;
            }
            self.reply_busy(now, target);
            return;
        };
        if confirmable {
            self.messages
                .update_remembered(dedup, DedupState::Processing(IncomingId(key)));
        }
        let wait = if confirmable {
            self.config.piggyback_window
        } else {
            self.config.response_timeout
        };
        self.set_timer_for(TimerKind::Incoming, key, now + wait);
        // Without the body cache a later block is the application's to answer again.
        #[cfg(feature = "block2-cache")]
        if let Some(b) = block2.filter(|b| b.num > 0 && block1.is_none()) {
            let transfer = self.transfer_key(remote, message, target.oscore_context());
            if self.serve_cached_block(now, IncomingId(key), transfer, b) {
                return;
            }
        }
        if !self.push_event_for(AppId(0), Event::Request(IncomingId(key))) {
            self.remove_incoming(key);
        }
    }

    /// A duplicate of a request seen before: answer as the first time, never call the
    /// application again.
    pub(crate) fn handle_duplicate_request(
        &mut self,
        remote: SocketAddr,
        message: &Message<'_>,
        state: DedupState,
    ) {
        self.stats.duplicates += 1;
        if message.message_type() != MessageType::Confirmable {
            return;
        }
        match state {
            DedupState::Replied(reply) => {
                if self.messages.reply(reply).is_some() {
                    self.queue_datagram(remote, OutSource::Reply(reply));
                }
            }
            DedupState::EmptyAcked => {
                self.send_empty(
                    remote,
                    MessageType::Acknowledgement,
                    message.message_id(),
                    false,
                );
            }
            DedupState::Processing(_) | DedupState::Ignore => {}
        }
    }
}

const UNRECOGNISED_PREFIX: &[u8] = b"unrecognised critical option ";
const UNRECOGNISED_TEXT_LEN: usize = UNRECOGNISED_PREFIX.len() + 5;

/// `unrecognised critical option N`, the 4.02's diagnostic, written in `buf` by hand: a
/// node's flash would otherwise carry `core::fmt`'s machinery for this one number.
fn unrecognised_option_text(number: u16, buf: &mut [u8; UNRECOGNISED_TEXT_LEN]) -> &[u8] {
    let (prefix, digits) = buf.split_at_mut(UNRECOGNISED_PREFIX.len());
    prefix.copy_from_slice(UNRECOGNISED_PREFIX);
    let width = match number {
        0..=9 => 1,
        10..=99 => 2,
        100..=999 => 3,
        1_000..=9_999 => 4,
        _ => 5,
    };
    let mut n = number;
    for digit in digits[..width].iter_mut().rev() {
        *digit = b'0' + (n % 10) as u8;
        n /= 10;
    }
    &buf[..UNRECOGNISED_PREFIX.len() + width]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request of type `t` and `code` to `/path` with message ID and token `message_id`,
    /// and Block1 `block1` and `payload` when given, in `buf`; its length.
    #[cfg(any(
        not(feature = "block1-uploads"),
        not(feature = "fair-share"),
        not(feature = "multicast"),
        not(feature = "reply-cache")
    ))]
    fn request(
        buf: &mut [u8],
        (t, code, message_id): (MessageType, Code, u16),
        path: &[u8],
        block1: Option<Block>,
        payload: &[u8],
    ) -> usize {
        use covey_core::{MessageEncoder, OptionNumber};
        let (token, mut value) = (message_id.to_be_bytes(), [0u8; 4]);
        let mut m = MessageEncoder::new(buf, t, code, message_id, &token).unwrap();
        m.option(OptionNumber::URI_PATH, path).unwrap();
        if let Some(b) = block1 {
            m.option(OptionNumber::BLOCK1, b.encode(&mut value))
                .unwrap();
        }
        m.payload(payload).unwrap();
        m.finish()
    }

    /// A CON PUT of "on" to /led with Block1 `block`, in `buf`; its length.
    #[cfg(not(feature = "block1-uploads"))]
    fn put_with_block1(buf: &mut [u8], message_id: u16, block: Block) -> usize {
        let put = (MessageType::Confirmable, Code::PUT, message_id);
        request(buf, put, b"led", Some(block), b"on")
    }

    #[test]
    #[cfg(not(feature = "block1-uploads"))]
    fn without_uploads_a_body_whole_in_block_zero_is_served_and_more_blocks_are_refused() {
        use crate::{Config, Response};
        let mut ep = Endpoint::new(Config::mote(), 7).unwrap();
        let (remote, now) = ("[2001:db8::1]:5683".parse().unwrap(), Instant::from_secs(1));
        let mut buf = [0u8; 600];

        // Block 0 and no more: the request's own payload is the body, and the response
        // carries the Block1 option back (RFC 7959 §2.3).
        let whole = Block::new(0, false, 5).unwrap();
        let n = put_with_block1(&mut buf, 1, whole);
        ep.handle_datagram(now, remote, LocalAddr::UNICAST, &buf[..n]);
        let Some(Event::Request(id)) = ep.poll_event() else {
            panic!("the PUT is not delivered");
        };
        assert_eq!(ep.request(id).unwrap().message.payload(), b"on");
        ep.respond(now, id, &Response::new(Code::CHANGED)).unwrap();
        let t = ep.poll_transmit(now, &mut buf).unwrap();
        let reply = Message::parse(&buf[..t.size]).unwrap();
        assert_eq!(reply.code(), Code::CHANGED);
        assert_eq!(reply.block1(), Some(whole));

        // A first block of more: 4.02 Bad Option with a diagnostic, and no request.
        let first = Block::new(0, true, 0).unwrap();
        let n = put_with_block1(&mut buf, 2, first);
        ep.handle_datagram(now, remote, LocalAddr::UNICAST, &buf[..n]);
        assert!(ep.poll_event().is_none());
        let t = ep.poll_transmit(now, &mut buf).unwrap();
        let reply = Message::parse(&buf[..t.size]).unwrap();
        assert_eq!(reply.code(), Code::BAD_OPTION);
        assert_eq!(reply.message_id(), 2);
        assert_eq!(
            reply.payload(),
            b"Block1 uploads of more than one block are not supported"
        );
    }

    /// A CON GET of /temp with message ID and token `message_id`, in `buf`; its length.
    #[cfg(not(feature = "fair-share"))]
    fn get(buf: &mut [u8], message_id: u16) -> usize {
        get_of_type(buf, MessageType::Confirmable, message_id)
    }

    /// A GET of /temp of type `t` with message ID and token `message_id`, in `buf`; its
    /// length.
    #[cfg(any(not(feature = "fair-share"), not(feature = "multicast")))]
    fn get_of_type(buf: &mut [u8], t: MessageType, message_id: u16) -> usize {
        request(buf, (t, Code::GET, message_id), b"temp", None, b"")
    }

    #[test]
    #[cfg(not(feature = "multicast"))]
    fn without_multicast_a_request_to_a_group_is_dropped_unanswered() {
        use crate::stats::DropCause;
        use crate::{Config, Reception};
        let mut ep = Endpoint::new(Config::mote(), 7).unwrap();
        let (now, mut buf) = (Instant::from_secs(1), [0u8; 64]);
        let remote = "[2001:db8::1]:5683".parse().unwrap();
        let group = LocalAddr::multicast("ff05::fd".parse().unwrap());
        let n = get_of_type(&mut buf, MessageType::NonConfirmable, 1);
        assert_eq!(
            ep.handle_datagram(now, remote, group, &buf[..n]),
            Reception::Rejected(DropCause::MulticastSuppressed)
        );
        assert!(ep.poll_event().is_none());
        assert!(ep.poll_transmit(now, &mut buf).is_none());
        // The same request by unicast is taken.
        let n = get_of_type(&mut buf, MessageType::NonConfirmable, 2);
        assert_eq!(
            ep.handle_datagram(now, remote, LocalAddr::UNICAST, &buf[..n]),
            Reception::Accepted
        );
        assert!(matches!(ep.poll_event(), Some(Event::Request(_))));
    }

    /// The code, destination and payload of each datagram `ep` sends now.
    #[cfg(not(feature = "fair-share"))]
    fn sent(
        ep: &mut Endpoint,
        now: Instant,
    ) -> alloc::vec::Vec<(Code, SocketAddr, alloc::vec::Vec<u8>)> {
        let mut buf = [0u8; 600];
        core::iter::from_fn(|| {
            let t = ep.poll_transmit(now, &mut buf)?;
            let m = Message::parse(&buf[..t.size]).unwrap();
            Some((m.code(), t.destination, m.payload().to_vec()))
        })
        .collect()
    }

    #[test]
    #[cfg(not(feature = "fair-share"))]
    fn without_fair_shares_full_tables_refuse_newcomers_until_an_entry_leaves() {
        use crate::stats::DropCause;
        use crate::{AmplificationLimit, Config, Reception, Response};
        // The mote's profile: four incoming requests, four peers; every address may be
        // answered in full, as in the mote's server build.
        let config = Config {
            amplification: AmplificationLimit::off(),
            ..Config::mote()
        };
        let mut ep = Endpoint::new(config, 7).unwrap();
        let now = Instant::from_secs(1);
        let peer = |port: u16| SocketAddr::new("2001:db8::1".parse().unwrap(), port);
        let mut buf = [0u8; 64];
        let mut send = |ep: &mut Endpoint, port: u16| {
            let n = get(&mut buf, port);
            ep.handle_datagram(now, peer(port), LocalAddr::UNICAST, &buf[..n])
        };
        let mut waiting = alloc::vec::Vec::new();
        for port in 1..=4 {
            assert_eq!(send(&mut ep, port), Reception::Accepted);
            let Some(Event::Request(id)) = ep.poll_event() else {
                panic!("request {port} is not delivered");
            };
            waiting.push(id);
        }
        // Full of requests nobody answered yet: a newcomer gets 5.03 and is not delivered.
        let busy = (Code::SERVICE_UNAVAILABLE, peer(5), b"server busy".to_vec());
        assert_eq!(send(&mut ep, 5), Reception::Rejected(DropCause::Overload));
        assert!(ep.poll_event().is_none());
        assert_eq!(sent(&mut ep, now), [busy]);

        // One answered: its entry leaves, and its idle peer makes room for a new one.
        ep.respond(now, waiting[0], &Response::new(Code::CONTENT))
            .unwrap();
        assert_eq!(
            sent(&mut ep, now),
            [(Code::CONTENT, peer(1), alloc::vec![])]
        );
        assert_eq!(send(&mut ep, 7), Reception::Accepted);
        assert!(matches!(ep.poll_event(), Some(Event::Request(_))));
        assert_eq!(send(&mut ep, 8), Reception::Rejected(DropCause::Overload));
        assert_eq!(sent(&mut ep, now)[0].0, Code::SERVICE_UNAVAILABLE);
    }

    #[test]
    #[cfg(not(feature = "reply-cache"))]
    fn without_the_reply_cache_a_duplicate_safe_request_is_served_again_and_others_not() {
        use crate::{Config, Reception, Response};
        let mut ep = Endpoint::new(Config::mote(), 7).unwrap();
        let (remote, now) = ("[2001:db8::1]:5683".parse().unwrap(), Instant::from_secs(1));
        let (mut buf, mut out) = ([0u8; 64], [0u8; 64]);
        let mut answer = |ep: &mut Endpoint, datagram: &[u8], payload: &[u8]| {
            let reception = ep.handle_datagram(now, remote, LocalAddr::UNICAST, datagram);
            let Some(Event::Request(id)) = ep.poll_event() else {
                return (reception, None);
            };
            ep.respond(now, id, &Response::with_payload(Code::CONTENT, payload))
                .unwrap();
            let t = ep.poll_transmit(now, &mut out).unwrap();
            let reply = Message::parse(&out[..t.size]).unwrap();
            let seen = (
                reply.message_type(),
                reply.message_id(),
                reply.payload().to_vec(),
            );
            (reception, Some(seen))
        };
        let ack =
            |mid: u16, payload: &[u8]| Some((MessageType::Acknowledgement, mid, payload.to_vec()));

        // A GET and its duplicate (the ACK was lost): the application answers again, and the
        // duplicate's ACK carries its newer answer (RFC 7252 §4.5 allows it for safe requests).
        let n = request(
            &mut buf,
            (MessageType::Confirmable, Code::GET, 1),
            b"temp",
            None,
            b"",
        );
        assert_eq!(
            answer(&mut ep, &buf[..n], b"21.5"),
            (Reception::Accepted, ack(1, b"21.5"))
        );
        assert_eq!(
            answer(&mut ep, &buf[..n], b"21.6"),
            (Reception::Accepted, ack(1, b"21.6"))
        );

        // A POST's duplicate is neither handed to the application nor answered: its reply
        // was not kept.
        let n = request(
            &mut buf,
            (MessageType::Confirmable, Code::POST, 2),
            b"log",
            None,
            b"x",
        );
        assert_eq!(
            answer(&mut ep, &buf[..n], b"ok"),
            (Reception::Accepted, ack(2, b"ok"))
        );
        assert_eq!(
            answer(&mut ep, &buf[..n], b"ok"),
            (Reception::Duplicate, None)
        );
        assert!(ep.poll_transmit(now, &mut out).is_none());
    }

    #[test]
    fn the_diagnostic_names_any_option_number() {
        for (number, want) in [
            (0u16, &b"unrecognised critical option 0"[..]),
            (9, b"unrecognised critical option 9"),
            (10, b"unrecognised critical option 10"),
            (2_049, b"unrecognised critical option 2049"),
            (65_535, b"unrecognised critical option 65535"),
        ] {
            let mut buf = [0; UNRECOGNISED_TEXT_LEN];
            assert_eq!(unrecognised_option_text(number, &mut buf), want);
        }
    }
}
