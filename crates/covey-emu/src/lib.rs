//! The Covey emulator: real processes (covey, brokers, HTTP servers) in network namespaces
//! whose traffic passes through TUN devices into one userspace forwarder that applies the
//! simulator's own link models (covey-sim's `media`: rate with a drop-tail queue or a tbf
//! token bucket, delay with jitter, Bernoulli or Gilbert–Elliott loss, per direction) on
//! real time, and counts packets
//! and bytes per flow; and the real protocol stacks the lab's scenarios run in it
//! ([`stacks`]). One model, two clocks: the simulator drives it on virtual time, the emulator
//! on the machine's monotonic clock. It depends on covey-sim but not on the scenarios
//! (covey-lab), and installs nothing: the external programs it runs (Mosquitto, Cyclone DDS)
//! come from `scripts/lab-stacks.sh`. Linux only (on other systems the library is empty);
//! needs root (CAP_NET_ADMIN).
//!
//! ```no_run
//! use covey_emu::{emulated_link, EmuError, Testbed};
//! use covey_proto::Duration;
//! use covey_sim::media::{LossSpec, PropagationDelay};
//!
//! let link = emulated_link(
//!     1_000_000,
//!     PropagationDelay::Fixed(Duration::from_millis(50)),
//!     LossSpec::Bernoulli { p: 0.05 },
//!     100,
//! );
//! let mut testbed = Testbed::builder()
//!     .node("client")
//!     .node("server")
//!     .symmetric_link("client", "server", link)
//!     .build()?;
//! let server = testbed.address("server")?;
//! testbed.exec("server", std::process::Command::new("covey").args(["serve"]))?;
//! # let _ = server;
//! # Ok::<(), EmuError>(())
//! ```
#![cfg(target_os = "linux")]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod clock;
mod error;
pub mod flow_counters;
mod interrupt;
mod link_process;
pub mod link_stats;
pub mod message_marks;
pub mod namespace;
mod packet_pool;
pub mod realtime;
pub mod stacks;
mod supervisor;
mod testbed;
mod tun_link;
pub mod validation;

pub use error::EmuError;
pub use flow_counters::{Flow, FlowCounters, FlowRecord};
pub use interrupt::clean_up_after_interrupt;
pub use link_stats::{DirectionStats, ForwarderStats, Lateness};
pub use message_marks::{MessageCounts, MessageMarker};
pub use testbed::{ProcessId, Testbed, TestbedBuilder};
pub use tun_link::DEVICE;

use covey_proto::Duration;
use covey_sim::media::{
    Framing, HeaderModel, LinkConfig, LossSpec, PropagationDelay, RateLimit, TbfConfig,
};

/// Every namespace the emulator creates starts with this (then pid, testbed, node).
pub const NAMESPACE_PREFIX: &str = "covey-emu-";

/// `Ok` when this process may create namespaces and TUN devices; otherwise the reason,
/// which tests print when they skip.
pub fn require_root() -> Result<(), EmuError> {
    if !nix::unistd::geteuid().is_root() {
        return Err(EmuError::NotRoot);
    }
    if !std::path::Path::new("/dev/net/tun").exists() {
        return Err(EmuError::Missing {
            what: "/dev/net/tun",
            hint: "load the tun module (modprobe tun)",
        });
    }
    Ok(())
}

/// A link direction for the emulator: `rate_bps`, a drop-tail queue of `queue_packets`,
/// `delay` after serialisation and `loss` per packet; whole IP packets, no fragmentation.
pub fn emulated_link(
    rate_bps: u64,
    delay: PropagationDelay,
    loss: LossSpec,
    queue_packets: usize,
) -> LinkConfig {
    LinkConfig {
        rate_bps,
        delay,
        framing: Framing {
            mtu: 65_535,
            header: HeaderModel::Included,
        },
        queue_packets,
        loss,
        rate_limit: RateLimit::Serialiser,
    }
}

/// A link direction for the emulator shaped by a tbf (token bucket) instead of the rate
/// serialiser: netem's `delay` and `loss` before or after it as `tbf.order` says; whole IP
/// packets, no fragmentation.
pub fn tbf_link(tbf: TbfConfig, delay: PropagationDelay, loss: LossSpec) -> LinkConfig {
    LinkConfig {
        rate_limit: RateLimit::TokenBucket(tbf),
        ..emulated_link(tbf.line_bps, delay, loss, 0)
    }
}

/// A delay uniform in 80–120 % of `target`, as the seed paper drew NetEM's.
pub fn paper_jitter(target: Duration) -> PropagationDelay {
    PropagationDelay::Uniform {
        min: target * 4 / 5,
        max: target * 6 / 5,
    }
}
