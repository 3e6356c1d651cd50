//! The OSCORE contexts the EM protects its requests to members with (RFC 8613), one per
//! member address: the operator's (`covey gateway --member-oscore`), or one an entity carries
//! in its document (`"oscore"`), shared by every entity that carries the same one. Each goes
//! into the engine when the EM first sends to that member, and a member with a context is
//! never asked in the clear.

use crate::member_context::MemberContext;
use crate::store::Store;
use covey_proto::covey_oscore::{next_reservation, SecurityContext};
use covey_proto::{Endpoint, OscoreContextId, RequestError, SequenceReservation};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

/// Sequence numbers an entity's member context reserves at a time; the next are reserved
/// once half are used, so requests never wait for the store.
const RESERVED: u64 = 1 << 20;

/// Sequence numbers a context uses before it tries a failed reservation again, rather than
/// write to a failing store at every request.
const RETRY_AFTER: u64 = 4096;

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

/// A context entities carry for one member address.
#[derive(Debug)]
struct CarriedContext {
    context: MemberContext,
    /// The name its reservation is stored under: member, Sender ID and ID Context, so that
    /// the same context given again resumes above what was used before.
    key: String,
    /// The entities that carry it.
    owners: BTreeSet<String>,
    /// Its place in the engine, once a request used it.
    id: Option<OscoreContextId>,
    /// After a failed reservation, the sequence number from which to try again.
    retry_from: u64,
}

impl CarriedContext {
    fn new(member: SocketAddr, context: &MemberContext) -> CarriedContext {
        let id_context = context.id_context.as_deref().unwrap_or("-");
        CarriedContext {
            key: format!("{member} {} {id_context}", context.sender_id),
            context: context.clone(),
            owners: BTreeSet::new(),
            id: None,
            retry_from: 0,
        }
    }
}

/// Why an entity cannot carry a member context.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ContextConflict {
    /// The operator gave that member's context.
    #[error("{0} has its context from the gateway's --member-oscore")]
    Operator(SocketAddr),
    /// Another context is in use for that member.
    #[error("{member} already has another OSCORE context (entity {entity}); a member has one context at the EM")]
    Other {
        /// The member.
        member: SocketAddr,
        /// An entity that carries the other context.
        entity: String,
    },
    /// The same context for two members would send the same nonces to both.
    #[error("{0} and {1} are given the same OSCORE context; each member needs its own")]
    Shared(SocketAddr, SocketAddr),
    /// No room for more contexts.
    #[error("the EM holds its maximum of {0} member contexts")]
    Full(usize),
}

/// The members an entity took a context on for in one claim, to give back if its change
/// fails.
#[derive(Debug, Default)]
pub(crate) struct Claimed(Vec<SocketAddr>);

/// Member address -> its context, before and after it went into the engine.
#[derive(Debug, Default)]
pub(crate) struct MemberOscore {
    waiting: HashMap<SocketAddr, SecurityContext>,
    added: HashMap<SocketAddr, OscoreContextId>,
    reservations: HashMap<SocketAddr, MemberReservation>,
    carried: HashMap<SocketAddr, CarriedContext>,
    /// Engine places of contexts no entity carries any more, used again before the
    /// engine's table grows.
    free: Vec<OscoreContextId>,
    /// Sequence numbers reserved in the store, by reservation key.
    reserved: BTreeMap<String, u64>,
    max_carried: usize,
}

impl MemberOscore {
    /// The operator's contexts of `members`, what keeps some of them reserved ahead, room
    /// for `max_carried` contexts that entities carry, and the reservations stored.
    pub fn new(
        members: &[(SocketAddr, SecurityContext)],
        reservations: &[(SocketAddr, MemberReservation)],
        max_carried: usize,
        reserved: BTreeMap<String, u64>,
    ) -> MemberOscore {
        MemberOscore {
            waiting: members.iter().cloned().collect(),
            added: HashMap::new(),
            reservations: reservations.iter().cloned().collect(),
            carried: HashMap::new(),
            free: Vec::new(),
            reserved,
            max_carried,
        }
    }

    /// Makes `entity` carry `wanted` (member address and context): all of them, or none
    /// and why.
    pub fn claim(
        &mut self,
        entity: &str,
        wanted: &[(SocketAddr, MemberContext)],
    ) -> Result<Claimed, ContextConflict> {
        let mut fresh: Vec<(SocketAddr, &MemberContext)> = Vec::new();
        for (member, context) in wanted {
            if self.waiting.contains_key(member) || self.added.contains_key(member) {
                return Err(ContextConflict::Operator(*member));
            }
            let known = match self.carried.get(member) {
                Some(c) => Some((&c.context, c.owners.first().cloned())),
                None => fresh
                    .iter()
                    .find(|(m, _)| m == member)
                    .map(|(_, c)| (*c, None)),
            };
            match known {
                Some((c, _)) if c == context => continue,
                Some((_, owner)) => {
                    return Err(ContextConflict::Other {
                        member: *member,
                        entity: owner.unwrap_or_else(|| entity.to_string()),
                    })
                }
                None => {}
            }
            let elsewhere = self
                .carried
                .iter()
                .map(|(m, c)| (*m, &c.context))
                .chain(fresh.iter().copied())
                .find(|(_, c)| *c == context);
            if let Some((other, _)) = elsewhere {
                return Err(ContextConflict::Shared(other, *member));
            }
            fresh.push((*member, context));
        }
        if self.carried.len() + fresh.len() > self.max_carried {
            return Err(ContextConflict::Full(self.max_carried));
        }
        let mut claimed = Claimed::default();
        for (member, context) in wanted {
            let carried = self
                .carried
                .entry(*member)
                .or_insert_with(|| CarriedContext::new(*member, context));
            if carried.owners.insert(entity.to_string()) {
                claimed.0.push(*member);
            }
        }
        Ok(claimed)
    }

    /// Undoes a claim of `entity` whose change failed.
    pub fn give_back(&mut self, entity: &str, claimed: Claimed) {
        for member in claimed.0 {
            self.drop_owner(entity, member);
        }
    }

    /// `entity` carries contexts for `members` only now (none once it is deleted).
    pub fn keep_only(&mut self, entity: &str, members: &[SocketAddr]) {
        let gone: Vec<SocketAddr> = self
            .carried
            .iter()
            .filter(|(m, c)| c.owners.contains(entity) && !members.contains(m))
            .map(|(m, _)| *m)
            .collect();
        for member in gone {
            self.drop_owner(entity, member);
        }
    }

    fn drop_owner(&mut self, entity: &str, member: SocketAddr) {
        let Some(carried) = self.carried.get_mut(&member) else {
            return;
        };
        carried.owners.remove(entity);
        if carried.owners.is_empty() {
            if let Some(id) = self.carried.remove(&member).and_then(|c| c.id) {
                self.free.push(id);
            }
        }
    }

    /// The context requests to `member` are protected with: `None` for a member without
    /// one; an error when it has one the engine cannot take, or whose sequence numbers
    /// could not be reserved (never a fall-back to the clear).
    pub fn context_for(
        &mut self,
        ep: &mut Endpoint,
        store: &mut dyn Store,
        member: SocketAddr,
    ) -> Result<Option<OscoreContextId>, RequestError> {
        if let Some(carried) = self.carried.get_mut(&member) {
            let id = carried.engine_id(ep, &mut self.free, &self.reserved)?;
            carried.reserve_ahead(ep, store, id, &mut self.reserved)?;
            return Ok(Some(id));
        }
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

impl CarriedContext {
    /// Its place in the engine, adding it (in a freed place if there is one) at its first
    /// use, where its last reservation ended: it may send no number before the store holds
    /// it as taken (RFC 8613 Appendix B.1.1).
    fn engine_id(
        &mut self,
        ep: &mut Endpoint,
        free: &mut Vec<OscoreContextId>,
        reserved: &BTreeMap<String, u64>,
    ) -> Result<OscoreContextId, RequestError> {
        if let Some(id) = self.id {
            return Ok(id);
        }
        let mut context = self.context.derive().map_err(|_| RequestError::Oscore)?;
        let start = reserved.get(&self.key).copied().unwrap_or(0);
        context
            .set_sender_sequence_number(start)
            .map_err(|_| RequestError::Oscore)?;
        context.set_sender_sequence_limit(start);
        let id = match free.pop() {
            Some(id) if ep.replace_oscore_sending_context(id, context.clone()) => id,
            _ => ep
                .add_oscore_sending_context(context)
                .map_err(|_| RequestError::Oscore)?,
        };
        self.id = Some(id);
        Ok(id)
    }

    /// Reserves more sequence numbers in the store once half a reservation is left (the
    /// first at its first use). After a failed write it goes on with what it has, trying
    /// again a while later; with none left, the member is not asked (an error) rather
    /// than risk a nonce, and each request tries again.
    fn reserve_ahead(
        &mut self,
        ep: &mut Endpoint,
        store: &mut dyn Store,
        id: OscoreContextId,
        reserved: &mut BTreeMap<String, u64>,
    ) -> Result<(), RequestError> {
        let Some((next, limit)) = ep.oscore_sender_sequence(id) else {
            return Err(RequestError::Oscore);
        };
        let waiting = next < self.retry_from && next < limit;
        if let Some(new_limit) = next_reservation(next, limit, RESERVED).filter(|_| !waiting) {
            match store.reserve_sequence(&self.key, new_limit) {
                Ok(()) => {
                    reserved.insert(self.key.clone(), new_limit);
                    ep.set_oscore_sender_sequence_limit(id, new_limit);
                    return Ok(());
                }
                Err(_) => self.retry_from = next + RETRY_AFTER,
            }
        }
        if next < limit {
            Ok(())
        } else {
            Err(RequestError::Oscore)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{MemoryStore, StoreError};
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
        let mut contexts = MemberOscore::new(&[(member, context(b"em"))], &[], 4, BTreeMap::new());
        let mut ep = Endpoint::new(Config::default(), 1).unwrap();
        let first = contexts
            .context_for(&mut ep, &mut MemoryStore::new(), member)
            .unwrap();
        assert!(first.is_some());
        assert_eq!(
            contexts
                .context_for(&mut ep, &mut MemoryStore::new(), member)
                .unwrap(),
            first
        );
        assert_eq!(
            contexts
                .context_for(&mut ep, &mut MemoryStore::new(), other)
                .unwrap(),
            None
        );
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
            4,
            BTreeMap::new(),
        );
        let mut ep = Endpoint::new(Config::default(), 1).unwrap();
        let id = contexts
            .context_for(&mut ep, &mut MemoryStore::new(), member)
            .unwrap()
            .unwrap();
        assert_eq!(ep.oscore_sender_sequence(id), Some((0, 103)));
        assert_eq!(*calls.lock().unwrap(), [(0, 3)]);
    }

    #[test]
    fn a_context_the_engine_cannot_take_is_an_error_not_the_clear() {
        let member: SocketAddr = "[2001:db8::5]:5683".parse().unwrap();
        let mut contexts = MemberOscore::new(&[(member, context(b"em"))], &[], 4, BTreeMap::new());
        let config = Config {
            max_oscore_contexts: 0,
            ..Config::default()
        };
        let mut ep = Endpoint::new(config, 1).unwrap();
        assert_eq!(
            contexts.context_for(&mut ep, &mut MemoryStore::new(), member),
            Err(RequestError::Oscore)
        );
    }

    fn carried(secret: &str) -> MemberContext {
        MemberContext {
            secret: secret.into(),
            salt: String::new(),
            sender_id: "45".into(),
            recipient_id: "4d".into(),
            id_context: None,
        }
    }

    fn addr(n: u8) -> SocketAddr {
        SocketAddr::new(
            std::net::Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, n.into()).into(),
            5683,
        )
    }

    #[test]
    fn entities_share_one_context_per_member_and_a_different_one_is_refused() {
        let operator = addr(9);
        let mut contexts =
            MemberOscore::new(&[(operator, context(b"em"))], &[], 2, BTreeMap::new());
        contexts.claim("room", &[(addr(1), carried("01"))]).unwrap();
        // Another entity may carry the same context for that member.
        contexts
            .claim("floor", &[(addr(1), carried("01"))])
            .unwrap();
        let refused = |e: Result<Claimed, ContextConflict>| e.unwrap_err().to_string();
        assert_eq!(
            refused(contexts.claim("hall", &[(addr(1), carried("02"))])),
            "[2001:db8::1]:5683 already has another OSCORE context (entity floor); a member has one context at the EM"
        );
        assert!(refused(contexts.claim("hall", &[(addr(2), carried("01"))]))
            .contains("the same OSCORE context"));
        assert!(
            refused(contexts.claim("hall", &[(operator, carried("03"))]))
                .contains("--member-oscore")
        );
        contexts.claim("hall", &[(addr(2), carried("02"))]).unwrap();
        assert_eq!(
            refused(contexts.claim("yard", &[(addr(3), carried("03"))])),
            "the EM holds its maximum of 2 member contexts"
        );
        // A refused claim took nothing: hall's members, all refused above, have no context.
        let mut ep = Endpoint::new(Config::default(), 1).unwrap();
        let mut store = MemoryStore::new();
        assert_eq!(contexts.context_for(&mut ep, &mut store, addr(3)), Ok(None));
        // The context stays while an entity carries it.
        contexts.keep_only("room", &[]);
        assert!(contexts
            .context_for(&mut ep, &mut store, addr(1))
            .unwrap()
            .is_some());
        contexts.keep_only("floor", &[]);
        assert_eq!(contexts.context_for(&mut ep, &mut store, addr(1)), Ok(None));
    }

    #[test]
    fn a_failed_change_gives_back_only_what_it_took() {
        let mut contexts = MemberOscore::new(&[], &[], 4, BTreeMap::new());
        contexts.claim("room", &[(addr(1), carried("01"))]).unwrap();
        let claimed = contexts
            .claim(
                "room",
                &[(addr(1), carried("01")), (addr(2), carried("02"))],
            )
            .unwrap();
        contexts.give_back("room", claimed);
        let mut ep = Endpoint::new(Config::default(), 1).unwrap();
        let mut store = MemoryStore::new();
        assert!(contexts
            .context_for(&mut ep, &mut store, addr(1))
            .unwrap()
            .is_some());
        assert_eq!(contexts.context_for(&mut ep, &mut store, addr(2)), Ok(None));
    }

    /// RFC 8613 Appendix B.1.1: numbers are stored as taken before they are used, and a
    /// context given again (after a restart, or re-created) resumes above them.
    #[test]
    fn a_carried_context_reserves_in_the_store_before_use_and_resumes_above() {
        let mut store = MemoryStore::new();
        let mut contexts = MemberOscore::new(&[], &[], 4, BTreeMap::new());
        contexts.claim("room", &[(addr(1), carried("01"))]).unwrap();
        let mut ep = Endpoint::new(Config::default(), 1).unwrap();
        let id = contexts
            .context_for(&mut ep, &mut store, addr(1))
            .unwrap()
            .unwrap();
        assert_eq!(ep.oscore_sender_sequence(id), Some((0, RESERVED)));
        let stored = store.load().unwrap().sequences;
        assert_eq!(stored.values().copied().collect::<Vec<_>>(), [RESERVED]);

        // Deleted, then created again; its old engine place is used again.
        contexts.keep_only("room", &[]);
        contexts.claim("room", &[(addr(1), carried("01"))]).unwrap();
        let again = contexts
            .context_for(&mut ep, &mut store, addr(1))
            .unwrap()
            .unwrap();
        assert_eq!(again, id);
        assert_eq!(
            ep.oscore_sender_sequence(id),
            Some((RESERVED, 2 * RESERVED))
        );

        // After a restart, from the store.
        let mut restarted = MemoryStore::with_state(store.load().unwrap());
        let mut contexts = MemberOscore::new(&[], &[], 4, restarted.load().unwrap().sequences);
        contexts.claim("room", &[(addr(1), carried("01"))]).unwrap();
        let mut ep = Endpoint::new(Config::default(), 1).unwrap();
        let id = contexts
            .context_for(&mut ep, &mut restarted, addr(1))
            .unwrap()
            .unwrap();
        assert_eq!(
            ep.oscore_sender_sequence(id),
            Some((2 * RESERVED, 3 * RESERVED))
        );
    }

    /// A store that refuses every reservation.
    struct Unwritable;

    impl Store for Unwritable {
        fn load(&mut self) -> Result<crate::store::StoredState, StoreError> {
            Ok(Default::default())
        }
        fn insert(
            &mut self,
            _: &crate::store::EntityRecord,
            _: Option<u32>,
        ) -> Result<(), StoreError> {
            Ok(())
        }
        fn update(&mut self, _: &crate::store::EntityRecord) -> Result<(), StoreError> {
            Ok(())
        }
        fn remove(&mut self, _: &str) -> Result<(), StoreError> {
            Ok(())
        }
        fn reserve_sequence(&mut self, _: &str, _: u64) -> Result<(), StoreError> {
            Err(StoreError::Writer("disk full".into()))
        }
    }

    #[test]
    fn without_a_reservation_the_member_is_not_asked_rather_than_risk_a_nonce() {
        let mut contexts = MemberOscore::new(&[], &[], 4, BTreeMap::new());
        contexts.claim("room", &[(addr(1), carried("01"))]).unwrap();
        let mut ep = Endpoint::new(Config::default(), 1).unwrap();
        assert_eq!(
            contexts.context_for(&mut ep, &mut Unwritable, addr(1)),
            Err(RequestError::Oscore)
        );
    }
}
