//! The CLBlast variant: the benchmark's `clblast:` calls on the same device
//! and queue, validated like the others. CLBlast returns an event for its
//! last kernel only, so each execution is timed on the host between two
//! queue finishes (the CSV says `timing = host`).

use super::clock::Timing;
use super::config::{BlasCall, BlasScalar, ClBlastSpec};
use super::data::{Arrays, HostArray, Sizes};
use super::run_error::RunError;
use super::variant::{upload_all, Execution, Workload};
use crate::launch::RunCounts;
use crate::runtime::{ClBlast, DeviceBuffer, Gemm, Gemv, Runtime};
use std::collections::BTreeMap;
use std::time::Instant;

pub(super) fn dim(e: &crate::arith::ArithExpr, sizes: &Sizes, what: &'static str) -> Result<usize, RunError> {
    let v = super::config::eval(e, sizes).map_err(|source| RunError::BlasDim {
        what,
        expr: e.clone(),
        source,
    })?;
    usize::try_from(v).map_err(|_| RunError::BlasNegative { what, expr: e.clone(), value: v })
}

pub(super) fn scalar(s: &BlasScalar, inputs: &Arrays) -> Result<f32, RunError> {
    match s {
        BlasScalar::Value(v) => Ok(*v),
        BlasScalar::Input(name) => match inputs.get(name) {
            Some(HostArray::F32(v)) if !v.is_empty() => Ok(v[0]),
            _ => Err(RunError::BlasScalar(name.clone())),
        },
    }
}

fn buf<'b>(bufs: &'b BTreeMap<String, DeviceBuffer>, name: &str) -> Result<&'b DeviceBuffer, RunError> {
    bufs.get(name).ok_or_else(|| RunError::NoDeviceBuffer { library: "clblast", name: name.into() })
}

/// Runs the calls once: copies for `init_from` first (untimed), then the
/// calls between two queue finishes; returns the host time in ms.
fn execute(
    rt: &Runtime,
    blas: &ClBlast,
    spec: &ClBlastSpec,
    sizes: &Sizes,
    inputs: &Arrays,
    bufs: &mut BTreeMap<String, DeviceBuffer>,
) -> Result<f64, RunError> {
    for c in &spec.calls {
        let Some((from, to)) = c.init_copy() else {
            continue;
        };
        let mut target = bufs
            .remove(to)
            .ok_or_else(|| RunError::NoDeviceBuffer { library: "clblast", name: to.into() })?;
        let r = rt.copy(buf(bufs, from)?, &mut target);
        bufs.insert(to.to_string(), target);
        r?;
    }
    rt.finish()?;
    let t0 = Instant::now();
    for c in &spec.calls {
        match c {
            BlasCall::Gemv { trans_a, m, n, alpha, a, x, beta, y, .. } => blas.sgemv(
                rt,
                Gemv {
                    trans_a: *trans_a,
                    m: dim(m, sizes, "m")?,
                    n: dim(n, sizes, "n")?,
                    alpha: scalar(alpha, inputs)?,
                    a: buf(bufs, a)?,
                    x: buf(bufs, x)?,
                    beta: scalar(beta, inputs)?,
                    y: buf(bufs, y)?,
                },
            )?,
            BlasCall::Gemm { trans_a, trans_b, m, n, k, alpha, a, b, beta, c, .. } => blas.sgemm(
                rt,
                Gemm {
                    trans_a: *trans_a,
                    trans_b: *trans_b,
                    m: dim(m, sizes, "m")?,
                    n: dim(n, sizes, "n")?,
                    k: dim(k, sizes, "k")?,
                    alpha: scalar(alpha, inputs)?,
                    a: buf(bufs, a)?,
                    b: buf(bufs, b)?,
                    beta: scalar(beta, inputs)?,
                    c: buf(bufs, c)?,
                },
            )?,
            BlasCall::Scal { n, alpha, x, .. } => {
                blas.sscal(rt, dim(n, sizes, "n")?, scalar(alpha, inputs)?, buf(bufs, x)?)?
            }
            BlasCall::Asum { n, x, result } => {
                blas.sasum(rt, dim(n, sizes, "n")?, buf(bufs, x)?, buf(bufs, result)?)?
            }
            BlasCall::Dot { n, x, y, result } => {
                blas.sdot(rt, dim(n, sizes, "n")?, buf(bufs, x)?, buf(bufs, y)?, buf(bufs, result)?)?
            }
        }
    }
    rt.finish()?;
    Ok(t0.elapsed().as_secs_f64() * 1e3)
}

/// Runs the CLBlast variant: the first execution's output is the one
/// validated (routines that update in place change it on every run), then
/// warm-up and timed runs.
pub fn run_clblast(
    rt: &Runtime,
    blas: &ClBlast,
    spec: &ClBlastSpec,
    w: Workload,
    counts: RunCounts,
) -> Result<Execution, RunError> {
    let Workload { cfg, sizes, inputs, buffers } = w;
    let mut bufs = upload_all(rt, cfg, inputs, buffers)?;
    execute(rt, blas, spec, sizes, inputs, &mut bufs)?;
    let output = rt.download(buf(&bufs, &spec.output)?)?;
    for _ in 1..counts.warmup.max(1) {
        execute(rt, blas, spec, sizes, inputs, &mut bufs)?;
    }
    let mut times_ms = Vec::with_capacity(counts.runs);
    for _ in 0..counts.runs.max(1) {
        times_ms.push(execute(rt, blas, spec, sizes, inputs, &mut bufs)?);
    }
    Ok(Execution::timed(times_ms, Timing::Host, output, &spec.output))
}
