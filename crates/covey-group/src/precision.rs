//! Results at the precision of their inputs: an aggregate of readings like `19.1` is
//! `19.2`, not the binary rounding noise `19.200000000000003`.

/// Significant decimal digits every f64 keeps through a decimal round trip.
const SIGNIFICANT: usize = 15;

/// Most decimals considered: beyond this a value is not a short decimal anyway.
const MAX_DECIMALS: usize = 17;

/// Decimals of the shortest text that reads back as `x` (`19.1` has 1, `20` has 0).
pub fn decimals(x: f64) -> usize {
    let text = format!("{x}");
    text.split_once('.')
        .map_or(0, |(_, fraction)| fraction.len())
        .min(MAX_DECIMALS)
}

/// The most decimals among `values`.
pub fn max_decimals(values: &[f64]) -> usize {
    values.iter().map(|x| decimals(*x)).max().unwrap_or(0)
}

/// `x` rounded to `decimals` decimals (the f64 nearest that decimal).
pub fn round_to(x: f64, decimals: usize) -> f64 {
    reparse(format!("{x:.decimals$}"), x)
}

/// `x` rounded to the 15 significant digits a double carries faithfully, which drops the
/// noise of one inexact division.
pub fn round_significant(x: f64) -> f64 {
    let digits = SIGNIFICANT - 1;
    reparse(format!("{x:.digits$e}"), x)
}

fn reparse(text: String, fallback: f64) -> f64 {
    text.parse::<f64>()
        .ok()
        .filter(|r| r.is_finite())
        .unwrap_or(fallback)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_of_shortest_text() {
        assert_eq!(decimals(19.1), 1);
        assert_eq!(decimals(20.0), 0);
        assert_eq!(decimals(0.125), 3);
        assert_eq!(decimals(1e-7), 7);
        assert_eq!(max_decimals(&[1.0, 2.25, 3.5]), 2);
    }

    #[test]
    fn rounding() {
        assert_eq!(round_to(19.200000000000003, 1).to_string(), "19.2");
        assert_eq!(round_to(0.30000000000000004, 1).to_string(), "0.3");
        assert_eq!(
            round_significant(1.0 / 3.0).to_string(),
            "0.333333333333333"
        );
        assert_eq!(round_significant(24.600000000000005).to_string(), "24.6");
        assert_eq!(round_significant(1e300), 1e300);
    }
}
