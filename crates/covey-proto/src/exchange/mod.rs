//! The request/response layer's state (RFC 7252 §5): client exchanges matched by token and
//! queued per peer (NSTART), incoming requests until they are answered, responses held for
//! the application, and address validation (RFC 9175). The endpoint composes them
//! (endpoint/client.rs, respond.rs, incoming.rs and their neighbours).

#[cfg(feature = "address-validation")]
pub(crate) mod address_credit;
#[cfg(feature = "address-validation")]
pub(crate) mod address_validation;
#[cfg(not(feature = "address-validation"))]
#[path = "no_address_validation.rs"]
pub(crate) mod address_validation;
#[cfg(feature = "address-validation")]
pub(crate) mod address_verification;
#[cfg(feature = "client")]
pub(crate) mod client_exchange;
#[cfg(feature = "client")]
pub(crate) mod client_table;
pub(crate) mod error;
#[cfg(feature = "client")]
pub(crate) mod held_response;
pub(crate) mod incoming_exchange;
pub(crate) mod incoming_table;
#[cfg(feature = "client")]
pub(crate) mod kept_echoes;
#[cfg(not(feature = "client"))]
pub(crate) mod no_client;
#[cfg(feature = "client")]
pub(crate) mod nstart;
#[cfg(feature = "oscore")]
pub(crate) mod oscore_contexts;
