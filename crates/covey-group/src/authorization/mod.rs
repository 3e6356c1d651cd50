//! Who may manage entities and group memberships: a [`Policy`] read from a file maps the
//! identities peers proved over DTLS to permissions, and [`Access`] is what the EM and `/mc`
//! consult for every request. A request refused is answered 4.01 when it came without an
//! identity and 4.03 when its identity is not allowed, with a diagnostic payload.

mod action;
mod group_prefix;
mod permission;
mod policy;
mod who;

pub use action::Action;
pub use group_prefix::GroupPrefix;
pub use permission::Permission;
pub use policy::{Policy, PolicyError, Rule, MAX_POLICY_BYTES};
pub use who::{Requester, Who};

use covey_core::Code;
use covey_proto::{AppContext, Received};
use std::sync::Arc;

/// How requests to manage entities or memberships are authorized.
#[derive(Debug, Clone, Default)]
pub enum Access {
    /// Anyone may do anything: no security, and management opened on purpose.
    #[default]
    Open,
    /// Requests from loopback addresses may do anything, others nothing: the default
    /// without security, so a server reachable from the network is not managed by anyone
    /// who reaches it.
    LoopbackOnly,
    /// The policy decides.
    Policy(Arc<Policy>),
}

/// Why a request was refused, as its response says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    /// 4.01 without an identity, 4.03 with one that is not allowed.
    pub code: Code,
    /// The diagnostic payload.
    pub message: String,
}

impl Access {
    /// Who sent `request`, as `cx`'s host knows it.
    pub fn requester(cx: &AppContext<'_>, request: &Received<'_>) -> Requester {
        Requester::new(
            cx.peer_identity(request),
            request.source,
            request.on_loopback,
        )
    }

    /// Whether `requester` may do `action`.
    pub fn check(&self, requester: &Requester, action: &Action) -> Result<(), Denial> {
        let allowed = match self {
            Access::Open => true,
            Access::LoopbackOnly => requester.loopback,
            Access::Policy(p) => p.allows(requester, action),
        };
        if allowed {
            return Ok(());
        }
        Err(match (&requester.identity, self) {
            (None, Access::LoopbackOnly) => Denial {
                code: Code::UNAUTHORIZED,
                message: format!(
                    "{action} is for clients on this host only: the server runs without \
                     security (no policy)"
                ),
            },
            (None, _) => Denial {
                code: Code::UNAUTHORIZED,
                message: format!("{action} needs an authenticated identity (coaps://)"),
            },
            (Some(identity), _) => Denial {
                code: Code::FORBIDDEN,
                message: format!("{action} is not allowed for {identity}"),
            },
        })
    }

    /// One line for the start-up log: who may manage `what` (e.g. "entities").
    pub fn describe(&self, what: &str) -> String {
        match self {
            Access::Open => format!(
                "{what}: open to anyone who reaches this server (--open-management, no \
                 authentication)"
            ),
            Access::LoopbackOnly => format!(
                "{what}: loopback clients only, others get 4.01 (no --policy; \
                 --open-management opens it to anyone who reaches this server)"
            ),
            Access::Policy(p) => format!(
                "{what}: authorized by {} ({} rules); requests it does not allow get 4.01 \
                 without an identity, 4.03 with one",
                p.origin(),
                p.rules()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use covey_proto::PeerIdentity;

    fn requester(identity: Option<&str>, loopback: bool) -> Requester {
        Requester {
            identity: identity.map(|n| PeerIdentity::Psk(n.into())),
            loopback,
        }
    }

    #[test]
    fn loopback_only_refuses_other_hosts_with_4_01() {
        let access = Access::LoopbackOnly;
        assert!(access
            .check(&requester(None, true), &Action::Create)
            .is_ok());
        let d = access
            .check(&requester(None, false), &Action::Create)
            .unwrap_err();
        assert_eq!(d.code, Code::UNAUTHORIZED);
        assert!(d.message.contains("creating entities"), "{}", d.message);
    }

    #[test]
    fn a_policy_answers_4_01_without_identity_and_4_03_with_one() {
        let text = "[[rule]]\nwho = [\"psk:op\"]\nmay = [\"manage\"]\n";
        let access = Access::Policy(Arc::new(Policy::parse(text, "p").unwrap()));
        assert!(access
            .check(&requester(Some("op"), false), &Action::Delete)
            .is_ok());
        let d = access
            .check(&requester(None, true), &Action::Delete)
            .unwrap_err();
        assert_eq!(d.code, Code::UNAUTHORIZED);
        let d = access
            .check(&requester(Some("ward"), false), &Action::Delete)
            .unwrap_err();
        assert_eq!(d.code, Code::FORBIDDEN);
        assert_eq!(d.message, "deleting entities is not allowed for psk:ward");
    }

    #[test]
    fn open_allows_everything() {
        let join = Action::Join("ff05::1".parse().unwrap());
        assert!(Access::Open.check(&requester(None, false), &join).is_ok());
    }
}
