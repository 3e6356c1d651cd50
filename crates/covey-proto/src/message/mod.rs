//! The message layer (RFC 7252 §4): encoding, empty ACK and RST, deduplication, the reply cache, confirmable
//! transmissions and their retransmission, per-peer message IDs and RTO, the options the engine recognises, the datagrams at the engine boundary,
//! and the queue of datagrams waiting for `poll_transmit`.

pub(crate) mod datagram;
pub(crate) mod dedup;
pub(crate) mod empty;
pub(crate) mod layer;
pub(crate) mod local_socket;
pub(crate) mod option_rules;
pub(crate) mod outbox;
pub(crate) mod peer;
pub(crate) mod reliability;
pub(crate) mod reply_cache;
pub(crate) mod transmission;
pub(crate) mod transmission_index;
pub(crate) mod wire;
