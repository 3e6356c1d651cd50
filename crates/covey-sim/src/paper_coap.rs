//! The CoAP configuration every lab scenario starts from, simulated or emulated.

use covey_proto::{AmplificationLimit, Config};

/// The engine's defaults without RFC 9175 Echo: the papers' stacks predate it, and with it every
/// new client would pay one more round trip (and large first responses would be cut to a block)
/// that the experiments being reproduced never had. Simulated and emulated runs share it, so the
/// two agree.
pub fn paper_config() -> Config {
    Config {
        amplification: AmplificationLimit::off(),
        ..Config::default()
    }
}
