//! Latency percentiles, by nearest rank.
//!
//! The p-th percentile of n values is the value at rank ⌈p/100 · n⌉ (counted from 1) of the
//! values sorted from smallest to largest: always one of the values measured, never an
//! interpolation between two. With 10 values, p50 is the 5th smallest, p90 the 9th, p99 the
//! 10th (the largest); with one value, every percentile is that value.

use serde::{Deserialize, Serialize};

/// Wall-time percentiles of a set of attempts, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// The median.
    pub p50_ms: f64,
    /// The 90th percentile.
    pub p90_ms: f64,
    /// The 99th percentile.
    pub p99_ms: f64,
    /// The slowest.
    pub max_ms: f64,
}

impl Latency {
    /// The percentiles of `millis` (in any order); all zero when there are none.
    ///
    /// ```
    /// use agent_eval::Latency;
    ///
    /// let latency = Latency::of(&[5.0, 1.0, 4.0, 2.0, 3.0, 10.0, 9.0, 8.0, 7.0, 6.0]);
    /// assert_eq!((latency.p50_ms, latency.p90_ms, latency.p99_ms), (5.0, 9.0, 10.0));
    /// ```
    pub fn of(millis: &[f64]) -> Latency {
        let mut sorted: Vec<f64> = millis.iter().copied().filter(|m| m.is_finite()).collect();
        sorted.sort_by(f64::total_cmp);
        Latency {
            p50_ms: nearest_rank(&sorted, 50),
            p90_ms: nearest_rank(&sorted, 90),
            p99_ms: nearest_rank(&sorted, 99),
            max_ms: sorted.last().copied().unwrap_or(0.0),
        }
    }
}

/// The `percent`-th percentile of `sorted` (ascending) by nearest rank; 0 when it is empty.
pub(crate) fn nearest_rank(sorted: &[f64], percent: usize) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    // ⌈percent · n / 100⌉ in integers, at least rank 1.
    let rank = (percent * sorted.len()).div_ceil(100).max(1);
    sorted[rank.min(sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_picks_measured_values() {
        let hundred: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(nearest_rank(&hundred, 50), 50.0);
        assert_eq!(nearest_rank(&hundred, 90), 90.0);
        assert_eq!(nearest_rank(&hundred, 99), 99.0);
        assert_eq!(nearest_rank(&[7.0], 50), 7.0);
        assert_eq!(nearest_rank(&[7.0], 99), 7.0);
        assert_eq!(nearest_rank(&[1.0, 2.0, 3.0], 50), 2.0);
        assert_eq!(nearest_rank(&[1.0, 2.0, 3.0, 4.0], 50), 2.0);
        assert_eq!(nearest_rank(&[1.0, 2.0, 3.0, 4.0], 99), 4.0);
        assert_eq!(nearest_rank(&[], 50), 0.0);
        let latency = Latency::of(&[3.0, f64::NAN, 1.0]);
        assert_eq!(latency.max_ms, 3.0);
        assert_eq!(latency.p50_ms, 1.0);
    }
}
