//! The EM's error answers as data. Every refusal keeps its CoAP code; a client that asks for
//! JSON (Accept `application/json`, or no Accept and a request in `application/json`) gets
//! the diagnostic as an [`ErrorReport`] in `application/json`, which names the profile field
//! at fault and a [`Reason`] a program can match:
//!
//! ```json
//! {"error": "entity room not created: field \"enr\": 3 replies cannot come from 2 members",
//!  "field": "enr", "reason": "out_of_range"}
//! ```
//!
//! Any other client gets the `error` text alone as the diagnostic payload (RFC 7252 §5.5.2).

use covey_core::{Code, ContentFormat};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Why a request was refused, in a word a program can match (`snake_case` on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Reason {
    /// Not well-formed JSON or CBOR.
    Malformed,
    /// The profile is not an object (a map).
    NotAnObject,
    /// A map key that is not a string.
    KeyNotText,
    /// A field this EM does not know.
    UnknownField,
    /// A field given twice in one document.
    RepeatedField,
    /// A required field is absent.
    Missing,
    /// A field of the wrong type (a string where a number belongs, ...).
    WrongType,
    /// A number or length outside what the field allows.
    OutOfRange,
    /// A name that is none of the field's values (`emt` `maybe`, operation `mean`, ...).
    UnknownValue,
    /// An empty list where one item at least is needed.
    Empty,
    /// More members than this EM allows.
    TooMany,
    /// The same member or operation listed twice.
    Duplicate,
    /// A member that is not a well-formed `coap://` or `coaps://` URI.
    NotAUri,
    /// A member named by a host name (the EM does not resolve names).
    HostName,
    /// A group address given as a member.
    MulticastAddress,
    /// A member at an address or port that cannot be reached (`::`, port 0).
    Unreachable,
    /// An entity name that starts with `.` (kept for names such as `.well-known`).
    ReservedName,
    /// An entity name with a character other than letters, digits, `-`, `_` and `.`.
    BadCharacter,
    /// A field the EM assigns (`mcastURI`).
    AssignedByEm,
    /// A field that cannot change after creation (`name`, `ect`).
    Immutable,
    /// Members that do not fit the entity's communication type (multicast: one port, one
    /// path, NON requests).
    Conflict,
    /// A member in a scheme the EM cannot use for it (`coaps://` without DTLS credentials,
    /// or in a multicast entity; `coap://` on an EM that listens in coaps only).
    Scheme,
    /// An entity that contains itself, directly or through nested entities.
    Cycle,
    /// Entities nested deeper than this EM allows.
    TooDeep,
    /// A member naming an entity of this EM that does not exist.
    NoSuchEntity,
    /// A member that answered the validation request with an error code.
    MemberRefused,
    /// A member that did not answer the validation request.
    NoAnswer,
    /// A member whose value is not a number while an operation needs numbers.
    NotANumber,
    /// An entity of that name exists already.
    Exists,
    /// 4.00 with no more specific reason.
    BadRequest,
    /// 4.01.
    Unauthorized,
    /// 4.02.
    BadOption,
    /// 4.03.
    Forbidden,
    /// 4.04.
    NotFound,
    /// 4.05.
    MethodNotAllowed,
    /// 4.06.
    NotAcceptable,
    /// 4.12.
    PreconditionFailed,
    /// 4.13.
    TooLarge,
    /// 4.15.
    UnsupportedContentFormat,
    /// 4.29.
    TooManyRequests,
    /// 5.00.
    InternalError,
    /// 5.02.
    BadGateway,
    /// 5.03.
    Unavailable,
    /// 5.04.
    GatewayTimeout,
    /// Anything else, and any reason a newer EM gives that this one does not know.
    #[serde(other)]
    Other,
}

impl Reason {
    /// The reason of a refusal with `code` that names nothing more specific.
    pub fn of_code(code: Code) -> Reason {
        match code {
            Code::BAD_REQUEST => Reason::BadRequest,
            Code::UNAUTHORIZED => Reason::Unauthorized,
            Code::BAD_OPTION => Reason::BadOption,
            Code::FORBIDDEN => Reason::Forbidden,
            Code::NOT_FOUND => Reason::NotFound,
            Code::METHOD_NOT_ALLOWED => Reason::MethodNotAllowed,
            Code::NOT_ACCEPTABLE => Reason::NotAcceptable,
            Code::PRECONDITION_FAILED => Reason::PreconditionFailed,
            Code::REQUEST_ENTITY_TOO_LARGE => Reason::TooLarge,
            Code::UNSUPPORTED_CONTENT_FORMAT => Reason::UnsupportedContentFormat,
            Code::TOO_MANY_REQUESTS => Reason::TooManyRequests,
            Code::INTERNAL_SERVER_ERROR => Reason::InternalError,
            Code::BAD_GATEWAY => Reason::BadGateway,
            Code::SERVICE_UNAVAILABLE => Reason::Unavailable,
            Code::GATEWAY_TIMEOUT => Reason::GatewayTimeout,
            _ => Reason::Other,
        }
    }

    /// The wire name, e.g. `out_of_range`.
    pub fn as_str(self) -> &'static str {
        REASON_NAMES
            .iter()
            .find(|(r, _)| *r == self)
            .map_or("other", |(_, n)| n)
    }
}

/// Every reason with its wire name (checked against serde's spelling by a test).
const REASON_NAMES: [(Reason, &str); 45] = [
    (Reason::Malformed, "malformed"),
    (Reason::NotAnObject, "not_an_object"),
    (Reason::KeyNotText, "key_not_text"),
    (Reason::UnknownField, "unknown_field"),
    (Reason::RepeatedField, "repeated_field"),
    (Reason::Missing, "missing"),
    (Reason::WrongType, "wrong_type"),
    (Reason::OutOfRange, "out_of_range"),
    (Reason::UnknownValue, "unknown_value"),
    (Reason::Empty, "empty"),
    (Reason::TooMany, "too_many"),
    (Reason::Duplicate, "duplicate"),
    (Reason::NotAUri, "not_a_uri"),
    (Reason::HostName, "host_name"),
    (Reason::MulticastAddress, "multicast_address"),
    (Reason::Unreachable, "unreachable"),
    (Reason::ReservedName, "reserved_name"),
    (Reason::BadCharacter, "bad_character"),
    (Reason::AssignedByEm, "assigned_by_em"),
    (Reason::Immutable, "immutable"),
    (Reason::Conflict, "conflict"),
    (Reason::Scheme, "scheme"),
    (Reason::Cycle, "cycle"),
    (Reason::TooDeep, "too_deep"),
    (Reason::NoSuchEntity, "no_such_entity"),
    (Reason::MemberRefused, "member_refused"),
    (Reason::NoAnswer, "no_answer"),
    (Reason::NotANumber, "not_a_number"),
    (Reason::Exists, "exists"),
    (Reason::BadRequest, "bad_request"),
    (Reason::Unauthorized, "unauthorized"),
    (Reason::BadOption, "bad_option"),
    (Reason::Forbidden, "forbidden"),
    (Reason::NotFound, "not_found"),
    (Reason::MethodNotAllowed, "method_not_allowed"),
    (Reason::NotAcceptable, "not_acceptable"),
    (Reason::PreconditionFailed, "precondition_failed"),
    (Reason::TooLarge, "too_large"),
    (
        Reason::UnsupportedContentFormat,
        "unsupported_content_format",
    ),
    (Reason::TooManyRequests, "too_many_requests"),
    (Reason::InternalError, "internal_error"),
    (Reason::BadGateway, "bad_gateway"),
    (Reason::Unavailable, "unavailable"),
    (Reason::GatewayTimeout, "gateway_timeout"),
    (Reason::Other, "other"),
];

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a refusal is about: the profile field (if one) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The profile field at fault (`er`, `enr`, ...), if the refusal is about one.
    pub field: Option<String>,
    /// Why.
    pub reason: Reason,
}

impl Problem {
    /// A problem with `field`.
    pub fn field(field: impl Into<String>, reason: Reason) -> Problem {
        Problem {
            field: Some(field.into()),
            reason,
        }
    }

    /// A problem with no one field.
    pub fn general(reason: Reason) -> Problem {
        Problem {
            field: None,
            reason,
        }
    }
}

/// An EM refusal as `application/json`: the diagnostic text, the field and the reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorReport {
    /// The one-line diagnostic, as a plain client gets it.
    pub error: String,
    /// The profile field at fault, `null` when the refusal is not about one field.
    pub field: Option<String>,
    /// Why, in a word a program can match.
    pub reason: Reason,
}

impl ErrorReport {
    /// The report of `error` about `problem`.
    pub fn new(error: impl Into<String>, problem: &Problem) -> ErrorReport {
        ErrorReport {
            error: error.into(),
            field: problem.field.clone(),
            reason: problem.reason,
        }
    }

    /// The report in an error response, if it carries one (`application/json` with the
    /// fields above); `None` for a text diagnostic or anything else.
    pub fn from_response(
        content_format: Option<ContentFormat>,
        payload: &[u8],
    ) -> Option<ErrorReport> {
        (content_format == Some(ContentFormat::JSON))
            .then(|| serde_json::from_slice(payload).ok())
            .flatten()
    }

    /// The report as JSON in at most `limit` bytes: a long `error` is cut (marked `...`)
    /// so the document stays whole.
    pub fn to_json_within(&self, limit: usize) -> Vec<u8> {
        const MARK: &str = "...";
        let whole = serde_json::to_vec(self).unwrap_or_default();
        if whole.len() <= limit {
            return whole;
        }
        let cut = |end: usize| {
            let mut report = self.clone();
            report.error = match end {
                0 => String::new(),
                _ => format!("{}{MARK}", &self.error[..end]),
            };
            serde_json::to_vec(&report).unwrap_or_default()
        };
        // The longest prefix (at a character boundary) whose document fits: escapes make
        // the document longer than the text by an amount only serializing tells.
        let (mut fits, mut over) = (0, self.error.len());
        while over - fits > 1 {
            let mut mid = (fits + over) / 2;
            while !self.error.is_char_boundary(mid) {
                mid -= 1;
            }
            if mid <= fits {
                break;
            }
            if cut(mid).len() <= limit {
                fits = mid;
            } else {
                over = mid;
            }
        }
        cut(fits)
    }
}

impl fmt::Display for ErrorReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_read_in_snake_case_and_unknown_ones_are_other() {
        for (reason, name) in REASON_NAMES {
            assert_eq!(serde_json::to_value(reason).unwrap(), name);
            assert_eq!(reason.as_str(), name);
            let back: Reason = serde_json::from_value(name.into()).unwrap();
            assert_eq!(back, reason);
        }
        let newer: ErrorReport =
            serde_json::from_str(r#"{"error":"x","field":null,"reason":"from_the_future"}"#)
                .unwrap();
        assert_eq!(newer.reason, Reason::Other);
        assert_eq!(Reason::of_code(Code::NOT_FOUND), Reason::NotFound);
        assert_eq!(Reason::of_code(Code::CONTENT), Reason::Other);
    }

    #[test]
    fn a_report_is_one_json_object_with_a_null_field() {
        let r = ErrorReport::new("bad", &Problem::general(Reason::Malformed));
        assert_eq!(
            String::from_utf8(serde_json::to_vec(&r).unwrap()).unwrap(),
            r#"{"error":"bad","field":null,"reason":"malformed"}"#
        );
        let json = serde_json::to_vec(&r).unwrap();
        assert_eq!(
            ErrorReport::from_response(Some(ContentFormat::JSON), &json),
            Some(r.clone())
        );
        assert_eq!(ErrorReport::from_response(None, &json), None);
        assert_eq!(
            ErrorReport::from_response(Some(ContentFormat::JSON), b"{}"),
            None
        );
    }

    #[test]
    fn a_long_report_is_cut_in_its_text_and_stays_json() {
        let long = format!("member \"{}\" é", "x\"".repeat(300));
        let r = ErrorReport::new(long, &Problem::field("er", Reason::NotAUri));
        let body = r.to_json_within(200);
        assert!(body.len() <= 200, "{}", body.len());
        let back: ErrorReport = serde_json::from_slice(&body).unwrap();
        assert!(back.error.ends_with("..."), "{}", back.error);
        assert_eq!(back.field.as_deref(), Some("er"));
        assert_eq!(r.to_json_within(10_000), serde_json::to_vec(&r).unwrap());
    }
}
