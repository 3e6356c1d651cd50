//! Combined replies: the members' answers joined by the entity operation and rendered by
//! the client's Accept — text/plain, JSON, CBOR, SenML JSON and SenML CBOR. Every reply
//! says how many members answered and which did not.
//!
//! SenML layout (`bn` is the entity URI, times relative to `bt`):
//!
//! ```text
//! [{"bn":E,"bt":T,"v":21.5},            aggregate, named after the entity (not for lst)
//!  {"n":"/answered","v":2},             E/answered: members with a value
//!  {"n":"/missing","vs":"M3 M4"},       E/missing: the others, space-separated (if any)
//!  {"bn":"","n":M1,"t":0.12,"v":21},    one record per member value, named by its URI
//!  {"n":M2,"t":0.31,"v":22}]
//! ```
//!
//! A member that is itself an entity contributes the records of its own list, so nested
//! entities flatten into one pack of leaf values.

use crate::member_value::{MemberValue, NamedValue, Scalar};
use crate::operation::Operation;
use crate::senml::{self, json_number, Record};
use covey_core::{Code, ContentFormat};
use covey_proto::Duration;
use serde_json::{json, Value};
use std::fmt::Write;

/// One member's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct MemberReply {
    /// The member URI.
    pub member: String,
    /// The response code.
    pub code: Code,
    /// The value it carried.
    pub value: MemberValue,
    /// When it arrived, from the start of the query.
    pub after: Duration,
}

/// What the reply combines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyKind {
    /// A query (GET) with an operation.
    Query(Operation),
    /// A fan-out of this method (`?fanout`): the per-member codes.
    Fanout(Code),
}

/// One combined reply to a client.
#[derive(Debug, Clone, PartialEq)]
pub struct CombinedReply {
    /// The entity URI.
    pub entity: String,
    /// What it combines.
    pub kind: ReplyKind,
    /// The result of a scalar operation.
    pub value: Option<f64>,
    /// How many members the entity has.
    pub members: usize,
    /// The members that answered, in member order (error codes included).
    pub replies: Vec<MemberReply>,
    /// The members without a successful answer, in member order.
    pub missing: Vec<String>,
    /// Members that answered successfully.
    pub answered: usize,
    /// Missing members left out of `missing` to keep the reply small.
    pub missing_more: usize,
    /// Members in `missing` whose answer the query did not need: not asked, or not answered
    /// yet when `enr` replies had arrived (an anycast asks one). A page showing reliability
    /// counts the other members only.
    pub not_needed: Vec<String>,
    /// SenML base time: Unix seconds of the query start, or (negative) seconds before now.
    pub base_time: f64,
}

/// Why member replies cannot be combined with an arithmetic operation.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CombineError {
    /// A member's reply is not a number.
    #[error("cannot compute {op}: member {member} replied {found}, which is not a number")]
    NotNumeric {
        /// The operation.
        op: Operation,
        /// The member URI.
        member: String,
        /// What it replied.
        found: String,
    },
}

/// Media types a combined reply can be rendered in.
pub const REPLY_FORMATS: [ContentFormat; 5] = [
    ContentFormat::TEXT_PLAIN,
    ContentFormat::JSON,
    ContentFormat::CBOR,
    ContentFormat::SENML_JSON,
    ContentFormat::SENML_CBOR,
];

/// Joins member replies with `op`. `members` lists every member URI in order.
pub fn combine(
    entity: String,
    kind: ReplyKind,
    members: &[String],
    replies: Vec<MemberReply>,
    base_time: f64,
) -> Result<CombinedReply, CombineError> {
    let ok: Vec<&MemberReply> = replies.iter().filter(|r| r.code.is_success()).collect();
    let ok_members: Vec<String> = ok.iter().map(|r| r.member.clone()).collect();
    let value = match kind {
        ReplyKind::Query(Operation::Count) => Some(ok.len() as f64),
        ReplyKind::Query(op) if op.needs_numbers() => {
            let mut numbers = Vec::with_capacity(ok.len());
            for r in &ok {
                match r.value.number() {
                    Some(x) => numbers.push(x),
                    None => {
                        return Err(CombineError::NotNumeric {
                            op,
                            member: r.member.clone(),
                            found: r.value.describe(),
                        })
                    }
                }
            }
            op.apply(&numbers)
        }
        _ => None,
    };
    // A set, not a scan of ok_members per member: a 1000-member query would compare a
    // million strings.
    let answered: std::collections::BTreeSet<&str> =
        ok_members.iter().map(String::as_str).collect();
    let missing = members
        .iter()
        .filter(|m| !answered.contains(m.as_str()))
        .cloned()
        .collect();
    let ok_len = ok_members.len();
    Ok(CombinedReply {
        entity,
        kind,
        value,
        members: members.len(),
        answered: ok_len,
        replies,
        missing,
        missing_more: 0,
        not_needed: Vec::new(),
        base_time,
    })
}

fn code_text(code: Code) -> String {
    format!("{}.{:02}", code.class(), code.detail())
}

/// Seconds to the millisecond, and to the microsecond below 10 ms: a reply on a LAN takes
/// well under a millisecond, while on a constrained network, where every byte of the reply
/// counts, replies take tens of milliseconds and keep the three decimals they always had.
fn secs(d: Duration) -> f64 {
    let s = d.as_secs_f64();
    let scale = if d < Duration::from_millis(10) {
        1e6
    } else {
        1e3
    };
    (s * scale).round() / scale
}

impl CombinedReply {
    /// Members that answered successfully.
    pub fn answered(&self) -> usize {
        self.answered
    }

    /// The reply in `format` in at most `limit` bytes if it can be: per-member values are
    /// left out first, then missing members beyond a count. Counts are always kept.
    pub fn render_within(&self, format: ContentFormat, limit: usize) -> Option<Vec<u8>> {
        let body = self.render(format)?;
        if body.len() <= limit {
            return Some(body);
        }
        let mut small = self.clone();
        small.replies.clear();
        small.not_needed.clear();
        loop {
            let body = small.render(format)?;
            if body.len() <= limit || small.missing.is_empty() {
                return Some(body);
            }
            let drop = (small.missing.len() / 4).max(1);
            for _ in 0..drop {
                small.missing.pop();
                small.missing_more += 1;
            }
        }
    }

    fn missing_text(&self) -> String {
        let mut text = self.missing.join(" ");
        if self.missing_more > 0 {
            text.push_str(&format!(" (+{} more)", self.missing_more));
        }
        text
    }

    /// The reply in `format`; `None` when that format is not offered.
    pub fn render(&self, format: ContentFormat) -> Option<Vec<u8>> {
        Some(match format {
            ContentFormat::TEXT_PLAIN => self.to_text().into_bytes(),
            ContentFormat::JSON => serde_json::to_vec(&self.to_json()).unwrap_or_default(),
            ContentFormat::CBOR => {
                let mut out = Vec::new();
                let _ = ciborium::ser::into_writer(&self.to_json(), &mut out);
                out
            }
            ContentFormat::SENML_JSON => senml::to_json(&self.to_senml()),
            ContentFormat::SENML_CBOR => senml::to_cbor(&self.to_senml()),
            _ => return None,
        })
    }

    /// text/plain: the number (scalar operations) or one `<name> <value>` line per value
    /// (lst) or `<member> <code>` per member (fan-out), then `answered: k of G` and, when
    /// some did not answer, `missing: <uris>`, and `not needed: <uris>` for those of them the
    /// query did not wait for (an anycast's other members).
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        match self.kind {
            ReplyKind::Query(op) if op.is_scalar() => match self.value {
                Some(v) => {
                    let _ = writeln!(out, "{v}");
                }
                None => out.push_str("no value\n"),
            },
            ReplyKind::Query(_) => {
                for r in &self.replies {
                    match (&r.value, r.code.is_success()) {
                        (_, false) => {
                            let _ = writeln!(out, "{} {}", r.member, r.code);
                        }
                        (MemberValue::Records(values), true) => {
                            for v in values {
                                let _ = writeln!(out, "{} {}", v.name, v.value);
                            }
                        }
                        (MemberValue::Number(x), true) => {
                            let _ = writeln!(out, "{} {x}", r.member);
                        }
                        (MemberValue::Text(t), true) => {
                            let _ = writeln!(out, "{} {}", r.member, t.trim_end());
                        }
                        (MemberValue::Empty, true) => {
                            let _ = writeln!(out, "{} (empty)", r.member);
                        }
                    }
                }
            }
            ReplyKind::Fanout(_) => {
                for r in &self.replies {
                    let _ = writeln!(out, "{} {}", r.member, r.code);
                }
            }
        }
        let _ = writeln!(out, "answered: {} of {}", self.answered(), self.members);
        if !self.missing.is_empty() || self.missing_more > 0 {
            let _ = writeln!(out, "missing: {}", self.missing_text().trim_start());
        }
        if !self.not_needed.is_empty() {
            let _ = writeln!(out, "not needed: {}", self.not_needed.join(" "));
        }
        out
    }

    /// application/json (and, the same structure, application/cbor).
    pub fn to_json(&self) -> Value {
        let replies: Vec<Value> = self
            .replies
            .iter()
            .map(|r| {
                let mut o = json!({
                    "member": r.member,
                    "code": code_text(r.code),
                    "t": secs(r.after),
                });
                match &r.value {
                    MemberValue::Number(x) => o["value"] = json_number(*x),
                    MemberValue::Text(t) => o["value"] = json!(t),
                    MemberValue::Empty => o["value"] = Value::Null,
                    MemberValue::Records(values) => {
                        o["values"] = Value::Array(
                            values
                                .iter()
                                .map(|v| json!({"name": v.name, "value": scalar_json(&v.value)}))
                                .collect(),
                        )
                    }
                }
                o
            })
            .collect();
        let mut doc = json!({
            "entity": self.entity,
            "members": self.members,
            "answered": self.answered(),
            "replies": replies,
            "missing": self.missing,
        });
        // Only when there are some: every byte counts on a constrained network.
        if !self.not_needed.is_empty() {
            doc["not_needed"] = json!(self.not_needed);
        }
        if self.missing_more > 0 {
            doc["missing_more"] = json!(self.missing_more);
        }
        match self.kind {
            ReplyKind::Query(op) => {
                doc["op"] = json!(op.name());
                doc["value"] = self.value.map_or(Value::Null, json_number);
            }
            ReplyKind::Fanout(method) => {
                doc["op"] = json!("fanout");
                doc["method"] = json!(method.name().unwrap_or("?"));
            }
        }
        doc
    }

    /// The SenML records (see the module documentation).
    pub fn to_senml(&self) -> Vec<Record> {
        let mut records = Vec::new();
        if let Some(v) = self.value {
            records.push(Record {
                value: Some(v),
                ..Record::default()
            });
        }
        records.push(Record {
            name: Some("/answered".into()),
            value: Some(self.answered() as f64),
            ..Record::default()
        });
        if !self.missing.is_empty() || self.missing_more > 0 {
            records.push(Record {
                name: Some("/missing".into()),
                string_value: Some(self.missing_text().trim_start().to_string()),
                ..Record::default()
            });
        }
        if let Some(first) = records.first_mut() {
            first.base_name = Some(self.entity.clone());
            first.base_time = Some(self.base_time);
        }
        let mut reset = true;
        for r in &self.replies {
            let t = Some(secs(r.after));
            let mut push = |name: &str, value: Scalar| {
                let mut rec = Record {
                    name: Some(name.to_string()),
                    time: t,
                    ..Record::default()
                };
                match value {
                    Scalar::Number(x) => rec.value = Some(x),
                    Scalar::Text(s) => rec.string_value = Some(s),
                    Scalar::Bool(b) => rec.bool_value = Some(b),
                }
                if reset {
                    rec.base_name = Some(String::new());
                    reset = false;
                }
                records.push(rec);
            };
            match (self.kind, &r.value, r.code.is_success()) {
                (ReplyKind::Fanout(_), _, _) | (_, _, false) => {
                    push(&r.member, Scalar::Text(code_text(r.code)))
                }
                (_, MemberValue::Number(x), true) => push(&r.member, Scalar::Number(*x)),
                (_, MemberValue::Text(s), true) => push(&r.member, Scalar::Text(s.clone())),
                (_, MemberValue::Empty, true) => push(&r.member, Scalar::Text(String::new())),
                (_, MemberValue::Records(values), true) => {
                    for NamedValue { name, value } in values {
                        push(name, value.clone());
                    }
                }
            }
        }
        records
    }
}

fn scalar_json(s: &Scalar) -> Value {
    match s {
        Scalar::Number(x) => json_number(*x),
        Scalar::Text(t) => json!(t),
        Scalar::Bool(b) => json!(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::member_value::extract;

    fn reply(member: &str, value: MemberValue, ms: u64) -> MemberReply {
        MemberReply {
            member: member.into(),
            code: Code::CONTENT,
            value,
            after: Duration::from_millis(ms),
        }
    }

    fn members() -> Vec<String> {
        (1..=3).map(|i| format!("coap://[::{i}]/s/t")).collect()
    }

    fn sample(op: Operation) -> CombinedReply {
        let m = members();
        combine(
            "coap://[::9]/e/room".into(),
            ReplyKind::Query(op),
            &m,
            vec![
                reply(&m[0], MemberValue::Number(20.0), 120),
                reply(&m[2], MemberValue::Number(23.0), 310),
            ],
            -0.5,
        )
        .unwrap()
    }

    #[test]
    fn text_says_who_answered() {
        let avg = sample(Operation::Average).to_text();
        assert_eq!(avg, "21.5\nanswered: 2 of 3\nmissing: coap://[::2]/s/t\n");
        let lst = sample(Operation::List).to_text();
        assert!(
            lst.starts_with("coap://[::1]/s/t 20\ncoap://[::3]/s/t 23\n"),
            "{lst}"
        );
    }

    #[test]
    fn json_shape() {
        let doc = sample(Operation::Maximum).to_json();
        assert_eq!(doc["op"], "max");
        assert_eq!(doc["value"], 23);
        assert_eq!(doc["answered"], 2);
        assert_eq!(doc["replies"][1]["member"], "coap://[::3]/s/t");
        assert_eq!(doc["replies"][1]["t"], 0.31);
        assert_eq!(doc["missing"], json!(["coap://[::2]/s/t"]));
        assert_eq!(doc.get("not_needed"), None, "left out when empty");
    }

    #[test]
    fn json_says_which_missing_members_were_not_needed() {
        let mut anycast = sample(Operation::Average);
        anycast.not_needed = vec!["coap://[::2]/s/t".into()];
        let doc = anycast.to_json();
        assert_eq!(doc["missing"], json!(["coap://[::2]/s/t"]));
        assert_eq!(doc["not_needed"], json!(["coap://[::2]/s/t"]));
    }

    #[test]
    fn text_names_the_members_an_anycast_did_not_need() {
        let mut anycast = sample(Operation::Average);
        anycast.not_needed = vec!["coap://[::2]/s/t".into()];
        let text = anycast.to_text();
        assert!(
            text.ends_with("missing: coap://[::2]/s/t\nnot needed: coap://[::2]/s/t\n"),
            "{text}"
        );
    }

    #[test]
    fn reply_times_keep_microseconds() {
        let m = members();
        let fast = MemberReply {
            after: Duration::from_micros(420),
            ..reply(&m[0], MemberValue::Number(1.0), 0)
        };
        let c = combine(
            "e".into(),
            ReplyKind::Query(Operation::List),
            &m,
            vec![fast],
            0.0,
        )
        .unwrap();
        assert_eq!(c.to_json()["replies"][0]["t"], 0.00042);
        let slow = MemberReply {
            after: Duration::from_micros(42_345),
            ..reply(&m[0], MemberValue::Number(1.0), 0)
        };
        let c = combine(
            "e".into(),
            ReplyKind::Query(Operation::List),
            &m,
            vec![slow],
            0.0,
        )
        .unwrap();
        assert_eq!(c.to_json()["replies"][0]["t"], 0.042, "ms from 10 ms up");
    }

    #[test]
    fn senml_parses_back() {
        for format in [ContentFormat::SENML_JSON, ContentFormat::SENML_CBOR] {
            let bytes = sample(Operation::Average).render(format).unwrap();
            let pack = if format == ContentFormat::SENML_JSON {
                senml::from_json(&bytes).unwrap()
            } else {
                senml::from_cbor(&bytes).unwrap()
            };
            let r = senml::resolve(&pack);
            assert_eq!(r[0].name, "coap://[::9]/e/room");
            assert_eq!(r[0].value, senml::ResolvedValue::Number(21.5));
            assert_eq!(r[1].name, "coap://[::9]/e/room/answered");
            assert_eq!(
                r[2].value,
                senml::ResolvedValue::Text("coap://[::2]/s/t".into())
            );
            assert_eq!(r[3].name, "coap://[::1]/s/t");
            assert!((r[4].time - (-0.5 + 0.31)).abs() < 1e-9);
            // An EM reading this reply as a member gets the aggregate.
            assert_eq!(extract(Some(format), &bytes), MemberValue::Number(21.5));
        }
        let lst = sample(Operation::List)
            .render(ContentFormat::SENML_JSON)
            .unwrap();
        let MemberValue::Records(values) = extract(Some(ContentFormat::SENML_JSON), &lst) else {
            panic!()
        };
        assert_eq!(values.len(), 2);
    }

    #[test]
    fn arithmetic_on_text_is_an_error() {
        let m = members();
        let err = combine(
            "e".into(),
            ReplyKind::Query(Operation::Average),
            &m,
            vec![
                reply(&m[0], MemberValue::Number(1.0), 1),
                reply(&m[1], MemberValue::Text("on".into()), 1),
            ],
            0.0,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot compute avg: member coap://[::2]/s/t replied \"on\", which is not a number"
        );
        // lst and count are fine with text.
        for op in [Operation::List, Operation::Count] {
            assert!(combine(
                "e".into(),
                ReplyKind::Query(op),
                &m,
                vec![reply(&m[1], MemberValue::Text("on".into()), 1)],
                0.0
            )
            .is_ok());
        }
    }

    #[test]
    fn large_replies_shrink_but_keep_counts() {
        let members: Vec<String> = (0..40)
            .map(|i| format!("coap://[2001:db8::{i:x}]/s/t"))
            .collect();
        let replies = members[..10]
            .iter()
            .map(|m| reply(m, MemberValue::Number(1.0), 5))
            .collect();
        let c = combine(
            "e".into(),
            ReplyKind::Query(Operation::List),
            &members,
            replies,
            0.0,
        )
        .unwrap();
        for format in REPLY_FORMATS {
            let full = c.render(format).unwrap();
            assert!(full.len() > 400);
            let small = c.render_within(format, 400).unwrap();
            assert!(small.len() <= 400, "{format}: {}", small.len());
        }
        let doc: Value =
            serde_json::from_slice(&c.render_within(ContentFormat::JSON, 400).unwrap()).unwrap();
        assert_eq!(doc["answered"], 10);
        assert_eq!(doc["replies"], json!([]));
        let listed = doc["missing"].as_array().unwrap().len();
        assert_eq!(listed + doc["missing_more"].as_u64().unwrap() as usize, 30);
        let text =
            String::from_utf8(c.render_within(ContentFormat::TEXT_PLAIN, 400).unwrap()).unwrap();
        assert!(text.contains("answered: 10 of 40\nmissing: "), "{text}");
        assert!(text.trim_end().ends_with("more)"), "{text}");
    }

    #[test]
    fn unsupported_format() {
        assert!(sample(Operation::List).render(ContentFormat::XML).is_none());
    }
}
