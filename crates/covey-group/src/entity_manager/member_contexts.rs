//! The OSCORE contexts an entity document carries for its members (`"oscore"`): taken on
//! when a creation or change starts (its probe already asks under them), given back if it
//! fails, dropped with the entity.

use super::respond::{Reply, Responder};
use super::EntityManager;
use crate::entity::Entity;
use crate::error_report::{Problem, Reason};
use crate::member_oscore::{Claimed, ContextConflict};
use covey_core::Code;
use covey_proto::{Endpoint, Instant, LogLevel};

impl EntityManager {
    /// Takes on `entity`'s member contexts for a creation or change (`what` it is, for the
    /// reply) that `to` asked for, `given` new ones; `None` once it answered why not.
    pub(super) fn claim_contexts(
        &mut self,
        ep: &mut Endpoint,
        now: Instant,
        to: &Responder,
        (entity, given): (&Entity, bool),
        what: &str,
    ) -> Option<Claimed> {
        if given && !to.secured {
            let reply = Reply::refused(
                Code::UNAUTHORIZED,
                format!(
                    "{what}: member OSCORE contexts (\"oscore\") are taken only over OSCORE \
                     or coaps, never in the clear"
                ),
                Problem::field("oscore", Reason::Unauthorized),
            );
            self.send_reply(ep, now, to, reply);
            return None;
        }
        match self
            .member_oscore
            .claim(&entity.name, &entity.member_contexts())
        {
            Ok(claimed) => Some(claimed),
            Err(e) => {
                let code = match e {
                    ContextConflict::Full(_) => Code::SERVICE_UNAVAILABLE,
                    _ => Code::CONFLICT,
                };
                let problem = Problem::field("oscore", Reason::Conflict);
                self.send_reply(
                    ep,
                    now,
                    to,
                    Reply::refused(code, format!("{what}: {e}"), problem),
                );
                None
            }
        }
    }

    /// Ends a creation or change of `name` that failed: the name is free again, and the
    /// member contexts it took on are given back.
    pub(super) fn abandon(&mut self, name: &str, claimed: &mut Claimed) {
        self.busy.remove(name);
        self.member_oscore.give_back(name, std::mem::take(claimed));
    }

    /// Logs which members `entity` asks under OSCORE, by kid (never the secret), and lets
    /// go of the contexts it no longer carries.
    pub(super) fn settle_contexts(&mut self, entity: &Entity) {
        let carried = entity.member_contexts();
        let members: Vec<_> = carried.iter().map(|(addr, _)| *addr).collect();
        self.member_oscore.keep_only(&entity.name, &members);
        for (addr, context) in carried {
            self.note(
                LogLevel::Info,
                format!(
                    "entity {}: member {addr} is asked under OSCORE, kid {}",
                    entity.name,
                    Some(context.kid())
                        .filter(|k| !k.is_empty())
                        .unwrap_or("(empty)")
                ),
            );
        }
    }
}
