//! Entity profiles (`er`, `emt`, `ect`, `enr`, `eo`, `delay`): strict parsing from JSON and
//! CBOR, and the profile document the EM shows and stores.

use crate::document::{DocumentError, Node};
use crate::member::{Member, MemberUriError};
use crate::operation::Operation;
use covey_core::ContentFormat;
use serde_json::{json, Map, Value};
use std::fmt;

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
        if text.eq_ignore_ascii_case("auto") {
            return Some(Delay::Auto);
        }
        let ms: u64 = text.parse().ok()?;
        (ms <= MAX_DELAY_MS).then_some(Delay::Millis(ms))
    }

    fn to_json(self) -> Value {
        match self {
            Delay::Millis(ms) => json!(ms),
            Delay::Auto => json!("auto"),
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
    pub fn to_json(&self, name: &str, mcast_uri: Option<&str>) -> Value {
        let mut doc = Map::new();
        doc.insert("name".into(), json!(name));
        doc.insert("er".into(), json!(self.er));
        doc.insert("emt".into(), json!(self.emt().name()));
        doc.insert("ect".into(), json!(self.ect.name()));
        doc.insert("enr".into(), json!(self.enr()));
        let eo: Vec<&str> = self.operations().iter().map(|o| o.name()).collect();
        doc.insert("eo".into(), json!(eo));
        doc.insert("delay".into(), self.delay.to_json());
        if let Some(uri) = mcast_uri {
            doc.insert("mcastURI".into(), json!(uri));
        }
        Value::Object(doc)
    }

    /// The document as given (defaults left out), as the store keeps it; it parses back
    /// with [`parse_entity`].
    pub fn to_stored_json(&self, name: &str) -> Value {
        let mut doc = Map::new();
        doc.insert("name".into(), json!(name));
        doc.insert("er".into(), json!(self.er));
        if let Some(emt) = self.emt {
            doc.insert("emt".into(), json!(emt.name()));
        }
        doc.insert("ect".into(), json!(self.ect.name()));
        if let Some(enr) = self.enr {
            doc.insert("enr".into(), json!(enr));
        }
        if let Some(eo) = &self.eo {
            let eo: Vec<&str> = eo.iter().map(|o| o.name()).collect();
            doc.insert("eo".into(), json!(eo));
        }
        doc.insert("delay".into(), self.delay.to_json());
        Value::Object(doc)
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

/// A profile change (`PUT /e/<name>/profile`): the fields present replace the current ones.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProfileChange {
    /// `name`, which must be the entity's own.
    pub name: Option<String>,
    /// New members.
    pub er: Option<Vec<String>>,
    /// New message type.
    pub emt: Option<Emt>,
    /// `ect`, which must not change.
    pub ect: Option<Ect>,
    /// New reply count.
    pub enr: Option<u32>,
    /// New operations.
    pub eo: Option<Vec<Operation>>,
    /// New delay.
    pub delay: Option<Delay>,
    /// `mcastURI`, which must be the assigned one (the EM assigns it).
    pub mcast_uri: Option<String>,
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

/// Why a profile payload was refused; the message names the field and the problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    /// Not well-formed JSON or CBOR.
    #[error("{0}")]
    Malformed(DocumentError),
    /// The top level is not an object.
    #[error("the profile must be an object with the fields name, er, emt, ect, enr, eo, delay (got {0})")]
    NotAnObject(&'static str),
    /// A map key that is not a string.
    #[error("field names must be strings (got {0})")]
    KeyNotText(&'static str),
    /// A field this EM does not know.
    #[error("unknown field \"{0}\" (known: name, er, emt, ect, enr, eo, delay)")]
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

/// Fields read from a payload, each at most once.
#[derive(Default)]
struct Fields {
    name: Option<String>,
    er: Option<Vec<String>>,
    emt: Option<Emt>,
    ect: Option<Ect>,
    enr: Option<u32>,
    eo: Option<Vec<Operation>>,
    delay: Option<Delay>,
    mcast_uri: Option<String>,
}

/// Parses a creation payload (`POST /e`).
pub fn parse_entity(
    format: PayloadFormat,
    payload: &[u8],
    max_members: usize,
) -> Result<EntitySpec, ProfileError> {
    let f = parse_fields(format.decode(payload)?, max_members)?;
    if f.mcast_uri.is_some() {
        return Err(ProfileError::Invalid {
            field: "mcastURI",
            problem: "is assigned by the EM, not by the client".into(),
        });
    }
    let name = f.name.ok_or(ProfileError::Missing("name"))?;
    let er = f.er.ok_or(ProfileError::Missing("er"))?;
    Ok(EntitySpec {
        name,
        profile: Profile {
            er,
            emt: f.emt,
            ect: f.ect.unwrap_or_default(),
            enr: f.enr,
            eo: f.eo,
            delay: f.delay.unwrap_or(Delay::Millis(0)),
        },
    })
}

/// Parses a profile change payload (`PUT /e/<name>/profile`).
pub fn parse_change(
    format: PayloadFormat,
    payload: &[u8],
    max_members: usize,
) -> Result<ProfileChange, ProfileError> {
    let f = parse_fields(format.decode(payload)?, max_members)?;
    Ok(ProfileChange {
        name: f.name,
        er: f.er,
        emt: f.emt,
        ect: f.ect,
        enr: f.enr,
        eo: f.eo,
        delay: f.delay,
        mcast_uri: f.mcast_uri,
    })
}

impl ProfileChange {
    /// The profile after this change; `name`, `ect` and `mcastURI` may only repeat the
    /// current values.
    pub fn apply(
        &self,
        name: &str,
        current: &Profile,
        mcast_uri: Option<&str>,
    ) -> Result<Profile, ProfileError> {
        if let Some(n) = self.name.as_deref().filter(|n| *n != name) {
            return Err(ProfileError::Invalid {
                field: "name",
                problem: format!("an entity cannot be renamed (\"{name}\" to \"{n}\")"),
            });
        }
        if let Some(ect) = self.ect.filter(|e| *e != current.ect) {
            return Err(ProfileError::Invalid {
                field: "ect",
                problem: format!(
                    "is set at creation only; this entity is {} and cannot become {}",
                    current.ect.name(),
                    ect.name()
                ),
            });
        }
        if let Some(uri) = self.mcast_uri.as_deref().filter(|u| Some(*u) != mcast_uri) {
            return Err(ProfileError::Invalid {
                field: "mcastURI",
                problem: format!("is assigned by the EM and cannot be set to \"{uri}\""),
            });
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
        Ok(p)
    }
}

fn wrong(field: &'static str, expected: &'static str, found: &Node) -> ProfileError {
    ProfileError::WrongType {
        field,
        expected,
        found: found.kind(),
    }
}

fn parse_fields(node: Node, max_members: usize) -> Result<Fields, ProfileError> {
    let Node::Map(entries) = node else {
        return Err(ProfileError::NotAnObject(node.kind()));
    };
    let mut f = Fields::default();
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
            "emt" => {
                let text = value
                    .as_text()
                    .ok_or_else(|| wrong("emt", "\"con\" or \"non\"", &value))?;
                f.emt = Some(Emt::from_name(text).ok_or_else(|| ProfileError::Invalid {
                    field: "emt",
                    problem: format!("\"{text}\" is not con or non"),
                })?);
            }
            "ect" => {
                let text = value
                    .as_text()
                    .ok_or_else(|| wrong("ect", "\"unicast\" or \"multicast\"", &value))?;
                f.ect = Some(Ect::from_name(text).ok_or_else(|| ProfileError::Invalid {
                    field: "ect",
                    problem: format!("\"{text}\" is not unicast or multicast"),
                })?);
            }
            "enr" => {
                let Node::Integer(n) = value else {
                    return Err(wrong("enr", "a positive integer", &value));
                };
                f.enr = Some(u32::try_from(n).ok().filter(|n| *n >= 1).ok_or_else(|| {
                    ProfileError::Invalid {
                        field: "enr",
                        problem: format!("{n} is not a positive number of replies"),
                    }
                })?);
            }
            "eo" => f.eo = Some(parse_eo(&value)?),
            "delay" => f.delay = Some(parse_delay(&value)?),
            "mcastURI" => {
                let text = value
                    .as_text()
                    .ok_or_else(|| wrong("mcastURI", "a string", &value))?;
                f.mcast_uri = Some(text.to_string());
            }
            _ => return Err(ProfileError::UnknownField(key)),
        }
        seen.push(key);
    }
    Ok(f)
}

/// Checks an entity name: 1–63 bytes of letters, digits, `-`, `_` and `.`, not starting
/// with `.`.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > MAX_NAME_LEN {
        return Err(format!("must be 1 to {MAX_NAME_LEN} characters"));
    }
    if name.starts_with('.') {
        return Err(format!("\"{name}\" may not start with '.'"));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Err(format!(
            "\"{name}\" holds '{c}'; use letters, digits, '-', '_' and '.'"
        ));
    }
    Ok(())
}

fn parse_name(value: &Node) -> Result<String, ProfileError> {
    let name = value
        .as_text()
        .ok_or_else(|| wrong("name", "a string", value))?;
    check_name(name).map_err(|problem| ProfileError::Invalid {
        field: "name",
        problem,
    })?;
    Ok(name.to_string())
}

fn parse_er(value: &Node, max_members: usize) -> Result<Vec<String>, ProfileError> {
    let Node::Array(items) = value else {
        return Err(wrong("er", "an array of coap:// URIs", value));
    };
    if items.is_empty() {
        return Err(ProfileError::Invalid {
            field: "er",
            problem: "an entity needs at least one member".into(),
        });
    }
    if items.len() > max_members {
        return Err(ProfileError::Invalid {
            field: "er",
            problem: format!(
                "{} members is more than this EM allows ({max_members})",
                items.len()
            ),
        });
    }
    let mut uris = Vec::with_capacity(items.len());
    let mut members: Vec<Member> = Vec::with_capacity(items.len());
    for item in items {
        let uri = item
            .as_text()
            .ok_or_else(|| wrong("er", "an array of coap:// URIs", item))?;
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
    let names: Vec<&Node> = match value {
        Node::Text(_) => vec![value],
        Node::Array(items) => items.iter().collect(),
        other => return Err(wrong("eo", "an operation name or an array of them", other)),
    };
    if names.is_empty() {
        return Err(ProfileError::Invalid {
            field: "eo",
            problem: "needs at least one operation".into(),
        });
    }
    let mut ops = Vec::with_capacity(names.len());
    for n in names {
        let text = n
            .as_text()
            .ok_or_else(|| wrong("eo", "an operation name or an array of them", n))?;
        let op = Operation::from_name(text).ok_or_else(|| ProfileError::Invalid {
            field: "eo",
            problem: format!(
                "\"{text}\" is not an operation (lst, avg, min, max, sum, count, median)"
            ),
        })?;
        if ops.contains(&op) {
            return Err(ProfileError::Invalid {
                field: "eo",
                problem: format!("\"{text}\" is listed twice"),
            });
        }
        ops.push(op);
    }
    Ok(ops)
}

fn parse_delay(value: &Node) -> Result<Delay, ProfileError> {
    let out_of_range = |shown: String| ProfileError::Invalid {
        field: "delay",
        problem: format!("{shown} is not a delay from 0 to {MAX_DELAY_MS} ms"),
    };
    match value {
        Node::Integer(n) => u64::try_from(*n)
            .ok()
            .filter(|ms| *ms <= MAX_DELAY_MS)
            .map(Delay::Millis)
            .ok_or_else(|| out_of_range(n.to_string())),
        Node::Text(t) if t.eq_ignore_ascii_case("auto") => Ok(Delay::Auto),
        Node::Text(t) => Err(ProfileError::Invalid {
            field: "delay",
            problem: format!("\"{t}\" is neither a number of milliseconds nor \"auto\""),
        }),
        other => Err(wrong("delay", "milliseconds or \"auto\"", other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let cases = [
            (
                r#"{"name":"a","er":["coap://[::1]/s"],"colour":"red"}"#,
                "unknown field \"colour\"",
            ),
            (
                r#"{"name":"a","er":["coap://[::1]/s"],"name":"b"}"#,
                "field \"name\" is given twice",
            ),
            (r#"{"er":["coap://[::1]/s"]}"#, "missing field \"name\""),
            (r#"{"name":"a"}"#, "missing field \"er\""),
            (
                r#"{"name":"a","er":"coap://[::1]/s"}"#,
                "field \"er\" must be an array",
            ),
            (
                r#"{"name":"a","er":[]}"#,
                "field \"er\": an entity needs at least one member",
            ),
            (
                r#"{"name":"a","er":["http://[::1]/s"]}"#,
                "member \"http://[::1]/s\": not a valid CoAP URI",
            ),
            (
                r#"{"name":"a","er":["coap://host/s"]}"#,
                "the host must be an IP address",
            ),
            (
                r#"{"name":"a","er":["coap://[::1]/s","coap://[::1]:5683/s"]}"#,
                "is listed twice",
            ),
            (
                r#"{"name":"a","er":["coap://[::1]/s"],"enr":0}"#,
                "field \"enr\": 0 is not a positive",
            ),
            (
                r#"{"name":"a","er":["coap://[::1]/s"],"enr":"2"}"#,
                "field \"enr\" must be a positive integer, not a string",
            ),
            (
                r#"{"name":"a","er":["coap://[::1]/s"],"emt":"maybe"}"#,
                "field \"emt\": \"maybe\" is not con or non",
            ),
            (
                r#"{"name":"a","er":["coap://[::1]/s"],"ect":"anycast"}"#,
                "field \"ect\": \"anycast\"",
            ),
            (
                r#"{"name":"a","er":["coap://[::1]/s"],"eo":["avg","mean"]}"#,
                "field \"eo\": \"mean\" is not an operation",
            ),
            (
                r#"{"name":"a","er":["coap://[::1]/s"],"eo":["avg","avg"]}"#,
                "\"avg\" is listed twice",
            ),
            (
                r#"{"name":"a","er":["coap://[::1]/s"],"delay":-5}"#,
                "field \"delay\": -5 is not a delay",
            ),
            (
                r#"{"name":"a","er":["coap://[::1]/s"],"delay":1.5}"#,
                "field \"delay\" must be milliseconds or \"auto\", not a number",
            ),
            (
                r#"{"name":"a b","er":["coap://[::1]/s"]}"#,
                "field \"name\": \"a b\" holds ' '",
            ),
            (
                r#"{"name":"a","er":["coap://[::1]/s"],"mcastURI":"coap://[ff1e::89:1]/s"}"#,
                "field \"mcastURI\": is assigned by the EM",
            ),
            (r#"["a"]"#, "must be an object"),
            (r#"{"name":"a","#, "malformed JSON"),
        ];
        for (text, expected) in cases {
            let err = json(text).unwrap_err().to_string();
            assert!(err.contains(expected), "{text}: {err}");
        }
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
