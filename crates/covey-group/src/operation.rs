//! Entity operations: how the members' values become one client reply.

use std::fmt;

use crate::precision;

/// An entity operation (`eo`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operation {
    /// `lst`: every member's reply, unprocessed.
    List,
    /// `avg`: the arithmetic mean.
    Average,
    /// `min`: the smallest value.
    Minimum,
    /// `max`: the largest value.
    Maximum,
    /// `sum`: the sum.
    Sum,
    /// `count`: how many members answered with a value.
    Count,
    /// `median`: the middle value (mean of the two middle ones for an even count).
    Median,
}

impl Operation {
    /// Every operation, `lst` first (the default list of a profile).
    pub const ALL: [Operation; 7] = [
        Operation::List,
        Operation::Average,
        Operation::Minimum,
        Operation::Maximum,
        Operation::Sum,
        Operation::Count,
        Operation::Median,
    ];

    /// The profile name (`lst`, `avg`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Operation::List => "lst",
            Operation::Average => "avg",
            Operation::Minimum => "min",
            Operation::Maximum => "max",
            Operation::Sum => "sum",
            Operation::Count => "count",
            Operation::Median => "median",
        }
    }

    /// The operation of a profile name.
    pub fn from_name(name: &str) -> Option<Operation> {
        Operation::ALL.into_iter().find(|o| o.name() == name)
    }

    /// True when the operation computes over numbers (every one but `lst` and `count`).
    pub fn needs_numbers(self) -> bool {
        !matches!(self, Operation::List | Operation::Count)
    }

    /// True when the result is one number rather than a list.
    pub fn is_scalar(self) -> bool {
        self != Operation::List
    }

    /// The result over `values`; `None` for `lst` and for an empty input (except `count`).
    /// Sums and medians are exact at the members' precision (one more decimal for the mean
    /// of two middle values), a mean at 15 significant digits: no binary rounding noise.
    pub fn apply(self, values: &[f64]) -> Option<f64> {
        if self == Operation::Count {
            return Some(values.len() as f64);
        }
        if values.is_empty() {
            return None;
        }
        let decimals = precision::max_decimals(values);
        let sum = || precision::round_to(values.iter().sum::<f64>(), decimals);
        match self {
            Operation::List | Operation::Count => None,
            Operation::Average => Some(precision::round_significant(sum() / values.len() as f64)),
            Operation::Minimum => values.iter().copied().reduce(f64::min),
            Operation::Maximum => values.iter().copied().reduce(f64::max),
            Operation::Sum => Some(sum()),
            Operation::Median => {
                let mut sorted = values.to_vec();
                sorted.sort_by(f64::total_cmp);
                let mid = sorted.len() / 2;
                let odd = sorted.len() & 1 == 1;
                Some(if odd {
                    sorted[mid]
                } else {
                    precision::round_to((sorted[mid - 1] + sorted[mid]) / 2.0, decimals + 1)
                })
            }
        }
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for op in Operation::ALL {
            assert_eq!(Operation::from_name(op.name()), Some(op));
        }
        assert_eq!(Operation::from_name("average"), None);
        assert_eq!(Operation::from_name("AVG"), None);
    }

    #[test]
    fn arithmetic() {
        let v = [21.0, 19.5, 23.0, 20.5];
        assert_eq!(Operation::Average.apply(&v), Some(21.0));
        assert_eq!(Operation::Minimum.apply(&v), Some(19.5));
        assert_eq!(Operation::Maximum.apply(&v), Some(23.0));
        assert_eq!(Operation::Sum.apply(&v), Some(84.0));
        assert_eq!(Operation::Count.apply(&v), Some(4.0));
        assert_eq!(Operation::List.apply(&v), None);
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(Operation::Median.apply(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(Operation::Median.apply(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(Operation::Median.apply(&[7.0, 5.0]), Some(6.0));
        assert_eq!(Operation::Median.apply(&[-1.0]), Some(-1.0));
    }

    #[test]
    fn results_carry_no_binary_rounding_noise() {
        let text = |op: Operation, v: &[f64]| op.apply(v).unwrap().to_string();
        assert_eq!(text(Operation::Average, &[19.1, 19.3]), "19.2");
        assert_eq!(text(Operation::Average, &[19.0, 19.1, 19.2]), "19.1");
        assert_eq!(text(Operation::Sum, &[0.1, 0.2]), "0.3");
        assert_eq!(text(Operation::Sum, &[8.2, 8.2, 8.2]), "24.6");
        assert_eq!(text(Operation::Median, &[19.1, 19.3]), "19.2");
        assert_eq!(text(Operation::Median, &[19.1, 19.2]), "19.15");
        assert_eq!(
            text(Operation::Average, &[1.0, 2.0, 2.0]),
            "1.66666666666667"
        );
        let many = vec![20.1; 1000];
        assert_eq!(text(Operation::Sum, &many), "20100");
        assert_eq!(text(Operation::Average, &many), "20.1");
    }

    #[test]
    fn empty_inputs() {
        assert_eq!(Operation::Average.apply(&[]), None);
        assert_eq!(Operation::Median.apply(&[]), None);
        assert_eq!(Operation::Count.apply(&[]), Some(0.0));
    }
}
