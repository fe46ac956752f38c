//! The near-fastest candidates timed again, side by side, before one is
//! written.
//!
//! The search times each candidate once, when its turn comes; a device's
//! clocks and caches drift over a search, so two candidates timed a
//! minute apart differ by up to about 1% with no difference between them
//! (`choice`). That is why `choice` takes every candidate within `TIE` of
//! the fastest as equal and writes the first in the space's order. It
//! costs up to `TIE`: on the H100 at 4096 cubed (`mm-4096-86f4482`) the
//! product written took 3.053 ms where another had measured 3.009 ms.
//!
//! Timed again in interleaved rounds (each round times every one of them
//! once, in an order shifted by one each round, a short kernel with
//! enough runs to fill `ROUND_MS`), the candidates see the same drift,
//! and what differs between them is the kernels. The spread
//! of each candidate's times over the rounds measures the noise left;
//! a candidate stays tied with the fastest only within that spread (at
//! least `FLOOR`, at most `TIE`; `TIE` where the time allowed one round).
//! Of those, `choice::settle` writes the first in the space's order, as
//! before. Each keeps its time from the search, the one its log row holds
//! and the naive lowering's was measured beside: the rounds decide which
//! candidates are tied, not the times reported (on PoCL, another process
//! can slow the rounds as a whole).

use super::choice;
use super::measure::Bench;
use super::{Best, DeviceResult};
use std::time::{Duration, Instant};

/// Candidates timed again at most: the fastest of the near-fastest.
pub const MOST: usize = 6;

/// Rounds of timed runs per candidate.
pub const ROUNDS: usize = 3;

/// The narrowest band of times taken as equal after the rounds: the
/// profiling timer's resolution and the run-to-run jitter of one kernel
/// within a round.
pub const FLOOR: f64 = 0.005;

/// What the rounds gave: per candidate timed again (its number, its time
/// in the search, the median of its rounds), and the band of times taken
/// as equal.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Runoff {
    pub times: Vec<(usize, f64, f64)>,
    pub band: f64,
    pub rounds: usize,
}

/// A round times each candidate for at least this long (more runs than
/// `--runs` for a short kernel): the profiling timer counts microseconds;
/// on the H100 CGO 2018 `srad2`'s two near-fastest, both 6.5 us in the
/// search, took 6.8 and 7.5 us in rounds of five runs.
pub const ROUND_MS: f64 = 2.0;

/// Timed runs per round at most.
pub const MOST_RUNS: usize = 1000;

/// Timed runs per round for a candidate of `ms` in the search: `runs`,
/// or as many as fill `ROUND_MS` (at most `MOST_RUNS`).
pub fn runs_for(ms: f64, runs: usize) -> usize {
    super::measure::runs_to_fill(ms, ROUND_MS, runs, MOST_RUNS)
}

/// The band of times taken as equal, from each candidate's times over the
/// rounds: the largest relative spread of one candidate's times, at least
/// `FLOOR`, at most `choice::TIE`; `choice::TIE` where a candidate has
/// fewer than two rounds (no spread to measure the noise by).
pub fn band(rounds: &[Vec<f64>]) -> f64 {
    if rounds.iter().any(|ts| ts.len() < 2) {
        return choice::TIE;
    }
    let spread = |ts: &Vec<f64>| {
        let lo = ts.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ts.iter().copied().fold(0.0, f64::max);
        if lo > 0.0 && lo.is_finite() {
            hi / lo - 1.0
        } else {
            0.0
        }
    };
    rounds.iter().map(spread).fold(FLOOR, f64::max).min(choice::TIE)
}

/// Times the near-fastest candidates again (module documentation), the
/// rounds for `allowance` once they are built (a round begun is
/// finished), and leaves in `res.near` those whose rounds' median is
/// within the band of the fastest's (with their times from the search).
/// Nothing changes where fewer than two candidates are near the fastest,
/// a candidate cannot be built again, or no round was completed.
pub fn run(bench: &mut Bench<'_>, res: &mut DeviceResult, allowance: Duration) -> Option<Runoff> {
    if res.near.len() < 2 {
        return None;
    }
    let mut near = res.near.clone();
    near.sort_by(|a, b| a.median_ms.total_cmp(&b.median_ms).then(a.candidate.cmp(&b.candidate)));
    near.truncate(MOST);
    bench.cutoff_ms = None;
    bench.left_ms = f64::INFINITY;
    let bench: &Bench = bench;
    let mut built = Vec::new();
    for b in &near {
        match bench.rebuilt(&b.evaluated, &b.constraints, b.local, b.static_sizes) {
            Ok(r) => built.push(r),
            Err((status, message)) => {
                res.notes.push(format!(
                    "{}: candidate {} could not be timed again ({} {message}); the search's times decide",
                    res.device,
                    b.candidate,
                    status.as_str()
                ));
                return None;
            }
        }
    }
    // The rounds' time counts from here, the candidates built.
    let until = Instant::now() + allowance;
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); built.len()];
    for round in 0..ROUNDS {
        if round > 0 && Instant::now() >= until {
            break;
        }
        for k in 0..built.len() {
            let i = (k + round) % built.len();
            match bench.time_again(&built[i], runs_for(near[i].median_ms, bench.runs)) {
                Ok(t) if t.is_finite() && t > 0.0 => times[i].push(t),
                Ok(_) | Err(_) => {
                    res.notes.push(format!(
                        "{}: candidate {} gave no time when timed again; the search's times decide",
                        res.device, near[i].candidate
                    ));
                    return None;
                }
            }
        }
    }
    Some(settle(res, near, &times))
}

/// Replaces the near-fastest by the candidates timed again whose rounds'
/// median is within the band of the fastest's.
fn settle(res: &mut DeviceResult, near: Vec<Best>, times: &[Vec<f64>]) -> Runoff {
    let band = band(times);
    let medians: Vec<f64> =
        times.iter().map(|ts| crate::launch::stats::median(ts).unwrap_or(f64::INFINITY)).collect();
    let fastest = medians.iter().copied().fold(f64::INFINITY, f64::min);
    let out = Runoff {
        times: near.iter().zip(&medians).map(|(b, &m)| (b.candidate, b.median_ms, m)).collect(),
        band,
        rounds: times.iter().map(Vec::len).min().unwrap_or(0),
    };
    res.near =
        near.into_iter().zip(medians).filter(|(_, m)| *m <= fastest * (1.0 + band)).map(|(b, _)| b).collect();
    out
}

/// How long the rounds may take at most, once the candidates are built
/// again: a twentieth of the budget, at least two seconds (a round begun
/// is finished).
pub fn allowance(budget: Duration) -> Duration {
    budget.div_f64(20.0).max(Duration::from_secs(2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explore::choice::tests::best;

    #[test]
    fn the_band_is_the_widest_spread_of_one_candidate_within_its_bounds() {
        // Spreads 0.3% and 1%: the band is 1%.
        let b = band(&[vec![1.000, 1.003, 1.001], vec![2.0, 2.02, 2.01]]);
        assert!((b - 0.01).abs() < 1e-9, "{b}");
        // Tighter than the floor: the floor.
        assert_eq!(band(&[vec![1.0, 1.0001]]), FLOOR);
        // Wider than the tie band: the tie band.
        assert_eq!(band(&[vec![1.0, 1.5]]), choice::TIE);
        // One round measures no spread: the tie band.
        assert_eq!(band(&[vec![1.0], vec![2.0]]), choice::TIE);
    }

    #[test]
    fn short_kernels_get_runs_enough_to_fill_a_round() {
        assert_eq!(runs_for(3.0, 5), 5);
        assert_eq!(runs_for(0.006, 5), 334);
        assert_eq!(runs_for(0.0001, 5), MOST_RUNS);
        assert_eq!(runs_for(0.0, 5), MOST_RUNS);
        // `--runs` beyond the most is kept.
        assert_eq!(runs_for(0.0001, 2000), 2000);
    }

    #[test]
    fn candidates_apart_by_more_than_the_noise_are_no_longer_tied() {
        // In the search: 1 (first in order) at 3.05, 2 at 3.01, 3 at 3.04;
        // timed again, 2 is 1.4% faster than 1, 3 within 0.3% of 2.
        let near = vec![best(2, 3.01, 1, &[4]), best(3, 3.04, 2, &[0]), best(1, 3.05, 0, &[8])];
        let times = vec![vec![3.010, 3.012, 3.011], vec![3.020, 3.019, 3.021], vec![3.052, 3.051, 3.053]];
        let mut res = DeviceResult::blank("d".into(), "d".into());
        let r = settle(&mut res, near, &times);
        assert_eq!(r.rounds, 3);
        assert!((r.band - FLOOR).abs() < 1e-12);
        let kept: Vec<(usize, f64)> = res.near.iter().map(|b| (b.candidate, b.median_ms)).collect();
        // Tied by their rounds, each with its time from the search.
        assert_eq!(kept, [(2, 3.01), (3, 3.04)]);
        choice::settle(&mut res);
        // Of the two left, the first in the space's order.
        assert_eq!(res.best.as_ref().map(|b| b.candidate), Some(2));
        assert_eq!(r.times[2], (1, 3.05, 3.052));
    }
}
