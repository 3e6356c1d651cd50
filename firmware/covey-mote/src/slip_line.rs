//! The serial line: IPv6 packets in SLIP frames on UART0 (no link header), one frame in and
//! one out at a time. Contiki's tunslip6 conventions on top: the mote asks the
//! host for its /64 with a `?P` frame and gets `!P` and 8 bytes back; a frame that starts
//! with `\r` is a line of text the host prints (Contiki's `DEBUG_LINE_MARKER`).

use core::sync::atomic::{AtomicU32, Ordering};

use covey_slip::{Decoded, Decoder};

use crate::uart;

/// The largest packet the mote sends or takes in: its largest CoAP message in UDP and IPv6
/// (RFC 8200 §3, RFC 768). A longer frame is dropped as it arrives, as the engine would
/// refuse the datagram in it; so is a ping of more than 576 bytes of data, whose echo reply
/// would not fit, and an ICMPv6 error quotes no more than that. RFC 8200 §5 asks a node to
/// take 1 280-byte packets; a mote's buffer is its largest message, as Contiki's
/// `UIP_CONF_BUFFER_SIZE` is on a Tmote Sky.
pub const MTU: usize = 40 + 8 + crate::DATAGRAM;

/// Frames dropped since start: too long, badly escaped, or neither a packet nor `!P`.
static DROPPED: AtomicU32 = AtomicU32::new(0);

/// Frames the line has dropped since start.
pub fn dropped() -> u32 {
    DROPPED.load(Ordering::Relaxed)
}

fn count_dropped() {
    DROPPED.fetch_add(1, Ordering::Relaxed);
}

/// The SLIP line and the frame that arrived last, held until the network layer takes it.
pub struct SlipLine {
    decoder: Decoder<MTU>,
    /// The decoder holds a complete IP packet not yet taken.
    packet_ready: bool,
    /// A `!P` answer's address (its prefix, and the interface ID when the host sent one),
    /// not yet taken.
    address: Option<[u8; 16]>,
    tx: [u8; MTU],
}

impl SlipLine {
    /// A line with nothing received.
    pub const fn new() -> SlipLine {
        SlipLine {
            decoder: Decoder::new(),
            packet_ready: false,
            address: None,
            tx: [0; MTU],
        }
    }

    /// Moves received bytes into the decoder until a packet is complete.
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

    /// The packet that arrived, once, and the transmit buffer beside it (a reply is made
    /// from the packet in place).
    pub fn take_packet(&mut self) -> Option<(&[u8], &mut [u8; MTU])> {
        if !self.packet_ready {
            return None;
        }
        self.packet_ready = false;
        Some((self.decoder.frame(), &mut self.tx))
    }

    /// The transmit buffer, for a packet [`send_tx`](Self::send_tx) then sends.
    pub fn tx(&mut self) -> &mut [u8; MTU] {
        &mut self.tx
    }

    /// Sends the transmit buffer's first `len` bytes as a frame.
    #[cfg(not(feature = "smoltcp-interface"))]
    pub fn send_tx(&self, len: usize) {
        SlipLine::send_frame(&self.tx[..len.min(MTU)]);
    }
}
