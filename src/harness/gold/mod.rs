//! Rust gold functions and structured input generators, for benchmarks whose
//! validation or inputs cannot come from the config alone.
//!
//! Configs name them: `validation: { gold: rust:<name> }` and
//! `init: { generator: <name> }`. `part1` holds the CGO 2017 benchmarks of
//! N-Body, MD, K-Means, NN and MRI-Q; `part2` the convolution and the linear
//! algebra ones; `basic` the first benchmarks (dot, transpose, scal);
//! `cgo18` the stencils; `icfp15` the ICFP 2015 suite's own.

use super::data::{Arrays, HostArray, Sizes};

mod basic;
pub mod cgo18;
mod icfp15;
mod part1;
mod part2;

/// Computes the expected outputs of gold function `name`.
/// `None`: no such gold function.
pub fn gold(name: &str, inputs: &Arrays, sizes: &Sizes) -> Option<Result<Arrays, String>> {
    part1::gold(name, inputs, sizes)
        .or_else(|| part2::gold(name, inputs, sizes))
        .or_else(|| basic::gold(name, inputs, sizes))
        .or_else(|| cgo18::gold(name, inputs, sizes))
        .or_else(|| icfp15::gold(name, inputs, sizes))
}

/// Generates the structured input `input` with generator `name`.
/// `None`: no such generator.
pub fn generate(name: &str, input: &str, sizes: &Sizes, seed: u64) -> Option<Result<HostArray, String>> {
    part1::generate(name, input, sizes, seed)
        .or_else(|| part2::generate(name, input, sizes, seed))
        .or_else(|| cgo18::generate(name, input, sizes, seed))
}
