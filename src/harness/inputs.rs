//! Host arrays for a benchmark at one size: inputs from their `init`
//! (seeded, so every variant and every run sees the same data) and
//! zero-filled buffers.

use super::config::{eval, ArraySpec, Config, Init};
use super::data::{Arrays, HostArray, Sizes};
use super::gold;
use crate::arith::{ArithExpr, EvalError};
use crate::types::HostMemError;
use crate::validate::SplitMix64;

/// Why a benchmark's host arrays cannot be made at a size: a shape that
/// does not evaluate, a generator that fails, or arrays the device (or
/// the host) cannot hold.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum InputError {
    #[error("shape of `{name}`: {source}")]
    Shape { name: String, source: EvalError },
    #[error("shape of `{name}`: `{dim}` is negative ({value})")]
    Negative { name: String, dim: ArithExpr, value: i64 },
    #[error("shape of `{0}` overflows")]
    Overflow(String),
    #[error("shape of `{0}` is too large")]
    TooLarge(String),
    #[error("input `{input}`: no generator `{generator}` in src/harness/gold")]
    NoGenerator { input: String, generator: String },
    #[error("input `{input}`: generator `{generator}`: {source}")]
    Generator { input: String, generator: String, source: gold::GoldError },
    #[error("input `{input}`: generator `{generator}` made {made} elements, the shape says {expected}")]
    GeneratedLength { input: String, generator: String, made: usize, expected: usize },
    #[error("`{name}` has {elements} elements, more than kernels index with 32-bit ints ({})", i32::MAX)]
    TooManyElements { name: String, elements: u64 },
    #[error("`{name}` needs {bytes} bytes, more than the device allocates at once ({max_alloc} bytes)")]
    OverAlloc { name: String, bytes: u64, max_alloc: u64 },
    #[error(transparent)]
    HostMemory(#[from] HostMemError),
    #[error(
        "the inputs and buffers need {total} bytes together, more than the device's global memory ({global_mem} bytes)"
    )]
    OverGlobal { total: u64, global_mem: u64 },
}

/// Number of scalar components an array spec holds at these sizes.
pub fn element_count(spec: &ArraySpec, sizes: &Sizes) -> Result<usize, InputError> {
    let mut n: i64 = spec.ty.components() as i64;
    for e in &spec.shape {
        let v = eval(e, sizes).map_err(|source| InputError::Shape { name: spec.name.clone(), source })?;
        if v < 0 {
            return Err(InputError::Negative { name: spec.name.clone(), dim: e.clone(), value: v });
        }
        n = n.checked_mul(v).ok_or_else(|| InputError::Overflow(spec.name.clone()))?;
    }
    usize::try_from(n).map_err(|_| InputError::TooLarge(spec.name.clone()))
}

fn fill(spec: &ArraySpec, sizes: &Sizes, seed: u64) -> Result<HostArray, InputError> {
    let n = element_count(spec, sizes)?;
    let float = spec.ty.is_float();
    Ok(match &spec.init {
        Init::Const(c) if float => HostArray::F32(vec![*c as f32; n]),
        Init::Const(c) => HostArray::I32(vec![*c as i32; n]),
        Init::Iota if float => HostArray::F32((0..n).map(|i| i as f32).collect()),
        Init::Iota => HostArray::I32((0..n).map(|i| i as i32).collect()),
        Init::Random { min, max } => {
            let mut rng = SplitMix64::new(seed);
            if float {
                HostArray::F32((0..n).map(|_| (min + (max - min) * rng.next_f64()) as f32).collect())
            } else {
                // Integers uniform over [min, max], both ends included.
                let (lo, hi) = (min.ceil() as i64, max.floor() as i64);
                let span = (hi - lo + 1).max(1) as u64;
                HostArray::I32((0..n).map(|_| (lo + (rng.next_u64() % span) as i64) as i32).collect())
            }
        }
        Init::Generator(g) => match gold::generate(g, &spec.name, sizes, seed) {
            None => return Err(InputError::NoGenerator { input: spec.name.clone(), generator: g.clone() }),
            Some(Err(source)) => {
                return Err(InputError::Generator { input: spec.name.clone(), generator: g.clone(), source })
            }
            Some(Ok(a)) if a.len() != n => {
                return Err(InputError::GeneratedLength {
                    input: spec.name.clone(),
                    generator: g.clone(),
                    made: a.len(),
                    expected: n,
                })
            }
            Some(Ok(a)) => a,
        },
    })
}

/// Refuses, before anything is allocated, arrays the device cannot hold:
/// one beyond what it allocates at once, all of them together beyond its
/// global memory, or more elements than a kernel's 32-bit `int` indices
/// reach. (A size typed with a few digits too many used to abort the
/// whole run when the host allocation failed.)
pub fn check_fits(cfg: &Config, sizes: &Sizes, max_alloc: u64, global_mem: u64) -> Result<(), InputError> {
    let mut total: u64 = 0;
    for spec in cfg.inputs.iter().chain(&cfg.buffers) {
        let n = element_count(spec, sizes)? as u64;
        if n > i32::MAX as u64 {
            return Err(InputError::TooManyElements { name: spec.name.clone(), elements: n });
        }
        // Every element type of a config is 32 bits wide per component.
        let bytes = n * 4;
        if max_alloc > 0 && bytes > max_alloc {
            return Err(InputError::OverAlloc { name: spec.name.clone(), bytes, max_alloc });
        }
        crate::types::check_host_bytes(&format!("`{}`", spec.name), bytes)?;
        total = total.saturating_add(bytes);
    }
    // The host holds every input and buffer, and the gold besides.
    crate::types::check_host_bytes("the inputs and buffers", total)?;
    if global_mem > 0 && total > global_mem {
        return Err(InputError::OverGlobal { total, global_mem });
    }
    Ok(())
}

/// Generates every input (seed + its index) and zero-fills every buffer.
pub fn make_host_arrays(cfg: &Config, sizes: &Sizes) -> Result<(Arrays, Arrays), InputError> {
    let mut inputs = Arrays::new();
    for (i, spec) in cfg.inputs.iter().enumerate() {
        inputs.insert(spec.name.clone(), fill(spec, sizes, cfg.seed.wrapping_add(i as u64))?);
    }
    let mut buffers = Arrays::new();
    for spec in &cfg.buffers {
        buffers.insert(spec.name.clone(), fill(spec, sizes, 0)?);
    }
    Ok((inputs, buffers))
}
