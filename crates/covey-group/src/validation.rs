//! Entity validation rules that need no network: member URIs, `enr` against the group
//! size, the multicast constraints, and an entity containing itself. The checks that ask
//! the members are in [`crate::probe`].

use crate::error_report::{Problem, Reason};
use crate::member::Member;
use crate::operation::Operation;
use crate::profile::{Ect, Emt, Profile};
use covey_core::uri::SocketAuthority;
use std::net::SocketAddr;

/// Why an entity is not valid; the text names the member or field and the reason, and
/// [`ValidationError::problem`] gives both as data.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ValidationError {
    /// The profile field at fault.
    pub field: &'static str,
    /// Why, as data.
    pub reason: Reason,
    /// The diagnostic.
    pub message: String,
}

impl ValidationError {
    /// A problem with `field`.
    pub fn new(field: &'static str, reason: Reason, message: String) -> ValidationError {
        ValidationError {
            field,
            reason,
            message,
        }
    }

    /// The field at fault and why, as data.
    pub fn problem(&self) -> Problem {
        Problem::field(self.field, self.reason)
    }
}

/// The URIs this EM's entity `name` is known by, one per authority.
pub fn own_uris(name: &str, authorities: &[SocketAddr]) -> Vec<Member> {
    authorities
        .iter()
        .filter_map(|a| Member::parse(&format!("coap://{}/e/{name}", SocketAuthority(*a))).ok())
        .collect()
}

/// Checks `profile` for entity `name` (known as `own`) and returns its parsed members.
pub fn check_profile(
    name: &str,
    profile: &Profile,
    own: &[Member],
) -> Result<Vec<Member>, ValidationError> {
    let members = profile
        .er
        .iter()
        .map(|uri| {
            Member::parse(uri).map_err(|e| {
                ValidationError::new("er", e.reason(), format!("member \"{uri}\": {e}"))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let Some(first) = members.first() else {
        return Err(ValidationError::new(
            "er",
            Reason::Empty,
            "field \"er\": an entity needs at least one member".into(),
        ));
    };
    for (i, m) in members.iter().enumerate() {
        if let Some(first) = members[..i].iter().find(|f| f.same_resource(m)) {
            return Err(ValidationError::new(
                "er",
                Reason::Duplicate,
                format!(
                    "member \"{}\" is listed twice (also as \"{}\")",
                    m.uri, first.uri
                ),
            ));
        }
        if own.iter().any(|o| o.same_entity(m)) {
            return Err(ValidationError::new(
                "er",
                Reason::Cycle,
                format!(
                    "cycle: entity {name} cannot be a member of itself ({})",
                    m.uri
                ),
            ));
        }
    }
    let g = members.len();
    if let Some(enr) = profile.enr.filter(|n| *n as usize > g) {
        return Err(ValidationError::new(
            "enr",
            Reason::OutOfRange,
            format!(
                "field \"enr\": {enr} replies cannot come from {g} member{}",
                if g == 1 { "" } else { "s" }
            ),
        ));
    }
    if profile.ect == Ect::Multicast {
        if profile.emt == Some(Emt::Con) {
            return Err(ValidationError::new(
                "emt",
                Reason::Conflict,
                "field \"emt\": a multicast entity uses NON requests (RFC 7252 §8.1), not con"
                    .into(),
            ));
        }
        for m in members.iter().skip(1) {
            if m.addr.port() != first.addr.port() {
                return Err(ValidationError::new(
                    "er",
                    Reason::Conflict,
                    format!(
                        "ect=multicast needs every member on one port: {} uses {}, {} uses {}",
                        first.uri,
                        first.addr.port(),
                        m.uri,
                        m.addr.port()
                    ),
                ));
            }
            if m.path != first.path || m.query != first.query {
                return Err(ValidationError::new(
                    "er",
                    Reason::Conflict,
                    format!(
                        "ect=multicast needs every member at the same path: {} differs from {}",
                        m.uri, first.uri
                    ),
                ));
            }
        }
    }
    Ok(members)
}

/// The first operation the client listed that needs numeric members, if any.
pub fn numeric_operation(profile: &Profile) -> Option<Operation> {
    profile
        .eo
        .as_ref()?
        .iter()
        .copied()
        .find(|o| o.needs_numbers())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(er: &[&str]) -> Profile {
        Profile::new(er.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn enr_cannot_exceed_members() {
        let mut p = profile(&["coap://[::1]/s", "coap://[::2]/s"]);
        p.enr = Some(3);
        let e = check_profile("a", &p, &[]).unwrap_err();
        assert_eq!(
            e.message,
            "field \"enr\": 3 replies cannot come from 2 members"
        );
        assert_eq!(e.problem(), Problem::field("enr", Reason::OutOfRange));
        p.enr = Some(2);
        assert_eq!(check_profile("a", &p, &[]).unwrap().len(), 2);
    }

    #[test]
    fn multicast_members_share_path_and_port() {
        let mut p = profile(&["coap://[::1]/s/t", "coap://[::2]/s/h"]);
        p.ect = Ect::Multicast;
        assert!(check_profile("a", &p, &[])
            .unwrap_err()
            .message
            .contains("same path"));
        let mut p = profile(&["coap://[::1]/s/t", "coap://[::2]:5684/s/t"]);
        p.ect = Ect::Multicast;
        assert!(check_profile("a", &p, &[])
            .unwrap_err()
            .message
            .contains("one port"));
        let mut p = profile(&["coap://[::1]/s/t", "coap://[::2]/s/t"]);
        p.ect = Ect::Multicast;
        p.emt = Some(Emt::Con);
        assert!(check_profile("a", &p, &[])
            .unwrap_err()
            .message
            .contains("NON"));
    }

    #[test]
    fn an_entity_cannot_contain_itself() {
        let own = own_uris("room", &["[2001:db8::1]:5683".parse().unwrap()]);
        assert_eq!(own[0].uri, "coap://[2001:db8::1]/e/room");
        let p = profile(&["coap://[2001:db8::1]:5683/e/room"]);
        let e = check_profile("room", &p, &own).unwrap_err();
        assert!(e.message.starts_with("cycle: entity room"), "{e}");
        assert_eq!(e.problem(), Problem::field("er", Reason::Cycle));
    }

    #[test]
    fn an_entity_needs_members() {
        assert!(check_profile("a", &profile(&[]), &[]).is_err());
    }

    #[test]
    fn numeric_operations() {
        let mut p = profile(&["coap://[::1]/s"]);
        assert_eq!(numeric_operation(&p), None, "defaults ask nothing");
        p.eo = Some(vec![Operation::List, Operation::Count]);
        assert_eq!(numeric_operation(&p), None);
        p.eo = Some(vec![Operation::List, Operation::Median, Operation::Average]);
        assert_eq!(numeric_operation(&p), Some(Operation::Median));
    }
}
