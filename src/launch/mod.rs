//! Launching compiled kernels: the one path by which `lift exec`, `lift
//! explore` and the harness run what the compiler made. A launch is a list
//! of [`Step`]s (a kernel, its built program, its NDRange and where its
//! arguments come from); each kernel's arguments are bound by name from
//! its parameter list to named device buffers, host scalars, temporaries
//! allocated here and sizes; untimed warm-up runs come first, then timed
//! runs, each the sum of the kernels' profiling-event times; [`stats`]
//! gives their median and its confidence interval.

pub mod stats;

use crate::arith::{ArithExpr, EvalError};
use crate::compile::{Kernel, KernelParam};
use crate::passes::sizes_fit::MAX_ELEMS;
use crate::runtime::{DeviceBuffer, ElemKind, KernelArg, Launch, Runtime, RuntimeError, RuntimeProgram};
use crate::types::{Arrays, HostArray, ScalarType, Sizes, Type};
use std::collections::BTreeMap;
use std::time::Instant;

/// Why a kernel did not launch.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// A launch or buffer size that has no value at the sizes given.
    #[error("{what} `{expr}`: {error}")]
    Eval { what: &'static str, expr: ArithExpr, error: EvalError },
    /// A launch size outside what OpenCL runs here: the kernels' ids are
    /// `int`s, and more work-items crashed the driver.
    #[error("{what} `{expr}` is {value}, expected 1 to {max}", max = MAX_ELEMS)]
    Dim { what: &'static str, expr: ArithExpr, value: i64 },
    #[error("size of temporary `{name}`: {error}")]
    TempSize { name: String, error: EvalError },
    #[error("temporary buffer `{0}` missing")]
    MissingTemp(String),
    /// A parameter the step's [`Args::Mapped`] does not name.
    #[error("`args` does not bind parameter `{param}` of `{def}`")]
    Unbound { def: String, param: String },
    #[error("no input `{0}`")]
    NoInput(String),
    #[error("output `{0}` is a scalar, not a buffer")]
    NotABuffer(String),
    #[error("output `{name}` holds {holds} bytes but the kernel writes {needs} ({ty})")]
    OutputTooSmall { name: String, holds: usize, needs: i64, ty: Type },
    #[error("size `{0}` unknown")]
    UnknownSize(String),
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
}

impl From<LaunchError> for String {
    fn from(e: LaunchError) -> String {
        e.to_string()
    }
}

fn eval(e: &ArithExpr, sizes: &Sizes) -> Result<i64, EvalError> {
    e.eval_with(&|v| sizes.get(v).copied())
}

/// Each of `es` at `sizes`, from 1 to [`MAX_ELEMS`] (OpenCL launches at
/// most 2^31 - 1 work-items per dimension here, the kernels' `int` ids;
/// more crashed the driver).
pub fn eval_dims(es: &[ArithExpr], sizes: &Sizes, what: &'static str) -> Result<Vec<usize>, LaunchError> {
    es.iter()
        .map(|e| {
            let v = eval(e, sizes).map_err(|error| LaunchError::Eval { what, expr: e.clone(), error })?;
            usize::try_from(v)
                .ok()
                .filter(|&v| v > 0 && v as i64 <= MAX_ELEMS)
                .ok_or_else(|| LaunchError::Dim { what, expr: e.clone(), value: v })
        })
        .collect()
}

/// `v` without its trailing 1s (one dimension at least), so that a 1-D
/// kernel launches 1-D.
pub fn trim_dims(mut v: Vec<usize>) -> Vec<usize> {
    while v.len() > 1 && v.last() == Some(&1) {
        v.pop();
    }
    v
}

/// The compiler's global size of `k` at `sizes`, trailing 1s dropped.
pub fn compiler_global(k: &Kernel, sizes: &Sizes) -> Result<Vec<usize>, LaunchError> {
    Ok(trim_dims(eval_dims(&k.global, sizes, "compiler's global size")?))
}

/// The compiler's local size of `k` at `sizes` in its first `dims`
/// dimensions; `None` where the compiler leaves it to the driver.
pub fn compiler_local(k: &Kernel, sizes: &Sizes, dims: usize) -> Result<Option<Vec<usize>>, LaunchError> {
    k.local.as_ref().map(|l| eval_dims(&l[..dims.min(l.len())], sizes, "compiler's local size")).transpose()
}

/// The compiler's NDRange of `k` at `sizes`: its global size and, where
/// it chose one, its local size in as many dimensions.
pub fn ndrange(k: &Kernel, sizes: &Sizes) -> Result<(Vec<usize>, Option<Vec<usize>>), LaunchError> {
    let global = compiler_global(k, sizes)?;
    let local = compiler_local(k, sizes, global.len())?;
    Ok((global, local))
}

/// How a buffer of `ty` reads back: as ints where its scalars are ints
/// (plain, vectors, or tuples of ints), else as floats.
pub fn elem_kind(ty: &Type) -> ElemKind {
    let int = Type::Scalar(ScalarType::Int);
    let is_int = match ty.base_elem() {
        Type::Scalar(s) | Type::Vector(s, _) => *s == ScalarType::Int,
        Type::Tuple(ts) => !ts.is_empty() && ts.iter().all(|t| *t == int),
        Type::Array(..) => false,
    };
    if is_int {
        ElemKind::I32
    } else {
        ElemKind::F32
    }
}

/// A zeroed device buffer, reported as `label`, for an output of type
/// `ty` at `sizes`.
pub fn output_buffer(
    rt: &Runtime,
    label: &str,
    ty: &Type,
    sizes: &Sizes,
) -> Result<DeviceBuffer, LaunchError> {
    let size = ty.size_in_bytes();
    let bytes =
        eval(&size, sizes).map_err(|error| LaunchError::Eval { what: "output size", expr: size, error })?;
    Ok(rt.zeroed(label, elem_kind(ty), bytes.max(0) as usize)?)
}

/// Device copies of the host arrays that `k`'s input parameters name, by
/// name.
pub fn upload_inputs(
    rt: &Runtime,
    k: &Kernel,
    host: &Arrays,
) -> Result<BTreeMap<String, DeviceBuffer>, LaunchError> {
    Ok(upload_inputs_missing(rt, k, host, &BTreeMap::new())?.into_iter().collect())
}

/// Device copies of the host arrays that `k`'s input parameters name and
/// `there` lacks, by name (a search keeps one upload of its inputs for
/// every candidate).
pub fn upload_inputs_missing(
    rt: &Runtime,
    k: &Kernel,
    host: &Arrays,
    there: &BTreeMap<String, DeviceBuffer>,
) -> Result<Vec<(String, DeviceBuffer)>, LaunchError> {
    let mut out = Vec::new();
    for p in &k.params {
        if let KernelParam::Input { name, .. } = p {
            if there.contains_key(name) || out.iter().any(|(n, _): &(String, DeviceBuffer)| n == name) {
                continue;
            }
            let h = host.get(name).ok_or_else(|| LaunchError::NoInput(name.clone()))?;
            out.push((name.clone(), rt.upload(name, h)?));
        }
    }
    Ok(out)
}

/// A host array as a scalar argument: its first value (0 where empty).
pub fn scalar_arg(a: &HostArray) -> KernelArg<'static> {
    match a {
        HostArray::F32(v) => KernelArg::Float(v.first().copied().unwrap_or(0.0)),
        HostArray::I32(v) => KernelArg::Int(v.first().copied().unwrap_or(0)),
    }
}

/// Where a step's input and scalar parameters come from.
#[derive(Clone, Copy, Debug)]
pub enum Args<'a> {
    /// The array of the parameter's own name.
    ByName,
    /// The array this map names for each parameter (a benchmark config's
    /// `args`); a parameter it does not name is an error.
    Mapped(&'a BTreeMap<String, String>),
}

/// One compiled kernel of a launch.
pub struct Step<'a> {
    pub kernel: &'a Kernel,
    pub program: &'a RuntimeProgram,
    /// The def it was compiled from (named in errors).
    pub def: &'a str,
    /// The values of its size parameters and of its buffers' lengths.
    pub sizes: &'a Sizes,
    pub global: Vec<usize>,
    pub local: Option<Vec<usize>>,
    pub args: Args<'a>,
    /// The device buffer its output goes to, by name.
    pub output: &'a str,
}

/// The arrays a launch's steps name: device buffers (inputs, outputs,
/// intermediates) and host values (scalars).
#[derive(Clone, Copy)]
pub struct Buffers<'a> {
    pub device: &'a BTreeMap<String, DeviceBuffer>,
    pub host: &'a Arrays,
}

/// How many times to run: untimed warm-ups, then timed runs (one at
/// least).
#[derive(Clone, Copy, Debug)]
pub struct RunCounts {
    pub warmup: usize,
    pub runs: usize,
}

/// When the runs end early: the search's rules, [`Stop::NEVER`] for the
/// harness and `lift exec`.
#[derive(Clone, Copy, Debug)]
pub struct Stop {
    /// The best time so far: a run more than 4 times slower ends the runs,
    /// its time the only one kept (its first time ranks it already).
    pub cutoff_ms: Option<f64>,
    /// Milliseconds of budget: once spent, the times taken so far are kept.
    pub budget_ms: f64,
    /// A run (warm-up included) longer than this ends the runs, its time
    /// the only one kept: where one run costs a sizeable part of the
    /// search's budget, its first time ranks it already, and the launch
    /// overhead a warm-up removes is lost in it.
    pub once_over_ms: f64,
}

impl Stop {
    pub const NEVER: Stop = Stop { cutoff_ms: None, budget_ms: f64::INFINITY, once_over_ms: f64::INFINITY };
}

/// The times of the timed runs, in milliseconds.
#[derive(Clone, Debug)]
pub struct Times {
    /// Each run's kernels' profiling-event durations, summed.
    pub ms: Vec<f64>,
    /// The same runs timed on the host (`Runtime::run_clocked`): what a
    /// host-timed peer is compared with.
    pub host_ms: Vec<f64>,
    /// The budget ran out before every run was taken.
    pub out_of_budget: bool,
}

impl Times {
    pub fn median(&self) -> Option<f64> {
        stats::median(&self.ms)
    }
}

/// Binds every step's arguments (allocating its temporaries) and runs the
/// steps in order, as [`time`] does.
pub fn run(
    rt: &Runtime,
    steps: &[Step<'_>],
    bufs: Buffers<'_>,
    counts: RunCounts,
    stop: Stop,
) -> Result<Times, LaunchError> {
    let temps = steps.iter().map(|s| temporaries(rt, s)).collect::<Result<Vec<_>, _>>()?;
    let mut launches = Vec::with_capacity(steps.len());
    for (s, t) in steps.iter().zip(&temps) {
        launches.push(Launch {
            program: s.program,
            kernel: &s.kernel.name,
            args: bind(s, bufs, t)?,
            global: s.global.clone(),
            local: s.local.clone(),
        });
    }
    Ok(time(rt, &launches, counts, stop)?)
}

/// The bytes of the local memory `kernel` takes as arguments (the arrays
/// whose lengths the sizes give) at `sizes`.
pub fn local_bytes(kernel: &Kernel, sizes: &Sizes) -> Result<u64, LaunchError> {
    let mut total = 0u64;
    for p in &kernel.params {
        if let KernelParam::Local { name, bytes } = p {
            let n =
                eval(bytes, sizes).map_err(|error| LaunchError::TempSize { name: name.clone(), error })?;
            total = total.saturating_add(n.max(0) as u64);
        }
    }
    Ok(total)
}

/// Zeroed buffers for a step's temporaries, in parameter order.
fn temporaries(rt: &Runtime, s: &Step<'_>) -> Result<Vec<DeviceBuffer>, LaunchError> {
    let mut out = Vec::new();
    for p in &s.kernel.params {
        if let KernelParam::Temp { name, bytes } = p {
            let n =
                eval(bytes, s.sizes).map_err(|error| LaunchError::TempSize { name: name.clone(), error })?;
            out.push(rt.zeroed(name, ElemKind::F32, n.max(0) as usize)?);
        }
    }
    Ok(out)
}

/// A step's arguments in parameter order: inputs and scalars by name (a
/// device buffer, else a host value), its output buffer (checked to hold
/// what the kernel writes), its temporaries in order, sizes by name.
fn bind<'a>(
    s: &Step<'_>,
    bufs: Buffers<'a>,
    temps: &'a [DeviceBuffer],
) -> Result<Vec<KernelArg<'a>>, LaunchError> {
    let mut temps = temps.iter();
    let mut args = Vec::with_capacity(s.kernel.params.len());
    for p in &s.kernel.params {
        args.push(match p {
            KernelParam::Input { name, .. } | KernelParam::Scalar { name, .. } => {
                let src = match s.args {
                    Args::ByName => name,
                    Args::Mapped(m) => m.get(name).ok_or_else(|| LaunchError::Unbound {
                        def: s.def.to_string(),
                        param: name.clone(),
                    })?,
                };
                match bufs.device.get(src) {
                    Some(b) => KernelArg::Buffer(b),
                    None => scalar_arg(bufs.host.get(src).ok_or_else(|| LaunchError::NoInput(src.clone()))?),
                }
            }
            KernelParam::Output { ty } => {
                let out =
                    bufs.device.get(s.output).ok_or_else(|| LaunchError::NotABuffer(s.output.to_string()))?;
                if let Ok(needs) = eval(&ty.size_in_bytes(), s.sizes) {
                    if needs as usize > out.bytes {
                        return Err(LaunchError::OutputTooSmall {
                            name: s.output.to_string(),
                            holds: out.bytes,
                            needs,
                            ty: ty.clone(),
                        });
                    }
                }
                KernelArg::Buffer(out)
            }
            KernelParam::Temp { name, .. } => {
                KernelArg::Buffer(temps.next().ok_or_else(|| LaunchError::MissingTemp(name.clone()))?)
            }
            KernelParam::Local { name, bytes } => KernelArg::Local(
                eval(bytes, s.sizes)
                    .map_err(|error| LaunchError::TempSize { name: name.clone(), error })?
                    .max(1) as usize,
            ),
            KernelParam::Size { name } => KernelArg::Int(
                *s.sizes.get(name).ok_or_else(|| LaunchError::UnknownSize(name.clone()))? as i32,
            ),
        });
    }
    Ok(args)
}

/// Runs `launches` in order `counts.warmup` times untimed, then
/// `counts.runs` times (one at least) timed by profiling events, each
/// run's time the sum of its kernels' (and, beside it, the run's host
/// time); `stop` may end the runs early.
pub fn time(
    rt: &Runtime,
    launches: &[Launch<'_>],
    counts: RunCounts,
    stop: Stop,
) -> Result<Times, RuntimeError> {
    let total = counts.warmup.saturating_add(counts.runs.max(1));
    let (mut ms, mut host_ms, mut out_of_budget) = (Vec::with_capacity(counts.runs), Vec::new(), false);
    let started = Instant::now();
    for i in 0..total {
        let run = rt.run_clocked(launches)?;
        let t = run.kernel_ns.iter().sum::<u64>() as f64 / 1e6;
        let host = run.host_ns as f64 / 1e6;
        if i >= counts.warmup {
            ms.push(t);
            host_ms.push(host);
        }
        if t > stop.once_over_ms && total > 1 {
            ms = vec![t];
            break;
        }
        if stop.cutoff_ms.is_some_and(|c| t > 4.0 * c) && total > 1 {
            (ms, host_ms) = (vec![t], vec![host]);
            break;
        }
        if !ms.is_empty() && started.elapsed().as_secs_f64() * 1e3 > stop.budget_ms {
            out_of_budget = i + 1 < total;
            break;
        }
    }
    Ok(Times { ms, host_ms, out_of_budget })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dims_are_checked_and_trimmed() {
        let sizes: Sizes = [("N".to_string(), 64)].into();
        let n = ArithExpr::size("N");
        let dims = eval_dims(&[n.clone(), ArithExpr::Cst(1)], &sizes, "global size").unwrap();
        assert_eq!(trim_dims(dims), [64]);
        assert_eq!(trim_dims(vec![1, 1]), [1]);
        let e = eval_dims(&[ArithExpr::Cst(8_000_000_000)], &sizes, "global size").unwrap_err();
        assert_eq!(e.to_string(), "global size `8000000000` is 8000000000, expected 1 to 2147483647");
        let e = eval_dims(&[ArithExpr::size("M")], &sizes, "local size").unwrap_err();
        assert!(e.to_string().starts_with("local size `M`: "), "{e}");
    }

    #[test]
    fn int_elements_read_back_as_ints() {
        let int = Type::Scalar(ScalarType::Int);
        let arr = |t: Type| Type::Array(Box::new(t), ArithExpr::Cst(4));
        assert_eq!(elem_kind(&arr(int.clone())), ElemKind::I32);
        assert_eq!(elem_kind(&arr(Type::Vector(ScalarType::Int, 4))), ElemKind::I32);
        assert_eq!(elem_kind(&arr(Type::Tuple(vec![int.clone(), int.clone()]))), ElemKind::I32);
        assert_eq!(elem_kind(&arr(Type::Tuple(vec![int, Type::Scalar(ScalarType::Float)]))), ElemKind::F32);
        assert_eq!(elem_kind(&arr(Type::Scalar(ScalarType::Float))), ElemKind::F32);
    }

    #[test]
    fn a_scalar_argument_is_the_first_value() {
        assert!(matches!(scalar_arg(&HostArray::F32(vec![2.5, 1.0])), KernelArg::Float(v) if v == 2.5));
        assert!(matches!(scalar_arg(&HostArray::I32(vec![])), KernelArg::Int(0)));
    }
}
