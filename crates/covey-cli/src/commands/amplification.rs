//! The `--amplification-factor` option of the server commands: how much an unverified
//! client may draw before it must echo an Echo value back (RFC 9175 §2.4).

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
