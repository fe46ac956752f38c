//! Rust gold functions and structured input generators, for benchmarks whose
//! validation or inputs cannot come from the config alone.
//!
//! Configs name them: `validation: { gold: rust:<name> }` and
//! `init: { generator: <name> }`. `part1` holds the CGO 2017 benchmarks of
//! N-Body, MD, K-Means, NN and MRI-Q; `part2` the convolution and the linear
//! algebra ones; `basic` the first benchmarks (dot, transpose, scal);
//! `cgo18` the stencils; `icfp15` the ICFP 2015 suite's own.

use super::data::{Arrays, HostArray, Sizes};
pub use error::{BasicLookup, GoldError, Part1Lookup};

mod basic;
pub mod cgo18;
mod error;
mod icfp15;
mod part1;
mod part2;

/// Computes the expected outputs of gold function `name`.
/// `None`: no such gold function.
pub fn gold(name: &str, inputs: &Arrays, sizes: &Sizes) -> Option<Result<Arrays, GoldError>> {
    part1::gold(name, inputs, sizes)
        .or_else(|| part2::gold(name, inputs, sizes))
        .or_else(|| basic::gold(name, inputs, sizes))
        .or_else(|| cgo18::gold(name, inputs, sizes))
        .or_else(|| icfp15::gold(name, inputs, sizes))
}

/// Generates the structured input `input` with generator `name`.
/// `None`: no such generator.
pub fn generate(name: &str, input: &str, sizes: &Sizes, seed: u64) -> Option<Result<HostArray, GoldError>> {
    part1::generate(name, input, sizes, seed)
        .or_else(|| part2::generate(name, input, sizes, seed))
        .or_else(|| cgo18::generate(name, input, sizes, seed))
}

/// Size `name`, checked to be a positive length (`part2`'s and `cgo18`'s lookups).
pub(crate) fn size(sizes: &Sizes, name: &str) -> Result<usize, GoldError> {
    let v = *sizes.get(name).ok_or_else(|| GoldError::SizeUnbound(name.into()))?;
    usize::try_from(v)
        .ok()
        .filter(|&n| n > 0)
        .ok_or(GoldError::SizeNotPositive { name: name.into(), value: v })
}

/// Float input `name`, checked to hold exactly `len` elements.
pub(crate) fn floats<'a>(inputs: &'a Arrays, name: &str, len: usize) -> Result<&'a [f32], GoldError> {
    match inputs.get(name) {
        Some(HostArray::F32(v)) if v.len() == len => Ok(v),
        Some(HostArray::F32(v)) => {
            Err(GoldError::InputLength { name: name.into(), len: v.len(), expected: len })
        }
        Some(HostArray::I32(_)) => Err(GoldError::InputNotFloat(name.into())),
        None => Err(GoldError::InputMissing(name.into())),
    }
}

/// Runs `body(first_row, rows_out)` over `out` split into contiguous chunks
/// of whole rows (`row_len` elements each), one chunk per available core.
pub(crate) fn par_rows<F>(out: &mut [f32], row_len: usize, body: F)
where
    F: Fn(usize, &mut [f32]) + Sync,
{
    let rows = out.len() / row_len.max(1);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(rows.max(1));
    let rows_per = rows.div_ceil(threads).max(1);
    std::thread::scope(|s| {
        for (i, chunk) in out.chunks_mut(rows_per * row_len.max(1)).enumerate() {
            let body = &body;
            s.spawn(move || body(i * rows_per, chunk));
        }
    });
}
