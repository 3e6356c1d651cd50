//! The request/response layer (RFC 7252 §5): client exchanges matched by token and queued
//! per peer (NSTART), and incoming exchanges answered piggy-backed or separately.

pub(crate) mod address_budget;
pub(crate) mod address_check;
pub(crate) mod address_credit;
pub(crate) mod address_validation;
pub(crate) mod address_verification;
pub(crate) mod client;
pub(crate) mod client_exchange;
pub(crate) mod client_table;
pub(crate) mod echo_answer;
pub(crate) mod echo_challenge;
pub(crate) mod error;
pub(crate) mod held_response;
pub(crate) mod incoming;
pub(crate) mod incoming_exchange;
pub(crate) mod incoming_share;
pub(crate) mod incoming_table;
pub(crate) mod kept_echoes;
pub(crate) mod nstart;
pub(crate) mod oversized;
pub(crate) mod respond;
pub(crate) mod response_matching;
