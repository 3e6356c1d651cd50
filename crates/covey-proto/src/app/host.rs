//! What an App asks of the node it runs on beyond the engine: group membership and logging.
//! The tokio driver and the simulator each implement it.

use super::PeerIdentity;
use core::fmt;
use core::net::{IpAddr, SocketAddr};

/// How much a log line matters; hosts map it onto `tracing` levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    /// Something failed.
    Error,
    /// Something is wrong but the App carries on.
    Warn,
    /// A notable step (an entity created, a group joined).
    Info,
    /// Detail for debugging.
    Debug,
    /// Everything.
    Trace,
}

/// Why a group could not be joined or left.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GroupError {
    /// The address is not a multicast address.
    NotMulticast,
    /// The host holds as many groups as it may.
    TooManyGroups,
    /// The node is not a member of that group.
    NotJoined,
    /// This host cannot change memberships.
    Unsupported,
    /// The host's network stack refused, with its reason.
    Refused(alloc::string::String),
}

impl fmt::Display for GroupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GroupError::NotMulticast => f.write_str("not a multicast address"),
            GroupError::TooManyGroups => f.write_str("too many groups joined"),
            GroupError::NotJoined => f.write_str("not a member of that group"),
            GroupError::Unsupported => f.write_str("this host cannot join groups"),
            GroupError::Refused(why) => write!(f, "refused: {why}"),
        }
    }
}

impl core::error::Error for GroupError {}

/// The node an App runs on.
pub trait Host {
    /// Joins multicast group `group` on the node's sockets or radio.
    fn join_group(&mut self, group: IpAddr) -> Result<(), GroupError>;
    /// Leaves multicast group `group`.
    fn leave_group(&mut self, group: IpAddr) -> Result<(), GroupError>;
    /// The groups the node is a member of, in the order they were joined.
    fn groups(&self) -> alloc::vec::Vec<IpAddr>;
    /// Writes a log line from an App.
    fn log(&mut self, level: LogLevel, message: fmt::Arguments<'_>);
    /// The identity `remote` authenticated with on the secured session it reached local socket
    /// `local` through; `None` for traffic in the clear (and on hosts without security).
    fn peer_identity(
        &self,
        _remote: SocketAddr,
        _local: Option<SocketAddr>,
    ) -> Option<PeerIdentity> {
        None
    }
    /// The secured (`coaps`) local socket that reaches `destination`, to send to a peer over
    /// DTLS from; `None` when the host has no secured socket of its address family.
    fn secure_socket(&self, _destination: SocketAddr) -> Option<SocketAddr> {
        None
    }
    /// The plain (`coap`) local socket that reaches `destination`, when the host has secured
    /// ones besides; `None`: any socket will do (the engine's choice).
    fn plain_socket(&self, _destination: SocketAddr) -> Option<SocketAddr> {
        None
    }
}

/// A host without groups that discards log lines: for tests and Apps that need neither.
#[derive(Debug, Default, Clone, Copy)]
pub struct NullHost;

impl Host for NullHost {
    fn join_group(&mut self, _group: IpAddr) -> Result<(), GroupError> {
        Err(GroupError::Unsupported)
    }
    fn leave_group(&mut self, _group: IpAddr) -> Result<(), GroupError> {
        Err(GroupError::Unsupported)
    }
    fn groups(&self) -> alloc::vec::Vec<IpAddr> {
        alloc::vec::Vec::new()
    }
    fn log(&mut self, _level: LogLevel, _message: fmt::Arguments<'_>) {}
}
