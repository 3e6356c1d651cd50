//! What the paper (seeds 000/001, §5.2.1, Figs 7–9, Table 7) reports of the delay between the
//! EM's unicast requests; the figures themselves are published as plots.

/// G = 5: entity response time without a delay, seconds ("about 3 s").
pub const G5_NO_DELAY_S: f64 = 3.0;

/// G = 5: the minimum response time, seconds, at D = 50 ms.
pub const G5_MINIMUM_S: f64 = 0.39;

/// The delay of that minimum, ms.
pub const G5_MINIMUM_DELAY_MS: u64 = 50;

/// G = 5: response time at the computed D = 100 ms, seconds.
pub const G5_AT_100_MS_S: f64 = 0.55;

/// The paper's lower bounds on D from Equation (2), ms: G = 5 and G = 40.
pub const LOWER_BOUNDS_MS: [(usize, u64); 2] = [(5, 100), (40, 82)];

/// Member reliability for G = 40 (all delays): between these, percent.
pub const G40_MEMBER_RELIABILITY_PCT: (f64, f64) = (99.8, 99.9);

/// The paper's account of Figs 7–9.
pub const CLAIM: &str = "Without a delay the entity's response time is about 3 s (G = 5); \
     with D = 100 ms it drops to 550 ms, close to the minimum of 390 ms at D = 50 ms; beyond \
     that the response time grows linearly with D. Every group size follows the same \
     pattern. Member reliability is 100 % for G < 40 and 99.8–99.9 % for G = 40.";
