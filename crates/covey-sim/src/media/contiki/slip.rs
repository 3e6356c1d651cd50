//! The rpl-border-router's serial line to the host (`examples/ipv6/rpl-border-router/
//! slip-bridge.c`: `slip_arch_init(BAUD2UBR(115200))`; `tools/tunslip6.c` on the host side):
//!
//! - 115 200 baud both ways, 8N1: 10 bit times per byte. A packet travels uncompressed (IPv6
//!   40 + UDP 8 bytes of header before the CoAP message) between two `SLIP_END` bytes
//!   (`core/dev/slip.c`, `slip_send()`/`slip_write()`); `SLIP_END` and `SLIP_ESC` bytes inside
//!   are escaped to two bytes, which the model leaves out (it does not see the bytes).
//! - Host to router: the line carries one packet after the other; tunslip6 writes to the tty
//!   without a limit, so packets wait on the host. The router's `slip_input_byte()` keeps
//!   whole packets in `rxbuf` until `slip_process` moves them to uIP: once two are buffered
//!   (`STATE_TWOPACKETS`) every further byte is dropped, and so is the packet.
//!   `RX_BUFSIZE` = UIP_BUFSIZE − UIP_LLH_LEN + 16 = 156 bytes with the border router's
//!   `UIP_CONF_BUFFER_SIZE` 140, so two request-sized packets is also all it can hold.
//! - `slip_process` runs when the router's CPU is free: not while nullrdc busy-waits on a
//!   transmission and its ACK, nor while the router writes a packet up the line, byte by byte
//!   with `uart1_writeb()` busy-waiting on `UCBUSY` (`cpu/msp430/f5xxx/uart1.c`).
//! - Router to host: the same line rate; the host reads without limit.

use covey_proto::{Duration, Instant};

/// The serial line's constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlipConfig {
    /// Baud rate (115 200).
    pub baud: u32,
    /// Bit times per byte (8N1: 10).
    pub bits_per_byte: u32,
    /// Packets `slip.c` holds before dropping (2).
    pub buffered_packets: usize,
    /// Header bytes on the line besides the UDP payload (uncompressed IPv6 + UDP: 48).
    pub header_bytes: usize,
}

impl Default for SlipConfig {
    fn default() -> Self {
        SlipConfig {
            baud: 115_200,
            bits_per_byte: 10,
            buffered_packets: 2,
            header_bytes: 48,
        }
    }
}

impl SlipConfig {
    /// Time on the line of a packet with `payload` UDP payload bytes, both `SLIP_END`s included.
    pub fn line_time(&self, payload: usize) -> Duration {
        let bytes = (payload + self.header_bytes + 2) as u64;
        let bits = bytes * u64::from(self.bits_per_byte);
        Duration::from_nanos(bits * 1_000_000_000 / u64::from(self.baud.max(1)))
    }
}

/// The line and the router's receive buffer.
#[derive(Debug, Clone)]
pub struct SlipLine {
    config: SlipConfig,
    down_free_at: Instant,
    up_free_at: Instant,
    buffered: usize,
    /// Packets dropped because two were already buffered.
    pub overflows: u64,
}

impl SlipLine {
    /// An idle line.
    pub fn new(config: SlipConfig) -> Self {
        SlipLine {
            config,
            down_free_at: Instant::ZERO,
            up_free_at: Instant::ZERO,
            buffered: 0,
            overflows: 0,
        }
    }

    /// The constants.
    pub fn config(&self) -> &SlipConfig {
        &self.config
    }

    /// The host writes a packet at `now`: when its last byte reaches the router.
    pub fn host_to_router(&mut self, now: Instant, payload: usize) -> Instant {
        let start = self.down_free_at.max(now);
        self.down_free_at = start + self.config.line_time(payload);
        self.down_free_at
    }

    /// A packet's last byte reached the router: whether `slip.c` keeps it.
    pub fn arrived(&mut self) -> bool {
        if self.buffered >= self.config.buffered_packets {
            self.overflows += 1;
            false
        } else {
            self.buffered += 1;
            true
        }
    }

    /// `slip_process` moves every buffered packet to uIP: how many.
    pub fn drain(&mut self) -> usize {
        std::mem::take(&mut self.buffered)
    }

    /// Packets buffered at the router.
    pub fn buffered(&self) -> usize {
        self.buffered
    }

    /// The router writes a packet up the line at `now` (its CPU is busy until then): when the
    /// host has it.
    pub fn router_to_host(&mut self, now: Instant, payload: usize) -> Instant {
        let start = self.up_free_at.max(now);
        self.up_free_at = start + self.config.line_time(payload);
        self.up_free_at
    }

    /// Until when the router's CPU writes up the line.
    pub fn writing_until(&self) -> Instant {
        self.up_free_at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_carries_ten_bits_per_byte_at_115200_baud() {
        let config = SlipConfig::default();
        // A 20-byte CoAP request: 20 + 48 + 2 = 70 bytes = 700 bits = 6.076 ms.
        assert_eq!(config.line_time(20).as_micros(), 6076);
        let mut line = SlipLine::new(config);
        let first = line.host_to_router(Instant::ZERO, 20);
        let second = line.host_to_router(Instant::ZERO, 20);
        assert_eq!(
            first.as_nanos() * 2,
            second.as_nanos(),
            "back to back on the line"
        );
    }

    #[test]
    fn a_third_packet_is_dropped_while_two_wait() {
        let mut line = SlipLine::new(SlipConfig::default());
        assert!(line.arrived());
        assert!(line.arrived());
        assert!(!line.arrived());
        assert_eq!(line.overflows, 1);
        assert_eq!(line.drain(), 2);
        assert!(line.arrived());
    }
}
