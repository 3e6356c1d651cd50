//! The `--amplification-factor` option of the server commands: how much an unverified
//! address may draw before it shows it receives there (RFC 9175 §2.4).

use covey_proto::AmplificationLimit;

/// The limit for a factor given on the command line (0: off).
pub fn limit(factor: u32) -> AmplificationLimit {
    if factor == 0 {
        return AmplificationLimit::off();
    }
    AmplificationLimit {
        factor,
        ..AmplificationLimit::default()
    }
}
