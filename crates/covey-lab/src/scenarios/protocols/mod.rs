//! `protocols`: CoAP against MQTT, DDS and a custom JSON-over-UDP pub/sub, on real stacks.

pub mod protocol;
pub mod trial;

/// The scenario's name.
pub const NAME: &str = "protocols";
