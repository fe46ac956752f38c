//! Rust gold functions and structured input generators, for benchmarks whose
//! validation or inputs cannot come from the config alone.
//!
//! Configs name them: `validation: { gold: rust:<name> }` and
//! `init: { generator: <name> }`.

use super::data::{Arrays, Sizes};

/// Computes the expected outputs of benchmark gold function `name`.
/// `None`: no such gold function.
pub fn gold(name: &str, inputs: &Arrays, sizes: &Sizes) -> Option<Result<Arrays, String>> {
    let _ = (inputs, sizes);
    match name {
        _ => None,
    }
}

/// Generates the structured input `input` with generator `name`.
/// `None`: no such generator.
pub fn generate(
    name: &str,
    input: &str,
    sizes: &Sizes,
    seed: u64,
) -> Option<Result<super::data::HostArray, String>> {
    let _ = (input, sizes, seed);
    match name {
        _ => None,
    }
}
