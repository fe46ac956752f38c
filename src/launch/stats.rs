//! Timing statistics: median, extremes, and a distribution-free 95%
//! confidence interval of the median from binomial order statistics.

use statrs::distribution::{Binomial, DiscreteCDF};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub runs: usize,
}

/// Summarises samples; `None` when there are none.
pub fn summarize(samples: &[f64]) -> Option<Summary> {
    let s = sorted(samples);
    let median = median_of_sorted(&s)?;
    let n = s.len();
    let (lo, hi) = median_ci_ranks(n, 0.95);
    Some(Summary { median, min: s[0], max: s[n - 1], ci_low: s[lo], ci_high: s[hi], runs: n })
}

/// The median of the samples (the mean of the middle two of an even
/// count); `None` when there are none.
pub fn median(samples: &[f64]) -> Option<f64> {
    median_of_sorted(&sorted(samples))
}

fn sorted(samples: &[f64]) -> Vec<f64> {
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    s
}

fn median_of_sorted(s: &[f64]) -> Option<f64> {
    let n = s.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(s[n / 2]),
        _ => Some((s[n / 2 - 1] + s[n / 2]) / 2.0),
    }
}

/// 0-based ranks (l, u) such that [x_(l), x_(u)] covers the median with
/// probability >= `level`: the number of samples below the median is
/// Binomial(n, 1/2), so take the largest k with P(B < k) <= (1-level)/2 and
/// use ranks k-1 and n-k. Too few samples for that: the full range.
pub fn median_ci_ranks(n: usize, level: f64) -> (usize, usize) {
    if n == 0 {
        return (0, 0);
    }
    let alpha = (1.0 - level) / 2.0;
    let Ok(b) = Binomial::new(0.5, n as u64) else { return (0, n - 1) };
    let mut k = 0usize;
    // P(B <= k') for k' = k grows with k; stop before it passes alpha.
    while k < n / 2 && b.cdf(k as u64) <= alpha {
        k += 1;
    }
    if k == 0 {
        (0, n - 1)
    } else {
        (k - 1, n - k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_match_tables() {
        // n = 10: P(B <= 1) = 0.0107 <= 0.025 < P(B <= 2) = 0.0547, so the
        // interval is [x_(2), x_(9)] in 1-based ranks.
        assert_eq!(median_ci_ranks(10, 0.95), (1, 8));
        // n = 5: P(B <= 0) = 0.031 > 0.025: only the full range is safe.
        assert_eq!(median_ci_ranks(5, 0.95), (0, 4));
        assert_eq!(median_ci_ranks(1, 0.95), (0, 0));
    }

    #[test]
    fn summary_of_samples() {
        let s = summarize(&[5.0, 1.0, 4.0, 2.0, 3.0, 10.0, 6.0, 7.0, 8.0, 9.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.runs), (5.5, 1.0, 10.0, 10));
        assert_eq!((s.ci_low, s.ci_high), (2.0, 9.0));
        assert!(summarize(&[]).is_none());
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }
}
