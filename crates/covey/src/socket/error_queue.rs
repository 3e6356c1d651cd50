//! ICMP errors from the socket's error queue (Linux `IP_RECVERR` / `IPV6_RECVERR`): which
//! destination the network reported unreachable, so a request to a closed port fails at once
//! instead of after every retransmission.
//!
//! RFC 7252 lets a CoAP endpoint act on Destination Unreachable and Parameter Problem
//! errors; Time Exceeded, Source Quench and Packet Too Big do not say the destination is
//! gone and are ignored here. The kernel has already matched the quoted UDP header to this
//! socket, and the engine acts only on destinations it has requests outstanding to.
#![cfg_attr(not(any(target_os = "linux", target_os = "android")), allow(dead_code))]

use std::io;
use std::net::SocketAddr;
use std::os::fd::BorrowedFd;

/// A destination the network reported unreachable, from one ICMP error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unreachable {
    /// Where the datagram that drew the error was going (IPv4 as plain IPv4).
    pub destination: SocketAddr,
    /// What the network said, e.g. "ICMP port unreachable".
    pub reason: &'static str,
    /// The destination host itself said nothing listens on that port (port or protocol
    /// unreachable): a hard error, unlike a route or neighbour that may come back.
    pub port_closed: bool,
}

/// Room for the control messages of one error-queue entry (the extended error and the
/// offender's address need under 100 bytes).
#[cfg(any(target_os = "linux", target_os = "android"))]
const CONTROL_BYTES: usize = 256;

/// Takes one entry off the error queue of `fd`: `Ok(Some)` when it reports a destination
/// unreachable, `Ok(None)` for an entry of another kind, `WouldBlock` when the queue is empty.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(super) fn recv(fd: BorrowedFd<'_>) -> io::Result<Option<Unreachable>> {
    use std::os::fd::AsRawFd;

    // The kernel copies (part of) the offending datagram here; it is not needed.
    let mut quoted = [0u8; 1];
    let mut control = [0u8; CONTROL_BYTES];
    let (control_len, name) = loop {
        // SAFETY: `try_init` hands a zeroed address storage and its size; `recvmsg` writes at
        // most that many bytes there and stores the real length in `*len`. The iovec and the
        // control buffer point to live local arrays whose lengths are given, and the msghdr
        // is a plain C struct for which all zeroes is a valid value.
        let received = unsafe {
            socket2::SockAddr::try_init(|storage, len| {
                let mut iov = libc::iovec {
                    iov_base: quoted.as_mut_ptr().cast(),
                    iov_len: quoted.len(),
                };
                let mut msg: libc::msghdr = std::mem::zeroed();
                msg.msg_name = storage.cast();
                msg.msg_namelen = *len;
                msg.msg_iov = &mut iov;
                msg.msg_iovlen = 1;
                msg.msg_control = control.as_mut_ptr().cast();
                msg.msg_controllen = control.len() as _;
                let flags = libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT;
                if libc::recvmsg(fd.as_raw_fd(), &mut msg, flags) < 0 {
                    return Err(io::Error::last_os_error());
                }
                *len = msg.msg_namelen;
                Ok(msg.msg_controllen as usize)
            })
        };
        match received {
            Ok(received) => break received,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    };
    let control = &control[..control_len.min(CONTROL_BYTES)];
    let Some(error) = extended_error(control) else {
        return Ok(None);
    };
    let Some(reason) = unreachable_reason(error.origin, error.icmp_type, error.icmp_code) else {
        return Ok(None);
    };
    let port_closed = closes_port(error.origin, error.icmp_type, error.icmp_code);
    Ok(name.as_socket().map(|destination| Unreachable {
        destination: super::canonical_socket_addr(destination),
        reason,
        port_closed,
    }))
}

/// No error queue here: always empty.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(super) fn recv(_fd: BorrowedFd<'_>) -> io::Result<Option<Unreachable>> {
    Err(io::ErrorKind::WouldBlock.into())
}

/// The fields of a kernel `struct sock_extended_err` this module reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ExtendedError {
    origin: u8,
    icmp_type: u8,
    icmp_code: u8,
}

/// `SO_EE_ORIGIN_ICMP` / `SO_EE_ORIGIN_ICMP6` (linux/errqueue.h).
const ORIGIN_ICMP: u8 = 2;
const ORIGIN_ICMP6: u8 = 3;
/// `IP_RECVERR` at level `IPPROTO_IP` (0) and `IPV6_RECVERR` at `IPPROTO_IPV6` (41).
const RECVERR_CMSGS: [(i32, i32); 2] = [(0, 11), (41, 25)];
/// Size of `struct sock_extended_err`: errno (4), origin, type, code, pad, info (4), data (4).
const EXTENDED_ERROR_BYTES: usize = 16;

/// Finds the extended error among the control messages of an error-queue entry, reading
/// the bytes as the kernel lays them out (`size_t` length, `int` level and type, data
/// aligned to `size_t`); anything short or malformed yields `None`.
fn extended_error(control: &[u8]) -> Option<ExtendedError> {
    const WORD: usize = std::mem::size_of::<usize>();
    let align = |n: usize| n.checked_add(WORD - 1).map(|n| n & !(WORD - 1));
    let header = align(WORD + 8)?;
    let mut rest = control;
    while rest.len() >= header {
        let len = usize::from_ne_bytes(rest.get(..WORD)?.try_into().ok()?);
        let level = i32::from_ne_bytes(rest.get(WORD..WORD + 4)?.try_into().ok()?);
        let kind = i32::from_ne_bytes(rest.get(WORD + 4..WORD + 8)?.try_into().ok()?);
        if len < header || len > rest.len() {
            return None;
        }
        if RECVERR_CMSGS.contains(&(level, kind)) && len >= header + EXTENDED_ERROR_BYTES {
            let data = rest.get(header..header + EXTENDED_ERROR_BYTES)?;
            return Some(ExtendedError {
                origin: data[4],
                icmp_type: data[5],
                icmp_code: data[6],
            });
        }
        rest = rest.get(align(len)?..)?;
    }
    None
}

/// Whether an ICMP error comes from the destination host saying no one listens there (RFC 1122
/// §3.2.2.1 calls port and protocol unreachable hard errors; the others may be transient).
fn closes_port(origin: u8, icmp_type: u8, code: u8) -> bool {
    matches!(
        (origin, icmp_type, code),
        (ORIGIN_ICMP, 3, 2 | 3) | (ORIGIN_ICMP6, 1, 4)
    )
}

/// What an ICMP error says, when it says the destination cannot be reached.
fn unreachable_reason(origin: u8, icmp_type: u8, code: u8) -> Option<&'static str> {
    match (origin, icmp_type, code) {
        // ICMPv4 Destination Unreachable; code 4 (fragmentation needed) is path MTU.
        (ORIGIN_ICMP, 3, 4) => None,
        (ORIGIN_ICMP, 3, 0 | 6 | 9 | 11) => Some("ICMP network unreachable"),
        (ORIGIN_ICMP, 3, 1 | 7 | 10 | 12) => Some("ICMP host unreachable"),
        (ORIGIN_ICMP, 3, 2) => Some("ICMP protocol unreachable"),
        (ORIGIN_ICMP, 3, 3) => Some("ICMP port unreachable"),
        (ORIGIN_ICMP, 3, 13..=15) => Some("ICMP communication administratively prohibited"),
        (ORIGIN_ICMP, 3, _) => Some("ICMP destination unreachable"),
        (ORIGIN_ICMP, 12, _) => Some("ICMP parameter problem"),
        // ICMPv6 Destination Unreachable.
        (ORIGIN_ICMP6, 1, 0) => Some("ICMPv6 no route to destination"),
        (ORIGIN_ICMP6, 1, 1 | 5 | 6) => Some("ICMPv6 communication administratively prohibited"),
        (ORIGIN_ICMP6, 1, 3) => Some("ICMPv6 address unreachable"),
        (ORIGIN_ICMP6, 1, 4) => Some("ICMPv6 port unreachable"),
        (ORIGIN_ICMP6, 1, _) => Some("ICMPv6 destination unreachable"),
        (ORIGIN_ICMP6, 4, _) => Some("ICMPv6 parameter problem"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WORD: usize = std::mem::size_of::<usize>();

    /// One control message as the kernel writes it, padded to the next word.
    fn cmsg(level: i32, kind: i32, data: &[u8]) -> Vec<u8> {
        let header = (WORD + 8).next_multiple_of(WORD);
        let mut out = Vec::new();
        out.extend_from_slice(&(header + data.len()).to_ne_bytes());
        out.extend_from_slice(&level.to_ne_bytes());
        out.extend_from_slice(&kind.to_ne_bytes());
        out.resize(header, 0);
        out.extend_from_slice(data);
        out.resize(out.len().next_multiple_of(WORD), 0);
        out
    }

    fn extended(origin: u8, icmp_type: u8, code: u8) -> Vec<u8> {
        let mut data = 111u32.to_ne_bytes().to_vec(); // ECONNREFUSED
        data.extend_from_slice(&[origin, icmp_type, code, 0]);
        data.extend_from_slice(&[0; 8]);
        data
    }

    #[test]
    fn finds_the_extended_error_after_other_control_messages() {
        let mut control = cmsg(0, 8, &[1, 2, 3, 4]); // IP_PKTINFO-like, not ours
        control.extend(cmsg(41, 25, &extended(ORIGIN_ICMP6, 1, 4)));
        let error = extended_error(&control).unwrap();
        assert_eq!((error.origin, error.icmp_type, error.icmp_code), (3, 1, 4));
        let reason = unreachable_reason(error.origin, error.icmp_type, error.icmp_code);
        assert_eq!(reason, Some("ICMPv6 port unreachable"));
    }

    #[test]
    fn malformed_control_messages_yield_nothing() {
        let good = cmsg(0, 11, &extended(ORIGIN_ICMP, 3, 3));
        assert!(extended_error(&good).is_some());
        // Truncated anywhere: no panic, no error found.
        for cut in 0..good.len() {
            assert_eq!(extended_error(&good[..cut]), None, "cut at {cut}");
        }
        // A length that claims too much, too little, or overflows.
        for len in [0usize, 3, good.len() + 1, usize::MAX] {
            let mut bad = good.clone();
            bad[..WORD].copy_from_slice(&len.to_ne_bytes());
            assert_eq!(extended_error(&bad), None, "len {len}");
        }
        // Our level and type with a payload too short for the struct.
        assert_eq!(extended_error(&cmsg(0, 11, &[0; 8])), None);
        assert_eq!(extended_error(&[]), None);
    }

    #[test]
    fn only_port_and_protocol_unreachable_close_the_port() {
        assert!(closes_port(ORIGIN_ICMP, 3, 3), "port");
        assert!(closes_port(ORIGIN_ICMP, 3, 2), "protocol");
        assert!(closes_port(ORIGIN_ICMP6, 1, 4), "ICMPv6 port");
        assert!(!closes_port(ORIGIN_ICMP, 3, 1), "host: may come back");
        assert!(!closes_port(ORIGIN_ICMP6, 1, 3), "address: may come back");
        assert!(!closes_port(ORIGIN_ICMP6, 1, 0), "no route");
        assert!(!closes_port(ORIGIN_ICMP, 12, 0), "parameter problem");
    }

    #[test]
    fn only_unreachable_and_parameter_problem_count() {
        assert_eq!(
            unreachable_reason(ORIGIN_ICMP, 3, 3),
            Some("ICMP port unreachable")
        );
        assert!(unreachable_reason(ORIGIN_ICMP, 3, 1).is_some());
        assert!(unreachable_reason(ORIGIN_ICMP, 12, 0).is_some());
        assert_eq!(unreachable_reason(ORIGIN_ICMP, 3, 4), None, "path MTU");
        assert_eq!(
            unreachable_reason(ORIGIN_ICMP, 11, 0),
            None,
            "time exceeded"
        );
        assert_eq!(unreachable_reason(ORIGIN_ICMP, 4, 0), None, "source quench");
        assert_eq!(
            unreachable_reason(ORIGIN_ICMP6, 2, 0),
            None,
            "packet too big"
        );
        assert_eq!(
            unreachable_reason(ORIGIN_ICMP6, 3, 0),
            None,
            "time exceeded"
        );
        assert_eq!(unreachable_reason(1, 0, 0), None, "local error");
    }
}
