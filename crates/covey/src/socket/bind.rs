//! Creating the sockets: `[::]` is dual-stack (IPV6_V6ONLY off), addresses can be reused so a
//! restarted server can rebind at once, and the buffers are enlarged for bursts.

use std::io;
use std::net::SocketAddr;

use socket2::{Domain, Protocol, Socket as RawSocket, Type};

use super::Socket;

/// Socket buffer size asked for; the kernel may grant less.
const BUFFER_BYTES: usize = 4 << 20;

/// Binds a UDP socket to `addr`; an unspecified IPv6 address also accepts IPv4.
pub(crate) fn bind(addr: SocketAddr) -> io::Result<Socket> {
    let (socket, dual_stack) = bind_std(addr)?;
    Socket::new(socket, dual_stack)
}

/// Binds a non-blocking std UDP socket to `addr`; also returns whether it is dual-stack.
pub(crate) fn bind_std(addr: SocketAddr) -> io::Result<(std::net::UdpSocket, bool)> {
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
    // Several servers on one group port (multicast) and quick restarts need address reuse.
    raw.set_reuse_address(true)?;
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
