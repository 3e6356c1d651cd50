//! Entity profiles (`er`, `emt`, `ect`, `enr`, `eo`, `delay`): the [`ProfileDocument`] clients
//! send and the EM shows and stores, its strict parsing from JSON and CBOR, and the
//! [`Profile`] the EM runs an entity by.

use crate::document::{DocumentError, Node};
use crate::error_report::{Problem, Reason};
use crate::member::{Member, MemberUriError};
use crate::member_context::MemberContext;
use crate::operation::Operation;
use covey_core::ContentFormat;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// Longest entity name in bytes.
pub const MAX_NAME_LEN: usize = 63;
/// Largest `delay` in milliseconds.
pub const MAX_DELAY_MS: u64 = 60_000;

/// Message type from the EM to the members (`emt`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Emt {
    /// Confirmable.
    Con,
    /// Non-confirmable.
    Non,
}

impl Emt {
    /// The profile name.
    pub fn name(self) -> &'static str {
        match self {
            Emt::Con => "con",
            Emt::Non => "non",
        }
    }

    /// Parses `con` / `non` (ASCII case ignored).
    pub fn from_name(name: &str) -> Option<Emt> {
        match name.to_ascii_lowercase().as_str() {
            "con" => Some(Emt::Con),
            "non" => Some(Emt::Non),
            _ => None,
        }
    }
}

/// `con` / `non` with the EM's diagnostic for anything else.
impl FromStr for Emt {
    type Err = ProfileError;

    fn from_str(text: &str) -> Result<Emt, ProfileError> {
        Emt::from_name(text).ok_or_else(|| {
            ProfileError::invalid(
                "emt",
                Reason::UnknownValue,
                format!("\"{text}\" is not con or non"),
            )
        })
    }
}

/// Communication type from the EM to the members (`ect`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Ect {
    /// One request per member.
    #[default]
    Unicast,
    /// One NON request to a group address all members joined.
    Multicast,
}

impl Ect {
    /// The profile name.
    pub fn name(self) -> &'static str {
        match self {
            Ect::Unicast => "unicast",
            Ect::Multicast => "multicast",
        }
    }

    /// Parses `unicast` / `multicast` (ASCII case ignored).
    pub fn from_name(name: &str) -> Option<Ect> {
        match name.to_ascii_lowercase().as_str() {
            "unicast" => Some(Ect::Unicast),
            "multicast" => Some(Ect::Multicast),
            _ => None,
        }
    }
}

/// `unicast` / `multicast` with the EM's diagnostic for anything else.
impl FromStr for Ect {
    type Err = ProfileError;

    fn from_str(text: &str) -> Result<Ect, ProfileError> {
        Ect::from_name(text).ok_or_else(|| {
            ProfileError::invalid(
                "ect",
                Reason::UnknownValue,
                format!("\"{text}\" is not unicast or multicast"),
            )
        })
    }
}

/// An operation name (`lst`, `avg`, ...) with the EM's diagnostic for anything else.
impl FromStr for Operation {
    type Err = ProfileError;

    fn from_str(text: &str) -> Result<Operation, ProfileError> {
        Operation::from_name(text).ok_or_else(|| {
            ProfileError::invalid(
                "eo",
                Reason::UnknownValue,
                format!("\"{text}\" is not an operation (lst, avg, min, max, sum, count, median)"),
            )
        })
    }
}

/// Delay between successive unicast member requests (`delay`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delay {
    /// A fixed delay in milliseconds.
    Millis(u64),
    /// The lower bound S·G/(R·(G−1)) from measured reply sizes.
    Auto,
}

impl Delay {
    /// Parses `auto` or a whole number of milliseconds up to [`MAX_DELAY_MS`].
    pub fn from_text(text: &str) -> Option<Delay> {
        text.parse().ok()
    }

    /// A delay of `ms` milliseconds, 0 to [`MAX_DELAY_MS`].
    pub fn from_millis(ms: i128) -> Result<Delay, ProfileError> {
        u64::try_from(ms)
            .ok()
            .filter(|ms| *ms <= MAX_DELAY_MS)
            .map(Delay::Millis)
            .ok_or_else(|| {
                ProfileError::invalid(
                    "delay",
                    Reason::OutOfRange,
                    format!("{ms} is not a delay from 0 to {MAX_DELAY_MS} ms"),
                )
            })
    }
}

/// `auto` (ASCII case ignored) or a whole number of milliseconds, as on a command line or
/// in a query (`?delay=`); the profile document has the number as a number.
impl FromStr for Delay {
    type Err = ProfileError;

    fn from_str(text: &str) -> Result<Delay, ProfileError> {
        if text.eq_ignore_ascii_case("auto") {
            return Ok(Delay::Auto);
        }
        match text.parse::<i128>() {
            Ok(ms) => Delay::from_millis(ms),
            Err(_) => Err(ProfileError::invalid(
                "delay",
                Reason::UnknownValue,
                format!("\"{text}\" is neither a number of milliseconds nor \"auto\""),
            )),
        }
    }
}

impl fmt::Display for Delay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Delay::Millis(ms) => write!(f, "{ms}"),
            Delay::Auto => f.write_str("auto"),
        }
    }
}

/// `enr`: a positive number of replies.
pub fn enr_from(n: i128) -> Result<u32, ProfileError> {
    u32::try_from(n).ok().filter(|n| *n >= 1).ok_or_else(|| {
        ProfileError::invalid(
            "enr",
            Reason::OutOfRange,
            format!("{n} is not a positive number of replies"),
        )
    })
}

// Serde: each value as its profile name (a delay in milliseconds as a number), and read
// back by the same rules as the EM's parser.

/// A string visitor that parses with `FromStr`.
struct NamedVisitor<T>(&'static str, std::marker::PhantomData<T>);

impl<T: FromStr<Err = ProfileError>> Visitor<'_> for NamedVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        v.parse().map_err(E::custom)
    }
}

macro_rules! serde_by_name {
    ($t:ty, $expecting:literal) => {
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }

        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
                d.deserialize_str(NamedVisitor($expecting, std::marker::PhantomData))
            }
        }
    };
}

serde_by_name!(Emt, "\"con\" or \"non\"");
serde_by_name!(Ect, "\"unicast\" or \"multicast\"");
serde_by_name!(Operation, "an operation name");

impl Serialize for Delay {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Delay::Millis(ms) => s.serialize_u64(*ms),
            Delay::Auto => s.serialize_str("auto"),
        }
    }
}

struct DelayVisitor;

impl Visitor<'_> for DelayVisitor {
    type Value = Delay;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("milliseconds or \"auto\"")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Delay, E> {
        Delay::from_millis(v.into()).map_err(E::custom)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Delay, E> {
        Delay::from_millis(v.into()).map_err(E::custom)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Delay, E> {
        if v.eq_ignore_ascii_case("auto") {
            Ok(Delay::Auto)
        } else {
            Err(E::custom(ProfileError::invalid(
                "delay",
                Reason::UnknownValue,
                format!("\"{v}\" is neither a number of milliseconds nor \"auto\""),
            )))
        }
    }
}

impl<'de> Deserialize<'de> for Delay {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Delay, D::Error> {
        d.deserialize_any(DelayVisitor)
    }
}

/// A profile document: what a client sends to create an entity (`POST /e`: `name` and `er`
/// at least) or to change one (`PUT /e/<name>/profile`: the fields to change), and what the
/// EM shows (`GET /e/<name>/profile`: every field with its effective value) and stores (the
/// fields as given). Absent fields are left out when serialized.
///
/// The EM reads requests with [`ProfileDocument::parse`], which is stricter than serde (a
/// field given twice, an unknown field or a wrong type is refused with the field named);
/// `Deserialize` reads documents the EM wrote, and ignores fields it does not know.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ProfileDocument {
    /// The entity name (`/e/<name>`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Member URIs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub er: Option<Vec<String>>,
    /// Message type towards the members.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emt: Option<Emt>,
    /// Communication type (set at creation only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ect: Option<Ect>,
    /// Member replies to wait for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enr: Option<u32>,
    /// Operations, the first the default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eo: Option<Vec<Operation>>,
    /// Delay between member requests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay: Option<Delay>,
    /// The group URI of a multicast entity: assigned by the EM (a request may only repeat it).
    #[serde(rename = "mcastURI", skip_serializing_if = "Option::is_none")]
    pub mcast_uri: Option<String>,
    /// Shown only: members that failed to rejoin the group at the EM's start. A request
    /// with it is refused (unknown field).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unjoined: Vec<String>,
    /// OSCORE contexts by member URI (one of `er`), the EM's side of each: accepted over
    /// OSCORE or coaps only, stored with the entity, never shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oscore: Option<BTreeMap<String, MemberContext>>,
}

/// Every field a request may carry, in document order (for diagnostics).
const KNOWN_FIELDS: &str = "name, er, emt, ect, enr, eo, delay, oscore";

impl ProfileDocument {
    /// A creation request for entity `name` of members `er`, every other field unset.
    pub fn new(name: impl Into<String>, er: Vec<String>) -> ProfileDocument {
        ProfileDocument {
            name: Some(name.into()),
            er: Some(er),
            ..ProfileDocument::default()
        }
    }

    /// Parses a request payload strictly: every field at most once, of its type and in
    /// its domain, members well-formed (at most `max_members`).
    pub fn parse(
        format: PayloadFormat,
        payload: &[u8],
        max_members: usize,
    ) -> Result<ProfileDocument, ProfileError> {
        parse_fields(format.decode(payload)?, max_members)
    }

    /// The creation this document asks for: `name` and `er` required, `mcastURI` refused.
    pub fn into_spec(self) -> Result<EntitySpec, ProfileError> {
        if self.mcast_uri.is_some() {
            return Err(ProfileError::invalid(
                "mcastURI",
                Reason::AssignedByEm,
                "is assigned by the EM, not by the client".into(),
            ));
        }
        let name = self.name.ok_or(ProfileError::Missing("name"))?;
        let er = self.er.ok_or(ProfileError::Missing("er"))?;
        let oscore = self.oscore.unwrap_or_default();
        contexts_of_members(&oscore, &er)?;
        Ok(EntitySpec {
            name,
            profile: Profile {
                er,
                emt: self.emt,
                ect: self.ect.unwrap_or_default(),
                enr: self.enr,
                eo: self.eo,
                delay: self.delay.unwrap_or(Delay::Millis(0)),
                oscore,
            },
        })
    }

    /// The profile after this change to entity `name`; `name`, `ect` and `mcastURI` may
    /// only repeat the current values.
    pub fn apply(
        &self,
        name: &str,
        current: &Profile,
        mcast_uri: Option<&str>,
    ) -> Result<Profile, ProfileError> {
        if let Some(n) = self.name.as_deref().filter(|n| *n != name) {
            return Err(ProfileError::invalid(
                "name",
                Reason::Immutable,
                format!("an entity cannot be renamed (\"{name}\" to \"{n}\")"),
            ));
        }
        if let Some(ect) = self.ect.filter(|e| *e != current.ect) {
            return Err(ProfileError::invalid(
                "ect",
                Reason::Immutable,
                format!(
                    "is set at creation only; this entity is {} and cannot become {}",
                    current.ect.name(),
                    ect.name()
                ),
            ));
        }
        if let Some(uri) = self.mcast_uri.as_deref().filter(|u| Some(*u) != mcast_uri) {
            return Err(ProfileError::invalid(
                "mcastURI",
                Reason::AssignedByEm,
                format!("is assigned by the EM and cannot be set to \"{uri}\""),
            ));
        }
        let mut p = current.clone();
        if let Some(er) = &self.er {
            p.er = er.clone();
        }
        if let Some(emt) = self.emt {
            p.emt = Some(emt);
        }
        if let Some(enr) = self.enr {
            p.enr = Some(enr);
        }
        if let Some(eo) = &self.eo {
            p.eo = Some(eo.clone());
        }
        if let Some(delay) = self.delay {
            p.delay = delay;
        }
        match &self.oscore {
            Some(oscore) => {
                contexts_of_members(oscore, &p.er)?;
                p.oscore = oscore.clone();
            }
            // Members that left take their contexts with them.
            None => p.oscore.retain(|uri, _| p.er.contains(uri)),
        }
        Ok(p)
    }
}

/// An entity profile as the client gave it; unset fields take their defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// Member URIs (`er`).
    pub er: Vec<String>,
    /// Message type (`emt`); `None`: con, or non for multicast.
    pub emt: Option<Emt>,
    /// Communication type (`ect`).
    pub ect: Ect,
    /// Replies to wait for (`enr`); `None`: all members.
    pub enr: Option<u32>,
    /// Operations (`eo`), the first the default; `None`: all, `lst` first.
    pub eo: Option<Vec<Operation>>,
    /// Delay between member requests (`delay`), 0 by default.
    pub delay: Delay,
    /// OSCORE contexts by member URI (`oscore`): stored, never shown.
    pub oscore: BTreeMap<String, MemberContext>,
}

impl Profile {
    /// A unicast profile of `er` with every other field at its default.
    pub fn new(er: Vec<String>) -> Profile {
        Profile {
            er,
            emt: None,
            ect: Ect::Unicast,
            enr: None,
            eo: None,
            delay: Delay::Millis(0),
            oscore: BTreeMap::new(),
        }
    }

    /// The effective message type.
    pub fn emt(&self) -> Emt {
        self.emt.unwrap_or(match self.ect {
            Ect::Unicast => Emt::Con,
            Ect::Multicast => Emt::Non,
        })
    }

    /// The effective number of replies to wait for.
    pub fn enr(&self) -> usize {
        self.enr.map_or(self.er.len(), |n| n as usize)
    }

    /// The operations this entity offers, the default first.
    pub fn operations(&self) -> &[Operation] {
        self.eo.as_deref().unwrap_or(&Operation::ALL)
    }

    /// The default operation.
    pub fn default_operation(&self) -> Operation {
        self.operations()
            .first()
            .copied()
            .unwrap_or(Operation::List)
    }

    /// The document shown by `GET /e/<name>/profile`: every field with its effective value.
    pub fn document(&self, name: &str, mcast_uri: Option<&str>) -> ProfileDocument {
        ProfileDocument {
            name: Some(name.to_string()),
            er: Some(self.er.clone()),
            emt: Some(self.emt()),
            ect: Some(self.ect),
            enr: Some(u32::try_from(self.enr()).unwrap_or(u32::MAX)),
            eo: Some(self.operations().to_vec()),
            delay: Some(self.delay),
            mcast_uri: mcast_uri.map(str::to_string),
            unjoined: Vec::new(),
            oscore: None,
        }
    }

    /// The document as given (defaults left out), as the store keeps it; it parses back
    /// with [`parse_entity`].
    pub fn stored_document(&self, name: &str) -> ProfileDocument {
        ProfileDocument {
            name: Some(name.to_string()),
            er: Some(self.er.clone()),
            emt: self.emt,
            ect: Some(self.ect),
            enr: self.enr,
            eo: self.eo.clone(),
            delay: Some(self.delay),
            mcast_uri: None,
            unjoined: Vec::new(),
            oscore: (!self.oscore.is_empty()).then(|| self.oscore.clone()),
        }
    }

    /// [`Profile::document`] as JSON.
    pub fn to_json(&self, name: &str, mcast_uri: Option<&str>) -> Value {
        serde_json::to_value(self.document(name, mcast_uri)).unwrap_or_default()
    }

    /// [`Profile::stored_document`] as JSON.
    pub fn to_stored_json(&self, name: &str) -> Value {
        serde_json::to_value(self.stored_document(name)).unwrap_or_default()
    }
}

/// A creation request: the entity's name and profile.
#[derive(Debug, Clone, PartialEq)]
pub struct EntitySpec {
    /// The entity name (the last path segment of `/e/<name>`).
    pub name: String,
    /// Its profile.
    pub profile: Profile,
}

/// The encoding of a profile payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadFormat {
    /// `application/json` (50).
    Json,
    /// `application/cbor` (60).
    Cbor,
}

impl PayloadFormat {
    /// The format named by a Content-Format option; without one, JSON when the payload
    /// starts with `{` and CBOR otherwise. `None` for any other Content-Format.
    pub fn of(content_format: Option<ContentFormat>, payload: &[u8]) -> Option<PayloadFormat> {
        match content_format {
            Some(ContentFormat::JSON) => Some(PayloadFormat::Json),
            Some(ContentFormat::CBOR) => Some(PayloadFormat::Cbor),
            Some(_) => None,
            None => match payload.iter().find(|b| !b.is_ascii_whitespace()) {
                Some(b'{') => Some(PayloadFormat::Json),
                _ => Some(PayloadFormat::Cbor),
            },
        }
    }

    fn decode(self, payload: &[u8]) -> Result<Node, ProfileError> {
        match self {
            PayloadFormat::Json => Node::from_json(payload),
            PayloadFormat::Cbor => Node::from_cbor(payload),
        }
        .map_err(ProfileError::Malformed)
    }
}

/// Why a profile payload was refused; the message names the field and the problem, and
/// [`ProfileError::problem`] gives both as data.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    /// Not well-formed JSON or CBOR.
    #[error("{0}")]
    Malformed(DocumentError),
    /// The top level is not an object.
    #[error("the profile must be an object with the fields {KNOWN_FIELDS} (got {0})")]
    NotAnObject(&'static str),
    /// A map key that is not a string.
    #[error("field names must be strings (got {0})")]
    KeyNotText(&'static str),
    /// A field this EM does not know.
    #[error("unknown field \"{0}\" (known: {KNOWN_FIELDS})")]
    UnknownField(String),
    /// A field given twice.
    #[error("field \"{0}\" is given twice")]
    DuplicateField(String),
    /// A required field is absent.
    #[error("missing field \"{0}\"")]
    Missing(&'static str),
    /// A field of the wrong type.
    #[error("field \"{field}\" must be {expected}, not {found}")]
    WrongType {
        /// The field.
        field: &'static str,
        /// What it must be.
        expected: &'static str,
        /// What it was.
        found: &'static str,
    },
    /// A field with a value out of its domain.
    #[error("field \"{field}\": {problem}")]
    Invalid {
        /// The field.
        field: &'static str,
        /// Why, as data.
        reason: Reason,
        /// What is wrong.
        problem: String,
    },
    /// A member URI that cannot be used.
    #[error("field \"er\": member \"{uri}\": {problem}")]
    BadUri {
        /// The URI as given.
        uri: String,
        /// Why.
        problem: MemberUriError,
    },
    /// The same member resource listed twice.
    #[error("field \"er\": member \"{uri}\" is listed twice (also as \"{first}\")")]
    DuplicateMember {
        /// The second occurrence.
        uri: String,
        /// The first occurrence.
        first: String,
    },
}

impl ProfileError {
    /// A value of `field` out of its domain.
    pub fn invalid(field: &'static str, reason: Reason, problem: String) -> ProfileError {
        ProfileError::Invalid {
            field,
            reason,
            problem,
        }
    }

    /// The field at fault and why, as data.
    pub fn problem(&self) -> Problem {
        match self {
            ProfileError::Malformed(_) => Problem::general(Reason::Malformed),
            ProfileError::NotAnObject(_) => Problem::general(Reason::NotAnObject),
            ProfileError::KeyNotText(_) => Problem::general(Reason::KeyNotText),
            ProfileError::UnknownField(f) => Problem::field(f.as_str(), Reason::UnknownField),
            ProfileError::DuplicateField(f) => Problem::field(f.as_str(), Reason::RepeatedField),
            ProfileError::Missing(f) => Problem::field(*f, Reason::Missing),
            ProfileError::WrongType { field, .. } => Problem::field(*field, Reason::WrongType),
            ProfileError::Invalid { field, reason, .. } => Problem::field(*field, *reason),
            ProfileError::BadUri { problem, .. } => Problem::field("er", problem.reason()),
            ProfileError::DuplicateMember { .. } => Problem::field("er", Reason::Duplicate),
        }
    }
}

/// Parses a creation payload (`POST /e`).
pub fn parse_entity(
    format: PayloadFormat,
    payload: &[u8],
    max_members: usize,
) -> Result<EntitySpec, ProfileError> {
    ProfileDocument::parse(format, payload, max_members)?.into_spec()
}

/// Parses a profile change payload (`PUT /e/<name>/profile`).
pub fn parse_change(
    format: PayloadFormat,
    payload: &[u8],
    max_members: usize,
) -> Result<ProfileDocument, ProfileError> {
    ProfileDocument::parse(format, payload, max_members)
}

fn wrong(field: &'static str, expected: &'static str, found: &Node) -> ProfileError {
    ProfileError::WrongType {
        field,
        expected,
        found: found.kind(),
    }
}

fn text_of<'a>(
    field: &'static str,
    expected: &'static str,
    value: &'a Node,
) -> Result<&'a str, ProfileError> {
    value.as_text().ok_or_else(|| wrong(field, expected, value))
}

fn parse_fields(node: Node, max_members: usize) -> Result<ProfileDocument, ProfileError> {
    let Node::Map(entries) = node else {
        return Err(ProfileError::NotAnObject(node.kind()));
    };
    let mut f = ProfileDocument::default();
    let mut seen: Vec<String> = Vec::new();
    for (key, value) in entries {
        let Node::Text(key) = key else {
            return Err(ProfileError::KeyNotText(key.kind()));
        };
        if seen.contains(&key) {
            return Err(ProfileError::DuplicateField(key));
        }
        match key.as_str() {
            "name" => f.name = Some(parse_name(&value)?),
            "er" => f.er = Some(parse_er(&value, max_members)?),
            "emt" => f.emt = Some(text_of("emt", "\"con\" or \"non\"", &value)?.parse()?),
            "ect" => f.ect = Some(text_of("ect", "\"unicast\" or \"multicast\"", &value)?.parse()?),
            "enr" => {
                let Node::Integer(n) = value else {
                    return Err(wrong("enr", "a positive integer", &value));
                };
                f.enr = Some(enr_from(n)?);
            }
            "eo" => f.eo = Some(parse_eo(&value)?),
            "delay" => f.delay = Some(parse_delay(&value)?),
            "mcastURI" => f.mcast_uri = Some(text_of("mcastURI", "a string", &value)?.into()),
            "oscore" => f.oscore = Some(parse_oscore(&value)?),
            _ => return Err(ProfileError::UnknownField(key)),
        }
        seen.push(key);
    }
    Ok(f)
}

/// Why an entity name is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{problem}")]
pub struct NameError {
    /// Why, as data.
    pub reason: Reason,
    /// What is wrong.
    pub problem: String,
}

/// Checks an entity name: 1–63 bytes of letters, digits, `-`, `_` and `.`, not starting
/// with `.`.
pub fn check_name(name: &str) -> Result<(), NameError> {
    let refuse = |reason, problem| Err(NameError { reason, problem });
    if name.is_empty() || name.len() > MAX_NAME_LEN {
        return refuse(
            Reason::OutOfRange,
            format!("must be 1 to {MAX_NAME_LEN} characters"),
        );
    }
    if name.starts_with('.') {
        return refuse(
            Reason::ReservedName,
            format!("\"{name}\" may not start with '.'"),
        );
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return refuse(
            Reason::BadCharacter,
            format!("\"{name}\" holds '{c}'; use letters, digits, '-', '_' and '.'"),
        );
    }
    Ok(())
}

/// The `oscore` field: an object of member URI to [`MemberContext`].
fn parse_oscore(value: &Node) -> Result<BTreeMap<String, MemberContext>, ProfileError> {
    let Node::Map(entries) = value else {
        return Err(wrong("oscore", "an object of member URI to context", value));
    };
    let mut contexts = BTreeMap::new();
    for (key, context) in entries {
        let uri = text_of("oscore", "member URIs as keys", key)?;
        let context = MemberContext::parse(uri, context)?;
        if contexts.insert(uri.to_string(), context).is_some() {
            return Err(ProfileError::invalid(
                "oscore",
                Reason::Duplicate,
                format!("{uri} is given twice"),
            ));
        }
    }
    Ok(contexts)
}

/// Checks that every context is for a member in `er`.
fn contexts_of_members(
    oscore: &BTreeMap<String, MemberContext>,
    er: &[String],
) -> Result<(), ProfileError> {
    match oscore.keys().find(|uri| !er.contains(uri)) {
        Some(uri) => Err(ProfileError::invalid(
            "oscore",
            Reason::UnknownValue,
            format!("{uri} is not a member of the entity (er)"),
        )),
        None => Ok(()),
    }
}

fn parse_name(value: &Node) -> Result<String, ProfileError> {
    let name = text_of("name", "a string", value)?;
    check_name(name).map_err(|e| ProfileError::invalid("name", e.reason, e.problem))?;
    Ok(name.to_string())
}

fn parse_er(value: &Node, max_members: usize) -> Result<Vec<String>, ProfileError> {
    let Node::Array(items) = value else {
        return Err(wrong("er", "an array of coap:// URIs", value));
    };
    if items.is_empty() {
        return Err(ProfileError::invalid(
            "er",
            Reason::Empty,
            "an entity needs at least one member".into(),
        ));
    }
    if items.len() > max_members {
        return Err(ProfileError::invalid(
            "er",
            Reason::TooMany,
            format!(
                "{} members is more than this EM allows ({max_members})",
                items.len()
            ),
        ));
    }
    let mut uris = Vec::with_capacity(items.len());
    let mut members: Vec<Member> = Vec::with_capacity(items.len());
    for item in items {
        let uri = text_of("er", "an array of coap:// URIs", item)?;
        let member = Member::parse(uri).map_err(|problem| ProfileError::BadUri {
            uri: uri.to_string(),
            problem,
        })?;
        if let Some(first) = members.iter().find(|m| m.same_resource(&member)) {
            return Err(ProfileError::DuplicateMember {
                uri: uri.to_string(),
                first: first.uri.clone(),
            });
        }
        members.push(member);
        uris.push(uri.to_string());
    }
    Ok(uris)
}

fn parse_eo(value: &Node) -> Result<Vec<Operation>, ProfileError> {
    const EXPECTED: &str = "an operation name or an array of them";
    let names: Vec<&Node> = match value {
        Node::Text(_) => vec![value],
        Node::Array(items) => items.iter().collect(),
        other => return Err(wrong("eo", EXPECTED, other)),
    };
    if names.is_empty() {
        return Err(ProfileError::invalid(
            "eo",
            Reason::Empty,
            "needs at least one operation".into(),
        ));
    }
    let mut ops = Vec::with_capacity(names.len());
    for n in names {
        let text = text_of("eo", EXPECTED, n)?;
        let op: Operation = text.parse()?;
        if ops.contains(&op) {
            return Err(ProfileError::invalid(
                "eo",
                Reason::Duplicate,
                format!("\"{text}\" is listed twice"),
            ));
        }
        ops.push(op);
    }
    Ok(ops)
}

fn parse_delay(value: &Node) -> Result<Delay, ProfileError> {
    match value {
        Node::Integer(n) => Delay::from_millis(*n),
        Node::Text(t) if t.eq_ignore_ascii_case("auto") => Ok(Delay::Auto),
        Node::Text(t) => Err(ProfileError::invalid(
            "delay",
            Reason::UnknownValue,
            format!("\"{t}\" is neither a number of milliseconds nor \"auto\""),
        )),
        other => Err(wrong("delay", "milliseconds or \"auto\"", other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn json(text: &str) -> Result<EntitySpec, ProfileError> {
        parse_entity(PayloadFormat::Json, text.as_bytes(), 100)
    }

    fn cbor(value: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        ciborium::ser::into_writer(value, &mut out).unwrap();
        out
    }

    #[test]
    fn full_profile_from_json() {
        let spec = json(
            r#"{"name":"room1","er":["coap://[2001:db8::10]/s/t","coap://[2001:db8::11]/s/t"],
                "emt":"NON","ect":"unicast","enr":1,"eo":["avg","lst"],"delay":100}"#,
        )
        .unwrap();
        assert_eq!(spec.name, "room1");
        let p = spec.profile;
        assert_eq!(p.er.len(), 2);
        assert_eq!(p.emt(), Emt::Non);
        assert_eq!(p.enr(), 1);
        assert_eq!(p.default_operation(), Operation::Average);
        assert_eq!(p.delay, Delay::Millis(100));
    }

    #[test]
    fn defaults() {
        let p = json(r#"{"name":"a","er":["coap://[::1]/s"]}"#)
            .unwrap()
            .profile;
        assert_eq!(p.emt(), Emt::Con);
        assert_eq!(p.ect, Ect::Unicast);
        assert_eq!(p.enr(), 1);
        assert_eq!(p.operations(), &Operation::ALL);
        assert_eq!(p.default_operation(), Operation::List);
        assert_eq!(p.delay, Delay::Millis(0));
        let m = json(r#"{"name":"a","er":["coap://[::1]/s"],"ect":"multicast","delay":"auto"}"#)
            .unwrap()
            .profile;
        assert_eq!(m.emt(), Emt::Non);
        assert_eq!(m.delay, Delay::Auto);
        assert_eq!(
            json(r#"{"name":"a","er":["coap://[::1]/s"],"eo":"max"}"#)
                .unwrap()
                .profile
                .operations(),
            &[Operation::Maximum]
        );
    }

    #[test]
    fn same_profile_from_cbor() {
        let doc =
            json!({"name":"c1","er":["coap://[::1]:5684/s/t"],"eo":["min"],"enr":1,"delay":"auto"});
        let spec = parse_entity(PayloadFormat::Cbor, &cbor(&doc), 100).unwrap();
        assert_eq!(
            spec,
            json(&doc.to_string()).unwrap(),
            "CBOR and JSON parse alike"
        );
    }

    #[test]
    fn errors_name_field_and_problem() {
        use Reason as R;
        let cases = [
            (
                r#"{"name":"a","er":["coap://[::1]/s"],"colour":"red"}"#,
                "unknown field \"colour\"",
                Some("colour"),
                R::UnknownField,
            ),
            (
                r#"{"name":"a","er":["coap://[::1]/s"],"name":"b"}"#,
                "field \"name\" is given twice",
                Some("name"),
                R::RepeatedField,
            ),
            (
                r#"{"er":["coap://[::1]/s"]}"#,
                "missing field \"name\"",
                Some("name"),
                R::Missing,
            ),
            (
                r#"{"name":"a"}"#,
                "missing field \"er\"",
                Some("er"),
                R::Missing,
            ),
            (
                r#"{"name":"a","er":"coap://[::1]/s"}"#,
                "field \"er\" must be an array",
                Some("er"),
                R::WrongType,
            ),
            (
                r#"{"name":"a","er":[]}"#,
                "field \"er\": an entity needs at least one member",
                Some("er"),
                R::Empty,
            ),
            (
                r#"{"name":"a","er":["http://[::1]/s"]}"#,
                "member \"http://[::1]/s\": not a valid CoAP URI",
                Some("er"),
                R::NotAUri,
            ),
            (
                r#"{"name":"a","er":["coap://host/s"]}"#,
                "the host must be an IP address",
                Some("er"),
                R::HostName,
            ),
            (
                r#"{"name":"a","er":["coap://[::1]/s","coap://[::1]:5683/s"]}"#,
                "is listed twice",
                Some("er"),
                R::Duplicate,
            ),
            (
                r#"{"name":"a","er":["coap://[::1]/s"],"enr":0}"#,
                "field \"enr\": 0 is not a positive",
                Some("enr"),
                R::OutOfRange,
            ),
            (
                r#"{"name":"a","er":["coap://[::1]/s"],"enr":"2"}"#,
                "field \"enr\" must be a positive integer, not a string",
                Some("enr"),
                R::WrongType,
            ),
            (
                r#"{"name":"a","er":["coap://[::1]/s"],"emt":"maybe"}"#,
                "field \"emt\": \"maybe\" is not con or non",
                Some("emt"),
                R::UnknownValue,
            ),
            (
                r#"{"name":"a","er":["coap://[::1]/s"],"ect":"anycast"}"#,
                "field \"ect\": \"anycast\"",
                Some("ect"),
                R::UnknownValue,
            ),
            (
                r#"{"name":"a","er":["coap://[::1]/s"],"eo":["avg","mean"]}"#,
                "field \"eo\": \"mean\" is not an operation",
                Some("eo"),
                R::UnknownValue,
            ),
            (
                r#"{"name":"a","er":["coap://[::1]/s"],"eo":["avg","avg"]}"#,
                "\"avg\" is listed twice",
                Some("eo"),
                R::Duplicate,
            ),
            (
                r#"{"name":"a","er":["coap://[::1]/s"],"delay":-5}"#,
                "field \"delay\": -5 is not a delay",
                Some("delay"),
                R::OutOfRange,
            ),
            (
                r#"{"name":"a","er":["coap://[::1]/s"],"delay":1.5}"#,
                "field \"delay\" must be milliseconds or \"auto\", not a number",
                Some("delay"),
                R::WrongType,
            ),
            (
                r#"{"name":"a b","er":["coap://[::1]/s"]}"#,
                "field \"name\": \"a b\" holds ' '",
                Some("name"),
                R::BadCharacter,
            ),
            (
                r#"{"name":".well-known","er":["coap://[::1]/s"]}"#,
                "may not start with '.'",
                Some("name"),
                R::ReservedName,
            ),
            (
                r#"{"name":"a","er":["coap://[::1]/s"],"mcastURI":"coap://[ff1e::89:1]/s"}"#,
                "field \"mcastURI\": is assigned by the EM",
                Some("mcastURI"),
                R::AssignedByEm,
            ),
            (r#"["a"]"#, "must be an object", None, R::NotAnObject),
            (r#"{"name":"a","#, "malformed JSON", None, R::Malformed),
        ];
        for (text, expected, field, reason) in cases {
            let err = json(text).unwrap_err();
            assert!(err.to_string().contains(expected), "{text}: {err}");
            let problem = err.problem();
            assert_eq!(
                (problem.field.as_deref(), problem.reason),
                (field, reason),
                "{text}"
            );
        }
    }

    #[test]
    fn clients_and_the_em_read_values_by_the_same_rules() {
        // The text forms a command line gives: the EM's diagnostics, field and reason.
        assert_eq!("NON".parse::<Emt>(), Ok(Emt::Non));
        assert_eq!("multicast".parse::<Ect>(), Ok(Ect::Multicast));
        assert_eq!("median".parse::<Operation>(), Ok(Operation::Median));
        assert_eq!("auto".parse::<Delay>(), Ok(Delay::Auto));
        assert_eq!("250".parse::<Delay>(), Ok(Delay::Millis(250)));
        let e = "broadcast".parse::<Ect>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "field \"ect\": \"broadcast\" is not unicast or multicast"
        );
        assert_eq!(e.problem(), Problem::field("ect", Reason::UnknownValue));
        let e = "70000".parse::<Delay>().unwrap_err();
        assert_eq!(e.problem(), Problem::field("delay", Reason::OutOfRange));
        let e = "soon".parse::<Delay>().unwrap_err();
        assert!(e.to_string().contains("neither a number"), "{e}");
        assert_eq!(
            enr_from(0).unwrap_err().problem().reason,
            Reason::OutOfRange
        );
        assert_eq!(enr_from(3), Ok(3));
        // serde reads them alike, and refuses alike.
        let doc: ProfileDocument =
            serde_json::from_str(r#"{"emt":"CON","delay":"AUTO","eo":["max"],"new":1}"#).unwrap();
        assert_eq!(
            (doc.emt, doc.delay, doc.eo),
            (
                Some(Emt::Con),
                Some(Delay::Auto),
                Some(vec![Operation::Maximum])
            )
        );
        let err = serde_json::from_str::<ProfileDocument>(r#"{"eo":["mean"]}"#).unwrap_err();
        assert!(err.to_string().contains("is not an operation"), "{err}");
        let err = serde_json::from_str::<ProfileDocument>(r#"{"delay":70000}"#).unwrap_err();
        assert!(
            err.to_string()
                .contains("is not a delay from 0 to 60000 ms"),
            "{err}"
        );
    }

    #[test]
    fn a_document_serializes_to_what_the_em_parses() {
        let mut doc = ProfileDocument::new(
            "room",
            vec!["coap://[::1]/s".into(), "coap://[::2]/s".into()],
        );
        assert_eq!(
            serde_json::to_string(&doc).unwrap(),
            r#"{"name":"room","er":["coap://[::1]/s","coap://[::2]/s"]}"#
        );
        doc.emt = Some(Emt::Non);
        doc.ect = Some(Ect::Unicast);
        doc.enr = Some(2);
        doc.eo = Some(vec![Operation::Average, Operation::List]);
        doc.delay = Some(Delay::Millis(100));
        doc.mcast_uri = Some("coap://[ff1e::89:1]/s".into());
        let json = serde_json::to_vec(&doc).unwrap();
        assert_eq!(
            ProfileDocument::parse(PayloadFormat::Json, &json, 10),
            Ok(doc.clone()),
            "every field a client serializes is one the EM parses, under the same name"
        );
        assert_eq!(
            serde_json::from_slice::<ProfileDocument>(&json).unwrap(),
            doc
        );
        let cbor = cbor(&serde_json::to_value(&doc).unwrap());
        assert_eq!(
            ProfileDocument::parse(PayloadFormat::Cbor, &cbor, 10),
            Ok(doc.clone())
        );
        doc.delay = Some(Delay::Auto);
        let json = serde_json::to_vec(&doc).unwrap();
        assert_eq!(
            ProfileDocument::parse(PayloadFormat::Json, &json, 10)
                .unwrap()
                .delay,
            Some(Delay::Auto)
        );
        // `unjoined` is shown, never taken.
        doc.unjoined = vec!["coap://[::2]/s".into()];
        let json = serde_json::to_vec(&doc).unwrap();
        assert_eq!(
            serde_json::from_slice::<ProfileDocument>(&json).unwrap(),
            doc
        );
        assert_eq!(
            ProfileDocument::parse(PayloadFormat::Json, &json, 10),
            Err(ProfileError::UnknownField("unjoined".into()))
        );
    }

    /// Member contexts are stored with the entity and parse back from the store, but the
    /// profile shown never holds them; a context is for a member of `er`, and a member
    /// that leaves takes its context along.
    #[test]
    fn member_contexts_are_stored_never_shown_and_follow_the_members() {
        let context =
            json!({"secret_hex": "a0a1", "sender-id_hex": "45", "recipient-id_hex": "4d"});
        let doc = json!({
            "name": "a",
            "er": ["coap://[::1]/s", "coap://[::2]/s"],
            "oscore": {"coap://[::1]/s": context},
        })
        .to_string();
        let spec = parse_entity(PayloadFormat::Json, doc.as_bytes(), 10).unwrap();
        assert_eq!(spec.profile.oscore["coap://[::1]/s"].kid(), "45");
        let stored = spec.profile.to_stored_json("a").to_string();
        assert!(stored.contains("a0a1"), "{stored}");
        let again = parse_entity(PayloadFormat::Json, stored.as_bytes(), 10).unwrap();
        assert_eq!(again.profile, spec.profile);
        let shown = spec.profile.to_json("a", None).to_string();
        assert!(
            !shown.contains("a0a1") && !shown.contains("oscore"),
            "{shown}"
        );

        let elsewhere =
            json!({"name": "a", "er": ["coap://[::2]/s"], "oscore": {"coap://[::1]/s": context}});
        let err = parse_entity(PayloadFormat::Json, elsewhere.to_string().as_bytes(), 10);
        assert_eq!(
            err.unwrap_err().to_string(),
            "field \"oscore\": coap://[::1]/s is not a member of the entity (er)"
        );

        let leaves = parse_change(PayloadFormat::Json, br#"{"er": ["coap://[::2]/s"]}"#, 10)
            .unwrap()
            .apply("a", &spec.profile, None)
            .unwrap();
        assert!(leaves.oscore.is_empty());
        let replaced = parse_change(PayloadFormat::Json, br#"{"oscore": {}}"#, 10)
            .unwrap()
            .apply("a", &spec.profile, None)
            .unwrap();
        assert!(replaced.oscore.is_empty());
    }

    #[test]
    fn malformed_cbor_and_non_text_keys() {
        let err = parse_entity(PayloadFormat::Cbor, &[0xa1, 0x61], 10).unwrap_err();
        assert!(err.to_string().starts_with("malformed CBOR"), "{err}");
        // {1: "x"}
        let err = parse_entity(PayloadFormat::Cbor, &[0xa1, 0x01, 0x61, b'x'], 10).unwrap_err();
        assert_eq!(err, ProfileError::KeyNotText("an integer"));
    }

    #[test]
    fn member_limit() {
        let er: Vec<String> = (1..=3).map(|i| format!("coap://[::{i}]/s")).collect();
        let doc = json!({"name":"a","er":er}).to_string();
        let err = parse_entity(PayloadFormat::Json, doc.as_bytes(), 2).unwrap_err();
        assert!(
            err.to_string().contains("more than this EM allows (2)"),
            "{err}"
        );
    }

    #[test]
    fn changes_apply_but_never_ect() {
        let p = json(r#"{"name":"a","er":["coap://[::1]/s"]}"#)
            .unwrap()
            .profile;
        let c = parse_change(
            PayloadFormat::Json,
            br#"{"enr":1,"delay":"auto","ect":"unicast"}"#,
            10,
        )
        .unwrap();
        let q = c.apply("a", &p, None).unwrap();
        assert_eq!(q.delay, Delay::Auto);
        let c = parse_change(PayloadFormat::Json, br#"{"ect":"multicast"}"#, 10).unwrap();
        let err = c.apply("a", &p, None).unwrap_err().to_string();
        assert!(
            err.contains("field \"ect\": is set at creation only"),
            "{err}"
        );
        let c = parse_change(PayloadFormat::Json, br#"{"name":"b"}"#, 10).unwrap();
        assert!(c.apply("a", &p, None).is_err());
    }

    #[test]
    fn stored_document_parses_back() {
        let spec =
            json(r#"{"name":"a","er":["coap://[::1]/s"],"eo":["max"],"delay":"auto"}"#).unwrap();
        let doc = spec.profile.to_stored_json("a").to_string();
        assert_eq!(json(&doc).unwrap(), spec);
        let shown = spec.profile.to_json("a", Some("coap://[ff1e::89:1]/s"));
        assert_eq!(shown["enr"], 1);
        assert_eq!(shown["emt"], "con");
        assert_eq!(shown["mcastURI"], "coap://[ff1e::89:1]/s");
    }

    #[test]
    fn payload_format_detection() {
        assert_eq!(PayloadFormat::of(None, b" {}"), Some(PayloadFormat::Json));
        assert_eq!(PayloadFormat::of(None, &[0xa0]), Some(PayloadFormat::Cbor));
        assert_eq!(
            PayloadFormat::of(Some(ContentFormat::TEXT_PLAIN), b"{}"),
            None
        );
    }
}
