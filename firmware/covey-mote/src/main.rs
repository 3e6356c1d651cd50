//! Covey on a sensor node: the sans-IO engine (covey-proto) as Cortex-M3 firmware, serving
//! CoAP over IPv6/UDP on a SLIP serial line, for QEMU's lm3s6965evb.
//!
//! At start the mote asks the host for its /64 (`?P`, as Contiki's tunslip6 answers), takes
//! `PREFIX::2` as its address (or the interface ID the bridge sends after the prefix, when it
//! serves several motes) and `PREFIX::1` (the host's end of the line) as its router, and
//! serves the resources of [`resources`] on port 5683 with [`Config::mote`], joining the
//! multicast groups its `/mc` resource is asked to (`groups`, with the `multicast` feature;
//! without it, the server build, no groups and no address validation). The main loop moves
//! bytes from the UART into the network layer (smoltcp's interface in the full build,
//! `direct_network` in the server build), datagrams from it into the engine and back, and
//! sleeps (WFI) until the next byte or millisecond tick.
#![no_std]
#![no_main]

extern crate alloc;

mod clock;
#[cfg(not(feature = "smoltcp-interface"))]
mod direct_network;
#[cfg(feature = "multicast")]
mod groups;
mod heap;
#[cfg(feature = "multicast")]
mod membership;
mod resources;
mod slip_line;
mod small_mem;
#[cfg(feature = "smoltcp-interface")]
mod smoltcp_network;
mod stack;
mod text;
mod uart;

use core::net::Ipv6Addr;

use cortex_m_rt::entry;
use covey_proto::{Config, Endpoint, Lone};
use covey_proto::{Instant, Node};

#[cfg(not(feature = "smoltcp-interface"))]
use direct_network::Network;
use resources::MoteResources;
use slip_line::SlipLine;
#[cfg(feature = "smoltcp-interface")]
use smoltcp_network::Network;

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
    let now = clock::now_ms();
    let mut network = Network::new(line, Ipv6Addr::from(octets), COAP_PORT, now);

    let seed = u64::from_be_bytes(octets[..8].try_into().unwrap())
        ^ u64::from_be_bytes(octets[8..].try_into().unwrap())
        ^ now;
    let mut node = new_node(seed);
    #[cfg(feature = "multicast")]
    let mut groups = groups::MoteGroups::new();
    // The server build joins no groups: a host that refuses them.
    #[cfg(not(feature = "multicast"))]
    let mut groups = covey_proto::NullHost;
    node.start(Instant::from_millis(clock::now_ms()), &mut groups);
    SlipLine::send_frame(b"\rcovey-mote: serving CoAP on port 5683\n");

    loop {
        // One clock read a turn, for the network and the engine alike.
        let ms = clock::now_ms();
        network.poll(ms);
        let now = Instant::from_millis(ms);
        network.receive(ms, |remote, local, data| {
            node.handle_datagram(now, remote, local, data, &mut groups);
        });
        if node.poll_timeout().is_some_and(|due| due <= now) {
            node.handle_timeout(now, &mut groups);
        }
        #[cfg(feature = "multicast")]
        network.apply(&mut groups);
        network.send_all(ms, |buf| {
            node.poll_transmit(now, buf)
                .map(|t| (t.destination, t.size))
        });

        cortex_m::interrupt::free(|_| {
            if !network.busy() {
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
