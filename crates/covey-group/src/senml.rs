//! SenML packs (RFC 8428) in JSON (110) and CBOR (112): the records the EM writes, and
//! reading packs back with base-field resolution.

use crate::document::Node;
use ciborium::value::{Integer, Value as Cbor};
use serde_json::{Map, Value as Json};

/// One SenML record; `None` fields are left out.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Record {
    /// Base name (`bn`).
    pub base_name: Option<String>,
    /// Base time (`bt`), seconds.
    pub base_time: Option<f64>,
    /// Name (`n`).
    pub name: Option<String>,
    /// Unit (`u`).
    pub unit: Option<String>,
    /// Numeric value (`v`).
    pub value: Option<f64>,
    /// String value (`vs`).
    pub string_value: Option<String>,
    /// Boolean value (`vb`).
    pub bool_value: Option<bool>,
    /// Time (`t`), seconds, relative to the base time.
    pub time: Option<f64>,
}

/// A record after base-field resolution: its full name, time and value.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    /// `bn` + `n`.
    pub name: String,
    /// `bt` + `t`.
    pub time: f64,
    /// The value.
    pub value: ResolvedValue,
}

/// The value of a resolved record.
#[derive(Debug, Clone, PartialEq)]
pub enum ResolvedValue {
    /// `v`.
    Number(f64),
    /// `vs`.
    Text(String),
    /// `vb`.
    Bool(bool),
    /// No value field.
    None,
}

/// Why a payload is not a SenML pack.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SenmlError {
    /// Not well-formed JSON or CBOR.
    #[error("{0}")]
    Malformed(String),
    /// Well-formed but not an array of records.
    #[error("not a SenML pack: {0}")]
    Shape(String),
}

// RFC 8428 Table 4: CBOR labels.
const BN: i64 = -2;
const BT: i64 = -3;
const N: i64 = 0;
const U: i64 = 1;
const V: i64 = 2;
const VS: i64 = 3;
const VB: i64 = 4;
const T: i64 = 6;

/// Encodes a pack as SenML JSON.
pub fn to_json(records: &[Record]) -> Vec<u8> {
    let pack: Vec<Json> = records
        .iter()
        .map(|r| {
            let mut m = Map::new();
            if let Some(bn) = &r.base_name {
                m.insert("bn".into(), Json::from(bn.as_str()));
            }
            if let Some(bt) = r.base_time {
                m.insert("bt".into(), json_number(bt));
            }
            if let Some(n) = &r.name {
                m.insert("n".into(), Json::from(n.as_str()));
            }
            if let Some(u) = &r.unit {
                m.insert("u".into(), Json::from(u.as_str()));
            }
            if let Some(v) = r.value {
                m.insert("v".into(), json_number(v));
            }
            if let Some(vs) = &r.string_value {
                m.insert("vs".into(), Json::from(vs.as_str()));
            }
            if let Some(vb) = r.bool_value {
                m.insert("vb".into(), Json::from(vb));
            }
            if let Some(t) = r.time {
                m.insert("t".into(), json_number(t));
            }
            Json::Object(m)
        })
        .collect();
    serde_json::to_vec(&pack).unwrap_or_default()
}

/// A JSON number, integral values without a fraction.
pub(crate) fn json_number(x: f64) -> Json {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        Json::from(x as i64)
    } else {
        serde_json::Number::from_f64(x).map_or(Json::Null, Json::Number)
    }
}

fn cbor_number(x: f64) -> Cbor {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        Cbor::Integer(Integer::from(x as i64))
    } else {
        Cbor::Float(x)
    }
}

/// Encodes a pack as SenML CBOR.
pub fn to_cbor(records: &[Record]) -> Vec<u8> {
    let label = |l: i64| Cbor::Integer(Integer::from(l));
    let pack: Vec<Cbor> = records
        .iter()
        .map(|r| {
            let mut m: Vec<(Cbor, Cbor)> = Vec::new();
            if let Some(bn) = &r.base_name {
                m.push((label(BN), Cbor::Text(bn.clone())));
            }
            if let Some(bt) = r.base_time {
                m.push((label(BT), cbor_number(bt)));
            }
            if let Some(n) = &r.name {
                m.push((label(N), Cbor::Text(n.clone())));
            }
            if let Some(u) = &r.unit {
                m.push((label(U), Cbor::Text(u.clone())));
            }
            if let Some(v) = r.value {
                m.push((label(V), cbor_number(v)));
            }
            if let Some(vs) = &r.string_value {
                m.push((label(VS), Cbor::Text(vs.clone())));
            }
            if let Some(vb) = r.bool_value {
                m.push((label(VB), Cbor::Bool(vb)));
            }
            if let Some(t) = r.time {
                m.push((label(T), cbor_number(t)));
            }
            Cbor::Map(m)
        })
        .collect();
    let mut out = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = ciborium::ser::into_writer(&Cbor::Array(pack), &mut out);
    out
}

/// Decodes a SenML JSON pack.
pub fn from_json(bytes: &[u8]) -> Result<Vec<Record>, SenmlError> {
    let node = Node::from_json(bytes).map_err(|e| SenmlError::Malformed(e.to_string()))?;
    from_node(node)
}

/// Decodes a SenML CBOR pack.
pub fn from_cbor(bytes: &[u8]) -> Result<Vec<Record>, SenmlError> {
    let node = Node::from_cbor(bytes).map_err(|e| SenmlError::Malformed(e.to_string()))?;
    from_node(node)
}

fn from_node(node: Node) -> Result<Vec<Record>, SenmlError> {
    let Node::Array(items) = node else {
        return Err(SenmlError::Shape(format!(
            "{} instead of an array",
            node.kind()
        )));
    };
    items.into_iter().map(record_from_node).collect()
}

/// Which field a map key names: a JSON text label or a CBOR integer label.
fn field(key: &Node) -> Option<&'static str> {
    match key {
        Node::Text(t) => match t.as_str() {
            "bn" => Some("bn"),
            "bt" => Some("bt"),
            "n" => Some("n"),
            "u" => Some("u"),
            "v" => Some("v"),
            "vs" => Some("vs"),
            "vb" => Some("vb"),
            "t" => Some("t"),
            _ => None,
        },
        Node::Integer(i) => match i64::try_from(*i).ok()? {
            BN => Some("bn"),
            BT => Some("bt"),
            N => Some("n"),
            U => Some("u"),
            V => Some("v"),
            VS => Some("vs"),
            VB => Some("vb"),
            T => Some("t"),
            _ => None,
        },
        _ => None,
    }
}

fn record_from_node(node: Node) -> Result<Record, SenmlError> {
    let Node::Map(entries) = node else {
        return Err(SenmlError::Shape(format!(
            "a record is {} instead of an object",
            node.kind()
        )));
    };
    let mut r = Record::default();
    for (key, value) in entries {
        let Some(name) = field(&key) else {
            // RFC 8428 §4.4: an unknown label ending in "_" must be understood.
            if key.as_text().is_some_and(|t| t.ends_with('_')) {
                return Err(SenmlError::Shape(format!(
                    "must-understand field {key:?} is not supported"
                )));
            }
            continue;
        };
        let text = || {
            value
                .as_text()
                .map(str::to_string)
                .ok_or_else(|| SenmlError::Shape(format!("\"{name}\" must be a string")))
        };
        let number = || {
            value
                .as_number()
                .ok_or_else(|| SenmlError::Shape(format!("\"{name}\" must be a number")))
        };
        match name {
            "bn" => r.base_name = Some(text()?),
            "bt" => r.base_time = Some(number()?),
            "n" => r.name = Some(text()?),
            "u" => r.unit = Some(text()?),
            "v" => r.value = Some(number()?),
            "vs" => r.string_value = Some(text()?),
            "vb" => match value {
                Node::Bool(b) => r.bool_value = Some(b),
                _ => return Err(SenmlError::Shape("\"vb\" must be a boolean".into())),
            },
            _ => r.time = Some(number()?),
        }
    }
    Ok(r)
}

/// Resolves base fields (RFC 8428 §4.6): every record gets its full name and time.
pub fn resolve(records: &[Record]) -> Vec<Resolved> {
    let mut base_name = String::new();
    let mut base_time = 0.0;
    records
        .iter()
        .map(|r| {
            if let Some(bn) = &r.base_name {
                base_name.clone_from(bn);
            }
            if let Some(bt) = r.base_time {
                base_time = bt;
            }
            let value = if let Some(v) = r.value {
                ResolvedValue::Number(v)
            } else if let Some(s) = &r.string_value {
                ResolvedValue::Text(s.clone())
            } else if let Some(b) = r.bool_value {
                ResolvedValue::Bool(b)
            } else {
                ResolvedValue::None
            };
            Resolved {
                name: format!("{base_name}{}", r.name.as_deref().unwrap_or("")),
                time: base_time + r.time.unwrap_or(0.0),
                value,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pack() -> Vec<Record> {
        vec![
            Record {
                base_name: Some("coap://[::1]/e/room1".into()),
                base_time: Some(-2.5),
                value: Some(21.25),
                ..Record::default()
            },
            Record {
                name: Some("/answered".into()),
                value: Some(2.0),
                ..Record::default()
            },
            Record {
                base_name: Some(String::new()),
                name: Some("coap://[::2]/s/t".into()),
                time: Some(0.5),
                value: Some(21.0),
                ..Record::default()
            },
            Record {
                name: Some("coap://[::3]/s/t".into()),
                string_value: Some("warm".into()),
                ..Record::default()
            },
        ]
    }

    #[test]
    fn json_and_cbor_round_trip() {
        let p = pack();
        assert_eq!(from_json(&to_json(&p)).unwrap(), p);
        assert_eq!(from_cbor(&to_cbor(&p)).unwrap(), p);
        let text = String::from_utf8(to_json(&p)).unwrap();
        assert!(
            text.starts_with(r#"[{"bn":"coap://[::1]/e/room1","bt":-2.5,"v":21.25}"#),
            "{text}"
        );
    }

    #[test]
    fn resolution_applies_base_fields() {
        let r = resolve(&pack());
        assert_eq!(r[0].name, "coap://[::1]/e/room1");
        assert_eq!(r[1].name, "coap://[::1]/e/room1/answered");
        assert_eq!(r[2].name, "coap://[::2]/s/t");
        assert_eq!(r[2].time, -2.0);
        assert_eq!(r[3].value, ResolvedValue::Text("warm".into()));
    }

    #[test]
    fn cbor_uses_integer_labels() {
        let bytes = to_cbor(&[Record {
            name: Some("t".into()),
            value: Some(1.0),
            ..Record::default()
        }]);
        // [ {0: "t", 2: 1} ]
        assert_eq!(bytes, [0x81, 0xa2, 0x00, 0x61, b't', 0x02, 0x01]);
    }

    #[test]
    fn shape_errors() {
        assert!(from_json(b"{}").is_err());
        assert!(from_json(br#"[{"v":"x"}]"#).is_err());
        assert!(from_json(br#"[{"v":1,"x_":2}]"#).is_err());
        assert!(from_json(br#"[{"v":1,"x":2}]"#).is_ok());
    }
}
