//! The cuBLAS variant (ICFP 2015, Figure 11 on NVIDIA): the benchmark's
//! `cublas:` calls (the same schema as `clblast:`) through the CUDA runtime
//! on the same GPU, validated like the other rows. Each execution is timed
//! by CUDA events around the calls (`timing = cuda-events`); copies for
//! `init_from` come before the first event, untimed. On a device that is
//! not NVIDIA's, or where the libraries do not load, the row is `skipped`.

use super::blas_spec::{BlasCall, BlasSpec};
use super::clblast::{dim, scalar};
use super::clock::Timing;
use super::data::{Arrays, HostArray, Sizes};
use super::run_error::RunError;
use super::variant::{Execution, Workload};
use crate::launch::RunCounts;
use crate::runtime::{CuBlas, CudaBuffer, Gemm, Gemv};
use std::collections::BTreeMap;

fn host_bytes(a: &HostArray) -> Vec<u8> {
    match a {
        HostArray::F32(v) => v.iter().flat_map(|x| x.to_ne_bytes()).collect(),
        HostArray::I32(v) => v.iter().flat_map(|x| x.to_ne_bytes()).collect(),
    }
}

/// Whether cuBLAS can run on the device the harness uses.
pub fn is_nvidia(vendor: &str, platform: &str) -> bool {
    vendor.to_ascii_lowercase().contains("nvidia") || platform.to_ascii_lowercase().contains("nvidia")
}

fn buf<'b, 'c>(
    bufs: &'b BTreeMap<String, CudaBuffer<'c>>,
    name: &str,
) -> Result<&'b CudaBuffer<'c>, RunError> {
    bufs.get(name).ok_or_else(|| RunError::NoDeviceBuffer { library: "cublas", name: name.into() })
}

/// Checks that a call's arrays hold what the routine reads or writes.
fn need(b: &CudaBuffer, floats: usize, name: &str) -> Result<(), RunError> {
    if b.bytes < 4 * floats {
        return Err(RunError::BufferTooSmall { name: name.into(), bytes: b.bytes, need: 4 * floats });
    }
    Ok(())
}

fn call(
    lib: &CuBlas,
    c: &BlasCall,
    sizes: &Sizes,
    inputs: &Arrays,
    bufs: &BTreeMap<String, CudaBuffer>,
) -> Result<(), RunError> {
    let called = match c {
        BlasCall::Gemv { trans_a, m, n, alpha, a, x, beta, y, .. } => {
            let (m, n) = (dim(m, sizes, "m")?, dim(n, sizes, "n")?);
            let (xl, yl) = if *trans_a { (m, n) } else { (n, m) };
            need(buf(bufs, a)?, m * n, a)?;
            need(buf(bufs, x)?, xl, x)?;
            need(buf(bufs, y)?, yl, y)?;
            let (alpha, beta) = (scalar(alpha, inputs)?, scalar(beta, inputs)?);
            let (a, x, y) = (buf(bufs, a)?, buf(bufs, x)?, buf(bufs, y)?);
            lib.sgemv(Gemv { trans_a: *trans_a, m, n, alpha, a, x, beta, y })
        }
        BlasCall::Gemm { trans_a, trans_b, m, n, k, alpha, a, b, beta, c, .. } => {
            let (m, n, k) = (dim(m, sizes, "m")?, dim(n, sizes, "n")?, dim(k, sizes, "k")?);
            need(buf(bufs, a)?, m * k, a)?;
            need(buf(bufs, b)?, k * n, b)?;
            need(buf(bufs, c)?, m * n, c)?;
            let (alpha, beta) = (scalar(alpha, inputs)?, scalar(beta, inputs)?);
            let (a, b, c) = (buf(bufs, a)?, buf(bufs, b)?, buf(bufs, c)?);
            lib.sgemm(Gemm { trans_a: *trans_a, trans_b: *trans_b, m, n, k, alpha, a, b, beta, c })
        }
        BlasCall::Scal { n, alpha, x, .. } => {
            let n = dim(n, sizes, "n")?;
            need(buf(bufs, x)?, n, x)?;
            lib.sscal(n, scalar(alpha, inputs)?, buf(bufs, x)?)
        }
        BlasCall::Asum { n, x, result } => {
            let n = dim(n, sizes, "n")?;
            need(buf(bufs, x)?, n, x)?;
            need(buf(bufs, result)?, 1, result)?;
            lib.sasum(n, buf(bufs, x)?, buf(bufs, result)?)
        }
        BlasCall::Dot { n, x, y, result } => {
            let n = dim(n, sizes, "n")?;
            need(buf(bufs, x)?, n, x)?;
            need(buf(bufs, y)?, n, y)?;
            need(buf(bufs, result)?, 1, result)?;
            lib.sdot(n, buf(bufs, x)?, buf(bufs, y)?, buf(bufs, result)?)
        }
    };
    Ok(called?)
}

/// One execution: the untimed copies, then the calls between two events.
fn execute(
    lib: &CuBlas,
    spec: &BlasSpec,
    sizes: &Sizes,
    inputs: &Arrays,
    bufs: &BTreeMap<String, CudaBuffer>,
) -> Result<f64, RunError> {
    for c in &spec.calls {
        if let Some((from, to)) = c.init_copy() {
            lib.copy(buf(bufs, from)?, buf(bufs, to)?)?;
        }
    }
    lib.synchronize()?;
    lib.timed(&mut || {
        for c in &spec.calls {
            call(lib, c, sizes, inputs, bufs)?;
        }
        Ok(())
    })
}

/// Runs the cuBLAS variant: the first execution's output is validated,
/// then warm-up and timed runs.
pub fn run_cublas(
    lib: &CuBlas,
    spec: &BlasSpec,
    w: Workload,
    counts: RunCounts,
) -> Result<Execution, RunError> {
    let Workload { cfg, sizes, inputs, buffers } = w;
    let mut bufs = BTreeMap::new();
    for a in cfg.inputs.iter().chain(&cfg.buffers).filter(|a| !a.is_scalar()) {
        let host = inputs
            .get(&a.name)
            .or_else(|| buffers.get(&a.name))
            .ok_or_else(|| RunError::NoArray(a.name.clone()))?;
        bufs.insert(a.name.clone(), lib.upload(&host_bytes(host))?);
    }
    execute(lib, spec, sizes, inputs, &bufs)?;
    let out = buf(&bufs, &spec.output)?;
    let bytes = lib.download(out)?;
    let output = match inputs.get(&spec.output).or_else(|| buffers.get(&spec.output)) {
        Some(HostArray::I32(_)) => HostArray::I32(
            bytes.chunks_exact(4).map(|c| i32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect(),
        ),
        _ => HostArray::F32(
            bytes.chunks_exact(4).map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect(),
        ),
    };
    for _ in 1..counts.warmup.max(1) {
        execute(lib, spec, sizes, inputs, &bufs)?;
    }
    let mut times_ms = Vec::with_capacity(counts.runs);
    for _ in 0..counts.runs.max(1) {
        times_ms.push(execute(lib, spec, sizes, inputs, &bufs)?);
    }
    Ok(Execution::timed(times_ms, Timing::CudaEvents, output, &spec.output))
}
