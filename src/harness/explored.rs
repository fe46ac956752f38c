//! The `explored` variant (ICFP 2015 suite; `lift-tuned` in the CGO 2018
//! suite, where the file is `cgo18-<benchmark>.lift`): the low-level program found
//! for the device the harness runs on, committed as
//! `benchmarks/explored/<device-slug>/<file>` (with its `.derivation`).
//! Where none is committed, `lift run`/`lift all` explore one within
//! `--explore-budget` (`super::search`, from the config's
//! `explored.explore:` block) and cache it under the output folder; with
//! exploring off, another device's program runs, its row saying whose.
//!
//! The config's `explored:` section lists the kernels run in order (times
//! summed). A kernel's def comes from the device's file unless it names a
//! `program:` of its own (the fixed second stage of a reduction, such as
//! the sum of the partial results). A kernel output that is no input or
//! buffer of the config is an intermediate: allocated with the size of the
//! kernel's output type, and a later kernel's parameter `[T]P` bound to it
//! gets `P` from its length. Launch sizes are the compiler's unless given.

use super::clock::Timing;
use super::config::{eval, Config};
use super::data::Sizes;
pub use super::explored_spec::{header_local, ExploredKernel, ExploredSpec, EXPLORED_DIR};
use super::results::{Row, Status};
use super::run_error::RunError;
use super::variant::{
    launch_message, level_options, load_program_for_row, pad3, upload_all, Execution, Workload,
};
use super::variant_name::{Family, Variant};
use crate::arith::ArithExpr;
use crate::compile::{compile, CompileOptions, Kernel, KernelParam};
use crate::ir::{Program, SourceFile};
use crate::launch::{self, Args, Buffers, RunCounts, Step, Stop};
use crate::runtime::{DeviceBuffer, ElemKind, Runtime};
use crate::types::Type;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

/// What the rows call the device's program: `lift-tuned` for the stencils
/// (CGO 2018), whose figures count it among the Lift variants; `explored`
/// elsewhere.
pub fn family(cfg: &Config) -> Family {
    if cfg.suite == "cgo18" {
        Family::LiftTuned
    } else {
        Family::Explored
    }
}

/// Binds the size of every parameter `[T]P` whose `P` is still unknown to
/// the length of the buffer passed for it.
fn infer_sizes(
    params: &[KernelParam],
    k: &ExploredKernel,
    bufs: &BTreeMap<String, DeviceBuffer>,
    sizes: &mut Sizes,
) -> Result<(), RunError> {
    for p in params {
        let KernelParam::Input { name, ty: Type::Array(elem, ArithExpr::Var(v)) } = p else {
            continue;
        };
        if sizes.contains_key(&v.name) {
            continue;
        }
        let Some(buf) = k.args.get(name).and_then(|a| bufs.get(a)) else {
            continue;
        };
        let elem_bytes = eval(&elem.size_in_bytes(), sizes)
            .map_err(|source| RunError::ElementSize { name: name.clone(), source })?;
        if elem_bytes > 0 {
            sizes.insert(v.name.clone(), (buf.bytes / elem_bytes as usize) as i64);
        }
    }
    Ok(())
}

/// The first of a kernel's alternative defs whose size constraints hold at
/// `sizes` (with the sizes its buffers imply), compiled with `opts`; the
/// last one's misfit is the error.
fn choose_def(
    loaded: &(SourceFile, Program),
    path: &Path,
    k: &ExploredKernel,
    opts: &CompileOptions,
    sizes: &Sizes,
    bufs: &BTreeMap<String, DeviceBuffer>,
) -> Result<(String, Kernel, Sizes), RunError> {
    let (file, program) = loaded;
    for (i, def) in k.defs.iter().enumerate() {
        let kernel =
            compile(program, def, opts).map_err(|e| RunError::Located(file.error_in(e.span(), &e)))?;
        let mut s = sizes.clone();
        infer_sizes(&kernel.params, k, bufs, &mut s)?;
        let d = program.def(def).ok_or_else(|| RunError::NoDef { path: path.into(), def: def.clone() })?;
        match crate::passes::sizes_fit::sizes_fit(program, d, &s) {
            Ok(()) => return Ok((def.clone(), kernel, s)),
            Err(e) if i + 1 == k.defs.len() => {
                return Err(RunError::DefMisfit { path: path.into(), def: def.clone(), source: e })
            }
            Err(_) => {}
        }
    }
    Err(RunError::NoDefToRun(path.into()))
}

/// A header's tuned local size as `dims` dimensions (missing ones 1).
fn tuned_local(header: &[i64], global: &[usize]) -> Vec<usize> {
    header.iter().map(|&x| x.max(1) as usize).chain(std::iter::repeat(1)).take(global.len()).collect()
}

/// Whether `local` divides `global` in every dimension.
fn divides(global: &[usize], local: &[usize]) -> bool {
    global.iter().zip(local).all(|(g, l)| g % l == 0)
}

/// Compiles (level `all`) and runs the kernels; `device_file` is the
/// device's program.
pub fn run_explored(
    rt: &Runtime,
    spec: &ExploredSpec,
    device_file: &Path,
    w: Workload,
    counts: RunCounts,
) -> Result<Execution, RunError> {
    let Workload { cfg, sizes, inputs, buffers } = w;
    let build_options = cfg.reference.as_ref().map(|r| r.build_options.clone()).unwrap_or_default();
    let mut sizes = sizes.clone();
    let mut bufs = upload_all(rt, cfg, inputs, buffers)?;
    let mut compile_ms = 0.0;
    let mut built = Vec::new();
    for k in &spec.kernels {
        let path = k.program.as_deref().unwrap_or(device_file);
        let loaded = load_program_for_row(path)?;
        let program = &loaded.1;
        // `lift explore` writes the local size it tuned into the header.
        let text = if k.program.is_none() { std::fs::read_to_string(path).ok() } else { None };
        let header = text.as_deref().and_then(header_local);
        // A program `lift explore` timed compiled for its sizes runs so.
        let sized = text.as_deref().is_some_and(crate::explore::replay::header_static_sizes);
        let mut opts = level_options("all").ok_or(RunError::NoLevelAll)?;
        if k.static_sizes || sized {
            opts.sizes = sizes.clone();
        }
        let cfg_global =
            k.global.as_ref().map(|g| launch::eval_dims(g, &sizes, "global size")).transpose()?;
        let cfg_local = k.local.as_ref().map(|l| launch::eval_dims(l, &sizes, "local size")).transpose()?;
        opts.global = cfg_global.as_deref().map(pad3);
        opts.local = cfg_local.as_deref().map(pad3);
        let t0 = Instant::now();
        let (def, kernel, inferred) = choose_def(&loaded, path, k, &opts, &sizes, &bufs)?;
        sizes = inferred;
        let first_ms = t0.elapsed().as_secs_f64() * 1e3;
        compile_ms += first_ms;
        if !bufs.contains_key(&k.output) {
            let bytes = eval(&kernel.output_type.size_in_bytes(), &sizes)
                .map_err(|source| RunError::IntermediateSize { name: k.output.clone(), source })?;
            let b = rt.zeroed(&k.output, ElemKind::F32, bytes.max(0) as usize)?;
            bufs.insert(k.output.clone(), b);
        }
        let mut global = match cfg_global {
            Some(g) => g,
            None => launch::compiler_global(&kernel, &sizes)?,
        };
        let mut kernel = kernel;
        let local = match (cfg_local, &kernel.local) {
            (Some(l), _) => Some(l),
            (None, Some(_)) => launch::compiler_local(&kernel, &sizes, global.len())?,
            // The tuned local size; where it does not divide this size's
            // global one, the kernel launches whole work-groups, as the
            // search compiled it at such sizes (`compile::compile_for_launch`).
            (None, None) => {
                let tuned = header.map(|h| tuned_local(&h, &global));
                // The search compiled the kernel it timed with this local
                // size (`reqd_work_group_size`, which NVIDIA's compiler uses
                // to allocate registers: hotspot3d's tuned kernel ran 3x
                // slower without it), so the harness compiles it so too.
                if let Some(l) = &tuned {
                    opts.local = Some(pad3(l));
                    let t0 = Instant::now();
                    kernel = crate::compile::compile_for_launch(program, &def, &opts, &sizes)
                        .map_err(|source| RunError::Compile { path: path.into(), source })?;
                    if !divides(&global, l) {
                        global = launch::compiler_global(&kernel, &sizes)?;
                    }
                    // The reported compile time is that of the kernel run.
                    compile_ms += t0.elapsed().as_secs_f64() * 1e3 - first_ms;
                }
                tuned
            }
        };
        let label = format!("{} (def {def}, explored variant)", path.display());
        let program = rt.build(&label, &kernel.source, &build_options)?;
        built.push((program, kernel, global, local, def));
    }
    let steps: Vec<Step> = spec
        .kernels
        .iter()
        .zip(&built)
        .map(|(k, (program, kernel, global, local, def))| Step {
            kernel,
            program,
            def,
            sizes: &sizes,
            global: global.clone(),
            local: local.clone(),
            args: Args::Mapped(&k.args),
            output: &k.output,
        })
        .collect();
    let times = launch::run(rt, &steps, Buffers { device: &bufs, host: inputs }, counts, Stop::NEVER)
        .map_err(|e| launch_message(e, cfg, "explored.kernels"))?;
    let out = bufs.get(&spec.output).ok_or_else(|| RunError::NotABuffer(spec.output.clone()))?;
    let output = rt.download(out)?;
    Ok(Execution {
        times_ms: times.ms,
        timing: Timing::Profiling,
        median_of: None,
        host_ms: times.host_ms,
        output,
        output_name: spec.output.clone(),
        compile_ms: Some(compile_ms),
        kernel_lines: Some(built.iter().map(|b| b.1.source.lines().count()).sum()),
        kernel_bytes: Some(built.iter().map(|b| b.1.source.len()).sum()),
        build_options,
        note: None,
    })
}

/// The non-comment lines of the derivation next to the program a row's
/// message names (`program benchmarks/explored/<slug>/<file>.lift`).
fn derivation_of(row: &Row) -> Option<Vec<String>> {
    let prog = row.message.split("program ").last()?.split(';').next()?.trim();
    let text = std::fs::read_to_string(Path::new(prog).with_extension("derivation")).ok()?;
    Some(
        text.lines()
            .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
            .filter(|l| !l.is_empty())
            .collect(),
    )
}

/// The performance-portability table of a run with `explored-other`: per
/// benchmark and size, this device's own program against each other
/// device's program on this device (never against the own program's
/// host-timed twin, `explored@host`) (CSV; `own_speedup` = other / own time,
/// above 1 when the own program is faster).
pub fn portability_csv(rows: &[Row]) -> String {
    let mut out = String::from(
        "benchmark,size,device,own_ms,other_device,other_ms,own_speedup,same_derivation,own_status,other_status\n",
    );
    for own in rows.iter().filter(|r| r.variant == Variant::Explored(Family::Explored)) {
        for (other, slug) in rows
            .iter()
            .filter(|r| r.benchmark == own.benchmark && r.size == own.size)
            .filter_map(|r| match &r.variant {
                Variant::OtherDevice(Family::Explored, slug) => Some((r, slug)),
                _ => None,
            })
        {
            let ms = |r: &Row| r.median_ms.filter(|_| r.status == Status::Ok);
            let speedup = match (ms(own), ms(other)) {
                (Some(a), Some(b)) if a > 0.0 => format!("{:.3}", b / a),
                _ => String::new(),
            };
            let same = match (derivation_of(own), derivation_of(other)) {
                (Some(a), Some(b)) => (a == b).to_string(),
                _ => String::new(),
            };
            let f = |v: Option<f64>| v.map_or(String::new(), |x| format!("{x:.4}"));
            out.push_str(&format!(
                "{},{},\"{}\",{},{},{},{speedup},{same},{},{}\n",
                own.benchmark,
                own.size,
                own.device.replace('"', "'"),
                f(ms(own)),
                slug,
                f(ms(other)),
                own.status,
                other.status
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn portability_pairs_other_devices_and_not_the_host_twin() {
        let row = |variant: &str, ms: f64| Row {
            status: Status::Ok,
            median_ms: Some(ms),
            ..Row::new("dot", "tiny", Variant::parse(variant).unwrap())
        };
        let rows = [row("explored", 2.0), row("explored@host", 2.5), row("explored@gpu-x", 3.0)];
        let csv = portability_csv(&rows);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 2, "{csv}");
        assert!(lines[1].starts_with("dot,tiny,\"\",2.0000,gpu-x,3.0000,1.500,"), "{csv}");
    }
}
