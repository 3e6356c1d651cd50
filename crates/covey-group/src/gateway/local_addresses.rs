//! The addresses a wildcard-bound gateway is reached at: the host's interface addresses, read
//! from Linux's `/proc/net/if_inet6` (IPv6) and `/proc/net/fib_trie` (IPv4), so the Entity
//! Manager can recognise URIs naming itself.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// The addresses `bind` is reached at, on its port: itself, or for an unspecified address
/// every interface address of its family (`[::]` is dual-stack, so IPv4 ones too).
/// Loopback addresses come last; IPv6 link-local ones are left out (their URIs need a zone).
pub fn reached_at(bind: SocketAddr) -> Vec<SocketAddr> {
    if !bind.ip().is_unspecified() {
        return vec![bind];
    }
    let mut ips: Vec<IpAddr> = Vec::new();
    if bind.is_ipv6() {
        let text = std::fs::read_to_string("/proc/net/if_inet6").unwrap_or_default();
        ips.extend(ipv6_addresses(&text).into_iter().map(IpAddr::V6));
        if ips.is_empty() {
            ips.push(IpAddr::V6(Ipv6Addr::LOCALHOST));
        }
    }
    let text = std::fs::read_to_string("/proc/net/fib_trie").unwrap_or_default();
    let v4 = ipv4_addresses(&text);
    if v4.is_empty() {
        ips.push(IpAddr::V4(Ipv4Addr::LOCALHOST));
    }
    ips.extend(v4.into_iter().map(IpAddr::V4));
    // Stable: the order read, loopback last.
    ips.sort_by_key(|ip| ip.is_loopback());
    let mut seen = Vec::new();
    for ip in ips {
        if !seen.contains(&ip) {
            seen.push(ip);
        }
    }
    seen.into_iter()
        .map(|ip| SocketAddr::new(ip, bind.port()))
        .collect()
}

/// The addresses of `/proc/net/if_inet6` (`<32 hex digits> <index> <prefix> <scope> <flags>
/// <name>` per line), without link-local ones (scope 0x20).
fn ipv6_addresses(text: &str) -> Vec<Ipv6Addr> {
    let mut out = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [hex, _index, _prefix, scope, ..] = fields.as_slice() else {
            continue;
        };
        if *scope == "20" || hex.len() != 32 {
            continue;
        }
        let Ok(bits) = u128::from_str_radix(hex, 16) else {
            continue;
        };
        let addr = Ipv6Addr::from(bits);
        if !out.contains(&addr) {
            out.push(addr);
        }
    }
    out
}

/// The local host addresses of `/proc/net/fib_trie`: each `|-- A.B.C.D` line followed by a
/// `/32 host LOCAL` line.
fn ipv4_addresses(text: &str) -> Vec<Ipv4Addr> {
    let mut out = Vec::new();
    let mut last: Option<Ipv4Addr> = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some(addr) = line.strip_prefix("|-- ") {
            last = addr.trim().parse().ok();
        } else if line == "/32 host LOCAL" {
            if let Some(addr) = last.take() {
                if !out.contains(&addr) {
                    out.push(addr);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_proc_files() {
        let v6 = "fd000000000000000000000000000002 04 40 00 82     eth0\n\
                  00000000000000000000000000000001 01 80 10 80       lo\n\
                  fe8000000000000000fc00fffe000001 04 40 20 80     eth0\n";
        assert_eq!(
            ipv6_addresses(v6),
            ["fd00::2".parse::<Ipv6Addr>().unwrap(), Ipv6Addr::LOCALHOST]
        );
        let v4 = "Main:\n  +-- 0.0.0.0/0 3 0 5\n     |-- 0.0.0.0\n        /0 universe UNICAST\n\
                  |-- 127.0.0.0\n  /8 host LOCAL\n  |-- 127.0.0.1\n   /32 host LOCAL\n\
                  |-- 192.0.2.2\n /32 host LOCAL\n |-- 192.0.2.255\n /32 link BROADCAST\n\
                  Local:\n |-- 127.0.0.1\n /32 host LOCAL\n";
        assert_eq!(
            ipv4_addresses(v4),
            [Ipv4Addr::LOCALHOST, Ipv4Addr::new(192, 0, 2, 2)]
        );
    }

    #[test]
    fn a_specific_bind_is_itself_and_a_wildcard_lists_loopback_last() {
        let one: SocketAddr = "[::1]:5683".parse().unwrap();
        assert_eq!(reached_at(one), [one]);
        let all = reached_at("[::]:5683".parse().unwrap());
        assert!(all
            .iter()
            .all(|a| a.port() == 5683 && !a.ip().is_unspecified()));
        assert!(all.iter().any(|a| a.ip().is_loopback()));
        let first_loopback = all.iter().position(|a| a.ip().is_loopback()).unwrap();
        assert!(all[first_loopback..].iter().all(|a| a.ip().is_loopback()));
    }
}
