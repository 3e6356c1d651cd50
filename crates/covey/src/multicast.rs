//! Joining and leaving IPv6 and IPv4 multicast groups on the running sockets.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Arc, Mutex, Weak};

use socket2::InterfaceIndexOrAddress;

use crate::socket::{canonical_ip, Socket};

/// Why a group could not be joined or left.
#[derive(Debug, thiserror::Error)]
pub enum MulticastError {
    /// The address is not a multicast address.
    #[error("{0} is not a multicast address")]
    NotMulticast(IpAddr),
    /// The configured maximum number of groups is reached.
    #[error("already a member of the maximum of {0} groups")]
    TooManyGroups(usize),
    /// Leaving a group that was not joined.
    #[error("not a member of {0}")]
    NotMember(IpAddr),
    /// No bound socket of the group's address family.
    #[error("no socket can join {0} (bind an address of its family)")]
    NoSocket(IpAddr),
    /// The text is not an IP address.
    #[error("not an IP address: {0:?}")]
    BadAddress(String),
    /// The named interface does not exist.
    #[error("unknown network interface {0:?}")]
    UnknownInterface(String),
    /// The operating system refused.
    #[error("cannot change membership of {group}: {source}")]
    Io {
        /// The group.
        group: IpAddr,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

/// One joined group: its address and the interface index (0: chosen by the kernel).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Group {
    /// The group address.
    pub address: IpAddr,
    /// The interface it was joined on (0 lets the kernel choose).
    pub interface: u32,
}

/// The multicast memberships of a driver's sockets; cloning shares them.
#[derive(Debug, Clone)]
pub struct Membership {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    sockets: Vec<Weak<Socket>>,
    joined: Mutex<Vec<Group>>,
    max_groups: usize,
    default_interface: u32,
}

impl Membership {
    pub(crate) fn new(
        sockets: &[Arc<Socket>],
        max_groups: usize,
        default_interface: u32,
    ) -> Membership {
        Membership {
            inner: Arc::new(Inner {
                sockets: sockets.iter().map(Arc::downgrade).collect(),
                joined: Mutex::new(Vec::new()),
                max_groups,
                default_interface,
            }),
        }
    }

    /// The groups joined, in joining order.
    pub fn groups(&self) -> Vec<Group> {
        self.lock().clone()
    }

    /// The most groups this endpoint joins at once.
    pub fn max_groups(&self) -> usize {
        self.inner.max_groups
    }

    /// The interface used when none is given.
    pub fn default_interface(&self) -> u32 {
        self.inner.default_interface
    }

    /// Joins `group` on `interface` (`None`: the default); true if newly joined.
    pub fn join(&self, group: IpAddr, interface: Option<u32>) -> Result<bool, MulticastError> {
        let group = canonical_ip(group);
        let interface = interface.unwrap_or(self.inner.default_interface);
        if !group.is_multicast() {
            return Err(MulticastError::NotMulticast(group));
        }
        let mut joined = self.lock();
        if joined
            .iter()
            .any(|g| g.address == group && g.interface == interface)
        {
            return Ok(false);
        }
        if joined.len() >= self.inner.max_groups {
            return Err(MulticastError::TooManyGroups(self.inner.max_groups));
        }
        self.apply(group, interface, true)?;
        joined.push(Group {
            address: group,
            interface,
        });
        tracing::info!(%group, interface, "joined multicast group");
        Ok(true)
    }

    /// Leaves `group` (on every interface it was joined on).
    pub fn leave(&self, group: IpAddr) -> Result<(), MulticastError> {
        let group = canonical_ip(group);
        let mut joined = self.lock();
        let interfaces: Vec<u32> = joined
            .iter()
            .filter(|g| g.address == group)
            .map(|g| g.interface)
            .collect();
        if interfaces.is_empty() {
            return Err(MulticastError::NotMember(group));
        }
        for interface in interfaces {
            self.apply(group, interface, false)?;
        }
        joined.retain(|g| g.address != group);
        tracing::info!(%group, "left multicast group");
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Group>> {
        // A poisoned list is still a consistent list of groups.
        self.inner.joined.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Joins or leaves on every socket that can carry the group: IPv4 groups on IPv4 sockets
    /// and dual-stack IPv6 sockets, IPv6 groups on IPv6 sockets.
    fn apply(&self, group: IpAddr, interface: u32, join: bool) -> Result<(), MulticastError> {
        let io = |source| MulticastError::Io { group, source };
        let mut applied = 0;
        for socket in self.inner.sockets.iter().filter_map(Weak::upgrade) {
            let sock = socket.sock_ref();
            match group {
                IpAddr::V6(g) if socket.is_ipv6() => {
                    if join {
                        sock.join_multicast_v6(&g, interface).map_err(io)?;
                    } else {
                        sock.leave_multicast_v6(&g, interface).map_err(io)?;
                    }
                }
                IpAddr::V4(g) if !socket.is_ipv6() || socket.is_dual_stack() => {
                    let iface = if interface == 0 {
                        InterfaceIndexOrAddress::Address(Ipv4Addr::UNSPECIFIED)
                    } else {
                        InterfaceIndexOrAddress::Index(interface)
                    };
                    if join {
                        sock.join_multicast_v4_n(&g, &iface).map_err(io)?;
                    } else {
                        sock.leave_multicast_v4_n(&g, &iface).map_err(io)?;
                    }
                }
                _ => continue,
            }
            applied += 1;
        }
        if applied == 0 {
            return Err(MulticastError::NoSocket(group));
        }
        Ok(())
    }
}

/// The index of a network interface given by name (`lo`, `eth0`) or number.
pub fn interface_index(name: &str) -> Result<u32, MulticastError> {
    if let Ok(n) = name.parse::<u32>() {
        return Ok(n);
    }
    let unknown = || MulticastError::UnknownInterface(name.to_string());
    // Names are single path components; anything else cannot be an interface.
    if name.is_empty() || name.contains('/') || name.starts_with('.') {
        return Err(unknown());
    }
    std::fs::read_to_string(format!("/sys/class/net/{name}/ifindex"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(unknown)
}

/// Parses `ADDR` or `ADDR%IFACE` into a group and an optional interface index.
pub fn parse_group(text: &str) -> Result<(IpAddr, Option<u32>), MulticastError> {
    let (addr, iface) = match text.split_once('%') {
        Some((a, i)) => (a, Some(interface_index(i)?)),
        None => (text, None),
    };
    let addr = addr.trim_start_matches('[').trim_end_matches(']');
    let ip: IpAddr = addr
        .parse()
        .map_err(|_| MulticastError::BadAddress(text.to_string()))?;
    if !ip.is_multicast() {
        return Err(MulticastError::NotMulticast(ip));
    }
    Ok((ip, iface))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_syntax() {
        assert_eq!(
            parse_group("ff02::fd").unwrap(),
            ("ff02::fd".parse().unwrap(), None)
        );
        assert_eq!(
            parse_group("224.0.1.187%7").unwrap(),
            ("224.0.1.187".parse().unwrap(), Some(7))
        );
        assert!(matches!(
            parse_group("::1"),
            Err(MulticastError::NotMulticast(_))
        ));
        assert!(matches!(
            interface_index("../x"),
            Err(MulticastError::UnknownInterface(_))
        ));
        assert!(interface_index("lo").unwrap() > 0);
    }
}
