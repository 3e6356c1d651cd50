//! The OSCORE contexts the EM protects its requests to members with (RFC 8613), one per
//! member address, given by the host; each is added to the engine when the EM first sends to
//! that member, and a member with a context is never asked in the clear.

use covey_proto::covey_oscore::SecurityContext;
use covey_proto::{Endpoint, OscoreContextId, RequestError};
use std::collections::HashMap;
use std::net::SocketAddr;

/// Member address -> its context, before and after it went into the engine.
#[derive(Debug, Default)]
pub(crate) struct MemberOscore {
    waiting: HashMap<SocketAddr, SecurityContext>,
    added: HashMap<SocketAddr, OscoreContextId>,
}

impl MemberOscore {
    /// The contexts of `members`.
    pub fn new(members: &[(SocketAddr, SecurityContext)]) -> MemberOscore {
        MemberOscore {
            waiting: members.iter().cloned().collect(),
            added: HashMap::new(),
        }
    }

    /// The context requests to `member` are protected with: `None` for a member without
    /// one; an error when it has one the engine cannot take (never a fall-back to the clear).
    pub fn context_for(
        &mut self,
        ep: &mut Endpoint,
        member: SocketAddr,
    ) -> Result<Option<OscoreContextId>, RequestError> {
        if let Some(id) = self.added.get(&member) {
            return Ok(Some(*id));
        }
        let Some(context) = self.waiting.remove(&member) else {
            return Ok(None);
        };
        let id = ep
            .add_oscore_sending_context(context)
            .map_err(|_| RequestError::Oscore)?;
        self.added.insert(member, id);
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
        let mut contexts = MemberOscore::new(&[(member, context(b"em"))]);
        let mut ep = Endpoint::new(Config::default(), 1).unwrap();
        let first = contexts.context_for(&mut ep, member).unwrap();
        assert!(first.is_some());
        assert_eq!(contexts.context_for(&mut ep, member).unwrap(), first);
        assert_eq!(contexts.context_for(&mut ep, other).unwrap(), None);
    }

    #[test]
    fn a_context_the_engine_cannot_take_is_an_error_not_the_clear() {
        let member: SocketAddr = "[2001:db8::5]:5683".parse().unwrap();
        let mut contexts = MemberOscore::new(&[(member, context(b"em"))]);
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
