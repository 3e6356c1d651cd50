//! The engine configuration of the CoAP client the proxy sends with.

use covey_proto::Duration;

/// RFC 7252's parameters with `nstart` requests at once per server, and message IDs that
/// may come round after one second instead of EXCHANGE_LIFETIME.
///
/// RFC 7252 §4.4 wants an ID not reused towards a server within EXCHANGE_LIFETIME
/// (247 s), which caps the proxy at 65 536 requests per 247 s (265/s) towards one server;
/// past that, requests would fail until IDs come free, while HTTP clients and scripts easily
/// send more to one device. With one second, IDs come round within EXCHANGE_LIFETIME only
/// towards a server that gets more than 265 requests a second; one that deduplicates on the
/// ID alone may then take a request for a retransmission, one that also compares the token
/// (covey, libcoap) is not affected. The same choice as `covey serve` and the Entity Manager.
pub fn config(nstart: usize) -> covey::Config {
    let mut c = covey::Config::default();
    c.transmission.nstart = nstart;
    c.mid_reuse_interval = Some(Duration::from_secs(1));
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_come_round_sooner_than_exchange_lifetime_and_nstart_is_kept() {
        let c = config(8);
        assert_eq!(c.transmission.nstart, 8);
        assert!(c.mid_reuse() < c.transmission.exchange_lifetime());
    }
}
