//! The request/response layer (RFC 7252 §5): client exchanges matched by token and queued
//! per peer (NSTART), and incoming exchanges answered piggy-backed or separately.

pub(crate) mod client;
pub(crate) mod incoming;
