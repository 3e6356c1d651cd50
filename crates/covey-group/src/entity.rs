//! An entity: a named group of member resources with its profile, used as one resource.

use crate::delay::ResponseSize;
use crate::member::Member;
use crate::profile::{parse_entity, Ect, PayloadFormat, Profile};
use crate::store::{EntityRecord, RecordState};
use covey_core::uri::SocketAuthority;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};

/// An entity as the EM holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Entity {
    /// Its name: the entity is `/e/<name>`.
    pub name: String,
    /// Its profile.
    pub profile: Profile,
    /// The members, parsed from `er`, in order.
    pub members: Vec<Member>,
    /// For each member, whether it is an entity itself (found at validation).
    pub nested: Vec<bool>,
    /// The group address of a multicast entity.
    pub group: Option<Ipv6Addr>,
    /// Measured member reply size, for `delay=auto` (not stored).
    pub response_size: ResponseSize,
    /// Members that failed to (re)join the group at the EM's start (not stored).
    pub unjoined: Vec<String>,
}

impl Entity {
    /// An entity of validated `members` (parsed from `profile.er`).
    pub fn new(
        name: String,
        profile: Profile,
        members: Vec<Member>,
        initial_response_size: u32,
    ) -> Entity {
        let nested = vec![false; members.len()];
        Entity {
            name,
            profile,
            members,
            nested,
            group: None,
            response_size: ResponseSize::new(initial_response_size),
            unjoined: Vec::new(),
        }
    }

    /// An entity from its stored record.
    pub fn from_record(
        record: &EntityRecord,
        max_members: usize,
        initial_response_size: u32,
    ) -> Result<Entity, String> {
        let spec = parse_entity(PayloadFormat::Json, record.profile.as_bytes(), max_members)
            .map_err(|e| format!("stored entity \"{}\": {e}", record.name))?;
        if spec.name != record.name {
            return Err(format!(
                "stored entity \"{}\" carries the name \"{}\"",
                record.name, spec.name
            ));
        }
        let members = spec
            .profile
            .er
            .iter()
            .map(|uri| Member::parse(uri).map_err(|e| format!("stored member {uri}: {e}")))
            .collect::<Result<Vec<_>, _>>()?;
        let mut entity = Entity::new(spec.name, spec.profile, members, initial_response_size);
        entity.nested = entity
            .members
            .iter()
            .map(|m| record.nested.contains(&m.uri))
            .collect();
        entity.group = record.group;
        if entity.profile.ect == Ect::Multicast && entity.group.is_none() {
            return Err(format!(
                "stored multicast entity \"{}\" has no group address",
                record.name
            ));
        }
        Ok(entity)
    }

    /// The record to store in `state`.
    pub fn record(&self, state: RecordState) -> EntityRecord {
        EntityRecord {
            name: self.name.clone(),
            state,
            profile: serde_json::to_string(&self.profile.stored_document(&self.name))
                .unwrap_or_default(),
            group: self.group,
            nested: self
                .members
                .iter()
                .zip(&self.nested)
                .filter(|(_, n)| **n)
                .map(|(m, _)| m.uri.clone())
                .collect(),
        }
    }

    /// Whether any member is an entity.
    pub fn has_nested(&self) -> bool {
        self.nested.iter().any(|n| *n)
    }

    /// Where the multicast request goes: the group address on the members' port.
    pub fn group_destination(&self) -> Option<SocketAddr> {
        let group = self.group?;
        let port = self.members.first()?.addr.port();
        Some(SocketAddr::new(IpAddr::V6(group), port))
    }

    /// The group's URI for clients that skip the EM, e.g. `coap://[ff1e::89:1]/s/t`.
    pub fn mcast_uri(&self) -> Option<String> {
        let destination = self.group_destination()?;
        let first = self.members.first()?;
        // Path and query as the client wrote them (still percent-encoded).
        let written = covey_core::uri::Uri::parse(&first.uri).ok()?;
        let mut uri = format!("coap://{}{}", SocketAuthority(destination), written.path());
        if let Some(query) = written.query() {
            uri.push('?');
            uri.push_str(query);
        }
        Some(uri)
    }

    /// The OSCORE contexts the entity carries, by member address.
    pub(crate) fn member_contexts(&self) -> Vec<(SocketAddr, crate::MemberContext)> {
        self.members
            .iter()
            .filter_map(|m| Some((m.addr, self.profile.oscore.get(&m.uri)?.clone())))
            .collect()
    }

    /// The member URIs in order.
    pub fn member_uris(&self) -> Vec<String> {
        self.members.iter().map(|m| m.uri.clone()).collect()
    }
}
