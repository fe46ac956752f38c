//! Which measured candidate a search writes as its best.
//!
//! Two runs of the same search time the same kernels a little differently
//! (on the H100 and H200, the median of one program moves by about 1%
//! between runs), so "the fastest" of two candidates within that noise is a
//! coin toss: a second run, or the same search split over two GPUs, could
//! write a different program although neither is measurably faster. The
//! search therefore keeps every measured candidate within `TIE` of the
//! fastest (`offer`) and at its end writes the one first in the search
//! space's order (`settle`: the lowest shape, then the lowest parameter
//! values). Where two runs measured the same near-equal candidates, and
//! their times moved by less than `TIE`, they write the same program; the
//! one written is at most `TIE` slower than the fastest measured, and the
//! result says which that was. Runs on two cards of one model can differ by
//! more (gemv's fastest 0.0281 against 0.0287 ms on two H100 at `0cb1927`),
//! and the tuner's path follows each shape's fastest point, so this makes
//! agreement likelier, not certain (docs/EXPLORE.md, "Several devices").

use super::tuner::Point;
use super::{Best, DeviceResult};

/// Times within this fraction of the fastest are taken as equal.
pub const TIE: f64 = 0.02;

/// Whether `t` is within `TIE` of `fastest`.
pub fn within(t: f64, fastest: f64) -> bool {
    t <= fastest * (1.0 + TIE)
}

/// The fastest time among the near-fastest candidates so far.
pub fn fastest_ms(near: &[Best]) -> Option<f64> {
    near.iter().map(|x| x.median_ms).reduce(f64::min)
}

/// Keeps a measured candidate among the near-fastest, and drops those the
/// new fastest leaves outside the band.
pub fn offer(near: &mut Vec<Best>, b: Best) {
    let fastest = fastest_ms(near).map_or(b.median_ms, |f| f.min(b.median_ms));
    if !within(b.median_ms, fastest) {
        return;
    }
    near.retain(|x| within(x.median_ms, fastest));
    near.push(b);
}

/// The candidate to write: of those within `TIE` of the fastest, the first
/// in the space's order (ties between equal points, which a search measures
/// once, by candidate number).
pub fn pick(near: &[Best]) -> Option<&Best> {
    let fastest = fastest_ms(near)?;
    near.iter()
        .filter(|x| within(x.median_ms, fastest))
        .min_by(|a, b| order(&a.point).cmp(&order(&b.point)).then(a.candidate.cmp(&b.candidate)))
}

/// A point's place in the space's order.
fn order(p: &Point) -> (usize, &[i64]) {
    (p.shape, &p.values)
}

/// Sets the result's best to `pick`'s choice, and `fastest` to the fastest
/// candidate when that is another.
pub fn settle(res: &mut DeviceResult) {
    let Some(chosen) = pick(&res.near).cloned() else { return };
    let fastest = res.near.iter().min_by(|a, b| a.median_ms.total_cmp(&b.median_ms));
    res.fastest = fastest.filter(|f| f.candidate != chosen.candidate).map(|f| (f.candidate, f.median_ms));
    res.best = Some(chosen);
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::ir::Program;

    /// A measured candidate (hash: its number) for the tests of the
    /// choices among them.
    pub(in crate::explore) fn best(candidate: usize, ms: f64, shape: usize, values: &[i64]) -> Best {
        Best {
            median_ms: ms,
            candidate,
            point: Point { shape, values: values.to_vec() },
            hash: format!("{candidate}"),
            program: Program::default(),
            derivation: Vec::new(),
            params: String::new(),
            local: None,
            measured: true,
            evaluated: Program::default(),
            constraints: Vec::new(),
            static_sizes: false,
        }
    }

    fn chosen(offers: &[Best]) -> usize {
        let mut near = Vec::new();
        for b in offers {
            offer(&mut near, b.clone());
        }
        pick(&near).map(|b| b.candidate).expect("a candidate")
    }

    #[test]
    fn near_equal_times_give_the_first_point_in_any_order_of_measurement() {
        // 1: shape 2; 2: shape 1 at 1.5% slower; 3: shape 1 with lower values.
        let a = best(1, 1.000, 2, &[64]);
        let b = best(2, 1.015, 1, &[128]);
        let c = best(3, 1.010, 1, &[32]);
        let far = best(4, 1.100, 0, &[]);
        let all = [a, b, c, far];
        let mut orders = vec![vec![0, 1, 2, 3], vec![3, 2, 1, 0], vec![1, 3, 0, 2], vec![2, 0, 3, 1]];
        for o in orders.drain(..) {
            let offers: Vec<Best> = o.iter().map(|&i| all[i].clone()).collect();
            assert_eq!(chosen(&offers), 3, "order {o:?}");
        }
    }

    #[test]
    fn a_clearly_faster_candidate_is_written_and_the_band_follows_it() {
        let slow_first = best(1, 1.00, 0, &[]);
        let fast = best(2, 0.90, 3, &[8]);
        assert_eq!(chosen(&[slow_first.clone(), fast.clone()]), 2);
        let mut near = Vec::new();
        offer(&mut near, slow_first);
        offer(&mut near, fast);
        assert_eq!(near.len(), 1, "the slower one left the band");
        // Settling says which was fastest when it is not the one written.
        let mut res = DeviceResult::blank("d".into(), "d".into());
        res.tried = 2;
        res.valid = 2;
        res.measured = 2;
        res.near = vec![best(5, 1.00, 1, &[]), best(6, 0.99, 2, &[])];
        settle(&mut res);
        assert_eq!(res.best.as_ref().map(|b| b.candidate), Some(5));
        assert_eq!(res.fastest, Some((6, 0.99)));
    }
}
