//! SMRF's forwarding delay (`core/net/ipv6/multicast/smrf.c`, `in()`): a node that must forward
//! a multicast datagram copies it into its single `mcast_buf` and sends it when a ctimer fires:
//!
//! - `fwd_delay` = `NETSTACK_RDC.channel_check_interval()`, 0 under nullrdc, raised to
//!   `SMRF_MIN_FWD_DELAY` (4 ticks, `smrf.h`);
//! - `fwd_spread` = min(`SMRF_INTERVAL_COUNT` = (CLOCK_SECOND >> 2) / fwd_delay = 8,
//!   `SMRF_MAX_SPREAD` = 4);
//! - `fwd_delay` ×= 1 + (`random_rand()` >> 11) % fwd_spread: 4, 8, 12 or 16 ticks (31.25,
//!   62.5, 93.75 or 125 ms), each a quarter of the time.
//!
//! A second datagram to forward before the timer fires overwrites `mcast_buf` and re-arms the
//! timer (`ctimer_set`), so the first copy is never forwarded.

use covey_proto::Duration;
use rand::Rng;

use super::ContikiConfig;

/// SMRF's constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SmrfConfig {
    /// `SMRF_MIN_FWD_DELAY` in ticks (4).
    pub min_fwd_delay_ticks: u32,
    /// `SMRF_MAX_SPREAD` (4).
    pub max_spread: u32,
}

impl Default for SmrfConfig {
    fn default() -> Self {
        SmrfConfig {
            min_fwd_delay_ticks: 4,
            max_spread: 4,
        }
    }
}

/// The forwarding delay in ticks for one datagram; nullrdc's check interval is 0.
pub fn forward_delay_ticks(config: &ContikiConfig, rng: &mut impl Rng) -> u32 {
    let delay = config.smrf.min_fwd_delay_ticks.max(1);
    let interval_count = (config.clock_second >> 2) / delay;
    let spread = interval_count.min(config.smrf.max_spread);
    if spread == 0 {
        return delay;
    }
    delay * (1 + rng.random_range(0..spread))
}

/// The forwarding delay for one datagram.
pub fn forward_delay(config: &ContikiConfig, rng: &mut impl Rng) -> Duration {
    config.tick() * forward_delay_ticks(config, rng)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn the_delay_is_one_to_four_times_four_ticks_uniformly() {
        let config = ContikiConfig::default();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        let mut counts = [0u32; 4];
        let draws = 40_000;
        for _ in 0..draws {
            let ticks = forward_delay_ticks(&config, &mut rng);
            assert_eq!(ticks % 4, 0, "{ticks}");
            counts[(ticks / 4 - 1) as usize] += 1;
        }
        for c in counts {
            let expected = f64::from(draws) / 4.0;
            assert!(
                (f64::from(c) - expected).abs() < 0.05 * expected,
                "{counts:?}"
            );
        }
        let longest = config.tick() * 16;
        assert_eq!(longest, Duration::from_millis(125));
    }
}
