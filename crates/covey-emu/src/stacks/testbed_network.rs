//! The emulator's [`Testbed`] as the scenarios' [`Network`]: a star of links from one hub
//! node (the server) to the others, each direction impaired by the same condition.

use std::net::Ipv4Addr;
use std::process::Command;
use std::sync::{Arc, Mutex, MutexGuard};

use covey_proto::Duration;
use covey_sim::media::{LinkConfig, LossSpec, PropagationDelay, RateLimit, TbfConfig};

use super::agent_process::{agent_stdio, AgentProcess, ProcessControl};
use super::network::{LinkCondition, Network, Traffic};
use super::telemetry::MESSAGE_MARKER;
use crate::{emulated_link, paper_jitter, EmuError, ProcessId, Testbed};

/// The rate of an uncapped link: far above anything the runs send.
pub const UNCAPPED_BPS: u64 = 1_000_000_000;

/// Packets a link direction queues before it drops (drop-tail), as a TBF with a modest
/// limit would.
pub const QUEUE_PACKETS: usize = 100;

/// The tbf bucket the lab proposes for seed 004's caps (which the paper does not give):
/// 32 kbit in tc's units, 4096 B — the usual tutorial value, above a full 1500-byte packet
/// (a smaller bucket drops larger packets) and far above tc-tbf(8)'s `rate / HZ` minimum
/// (63 B at 6.25 kB/s and HZ = 100). See `docs/lab/tbf.md`.
pub const TBF_BURST_BYTES: u64 = 4096;

/// The tbf latency the lab proposes (tc derives `limit = rate × latency + burst` from it):
/// 50 ms, the value of the common tbf recipes; 4408 B of queue at 6.25 kB/s.
pub const TBF_LATENCY: Duration = Duration::from_millis(50);

/// The largest telemetry sequence number the links tell apart (the scenarios send at most
/// 100 000 messages a trial; 16 KiB of bits per direction at most).
pub const MAX_MESSAGE_LABEL: u64 = 131_071;

/// A running testbed; dropping it (and the processes started in it) removes every
/// namespace, device and process.
#[derive(Debug)]
pub struct TestbedNetwork {
    testbed: Arc<Mutex<Testbed>>,
}

/// A process the testbed started: the testbed stops it, here or when interrupted.
#[derive(Debug)]
struct TestbedProcess {
    testbed: Arc<Mutex<Testbed>>,
    id: ProcessId,
}

impl ProcessControl for TestbedProcess {
    fn has_exited(&mut self) -> bool {
        let Ok(mut t) = self.testbed.lock() else {
            return true;
        };
        t.process(self.id)
            .map_or(true, |c| matches!(c.try_wait(), Ok(Some(_))))
    }

    fn stop(&mut self) {
        if let Ok(mut t) = self.testbed.lock() {
            let _ = t.stop_process(self.id);
        }
    }
}

fn emu_error(e: EmuError) -> EmuError {
    EmuError::Stack(format!("emulator: {e}"))
}

/// The link direction for `condition`: Bernoulli loss, delay uniform in 80–120 % of the
/// target, the rate cap with a drop-tail queue.
pub fn link_config(condition: &LinkCondition) -> LinkConfig {
    let delay = if condition.delay_s > 0.0 {
        paper_jitter(Duration::from_nanos((condition.delay_s * 1e9) as u64))
    } else {
        PropagationDelay::Fixed(Duration::ZERO)
    };
    let loss = if condition.loss > 0.0 {
        LossSpec::Bernoulli {
            p: condition.loss.clamp(0.0, 1.0),
        }
    } else {
        LossSpec::None
    };
    let rate = condition
        .rate_bytes_per_s
        .map_or(UNCAPPED_BPS, |r| (r * 8.0).round().max(1.0) as u64);
    emulated_link(rate, delay, loss, QUEUE_PACKETS)
}

/// The tbf seed 004 capped its links with, at `rate_bytes_per_s`: the lab's proposed burst
/// and latency ([`TBF_BURST_BYTES`], [`TBF_LATENCY`]), netem before tbf as on one host.
pub fn paper_tbf(rate_bytes_per_s: f64) -> TbfConfig {
    tbf_at(rate_bytes_per_s, TBF_BURST_BYTES, TBF_LATENCY)
}

/// A tbf at `rate_bytes_per_s` with `burst_bytes` of bucket and `latency` of queue (tc's
/// `limit = rate × latency + burst`), netem before tbf as on one host.
pub fn tbf_at(rate_bytes_per_s: f64, burst_bytes: u64, latency: Duration) -> TbfConfig {
    let rate_bps = (rate_bytes_per_s * 8.0).round().max(1.0) as u64;
    TbfConfig::with_latency(rate_bps, burst_bytes, latency)
}

/// [`link_config`] with the rate cap, if any, as a tbf token bucket ([`paper_tbf`]) rather
/// than a serialiser: what `tc … tbf` did in seed 004. Uncapped conditions are unchanged.
pub fn tbf_link_config(condition: &LinkCondition) -> LinkConfig {
    tbf_link_config_with(condition, TBF_BURST_BYTES, TBF_LATENCY)
}

/// [`tbf_link_config`] with a chosen bucket and queue ([`tbf_at`]).
pub fn tbf_link_config_with(
    condition: &LinkCondition,
    burst_bytes: u64,
    latency: Duration,
) -> LinkConfig {
    let link = link_config(condition);
    match condition.rate_bytes_per_s {
        Some(rate) => LinkConfig {
            rate_limit: RateLimit::TokenBucket(tbf_at(rate, burst_bytes, latency)),
            ..link
        },
        None => link,
    }
}

impl TestbedNetwork {
    /// Nodes `hub` and `leaves`, each leaf joined to the hub by a link with `condition` in
    /// both directions (leaf-to-leaf links are clean and unused). Needs root.
    pub fn star(
        hub: &str,
        leaves: &[&str],
        condition: &LinkCondition,
        seed: u64,
    ) -> Result<TestbedNetwork, EmuError> {
        TestbedNetwork::star_with_link(hub, leaves, link_config(condition), seed)
    }

    /// [`TestbedNetwork::star`] with every direction of every link set to `link` (e.g.
    /// [`tbf_link_config`] of a condition). Needs root.
    pub fn star_with_link(
        hub: &str,
        leaves: &[&str],
        link: LinkConfig,
        seed: u64,
    ) -> Result<TestbedNetwork, EmuError> {
        let mut builder = Testbed::builder()
            .seed(seed)
            .message_marker(MESSAGE_MARKER, MAX_MESSAGE_LABEL)
            .node(hub);
        for leaf in leaves {
            builder = builder.node(leaf).symmetric_link(hub, leaf, link);
        }
        Ok(TestbedNetwork::from_testbed(
            builder.build().map_err(emu_error)?,
        ))
    }

    /// A testbed built elsewhere (any topology).
    pub fn from_testbed(testbed: Testbed) -> TestbedNetwork {
        TestbedNetwork {
            testbed: Arc::new(Mutex::new(testbed)),
        }
    }

    fn lock(&self) -> Result<MutexGuard<'_, Testbed>, EmuError> {
        self.testbed
            .lock()
            .map_err(|_| EmuError::Stack("emulator: the testbed's lock is poisoned".into()))
    }

    /// The namespace names of the nodes, e.g. to check that none is left.
    pub fn namespaces(&self) -> Result<Vec<String>, EmuError> {
        let t = self.lock()?;
        t.nodes()
            .iter()
            .map(|n| t.netns(n).map(str::to_string).map_err(emu_error))
            .collect()
    }
}

impl Network for TestbedNetwork {
    fn address(&self, node: &str) -> Result<Ipv4Addr, EmuError> {
        self.lock()?.address(node).map_err(emu_error)
    }

    fn spawn(
        &self,
        node: &str,
        name: &str,
        mut command: Command,
    ) -> Result<AgentProcess, EmuError> {
        agent_stdio(&mut command);
        let mut t = self.lock()?;
        let id = t
            .exec(node, &mut command)
            .map_err(|e| EmuError::Stack(format!("cannot start {name}: {e}")))?;
        let stdout = t.process(id).ok().and_then(|c| c.stdout.take());
        let control = TestbedProcess {
            testbed: self.testbed.clone(),
            id,
        };
        Ok(AgentProcess::watch(name, stdout, Box::new(control)))
    }

    fn traffic(&self) -> Result<Traffic, EmuError> {
        let mut total = Traffic::default();
        for record in self.lock()?.counters() {
            total.packets += record.counters.packets_sent;
            total.bytes += record.counters.bytes_sent;
        }
        for (_, _, counts) in self.lock()?.messages() {
            total.messages = total.messages.plus(&counts);
        }
        Ok(total)
    }
}

/// `None` when the emulator can run here, else why not (tests print it when they skip).
pub fn skip_reason() -> Option<String> {
    crate::require_root().err().map(|e| e.to_string())
}
