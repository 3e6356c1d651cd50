//! The entities a nested query has passed through, carried from EM to EM in an elective
//! option, so a cycle that slipped past validation (two profiles changed at once on two
//! gateways) ends at its first repeat instead of after every hop Hop-Limit allows. An
//! entity is named by a 4-byte key of its normalised URI: address, port and `/e/<name>`,
//! without any query (a query only changes how it is used).

use covey_core::OptionNumber;
use std::net::SocketAddr;

/// The option (experimental range, elective and safe to forward: other servers ignore it).
pub const VISITED: OptionNumber = OptionNumber(65008);

/// Most keys carried (the most recent are kept): 256 bytes.
pub const MAX_KEYS: usize = 64;

/// The key of entity `name` reached at `addr`.
pub fn entity_key(addr: SocketAddr, name: &str) -> [u8; 4] {
    let mut h: u32 = 0x811c_9dc5;
    let ip = addr.ip().to_canonical().to_string();
    let port = addr.port().to_string();
    for part in [
        ip.as_bytes(),
        b"|",
        port.as_bytes(),
        b"|/e/",
        name.as_bytes(),
    ] {
        for b in part {
            h ^= u32::from(*b);
            h = h.wrapping_mul(0x0100_0193);
        }
    }
    h.to_be_bytes()
}

/// The keys in an option value (a trailing partial key is ignored).
pub fn decode(value: &[u8]) -> Vec<[u8; 4]> {
    value
        .chunks_exact(4)
        .rev()
        .take(MAX_KEYS)
        .rev()
        .map(|c| [c[0], c[1], c[2], c[3]])
        .collect()
}

/// The option value carrying `keys` (the last [`MAX_KEYS`]).
pub fn encode(keys: &[[u8; 4]]) -> Vec<u8> {
    let start = keys.len().saturating_sub(MAX_KEYS);
    keys[start..].concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_name_the_entity_whatever_the_address_spelling() {
        let a: SocketAddr = "[::ffff:127.0.0.1]:5683".parse().unwrap();
        let b: SocketAddr = "127.0.0.1:5683".parse().unwrap();
        assert_eq!(entity_key(a, "x"), entity_key(b, "x"));
        assert_ne!(entity_key(b, "x"), entity_key(b, "y"));
        let c: SocketAddr = "127.0.0.1:5684".parse().unwrap();
        assert_ne!(entity_key(b, "x"), entity_key(c, "x"));
    }

    #[test]
    fn the_option_round_trips_and_stays_bounded() {
        let keys: Vec<[u8; 4]> = (0..100u32).map(u32::to_be_bytes).collect();
        let value = encode(&keys);
        assert_eq!(value.len(), 4 * MAX_KEYS);
        assert_eq!(decode(&value), keys[100 - MAX_KEYS..]);
        assert_eq!(decode(&[1, 2, 3, 4, 5]), vec![[1, 2, 3, 4]]);
    }
}
