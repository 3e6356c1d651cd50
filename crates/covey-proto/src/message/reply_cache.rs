//! Replies kept to answer duplicate CONs: the last `capacity` replies, stored back to back
//! (a two-byte length, then the datagram) in chunks of bytes that are reused oldest first.
//! A 30-byte ACK costs 32 bytes here, where a buffer of its own cost over 100. A cache too
//! small to share a chunk of largest replies among several (a mote's four) makes each chunk
//! at the size of the reply that opens it instead, so its replies are held at their size.
//! Without the `reply-cache` feature nothing is kept ([`ReplyRef::UNKEPT`]): every duplicate
//! finds no reply, as when the cache has turned over.

#[cfg(feature = "reply-cache")]
use crate::message::wire::{encode_into, Outgoing};
#[cfg(feature = "reply-cache")]
use crate::storage::fifo::Fifo;
#[cfg(feature = "reply-cache")]
use alloc::{boxed::Box, vec, vec::Vec};
#[cfg(feature = "reply-cache")]
use covey_core::EncodeError;

/// Bytes a chunk holds at most, unless one datagram needs more: a few pages, so the slack
/// at a chunk's end is small beside what it holds.
#[cfg(feature = "reply-cache")]
const CHUNK_TARGET: usize = 16 << 10;

/// Each reply is preceded by its length.
#[cfg(feature = "reply-cache")]
const LEN_PREFIX: usize = 2;

/// Where a cached reply lives; stale once its chunk is reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReplyRef {
    chunk: u32,
    generation: u32,
    offset: u32,
}

impl ReplyRef {
    /// A reply sent without being kept (no `reply-cache`): no cache holds it.
    pub const UNKEPT: ReplyRef = ReplyRef {
        chunk: u32::MAX,
        generation: 0,
        offset: 0,
    };
}

/// Without `reply-cache`: no reply is kept, so every duplicate finds none.
#[cfg(not(feature = "reply-cache"))]
#[derive(Debug)]
pub(crate) struct ReplyCache;

#[cfg(not(feature = "reply-cache"))]
impl ReplyCache {
    /// Keeps nothing.
    pub fn new(_capacity: usize, _max_message_size: usize) -> ReplyCache {
        ReplyCache
    }

    /// None: no reply is kept.
    pub fn get(&self, _: ReplyRef) -> Option<&[u8]> {
        None
    }
}

#[cfg(feature = "reply-cache")]
#[derive(Debug)]
struct Chunk {
    bytes: Box<[u8]>,
    used: usize,
    generation: u32,
    /// Sequence number of the last reply written here.
    newest: u64,
}

/// Chunks are made as replies need them; one is reused once all its replies are older
/// than the last `capacity`, so any of the last `capacity` replies can be resent, as from
/// a ring of `capacity` buffers, with hardly more bytes (`capacity` largest datagrams plus
/// two chunks) held in the worst case.
#[cfg(feature = "reply-cache")]
#[derive(Debug)]
pub(crate) struct ReplyCache {
    chunks: Vec<Chunk>,
    /// Chunk indices, oldest first; the last one is written to.
    order: Fifo<u32>,
    capacity: u64,
    /// The largest datagram kept.
    max_reply: usize,
    /// The least a chunk is made at: room for several largest replies, or, when a chunk
    /// would hold only one, none (each chunk then as large as the reply that opens it).
    chunk_bytes: usize,
    max_chunks: usize,
    /// Replies written so far.
    written: u64,
}

#[cfg(feature = "reply-cache")]
impl ReplyCache {
    /// Room for the last `capacity` replies of up to `max_message_size` bytes each (at
    /// least 1 and at most 65 535, as `Config::validate` makes them).
    pub fn new(capacity: usize, max_message_size: usize) -> ReplyCache {
        let max_reply = max_message_size;
        let record = LEN_PREFIX + max_reply;
        // A chunk is left only when the next reply does not fit, so it holds at least this
        // many replies; `capacity` replies then span at most `max_chunks` chunks. It is sized
        // for at most a quarter of them at their largest: on a small cache (a mote's four
        // replies) a chunk of `capacity` largest datagrams would mostly hold slack, while
        // small replies pack densely into chunks of one and are reused as the ring turns.
        // A chunk for one largest reply would mostly hold slack: chunks are then made at
        // the size their first reply needs, and take later replies while they fit.
        let per_chunk = (CHUNK_TARGET / record).clamp(1, capacity.div_ceil(4));
        ReplyCache {
            chunks: Vec::new(),
            order: Fifo::new(),
            capacity: capacity as u64,
            max_reply,
            chunk_bytes: if per_chunk == 1 {
                0
            } else {
                per_chunk * record
            },
            max_chunks: capacity.div_ceil(per_chunk) + 1,
            written: 0,
        }
    }

    /// Encodes `m` after the newest reply.
    pub fn encode(&mut self, m: &Outgoing<'_>) -> Result<ReplyRef, EncodeError> {
        let room = m.size_bound().min(self.max_reply);
        let index = self.chunk_with_room(LEN_PREFIX + room);
        let written = self.written + 1;
        let chunk = &mut self.chunks[index];
        let start = chunk.used;
        let body = start + LEN_PREFIX;
        let len = encode_into(m, &mut chunk.bytes[body..body + room])?;
        chunk.bytes[start..body].copy_from_slice(&(len as u16).to_be_bytes());
        chunk.used = body + len;
        chunk.newest = written;
        self.written = written;
        Ok(ReplyRef {
            chunk: index as u32,
            generation: chunk.generation,
            offset: start as u32,
        })
    }

    /// The chunk to write `need` bytes to: the newest if they fit, else the next one.
    fn chunk_with_room(&mut self, need: usize) -> usize {
        if let Some(&newest) = self.order.back() {
            let c = &self.chunks[newest as usize];
            if c.bytes.len() - c.used >= need {
                return newest as usize;
            }
        }
        let oldest_done = self
            .order
            .front()
            .is_some_and(|&i| self.written - self.chunks[i as usize].newest >= self.capacity);
        let reuse = if oldest_done || self.chunks.len() >= self.max_chunks {
            self.order.pop_front()
        } else {
            None
        };
        let size = need.max(self.chunk_bytes);
        let index = match reuse {
            Some(i) => {
                let c = &mut self.chunks[i as usize];
                // Whatever referred to this chunk is stale from here on.
                c.generation = c.generation.wrapping_add(1);
                c.used = 0;
                if c.bytes.len() < need {
                    c.bytes = vec![0; size].into_boxed_slice();
                }
                i
            }
            None => {
                self.chunks.push(Chunk {
                    bytes: vec![0; size].into_boxed_slice(),
                    used: 0,
                    generation: 0,
                    newest: 0,
                });
                (self.chunks.len() - 1) as u32
            }
        };
        self.order.push_back(index);
        index as usize
    }

    /// The reply, unless its chunk was reused since.
    pub fn get(&self, r: ReplyRef) -> Option<&[u8]> {
        let chunk = self
            .chunks
            .get(r.chunk as usize)
            .filter(|c| c.generation == r.generation)?;
        let start = r.offset as usize;
        let prefix = chunk.bytes.get(start..start + LEN_PREFIX)?;
        let len = u16::from_be_bytes([prefix[0], prefix[1]]) as usize;
        chunk
            .bytes
            .get(start + LEN_PREFIX..start + LEN_PREFIX + len)
    }

    /// Bytes held in chunks.
    #[cfg(test)]
    fn held_bytes(&self) -> usize {
        self.chunks.iter().map(|c| c.bytes.len()).sum()
    }
}

#[cfg(all(test, feature = "reply-cache"))]
mod tests {
    use super::*;
    use covey_core::{Code, MessageType};

    fn ack(mid: u16, payload: &[u8]) -> Outgoing<'_> {
        Outgoing {
            message_type: MessageType::Acknowledgement,
            code: Code::CONTENT,
            message_id: mid,
            token: &[1, 2, 3, 4],
            options: &[],
            extra: &[],
            payload,
        }
    }

    fn message_id(bytes: &[u8]) -> u16 {
        u16::from_be_bytes([bytes[2], bytes[3]])
    }

    #[test]
    fn the_last_capacity_replies_stay_whatever_their_sizes() {
        let capacity = 100;
        let mut cache = ReplyCache::new(capacity, 1280);
        let big = [7u8; 1200];
        let mut refs = Vec::new();
        for mid in 0..1000u16 {
            // Small and large replies mixed, so chunks end with slack of all sizes.
            let payload: &[u8] = if mid % 7 == 0 { &big } else { b"12:00" };
            refs.push(cache.encode(&ack(mid, payload)).unwrap());
        }
        for (mid, r) in refs.iter().enumerate().skip(1000 - capacity) {
            let bytes = cache.get(*r).expect("one of the last `capacity` replies");
            assert_eq!(message_id(bytes), mid as u16);
            let expected = if mid % 7 == 0 {
                4 + 4 + 1 + 1200
            } else {
                4 + 4 + 1 + 5
            };
            assert_eq!(bytes.len(), expected);
        }
        assert!(
            cache.get(refs[0]).is_none(),
            "the oldest reply was overwritten"
        );
        // Never more than a ring of `capacity` largest datagrams, plus two chunks.
        assert!(cache.held_bytes() <= capacity * 1282 + 2 * cache.chunk_bytes);
    }

    #[test]
    fn small_replies_share_chunks_and_chunks_are_reused() {
        let mut cache = ReplyCache::new(1000, 1280);
        for mid in 0..10_000u16 {
            cache.encode(&ack(mid, b"")).unwrap();
        }
        // 1 000 replies of 10 bytes (prefix included) need one chunk and the one being
        // filled, where 1 000 buffers of their own would take 64 KiB and more.
        assert!(
            cache.held_bytes() <= 2 * cache.chunk_bytes,
            "{} B held",
            cache.held_bytes()
        );
    }

    #[test]
    fn a_small_cache_holds_its_replies_at_their_size() {
        // A mote's cache: four replies of up to 576 bytes, where a chunk would hold one.
        let mut cache = ReplyCache::new(4, 576);
        let mut refs = Vec::new();
        for mid in 0..100u16 {
            refs.push(cache.encode(&ack(mid, b"21.5")).unwrap());
        }
        // Five 15-byte records (the prefix, a 9-byte header and token, the payload marker and
        // 4 bytes; the encoder's bound adds no more) where chunks of 578 took 1 156 B.
        assert!(
            cache.held_bytes() <= 5 * 32,
            "{} B held",
            cache.held_bytes()
        );
        for (mid, r) in refs.iter().enumerate().skip(96) {
            assert_eq!(message_id(cache.get(*r).unwrap()), mid as u16);
        }
        // A large reply grows the chunk it reuses; the small ones around it stay.
        let big = [1u8; 500];
        let r = cache.encode(&ack(100, &big)).unwrap();
        assert_eq!(cache.get(r).unwrap().len(), 4 + 4 + 1 + 500);
        for mid in 101..104u16 {
            refs.push(cache.encode(&ack(mid, b"21.5")).unwrap());
        }
        assert_eq!(message_id(cache.get(r).unwrap()), 100);
        assert!(
            cache.held_bytes() <= 4 * 32 + 2 + 509 + 32,
            "{} B held",
            cache.held_bytes()
        );
    }

    #[test]
    fn a_reply_too_large_for_a_datagram_is_refused() {
        let mut cache = ReplyCache::new(4, 64);
        assert!(cache.encode(&ack(1, &[0u8; 100])).is_err());
        let r = cache.encode(&ack(2, b"ok")).unwrap();
        assert_eq!(message_id(cache.get(r).unwrap()), 2);
    }
}
