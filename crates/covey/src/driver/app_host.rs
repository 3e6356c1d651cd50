//! The tokio driver as the host of Apps: group joins go to the sockets' memberships, log
//! lines to `tracing`.

use std::fmt;
use std::net::{IpAddr, SocketAddr};

use covey_proto::{GroupError, Host, LogLevel, PeerIdentity};

use super::socket_roles::SocketRoles;
use crate::dtls::SessionTable;
use crate::multicast::{Membership, MulticastError};

/// What a hosted App sees of the driver.
pub(crate) struct DriverHost<'a> {
    pub membership: &'a Membership,
    /// The DTLS sessions, when the sockets speak coaps.
    pub dtls: Option<&'a SessionTable>,
    /// Which sockets speak DTLS.
    pub roles: &'a SocketRoles,
}

impl Host for DriverHost<'_> {
    fn join_group(&mut self, group: IpAddr) -> Result<(), GroupError> {
        self.membership
            .join(group, None)
            .map(|_| ())
            .map_err(group_error)
    }

    fn leave_group(&mut self, group: IpAddr) -> Result<(), GroupError> {
        self.membership.leave(group).map_err(group_error)
    }

    fn groups(&self) -> Vec<IpAddr> {
        self.membership.groups().iter().map(|g| g.address).collect()
    }

    fn peer_identity(&self, remote: SocketAddr, local: Option<SocketAddr>) -> Option<PeerIdentity> {
        self.dtls?.peer_identity(remote, local)
    }

    fn secure_socket(&self, destination: SocketAddr) -> Option<SocketAddr> {
        self.roles.source(destination, true)
    }

    fn plain_socket(&self, destination: SocketAddr) -> Option<SocketAddr> {
        match self.roles.is_mixed() {
            true => self.roles.source(destination, false),
            false => None,
        }
    }

    fn log(&mut self, level: LogLevel, message: fmt::Arguments<'_>) {
        match level {
            LogLevel::Error => tracing::error!(target: "covey::app", "{message}"),
            LogLevel::Warn => tracing::warn!(target: "covey::app", "{message}"),
            LogLevel::Info => tracing::info!(target: "covey::app", "{message}"),
            LogLevel::Debug => tracing::debug!(target: "covey::app", "{message}"),
            LogLevel::Trace => tracing::trace!(target: "covey::app", "{message}"),
        }
    }
}

fn group_error(e: MulticastError) -> GroupError {
    match e {
        MulticastError::NotMulticast(_) => GroupError::NotMulticast,
        MulticastError::TooManyGroups(_) => GroupError::TooManyGroups,
        MulticastError::NotMember(_) => GroupError::NotJoined,
        other => GroupError::Refused(other.to_string()),
    }
}
