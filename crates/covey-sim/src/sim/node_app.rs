//! What a simulated node runs: covey-proto `App`s in the engine's own drive loop
//! ([`covey_proto::Node`], as the tokio driver and the tests run them), a [`Host`] for
//! groups and logging, plus the few hooks only a lab needs.

use std::fmt;
use std::net::IpAddr;

pub use covey_proto::Lone;
use covey_proto::{App, AppSet, Apps, GroupError, Host, Instant, LogLevel};

/// The simulator's side of a node for its Apps: group memberships (the medium's delivery
/// filter reads them) and a log that is counted, not printed (runs are silent).
#[derive(Debug, Default, Clone)]
pub struct SimHost {
    pub(crate) groups: Vec<IpAddr>,
    /// Log lines the node's Apps wrote.
    pub log_lines: u64,
}

impl SimHost {
    /// Whether the node is a member of `group`.
    pub fn is_member(&self, group: IpAddr) -> bool {
        self.groups.contains(&group)
    }
}

impl Host for SimHost {
    fn join_group(&mut self, group: IpAddr) -> Result<(), GroupError> {
        if !self.groups.contains(&group) {
            self.groups.push(group);
        }
        Ok(())
    }

    fn leave_group(&mut self, group: IpAddr) -> Result<(), GroupError> {
        let before = self.groups.len();
        self.groups.retain(|g| *g != group);
        if self.groups.len() == before {
            return Err(GroupError::NotJoined);
        }
        Ok(())
    }

    fn groups(&self) -> Vec<IpAddr> {
        self.groups.clone()
    }

    fn log(&mut self, _level: LogLevel, _message: fmt::Arguments<'_>) {
        self.log_lines += 1;
    }
}

/// The lab's hooks on a node's applications, beyond what [`covey_proto::Node`] drives
/// (start, events): a tap on transmitted datagrams, a notion of "done", and a way to
/// replace the node's endpoint with a fresh one (a new client process).
pub trait NodeApp: Apps {
    /// Lab instrumentation: every datagram the node's endpoint sends, as it leaves.
    fn on_transmit(&mut self, _now: Instant, _datagram: &[u8]) {}

    /// Whether the node has finished its work (the run may stop when all have).
    fn is_done(&self) -> bool {
        true
    }

    /// Whether the Apps want a fresh endpoint (new engine state, new port) now; the
    /// simulator then replaces it and starts the Apps again.
    fn take_restart(&mut self) -> bool {
        false
    }
}

/// Several covey-proto Apps on one node, routed by the engine's owner ids.
impl<A: ?Sized + App> NodeApp for AppSet<A> {}

impl<A: App> NodeApp for Lone<A> {}
