//! A node's end of the emulated network: a TUN device created inside the node's namespace
//! (so every namespace can call it `emu0`), holding the node's IPv4 address and a /24 route;
//! the forwarder reads what the node sends from its file descriptor and writes what reaches
//! the node back into it.

use std::net::Ipv4Addr;

use tun_rs::{DeviceBuilder, SyncDevice};

use super::namespace::Namespace;
use super::EmuError;

/// The TUN device's name inside every namespace.
pub const DEVICE: &str = "emu0";

/// Packets the kernel queues on the device for the forwarder.
const TX_QUEUE: &str = "10000";

/// An open TUN device inside a namespace.
pub struct TunPort {
    device: SyncDevice,
}

impl std::fmt::Debug for TunPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TunPort").finish_non_exhaustive()
    }
}

impl TunPort {
    /// Creates `emu0` in `ns` with `address`/`prefix_len`, MTU `mtu`, up, non-blocking.
    pub fn create(
        ns: &Namespace,
        address: Ipv4Addr,
        prefix_len: u8,
        mtu: u16,
    ) -> Result<TunPort, EmuError> {
        let device = ns.run_inside(|| {
            // Only IPv4 is routed; IPv6 would only add router solicitations to the counts.
            let _ = std::fs::write("/proc/sys/net/ipv6/conf/default/disable_ipv6", "1");
            DeviceBuilder::new()
                .name(DEVICE)
                .mtu(mtu)
                .packet_information(false)
                .build_sync()
        })?;
        let device = device.map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                EmuError::Missing {
                    what: "/dev/net/tun",
                    hint: "load the tun module (modprobe tun) or run where TUN devices exist",
                }
            } else {
                EmuError::io(format!("create TUN device in {}", ns.name()), e)
            }
        })?;
        device
            .set_nonblocking(true)
            .map_err(|e| EmuError::io("make the TUN device non-blocking", e))?;
        let cidr = format!("{address}/{prefix_len}");
        ns.ip(&["addr", "add", &cidr, "dev", DEVICE])?;
        // The kernel queues what the node sends until the forwarder reads it; the default
        // 500 packets would drop bursts whenever the forwarder waits for a CPU.
        ns.ip(&["link", "set", DEVICE, "txqueuelen", TX_QUEUE, "up"])?;
        Ok(TunPort { device })
    }

    /// The open device.
    pub fn device(&self) -> &SyncDevice {
        &self.device
    }
}
