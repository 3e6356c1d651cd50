//! Frame loss models: independent (Bernoulli) and bursty (Gilbert–Elliott). Each owns its
//! random stream, so the losses of one link do not depend on anything else in the run.

use rand::Rng;

use crate::sim::SimRng;

/// Which loss model a link uses, and its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum LossSpec {
    /// No loss.
    #[default]
    None,
    /// Each frame is lost with probability `p`, independently.
    Bernoulli {
        /// Loss probability per frame.
        p: f64,
    },
    /// A two-state Markov chain: from Good to Bad with probability `p` per frame, from Bad
    /// back to Good with `r`; a frame is lost with `loss_bad` in Bad and `loss_good` in Good.
    GilbertElliott {
        /// P(Good -> Bad) per frame.
        p: f64,
        /// P(Bad -> Good) per frame.
        r: f64,
        /// Loss probability in the Bad state (1 in the classic Gilbert model).
        loss_bad: f64,
        /// Loss probability in the Good state (0 in the classic Gilbert model).
        loss_good: f64,
    },
}

impl LossSpec {
    /// The long-run share of frames lost.
    pub fn mean_loss(&self) -> f64 {
        match *self {
            LossSpec::None => 0.0,
            LossSpec::Bernoulli { p } => p.clamp(0.0, 1.0),
            LossSpec::GilbertElliott {
                p,
                r,
                loss_bad,
                loss_good,
            } => {
                let bad = if p + r > 0.0 { p / (p + r) } else { 0.0 };
                bad * loss_bad + (1.0 - bad) * loss_good
            }
        }
    }
}

/// Independent losses with probability `p`.
#[derive(Debug, Clone)]
pub struct Bernoulli {
    p: f64,
    rng: SimRng,
}

impl Bernoulli {
    /// A Bernoulli loss process drawing from `rng`.
    pub fn new(p: f64, rng: SimRng) -> Bernoulli {
        Bernoulli { p, rng }
    }

    /// Whether the next frame is lost.
    pub fn lose(&mut self) -> bool {
        self.p > 0.0 && self.rng.random::<f64>() < self.p
    }
}

/// Bursty losses from a Good/Bad Markov chain, stepped once per frame.
#[derive(Debug, Clone)]
pub struct GilbertElliott {
    p: f64,
    r: f64,
    loss_bad: f64,
    loss_good: f64,
    bad: bool,
    rng: SimRng,
}

impl GilbertElliott {
    /// A chain starting in Good, drawing from `rng`.
    pub fn new(p: f64, r: f64, loss_bad: f64, loss_good: f64, rng: SimRng) -> GilbertElliott {
        GilbertElliott {
            p,
            r,
            loss_bad,
            loss_good,
            bad: false,
            rng,
        }
    }

    /// Whether the chain is in the Bad state.
    pub fn is_bad(&self) -> bool {
        self.bad
    }

    /// Steps the chain for the next frame and says whether that frame is lost.
    pub fn lose(&mut self) -> bool {
        let switch = if self.bad { self.r } else { self.p };
        if self.rng.random::<f64>() < switch {
            self.bad = !self.bad;
        }
        let loss = if self.bad {
            self.loss_bad
        } else {
            self.loss_good
        };
        loss > 0.0 && self.rng.random::<f64>() < loss
    }
}

/// A loss process for one link direction.
#[derive(Debug, Clone)]
pub enum LossModel {
    /// Never loses.
    None,
    /// Independent losses.
    Bernoulli(Bernoulli),
    /// Bursty losses.
    GilbertElliott(GilbertElliott),
}

impl LossModel {
    /// The process `spec` describes, drawing from `rng`.
    pub fn new(spec: LossSpec, rng: SimRng) -> LossModel {
        match spec {
            LossSpec::None => LossModel::None,
            LossSpec::Bernoulli { p } => LossModel::Bernoulli(Bernoulli::new(p, rng)),
            LossSpec::GilbertElliott {
                p,
                r,
                loss_bad,
                loss_good,
            } => LossModel::GilbertElliott(GilbertElliott::new(p, r, loss_bad, loss_good, rng)),
        }
    }

    /// Whether the next frame is lost.
    pub fn lose(&mut self) -> bool {
        match self {
            LossModel::None => false,
            LossModel::Bernoulli(b) => b.lose(),
            LossModel::GilbertElliott(g) => g.lose(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{stream_rng, Stream};

    const FRAMES: usize = 200_000;

    fn rng() -> SimRng {
        stream_rng(42, Stream::Link(1))
    }

    #[test]
    fn bernoulli_loses_its_configured_share() {
        for p in [0.01, 0.1, 0.5] {
            let mut b = Bernoulli::new(p, rng());
            let lost = (0..FRAMES).filter(|_| b.lose()).count() as f64 / FRAMES as f64;
            // 5 standard deviations of a binomial share.
            let tol = 5.0 * (p * (1.0 - p) / FRAMES as f64).sqrt();
            assert!((lost - p).abs() < tol, "p={p}: measured {lost}");
        }
        let mut never = Bernoulli::new(0.0, rng());
        assert!((0..1000).all(|_| !never.lose()));
    }

    #[test]
    fn gilbert_elliott_matches_its_stationary_loss_and_burst_length() {
        let spec = LossSpec::GilbertElliott {
            p: 0.02,
            r: 0.25,
            loss_bad: 0.9,
            loss_good: 0.01,
        };
        let LossModel::GilbertElliott(mut g) = LossModel::new(spec, rng()) else {
            panic!("wrong model");
        };
        let mut lost = 0usize;
        let mut bad_frames = 0usize;
        let mut bad_runs = 0usize;
        let mut was_bad = false;
        for _ in 0..FRAMES {
            lost += usize::from(g.lose());
            if g.is_bad() {
                bad_frames += 1;
                if !was_bad {
                    bad_runs += 1;
                }
            }
            was_bad = g.is_bad();
        }
        let measured = lost as f64 / FRAMES as f64;
        let expected = spec.mean_loss();
        assert!(
            (measured - expected).abs() < 0.1 * expected,
            "loss {measured} vs stationary {expected}"
        );
        // Bad periods last 1/r frames on average (geometric).
        let mean_burst = bad_frames as f64 / bad_runs as f64;
        assert!((mean_burst - 4.0).abs() < 0.4, "mean bad run {mean_burst}");
    }

    #[test]
    fn gilbert_elliott_losses_cluster_more_than_bernoulli() {
        // Same mean loss; P(loss | previous lost) is far higher with bursts.
        let ge = LossSpec::GilbertElliott {
            p: 0.01,
            r: 0.1,
            loss_bad: 1.0,
            loss_good: 0.0,
        };
        let mean = ge.mean_loss();
        let conditional = |mut m: LossModel| {
            let (mut pairs, mut both) = (0usize, 0usize);
            let mut prev = false;
            for _ in 0..FRAMES {
                let l = m.lose();
                if prev {
                    pairs += 1;
                    both += usize::from(l);
                }
                prev = l;
            }
            both as f64 / pairs.max(1) as f64
        };
        let burst = conditional(LossModel::new(ge, rng()));
        let flat = conditional(LossModel::new(LossSpec::Bernoulli { p: mean }, rng()));
        assert!(burst > 0.8, "P(loss|loss) with bursts: {burst}");
        assert!(flat < 0.2, "P(loss|loss) independent: {flat}");
    }
}
