//! Fuzzing the front end and the compiler (issue 12): a token mutator over
//! the repository's `.lift` programs (`mutate`), a generator of random
//! well-typed low-level programs (`gen`), the checks each input goes
//! through (`check`) and a watchdog that bounds each input's time
//! (`watchdog`). Shared by `tests/fuzz.rs`, `tests/random_programs.rs` and
//! `examples/fuzz.rs` (the long runs); see docs/TESTING.md.

#![allow(dead_code)]

pub mod check;
pub mod driver;
pub mod gen;
pub mod mutate;
pub mod watchdog;

/// The library's SplitMix64 (`lift::validate::SplitMix64`): small,
/// seedable, deterministic; every run with one seed tries the same inputs.
#[derive(Clone, Debug)]
pub struct Rng(lift::validate::SplitMix64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(lift::validate::SplitMix64::new(seed))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as i64
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }

    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }

    /// A float in [-1, 1).
    pub fn float(&mut self) -> f32 {
        ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
}

/// The `.lift` programs of the repository, in a fixed order: the seeds of
/// the mutator.
pub fn corpus(root: &std::path::Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    for dir in
        ["benchmarks", "benchmarks/cgo18", "benchmarks/icfp15", "tests/programs", "examples", "tests/fuzz"]
    {
        let Ok(rd) = std::fs::read_dir(root.join(dir)) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "lift") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
        .into_iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(&p).ok()?;
            Some((p.strip_prefix(root).unwrap_or(&p).display().to_string(), text))
        })
        .collect()
}
