//! The OSCORE contexts the EM protects its requests to members with (RFC 8613), one per
//! member address, given by the host; each is added to the engine when the EM first sends to
//! that member, and a member with a context is never asked in the clear.

use covey_proto::covey_oscore::SecurityContext;
use covey_proto::{Endpoint, OscoreContextId, RequestError, SequenceReservation};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

/// What keeps a member context's sequence numbers reserved ahead while the EM runs (RFC 8613
/// Appendix B.1.1), shared so that the EM's configuration stays cloneable.
#[derive(Clone)]
pub struct MemberReservation(Arc<Mutex<SequenceReservation>>);

impl MemberReservation {
    /// `reserve` behind a shareable handle.
    pub fn new(reserve: SequenceReservation) -> MemberReservation {
        MemberReservation(Arc::new(Mutex::new(reserve)))
    }
}

impl std::fmt::Debug for MemberReservation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MemberReservation")
    }
}

/// Member address -> its context, before and after it went into the engine.
#[derive(Debug, Default)]
pub(crate) struct MemberOscore {
    waiting: HashMap<SocketAddr, SecurityContext>,
    added: HashMap<SocketAddr, OscoreContextId>,
    reservations: HashMap<SocketAddr, MemberReservation>,
}

impl MemberOscore {
    /// The contexts of `members`, and what keeps some of them reserved ahead.
    pub fn new(
        members: &[(SocketAddr, SecurityContext)],
        reservations: &[(SocketAddr, MemberReservation)],
    ) -> MemberOscore {
        MemberOscore {
            waiting: members.iter().cloned().collect(),
            added: HashMap::new(),
            reservations: reservations.iter().cloned().collect(),
        }
    }

    /// The context requests to `member` are protected with: `None` for a member without
    /// one; an error when it has one the engine cannot take (never a fall-back to the clear).
    pub fn context_for(
        &mut self,
        ep: &mut Endpoint,
        member: SocketAddr,
    ) -> Result<Option<OscoreContextId>, RequestError> {
        let id = match self.added.get(&member) {
            Some(id) => *id,
            None => {
                let Some(context) = self.waiting.remove(&member) else {
                    return Ok(None);
                };
                let id = ep
                    .add_oscore_sending_context(context)
                    .map_err(|_| RequestError::Oscore)?;
                self.added.insert(member, id);
                id
            }
        };
        // Each request takes a sequence number: more are reserved before they run out.
        if let Some(reservation) = self.reservations.get(&member) {
            if let Ok(mut reserve) = reservation.0.lock() {
                ep.renew_oscore_reservation(id, &mut reserve);
            }
        }
        Ok(Some(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use covey_proto::covey_oscore::ContextInput;
    use covey_proto::Config;

    fn context(sender_id: &[u8]) -> SecurityContext {
        SecurityContext::derive(&ContextInput {
            master_secret: &[7; 16],
            master_salt: &[],
            sender_id,
            recipient_id: b"m",
            id_context: None,
        })
        .unwrap()
    }

    #[test]
    fn a_members_context_goes_into_the_engine_once_and_others_have_none() {
        let member: SocketAddr = "[2001:db8::5]:5683".parse().unwrap();
        let other: SocketAddr = "[2001:db8::6]:5683".parse().unwrap();
        let mut contexts = MemberOscore::new(&[(member, context(b"em"))], &[]);
        let mut ep = Endpoint::new(Config::default(), 1).unwrap();
        let first = contexts.context_for(&mut ep, member).unwrap();
        assert!(first.is_some());
        assert_eq!(contexts.context_for(&mut ep, member).unwrap(), first);
        assert_eq!(contexts.context_for(&mut ep, other).unwrap(), None);
    }

    /// A member context near the end of its reservation gets more reserved as requests
    /// go to that member, through the host's hook.
    #[test]
    fn a_members_reservation_is_renewed_as_requests_go_to_it() {
        let member: SocketAddr = "[2001:db8::5]:5683".parse().unwrap();
        let mut near_end = context(b"em");
        near_end.set_sender_sequence_limit(3);
        let calls = Arc::new(Mutex::new(Vec::new()));
        let seen = calls.clone();
        let reserve: SequenceReservation = Box::new(move |next, limit| {
            seen.lock().unwrap().push((next, limit));
            (limit - next < 8).then_some(limit + 100)
        });
        let mut contexts = MemberOscore::new(
            &[(member, near_end)],
            &[(member, MemberReservation::new(reserve))],
        );
        let mut ep = Endpoint::new(Config::default(), 1).unwrap();
        let id = contexts.context_for(&mut ep, member).unwrap().unwrap();
        assert_eq!(ep.oscore_sender_sequence(id), Some((0, 103)));
        assert_eq!(*calls.lock().unwrap(), [(0, 3)]);
    }

    #[test]
    fn a_context_the_engine_cannot_take_is_an_error_not_the_clear() {
        let member: SocketAddr = "[2001:db8::5]:5683".parse().unwrap();
        let mut contexts = MemberOscore::new(&[(member, context(b"em"))], &[]);
        let config = Config {
            max_oscore_contexts: 0,
            ..Config::default()
        };
        let mut ep = Endpoint::new(config, 1).unwrap();
        assert_eq!(
            contexts.context_for(&mut ep, member),
            Err(RequestError::Oscore)
        );
    }
}
