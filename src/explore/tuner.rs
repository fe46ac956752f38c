//! The tuner (stage 3): which (shape, parameter values) point to measure
//! next. Every viable shape is first measured once at its representative
//! values; then rounds of successive halving keep the better half of the
//! shapes (by their best time so far) and spend twice as many measurements
//! per survivor on a local search around its best point (one parameter
//! moved to a neighbouring value of its domain, or now and then to a random
//! one). Points are drawn from a SplitMix64 stream seeded by `--seed`, so
//! for a given seed and the same times the sequence is the same; the times
//! only decide which shapes survive.

use crate::validate::SplitMix64;
use std::collections::HashSet;

/// A point of the search space: a shape and one value per slot.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Point {
    pub shape: usize,
    pub values: Vec<i64>,
}

/// What the tuner needs to know of a shape: its slot domains and defaults.
#[derive(Clone, Debug)]
pub struct ShapeSpace {
    pub domains: Vec<Vec<i64>>,
    pub defaults: Vec<i64>,
}

/// The result of measuring a point: a time when it validated.
pub type Measure = Option<f64>;

pub struct Tuner {
    spaces: Vec<ShapeSpace>,
    /// The order of the first phase (a static ranking).
    order: Vec<usize>,
    rng: SplitMix64,
    seen: HashSet<Point>,
    best: Vec<Option<(f64, Point)>>,
}

impl Tuner {
    /// `order`: the shapes in the order of the first phase.
    pub fn new(spaces: Vec<ShapeSpace>, order: Vec<usize>, seed: u64) -> Tuner {
        let n = spaces.len();
        Tuner {
            spaces,
            order,
            rng: SplitMix64::new(seed ^ 0x6c69_6674),
            seen: HashSet::new(),
            best: vec![None; n],
        }
    }

    fn below(&mut self, n: usize) -> usize {
        (self.rng.next_u64() % n.max(1) as u64) as usize
    }

    /// A neighbour of `p`: one slot moved one step in its domain (three
    /// times in four) or to a random value of it.
    fn neighbour(&mut self, p: &Point) -> Option<Point> {
        let sp = &self.spaces[p.shape];
        let movable: Vec<usize> = (0..sp.domains.len()).filter(|&i| sp.domains[i].len() > 1).collect();
        if movable.is_empty() {
            return None;
        }
        let i = movable[self.below(movable.len())];
        let dom = self.spaces[p.shape].domains[i].clone();
        let at = dom.iter().position(|v| *v == p.values[i]).unwrap_or(0);
        let j = if self.below(4) == 0 {
            self.below(dom.len())
        } else if at == 0 || (at + 1 < dom.len() && self.below(2) == 0) {
            at + 1
        } else {
            at - 1
        };
        let mut q = p.clone();
        q.values[i] = dom[j.min(dom.len() - 1)];
        Some(q)
    }

    fn record(&mut self, p: &Point, m: Measure) {
        if let Some(t) = m {
            let better = self.best[p.shape].as_ref().is_none_or(|(b, _)| t < *b);
            if better {
                self.best[p.shape] = Some((t, p.clone()));
            }
        }
    }

    /// Runs the search: `measure` evaluates a point (`None` when it failed
    /// or was skipped); `stop` is asked before every point. `share_spent`
    /// says when the first phase has had its share of the budget: the
    /// shapes it has not reached wait until the second phase runs out of
    /// new points (the first phase's order puts the likely ones first).
    pub fn run(
        &mut self,
        measure: &mut dyn FnMut(&Point) -> Measure,
        stop: &dyn Fn() -> bool,
        share_spent: &dyn Fn() -> bool,
    ) {
        let mut rest = self.order.clone().into_iter();
        // Phase 1: every shape at its representative values, until its share.
        if !self.first_phase(&mut rest, measure, stop, share_spent) {
            return;
        }
        loop {
            if !self.halving(measure, stop) {
                return;
            }
            // Phase 2 has nothing new: the rest of phase 1, then again.
            if rest.len() == 0 || !self.first_phase(&mut rest, measure, stop, &|| false) {
                return;
            }
        }
    }

    /// Measures the shapes of `rest` at their representative values until
    /// `enough` (once one has a time) or the end; false when `stop`.
    fn first_phase(
        &mut self,
        rest: &mut std::vec::IntoIter<usize>,
        measure: &mut dyn FnMut(&Point) -> Measure,
        stop: &dyn Fn() -> bool,
        enough: &dyn Fn() -> bool,
    ) -> bool {
        loop {
            if stop() {
                return false;
            }
            if enough() && self.best.iter().any(Option::is_some) {
                return true;
            }
            let Some(s) = rest.next() else { return true };
            let p = Point { shape: s, values: self.spaces[s].defaults.clone() };
            self.seen.insert(p.clone());
            let m = measure(&p);
            self.record(&p, m);
        }
    }

    /// Phase 2: successive halving with local search, over the shapes
    /// within `KEEP_WITHIN` of the best; false when `stop`, true when no
    /// shape has a new point.
    fn halving(&mut self, measure: &mut dyn FnMut(&Point) -> Measure, stop: &dyn Fn() -> bool) -> bool {
        let mut round = 0u32;
        loop {
            let mut ranked: Vec<(f64, usize)> =
                self.best.iter().enumerate().filter_map(|(i, b)| b.as_ref().map(|(t, _)| (*t, i))).collect();
            if ranked.is_empty() {
                return true;
            }
            ranked.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            // A shape many times slower than the best rarely overtakes it
            // by its parameters; halving alone would spend half of the
            // first round on such shapes when there are hundreds.
            let close = ranked.iter().filter(|(t, _)| *t <= KEEP_WITHIN * ranked[0].0).count();
            let keep = (ranked.len() >> (round + 1)).min(close).max(1);
            let per = 2usize << round.min(6);
            let mut progressed = false;
            // The kept shapes first; where their neighbourhoods are used up
            // (small domains: srad's 504 x 458 grid leaves few divisors),
            // the next shapes in rank order, until one point is new.
            for (rank, &(_, s)) in ranked.iter().enumerate() {
                if rank >= keep && progressed {
                    break;
                }
                let mut tries = 0;
                let mut done = 0;
                while done < per && tries < per * 8 {
                    tries += 1;
                    let Some(center) = self.best[s].as_ref().map(|(_, p)| p.clone()) else { break };
                    let Some(q) = self.neighbour(&center) else { break };
                    if !self.seen.insert(q.clone()) {
                        continue;
                    }
                    if stop() {
                        return false;
                    }
                    let m = measure(&q);
                    self.record(&q, m);
                    done += 1;
                    progressed = true;
                }
            }
            if !progressed {
                return true;
            }
            round += 1;
        }
    }
}

/// Shapes whose best time is within this factor of the best shape's are
/// the ones the second phase tunes (at least one).
const KEEP_WITHIN: f64 = 4.0;

#[cfg(test)]
mod tests {
    use super::*;

    fn spaces() -> Vec<ShapeSpace> {
        vec![
            ShapeSpace { domains: vec![], defaults: vec![] },
            ShapeSpace { domains: vec![vec![2, 4, 8, 16, 32, 64]], defaults: vec![8] },
            ShapeSpace { domains: vec![vec![2, 4, 8], vec![0, 32, 64]], defaults: vec![4, 0] },
        ]
    }

    /// A fake cost with an optimum at (shape 1, 32).
    fn cost(p: &Point) -> Measure {
        match p.shape {
            0 => Some(10.0),
            1 => Some(1.0 + (p.values[0] - 32).abs() as f64 / 8.0),
            _ => (p.values[0] != 8).then_some(5.0),
        }
    }

    fn trace(seed: u64, limit: usize) -> Vec<Point> {
        trace_with(spaces(), seed, limit, cost)
    }

    /// The points a search over `spaces` (first phase in their order,
    /// no share) measures, `limit` at most, with fake times `cost`.
    fn trace_with(
        spaces: Vec<ShapeSpace>,
        seed: u64,
        limit: usize,
        cost: fn(&Point) -> Measure,
    ) -> Vec<Point> {
        let mut t = Tuner::new(spaces.clone(), (0..spaces.len()).collect(), seed);
        let mut seen = Vec::new();
        let count = std::cell::Cell::new(0);
        t.run(
            &mut |p| {
                seen.push(p.clone());
                count.set(count.get() + 1);
                cost(p)
            },
            &|| count.get() >= limit,
            &|| false,
        );
        seen
    }

    #[test]
    fn same_seed_same_sequence_and_finds_the_optimum() {
        let a = trace(7, 20);
        assert_eq!(a, trace(7, 20));
        assert_eq!(
            &a[..3],
            &[
                Point { shape: 0, values: vec![] },
                Point { shape: 1, values: vec![8] },
                Point { shape: 2, values: vec![4, 0] }
            ]
        );
        assert!(a.contains(&Point { shape: 1, values: vec![32] }), "{a:?}");
        let all: HashSet<&Point> = a.iter().collect();
        assert_eq!(all.len(), a.len(), "no point measured twice");
    }

    #[test]
    fn stops_when_the_space_is_exhausted() {
        let a = trace(1, 1000);
        // 1 + 6 + 9 points exist; local search visits only neighbours of
        // the best shapes, so it ends with no more than that.
        assert!(a.len() <= 16 && a.len() >= 7, "{}", a.len());
    }

    #[test]
    fn goes_on_with_the_next_shapes_when_the_best_is_used_up() {
        // Shape 0 is best and has one other point; shapes 1 and 2 survive
        // no halving, but their neighbours are still searched once shape
        // 0 has nothing new (before, the search ended after 4 points).
        let spaces = vec![
            ShapeSpace { domains: vec![vec![1, 2]], defaults: vec![1] },
            ShapeSpace { domains: vec![vec![8, 16, 32]], defaults: vec![8] },
            ShapeSpace { domains: vec![vec![4, 8]], defaults: vec![4] },
        ];
        let mut t = Tuner::new(spaces, vec![0, 1, 2], 3);
        let mut seen = Vec::new();
        t.run(
            &mut |p| {
                seen.push(p.clone());
                Some(match p.shape {
                    0 => 1.0,
                    1 => 5.0 - p.values[0] as f64 / 16.0,
                    _ => 10.0,
                })
            },
            &|| false,
            &|| false,
        );
        assert!(seen.contains(&Point { shape: 1, values: vec![32] }), "{seen:?}");
        assert_eq!(seen.len(), 2 + 3 + 2, "every point once: {seen:?}");
    }

    #[test]
    fn the_first_phase_yields_to_halving_once_its_share_is_spent() {
        // Shape 0 is measured first and is the best by far; the other 20
        // shapes wait while shape 0's neighbourhood has new points, and
        // are measured once it is used up.
        let mut spaces = vec![ShapeSpace { domains: vec![vec![1, 2, 3, 4, 5]], defaults: vec![3] }];
        spaces.extend((0..20).map(|_| ShapeSpace { domains: vec![], defaults: vec![] }));
        let mut t = Tuner::new(spaces, (0..21).collect(), 5);
        let mut seen = Vec::new();
        t.run(
            &mut |p| {
                seen.push(p.clone());
                Some(if p.shape == 0 { 1.0 + p.values[0] as f64 / 100.0 } else { 50.0 })
            },
            &|| false,
            &|| true,
        );
        assert_eq!(seen[0], Point { shape: 0, values: vec![3] });
        assert!(seen[1..5].iter().all(|p| p.shape == 0), "{seen:?}");
        assert_eq!(seen.len(), 25, "every point once: {seen:?}");
    }

    #[test]
    fn halving_tunes_only_the_shapes_close_to_the_best() {
        // Shapes 1 and 2 are 10 times slower than shape 0: the first round
        // of halving searches shape 0's neighbours only.
        let dom = || ShapeSpace { domains: vec![vec![1, 2, 3, 4, 5, 6, 7, 8]], defaults: vec![1] };
        let seen =
            trace_with(vec![dom(), dom(), dom()], 9, 5, |p| Some(if p.shape == 0 { 1.0 } else { 10.0 }));
        assert!(seen[3..].iter().all(|p| p.shape == 0), "{seen:?}");
    }
}
