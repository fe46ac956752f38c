//! The search's fastest candidates measured again compiled for the sizes
//! they are timed at.
//!
//! The search compiles each candidate once for every size: the kernel it
//! validates at a small size is the kernel it times at the requested one.
//! A kernel compiled for one size (`lift compile --size`, the sizes folded
//! into its indices and loop bounds) can be faster or slower than that: on
//! the H100 at 4096 cubed, one `mm_nt` tiling took 3.56 ms for every size
//! and 3.08 ms for its size, and one `mm_nn` tiling (its chunk unrolled)
//! 3.17 ms and 3.96 ms (`lift compile` of the logged derivations, hand
//! timed). Which way it goes is the driver compiler's business, so it is
//! measured: once the search is over, its `LEADERS` fastest candidates
//! within `BAND` of the fastest are compiled for the timed sizes,
//! validated by their kernels compiled for the validation sizes, timed,
//! and logged as rows of their own (`sizes=static` in their parameters);
//! those whose kernel does not change are left out.
//! One that is faster joins the near-fastest (`choice`); near-ties go to
//! the kernel for every size, the earlier candidate.
//!
//! It takes the search's last tenth of the budget (`RESERVE`), and stops
//! when that is spent; the search keeps that tenth where no leader's
//! kernel changes compiled for the timed sizes (an elementwise map's does
//! not read its length), checked as leaders come (`Bench::specialises`). At 4096 cubed on the H100 (60 s each,
//! `reports/nvidia-h100-80gb-hbm3/mm-4096-86f4482/`) the four fastest
//! products of each layout took 1-2% less compiled for their size: within
//! the tie band, so the kernels for every size were written.

use super::choice;
use super::log::{fnv_hex, Row};
use super::measure::{Bench, Status};
use super::{Best, DeviceResult, ExploreError};
use std::time::Instant;

/// Candidates measured again at most. The `mm_nt` tiling above was the
/// seventh fastest for every size, and each costs two driver builds, a
/// validation run and the timed runs (0.4 s at 4096 cubed on the H100).
pub const LEADERS: usize = 8;

/// How much slower than the fastest a candidate may be and still be
/// measured again: a kernel compiled for its size took 14% less time than
/// the same kernel for every size (above).
pub const BAND: f64 = 1.25;

/// The share of the budget kept for this phase.
pub const RESERVE: f64 = 0.1;

/// The parameter marking a row or a best candidate compiled for its sizes.
pub const MARK: &str = "sizes=static";

/// A candidate's identity in the log (device, derivation, parameters).
type LogId = (String, String, String);

/// Appends a row to the log: its candidate number.
pub type Record<'r> = dyn FnMut(&LogId, Row) -> Result<usize, ExploreError> + 'r;

/// Whether a candidate measured at `t` ms is within `BAND` of the fastest
/// of `leaders` (or there are none yet).
pub fn leading(t: f64, leaders: &[Best]) -> bool {
    leaders.iter().map(|b| b.median_ms).min_by(f64::total_cmp).is_none_or(|f| t <= f * BAND)
}

/// Keeps `b` among the `LEADERS` fastest of distinct kernels.
pub fn offer(leaders: &mut Vec<Best>, b: Best) {
    if leaders.iter().any(|x| x.hash == b.hash) {
        return;
    }
    leaders.push(b);
    leaders.sort_by(|a, b| a.median_ms.total_cmp(&b.median_ms).then(a.candidate.cmp(&b.candidate)));
    let fastest = leaders[0].median_ms;
    leaders.retain(|x| x.median_ms <= fastest * BAND);
    leaders.truncate(LEADERS);
}

/// Measures the leaders compiled for the timed sizes (module
/// documentation) until `end`; each measurement is logged through
/// `record`, which gives its candidate number.
pub fn run(
    bench: &mut Bench,
    res: &mut DeviceResult,
    end: Instant,
    record: &mut Record<'_>,
) -> Result<(), ExploreError> {
    for b in std::mem::take(&mut res.leaders) {
        if Instant::now() >= end {
            break;
        }
        if !bench.specialises(&b.evaluated, b.local) {
            continue;
        }
        bench.cutoff_ms = None;
        bench.left_ms = end.saturating_duration_since(Instant::now()).as_secs_f64() * 1e3;
        let o = bench.evaluate_specialised(&b.evaluated, &b.constraints, b.local);
        let params = format!("{} {MARK}", b.params);
        let hash = fnv_hex(&format!("{} {MARK}", b.hash));
        let derivation = b.derivation.join(" ; ");
        let row = Row {
            candidate: 0,
            device: res.device.clone(),
            hash: hash.clone(),
            shape: b.point.shape,
            status: o.status.as_str().to_string(),
            median_ms: o.median_ms,
            params: params.clone(),
            derivation: derivation.clone(),
            sizes: super::sizes_text(bench.sizes),
            valid_sizes: super::sizes_text(&o.valid_sizes),
            message: o.message.clone(),
        };
        let candidate = record(&(res.device.clone(), derivation, params.clone()), row)?;
        res.tried += 1;
        let t = match (o.status, o.median_ms) {
            (Status::Ok, Some(t)) if t.is_finite() && t > 0.0 => t,
            (Status::Invalid, _) => {
                // Its kernel for every size validated: the sizes the
                // compiler folded in changed the result.
                res.notes.push(format!(
                    "{}: candidate {} compiled for its sizes gave a wrong result where compiled for every size \
                     it did not (candidate {candidate} of the log: {}); a compiler bug, please report it",
                    res.device, b.candidate, o.message
                ));
                continue;
            }
            _ => continue,
        };
        res.valid += 1;
        res.specialised.push((b.candidate, b.median_ms, candidate, t));
        if t < b.median_ms {
            let s = Best { median_ms: t, candidate, hash, params, static_sizes: true, ..b };
            choice::offer(&mut res.near, s);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn best(candidate: usize, ms: f64) -> Best {
        crate::explore::choice::tests::best(candidate, ms, 0, &[candidate as i64])
    }

    #[test]
    fn leaders_are_the_fastest_distinct_kernels_within_the_band() {
        let mut l = Vec::new();
        let times = [3.5, 3.0, 3.9, 3.1, 3.2, 3.3, 3.05, 3.6, 3.4, 3.45, 3.15];
        for (c, ms) in times.into_iter().enumerate() {
            offer(&mut l, best(c, ms));
        }
        // 3.9 is beyond 1.25 x 3.0; of the rest the eight fastest.
        let kept: Vec<usize> = l.iter().map(|b| b.candidate).collect();
        assert_eq!(kept, [1, 6, 3, 10, 4, 5, 8, 9]);
        // The same kernel again is not a second leader.
        offer(&mut l, best(1, 2.0));
        assert_eq!(l.iter().filter(|b| b.hash == "1").count(), 1);
        assert!(leading(3.7, &l) && !leading(3.8, &l));
        assert!(leading(100.0, &[]));
    }
}
