//! The network interface: IPv6 packets in SLIP frames on UART0, as smoltcp's `Device`
//! (medium IP: no link header). Contiki's tunslip6 conventions on top: the mote asks the
//! host for its /64 with a `?P` frame and gets `!P` and 8 bytes back; a frame that starts
//! with `\r` is a line of text the host prints (Contiki's `DEBUG_LINE_MARKER`).

use core::sync::atomic::{AtomicU32, Ordering};

use covey_slip::{Decoded, Decoder};
use smoltcp::phy::{self, Device, DeviceCapabilities, Medium};
use smoltcp::time::Instant;

use crate::uart;

/// The largest IPv6 packet the line carries: the IPv6 minimum MTU (RFC 8200 §5), what a
/// tunslip6 host's TUN device sends by default.
pub const MTU: usize = 1280;

/// The largest packet the mote sends: its largest CoAP message in UDP and IPv6 (RFC 8200 §3,
/// RFC 768). smoltcp drops a larger one it would make (an echo reply to a ping of more than
/// 576 bytes of data, an ICMPv6 error quoting more than that), as it drops one beyond the MTU.
const TX_MTU: usize = 40 + 8 + crate::DATAGRAM;

/// Frames dropped since start: too long, badly escaped, or neither a packet nor `!P`.
static DROPPED: AtomicU32 = AtomicU32::new(0);

/// Frames the line has dropped since start.
pub fn dropped() -> u32 {
    DROPPED.load(Ordering::Relaxed)
}

fn count_dropped() {
    DROPPED.fetch_add(1, Ordering::Relaxed);
}

/// The SLIP line and the frame that arrived last, held until smoltcp takes it.
pub struct SlipLine {
    decoder: Decoder<MTU>,
    /// The decoder holds a complete IP packet not yet taken.
    packet_ready: bool,
    /// A `!P` answer's address (its prefix, and the interface ID when the host sent one),
    /// not yet taken.
    address: Option<[u8; 16]>,
    tx: [u8; TX_MTU],
}

impl SlipLine {
    /// A line with nothing received.
    pub const fn new() -> SlipLine {
        SlipLine {
            decoder: Decoder::new(),
            packet_ready: false,
            address: None,
            tx: [0; TX_MTU],
        }
    }

    /// Moves received bytes into the decoder until a frame for smoltcp is complete.
    pub fn pump(&mut self) {
        while !self.packet_ready {
            let Some(byte) = uart::get() else { return };
            match self.decoder.push(byte) {
                Decoded::Pending => {}
                Decoded::Dropped => count_dropped(),
                Decoded::Frame(_) => {
                    let frame = self.decoder.frame();
                    match frame {
                        // `!P` and the 8-byte prefix (tunslip6), then our interface ID when the
                        // bridge serves several motes; alone, the mote takes PREFIX::2.
                        [b'!', b'P', rest @ ..] if rest.len() == 8 || rest.len() == 16 => {
                            let mut address = [0u8; 16];
                            address[15] = 2;
                            address[..rest.len()].copy_from_slice(rest);
                            self.address = Some(address);
                        }
                        [first, ..] if cfg!(feature = "sixlowpan") || first >> 4 == 6 => {
                            self.packet_ready = true
                        }
                        _ => count_dropped(),
                    }
                }
            }
        }
    }

    /// Whether bytes or a packet wait to be handled.
    pub fn busy(&self) -> bool {
        self.packet_ready || uart::pending()
    }

    /// Drops the packet that arrived, if one did (before the mote has an address).
    pub fn discard_packet(&mut self) {
        if self.packet_ready {
            self.packet_ready = false;
            count_dropped();
        }
    }

    /// The address the host's `!P` gave, once.
    pub fn take_address(&mut self) -> Option<[u8; 16]> {
        self.address.take()
    }

    /// Sends a frame: an IP packet, a `?P` request or a `\r` text line.
    pub fn send_frame(frame: &[u8]) {
        covey_slip::encode(frame, uart::put);
    }
}

impl Device for SlipLine {
    type RxToken<'a> = RxToken<'a>;
    type TxToken<'a> = TxToken<'a>;

    fn receive(&mut self, _now: Instant) -> Option<(RxToken<'_>, TxToken<'_>)> {
        if !self.packet_ready {
            return None;
        }
        self.packet_ready = false;
        let SlipLine { decoder, tx, .. } = self;
        Some((
            RxToken {
                packet: decoder.frame(),
            },
            TxToken { buf: tx },
        ))
    }

    fn transmit(&mut self, _now: Instant) -> Option<TxToken<'_>> {
        Some(TxToken { buf: &mut self.tx })
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
            caps.max_transmission_unit = TX_MTU;
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
    buf: &'a mut [u8; TX_MTU],
}

impl phy::TxToken for TxToken<'_> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
        let len = len.min(TX_MTU);
        let result = f(&mut self.buf[..len]);
        SlipLine::send_frame(&self.buf[..len]);
        result
    }
}
