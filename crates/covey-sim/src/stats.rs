//! The lab's one set of summary statistics (simulator, emulator and scenarios), so that every
//! page's percentile means the same.
//!
//! - **Quantiles** interpolate linearly between the two nearest order statistics (Hyndman and
//!   Fan's definition 7, the default of R, NumPy and spreadsheets): for n sorted values and
//!   probability p, h = (n − 1)·p, and the quantile is x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]).
//! - **A mean's 95 % confidence interval** uses Student's t with n − 1 degrees of freedom.
//! - **A median's 95 % confidence interval** is distribution-free: the order statistics at
//!   ranks n/2 ∓ 1.96·√n/2 (the binomial's normal approximation, rounded outwards).
//! - **A proportion's 95 % confidence interval** is Wilson's score interval, which stays
//!   inside [0, 1] and is sound at 0 and 1 successes.

use serde::{Deserialize, Serialize};

/// z for a two-sided 95 % interval.
const Z95: f64 = 1.959_963_984_540_054;

/// The p-quantile (0 ≤ p ≤ 1) of `values` (any order; NaNs are ignored); `None` when empty.
pub fn quantile(values: &[f64], p: f64) -> Option<f64> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    sorted.sort_by(f64::total_cmp);
    quantile_sorted(&sorted, p)
}

/// The p-quantile of `sorted` (ascending, no NaNs); `None` when empty.
pub fn quantile_sorted(sorted: &[f64], p: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let h = last as f64 * p.clamp(0.0, 1.0);
    let below = h.floor() as usize;
    let above = (below + 1).min(last);
    Some(sorted[below] + (h - below as f64) * (sorted[above] - sorted[below]))
}

/// The median of `values`; `None` when empty.
pub fn median(values: &[f64]) -> Option<f64> {
    quantile(values, 0.5)
}

/// The mean of `values`; `None` when empty.
pub fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// A value with the bounds of its 95 % confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// The estimate.
    pub value: f64,
    /// The interval's lower bound.
    pub low: f64,
    /// The interval's upper bound.
    pub high: f64,
}

/// The mean of `values` with its Student-t 95 % interval (zero width for one value).
pub fn mean_ci95(values: &[f64]) -> Option<Estimate> {
    let m = mean(values)?;
    let n = values.len();
    if n < 2 {
        return Some(Estimate {
            value: m,
            low: m,
            high: m,
        });
    }
    let var = values.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1) as f64;
    let half = t975(n - 1) * (var / n as f64).sqrt();
    Some(Estimate {
        value: m,
        low: m - half,
        high: m + half,
    })
}

/// The median of `values` with its distribution-free 95 % interval.
pub fn median_ci95(values: &[f64]) -> Option<Estimate> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    sorted.sort_by(f64::total_cmp);
    let value = quantile_sorted(&sorted, 0.5)?;
    let n = sorted.len() as f64;
    let half = Z95 * n.sqrt() / 2.0;
    // 1-based ranks, rounded outwards, as indices.
    let low = ((n / 2.0 - half).floor().max(1.0) as usize) - 1;
    let high = ((1.0 + n / 2.0 + half).ceil() as usize).min(sorted.len()) - 1;
    Some(Estimate {
        value,
        low: sorted[low],
        high: sorted[high],
    })
}

/// The share `successes / trials` with Wilson's 95 % score interval; `None` for no trials.
pub fn proportion_ci95(successes: u64, trials: u64) -> Option<Estimate> {
    if trials == 0 {
        return None;
    }
    let n = trials as f64;
    let p = successes.min(trials) as f64 / n;
    let z2 = Z95 * Z95;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z95 / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Some(Estimate {
        value: p,
        low: (centre - half).max(0.0),
        high: (centre + half).min(1.0),
    })
}

/// Student's t at 0.975 with `df` degrees of freedom: the table to 30, then the
/// Cornish–Fisher expansion around z (within 0.001 of the exact value beyond 30).
fn t975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df - 1],
        _ => {
            let (z, d) = (Z95, df as f64);
            z + (z.powi(3) + z) / (4.0 * d)
                + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * d * d)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_between_order_statistics_as_numpy_does() {
        // numpy.quantile([1, 2, 3, 4], [0, 0.25, 0.5, 0.9, 1]) = 1, 1.75, 2.5, 3.7, 4
        let v = [4.0, 1.0, 3.0, 2.0];
        let q = |p| quantile(&v, p).unwrap();
        assert_eq!(q(0.0), 1.0);
        assert_eq!(q(0.25), 1.75);
        assert_eq!(q(0.5), 2.5);
        assert!((q(0.9) - 3.7).abs() < 1e-12);
        assert_eq!(q(1.0), 4.0);
        assert_eq!(quantile(&[7.0], 0.95), Some(7.0));
        assert_eq!(quantile(&[], 0.5), None);
    }

    #[test]
    fn a_mean_interval_matches_the_t_table() {
        // n = 10, sd = 1 about mean 0: half-width 2.262 / sqrt(10).
        let v: Vec<f64> = (0..10)
            .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        let e = mean_ci95(&v).unwrap();
        let sd = (10.0f64 / 9.0).sqrt();
        assert!((e.high - 2.262 * sd / 10f64.sqrt()).abs() < 1e-9);
        assert!((t975(30) - 2.042).abs() < 0.001 && (t975(31) - 2.040).abs() < 0.001);
        assert!((t975(120) - 1.980).abs() < 0.001);
    }

    #[test]
    fn a_median_interval_takes_order_statistics_around_the_middle() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let e = median_ci95(&v).unwrap();
        // Ranks 40 and 61 of 100 (the binomial table gives 40 and 61).
        assert_eq!((e.value, e.low, e.high), (50.5, 40.0, 61.0));
    }

    #[test]
    fn wilson_intervals_stay_inside_zero_and_one() {
        let all = proportion_ci95(20, 20).unwrap();
        assert_eq!(all.value, 1.0);
        assert!(all.high == 1.0 && all.low > 0.8 && all.low < 0.85);
        let none = proportion_ci95(0, 20).unwrap();
        assert!(none.low == 0.0 && none.high < 0.17);
        assert_eq!(proportion_ci95(1, 0), None);
    }
}
