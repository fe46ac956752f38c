//! Building and timing one variant of a benchmark at one size: the
//! hand-written reference, or the Lift program compiled at one optimisation
//! level.

use super::clock::Timing;
use super::config::{self, eval, Config, LiftKernel, RefArg};
use super::data::{Arrays, HostArray, Sizes};
use super::run_error::RunError;
use crate::compile::{compile, CompileOptions};
use crate::ir::{Program, SourceFile};
use crate::launch::{self, Args, Buffers, LaunchError, RunCounts, Step, Stop};
use crate::runtime::{DeviceBuffer, KernelArg, Launch, Runtime, RuntimeProgram};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

/// What one variant produced: everything its results row is made of
/// (`super::runner`'s one row builder validates it and fills the row).
#[derive(Debug)]
pub struct Execution {
    /// Time per timed run (kernels summed), in milliseconds, on `timing`'s clock.
    pub times_ms: Vec<f64>,
    pub timing: Timing,
    /// Where only a median was reported (an external peer): the number of
    /// runs it is the median of; the row then shows no spread.
    pub median_of: Option<usize>,
    /// The same runs timed on the host (empty where not measured): the
    /// row's `@host` twin, compared with host-timed peers.
    pub host_ms: Vec<f64>,
    pub output: HostArray,
    /// The config's name for `output` (the buffer whose gold it is checked against).
    pub output_name: String,
    pub compile_ms: Option<f64>,
    pub kernel_lines: Option<usize>,
    pub kernel_bytes: Option<usize>,
    pub build_options: String,
    /// Said after the validation's message in the row (`a; note`).
    pub note: Option<String>,
}

impl Execution {
    /// An execution timed on `timing`'s clock, each time in `times_ms`,
    /// with no build facts (a library call or an external peer).
    pub fn timed(times_ms: Vec<f64>, timing: Timing, output: HostArray, output_name: &str) -> Execution {
        Execution {
            times_ms,
            timing,
            median_of: None,
            host_ms: Vec::new(),
            output,
            output_name: output_name.to_string(),
            compile_ms: None,
            kernel_lines: None,
            kernel_bytes: None,
            build_options: String::new(),
            note: None,
        }
    }
}

/// The CompileOptions of a Lift level (`none`, `barrier`, `barrier+cf`, `all`).
pub fn level_options(level: &str) -> Option<CompileOptions> {
    let (b, c, a) = match level {
        "none" => (false, false, false),
        "barrier" => (true, false, false),
        "barrier+cf" => (true, true, false),
        "all" => (true, true, true),
        _ => return None,
    };
    // The register prefetch and the padded local rows are not among the
    // paper's switches: only the full compiler (`all`) has them, so the
    // lower levels stay the paper's.
    Some(CompileOptions {
        barrier_elim: b,
        cf_simplify: c,
        arith_simplify: a,
        prefetch: a,
        pad_local: a,
        ..CompileOptions::default()
    })
}

/// Device copies of every non-scalar input and every buffer.
pub(crate) fn upload_all(
    rt: &Runtime,
    cfg: &Config,
    inputs: &Arrays,
    buffers: &Arrays,
) -> Result<BTreeMap<String, DeviceBuffer>, RunError> {
    let mut out = BTreeMap::new();
    for spec in &cfg.inputs {
        if !spec.is_scalar() {
            out.insert(spec.name.clone(), rt.upload(&spec.name, &inputs[&spec.name])?);
        }
    }
    for spec in &cfg.buffers {
        out.insert(spec.name.clone(), rt.upload(&spec.name, &buffers[&spec.name])?);
    }
    Ok(out)
}

fn read_sources(cfg: &Config) -> Result<(String, String), RunError> {
    let r = cfg.reference.as_ref().ok_or(RunError::NoSection("reference"))?;
    let mut text = String::new();
    for p in &r.sources {
        let t = crate::ir::read_text(p)?;
        text.push_str(&t);
        text.push('\n');
    }
    let label = r.sources.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" + ");
    Ok((label, text))
}

/// Runs the reference kernels.
pub fn run_reference(rt: &Runtime, w: Workload, counts: RunCounts) -> Result<Execution, RunError> {
    let Workload { cfg, sizes, inputs, buffers } = w;
    let r = cfg.reference.as_ref().ok_or(RunError::NoSection("reference"))?;
    let (label, source) = read_sources(cfg)?;
    // The preset's sizes plus the tuning parameters chosen for this device.
    let (sizes, build_options) =
        super::buildopts::reference_build(&r.build_options, sizes, &r.params_for(&rt.info.name))?;
    let sizes = &sizes;
    let program = rt.build(&label, &source, &build_options)?;
    let bufs = upload_all(rt, cfg, inputs, buffers)?;
    let mut launches = Vec::new();
    for k in &r.kernels {
        let mut args = Vec::new();
        for a in &k.args {
            args.push(match a {
                RefArg::Array(n) => match bufs.get(n) {
                    Some(b) => KernelArg::Buffer(b),
                    None => launch::scalar_arg(&inputs[n]),
                },
                RefArg::Int(v) => KernelArg::Int(*v as i32),
                RefArg::Float(v) => KernelArg::Float(*v as f32),
                RefArg::Expr(e) => KernelArg::Int(eval(e, sizes).map_err(|source| RunError::Argument {
                    expr: e.clone(),
                    kernel: k.name.clone(),
                    source,
                })? as i32),
            });
        }
        launches.push(Launch {
            program: &program,
            kernel: &k.name,
            args,
            global: launch::eval_dims(&k.global, sizes, "global size")?,
            local: k.local.as_ref().map(|l| launch::eval_dims(l, sizes, "local size")).transpose()?,
        });
    }
    let times = launch::time(rt, &launches, counts, Stop::NEVER)?;
    let out = bufs
        .get(&r.output)
        .ok_or_else(|| RunError::ScalarOutput { section: "reference", name: r.output.clone() })?;
    let output = rt.download(out)?;
    Ok(Execution {
        times_ms: times.ms,
        timing: Timing::Profiling,
        median_of: None,
        host_ms: times.host_ms,
        output,
        output_name: r.output.clone(),
        compile_ms: None,
        kernel_lines: Some(source.lines().count()),
        kernel_bytes: Some(source.len()),
        build_options,
        note: None,
    })
}

/// [`crate::parse::load_program`] for a result row: a syntax error gives
/// its position and what was expected, never the text found there, so
/// that no line of a source file is copied into a `results.csv` (issue 23).
pub(crate) fn load_program_for_row(path: &Path) -> Result<(SourceFile, Program), RunError> {
    crate::parse::load_program(path).map_err(|e| RunError::Located(e.without_source_text()))
}

/// A launch error as a results row says it: a config's `args` that
/// misses a parameter is named with its file and `section`.
pub(super) fn launch_message(e: LaunchError, cfg: &Config, section: &'static str) -> RunError {
    match e {
        LaunchError::Unbound { def, param } => {
            RunError::Unbound { file: cfg.file.clone(), section, def, param }
        }
        LaunchError::UnknownSize(name) => RunError::UnknownSize(name),
        e => RunError::Launch(e),
    }
}

/// Replays the derivation at `path` for a result row: errors give the
/// step's position and what was wrong, without the text of the line.
fn derive_for_row(program: &Program, def: &str, path: &Path) -> Result<Program, RunError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| RunError::Io { path: path.into(), source })?;
    let quiet = |e: crate::rewrite::DerivationError| {
        let msg = e.fault.to_string();
        let msg = msg.split(", found `").next().unwrap_or("");
        RunError::Located(e.location(&name).error(msg))
    };
    let d = crate::rewrite::parse_derivation(&text).map_err(quiet)?;
    let start = crate::rewrite::prepare(program, def)
        .map_err(|source| RunError::Prepare { path: path.into(), source })?;
    let steps = crate::rewrite::replay(&start, def, &d).map_err(quiet)?;
    let last = steps.last().map_or(start, |s| s.program.clone());
    Ok(crate::rewrite::release(&last, def))
}

pub(super) fn pad3(v: &[usize]) -> [i64; 3] {
    let mut out = [1i64; 3];
    for (o, x) in out.iter_mut().zip(v) {
        *o = *x as i64;
    }
    out
}

/// A compiled and built Lift kernel with its launch sizes.
struct Built {
    program: RuntimeProgram,
    kernel: crate::compile::Kernel,
    global: Vec<usize>,
    local: Option<Vec<usize>>,
}

/// The options a Lift kernel of a config is compiled with at `level` and a
/// size preset: the level's switches, the sizes when the kernel asks for
/// static sizes, and the config's launch sizes.
pub fn kernel_options(k: &LiftKernel, level: &str, sizes: &Sizes) -> Result<CompileOptions, RunError> {
    let mut opts = level_options(level).ok_or_else(|| RunError::UnknownLevel(level.into()))?;
    if k.static_sizes {
        opts.sizes = sizes.clone();
    }
    let cfg_global = k.global.as_ref().map(|g| launch::eval_dims(g, sizes, "global size")).transpose()?;
    let cfg_local = k.local.as_ref().map(|l| launch::eval_dims(l, sizes, "local size")).transpose()?;
    opts.global = cfg_global.as_deref().map(pad3);
    opts.local = cfg_local.as_deref().map(pad3);
    Ok(opts)
}

fn compile_one(
    rt: &Runtime,
    k: &LiftKernel,
    level: &str,
    sizes: &Sizes,
    build_options: &str,
    compile_ms: &mut f64,
) -> Result<Built, RunError> {
    let (file, program) = load_program_for_row(&k.program)?;
    let program = match &k.derivation {
        Some(d) => derive_for_row(&program, &k.def, d)?,
        None => program,
    };
    // Sizes that break a fact the program needs (a `split(128)` of 1000
    // elements) are refused here, naming the place, before any launch.
    if let Some(def) = program.def(&k.def) {
        crate::passes::sizes_fit::sizes_fit(&program, def, sizes).map_err(|e| match e.span {
            Some(span) => RunError::Located(file.error_at(span, &e)),
            None => RunError::SizeFit { path: k.program.clone(), source: e },
        })?;
    }
    let opts = kernel_options(k, level, sizes)?;
    let cfg_global = k.global.as_ref().map(|g| launch::eval_dims(g, sizes, "global size")).transpose()?;
    let cfg_local = k.local.as_ref().map(|l| launch::eval_dims(l, sizes, "local size")).transpose()?;
    let t0 = Instant::now();
    let kernel =
        compile(&program, &k.def, &opts).map_err(|e| RunError::Located(file.error_in(e.span(), &e)))?;
    *compile_ms += t0.elapsed().as_secs_f64() * 1e3;
    let global = match cfg_global {
        Some(g) => g,
        None => launch::compiler_global(&kernel, sizes)?,
    };
    let local = match cfg_local {
        Some(l) => Some(l),
        None => launch::compiler_local(&kernel, sizes, global.len())?,
    };
    let label = format!("{} (def {}, generated at level {level})", k.program.display(), k.def);
    let program = rt.build(&label, &kernel.source, build_options)?;
    Ok(Built { program, kernel, global, local })
}

/// A benchmark's config and data at one size: what every variant runs on.
#[derive(Clone, Copy)]
pub struct Workload<'a> {
    pub cfg: &'a Config,
    pub sizes: &'a Sizes,
    pub inputs: &'a Arrays,
    pub buffers: &'a Arrays,
}

/// Compiles every Lift kernel of the benchmark at `level` (a level, or a
/// named variant, built at `all`) and runs them.
pub fn run_lift(rt: &Runtime, w: Workload, level: &str, counts: RunCounts) -> Result<Execution, RunError> {
    let Workload { cfg, sizes, inputs, buffers } = w;
    let lift = cfg.lift.as_ref().ok_or(RunError::NoSection("lift"))?;
    let kernels = lift.kernels_of(level).ok_or_else(|| RunError::UnknownVariant(level.into()))?;
    // A named variant is its own program, compiled with every optimisation.
    let level = if config::is_named_variant(level) { "all" } else { level };
    // The reference's options, sizes substituted (its tuning parameters are its own).
    let build_options = match &cfg.reference {
        Some(r) => super::buildopts::expand(&r.build_options, sizes)?,
        None => String::new(),
    };
    let mut compile_ms = 0.0;
    let mut built = Vec::new();
    for k in kernels {
        built.push(compile_one(rt, k, level, sizes, &build_options, &mut compile_ms)?);
    }
    let bufs = upload_all(rt, cfg, inputs, buffers)?;
    let steps: Vec<Step> = kernels
        .iter()
        .zip(&built)
        .map(|(k, b)| Step {
            kernel: &b.kernel,
            program: &b.program,
            def: &k.def,
            sizes,
            global: b.global.clone(),
            local: b.local.clone(),
            args: Args::Mapped(&k.args),
            output: &k.output,
        })
        .collect();
    let times = launch::run(rt, &steps, Buffers { device: &bufs, host: inputs }, counts, Stop::NEVER)
        .map_err(|e| launch_message(e, cfg, "lift.kernels"))?;
    let out = bufs
        .get(&lift.output)
        .ok_or_else(|| RunError::ScalarOutput { section: "lift", name: lift.output.clone() })?;
    let output = rt.download(out)?;
    Ok(Execution {
        times_ms: times.ms,
        timing: Timing::Profiling,
        median_of: None,
        host_ms: times.host_ms,
        output,
        output_name: lift.output.clone(),
        compile_ms: Some(compile_ms),
        kernel_lines: Some(built.iter().map(|b| b.kernel.source.lines().count()).sum()),
        kernel_bytes: Some(built.iter().map(|b| b.kernel.source.len()).sum()),
        build_options,
        note: None,
    })
}
