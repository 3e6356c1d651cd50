//! Reproducible random streams: every engine and link draws from its own stream, derived
//! from the run seed and a stream id, so adding a node or a link does not shift the numbers
//! any other part of the run sees. A node's Apps draw from their engine's App stream, which
//! the engine seeds from its own seed.

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// The generator behind every random stream of the lab (xoshiro256++: fast, small state,
/// good statistical quality, stable output across crate versions).
pub type SimRng = Xoshiro256PlusPlus;

/// Which part of a run a random stream belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stream {
    /// The engine (`Endpoint` seed) of a node's `incarnation`-th endpoint.
    Engine {
        /// The node.
        node: usize,
        /// How many times the node's endpoint was replaced before.
        incarnation: u32,
    },
    /// A link or medium component (delay jitter, loss).
    Link(u64),
}

impl Stream {
    /// A distinct 64-bit id per stream (a tag in the top bits keeps the kinds apart).
    fn id(self) -> u64 {
        match self {
            Stream::Engine { node, incarnation } => {
                (2 << 60) | (u64::from(incarnation) << 32) | (node as u64 & 0xffff_ffff)
            }
            Stream::Link(l) => (3 << 60) | (l & ((1 << 60) - 1)),
        }
    }
}

/// One step of splitmix64 (Steele, Lea, Flood 2014): a bijective 64-bit mixer.
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of `stream` in the run seeded with `run_seed`.
pub fn derive_seed(run_seed: u64, stream: Stream) -> u64 {
    splitmix64(splitmix64(run_seed) ^ splitmix64(stream.id()))
}

/// A generator for `stream` in the run seeded with `run_seed`.
pub fn stream_rng(run_seed: u64, stream: Stream) -> SimRng {
    SimRng::seed_from_u64(derive_seed(run_seed, stream))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(stream_rng(7, Stream::Link(3)), |r, _| Some(r.random()))
            .collect();
        let b: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(stream_rng(7, Stream::Link(3)), |r, _| Some(r.random()))
            .collect();
        assert_eq!(a, b, "same run seed and stream give the same numbers");
        let seeds = [
            derive_seed(7, Stream::Link(3)),
            derive_seed(7, Stream::Link(4)),
            derive_seed(8, Stream::Link(3)),
            derive_seed(
                7,
                Stream::Engine {
                    node: 3,
                    incarnation: 0,
                },
            ),
            derive_seed(
                7,
                Stream::Engine {
                    node: 3,
                    incarnation: 1,
                },
            ),
            derive_seed(7, Stream::Link(5)),
        ];
        for i in 0..seeds.len() {
            for j in i + 1..seeds.len() {
                assert_ne!(seeds[i], seeds[j], "streams {i} and {j} collide");
            }
        }
    }

    #[test]
    fn splitmix_matches_the_reference_sequence() {
        // First outputs of the reference splitmix64 generator seeded with 0: state advances by
        // the golden gamma, each output is the mix of the new state.
        assert_eq!(splitmix64(0), 0xE220_A839_7B1D_CDAF);
        assert_eq!(splitmix64(0x9E37_79B9_7F4A_7C15), 0x6E78_9E6A_A1B9_65F4);
    }
}
