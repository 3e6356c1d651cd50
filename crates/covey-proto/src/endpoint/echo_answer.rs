//! The client's side of Echo (RFC 9175 §2.3): a 4.01 Unauthorized carrying Echo makes the
//! engine send the request again with that value, transparently; a first Block2 block cut
//! smaller than the client asked for and carrying Echo makes it start the download again
//! with the value and its own block size; an Echo value in any other block goes with the
//! next block request, and one in any other response with the next request to that server.

use crate::endpoint::Endpoint;
use crate::exchange::kept_echoes::KeptEcho;
use crate::message::wire::reencode;
use crate::storage::datagram_buf::DatagramBuf;
use crate::storage::slab::SlabKey;
use crate::Instant;
use alloc::boxed::Box;
use core::net::SocketAddr;
use covey_core::{Block, CoapOption, Code, Message, OptionNumber};

/// How often one request is sent again with a new Echo value before the 4.01 is delivered.
pub(crate) const MAX_ECHO_RETRIES: u8 = 2;

impl Endpoint {
    /// Acts on the Echo option of response `m` to exchange `key`: a 4.01 sends the request
    /// again carrying the value (returns true: nothing is delivered), any other response
    /// keeps the value for the next request to `source`.
    pub(crate) fn answer_echo(
        &mut self,
        now: Instant,
        key: SlabKey,
        source: SocketAddr,
        m: &Message<'_>,
    ) -> bool {
        let Some(echo) = m
            .options()
            .find(|o| o.number == OptionNumber::ECHO)
            .and_then(|o| KeptEcho::new(o.value))
        else {
            return false;
        };
        let Some(ex) = self.exchanges.get_mut(key) else {
            return false;
        };
        if !ex.multicast && m.code() != Code::UNAUTHORIZED {
            if let Some(block) = m.block2().filter(|b| b.more) {
                return self.continue_with_echo(now, key, block, &echo);
            }
        }
        if m.code() != Code::UNAUTHORIZED || ex.multicast || ex.echo_retries >= MAX_ECHO_RETRIES {
            self.kept_echoes.keep(source, echo);
            return false;
        }
        ex.echo_retries += 1;
        if let Some(t) = ex.transfer.as_mut() {
            // The server took the whole upload in before refusing: send all of it again.
            if let Some(sent) = t.upload_block {
                t.upload_block = Block::new(0, true, sent.szx).ok();
            }
        }
        if !self.put_echo_in_template(key, echo.value()) {
            return false;
        }
        self.stats.echo_retries += 1;
        self.transmit_exchange(now, key, false);
        true
    }

    /// A Block2 block `block` with more to come carried Echo: the value goes with the next
    /// block request. When it is the first block and smaller than the one the client
    /// wanted, the server cut it for an unverified address, so the download starts again
    /// at block 0 with the value and the wanted size (returns true: nothing is delivered).
    fn continue_with_echo(
        &mut self,
        now: Instant,
        key: SlabKey,
        block: Block,
        echo: &KeptEcho,
    ) -> bool {
        if !self.put_echo_in_template(key, echo.value()) {
            return false;
        }
        let block_szx = self.config.block_szx;
        // Only a safe method may be sent again from the start (an unsafe one was carried out).
        let safe = Message::parse(self.exchanges.template(key))
            .is_ok_and(|m| matches!(m.code(), Code::GET | Code::FETCH));
        let Some(ex) = self.exchanges.get_mut(key) else {
            return false;
        };
        let wanted = ex
            .transfer
            .as_ref()
            .and_then(|t| t.download_block)
            .map_or(block_szx, |b| b.szx);
        if !safe || block.num != 0 || block.szx >= wanted || ex.echo_retries >= MAX_ECHO_RETRIES {
            return false;
        }
        ex.echo_retries += 1;
        let t = ex.transfer.get_or_insert_with(Box::default);
        t.download.clear();
        t.etag = None;
        t.download_block = Block::new(0, false, wanted).ok();
        self.stats.echo_retries += 1;
        self.transmit_exchange(now, key, false);
        true
    }

    /// Replaces the Echo option of exchange `key`'s stored request with `value`.
    fn put_echo_in_template(&mut self, key: SlabKey, value: &[u8]) -> bool {
        let template = self.exchanges.template(key);
        let payload = Message::parse(template).map_or(&[][..], |m| m.payload());
        let extra = [CoapOption {
            number: OptionNumber::ECHO,
            value,
        }];
        let mut updated = DatagramBuf::default();
        let ok = reencode(
            template,
            0,
            &[OptionNumber::ECHO],
            &extra,
            payload,
            &mut updated,
            &mut self.pool,
        )
        .is_ok();
        if ok {
            self.exchanges.swap_template(key, &mut updated);
        }
        updated.release(&mut self.pool);
        ok
    }
}
