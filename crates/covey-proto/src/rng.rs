//! The engine's own seeded PRNG (SplitMix64): deterministic for a seed, no global state.

/// A small, fast, seedable generator; not for cryptography.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    /// The generator after `n` draws (their values unused).
    #[cfg(any(test, not(any(feature = "block1-uploads", feature = "block2-cache"))))]
    pub fn skipping(mut self, n: usize) -> Rng {
        for _ in 0..n {
            self.next_u64();
        }
        self
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The next 32 random bits (the high half of a 64-bit draw).
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_in_range() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        for _ in 0..1000 {
            assert_eq!(a.next_u64(), b.next_u64());
            assert_eq!(a.next_u32(), b.next_u32());
        }
        assert_ne!(Rng::new(1).next_u64(), Rng::new(2).next_u64());
    }

    #[test]
    fn skipping_draws_as_many_as_it_skips() {
        let mut drawn = Rng::new(7);
        let third = (0..3).map(|_| drawn.next_u64()).last();
        assert_eq!(Some(Rng::new(7).skipping(2).next_u64()), third);
        assert_eq!(Rng::new(7).skipping(0).next_u64(), Rng::new(7).next_u64());
    }
}
