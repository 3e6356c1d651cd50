//! The value a member replied with: a number from plain text, JSON, CBOR or a SenML record,
//! or what it was instead — never a guess.

use crate::document::Node;
use crate::senml::{self, Resolved, ResolvedValue};
use covey_core::ContentFormat;
use std::fmt;

/// What one member reply carried.
#[derive(Debug, Clone, PartialEq)]
pub enum MemberValue {
    /// One number.
    Number(f64),
    /// Text (or a payload that is not a number, shown as text).
    Text(String),
    /// Several named values: a SenML pack of several records, or a nested entity's list.
    Records(Vec<NamedValue>),
    /// No payload.
    Empty,
}

/// One named value from a SenML pack.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedValue {
    /// The resolved SenML name.
    pub name: String,
    /// The value.
    pub value: Scalar,
}

/// A single value.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    /// A number.
    Number(f64),
    /// A string.
    Text(String),
    /// A boolean.
    Bool(bool),
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Number(x) => write!(f, "{x}"),
            Scalar::Text(s) => f.write_str(s),
            Scalar::Bool(b) => write!(f, "{b}"),
        }
    }
}

impl MemberValue {
    /// The number, if the reply was exactly one number.
    pub fn number(&self) -> Option<f64> {
        match self {
            MemberValue::Number(x) => Some(*x),
            _ => None,
        }
    }

    /// A short description for diagnostics: the value, or what it was instead of one.
    pub fn describe(&self) -> String {
        match self {
            MemberValue::Number(x) => x.to_string(),
            MemberValue::Text(t) => {
                let short: String = t.chars().take(40).collect();
                if short.len() < t.len() {
                    format!("\"{short}...\"")
                } else {
                    format!("\"{short}\"")
                }
            }
            MemberValue::Records(r) => crate::plural::count(r.len(), "value", "values"),
            MemberValue::Empty => "an empty payload".to_string(),
        }
    }
}

/// Extracts the value of a member reply with the given Content-Format (none: text/plain).
pub fn extract(content_format: Option<ContentFormat>, payload: &[u8]) -> MemberValue {
    if payload.is_empty() {
        return MemberValue::Empty;
    }
    match content_format.unwrap_or(ContentFormat::TEXT_PLAIN) {
        ContentFormat::TEXT_PLAIN => from_text(payload),
        ContentFormat::JSON => match Node::from_json(payload) {
            Ok(node) => from_node(node),
            Err(_) => as_text(payload),
        },
        ContentFormat::CBOR => match Node::from_cbor(payload) {
            Ok(node) => from_node(node),
            Err(_) => as_text(payload),
        },
        ContentFormat::SENML_JSON => senml::from_json(payload)
            .map(|r| from_pack(&senml::resolve(&r)))
            .unwrap_or_else(|_| as_text(payload)),
        ContentFormat::SENML_CBOR => senml::from_cbor(payload)
            .map(|r| from_pack(&senml::resolve(&r)))
            .unwrap_or_else(|_| as_text(payload)),
        other => match std::str::from_utf8(payload) {
            Ok(t) if other.is_text() => MemberValue::Text(t.to_string()),
            _ => MemberValue::Text(format!("{} bytes of {other}", payload.len())),
        },
    }
}

/// A plain-text number (surrounding white space allowed), else the text.
fn from_text(payload: &[u8]) -> MemberValue {
    let Ok(text) = std::str::from_utf8(payload) else {
        return as_text(payload);
    };
    match parse_number(text.trim()) {
        Some(x) => MemberValue::Number(x),
        None if text.trim().is_empty() => MemberValue::Empty,
        None => MemberValue::Text(text.to_string()),
    }
}

/// A finite decimal number: digits with an optional sign, fraction and exponent (no
/// `inf`, `NaN` or hexadecimal).
fn parse_number(text: &str) -> Option<f64> {
    let ok = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'))
        && text.bytes().any(|b| b.is_ascii_digit());
    ok.then(|| text.parse::<f64>().ok())
        .flatten()
        .filter(|x| x.is_finite())
}

fn as_text(payload: &[u8]) -> MemberValue {
    MemberValue::Text(String::from_utf8_lossy(payload).into_owned())
}

fn from_node(node: Node) -> MemberValue {
    if let Some(x) = node.as_number() {
        return MemberValue::Number(x);
    }
    match node {
        Node::Text(t) => MemberValue::Text(t),
        Node::Null => MemberValue::Empty,
        other => MemberValue::Text(format!("{} ({other:?})", other.kind())),
    }
}

fn scalar(value: &ResolvedValue) -> Option<Scalar> {
    match value {
        ResolvedValue::Number(x) => Some(Scalar::Number(*x)),
        ResolvedValue::Text(t) => Some(Scalar::Text(t.clone())),
        ResolvedValue::Bool(b) => Some(Scalar::Bool(*b)),
        ResolvedValue::None => None,
    }
}

/// A SenML pack: one record is one value; an EM's combined reply (its first record names
/// the entity and a record `<entity>/answered` follows) gives its aggregate, or the list of
/// its members' values; any other pack gives all its records.
fn from_pack(records: &[Resolved]) -> MemberValue {
    let entity = records
        .iter()
        .take(2)
        .find_map(|r| r.name.strip_suffix("/answered"));
    if let Some(entity) = entity {
        if let Some(ResolvedValue::Number(x)) = records
            .first()
            .filter(|r| r.name == entity)
            .map(|r| &r.value)
        {
            return MemberValue::Number(*x);
        }
        let prefix = format!("{entity}/");
        let values = records
            .iter()
            .filter(|r| r.name != entity && !r.name.starts_with(&prefix))
            .filter_map(|r| {
                scalar(&r.value).map(|value| NamedValue {
                    name: r.name.clone(),
                    value,
                })
            })
            .collect();
        return MemberValue::Records(values);
    }
    let values: Vec<NamedValue> = records
        .iter()
        .filter_map(|r| {
            scalar(&r.value).map(|value| NamedValue {
                name: r.name.clone(),
                value,
            })
        })
        .collect();
    match values.as_slice() {
        [] => MemberValue::Empty,
        [one] => match &one.value {
            Scalar::Number(x) => MemberValue::Number(*x),
            Scalar::Text(t) => MemberValue::Text(t.clone()),
            Scalar::Bool(_) => MemberValue::Records(values),
        },
        _ => MemberValue::Records(values),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_numbers() {
        let t = |s: &str| extract(None, s.as_bytes());
        assert_eq!(t("21.5"), MemberValue::Number(21.5));
        assert_eq!(t(" -3\n"), MemberValue::Number(-3.0));
        assert_eq!(t("1e2"), MemberValue::Number(100.0));
        assert_eq!(t("21.5 C"), MemberValue::Text("21.5 C".into()));
        assert_eq!(t("NaN"), MemberValue::Text("NaN".into()));
        assert_eq!(t("inf"), MemberValue::Text("inf".into()));
        assert_eq!(t("on"), MemberValue::Text("on".into()));
        assert_eq!(t(""), MemberValue::Empty);
        assert_eq!(
            extract(Some(ContentFormat::TEXT_PLAIN), b"7"),
            MemberValue::Number(7.0)
        );
    }

    #[test]
    fn json_and_cbor_numbers() {
        assert_eq!(
            extract(Some(ContentFormat::JSON), b"22.25"),
            MemberValue::Number(22.25)
        );
        assert_eq!(
            extract(Some(ContentFormat::JSON), br#""22""#),
            MemberValue::Text("22".into()),
            "a JSON string is text, even when it looks like a number"
        );
        assert!(matches!(
            extract(Some(ContentFormat::JSON), br#"{"t":1}"#),
            MemberValue::Text(_)
        ));
        // CBOR: 0x18 0x2a = 42, 0xf9 0x3e 0x00 = 1.5 (half float)
        assert_eq!(
            extract(Some(ContentFormat::CBOR), &[0x18, 0x2a]),
            MemberValue::Number(42.0)
        );
        assert_eq!(
            extract(Some(ContentFormat::CBOR), &[0xf9, 0x3e, 0x00]),
            MemberValue::Number(1.5)
        );
    }

    #[test]
    fn senml_records() {
        let one = br#"[{"bn":"urn:dev:1/","n":"temp","u":"Cel","v":20.5}]"#;
        assert_eq!(
            extract(Some(ContentFormat::SENML_JSON), one),
            MemberValue::Number(20.5)
        );
        let two = br#"[{"bn":"urn:dev:1/","n":"temp","v":20.5},{"n":"hum","v":40}]"#;
        let MemberValue::Records(r) = extract(Some(ContentFormat::SENML_JSON), two) else {
            panic!()
        };
        assert_eq!(r[1].name, "urn:dev:1/hum");
        let cbor = senml::to_cbor(&[senml::Record {
            value: Some(3.0),
            ..Default::default()
        }]);
        assert_eq!(
            extract(Some(ContentFormat::SENML_CBOR), &cbor),
            MemberValue::Number(3.0)
        );
    }

    #[test]
    fn nested_entity_packs() {
        let avg = br#"[{"bn":"coap://[::1]/e/r1","bt":-1,"v":4.5},{"n":"/answered","v":2},
            {"bn":"","n":"coap://[::2]/s/t","v":4},{"n":"coap://[::3]/s/t","v":5}]"#;
        assert_eq!(
            extract(Some(ContentFormat::SENML_JSON), avg),
            MemberValue::Number(4.5)
        );
        let lst = br#"[{"bn":"coap://[::1]/e/f1","bt":-1,"n":"/answered","v":2},
            {"n":"/missing","vs":""},
            {"bn":"","n":"coap://[::1]/e/r1","v":4.5},{"n":"coap://[::1]/e/r2","v":6}]"#;
        let MemberValue::Records(r) = extract(Some(ContentFormat::SENML_JSON), lst) else {
            panic!()
        };
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].name, "coap://[::1]/e/r1");
        assert_eq!(r[1].value, Scalar::Number(6.0));
    }
}
