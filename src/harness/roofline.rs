//! Device limits measured with the harness's own microkernels: memory
//! bandwidth from a large device-to-device copy (bytes read plus written)
//! and FP32 rate from a kernel of independent FMA chains.

use crate::arith::EvalError;
use crate::passes::typecheck::TypeError;
use crate::runtime::{ElemKind, KernelArg, Launch, Runtime, RuntimeError, RuntimeProgram};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Why the device's limits were not measured or saved, or a program's
/// least traffic not computed.
#[derive(Debug, thiserror::Error)]
pub enum RooflineError {
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}: {source}", path.display())]
    Csv { path: PathBuf, source: csv::Error },
    #[error("no def `{0}`")]
    NoDef(String),
    #[error(transparent)]
    Type(#[from] TypeError),
    /// A type's size that does not evaluate at the sizes given.
    #[error(transparent)]
    Size(#[from] EvalError),
    #[error("parameter `{0}` has no type")]
    Untyped(String),
}

/// The measured limits of one device.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Roofline {
    pub device: String,
    pub bandwidth_gbps: f64,
    pub gflops: f64,
    pub copy_bytes: u64,
    pub date: String,
}

// Long enough (about a millisecond on a large GPU) that launch latency and
// the profiling timer's resolution do not count.
const ITERS: usize = 4096;
/// float4 chains per work-item: each iteration is 4 x 4 FMAs = 32 flops.
const FLOPS_PER_ITER: usize = 32;

fn source() -> String {
    format!(
        r#"
kernel void roofline_copy(const global float4* restrict in, global float4* restrict out) {{
    size_t i = get_global_id(0);
    out[i] = in[i];
}}
kernel void roofline_fma(global float* out, float a, float b) {{
    float s = (float)get_global_id(0) * 1.0e-7f;
    float4 x0 = (float4)(s, s + 1.0f, s + 2.0f, s + 3.0f);
    float4 x1 = x0 + 0.5f, x2 = x0 + 0.25f, x3 = x0 + 0.125f;
    /* Four independent chains so the FMA pipelines stay full. */
    for (int k = 0; k < {ITERS}; ++k) {{
        x0 = fma(x0, a, b); x1 = fma(x1, a, b); x2 = fma(x2, a, b); x3 = fma(x3, a, b);
    }}
    float4 t = x0 + x1 + x2 + x3;
    out[get_global_id(0)] = t.x + t.y + t.z + t.w;
}}
"#
    )
}

fn best_ns(rt: &Runtime, launch: &Launch<'_>, reps: usize) -> Result<u64, RooflineError> {
    rt.run(std::slice::from_ref(launch))?;
    let mut best = u64::MAX;
    for _ in 0..reps {
        let t = rt.run(std::slice::from_ref(launch))?[0];
        best = best.min(t.max(1));
    }
    Ok(best)
}

/// The bytes of a copy of a program's own bytes come in units of 1024
/// float4s.
const COPY_GRAIN: u64 = 16 * 1024;

/// The bytes each side of a copy of `traffic` bytes in all moves: whole
/// float4s, a multiple of 1024 of them. The driver chooses the copy's
/// local size, a divisor of the count: 602,124 float4s (a channel mean's
/// 19.3 MB) left it 12, a copy at a fifth of its rate.
fn copy_half(traffic: u64, max_alloc: u64) -> u64 {
    (traffic / 2).min(max_alloc / 2).max(COPY_GRAIN) / COPY_GRAIN * COPY_GRAIN
}

/// The best time of copying `bytes` (a multiple of 16) into another
/// buffer, over the repetitions `measure` takes.
fn copy_ns(rt: &Runtime, program: &RuntimeProgram, bytes: u64) -> Result<u64, RooflineError> {
    let n4 = (bytes / 16) as usize;
    let src = rt.filled_f32("roofline_in", 1.0, n4 * 4)?;
    let dst = rt.zeroed("roofline_out", ElemKind::F32, bytes as usize)?;
    let copy = Launch {
        program,
        kernel: "roofline_copy",
        args: vec![KernelArg::Buffer(&src), KernelArg::Buffer(&dst)],
        global: vec![n4],
        local: None,
    };
    best_ns(rt, &copy, if rt.info.is_gpu() { 20 } else { 3 })
}

/// The bandwidth (read plus written, GB/s) of the same copy as `measure`'s
/// moving `traffic` bytes in all, half read and half written: a copy of
/// fewer bytes than `measure`'s takes longer per byte (its start and its
/// last wave), so a program's time is also held against the copy of its
/// own bytes (`lift explore`'s limit line).
pub fn copy_gbps_of(rt: &Runtime, traffic: u64) -> Result<f64, RooflineError> {
    copy_gbps_with(rt, &build(rt)?, traffic)
}

fn copy_gbps_with(rt: &Runtime, program: &RuntimeProgram, traffic: u64) -> Result<f64, RooflineError> {
    let half = copy_half(traffic, rt.info.max_alloc);
    let ns = copy_ns(rt, program, half)?;
    Ok(2.0 * half as f64 / ns.max(1) as f64)
}

fn build(rt: &Runtime) -> Result<RuntimeProgram, RooflineError> {
    Ok(rt.build("roofline microkernels", &source(), "")?)
}

/// Whether `traffic` bytes in all are fewer than the large copy of
/// `copy_bytes` a side moves (read plus written): only then is a copy of
/// them measured apart.
pub fn fewer_than_the_large_copy(traffic: u64, copy_bytes: u64) -> bool {
    traffic < 2 * copy_bytes
}

/// [`measure`], and [`copy_gbps_of`] `traffic` where those bytes are fewer
/// than the large copy's (read plus written), with the microkernels built
/// once.
pub fn measure_beside(rt: &Runtime, traffic: u64) -> Result<(Roofline, Option<f64>), RooflineError> {
    let program = build(rt)?;
    let roof = measure_with(rt, &program, "")?;
    let own = if fewer_than_the_large_copy(traffic, roof.copy_bytes) {
        Some(copy_gbps_with(rt, &program, traffic)?)
    } else {
        None
    };
    Ok((roof, own))
}

/// Measures the selected device. CPUs get smaller problems so the
/// measurement stays within seconds on PoCL.
pub fn measure(rt: &Runtime, date: &str) -> Result<Roofline, RooflineError> {
    measure_with(rt, &build(rt)?, date)
}

fn measure_with(rt: &Runtime, program: &RuntimeProgram, date: &str) -> Result<Roofline, RooflineError> {
    let info = &rt.info;
    let cap: u64 = if info.is_gpu() { 1 << 30 } else { 32 << 20 };
    let copy_bytes = cap.min(info.max_alloc / 2).max(1 << 20) / 16 * 16;
    let copy_ns = copy_ns(rt, program, copy_bytes)?;
    let threads = info.compute_units.max(1) as usize * if info.is_gpu() { 2048 } else { 8 };
    let out = rt.zeroed("roofline_fma_out", ElemKind::F32, threads * 4)?;
    let fma = Launch {
        program,
        kernel: "roofline_fma",
        args: vec![KernelArg::Buffer(&out), KernelArg::Float(0.999), KernelArg::Float(0.001)],
        global: vec![threads],
        local: None,
    };
    let fma_ns = best_ns(rt, &fma, if info.is_gpu() { 20 } else { 3 })?;
    Ok(Roofline {
        device: info.name.clone(),
        bandwidth_gbps: 2.0 * copy_bytes as f64 / copy_ns as f64,
        gflops: (threads * ITERS * FLOPS_PER_ITER) as f64 / fma_ns as f64,
        copy_bytes,
        date: date.to_string(),
    })
}

/// Writes `roofline.csv` (one row).
pub fn save(r: &Roofline, path: &Path) -> Result<(), RooflineError> {
    if let Some(d) = path.parent() {
        crate::outfile::create_dir(d).map_err(|source| RooflineError::Io { path: d.into(), source })?;
    }
    let mut w = csv::Writer::from_writer(Vec::new());
    w.serialize(r).map_err(|source| RooflineError::Csv { path: path.into(), source })?;
    // The error of flushing into a Vec is its io::Error (its own Display).
    let bytes =
        w.into_inner().map_err(|e| RooflineError::Io { path: path.into(), source: e.into_error() })?;
    crate::outfile::replace(path, &bytes).map_err(|source| RooflineError::Io { path: path.into(), source })
}

/// Reads `roofline.csv` if it exists and holds a row.
pub fn load(path: &Path) -> Option<Roofline> {
    let mut rd = csv::Reader::from_path(path).ok()?;
    rd.deserialize().next()?.ok()
}

/// The bytes a program must move at least: each array input read once and
/// its result written once, from the def's own types at `sizes` (scalar
/// parameters are passed by value). What `lift explore` and the generality
/// suite hold a best candidate's time against.
pub fn min_traffic(
    program: &crate::ir::Program,
    def: &str,
    sizes: &crate::types::Sizes,
) -> Result<u64, RooflineError> {
    let d = program.def(def).ok_or_else(|| RooflineError::NoDef(def.into()))?;
    let types = crate::passes::typecheck::typecheck_def(program, d)?;
    let bytes = |t: &crate::types::Type| {
        t.size_in_bytes().eval_with(&|v| sizes.get(v).copied()).map(|b| b.max(0) as u64)
    };
    let mut total = bytes(types.of(&d.body))?;
    for p in &d.params {
        let ty = p.ty.as_ref().ok_or_else(|| RooflineError::Untyped(p.name.clone()))?;
        if matches!(ty, crate::types::Type::Array(..)) {
            total += bytes(ty)?;
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_of_a_programs_bytes_is_whole_groups_of_float4s() {
        // A channel mean's 19,267,968 bytes: 602,112 float4s a side, 588 x 1024.
        assert_eq!(copy_half(19_267_968, 1 << 32), 9_633_792);
        assert_eq!(copy_half(19_267_968, 1 << 32) % (16 * 1024), 0);
        // Fewer bytes than one grain still copy one; the device's largest
        // allocation bounds each side.
        assert_eq!(copy_half(100, 1 << 32), 16 * 1024);
        assert_eq!(copy_half(1 << 40, 1 << 30), 1 << 29);
    }
}
