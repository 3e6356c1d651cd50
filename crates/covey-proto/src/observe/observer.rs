//! An observation as the server keeps it (RFC 7641 §4), and how a request asks for one.

use crate::message::peer::PeerKey;
use crate::storage::slab::SlabKey;
use crate::Instant;
use covey_core::Token;

/// One registered observer.
#[derive(Debug)]
pub(crate) struct Observer {
    pub token: Token,
    pub resource: u64,
    pub peer: PeerKey,
    /// Observe value of the last notification (24 bits).
    pub sequence: u32,
    /// The CON notification in flight, if any.
    pub in_flight: Option<SlabKey>,
    /// Message ID of the last NON notification, so an RST to it cancels.
    pub last_non_mid: Option<u16>,
    /// Message ID of the CON notification the one in flight replaced, for the same reason.
    pub replaced_mid: Option<u16>,
    pub last_con: Instant,
    pub since_con: u32,
    /// Waiting in its resource's notification round for `poll_transmit` to send it.
    pub due: bool,
    /// Registered by an OSCORE request: each notification is then protected on its own,
    /// under the server's next Partial IV, and never written from a shared round. What it
    /// is bound to is kept apart (the endpoint's OSCORE state), so a plain observer pays
    /// nothing for it.
    #[cfg(feature = "oscore")]
    pub protected: bool,
}

impl Observer {
    /// Whether its notifications are OSCORE-protected, one by one.
    pub fn is_protected(&self) -> bool {
        #[cfg(feature = "oscore")]
        return self.protected;
        #[cfg(not(feature = "oscore"))]
        false
    }
}

/// How a notification is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NotificationType {
    /// NON, with a CON every `observe_con_every` notifications, at least once per
    /// `observe_con_interval`, and while the last CON is unconfirmed.
    #[default]
    Auto,
    /// Always CON.
    Confirmable,
    /// NON (RFC 7641 still requires the periodic CON; the caller takes that on).
    NonConfirmable,
}
