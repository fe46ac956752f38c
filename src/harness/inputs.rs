//! Host arrays for a benchmark at one size: inputs from their `init`
//! (seeded, so every variant and every run sees the same data) and
//! zero-filled buffers.

use super::config::{eval, ArraySpec, Config, Init};
use super::data::{Arrays, HostArray, Sizes};
use super::gold;
use crate::validate::SplitMix64;

/// Number of scalar components an array spec holds at these sizes.
pub fn element_count(spec: &ArraySpec, sizes: &Sizes) -> Result<usize, String> {
    let mut n: i64 = spec.ty.components() as i64;
    for e in &spec.shape {
        let v = eval(e, sizes).map_err(|err| format!("shape of `{}`: {err}", spec.name))?;
        if v < 0 {
            return Err(format!("shape of `{}`: `{e}` is negative ({v})", spec.name));
        }
        n = n.checked_mul(v).ok_or_else(|| format!("shape of `{}` overflows", spec.name))?;
    }
    usize::try_from(n).map_err(|_| format!("shape of `{}` is too large", spec.name))
}

fn fill(spec: &ArraySpec, sizes: &Sizes, seed: u64) -> Result<HostArray, String> {
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
            None => return Err(format!("input `{}`: no generator `{g}` in src/harness/gold", spec.name)),
            Some(Err(e)) => return Err(format!("input `{}`: generator `{g}`: {e}", spec.name)),
            Some(Ok(a)) if a.len() != n => {
                return Err(format!(
                    "input `{}`: generator `{g}` made {} elements, the shape says {n}",
                    spec.name,
                    a.len()
                ))
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
pub fn check_fits(cfg: &Config, sizes: &Sizes, max_alloc: u64, global_mem: u64) -> Result<(), String> {
    let mut total: u64 = 0;
    for spec in cfg.inputs.iter().chain(&cfg.buffers) {
        let n = element_count(spec, sizes)? as u64;
        if n > i32::MAX as u64 {
            return Err(format!(
                "`{}` has {n} elements, more than kernels index with 32-bit ints ({})",
                spec.name,
                i32::MAX
            ));
        }
        // Every element type of a config is 32 bits wide per component.
        let bytes = n * 4;
        if max_alloc > 0 && bytes > max_alloc {
            return Err(format!(
                "`{}` needs {bytes} bytes, more than the device allocates at once ({max_alloc} bytes)",
                spec.name
            ));
        }
        crate::types::check_host_bytes(&format!("`{}`", spec.name), bytes).map_err(|e| e.to_string())?;
        total = total.saturating_add(bytes);
    }
    // The host holds every input and buffer, and the gold besides.
    crate::types::check_host_bytes("the inputs and buffers", total).map_err(|e| e.to_string())?;
    if global_mem > 0 && total > global_mem {
        return Err(format!(
            "the inputs and buffers need {total} bytes together, more than the device's global memory ({global_mem} bytes)"
        ));
    }
    Ok(())
}

/// Generates every input (seed + its index) and zero-fills every buffer.
pub fn make_host_arrays(cfg: &Config, sizes: &Sizes) -> Result<(Arrays, Arrays), String> {
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
