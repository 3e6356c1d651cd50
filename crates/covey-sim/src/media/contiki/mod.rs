//! Contiki 3.0's network stack below IPv6, as the group-communication paper's nodes ran it
//! (Contiki master of 2 July 2014, commit ccc75404f46a7eedc82508ed4e4073144dfe533e, on Rmoni
//! RM090 boards: MSP430F5437 + CC2520, the hardware of Contiki's `wismote` platform), layered
//! over the standard 802.15.4 medium's radio:
//!
//! - [`clock`]: each node's 128 Hz tick at its own phase, on which csma.c's and SMRF's timers
//!   expire.
//! - [`csma`]: `core/net/mac/csma.c`, per-neighbour packet queues, at most
//!   `CSMA_MAX_NEIGHBOR_QUEUES` neighbours with a queue, retries timed in units of the RDC's
//!   channel check interval.
//! - [`nullrdc`]: `core/net/mac/nullrdc.c` with `NULLRDC_802154_AUTOACK` (one transmission per
//!   send, no retry of its own; a send while a frame is being received fails as a collision)
//!   and `dev/cc2520/cc2520.c`'s single CCA (`STXONCCA`).
//! - [`slip`]: the rpl-border-router's serial line (`core/dev/slip.c`, `tools/tunslip6.c`).
//! - [`smrf`]: `core/net/ipv6/multicast/smrf.c`'s randomised forwarding delay.
//! - [`rx_fifo`]: the CC2520's 128-byte receive FIFO, which the border router reads only when
//!   its CPU is not writing up the serial line.
//!
//! [`ContikiConfig`] holds the values; every default is the one Contiki's source fixes for the
//! testbed, and its doc comment says where the source does not fix it.

pub mod clock;
pub mod csma;
pub mod nullrdc;
pub mod rx_fifo;
pub mod slip;
pub mod smrf;

use covey_proto::Duration;

pub use clock::NodeClock;
pub use csma::{ContikiCsma, CsmaDecision, TxStatus};
pub use rx_fifo::{RxFifo, RxRefusal, CC2520_RX_FIFO_BYTES};
pub use slip::{SlipConfig, SlipLine};
pub use smrf::SmrfConfig;

/// Contiki's clock: `CLOCK_CONF_SECOND` is 128 on `platform/wismote/platform-conf.h` (and on
/// z1 and sky), so one tick is 7.8125 ms.
pub const CLOCK_SECOND: u32 = 128;

/// Everything that configures the Contiki layers of one 802.15.4 network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContikiConfig {
    /// `CLOCK_SECOND` of the platform (128 on wismote).
    pub clock_second: u32,
    /// `NETSTACK_RDC_CHANNEL_CHECK_RATE`: 8 in `platform/wismote/contiki-conf.h`. nullrdc's
    /// `channel_check_interval()` returns 0, so csma.c's `default_timebase()` falls back to
    /// CLOCK_SECOND / this rate = 16 ticks = 125 ms.
    pub channel_check_rate: u32,
    /// `CSMA_MAX_NEIGHBOR_QUEUES`: 2 by default in csma.c; no platform or example overrides it.
    pub max_neighbor_queues: usize,
    /// `MAX_QUEUED_PACKETS` = `QUEUEBUF_NUM` on the members: 8 in `platform/wismote/
    /// contiki-conf.h` for IPv6 builds. The paper's Erbium project configuration is not
    /// published; the page shows a sweep.
    pub member_queued_packets: usize,
    /// `QUEUEBUF_NUM` on the border router: 4 in `examples/ipv6/rpl-border-router/
    /// project-conf.h`.
    pub border_router_queued_packets: usize,
    /// The packet's max transmissions: sicslowpan.c sets `PACKETBUF_ATTR_MAX_MAC_TRANSMISSIONS`
    /// to `SICSLOWPAN_CONF_MAX_MAC_TRANSMISSIONS`, 5 in `platform/wismote/contiki-conf.h`
    /// (csma.c's own default `CSMA_MAX_MAC_TRANSMISSIONS` of 3 is overridden by it).
    pub max_mac_transmissions: u8,
    /// `CSMA_MAX_BACKOFF_EXPONENT`: 3 in csma.c.
    pub max_backoff_exponent: u8,
    /// The border router's SLIP line; `None` puts the gateway straight on the radio.
    pub slip: Option<SlipConfig>,
    /// The border router's radio receive FIFO in bytes (the CC2520's 128); `None` reads every
    /// frame the moment it arrives, as if the CPU were never busy.
    pub border_router_rx_fifo: Option<usize>,
    /// SMRF's forwarding delay.
    pub smrf: SmrfConfig,
    /// Whether each node's clock ticks at its own random phase ([`clock`]); false puts every
    /// node's ticks at the same instants (timers exactly k ticks from when they are set).
    pub clock_phases: bool,
}

impl Default for ContikiConfig {
    fn default() -> Self {
        ContikiConfig {
            clock_second: CLOCK_SECOND,
            channel_check_rate: 8,
            max_neighbor_queues: 2,
            member_queued_packets: 8,
            border_router_queued_packets: 4,
            max_mac_transmissions: 5,
            max_backoff_exponent: 3,
            slip: Some(SlipConfig::default()),
            border_router_rx_fifo: Some(CC2520_RX_FIFO_BYTES),
            smrf: SmrfConfig::default(),
            clock_phases: true,
        }
    }
}

impl ContikiConfig {
    /// One clock tick.
    pub fn tick(&self) -> Duration {
        Duration::from_nanos(1_000_000_000 / u64::from(self.clock_second.max(1)))
    }

    /// csma.c `default_timebase()` in ticks: nullrdc's `channel_check_interval()` is 0, so
    /// CLOCK_SECOND / NETSTACK_RDC_CHANNEL_CHECK_RATE.
    pub fn timebase_ticks(&self) -> u32 {
        (self.clock_second / self.channel_check_rate.max(1)).max(1)
    }

    /// csma.c `default_timebase()` as a duration (125 ms on wismote).
    pub fn timebase(&self) -> Duration {
        self.tick() * self.timebase_ticks()
    }
}
