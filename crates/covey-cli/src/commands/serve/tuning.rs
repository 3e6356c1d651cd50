//! The engine configuration of `covey serve`: RFC 7252 transmission parameters, with tables
//! sized for a busy server (thousands of clients and observers, hundreds of thousands of
//! requests per second) instead of the library's small defaults. Every table is allocated
//! up front, so these sizes are also what bounds the server's memory (about 50 MB here,
//! mostly 1280-byte datagram buffers).

use covey::Config;
use covey_proto::Duration;

/// Observers the server keeps at once.
pub const MAX_OBSERVERS: usize = 12_288;

/// The configuration `covey serve` starts from.
pub fn config() -> Config {
    Config {
        max_peers: 4096,
        max_incoming: 1024,
        max_dedup_entries: 16_384,
        max_observers: MAX_OBSERVERS,
        // Half the buffers bound the outgoing queue and half the reply cache, which keeps
        // the piggy-backed answer to every observer's registration for a retransmission.
        // A NON notification round takes no room in the queue (it is written as it is sent).
        max_buffers: 2 * MAX_OBSERVERS + 1024,
        // RFC 7252 §4.4 wants a message ID not reused towards a peer within
        // EXCHANGE_LIFETIME (247 s), which caps what the server can send with IDs of its own
        // (NON responses, separate responses, notifications) at 65 536 messages per peer per
        // 247 s, 265/s. A busy client (a load generator, a gateway holding thousands of
        // observations) needs more, and the server would drop those messages. With 1 s, IDs
        // come round sooner only for a peer that gets more than 65 536 messages per second
        // from us; such a peer, if it deduplicates on the message ID alone, may take one for
        // a duplicate, while one that also checks the token (as covey does) is not affected.
        // Piggy-backed responses carry the request's ID and are never affected.
        mid_reuse_interval: Some(Duration::from_secs(1)),
        ..Config::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_observers_registration_reply_fits_the_reply_cache() {
        let c = config();
        assert!(c.max_buffers / 2 >= c.max_observers);
        assert!(c.mid_reuse() < c.transmission.exchange_lifetime());
    }
}
