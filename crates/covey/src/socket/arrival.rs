//! Whether a datagram came in on the loopback interface, from its packet info (IP_PKTINFO,
//! IPV6_PKTINFO), so that "local" rests on how it arrived and not on a source address anyone
//! on the network can write (a dual-stack socket takes `::ffff:127.0.0.1` from the wire).

use quinn_udp::RecvMeta;

use super::canonical_ip;

/// Linux numbers its loopback interface 1 in every network namespace (`LOOPBACK_IFINDEX`).
#[cfg(any(target_os = "linux", target_os = "android"))]
const LOOPBACK_INDEX: u32 = 1;

/// Whether the datagram of `meta` came in on the loopback interface; `None` when the
/// platform reports neither the interface nor the destination address.
pub(crate) fn on_loopback(meta: &RecvMeta) -> Option<bool> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if let Some(index) = meta.interface_index {
        return Some(index == LOOPBACK_INDEX);
    }
    // Elsewhere: only loopback carries datagrams to a loopback address (the kernel drops
    // them from other interfaces as martians).
    meta.dst_ip.map(|ip| canonical_ip(ip).is_loopback())
}

#[cfg(all(test, any(target_os = "linux", target_os = "android")))]
mod tests {
    use super::*;

    fn meta(index: Option<u32>, dst: Option<&str>) -> RecvMeta {
        let mut meta = RecvMeta::default();
        meta.interface_index = index;
        meta.dst_ip = dst.map(|d| d.parse().unwrap());
        meta
    }

    #[test]
    fn the_interface_decides_whatever_the_addresses() {
        assert_eq!(on_loopback(&meta(Some(1), Some("::1"))), Some(true));
        assert_eq!(on_loopback(&meta(Some(1), Some("192.0.2.1"))), Some(true));
        assert_eq!(
            on_loopback(&meta(Some(2), Some("::ffff:127.0.0.1"))),
            Some(false)
        );
        assert_eq!(
            on_loopback(&meta(None, Some("::ffff:127.0.0.1"))),
            Some(true)
        );
        assert_eq!(on_loopback(&meta(None, Some("fd00::1"))), Some(false));
        assert_eq!(on_loopback(&meta(None, None)), None);
    }
}
