//! Covey on a sensor node: the sans-IO engine (covey-proto) as Cortex-M3 firmware, serving
//! CoAP over IPv6/UDP (smoltcp) on a SLIP serial line, for QEMU's lm3s6965evb.
//!
//! At start the mote asks the host for its /64 (`?P`, as Contiki's tunslip6 answers), takes
//! `PREFIX::2` as its address (or the interface ID the bridge sends after the prefix, when it
//! serves several motes) and `PREFIX::1` (the host's end of the line) as its router, and
//! serves the resources of [`resources`] on port 5683 with [`Config::mote`], joining the
//! multicast groups its `/mc` resource is asked to (`groups`, with the `multicast` feature;
//! without it, the server build, no groups and no address validation). The main loop moves
//! bytes from the UART into smoltcp, datagrams from smoltcp into the engine and back, and
//! sleeps (WFI) until the next byte or millisecond tick.
#![no_std]
#![no_main]

extern crate alloc;

mod clock;
#[cfg(feature = "multicast")]
mod groups;
mod heap;
#[cfg(feature = "multicast")]
mod membership;
mod resources;
mod slip_line;
mod stack;
mod text;
mod uart;

use core::net::{Ipv6Addr, SocketAddr, SocketAddrV6};

use cortex_m_rt::entry;
use covey_proto::{Config, Endpoint, LocalAddr, Lone};
use covey_proto::{Instant, Node};
use smoltcp::iface::{Config as InterfaceConfig, Interface, SocketSet, SocketStorage};
use smoltcp::socket::udp::{self, PacketBuffer, PacketMetadata};
use smoltcp::wire::{HardwareAddress, IpAddress, IpCidr, IpEndpoint};

use resources::MoteResources;
use slip_line::SlipLine;

/// The CoAP port (RFC 7252 §6.1).
const COAP_PORT: u16 = 5683;
/// How often the prefix is asked for until the host answers.
const PREFIX_RETRY_MS: u64 = 1_000;
/// The largest CoAP message: `Config::mote`'s `max_message_size`.
pub const DATAGRAM: usize = 576;

#[entry]
fn main() -> ! {
    heap::HEAP.init();
    stack::paint();
    let core = cortex_m::Peripherals::take().unwrap();
    uart::init();
    clock::start(core.SYST);

    let line: &'static mut SlipLine = cortex_m::singleton!(: SlipLine = SlipLine::new()).unwrap();
    SlipLine::send_frame(b"\rcovey-mote: asking for a prefix\n");
    let octets = ask_address(line);
    let prefix: [u8; 8] = octets[..8].try_into().unwrap();
    let address = Ipv6Addr::from(octets);
    let mut router = [0u8; 16];
    router[..8].copy_from_slice(&prefix);
    router[15] = 1;

    let now = clock::now_ms();
    let mut iface = Interface::new(
        interface_config(&prefix),
        line,
        smoltcp::time::Instant::from_millis(now as i64),
    );
    iface.update_ip_addrs(|addrs| {
        let _ = addrs.push(IpCidr::new(IpAddress::Ipv6(address), 64));
    });
    let _ = iface
        .routes_mut()
        .add_default_ipv6_route(Ipv6Addr::from(router));

    // Room for one largest message (a longer datagram is dropped by smoltcp, as the engine
    // would refuse it): the line hands smoltcp one packet a poll, and the loop below takes
    // it before the next, so the queue is empty whenever one arrives.
    let rx_meta = cortex_m::singleton!(: [PacketMetadata; 1] = [PacketMetadata::EMPTY; 1]).unwrap();
    let rx_data = cortex_m::singleton!(: [u8; DATAGRAM] = [0; DATAGRAM]).unwrap();
    let tx_meta = cortex_m::singleton!(: [PacketMetadata; 1] = [PacketMetadata::EMPTY; 1]).unwrap();
    let tx_data = cortex_m::singleton!(: [u8; DATAGRAM] = [0; DATAGRAM]).unwrap();
    let mut socket = udp::Socket::new(
        PacketBuffer::new(&mut rx_meta[..], &mut rx_data[..]),
        PacketBuffer::new(&mut tx_meta[..], &mut tx_data[..]),
    );
    socket.bind(COAP_PORT).unwrap();
    let storage =
        cortex_m::singleton!(: [SocketStorage<'static>; 1] = [SocketStorage::EMPTY; 1]).unwrap();
    let mut sockets = SocketSet::new(&mut storage[..]);
    let udp_handle = sockets.add(socket);

    let seed =
        u64::from_be_bytes(prefix) ^ u64::from_be_bytes(octets[8..].try_into().unwrap()) ^ now;
    let mut node = new_node(seed);
    #[cfg(feature = "multicast")]
    let mut groups = groups::MoteGroups::new();
    // The server build joins no groups: a host that refuses them.
    #[cfg(not(feature = "multicast"))]
    let mut groups = covey_proto::NullHost;
    node.start(Instant::from_millis(clock::now_ms()), &mut groups);
    SlipLine::send_frame(b"\rcovey-mote: serving CoAP on port 5683\n");

    let datagram = cortex_m::singleton!(: [u8; DATAGRAM] = [0; DATAGRAM]).unwrap();
    loop {
        line.pump();
        // One clock read a turn, for smoltcp and the engine alike.
        let ms = clock::now_ms();
        let net_now = smoltcp::time::Instant::from_millis(ms as i64);
        iface.poll(net_now, line, &mut sockets);

        let now = Instant::from_millis(ms);
        let socket = sockets.get_mut::<udp::Socket>(udp_handle);
        while let Ok((data, meta)) = socket.recv() {
            let IpAddress::Ipv6(from) = meta.endpoint.addr;
            let remote = SocketAddr::V6(SocketAddrV6::new(from, meta.endpoint.port, 0, 0));
            // A request to a group: answered as RFC 7252 §8 says (NON, after a leisure,
            // no error responses).
            let local = match meta.local_address {
                Some(IpAddress::Ipv6(to)) if to.is_multicast() => {
                    LocalAddr::multicast(core::net::IpAddr::V6(to))
                }
                _ => LocalAddr::UNICAST,
            };
            node.handle_datagram(now, remote, local, data, &mut groups);
        }
        if node.poll_timeout().is_some_and(|due| due <= now) {
            node.handle_timeout(now, &mut groups);
        }
        #[cfg(feature = "multicast")]
        groups.apply(&mut iface);
        // One datagram at a time, so smoltcp's one-packet send buffer never refuses one.
        while let Some(t) = node.poll_transmit(now, &mut datagram[..]) {
            if let SocketAddr::V6(to) = t.destination {
                let to = IpEndpoint::new(IpAddress::Ipv6(*to.ip()), to.port());
                let socket = sockets.get_mut::<udp::Socket>(udp_handle);
                let _ = socket.send_slice(&datagram[..t.size], to);
                iface.poll(net_now, line, &mut sockets);
            }
        }

        cortex_m::interrupt::free(|_| {
            if !line.busy() {
                // Wakes on the next interrupt (a byte, the millisecond tick) even while masked.
                cortex_m::asm::wfi();
            }
        });
    }
}

/// The engine and the node's resources. Not inlined: the endpoint is built in this frame
/// and moved into the node, and in `main`'s frame, which lives as long as the mote, that
/// copy would keep 1.8 KiB of stack for good.
#[inline(never)]
fn new_node(seed: u64) -> Node<Lone<MoteResources>> {
    let endpoint = Endpoint::new(Config::mote(), seed).unwrap();
    Node::new(endpoint, Lone(MoteResources::new()))
}

/// The interface: IP packets on the line, or with `sixlowpan` an IEEE 802.15.4 node with an
/// extended address made from the prefix (no radio hardware to read one from).
fn interface_config(prefix: &[u8; 8]) -> InterfaceConfig {
    #[cfg(not(feature = "sixlowpan"))]
    {
        let _ = prefix;
        InterfaceConfig::new(HardwareAddress::Ip)
    }
    #[cfg(feature = "sixlowpan")]
    {
        use smoltcp::wire::{Ieee802154Address, Ieee802154Pan};
        let mut extended = *prefix;
        extended[7] ^= 2;
        let mut config = InterfaceConfig::new(HardwareAddress::Ieee802154(
            Ieee802154Address::Extended(extended),
        ));
        config.pan_id = Some(Ieee802154Pan(0xabcd));
        config
    }
}

/// Sends `?P` every second until the host answers with a prefix; returns the address.
fn ask_address(line: &mut SlipLine) -> [u8; 16] {
    let mut asked = None;
    loop {
        let now = clock::now_ms();
        if asked.is_none_or(|at| now >= at + PREFIX_RETRY_MS) {
            SlipLine::send_frame(b"?P");
            asked = Some(now);
        }
        line.pump();
        if let Some(address) = line.take_address() {
            return address;
        }
        // An IP packet before the prefix is dropped: there is no address to answer from.
        line.discard_packet();
        cortex_m::interrupt::free(|_| {
            if !line.busy() {
                cortex_m::asm::wfi();
            }
        });
    }
}

/// Logs the panic (its message and location with the `panic-message` feature) and restarts.
#[panic_handler]
fn panic(_info: &core::panic::PanicInfo) -> ! {
    #[cfg(feature = "panic-message")]
    {
        use core::fmt::Write as _;
        let mut line = text::Text::<160>::new();
        let _ = line.write_str("\rcovey-mote: panic, resetting: ");
        let _ = write!(line, "{}", _info.message());
        if let Some(at) = _info.location() {
            let _ = write!(line, " at {}:{}", at.file(), at.line());
        }
        let _ = line.write_str("\n");
        SlipLine::send_frame(line.bytes());
    }
    #[cfg(not(feature = "panic-message"))]
    SlipLine::send_frame(
        b"\rcovey-mote: panic, resetting (build with --features panic-message for why)\n",
    );
    cortex_m::peripheral::SCB::sys_reset()
}
