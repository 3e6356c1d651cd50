//! A JSON or CBOR payload decoded into one tree that keeps every map entry in order, so
//! strict parsers can reject duplicate keys (which `serde_json::Value` would merge).

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// One node of a decoded JSON or CBOR document.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// JSON `null` or CBOR null/undefined.
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Integer(i128),
    /// A floating-point number.
    Float(f64),
    /// A text string.
    Text(String),
    /// A CBOR byte string.
    Bytes(Vec<u8>),
    /// An array.
    Array(Vec<Node>),
    /// A map with its entries in order, duplicates kept.
    Map(Vec<(Node, Node)>),
}

/// Why a payload is not a well-formed document.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocumentError {
    /// Malformed JSON.
    #[error("malformed JSON: {0}")]
    Json(String),
    /// Malformed CBOR.
    #[error("malformed CBOR: {0}")]
    Cbor(String),
}

impl Node {
    /// Decodes a JSON text (the whole payload).
    pub fn from_json(bytes: &[u8]) -> Result<Node, DocumentError> {
        serde_json::from_slice(bytes).map_err(|e| DocumentError::Json(e.to_string()))
    }

    /// Decodes one CBOR data item that must fill the whole payload.
    pub fn from_cbor(bytes: &[u8]) -> Result<Node, DocumentError> {
        let mut rest = bytes;
        let node: Node =
            ciborium::de::from_reader(&mut rest).map_err(|e| DocumentError::Cbor(e.to_string()))?;
        if !rest.is_empty() {
            return Err(DocumentError::Cbor(format!(
                "{} bytes after the data item",
                rest.len()
            )));
        }
        Ok(node)
    }

    /// A short name of this node's type, for diagnostics.
    pub fn kind(&self) -> &'static str {
        match self {
            Node::Null => "null",
            Node::Bool(_) => "a boolean",
            Node::Integer(_) => "an integer",
            Node::Float(_) => "a number",
            Node::Text(_) => "a string",
            Node::Bytes(_) => "a byte string",
            Node::Array(_) => "an array",
            Node::Map(_) => "an object",
        }
    }

    /// The text, if this is a text string.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Node::Text(s) => Some(s),
            _ => None,
        }
    }

    /// The value as a finite number, if this is an integer or a finite float.
    pub fn as_number(&self) -> Option<f64> {
        match self {
            Node::Integer(i) => Some(*i as f64),
            Node::Float(f) if f.is_finite() => Some(*f),
            _ => None,
        }
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON or CBOR value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Integer(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(Node::Integer(v.into()))
    }
    fn visit_i128<E>(self, v: i128) -> Result<Node, E> {
        Ok(Node::Integer(v))
    }
    fn visit_u128<E: serde::de::Error>(self, v: u128) -> Result<Node, E> {
        i128::try_from(v)
            .map(Node::Integer)
            .map_err(|_| E::custom("integer out of range"))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
        Ok(Node::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::Text(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Node, E> {
        Ok(Node::Text(v))
    }
    fn visit_bytes<E>(self, v: &[u8]) -> Result<Node, E> {
        Ok(Node::Bytes(v.to_vec()))
    }
    fn visit_byte_buf<E>(self, v: Vec<u8>) -> Result<Node, E> {
        Ok(Node::Bytes(v))
    }
    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        Node::deserialize(d)
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        Node::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        // Bounded by the payload size: each element takes at least one byte.
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Node>()? {
            items.push(item);
        }
        Ok(Node::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some((k, v)) = map.next_entry::<Node, Node>()? {
            entries.push((k, v));
        }
        Ok(Node::Map(entries))
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Node, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_keeps_duplicate_keys() {
        let n = Node::from_json(br#"{"a":1,"a":2}"#).unwrap();
        let Node::Map(entries) = n else { panic!() };
        assert_eq!(entries.len(), 2);
    }

    #[test]
    fn cbor_rejects_trailing_bytes() {
        // 0x01 0x02: two integers.
        assert!(Node::from_cbor(&[0x01, 0x02]).is_err());
        assert_eq!(Node::from_cbor(&[0x01]).unwrap(), Node::Integer(1));
        assert!(Node::from_cbor(&[0xff]).is_err());
    }
}
