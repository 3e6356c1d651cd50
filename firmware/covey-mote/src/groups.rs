//! The mote as a host of the engine's Apps: the multicast groups its `/mc` resource joins
//! (the EM's group membership, paper 000), kept in a small table and handed to smoltcp,
//! which then takes in packets to those groups and reports them with MLDv2 (RFC 3810).

use alloc::vec::Vec;
use core::fmt;
use core::net::{IpAddr, Ipv6Addr};

use covey_proto::{GroupError, Host, LogLevel};
use smoltcp::iface::Interface;

/// The most groups the mote joins (smoltcp's table holds as many).
const MAX_GROUPS: usize = 4;

/// The groups asked for, and whether smoltcp has been told.
pub struct MoteGroups {
    joined: [Option<Ipv6Addr>; MAX_GROUPS],
    /// Groups left since smoltcp was last told.
    left: [Option<Ipv6Addr>; MAX_GROUPS],
    changed: bool,
}

impl MoteGroups {
    /// No group.
    pub const fn new() -> MoteGroups {
        MoteGroups {
            joined: [None; MAX_GROUPS],
            left: [None; MAX_GROUPS],
            changed: false,
        }
    }

    /// Tells smoltcp what changed since the last call.
    pub fn apply(&mut self, iface: &mut Interface) {
        if !self.changed {
            return;
        }
        for group in self.left.iter_mut().filter_map(Option::take) {
            let _ = iface.leave_multicast_group(group);
        }
        for group in self.joined.iter().flatten() {
            let _ = iface.join_multicast_group(*group);
        }
        self.changed = false;
    }
}

impl Host for MoteGroups {
    fn join_group(&mut self, group: IpAddr) -> Result<(), GroupError> {
        let IpAddr::V6(group) = group else {
            // The mote speaks IPv6 only.
            return Err(GroupError::Unsupported);
        };
        if self.joined.contains(&Some(group)) {
            return Ok(());
        }
        let slot = self
            .joined
            .iter_mut()
            .find(|g| g.is_none())
            .ok_or(GroupError::TooManyGroups)?;
        *slot = Some(group);
        self.left.iter_mut().for_each(|g| {
            if *g == Some(group) {
                *g = None;
            }
        });
        self.changed = true;
        Ok(())
    }

    fn leave_group(&mut self, group: IpAddr) -> Result<(), GroupError> {
        let IpAddr::V6(group) = group else {
            return Err(GroupError::NotJoined);
        };
        let slot = self
            .joined
            .iter_mut()
            .find(|g| **g == Some(group))
            .ok_or(GroupError::NotJoined)?;
        *slot = None;
        if let Some(free) = self.left.iter_mut().find(|g| g.is_none()) {
            *free = Some(group);
        }
        self.changed = true;
        Ok(())
    }

    fn groups(&self) -> Vec<IpAddr> {
        self.joined
            .iter()
            .flatten()
            .map(|g| IpAddr::V6(*g))
            .collect()
    }

    fn log(&mut self, _level: LogLevel, _message: fmt::Arguments<'_>) {}
}
