//! Request methods and response codes (RFC 7252 §5.8–5.9, §12.1; RFC 7959; RFC 8132).

/// A CoAP code: class (3 bits) and detail (5 bits), written `c.dd`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Code(pub u8);

/// The broad kind of a code, from its class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeKind {
    /// 0.00: an Empty message.
    Empty,
    /// 0.01–0.31: a request method.
    Request,
    /// Classes 2, 4 and 5: a response.
    Response,
    /// Classes 1, 6 and 7: reserved.
    Reserved,
}

impl Code {
    /// 0.00 Empty.
    pub const EMPTY: Code = Code::new(0, 0);
    /// 0.01 GET.
    pub const GET: Code = Code::new(0, 1);
    /// 0.02 POST.
    pub const POST: Code = Code::new(0, 2);
    /// 0.03 PUT.
    pub const PUT: Code = Code::new(0, 3);
    /// 0.04 DELETE.
    pub const DELETE: Code = Code::new(0, 4);
    /// 0.05 FETCH (RFC 8132).
    pub const FETCH: Code = Code::new(0, 5);
    /// 0.06 PATCH (RFC 8132).
    pub const PATCH: Code = Code::new(0, 6);
    /// 0.07 iPATCH (RFC 8132).
    pub const IPATCH: Code = Code::new(0, 7);
    /// 2.01 Created.
    pub const CREATED: Code = Code::new(2, 1);
    /// 2.02 Deleted.
    pub const DELETED: Code = Code::new(2, 2);
    /// 2.03 Valid.
    pub const VALID: Code = Code::new(2, 3);
    /// 2.04 Changed.
    pub const CHANGED: Code = Code::new(2, 4);
    /// 2.05 Content.
    pub const CONTENT: Code = Code::new(2, 5);
    /// 2.31 Continue (RFC 7959).
    pub const CONTINUE: Code = Code::new(2, 31);
    /// 4.00 Bad Request.
    pub const BAD_REQUEST: Code = Code::new(4, 0);
    /// 4.01 Unauthorized.
    pub const UNAUTHORIZED: Code = Code::new(4, 1);
    /// 4.02 Bad Option.
    pub const BAD_OPTION: Code = Code::new(4, 2);
    /// 4.03 Forbidden.
    pub const FORBIDDEN: Code = Code::new(4, 3);
    /// 4.04 Not Found.
    pub const NOT_FOUND: Code = Code::new(4, 4);
    /// 4.05 Method Not Allowed.
    pub const METHOD_NOT_ALLOWED: Code = Code::new(4, 5);
    /// 4.06 Not Acceptable.
    pub const NOT_ACCEPTABLE: Code = Code::new(4, 6);
    /// 4.08 Request Entity Incomplete (RFC 7959).
    pub const REQUEST_ENTITY_INCOMPLETE: Code = Code::new(4, 8);
    /// 4.09 Conflict (RFC 8132).
    pub const CONFLICT: Code = Code::new(4, 9);
    /// 4.12 Precondition Failed.
    pub const PRECONDITION_FAILED: Code = Code::new(4, 12);
    /// 4.13 Request Entity Too Large.
    pub const REQUEST_ENTITY_TOO_LARGE: Code = Code::new(4, 13);
    /// 4.15 Unsupported Content-Format.
    pub const UNSUPPORTED_CONTENT_FORMAT: Code = Code::new(4, 15);
    /// 4.22 Unprocessable Entity (RFC 8132).
    pub const UNPROCESSABLE_ENTITY: Code = Code::new(4, 22);
    /// 4.29 Too Many Requests (RFC 8516).
    pub const TOO_MANY_REQUESTS: Code = Code::new(4, 29);
    /// 5.00 Internal Server Error.
    pub const INTERNAL_SERVER_ERROR: Code = Code::new(5, 0);
    /// 5.01 Not Implemented.
    pub const NOT_IMPLEMENTED: Code = Code::new(5, 1);
    /// 5.02 Bad Gateway.
    pub const BAD_GATEWAY: Code = Code::new(5, 2);
    /// 5.03 Service Unavailable.
    pub const SERVICE_UNAVAILABLE: Code = Code::new(5, 3);
    /// 5.04 Gateway Timeout.
    pub const GATEWAY_TIMEOUT: Code = Code::new(5, 4);
    /// 5.05 Proxying Not Supported.
    pub const PROXYING_NOT_SUPPORTED: Code = Code::new(5, 5);
    /// 5.08 Hop Limit Reached (RFC 8768).
    pub const HOP_LIMIT_REACHED: Code = Code::new(5, 8);

    /// The code `class.detail`; the class is truncated to 3 bits and the detail to 5.
    pub const fn new(class: u8, detail: u8) -> Code {
        Code(((class & 0x07) << 5) | (detail & 0x1F))
    }

    /// The class (0–7).
    pub const fn class(self) -> u8 {
        self.0 >> 5
    }

    /// The detail (0–31).
    pub const fn detail(self) -> u8 {
        self.0 & 0x1F
    }

    /// What kind of message this code makes.
    pub const fn kind(self) -> CodeKind {
        match self.class() {
            0 if self.0 == 0 => CodeKind::Empty,
            0 => CodeKind::Request,
            2 | 4 | 5 => CodeKind::Response,
            _ => CodeKind::Reserved,
        }
    }

    /// True for 0.00.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// True for a request method (0.01–0.31).
    pub const fn is_request(self) -> bool {
        matches!(self.kind(), CodeKind::Request)
    }

    /// True for a response code (classes 2, 4, 5).
    pub const fn is_response(self) -> bool {
        matches!(self.kind(), CodeKind::Response)
    }

    /// True for a 2.xx code.
    pub const fn is_success(self) -> bool {
        self.class() == 2
    }

    /// True for a 4.xx or 5.xx code.
    pub const fn is_error(self) -> bool {
        matches!(self.class(), 4 | 5)
    }

    /// The registered name ("GET", "Content", "Not Found"), if the code is registered.
    pub const fn name(self) -> Option<&'static str> {
        Some(match self {
            Code::EMPTY => "Empty",
            Code::GET => "GET",
            Code::POST => "POST",
            Code::PUT => "PUT",
            Code::DELETE => "DELETE",
            Code::FETCH => "FETCH",
            Code::PATCH => "PATCH",
            Code::IPATCH => "iPATCH",
            Code::CREATED => "Created",
            Code::DELETED => "Deleted",
            Code::VALID => "Valid",
            Code::CHANGED => "Changed",
            Code::CONTENT => "Content",
            Code::CONTINUE => "Continue",
            Code::BAD_REQUEST => "Bad Request",
            Code::UNAUTHORIZED => "Unauthorized",
            Code::BAD_OPTION => "Bad Option",
            Code::FORBIDDEN => "Forbidden",
            Code::NOT_FOUND => "Not Found",
            Code::METHOD_NOT_ALLOWED => "Method Not Allowed",
            Code::NOT_ACCEPTABLE => "Not Acceptable",
            Code::REQUEST_ENTITY_INCOMPLETE => "Request Entity Incomplete",
            Code::CONFLICT => "Conflict",
            Code::PRECONDITION_FAILED => "Precondition Failed",
            Code::REQUEST_ENTITY_TOO_LARGE => "Request Entity Too Large",
            Code::UNSUPPORTED_CONTENT_FORMAT => "Unsupported Content-Format",
            Code::UNPROCESSABLE_ENTITY => "Unprocessable Entity",
            Code::TOO_MANY_REQUESTS => "Too Many Requests",
            Code::INTERNAL_SERVER_ERROR => "Internal Server Error",
            Code::NOT_IMPLEMENTED => "Not Implemented",
            Code::BAD_GATEWAY => "Bad Gateway",
            Code::SERVICE_UNAVAILABLE => "Service Unavailable",
            Code::GATEWAY_TIMEOUT => "Gateway Timeout",
            Code::PROXYING_NOT_SUPPORTED => "Proxying Not Supported",
            Code::HOP_LIMIT_REACHED => "Hop Limit Reached",
            _ => return None,
        })
    }

    /// The request method named `name` (case-insensitive: "get", "POST", "ipatch").
    pub fn method_from_name(name: &str) -> Option<Code> {
        const METHODS: [Code; 7] = [
            Code::GET,
            Code::POST,
            Code::PUT,
            Code::DELETE,
            Code::FETCH,
            Code::PATCH,
            Code::IPATCH,
        ];
        METHODS
            .into_iter()
            .find(|m| m.name().is_some_and(|n| n.eq_ignore_ascii_case(name)))
    }
}

impl core::fmt::Display for Code {
    /// Dotted form, then the name when known: `2.05 Content`.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}.{:02}", self.class(), self.detail())?;
        if let Some(name) = self.name() {
            write!(f, " {name}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    #[test]
    fn byte_values_match_the_spec() {
        assert_eq!(Code::CONTENT.0, 0x45);
        assert_eq!(Code::CONTINUE.0, 0x5F);
        assert_eq!(Code::NOT_FOUND.0, 0x84);
        assert_eq!(Code::REQUEST_ENTITY_INCOMPLETE.0, 0x88);
        assert_eq!(Code::REQUEST_ENTITY_TOO_LARGE.0, 0x8D);
        assert_eq!(Code::SERVICE_UNAVAILABLE.0, 0xA3);
    }

    #[test]
    fn display_gives_dotted_form_and_name() {
        assert_eq!(Code::CONTENT.to_string(), "2.05 Content");
        assert_eq!(Code::GET.to_string(), "0.01 GET");
        assert_eq!(Code::new(4, 30).to_string(), "4.30");
    }

    #[test]
    fn kinds() {
        assert_eq!(Code::EMPTY.kind(), CodeKind::Empty);
        assert!(Code::GET.is_request());
        assert!(Code::NOT_FOUND.is_error());
        assert_eq!(Code::new(1, 0).kind(), CodeKind::Reserved);
        assert_eq!(Code::new(7, 31).kind(), CodeKind::Reserved);
        assert_eq!(Code::method_from_name("ipatch"), Some(Code::IPATCH));
        assert_eq!(Code::method_from_name("Content"), None);
    }
}
