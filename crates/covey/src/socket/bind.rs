//! Creating the sockets: `[::]` is dual-stack (IPV6_V6ONLY off), a port is shared with other
//! sockets only when asked (several multicast servers on one host), and the buffers are
//! enlarged for bursts.

use std::io;
use std::net::SocketAddr;

use socket2::{Domain, Protocol, Socket as RawSocket, Type};

use super::Socket;

/// Socket buffer size asked for; the kernel may grant less.
const BUFFER_BYTES: usize = 4 << 20;

/// Binds a UDP socket to `addr`; an unspecified IPv6 address also accepts IPv4. With `share`
/// the port may be bound by other sockets that share it too.
pub(crate) fn bind(addr: SocketAddr, share: bool) -> io::Result<Socket> {
    let (socket, dual_stack) = bind_std(addr, share)?;
    Socket::new(socket, dual_stack)
}

/// Binds a non-blocking std UDP socket to `addr`; also returns whether it is dual-stack.
pub(crate) fn bind_std(addr: SocketAddr, share: bool) -> io::Result<(std::net::UdpSocket, bool)> {
    let domain = Domain::for_address(addr);
    let raw = RawSocket::new(domain, Type::DGRAM, Some(Protocol::UDP))?;
    let dual_stack = match addr {
        SocketAddr::V6(v6) if v6.ip().is_unspecified() => raw.set_only_v6(false).is_ok(),
        SocketAddr::V6(_) => {
            raw.set_only_v6(true)?;
            false
        }
        SocketAddr::V4(_) => false,
    };
    // Sharing lets several servers on one host receive a group's requests; without it a
    // busy port is an error instead of a second server silently taking its unicast traffic.
    // (A restart rebinds at once anyway: UDP has no TIME_WAIT.)
    if share {
        raw.set_reuse_address(true)?;
        #[cfg(all(unix, not(any(target_os = "solaris", target_os = "illumos"))))]
        raw.set_reuse_port(true)?;
    }
    // Buffers are a hint; a smaller grant is not an error.
    let _ = raw.set_recv_buffer_size(BUFFER_BYTES);
    let _ = raw.set_send_buffer_size(BUFFER_BYTES);
    if addr.is_ipv6() {
        let _ = raw.set_multicast_loop_v6(true);
    } else {
        let _ = raw.set_multicast_loop_v4(true);
    }
    raw.set_nonblocking(true)?;
    raw.bind(&addr.into())?;
    Ok((raw.into(), dual_stack))
}
