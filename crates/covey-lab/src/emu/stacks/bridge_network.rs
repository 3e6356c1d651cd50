//! A network of namespaces on a Linux bridge (veth pairs into a hub namespace). It carries
//! real traffic and caps rates with the kernel's token bucket (`tbf`), but has no loss or
//! delay: this kernel has no netem, and those need the userspace link emulator. Needs root.

use std::net::Ipv4Addr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

use super::network::{LinkCondition, Network, Traffic};
use crate::LabError;

/// Ethernet header bytes on a veth, taken off to count IP bytes.
const ETHERNET_HEADER: u64 = 14;

/// The subnet every node is on (inside namespaces this network creates, nowhere else).
const SUBNET: [u8; 3] = [10, 77, 0];

/// Namespaces `<prefix>-<node>` around a bridge in `<prefix>-hub`; removed on drop.
#[derive(Debug)]
pub struct BridgeNetwork {
    prefix: String,
    nodes: Vec<String>,
}

/// Runs `ip` with `args`; an error carrying its message when it fails.
fn ip(args: &[&str]) -> Result<String, LabError> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| LabError::Stack(format!("cannot run ip: {e}")))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(LabError::Stack(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

fn tc(namespace: &str, args: &[&str]) -> Result<(), LabError> {
    let out = Command::new("ip")
        .args(["netns", "exec", namespace, "tc"])
        .args(args)
        .output()
        .map_err(|e| LabError::Stack(format!("cannot run tc: {e}")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(LabError::Stack(format!(
            "tc {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

/// `None` when running as root, else why a root-only test or scenario cannot run.
pub fn root_skip_reason() -> Option<String> {
    let uid = Command::new("id").arg("-u").output().ok()?;
    (String::from_utf8_lossy(&uid.stdout).trim() != "0")
        .then(|| "needs root (network namespaces, veth, tc): run as root or with sudo".to_string())
}

impl BridgeNetwork {
    /// Creates one namespace per name in `nodes` (at most 200), addresses 10.77.0.1, .2, ...
    /// in that order.
    pub fn create(nodes: &[&str]) -> Result<BridgeNetwork, LabError> {
        static INSTANCE: AtomicU32 = AtomicU32::new(0);
        if nodes.is_empty() || nodes.len() > 200 {
            return Err(LabError::InvalidOption(
                "a bridge network has 1 to 200 nodes".into(),
            ));
        }
        let prefix = format!(
            "covey-br{}-{}",
            std::process::id(),
            INSTANCE.fetch_add(1, Ordering::Relaxed)
        );
        let network = BridgeNetwork {
            prefix,
            nodes: nodes.iter().map(|n| n.to_string()).collect(),
        };
        // Built after `network` exists, so that a failure half-way removes what was made.
        network.build()?;
        Ok(network)
    }

    fn namespace(&self, node: &str) -> String {
        format!("{}-{node}", self.prefix)
    }

    fn hub(&self) -> String {
        format!("{}-hub", self.prefix)
    }

    fn build(&self) -> Result<(), LabError> {
        let hub = self.hub();
        ip(&["netns", "add", &hub])?;
        ip(&["-n", &hub, "link", "add", "br0", "type", "bridge"])?;
        ip(&["-n", &hub, "link", "set", "br0", "up"])?;
        for (i, node) in self.nodes.iter().enumerate() {
            let ns = self.namespace(node);
            let port = format!("p{i}");
            let addr = format!("{}/24", self.address_of(i));
            ip(&["netns", "add", &ns])?;
            ip(&[
                "-n", &hub, "link", "add", &port, "type", "veth", "peer", "name", "eth0", "netns",
                &ns,
            ])?;
            ip(&["-n", &hub, "link", "set", &port, "master", "br0", "up"])?;
            ip(&["-n", &ns, "addr", "add", &addr, "dev", "eth0"])?;
            ip(&["-n", &ns, "link", "set", "eth0", "up"])?;
            ip(&["-n", &ns, "link", "set", "lo", "up"])?;
        }
        Ok(())
    }

    fn address_of(&self, index: usize) -> Ipv4Addr {
        let host = u8::try_from(index + 1).unwrap_or(u8::MAX);
        Ipv4Addr::new(SUBNET[0], SUBNET[1], SUBNET[2], host)
    }

    fn index(&self, node: &str) -> Result<usize, LabError> {
        self.nodes
            .iter()
            .position(|n| n == node)
            .ok_or_else(|| LabError::InvalidOption(format!("no node `{node}` in the network")))
    }

    /// The namespaces this network made (for checks that nothing is left).
    pub fn namespaces(&self) -> Vec<String> {
        let mut all: Vec<String> = self.nodes.iter().map(|n| self.namespace(n)).collect();
        all.push(self.hub());
        all
    }

    fn tx_counters(&self, node: &str) -> Result<(u64, u64), LabError> {
        let json = ip(&[
            "-n",
            &self.namespace(node),
            "-s",
            "-j",
            "link",
            "show",
            "eth0",
        ])?;
        let v: serde_json::Value = serde_json::from_str(&json)?;
        let tx = &v[0]["stats64"]["tx"];
        match (tx["packets"].as_u64(), tx["bytes"].as_u64()) {
            (Some(p), Some(b)) => Ok((p, b)),
            _ => Err(LabError::Stack(format!("no counters for {node}: {json}"))),
        }
    }
}

impl Network for BridgeNetwork {
    fn address(&self, node: &str) -> Result<Ipv4Addr, LabError> {
        Ok(self.address_of(self.index(node)?))
    }

    fn command(&self, node: &str, program: &Path) -> Result<Command, LabError> {
        self.index(node)?;
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.namespace(node)])
            .arg(program);
        Ok(c)
    }

    fn traffic(&self) -> Result<Traffic, LabError> {
        let mut total = Traffic::default();
        for node in &self.nodes {
            let (packets, bytes) = self.tx_counters(node)?;
            total.packets += packets;
            total.bytes += bytes.saturating_sub(packets * ETHERNET_HEADER);
        }
        Ok(total)
    }

    fn set_condition(&self, condition: &LinkCondition) -> Result<(), LabError> {
        if condition.impairs() {
            return Err(LabError::Stack(
                "loss and delay need the userspace link emulator; the bridge network only \
                 caps rates"
                    .into(),
            ));
        }
        let hub = self.hub();
        for (i, node) in self.nodes.iter().enumerate() {
            let port = format!("p{i}");
            for (ns, dev) in [(self.namespace(node), "eth0"), (hub.clone(), port.as_str())] {
                // Removing a qdisc that is not there fails harmlessly.
                let _ = tc(&ns, &["qdisc", "del", "dev", dev, "root"]);
                if let Some(rate) = condition.rate_bytes_per_s {
                    let bits = format!("{}bit", (rate * 8.0).round().max(8.0) as u64);
                    // A drop-tail queue of about 50 full-size packets; a burst of two.
                    tc(
                        &ns,
                        &[
                            "qdisc", "add", "dev", dev, "root", "tbf", "rate", &bits, "burst",
                            "3200", "limit", "75000",
                        ],
                    )?;
                }
            }
        }
        Ok(())
    }
}

impl Drop for BridgeNetwork {
    fn drop(&mut self) {
        for ns in self.namespaces() {
            let _ = ip(&["netns", "del", &ns]);
        }
    }
}
