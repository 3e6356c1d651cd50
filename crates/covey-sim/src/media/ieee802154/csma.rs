//! Unslotted CSMA/CA (IEEE 802.15.4-2006 §7.5.1.4): before each transmission attempt a node
//! waits a random number of backoff periods in [0, 2^BE − 1], then performs a CCA; a busy
//! channel raises BE (up to macMaxBE) and counts one more backoff (NB), and after
//! macMaxCSMABackoffs + 1 busy CCAs the attempt fails with a channel access failure.

use rand::Rng;

/// The MAC's CSMA/CA and retry parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MacParams {
    /// macMinBE.
    pub min_be: u8,
    /// macMaxBE.
    pub max_be: u8,
    /// macMaxCSMABackoffs.
    pub max_csma_backoffs: u8,
    /// macMaxFrameRetries.
    pub max_frame_retries: u8,
    /// Whether unicast frames request a link-layer ACK.
    pub ack_unicast: bool,
}

impl Default for MacParams {
    fn default() -> Self {
        MacParams {
            min_be: 3,
            max_be: 5,
            max_csma_backoffs: 4,
            max_frame_retries: 3,
            ack_unicast: true,
        }
    }
}

/// What a CCA outcome means for the attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CcaOutcome {
    /// The channel was idle: transmit after the RX-to-TX turnaround.
    Transmit,
    /// The channel was busy: back off again for this many backoff periods.
    BackOff(u32),
    /// The channel was busy macMaxCSMABackoffs + 1 times.
    ChannelAccessFailure,
}

/// The CSMA/CA state of one transmission attempt: NB and BE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CsmaBackoff {
    nb: u8,
    be: u8,
}

impl CsmaBackoff {
    /// A fresh attempt (NB = 0, BE = macMinBE) and its first backoff in backoff periods.
    pub fn start(params: &MacParams, rng: &mut impl Rng) -> (Self, u32) {
        let state = CsmaBackoff {
            nb: 0,
            be: params.min_be.min(params.max_be),
        };
        (state, state.draw(rng))
    }

    /// Number of backoff periods drawn uniformly in [0, 2^BE − 1].
    fn draw(&self, rng: &mut impl Rng) -> u32 {
        let max = (1u32 << u32::from(self.be.min(31))) - 1;
        rng.random_range(0..=max)
    }

    /// Applies a CCA result.
    pub fn after_cca(&mut self, busy: bool, params: &MacParams, rng: &mut impl Rng) -> CcaOutcome {
        if !busy {
            return CcaOutcome::Transmit;
        }
        self.nb = self.nb.saturating_add(1);
        self.be = self.be.saturating_add(1).min(params.max_be);
        if self.nb > params.max_csma_backoffs {
            CcaOutcome::ChannelAccessFailure
        } else {
            CcaOutcome::BackOff(self.draw(rng))
        }
    }

    /// Current backoff exponent.
    pub fn be(&self) -> u8 {
        self.be
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn first_backoff_is_uniform_over_eight_periods() {
        let params = MacParams::default();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let mut counts = [0u32; 8];
        let draws = 80_000;
        for _ in 0..draws {
            let (_, periods) = CsmaBackoff::start(&params, &mut rng);
            let slot = usize::try_from(periods).unwrap_or(usize::MAX);
            assert!(slot < 8, "BE 3 allows 0..=7 periods, got {periods}");
            counts[slot] += 1;
        }
        // Each of the 8 values within 5 % of its expected share.
        for c in counts {
            let expected = f64::from(draws) / 8.0;
            assert!(
                (f64::from(c) - expected).abs() < 0.05 * expected,
                "{counts:?}"
            );
        }
    }

    #[test]
    fn busy_channel_raises_be_to_max_and_fails_after_five_ccas() {
        let params = MacParams::default();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let (mut state, _) = CsmaBackoff::start(&params, &mut rng);
        let mut bounds = Vec::new();
        for _ in 0..params.max_csma_backoffs {
            match state.after_cca(true, &params, &mut rng) {
                CcaOutcome::BackOff(periods) => {
                    assert!(periods < (1 << state.be()));
                    bounds.push(state.be());
                }
                other => panic!("expected a backoff, got {other:?}"),
            }
        }
        assert_eq!(bounds, vec![4, 5, 5, 5]);
        assert_eq!(
            state.after_cca(true, &params, &mut rng),
            CcaOutcome::ChannelAccessFailure
        );
    }

    #[test]
    fn idle_channel_transmits() {
        let params = MacParams::default();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let (mut state, _) = CsmaBackoff::start(&params, &mut rng);
        assert_eq!(
            state.after_cca(false, &params, &mut rng),
            CcaOutcome::Transmit
        );
    }
}
