//! The tuner (stage 3): which (shape, parameter values) points to measure
//! next. Every viable shape is first measured once at its representative
//! values; then rounds of successive halving keep the better half of the
//! shapes (by their best time so far) and spend twice as many measurements
//! per visit of a survivor on a local search around its best point (one
//! parameter moved to a neighbouring value of its domain first, then to
//! the other values; once those are measured, two parameters moved one
//! step each, the star's corners).
//!
//! Points go out in batches (`run_batches`), so that several identical
//! devices can measure one batch together. What a shape's local search
//! measures depends only on the seed and that shape's own times: its k-th
//! visit takes the next `2 << k` untried points of the star around its
//! best point, in an order drawn from the seed, the shape and that point.
//! A search that runs to its end therefore measures the same points,
//! and finds the same best, whatever the batch width, the number of
//! devices, or the split of the shapes into shards (`--shard`); the times
//! only decide which shapes are visited first.

use crate::validate::SplitMix64;
use std::collections::HashSet;

/// A point of the search space: a shape and one value per slot. Ordered
/// by shape, then values (`choice::pick` breaks near-ties by this order).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
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

/// Measures a batch of points: the results that are in, each with its
/// point, of this batch or earlier ones (all of them with one device; with
/// several, `split` returns before the last points are measured). Called
/// with no points, it waits for a result while any are in flight.
pub type Batches<'a> = dyn FnMut(&[Point]) -> Vec<(Point, Measure)> + 'a;

pub struct Tuner {
    spaces: Vec<ShapeSpace>,
    /// The order of the first phase (a static ranking).
    order: Vec<usize>,
    seed: u64,
    seen: HashSet<Point>,
    best: Vec<Option<(f64, Point)>>,
    /// Local-search visits per shape (a visit's size grows with them).
    visits: Vec<u32>,
    /// Points handed out per shape whose results have not come back
    /// (several devices: `split`). Such a shape is not visited, so that
    /// every visit starts from the shape's best with all its times in.
    in_flight: Vec<usize>,
}

impl Tuner {
    /// `order`: the shapes in the order of the first phase (a shard's
    /// shapes only, with `--shard`).
    pub fn new(spaces: Vec<ShapeSpace>, order: Vec<usize>, seed: u64) -> Tuner {
        let n = spaces.len();
        Tuner {
            spaces,
            order,
            seed,
            seen: HashSet::new(),
            best: vec![None; n],
            visits: vec![0; n],
            in_flight: vec![0; n],
        }
    }

    /// The points that differ from `c` in one slot, those one step away in
    /// their slot's domain mostly first: three in four draws take the next
    /// near one while there is one. The order is a function of the seed and
    /// the point alone.
    fn star(&self, c: &Point) -> Vec<Point> {
        let sp = &self.spaces[c.shape];
        let mut near = Vec::new();
        let mut far = Vec::new();
        for (i, dom) in sp.domains.iter().enumerate() {
            let at = dom.iter().position(|v| *v == c.values[i]);
            for (j, v) in dom.iter().enumerate() {
                if Some(j) == at {
                    continue;
                }
                let mut q = c.clone();
                q.values[i] = *v;
                let step = at.is_some_and(|a| a.abs_diff(j) == 1);
                if step {
                    near.push(q)
                } else {
                    far.push(q)
                }
            }
        }
        let key = format!("{}:{:?}", c.shape, c.values);
        let mut rng = SplitMix64::new(self.seed ^ 0x6c69_6674 ^ fnv(&key));
        shuffle(&mut near, &mut rng);
        shuffle(&mut far, &mut rng);
        let (mut near, mut far) = (near.into_iter().peekable(), far.into_iter().peekable());
        let mut out = Vec::new();
        loop {
            let take_far =
                far.peek().is_some() && (near.peek().is_none() || rng.next_u64().is_multiple_of(4));
            match if take_far { far.next() } else { near.next() } {
                Some(q) => out.push(q),
                None => return out,
            }
        }
    }

    /// The points one step away in two slots at once (the corners of the
    /// star), in an order that is a function of the seed and the point: a
    /// best point all of whose single moves are slower may still have a
    /// faster diagonal neighbour (elements per work-item and the local size
    /// moved together: 8 per work-item in groups of 16 to 4 with the
    /// driver's size took 0.060 to 0.033 ms on the H100).
    fn corners(&self, c: &Point) -> Vec<Point> {
        let sp = &self.spaces[c.shape];
        let steps: Vec<Vec<i64>> = sp
            .domains
            .iter()
            .enumerate()
            .map(|(i, dom)| {
                let Some(a) = dom.iter().position(|v| *v == c.values[i]) else { return Vec::new() };
                [a.checked_sub(1), Some(a + 1)]
                    .into_iter()
                    .flatten()
                    .filter_map(|j| dom.get(j).copied())
                    .collect()
            })
            .collect();
        let mut out = Vec::new();
        for i in 0..steps.len() {
            for j in i + 1..steps.len() {
                for (a, b) in steps[i].iter().flat_map(|a| steps[j].iter().map(move |b| (*a, *b))) {
                    let mut q = c.clone();
                    q.values[i] = a;
                    q.values[j] = b;
                    out.push(q);
                }
            }
        }
        let key = format!("corners {}:{:?}", c.shape, c.values);
        shuffle(&mut out, &mut SplitMix64::new(self.seed ^ 0x6c69_6674 ^ fnv(&key)));
        out
    }

    /// The next visit of shape `s`: up to `2 << visits` untried points of
    /// the star around its best point, then of its corners (none once both
    /// are used up; it stays so until the shape's best changes, which only
    /// its own measurements do).
    fn visit(&mut self, s: usize) -> Vec<Point> {
        if self.in_flight[s] > 0 {
            return Vec::new();
        }
        let Some(center) = self.best[s].as_ref().map(|(_, p)| p.clone()) else { return Vec::new() };
        let per = 2usize << self.visits[s].min(6);
        let mut chunk: Vec<Point> =
            self.star(&center).into_iter().filter(|q| !self.seen.contains(q)).take(per).collect();
        if chunk.is_empty() {
            chunk = self.corners(&center).into_iter().filter(|q| !self.seen.contains(q)).take(per).collect();
        }
        if !chunk.is_empty() {
            self.visits[s] += 1;
            self.seen.extend(chunk.iter().cloned());
        }
        chunk
    }

    fn record(&mut self, p: &Point, m: Measure) {
        if let Some(t) = m {
            let better = self.best[p.shape].as_ref().is_none_or(|(b, _)| t < *b);
            if better {
                self.best[p.shape] = Some((t, p.clone()));
            }
        }
    }

    /// Runs the search one point at a time: `measure` evaluates a point
    /// (`None` when it failed or was skipped); `stop` is asked before every
    /// point. `share_spent` says when the first phase has had its share of
    /// the budget: the shapes it has not reached wait until the second
    /// phase runs out of new points (the first phase's order puts the
    /// likely ones first).
    pub fn run(
        &mut self,
        measure: &mut dyn FnMut(&Point) -> Measure,
        stop: &dyn Fn() -> bool,
        share_spent: &dyn Fn() -> bool,
    ) {
        let mut each = |batch: &[Point]| -> Vec<(Point, Measure)> {
            batch.iter().map(|p| (p.clone(), if stop() { None } else { measure(p) })).collect()
        };
        self.run_batches(&mut each, stop, share_spent, 1);
    }

    /// Runs the search in batches of at least `width` points where the
    /// search has that many ready (the first phase's batches hold `width`
    /// shapes; a round of the second phase takes the kept shapes' visits,
    /// then the next shapes' until `width`): `measure` returns one result
    /// per point of a batch, in its order; `stop` is asked before every
    /// batch.
    pub fn run_batches(
        &mut self,
        measure: &mut Batches,
        stop: &dyn Fn() -> bool,
        share_spent: &dyn Fn() -> bool,
        width: usize,
    ) {
        let width = width.max(1);
        let mut rest = self.order.clone().into_iter();
        // Phase 1: every shape at its representative values, until its share.
        if !self.first_phase(&mut rest, measure, stop, share_spent, width) {
            return;
        }
        loop {
            if !self.halving(measure, stop, width) {
                return;
            }
            // Phase 2 has nothing new: the rest of phase 1, then again.
            if rest.len() == 0 || !self.first_phase(&mut rest, measure, stop, &|| false, width) {
                return;
            }
        }
    }

    /// Hands out `batch` and records the results that come back (of this
    /// batch or earlier ones).
    fn measure_batch(&mut self, batch: &[Point], measure: &mut Batches) {
        for p in batch {
            self.in_flight[p.shape] += 1;
        }
        for (p, m) in measure(batch) {
            self.in_flight[p.shape] -= 1;
            self.record(&p, m);
        }
    }

    /// Whether points handed out have not come back yet.
    fn waiting(&self) -> bool {
        self.in_flight.iter().any(|&n| n > 0)
    }

    /// Measures the shapes of `rest` at their representative values until
    /// `enough` (once one has a time) or the end; false when `stop`.
    fn first_phase(
        &mut self,
        rest: &mut std::vec::IntoIter<usize>,
        measure: &mut Batches,
        stop: &dyn Fn() -> bool,
        enough: &dyn Fn() -> bool,
        width: usize,
    ) -> bool {
        loop {
            if stop() {
                return false;
            }
            if enough() && self.best.iter().any(Option::is_some) {
                return true;
            }
            let batch: Vec<Point> = rest
                .by_ref()
                .take(width)
                .map(|s| Point { shape: s, values: self.spaces[s].defaults.clone() })
                .collect();
            if batch.is_empty() {
                return true;
            }
            self.seen.extend(batch.iter().cloned());
            self.measure_batch(&batch, measure);
        }
    }

    /// Phase 2: successive halving with local search, over the shapes
    /// within `KEEP_WITHIN` of the best; false when `stop`, true when no
    /// shape has a new point.
    fn halving(&mut self, measure: &mut Batches, stop: &dyn Fn() -> bool, width: usize) -> bool {
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
            // The kept shapes first; where their stars are used up (small
            // domains: srad's 504 x 458 grid leaves few divisors), or the
            // batch is narrower than `width`, the next shapes in rank order.
            let mut batch = Vec::new();
            for (rank, &(_, s)) in ranked.iter().enumerate() {
                if rank >= keep && batch.len() >= width {
                    break;
                }
                batch.extend(self.visit(s));
            }
            if stop() {
                return false;
            }
            if batch.is_empty() {
                if !self.waiting() {
                    return true;
                }
                // Only shapes with points in flight have more: wait for one.
                self.measure_batch(&[], measure);
                continue;
            }
            self.measure_batch(&batch, measure);
            round += 1;
        }
    }
}

/// A stable FNV-1a hash of `text` (the star's order must not change with
/// the standard library's hasher).
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// Fisher-Yates with `rng`.
fn shuffle<T>(v: &mut [T], rng: &mut SplitMix64) {
    for i in (1..v.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        v.swap(i, j);
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
    fn a_best_point_whose_single_moves_are_slower_has_its_corners_measured() {
        // Times fall only along the diagonal (a, b) -> (a - 1 step, b - 1
        // step): from the default (8, 16) every single move is slower, and
        // (4, 0) is found through the corners.
        let spaces =
            vec![ShapeSpace { domains: vec![vec![2, 4, 8, 16], vec![0, 16, 32]], defaults: vec![8, 16] }];
        let seen = trace_with(spaces, 5, 1000, |p| {
            Some(match (p.values[0], p.values[1]) {
                (4, 0) => 1.0,
                (8, 16) => 2.0,
                _ => 3.0,
            })
        });
        assert!(seen.contains(&Point { shape: 0, values: vec![4, 0] }), "{seen:?}");
        let all: HashSet<&Point> = seen.iter().collect();
        assert_eq!(all.len(), seen.len(), "no point measured twice");
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

    /// Shapes with two or three slots and a fake cost with one optimum
    /// per shape, to compare whole searches.
    fn wide() -> Vec<ShapeSpace> {
        (0..7)
            .map(|s| ShapeSpace {
                domains: (0..2 + s % 2).map(|k| (0..6 + k as i64).map(|v| 1 << v).collect()).collect(),
                defaults: vec![4; 2 + s % 2],
            })
            .collect()
    }

    fn wide_cost(p: &Point) -> Measure {
        if p.shape == 3 {
            return None;
        }
        let x: f64 =
            p.values.iter().enumerate().map(|(i, v)| ((*v as f64).log2() - (i + p.shape) as f64).abs()).sum();
        Some(1.0 + p.shape as f64 * 0.3 + x)
    }

    /// Every point a search measures to its end, in batches of `width`,
    /// over the shapes `order` (a shard's).
    fn complete(order: Vec<usize>, width: usize) -> Vec<Point> {
        let mut t = Tuner::new(wide(), order, 4);
        let mut seen = Vec::new();
        t.run_batches(
            &mut |b| {
                seen.extend(b.iter().cloned());
                b.iter().map(|p| (p.clone(), wide_cost(p))).collect()
            },
            &|| false,
            &|| false,
            width,
        );
        seen
    }

    fn best_of(points: &[Point]) -> Point {
        let timed = points.iter().filter_map(|p| wide_cost(p).map(|t| (t, p)));
        timed.min_by(|a, b| a.0.total_cmp(&b.0)).unwrap().1.clone()
    }

    #[test]
    fn a_complete_search_measures_the_same_points_at_any_width_and_in_shards() {
        let one = complete((0..7).collect(), 1);
        let set: HashSet<Point> = one.iter().cloned().collect();
        assert_eq!(set.len(), one.len(), "no point measured twice");
        assert!(one.len() > 30, "{}", one.len());
        for width in [2, 3, 8] {
            let w = complete((0..7).collect(), width);
            assert_eq!(w.len(), one.len(), "width {width}");
            assert_eq!(w.iter().cloned().collect::<HashSet<_>>(), set, "width {width}");
            assert_eq!(best_of(&w), best_of(&one));
        }
        // Another first-phase order (another device's ranking) too.
        assert_eq!(complete((0..7).rev().collect(), 1).into_iter().collect::<HashSet<_>>(), set);
        // Shards by shape: their union is the whole search, each point once.
        let a = complete(vec![0, 2, 4, 6], 1);
        let b = complete(vec![1, 3, 5], 2);
        assert_eq!(a.len() + b.len(), one.len());
        assert_eq!(a.into_iter().chain(b).collect::<HashSet<_>>(), set);
        // The optimum of shape 0 (values 1, 2) is found.
        assert_eq!(best_of(&one), Point { shape: 0, values: vec![1, 2] });
    }

    #[test]
    fn batches_start_with_the_first_phase_in_order() {
        let mut t = Tuner::new(wide(), (0..7).collect(), 4);
        let mut batches: Vec<Vec<Point>> = Vec::new();
        let count = std::cell::Cell::new(0);
        t.run_batches(
            &mut |b| {
                batches.push(b.to_vec());
                count.set(count.get() + 1);
                b.iter().map(|p| (p.clone(), wide_cost(p))).collect()
            },
            &|| count.get() >= 4,
            &|| false,
            3,
        );
        let shapes = |b: &Vec<Point>| b.iter().map(|p| p.shape).collect::<Vec<_>>();
        assert_eq!(shapes(&batches[0]), vec![0, 1, 2]);
        assert_eq!(shapes(&batches[1]), vec![3, 4, 5]);
        assert_eq!(shapes(&batches[2]), vec![6]);
        // The first round of halving: at least the width.
        assert!(batches[3].len() >= 3, "{:?}", batches[3]);
    }
}
