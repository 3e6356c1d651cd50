//! Why a gateway could not start.

use crate::entity_manager::EmError;
use std::net::SocketAddr;

/// Why [`super::Gateway::start`] failed; one line each.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GatewayError {
    /// A free port could not be found for a bind address with port 0.
    #[error("cannot bind {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// What the system said.
        source: std::io::Error,
    },
    /// The EM could not be built from its store.
    #[error(transparent)]
    Em(#[from] EmError),
    /// The driver could not start (e.g. an address in use).
    #[error(transparent)]
    Driver(#[from] covey::Error),
}
