//! The client exchange table: the requests this endpoint sent and has not finished, the
//! request each keeps to send again, the index by token that responses are matched with, and
//! the NSTART count and queue per peer (RFC 7252 §4.7, §5.3.2).
//!
//! [`ClientExchanges`] keeps them together behind a small API, so that an exchange cannot
//! leave the table without leaving the index and its peer's queue too: insert, look up by key,
//! slot index (timers) or token, remove, and the NSTART operations that link queued exchanges
//! through the table. The exchange files take what else they need (the buffer pool, the peer
//! table, timers) from the endpoint and pass it in.

use crate::exchange::client_exchange::{ClientExchange, ExchangeKind, ExchangeState};
use crate::exchange::nstart::Nstart;
use crate::hash::{seeded_map, Map};
use crate::message::peer::PeerKey;
use crate::storage::buffer_pool::BufferPool;
use crate::storage::datagram_buf::{DatagramBuf, SlotBufs};
use crate::storage::slab::{Slab, SlabKey};
use covey_core::{EncodeError, Token};

use crate::message::wire::Outgoing;

/// Why an exchange could not be inserted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InsertError {
    /// The table is full.
    Full,
    /// The request does not fit a datagram buffer.
    TooLarge,
}

/// Every client exchange, its stored request, the token index and the NSTART state.
#[derive(Debug)]
pub(crate) struct ClientExchanges {
    table: Slab<ClientExchange>,
    /// The request of each exchange as first encoded, at the index of its slot.
    templates: SlotBufs,
    /// Requests (not pings) by token, for matching responses.
    tokens: Map<Token, SlabKey>,
    nstart: Nstart,
}

impl ClientExchanges {
    /// A table of at most `capacity` exchanges; `seed` keys the token index.
    pub fn new(capacity: usize, seed: u64) -> ClientExchanges {
        ClientExchanges {
            table: Slab::with_capacity(capacity),
            templates: SlotBufs::default(),
            tokens: seeded_map(seed),
            nstart: Nstart::default(),
        }
    }

    /// Stores `exchange` with `template` encoded as its request. The token is not indexed
    /// until [`ClientExchanges::index_token`], so an exchange refused after this can be
    /// taken back with [`ClientExchanges::discard`].
    pub fn insert(
        &mut self,
        exchange: ClientExchange,
        template: &Outgoing<'_>,
        pool: &mut BufferPool,
    ) -> Result<SlabKey, InsertError> {
        let key = self.table.insert(exchange).map_err(|_| InsertError::Full)?;
        let encoded: Result<(), EncodeError> =
            self.templates.slot(key.index()).encode(template, pool);
        if encoded.is_err() {
            self.table.remove(key);
            return Err(InsertError::TooLarge);
        }
        Ok(key)
    }

    /// Takes back an exchange just inserted and refused; its slot's buffer stays for the
    /// next exchange in the slot.
    pub fn discard(&mut self, key: SlabKey) {
        self.table.remove(key);
    }

    /// Makes request `key` findable by its token.
    pub fn index_token(&mut self, key: SlabKey) {
        if let Some(ex) = self.table.get(key) {
            if ex.kind == ExchangeKind::Request {
                self.tokens.insert(ex.token, key);
            }
        }
    }

    /// Removes exchange `key`: its stored request goes back to `pool`, its token leaves the
    /// index and, if it waits for an NSTART slot, it leaves its peer's queue. Its NSTART slot,
    /// if it holds one, is the caller's to give back ([`ClientExchanges::uncount`]).
    pub fn remove(&mut self, key: SlabKey, pool: &mut BufferPool) -> Option<ClientExchange> {
        let ex = self.table.remove(key)?;
        self.templates.release(key.index(), pool);
        if ex.kind == ExchangeKind::Request && self.tokens.get(&ex.token) == Some(&key) {
            self.tokens.remove(&ex.token);
        }
        if ex.state == ExchangeState::Queued && !ex.counted {
            self.nstart
                .unlink(&mut self.table, ex.peer, key, ex.next_queued);
        }
        Some(ex)
    }

    pub fn get(&self, key: SlabKey) -> Option<&ClientExchange> {
        self.table.get(key)
    }

    pub fn get_mut(&mut self, key: SlabKey) -> Option<&mut ClientExchange> {
        self.table.get_mut(key)
    }

    /// The exchange in slot `index` (a timer names exchanges by slot).
    pub fn key_at(&self, index: usize) -> Option<SlabKey> {
        self.table.key_at(index)
    }

    /// The number of slots, for walking them with [`ClientExchanges::key_at`].
    pub fn capacity(&self) -> usize {
        self.table.capacity()
    }

    /// Exchanges outstanding, queued ones included.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// The request exchange `token` names, if one is outstanding.
    pub fn by_token(&self, token: &Token) -> Option<SlabKey> {
        self.tokens.get(token).copied()
    }

    /// Whether an outstanding request uses `token`.
    pub fn token_in_use(&self, token: &Token) -> bool {
        self.tokens.contains_key(token)
    }

    /// The request exchange `key` keeps (empty when it has none).
    pub fn template(&self, key: SlabKey) -> &[u8] {
        self.templates.get(key.index())
    }

    /// Replaces the request exchange `key` keeps with `updated`, leaving the old one there.
    pub fn swap_template(&mut self, key: SlabKey, updated: &mut DatagramBuf) {
        core::mem::swap(self.templates.slot(key.index()), updated);
    }

    /// The number of exchanges to `peer` counting against NSTART.
    pub fn in_flight(&self, peer: PeerKey) -> usize {
        self.nstart.in_flight(peer)
    }

    /// The number of exchanges to `peer` waiting for an NSTART slot.
    pub fn queued(&self, peer: PeerKey) -> usize {
        self.nstart.queued(peer)
    }

    /// Whether an exchange to `peer` may start at once: a slot is free and none is waiting.
    pub fn may_start(&self, peer: PeerKey, nstart: usize) -> bool {
        self.nstart.may_start(peer, nstart)
    }

    /// An exchange to `peer` is in flight or queued, so the peer must stay.
    pub fn is_busy(&self, peer: PeerKey) -> bool {
        self.nstart.is_busy(peer)
    }

    /// Exchange `key` takes one of `peer`'s NSTART slots.
    pub fn count(&mut self, peer: PeerKey, key: SlabKey) {
        self.nstart.count(peer);
        if let Some(ex) = self.table.get_mut(key) {
            ex.counted = true;
        }
    }

    /// One exchange to `peer` no longer holds an NSTART slot.
    pub fn uncount(&mut self, peer: PeerKey) {
        self.nstart.uncount(peer);
    }

    /// Appends exchange `key` to `peer`'s NSTART queue.
    pub fn enqueue(&mut self, peer: PeerKey, key: SlabKey) {
        self.nstart.enqueue(&mut self.table, peer, key);
    }

    /// Takes the oldest exchange waiting in `peer`'s queue out of it, if a slot is free.
    pub fn next_to_start(&mut self, peer: PeerKey, nstart: usize) -> Option<SlabKey> {
        self.nstart.next_to_start(&mut self.table, peer, nstart)
    }

    /// Marks `peer`'s queue as being started; see [`Nstart::start_starting`].
    pub fn start_starting(&mut self, peer: PeerKey) -> Option<Option<PeerKey>> {
        self.nstart.start_starting(peer)
    }

    /// Restores the queue being started before; see [`Nstart::stop_starting`].
    pub fn stop_starting(&mut self, outer: Option<PeerKey>) {
        self.nstart.stop_starting(outer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;
    use covey_core::{Code, MessageType};

    fn exchange(peer: PeerKey, token: Token, kind: ExchangeKind) -> ClientExchange {
        crate::exchange::client_exchange::queued_for_test(peer, token, kind)
    }

    fn get(token: &[u8]) -> Outgoing<'_> {
        Outgoing {
            message_type: MessageType::Confirmable,
            code: Code::GET,
            message_id: 0,
            token,
            options: &[],
            extra: &[],
            payload: &[],
        }
    }

    /// A peer key, from a slab standing in for the peer table.
    fn peer() -> (Slab<()>, PeerKey) {
        let mut peers = Slab::with_capacity(1);
        let key = peers.insert(()).unwrap();
        (peers, key)
    }

    fn token(n: u8) -> Token {
        Token::new(&[n]).unwrap()
    }

    #[test]
    fn a_request_is_found_by_token_only_once_indexed_and_until_removed() {
        let (_peers, p) = peer();
        let mut pool = BufferPool::new(1152, 4096);
        let mut table = ClientExchanges::new(2, 7);
        let key = table
            .insert(
                exchange(p, token(1), ExchangeKind::Request),
                &get(&[1]),
                &mut pool,
            )
            .unwrap();
        assert!(!table.token_in_use(&token(1)));
        assert!(!table.template(key).is_empty());
        table.index_token(key);
        assert_eq!(table.by_token(&token(1)), Some(key));
        assert_eq!(table.len(), 1);
        assert!(table.remove(key, &mut pool).is_some());
        assert_eq!(table.by_token(&token(1)), None);
        assert!(table.template(key).is_empty());
        assert_eq!(table.len(), 0);
        assert!(table.remove(key, &mut pool).is_none());
    }

    #[test]
    fn a_ping_is_not_indexed_and_a_full_table_refuses() {
        let (_peers, p) = peer();
        let mut pool = BufferPool::new(1152, 4096);
        let mut table = ClientExchanges::new(1, 7);
        let key = table
            .insert(
                exchange(p, Token::default(), ExchangeKind::Ping),
                &get(&[]),
                &mut pool,
            )
            .unwrap();
        table.index_token(key);
        assert!(!table.token_in_use(&Token::default()));
        let refused = table.insert(
            exchange(p, token(2), ExchangeKind::Request),
            &get(&[2]),
            &mut pool,
        );
        assert_eq!(refused, Err(InsertError::Full));
        table.discard(key);
        assert_eq!(table.len(), 0);
    }

    #[test]
    fn removing_a_queued_exchange_takes_it_out_of_its_peers_queue() {
        let (_peers, p) = peer();
        let mut pool = BufferPool::new(1152, 4096);
        let mut table = ClientExchanges::new(3, 7);
        let keys: Vec<SlabKey> = (1..=3)
            .map(|n| {
                let k = table
                    .insert(
                        exchange(p, token(n), ExchangeKind::Request),
                        &get(&[n]),
                        &mut pool,
                    )
                    .unwrap();
                table.index_token(k);
                table.enqueue(p, k);
                k
            })
            .collect();
        assert_eq!(table.queued(p), 3);
        assert!(table.is_busy(p) && !table.may_start(p, 1));
        table.remove(keys[1], &mut pool);
        assert_eq!(table.queued(p), 2);
        assert_eq!(table.next_to_start(p, 1), Some(keys[0]));
        table.count(p, keys[0]);
        assert!(table.get(keys[0]).is_some_and(|e| e.counted));
        assert_eq!(table.in_flight(p), 1);
        assert_eq!(table.next_to_start(p, 1), None);
        // A counted exchange leaves no queue; its slot is the caller's to give back.
        table.remove(keys[0], &mut pool);
        assert_eq!(table.in_flight(p), 1);
        table.uncount(p);
        assert_eq!(table.next_to_start(p, 1), Some(keys[2]));
        assert_eq!(table.queued(p), 0);
    }
}
