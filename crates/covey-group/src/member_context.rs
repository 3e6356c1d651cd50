//! A member's OSCORE context as an entity document carries it (`"oscore"`: member URI to
//! context): the EM's side of it, in the keys of aiocoap's credential files, hex only.
//! The EM stores it with the entity and never shows or logs the secret.

use crate::document::Node;
use crate::error_report::Reason;
use crate::profile::ProfileError;
use covey_proto::covey_oscore::{ContextInput, SecurityContext};
use serde::{Deserialize, Serialize};

/// The keys a member context has, for diagnostics.
const CONTEXT_KEYS: &str = "secret_hex, salt_hex, sender-id_hex, recipient-id_hex, id-context_hex";

/// The EM's side of an OSCORE context shared with one member (RFC 8613 §3.2).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberContext {
    /// The Master Secret, hex.
    #[serde(rename = "secret_hex")]
    pub secret: String,
    /// The Master Salt, hex (empty by default).
    #[serde(rename = "salt_hex", default, skip_serializing_if = "String::is_empty")]
    pub salt: String,
    /// The EM's Sender ID (the member's kid for the EM's requests), hex.
    #[serde(rename = "sender-id_hex")]
    pub sender_id: String,
    /// The member's Sender ID, hex.
    #[serde(rename = "recipient-id_hex")]
    pub recipient_id: String,
    /// The ID Context, hex, if the context has one.
    #[serde(
        rename = "id-context_hex",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub id_context: Option<String>,
}

impl std::fmt::Debug for MemberContext {
    /// Names the context by its Sender ID; the secret is never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MemberContext(kid {})", self.kid())
    }
}

impl MemberContext {
    /// The context of `input`'s values.
    pub fn new(input: &ContextInput<'_>) -> MemberContext {
        let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect();
        MemberContext {
            secret: hex(input.master_secret),
            salt: hex(input.master_salt),
            sender_id: hex(input.sender_id),
            recipient_id: hex(input.recipient_id),
            id_context: input.id_context.map(hex),
        }
    }

    /// The kid the member sees in the EM's requests (the Sender ID, hex), for logs.
    pub fn kid(&self) -> &str {
        &self.sender_id
    }

    /// The security context this derives.
    pub fn derive(&self) -> Result<SecurityContext, String> {
        // The value may be the secret: the message does not quote it.
        let bytes = |hex: &str| decode_hex(hex).ok_or_else(|| "a value is not hex".to_string());
        let (secret, salt) = (bytes(&self.secret)?, bytes(&self.salt)?);
        let (sender_id, recipient_id) = (bytes(&self.sender_id)?, bytes(&self.recipient_id)?);
        let id_context = self.id_context.as_deref().map(bytes).transpose()?;
        SecurityContext::derive(&ContextInput {
            master_secret: &secret,
            master_salt: &salt,
            sender_id: &sender_id,
            recipient_id: &recipient_id,
            id_context: id_context.as_deref(),
        })
        .map_err(|e| e.to_string())
    }

    /// Parses one context of the `oscore` field strictly (every key once, hex values).
    pub(crate) fn parse(member: &str, node: &Node) -> Result<MemberContext, ProfileError> {
        let invalid = |problem: String| {
            ProfileError::invalid("oscore", Reason::WrongType, format!("{member}: {problem}"))
        };
        let Node::Map(entries) = node else {
            return Err(invalid(format!("a context is an object of {CONTEXT_KEYS}")));
        };
        let mut fields: [Option<String>; 5] = Default::default();
        for (key, value) in entries {
            let Node::Text(key) = key else {
                return Err(invalid("a context's keys are strings".into()));
            };
            let Some(slot) = CONTEXT_KEYS.split(", ").position(|k| k == key.as_str()) else {
                return Err(ProfileError::invalid(
                    "oscore",
                    Reason::UnknownField,
                    format!("{member}: unknown key \"{key}\" (known: {CONTEXT_KEYS})"),
                ));
            };
            if fields[slot].is_some() {
                return Err(ProfileError::invalid(
                    "oscore",
                    Reason::RepeatedField,
                    format!("{member}: \"{key}\" is given twice"),
                ));
            }
            let text = match value {
                Node::Text(t) if decode_hex(t).is_some() => t.to_ascii_lowercase(),
                _ => return Err(invalid(format!("\"{key}\" is not a hex string"))),
            };
            fields[slot] = Some(text);
        }
        let [secret, salt, sender_id, recipient_id, id_context] = fields;
        let required = |value: Option<String>, key: &str| {
            value.ok_or_else(|| {
                ProfileError::invalid(
                    "oscore",
                    Reason::Missing,
                    format!("{member}: the context has no \"{key}\""),
                )
            })
        };
        let context = MemberContext {
            secret: required(secret.filter(|s| !s.is_empty()), "secret_hex")?,
            salt: salt.unwrap_or_default(),
            sender_id: required(sender_id, "sender-id_hex")?,
            recipient_id: required(recipient_id, "recipient-id_hex")?,
            id_context,
        };
        if let Err(e) = context.derive() {
            return Err(ProfileError::invalid(
                "oscore",
                Reason::OutOfRange,
                format!("{member}: {e}"),
            ));
        }
        Ok(context)
    }
}

/// Bytes of an even-length hex string, `None` if it is not one.
pub fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(json: &str) -> Node {
        Node::from_json(json.as_bytes()).unwrap()
    }

    #[test]
    fn a_context_parses_and_derives_and_its_debug_form_hides_the_secret() {
        let c = MemberContext::parse(
            "coap://[2001:db8::1]/t",
            &node(r#"{"secret_hex": "0102AB", "sender-id_hex": "", "recipient-id_hex": "01"}"#),
        )
        .unwrap();
        assert_eq!(c.secret, "0102ab");
        assert!(c.derive().is_ok());
        assert_eq!(format!("{c:?}"), "MemberContext(kid )");
    }

    #[test]
    fn a_bad_context_is_refused_naming_the_member_and_the_key() {
        for (json, says) in [
            (
                r#"{"sender-id_hex": "", "recipient-id_hex": "01"}"#,
                "no \"secret_hex\"",
            ),
            (
                r#"{"secret_hex": "0g", "sender-id_hex": "", "recipient-id_hex": "01"}"#,
                "not a hex",
            ),
            (
                r#"{"secret_hex": "01", "sender-id_hex": "", "recipient-id_hex": "01", "x": "1"}"#,
                "unknown key \"x\"",
            ),
            (
                r#"{"secret_hex": "01", "sender-id_hex": "0102030405060708", "recipient-id_hex": ""}"#,
                "coap://m",
            ),
            (r#"["01"]"#, "an object"),
        ] {
            let e = MemberContext::parse("coap://m", &node(json)).unwrap_err();
            assert!(e.to_string().contains(says), "{json}: {e}");
        }
    }
}
