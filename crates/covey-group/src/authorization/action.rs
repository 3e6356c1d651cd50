//! What a request asks to do, in the terms a policy grants.

use std::fmt;
use std::net::IpAddr;

/// One thing a client asks the EM or `/mc` to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Read entities, profiles, listings or the joined groups.
    Read,
    /// Create an entity (`POST /e`).
    Create,
    /// Change an entity's profile (`PUT /e/<name>/profile`).
    Change,
    /// Delete an entity (`DELETE /e/<name>`).
    Delete,
    /// Make every member of an entity act (`PUT`/`POST`/`DELETE /e/<name>?fanout`).
    Fanout,
    /// Join a multicast group through `/mc`.
    Join(IpAddr),
    /// Leave a multicast group through `/mc`.
    Leave(IpAddr),
}

impl Action {
    /// Whether it changes the server for everyone (anything but reading): such a request is
    /// carried out only for a verified address (Echo), so a spoofed one changes nothing.
    pub fn changes_state(&self) -> bool {
        *self != Action::Read
    }
}

impl fmt::Display for Action {
    /// As it reads in a diagnostic: "creating entities", "joining ff05::1".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Read => f.write_str("reading"),
            Action::Create => f.write_str("creating entities"),
            Action::Change => f.write_str("changing entities"),
            Action::Delete => f.write_str("deleting entities"),
            Action::Fanout => f.write_str("fanning requests out to the members"),
            Action::Join(g) => write!(f, "joining {g}"),
            Action::Leave(g) => write!(f, "leaving {g}"),
        }
    }
}
