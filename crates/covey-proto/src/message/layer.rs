//! The message layer's own state besides the peers and the confirmable transmissions:
//! what it remembers of messages received (deduplication, RFC 7252 §4.5), the replies it
//! keeps for duplicates, the datagrams waiting for `poll_transmit` and the local sockets
//! they leave from (§5.3.2).
//!
//! [`Messages`] keeps these private; the layers above remember, recall and queue through
//! its methods, lending it the peers and buffers it reads as arguments.

use crate::config::Config;
use crate::message::dedup::{DedupCache, DedupHandle, DedupKey, DedupState};
use crate::message::empty::empty;
use crate::message::local_socket::{source_socket, LocalSockets};
use crate::message::outbox::{LocalId, OutSource, Outbox};
use crate::message::peer::PeerTable;
use crate::message::reply_cache::{ReplyCache, ReplyRef};
use crate::message::wire::Outgoing;
use crate::storage::buffer_pool::BufferPool;
#[cfg(feature = "client")]
use crate::storage::datagram_buf::DatagramBuf;
use crate::Instant;
use core::net::SocketAddr;
use covey_core::MessageType;

/// Why [`Messages::encode_out`] put no datagram out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OutFailure {
    /// No outbox slot was free.
    NoRoom,
    /// It did not encode within a datagram.
    TooLarge,
}

/// Deduplication, the reply cache, the outbox and the local sockets.
#[derive(Debug)]
pub(crate) struct Messages {
    dedup: DedupCache,
    replies: ReplyCache,
    outbox: Outbox,
    /// Local socket addresses seen, so queued datagrams and peers name them by index + 1.
    locals: LocalSockets,
    /// The local socket of the datagram or request being answered now, if any.
    replying_from: LocalId,
}

impl Messages {
    /// The state `config` bounds; `seed` keys the deduplication index.
    pub fn new(config: &Config, seed: u64) -> Messages {
        Messages {
            dedup: DedupCache::new(config.max_dedup_entries, seed),
            replies: ReplyCache::new(config.max_buffers / 2, config.max_message_size),
            outbox: Outbox::new(config.max_buffers / 2, config.max_buffers * 2),
            locals: LocalSockets::default(),
            replying_from: LocalId::default(),
        }
    }

    /// The state of an earlier copy of this exact message, if remembered.
    pub fn recall(&self, key: &DedupKey, fingerprint: u64) -> Option<DedupState> {
        self.dedup.lookup(key, fingerprint)
    }

    /// Remembers a new message until `expires`, replacing any entry with the same key.
    pub fn remember(
        &mut self,
        now: Instant,
        key: DedupKey,
        fingerprint: u64,
        state: DedupState,
        expires: Instant,
    ) -> DedupHandle {
        self.dedup.insert(now, key, fingerprint, state, expires)
    }

    /// Moves a remembered message to a new state (e.g. once the application answered).
    pub fn update_remembered(&mut self, handle: DedupHandle, state: DedupState) {
        self.dedup.update(handle, state);
    }

    /// Forgets the messages whose lifetime ended.
    pub fn expire(&mut self, now: Instant) {
        self.dedup.expire(now);
    }

    /// A cached reply, unless its space was reused since.
    pub fn reply(&self, reply: ReplyRef) -> Option<&[u8]> {
        self.replies.get(reply)
    }

    /// Encodes `m` for the caller to queue: with `keep`, as a reply kept in the reply cache
    /// for duplicates of what it answers (without `reply-cache`, kept only until it is
    /// sent, as any other), else into an outbox slot, sent once.
    pub fn encode_out(
        &mut self,
        pool: &mut BufferPool,
        m: &Outgoing<'_>,
        keep: bool,
    ) -> Result<OutSource, OutFailure> {
        #[cfg(feature = "reply-cache")]
        if keep {
            let reply = self.replies.encode(m).map_err(|_| OutFailure::TooLarge)?;
            return Ok(OutSource::Reply(reply));
        }
        #[cfg(not(feature = "reply-cache"))]
        let _ = keep;
        let slot = self.outbox.take_slot().ok_or(OutFailure::NoRoom)?;
        if self.outbox.buf_mut(slot).encode(m, pool).is_err() {
            self.outbox.release(slot, pool);
            return Err(OutFailure::TooLarge);
        }
        Ok(OutSource::Slot(slot))
    }

    /// A free outbox slot to encode a datagram into, if any.
    // Requests of our own are encoded in place (the client side).
    #[cfg(feature = "client")]
    pub fn take_slot(&mut self) -> Option<usize> {
        self.outbox.take_slot()
    }

    /// The buffer of outbox slot `slot`.
    // Requests of our own are encoded in place (the client side).
    #[cfg(feature = "client")]
    pub fn slot_mut(&mut self, slot: usize) -> &mut DatagramBuf {
        self.outbox.buf_mut(slot)
    }

    /// The datagram in outbox slot `slot`.
    pub fn slot(&self, slot: usize) -> &[u8] {
        self.outbox.buf(slot)
    }

    /// Gives outbox slot `slot` back.
    pub fn release_slot(&mut self, slot: usize, pool: &mut BufferPool) {
        self.outbox.release(slot, pool);
    }

    /// Queues a datagram for `poll_transmit`, from the socket being answered from, else the
    /// one the destination last reached (as `peers` know it). Returns false when the queue
    /// was full and the datagram dropped.
    pub fn queue(
        &mut self,
        peers: &PeerTable,
        pool: &mut BufferPool,
        destination: SocketAddr,
        source: OutSource,
    ) -> bool {
        let local = source_socket(self.replying_from, peers, destination);
        self.outbox.push(destination, source, local, pool)
    }

    /// Encodes an empty ACK or RST with message ID `mid`, kept for duplicates with
    /// `cache` (see [`Messages::encode_out`]); `None` when there was no room. The caller
    /// queues it.
    pub fn encode_empty(
        &mut self,
        pool: &mut BufferPool,
        message_type: MessageType,
        mid: u16,
        cache: bool,
    ) -> Option<OutSource> {
        self.encode_out(pool, &empty(message_type, mid), cache).ok()
    }

    /// True when no datagram waits in the outbox.
    pub fn nothing_queued(&self) -> bool {
        self.outbox.is_empty()
    }

    /// The next queued datagram: its destination, where it lies and the socket it leaves
    /// from.
    pub fn pop(&mut self) -> Option<(SocketAddr, OutSource, LocalId)> {
        self.outbox.pop()
    }

    /// The local socket address interned as `id`.
    pub fn local_addr(&self, id: LocalId) -> Option<SocketAddr> {
        self.locals.addr(id)
    }

    /// Interns a local socket address (unknown past a bound on their number).
    pub fn intern_local(&mut self, socket: Option<SocketAddr>) -> LocalId {
        self.locals.intern(socket)
    }

    /// The local socket of the datagram or request being answered now, if any.
    pub fn replying_from(&self) -> LocalId {
        self.replying_from
    }

    /// Answers from `local` until the next call; returns the socket answered from before,
    /// to restore once done.
    pub fn set_replying_from(&mut self, local: LocalId) -> LocalId {
        core::mem::replace(&mut self.replying_from, local)
    }
}
