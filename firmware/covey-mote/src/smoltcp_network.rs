//! The full build's network layer: smoltcp's interface and a UDP socket on the SLIP line,
//! for what the server build's direct path leaves out: multicast groups and their MLDv2
//! reports (RFC 3810), and 6LoWPAN (IPHC, fragmentation) with the `sixlowpan` feature.

use core::net::{Ipv6Addr, SocketAddr, SocketAddrV6};

use covey_proto::LocalAddr;
use smoltcp::iface::SocketStorage;
use smoltcp::iface::{Config as InterfaceConfig, Interface, SocketHandle, SocketSet};
use smoltcp::phy::{self, Device, DeviceCapabilities, Medium};
use smoltcp::socket::udp::{self, PacketBuffer, PacketMetadata};
use smoltcp::time::Instant;
use smoltcp::wire::{HardwareAddress, IpAddress, IpCidr, IpEndpoint};

use crate::slip_line::{SlipLine, MTU};
use crate::DATAGRAM;

/// smoltcp's interface on the line, with one UDP socket.
pub struct Network {
    line: &'static mut SlipLine,
    iface: Interface,
    sockets: SocketSet<'static>,
    udp: SocketHandle,
    /// The engine writes a datagram here; the socket copies it into its send buffer.
    datagram: &'static mut [u8; DATAGRAM],
}

impl Network {
    /// The line, serving UDP `port` at `address` (a /64) through the router `PREFIX::1`.
    pub fn new(line: &'static mut SlipLine, address: Ipv6Addr, port: u16, now_ms: u64) -> Self {
        let octets = address.octets();
        let prefix: [u8; 8] = octets[..8].try_into().unwrap();
        let mut router = [0u8; 16];
        router[..8].copy_from_slice(&prefix);
        router[15] = 1;
        let mut iface = Interface::new(
            interface_config(&prefix),
            line,
            Instant::from_millis(now_ms as i64),
        );
        iface.update_ip_addrs(|addrs| {
            let _ = addrs.push(IpCidr::new(IpAddress::Ipv6(address), 64));
        });
        let _ = iface
            .routes_mut()
            .add_default_ipv6_route(Ipv6Addr::from(router));

        // Room for one largest message (a longer datagram is dropped by smoltcp, as the
        // engine would refuse it): the line hands smoltcp one packet a poll, and the loop
        // takes it before the next, so the queue is empty whenever one arrives.
        let rx_meta =
            cortex_m::singleton!(: [PacketMetadata; 1] = [PacketMetadata::EMPTY; 1]).unwrap();
        let rx_data = cortex_m::singleton!(: [u8; DATAGRAM] = [0; DATAGRAM]).unwrap();
        let tx_meta =
            cortex_m::singleton!(: [PacketMetadata; 1] = [PacketMetadata::EMPTY; 1]).unwrap();
        let tx_data = cortex_m::singleton!(: [u8; DATAGRAM] = [0; DATAGRAM]).unwrap();
        let mut socket = udp::Socket::new(
            PacketBuffer::new(&mut rx_meta[..], &mut rx_data[..]),
            PacketBuffer::new(&mut tx_meta[..], &mut tx_data[..]),
        );
        socket.bind(port).unwrap();
        let storage =
            cortex_m::singleton!(: [SocketStorage<'static>; 1] = [SocketStorage::EMPTY; 1])
                .unwrap();
        let mut sockets = SocketSet::new(&mut storage[..]);
        let udp = sockets.add(socket);
        let datagram = cortex_m::singleton!(: [u8; DATAGRAM] = [0; DATAGRAM]).unwrap();
        Network {
            line,
            iface,
            sockets,
            udp,
            datagram,
        }
    }

    /// Moves received bytes into the line and lets smoltcp take the packet and answer what
    /// it answers itself (echo requests, MLD queries, closed ports).
    pub fn poll(&mut self, ms: u64) {
        self.line.pump();
        let now = Instant::from_millis(ms as i64);
        self.iface.poll(now, &mut *self.line, &mut self.sockets);
    }

    /// Hands each datagram the socket holds to `deliver`, with the group it was sent to.
    pub fn receive(&mut self, _ms: u64, mut deliver: impl FnMut(SocketAddr, LocalAddr, &[u8])) {
        let socket = self.sockets.get_mut::<udp::Socket>(self.udp);
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
            deliver(remote, local, data);
        }
    }

    /// Sends the datagrams `next` writes (into the buffer it is given, returning their
    /// destination and length), one at a time so smoltcp's one-packet send buffer never
    /// refuses one.
    pub fn send_all(
        &mut self,
        ms: u64,
        mut next: impl FnMut(&mut [u8]) -> Option<(SocketAddr, usize)>,
    ) {
        let now = Instant::from_millis(ms as i64);
        while let Some((to, len)) = next(&mut self.datagram[..]) {
            if let SocketAddr::V6(to) = to {
                let to = IpEndpoint::new(IpAddress::Ipv6(*to.ip()), to.port());
                let socket = self.sockets.get_mut::<udp::Socket>(self.udp);
                let _ = socket.send_slice(&self.datagram[..len], to);
                self.iface.poll(now, &mut *self.line, &mut self.sockets);
            }
        }
    }

    /// Whether bytes or a packet wait to be handled.
    pub fn busy(&self) -> bool {
        self.line.busy()
    }

    /// Joins and leaves the groups `/mc` was asked to.
    #[cfg(feature = "multicast")]
    pub fn apply(&mut self, groups: &mut crate::groups::MoteGroups) {
        groups.apply(&mut self.iface);
    }
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

/// The line as smoltcp's device.
impl Device for SlipLine {
    type RxToken<'a> = RxToken<'a>;
    type TxToken<'a> = TxToken<'a>;

    fn receive(&mut self, _now: Instant) -> Option<(RxToken<'_>, TxToken<'_>)> {
        let (packet, buf) = self.take_packet()?;
        // smoltcp 0.14 takes a zero UDP checksum as "none" over IPv6 too, which RFC 8200
        // §8.1 forbids; with 6LoWPAN the frame is compressed and smoltcp's IPHC decides.
        if !cfg!(feature = "sixlowpan") && covey_ipv6_udp::has_zero_udp_checksum(packet) {
            return None;
        }
        Some((RxToken { packet }, TxToken { buf }))
    }

    fn transmit(&mut self, _now: Instant) -> Option<TxToken<'_>> {
        Some(TxToken { buf: self.tx() })
    }

    fn capabilities(&self) -> DeviceCapabilities {
        let mut caps = DeviceCapabilities::default();
        #[cfg(feature = "sixlowpan")]
        {
            // An IEEE 802.15.4 frame (aMaxPhyPacketSize, 802.15.4-2006 §6.4.1).
            caps.medium = Medium::Ieee802154;
            caps.max_transmission_unit = 127;
        }
        #[cfg(not(feature = "sixlowpan"))]
        {
            caps.medium = Medium::Ip;
            caps.max_transmission_unit = MTU;
        }
        caps
    }
}

/// A received packet, lent to smoltcp.
pub struct RxToken<'a> {
    packet: &'a [u8],
}

impl phy::RxToken for RxToken<'_> {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        f(self.packet)
    }
}

/// The transmit buffer, lent to smoltcp; the packet it writes goes out as one SLIP frame.
pub struct TxToken<'a> {
    buf: &'a mut [u8; MTU],
}

impl phy::TxToken for TxToken<'_> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
        let len = len.min(MTU);
        let result = f(&mut self.buf[..len]);
        SlipLine::send_frame(&self.buf[..len]);
        result
    }
}
