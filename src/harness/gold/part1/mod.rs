//! Gold functions and structured generators of the CGO 2017 benchmarks
//! N-Body (NVIDIA and AMD share one gold), MD, K-Means, NN and MRI-Q.
//!
//! Gold functions read their inputs by the names the configs give them and
//! return the validated buffer under its config name. They compute in f64
//! wherever the kernels accumulate long sums, so the tolerance in a config
//! measures the kernel's float error alone.

use super::{GoldError, Part1Lookup};
use crate::harness::data::{Arrays, HostArray, Sizes};

mod kmeans;
mod md;
mod nbody;
mod simple;

/// Gold functions: `nbody`, `md`, `kmeans`, `nn`, `mri_q`.
pub fn gold(name: &str, inputs: &Arrays, sizes: &Sizes) -> Option<Result<Arrays, GoldError>> {
    let result = match name {
        "nbody" => nbody::gold(inputs, sizes),
        "md" => md::gold(inputs, sizes),
        "kmeans" => kmeans::gold(inputs, sizes),
        "nn" => simple::nn_gold(inputs, sizes),
        "mri_q" => simple::mri_q_gold(inputs, sizes),
        _ => return None,
    };
    Some(result.map_err(|e| GoldError::In { name: name.into(), source: Box::new(e) }))
}

/// Generators: `nbody_bodies`, `md_positions`, `md_neighbours`,
/// `kmeans_features`, `kmeans_clusters`.
pub fn generate(name: &str, input: &str, sizes: &Sizes, seed: u64) -> Option<Result<HostArray, GoldError>> {
    let result = match name {
        "nbody_bodies" => nbody::bodies(sizes, seed),
        "md_positions" => md::positions(sizes),
        "md_neighbours" => md::neighbours(sizes),
        "kmeans_features" => kmeans::features(sizes),
        "kmeans_clusters" => kmeans::clusters(sizes),
        _ => return None,
    };
    Some(result.map_err(|e| GoldError::Generator {
        name: name.into(),
        input: input.into(),
        source: Box::new(e),
    }))
}

/// A small deterministic generator (SplitMix64): inputs must be identical on
/// every machine and run, and the crate carries no RNG dependency.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x6a09_e667_f3bc_c908)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[lo, hi)`, from 24 random bits (exact in f32).
    pub(crate) fn uniform(&mut self, lo: f32, hi: f32) -> f32 {
        let unit = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        lo + (hi - lo) * unit
    }

    /// Uniform in `0..n` (n > 0); the modulo bias is irrelevant for n << 2^64.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// Size `name`, which must be positive and fit memory indices.
pub(crate) fn size(sizes: &Sizes, name: &str) -> Result<usize, GoldError> {
    match sizes.get(name) {
        Some(&v) if v > 0 => {
            usize::try_from(v).map_err(|_| Part1Lookup::SizeTooLarge { name: name.into(), value: v }.into())
        }
        Some(&v) => Err(Part1Lookup::SizeNotPositive { name: name.into(), value: v }.into()),
        None => Err(Part1Lookup::SizeUnbound(name.into()).into()),
    }
}

/// Float input `name` with exactly `len` elements (vector components counted).
pub(crate) fn floats<'a>(inputs: &'a Arrays, name: &str, len: usize) -> Result<&'a [f32], GoldError> {
    match inputs.get(name) {
        Some(HostArray::F32(v)) if v.len() == len => Ok(v),
        Some(HostArray::F32(v)) => {
            Err(Part1Lookup::FloatsLength { name: name.into(), len: v.len(), expected: len }.into())
        }
        Some(HostArray::I32(_)) => Err(Part1Lookup::NotFloats(name.into()).into()),
        None => Err(Part1Lookup::Missing(name.into()).into()),
    }
}

/// Int input `name` with exactly `len` elements.
pub(crate) fn ints<'a>(inputs: &'a Arrays, name: &str, len: usize) -> Result<&'a [i32], GoldError> {
    match inputs.get(name) {
        Some(HostArray::I32(v)) if v.len() == len => Ok(v),
        Some(HostArray::I32(v)) => {
            Err(Part1Lookup::IntsLength { name: name.into(), len: v.len(), expected: len }.into())
        }
        Some(HostArray::F32(_)) => Err(Part1Lookup::NotInts(name.into()).into()),
        None => Err(Part1Lookup::Missing(name.into()).into()),
    }
}

/// Scalar float input `name` (shape `[]`: one element).
pub(crate) fn scalar(inputs: &Arrays, name: &str) -> Result<f32, GoldError> {
    floats(inputs, name, 1).map(|v| v[0])
}

/// One named output array.
pub(crate) fn output(name: &str, data: HostArray) -> Arrays {
    let mut out = Arrays::new();
    out.insert(name.to_string(), data);
    out
}

#[cfg(test)]
pub(crate) mod test_util {
    use crate::harness::data::{Arrays, HostArray};

    pub use crate::types::sizes_of as sizes;

    pub fn arrays(pairs: Vec<(&str, HostArray)>) -> Arrays {
        pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
    }

    pub fn f32s(a: &Arrays, name: &str) -> Vec<f32> {
        match a.get(name) {
            Some(HostArray::F32(v)) => v.clone(),
            other => panic!("expected float output {name}, got {other:?}"),
        }
    }

    pub fn close(a: f32, b: f64) -> bool {
        (a as f64 - b).abs() <= 1e-6 + 1e-5 * b.abs()
    }
}

#[cfg(test)]
mod tests {
    use super::test_util::*;
    use super::*;

    #[test]
    fn unknown_names_are_not_ours() {
        let s = sizes(&[("N", 4)]);
        assert!(gold("dot", &Arrays::new(), &s).is_none());
        assert!(generate("nope", "x", &s, 1).is_none());
    }

    #[test]
    fn missing_input_is_an_error_not_a_panic() {
        let s = sizes(&[("N", 4)]);
        let r = gold("nn", &Arrays::new(), &s).expect("nn is a part-1 gold function");
        assert!(r.unwrap_err().to_string().contains("locations"));
    }

    #[test]
    fn unbound_or_bad_size_is_an_error() {
        assert!(size(&sizes(&[]), "N").is_err());
        assert!(size(&sizes(&[("N", -3)]), "N").is_err());
        assert_eq!(size(&sizes(&[("N", 3)]), "N"), Ok(3));
    }

    #[test]
    fn rng_is_deterministic_and_in_range() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        for _ in 0..1000 {
            let x = a.uniform(-2.0, 3.0);
            assert_eq!(x, b.uniform(-2.0, 3.0));
            assert!((-2.0..3.0).contains(&x));
        }
        assert_ne!(Rng::new(7).next_u64(), Rng::new(8).next_u64());
    }
}
