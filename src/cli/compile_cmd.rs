//! `lift compile` and `lift exec`.

use super::arg_error::{ArgError, ExecError, LengthMismatch};
use super::{bad, failed, BadInput, CliError, Failure, InSource};
use crate::arith::ArithExpr;
use crate::compile::{compile, CompileOptions, Kernel, KernelParam};
use crate::harness::npy::{read_npy, write_npy, NpyArray};
use crate::interp;
use crate::ir::{Program, SourceFile};
use crate::launch::{self, Buffers, RunCounts, Step, Stop};
use crate::passes::sizes_fit::MAX_ELEMS;
use crate::runtime::{self, Runtime};
use crate::types::{Arrays, HostArray, ScalarType, Sizes, Type};
use crate::validate::compare;
use clap::Args;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Args, Debug, Clone)]
pub(crate) struct CompileFlags {
    /// The `def` to compile (default: the first in the file).
    #[arg(long)]
    def: Option<String>,
    /// Derive the low-level program from the (high-level) def first by
    /// replaying this derivation (docs/REWRITE.md).
    #[arg(long, value_name = "FILE")]
    derivation: Option<PathBuf>,
    /// A size known at compile time, `N=4096` (repeatable or comma-separated).
    #[arg(long = "size", value_name = "NAME=VALUE", value_delimiter = ',')]
    sizes: Vec<String>,
    /// Local size, `64` or `16,16`.
    #[arg(long)]
    local: Option<String>,
    /// Global size, `4096` or `512,512`.
    #[arg(long)]
    global: Option<String>,
    #[arg(long)]
    no_arith_simplify: bool,
    #[arg(long)]
    no_barrier_elim: bool,
    #[arg(long)]
    no_cf_simplify: bool,
    /// Leave tiled loops without register prefetch (docs/ARCHITECTURE.md)
    #[arg(long)]
    no_prefetch: bool,
    /// Keep local arrays' rows unpadded where work-items would share a bank
    /// (docs/ARCHITECTURE.md)
    #[arg(long)]
    no_pad_local: bool,
}

#[derive(Args, Debug, Clone)]
pub(crate) struct CompileArgs {
    file: PathBuf,
    /// Output file (default: standard output).
    #[arg(short = 'o')]
    out: Option<PathBuf>,
    #[command(flatten)]
    flags: CompileFlags,
}

#[derive(Args, Debug, Clone)]
pub(crate) struct ExecArgs {
    file: PathBuf,
    /// `name=file.npy` or `name=2.5` for a scalar (repeatable).
    #[arg(long = "input", value_name = "NAME=VALUE")]
    inputs: Vec<String>,
    /// Where the result goes (.npy).
    #[arg(long)]
    output: PathBuf,
    #[arg(long)]
    device: Option<String>,
    /// Also run the interpreter and compare.
    #[arg(long)]
    check: bool,
    /// Relative tolerance of --check (finite, at least 0).
    #[arg(long, default_value_t = 1e-4, value_parser = tolerance)]
    rtol: f64,
    /// Absolute tolerance of --check (finite, at least 0).
    #[arg(long, default_value_t = 1e-5, value_parser = tolerance)]
    atol: f64,
    /// Also time the kernel: one warm-up and this many runs, printing the
    /// median on the device clock (OpenCL profiling events).
    #[arg(long, default_value_t = 0)]
    runs: usize,
    #[command(flatten)]
    flags: CompileFlags,
}

/// A tolerance: a finite number of at least 0 (a NaN would pass every
/// comparison).
fn tolerance(s: &str) -> Result<f64, ArgError> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(ArgError::Tolerance(s.into())),
    }
}

fn parse_dims(flag: &'static str, s: &str) -> Result<[i64; 3], CliError> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(bad(BadInput::DimCount { flag, text: s.to_string() }));
    }
    let mut out = [1i64; 3];
    for (o, p) in out.iter_mut().zip(&parts) {
        *o = p
            .parse()
            .ok()
            .filter(|v: &i64| *v >= 1)
            .ok_or_else(|| bad(BadInput::Dim { flag, text: s.to_string(), part: p.to_string() }))?;
    }
    Ok(out)
}

/// `NAME=VALUE` sizes, each from 1 to [`MAX_ELEMS`].
pub(crate) fn parse_sizes(list: &[String]) -> Result<Sizes, CliError> {
    let mut out = BTreeMap::new();
    for s in list {
        let (k, v) = s.split_once('=').ok_or_else(|| bad(BadInput::SizeSyntax(s.clone())))?;
        let v: i64 =
            v.trim().parse().ok().filter(|v| *v >= 1).ok_or_else(|| bad(BadInput::SizeValue(s.clone())))?;
        if v > MAX_ELEMS {
            return Err(bad(BadInput::SizeTooLarge(s.clone())));
        }
        out.insert(k.trim().to_string(), v);
    }
    Ok(out)
}

fn load(path: &Path) -> Result<(SourceFile, Program), CliError> {
    crate::parse::load_program(path).map_err(bad)
}

/// The program after the `--derivation`, if one is given.
fn derived(program: Program, def: &str, flags: &CompileFlags) -> Result<Program, CliError> {
    match &flags.derivation {
        None => Ok(program),
        Some(d) => crate::rewrite::derive_file(&program, def, d).map_err(bad),
    }
}

fn def_name(program: &Program, flags: &CompileFlags, file: &SourceFile) -> Result<String, CliError> {
    match &flags.def {
        Some(d) => Ok(d.clone()),
        None => program.defs.first().map(|d| d.name.clone()).ok_or_else(|| missing_def(file, program, None)),
    }
}

/// A `def` the file lacks (`None`: it has none), positioned in the file.
pub(crate) fn missing_def(file: &SourceFile, program: &Program, def: Option<&str>) -> CliError {
    let have = program.defs.iter().map(|d| d.name.clone()).collect();
    bad(InSource::MissingDef { file: file.clone(), def: def.map(str::to_string), have })
}

fn options(flags: &CompileFlags, sizes: Sizes) -> Result<CompileOptions, CliError> {
    Ok(CompileOptions {
        arith_simplify: !flags.no_arith_simplify,
        barrier_elim: !flags.no_barrier_elim,
        cf_simplify: !flags.no_cf_simplify,
        prefetch: !flags.no_prefetch,
        pad_local: !flags.no_pad_local,
        sizes,
        local: flags.local.as_deref().map(|s| parse_dims("local", s)).transpose()?,
        global: flags.global.as_deref().map(|s| parse_dims("global", s)).transpose()?,
        // `lift compile` prints the count as inferred; `lift exec` rounds it
        // up where its `--local` does not divide it (`compile_for_launch`).
        whole_groups: false,
    })
}

fn compile_file(path: &Path, flags: &CompileFlags, sizes: Sizes) -> Result<(String, Kernel), CliError> {
    let (file, program) = load(path)?;
    let def = def_name(&program, flags, &file)?;
    if program.def(&def).is_none() {
        return Err(missing_def(&file, &program, Some(&def)));
    }
    let program = derived(program, &def, flags)?;
    if let Some(d) = program.def(&def) {
        known_sizes(d, &sizes, path)?;
    }
    let opts = options(flags, sizes)?;
    let kernel = compile(&program, &def, &opts).map_err(|source| bad(InSource::Compile { file, source }))?;
    Ok((def, kernel))
}

/// The comment that heads a written kernel: launch sizes and parameters.
pub(crate) fn header(file: &Path, def: &str, k: &Kernel) -> String {
    let dims = |d: &[ArithExpr]| d.iter().map(|e| e.to_string()).collect::<Vec<_>>().join(", ");
    let mut h = format!("// Generated by lift from {} (def {def}); kernel `{}`.\n", file.display(), k.name);
    h.push_str(&format!("// global size: [{}]\n", dims(&k.global)));
    match &k.local {
        Some(l) => h.push_str(&format!("// local size:  [{}]\n", dims(l))),
        None => h.push_str("// local size:  chosen by the OpenCL driver\n"),
    }
    h.push_str("// parameters, in order:\n");
    for (i, p) in k.params.iter().enumerate() {
        let line = match p {
            KernelParam::Input { name, ty } => format!("input  {name}: {ty}"),
            KernelParam::Scalar { name, ty } => format!("scalar {name}: {ty}"),
            KernelParam::Output { ty } => format!("output: {ty}"),
            KernelParam::Temp { name, bytes } => format!("temp   {name}: {bytes} bytes"),
            KernelParam::Local { name, bytes } => format!("local  {name}: {bytes} bytes"),
            KernelParam::Size { name } => format!("size   {name}: int"),
        };
        h.push_str(&format!("//   {i}: {line}\n"));
    }
    h
}

pub(crate) fn compile_cmd(a: &CompileArgs) -> Result<(), CliError> {
    let sizes = parse_sizes(&a.flags.sizes)?;
    let (def, kernel) = compile_file(&a.file, &a.flags, sizes)?;
    let text = format!("{}\n{}", header(&a.file, &def, &kernel), kernel.source);
    match &a.out {
        Some(p) => {
            std::fs::write(p, text).map_err(|source| bad(BadInput::WriteOut { path: p.clone(), source }))
        }
        None => {
            use std::io::Write;
            // A reader that stops early (`lift compile f.lift | head`) is
            // not an error; `print!` would panic on the closed pipe.
            match std::io::stdout().lock().write_all(text.as_bytes()) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(bad(BadInput::Stdout(e))),
                _ => Ok(()),
            }
        }
    }
}

/// Components per element and scalar type of a parameter's base element.
fn elem_layout(ty: &Type) -> Result<(usize, ScalarType), ExecError> {
    match ty.base_elem() {
        Type::Scalar(s) => Ok((1, *s)),
        Type::Vector(s, n) => Ok((*n as usize, *s)),
        // A tuple of one scalar type is a packed struct: a last dimension
        // of its fields, as a vector's components.
        Type::Tuple(ts) => match ts.first() {
            Some(f @ Type::Scalar(s)) if ts.iter().all(|t| t == f) => Ok((ts.len(), *s)),
            _ => Err(ExecError::NotNpyElement(ty.base_elem().clone())),
        },
        t => Err(ExecError::NotNpyElement(t.clone())),
    }
}

/// The expected .npy shape of a type: its lengths plus a vector dimension.
fn shape_of(ty: &Type) -> Result<(Vec<ArithExpr>, usize, ScalarType), ExecError> {
    let (w, s) = elem_layout(ty)?;
    Ok((ty.lengths(), w, s))
}

fn bind_shape(name: &str, ty: &Type, shape: &[usize], sizes: &mut Sizes) -> Result<(), ExecError> {
    let (lens, w, _) = shape_of(ty)?;
    let mut want = lens.len();
    if w > 1 {
        want += 1;
        if shape.last() != Some(&w) {
            return Err(ExecError::VectorWidth {
                name: name.into(),
                shape: shape.to_vec(),
                width: w,
                ty: ty.clone(),
            });
        }
    }
    if shape.len() != want {
        return Err(ExecError::Dimensions { name: name.into(), shape: shape.to_vec(), ty: ty.clone(), want });
    }
    // First bind plain size variables, then check every length.
    for (e, &d) in lens.iter().zip(shape) {
        if let ArithExpr::Var(v) = e {
            sizes.entry(v.name.clone()).or_insert(d as i64);
        }
    }
    for (e, &d) in lens.iter().zip(shape) {
        let v = e.eval_with(&|n| sizes.get(n).copied()).map_err(|source| ExecError::UnknownLength {
            name: name.into(),
            len: e.clone(),
            source,
        })?;
        if v != d as i64 {
            return Err(ExecError::Length(Box::new(LengthMismatch {
                name: name.into(),
                shape: shape.to_vec(),
                len: e.clone(),
                value: v,
                sizes: sizes.clone(),
            })));
        }
    }
    Ok(())
}

fn scalar_value(name: &str, s: &str, ty: &Type) -> Result<HostArray, ExecError> {
    let parsed = match ty {
        Type::Scalar(ScalarType::Float) => s.parse::<f32>().ok().map(|v| HostArray::F32(vec![v])),
        Type::Scalar(ScalarType::Int) => s.parse::<i32>().ok().map(|v| HostArray::I32(vec![v])),
        _ => return Err(ExecError::NeedsNpy { name: name.into(), ty: ty.clone() }),
    };
    parsed.ok_or_else(|| ExecError::NotA { name: name.into(), text: s.into(), ty: ty.clone() })
}

/// Lanes a vector element occupies in a buffer: a 3-component vector
/// takes the space of 4 (OpenCL's layout), so the host pads it.
fn stored_lanes(ty: &Type, w: usize) -> usize {
    if matches!(ty.base_elem(), Type::Vector(_, 3)) {
        4
    } else {
        w
    }
}

/// `data` with each group of `w` values padded to `stored_lanes(ty, w)`.
fn pad_lanes(data: &HostArray, ty: &Type, w: usize) -> HostArray {
    let s = stored_lanes(ty, w);
    fn go<T: Copy + Default>(v: &[T], w: usize, s: usize) -> Vec<T> {
        if w == s {
            return v.to_vec();
        }
        v.chunks(w).flat_map(|c| c.iter().copied().chain(std::iter::repeat_n(T::default(), s - w))).collect()
    }
    match data {
        HostArray::F32(v) => HostArray::F32(go(v, w, s)),
        HostArray::I32(v) => HostArray::I32(go(v, w, s)),
    }
}

/// Inverse of [`pad_lanes`].
fn unpad_lanes(data: HostArray, ty: &Type, w: usize) -> HostArray {
    let s = stored_lanes(ty, w);
    if w == s {
        return data;
    }
    fn go<T: Copy>(v: Vec<T>, w: usize, s: usize) -> Vec<T> {
        v.chunks(s).flat_map(|c| c[..w.min(c.len())].to_vec()).collect()
    }
    match data {
        HostArray::F32(v) => HostArray::F32(go(v, w, s)),
        HostArray::I32(v) => HostArray::I32(go(v, w, s)),
    }
}

/// Refuses `--size` names that are not sizes of the def.
fn known_sizes(def: &crate::ir::Def, sizes: &Sizes, file: &Path) -> Result<(), CliError> {
    let mut names: Vec<String> = Vec::new();
    for p in &def.params {
        if let Some(t) = &p.ty {
            for l in t.lengths() {
                names.extend(l.vars().into_iter().map(|v| v.name));
            }
        }
    }
    if let Some(k) = sizes.keys().find(|k| !names.contains(k)) {
        names.sort();
        names.dedup();
        return Err(bad(BadInput::UnknownSize {
            size: k.clone(),
            def: def.name.clone(),
            file: file.to_path_buf(),
            known: names,
        }));
    }
    Ok(())
}

pub(crate) fn exec_cmd(a: &ExecArgs) -> Result<(), CliError> {
    let (file, program) = load(&a.file)?;
    let def_name = def_name(&program, &a.flags, &file)?;
    if program.def(&def_name).is_none() {
        return Err(missing_def(&file, &program, Some(&def_name)));
    }
    let program = derived(program, &def_name, &a.flags)?;
    let def = program
        .def(&def_name)
        .ok_or_else(|| bad(BadInput::NoDef { file: a.file.clone(), def: def_name.clone() }))?;
    let mut given: BTreeMap<String, String> = BTreeMap::new();
    for s in &a.inputs {
        let (k, v) = s.split_once('=').ok_or_else(|| bad(BadInput::InputSyntax(s.clone())))?;
        given.insert(k.trim().to_string(), v.trim().to_string());
    }
    let compile_sizes = parse_sizes(&a.flags.sizes)?;
    known_sizes(def, &compile_sizes, &a.file)?;
    // An output that cannot be written is bad input, found before running
    // (probed beside it, so that a refused run leaves no empty file).
    let dir = match a.output.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let probe = dir.join(format!(".lift-write-probe-{}", std::process::id()));
    std::fs::write(&probe, b"")
        .and_then(|()| std::fs::remove_file(&probe))
        .map_err(|source| bad(BadInput::Output { path: a.output.clone(), source }))?;
    let mut sizes = compile_sizes.clone();
    let mut host: Arrays = BTreeMap::new();
    for p in &def.params {
        let ty =
            p.ty.as_ref()
                .ok_or_else(|| bad(BadInput::Untyped { param: p.name.clone(), def: def_name.clone() }))?;
        let v = given.get(&p.name).ok_or_else(|| bad(BadInput::MissingInput(p.name.clone())))?;
        let arr = if matches!(ty, Type::Array(..)) {
            let npy = read_npy(Path::new(v)).map_err(bad)?;
            if let Some(note) = &npy.note {
                eprintln!("warning: input `{}`: {note}", p.name);
            }
            bind_shape(&p.name, ty, &npy.shape, &mut sizes).map_err(bad)?;
            let (_, _, s) = shape_of(ty).map_err(bad)?;
            match (s, npy.data) {
                (ScalarType::Float, HostArray::I32(v)) => {
                    // Not every integer above 2^24 has an exact float.
                    let v_path = given[&p.name].clone();
                    if let Some((i, x)) =
                        v.iter().enumerate().find(|(_, x)| (**x as f32) as i64 != **x as i64)
                    {
                        return Err(bad(BadInput::InexactFloat {
                            file: v_path,
                            value: *x,
                            index: i,
                            param: p.name.clone(),
                        }));
                    }
                    HostArray::F32(v.into_iter().map(|x| x as f32).collect())
                }
                (ScalarType::Int, HostArray::F32(_)) => {
                    return Err(bad(BadInput::FloatForInt(p.name.clone())))
                }
                (_, d) => d,
            }
        } else {
            scalar_value(&p.name, v, ty).map_err(bad)?
        };
        host.insert(p.name.clone(), arr);
    }
    if let Some(extra) = given.keys().find(|k| !def.params.iter().any(|p| &p.name == *k)) {
        return Err(bad(BadInput::UnknownInput { name: extra.clone(), def: def_name }));
    }
    super::exec_check::sizes_fit(&file, &program, def, &sizes)?;
    let opts = options(&a.flags, compile_sizes)?;
    let kernel = crate::compile::compile_for_launch(&program, &def_name, &opts, &sizes)
        .map_err(|source| bad(InSource::Compile { file, source }))?;
    let info = runtime::select_device(a.device.as_deref()).map_err(bad)?;
    eprintln!("device: {}", info.short());
    let mut uploads: Arrays = BTreeMap::new();
    for p in &def.params {
        if let Some(ty @ Type::Array(..)) = &p.ty {
            let (w, _) = elem_layout(ty).map_err(bad)?;
            uploads.insert(p.name.clone(), pad_lanes(&host[&p.name], ty, w));
        } else {
            uploads.insert(p.name.clone(), host[&p.name].clone());
        }
    }
    let input_bytes = uploads.iter().map(|(k, v)| (k.clone(), v.len() * 4)).collect();
    super::exec_check::buffers_fit(&info, &kernel, &input_bytes, &sizes)?;
    if a.check {
        super::exec_check::interp_fits(&kernel, &host, &sizes)?;
    }
    let (global, local) = launch_sizes(&kernel, &sizes, &a.flags)?;
    let ndrange = super::exec_check::launch_dims(&info, global, local)?;
    let rt = Runtime::new(info).map_err(failed)?;
    let (out, shape, median) =
        run_kernel(&rt, (&a.file, &kernel), &uploads, &sizes, ndrange, a.runs).map_err(failed)?;
    write_npy(&a.output, &NpyArray { shape, data: out.clone(), note: None }).map_err(failed)?;
    println!("wrote {}", a.output.display());
    if let Some(ms) = median {
        println!("kernel: median {ms:.4} ms of {} runs (OpenCL profiling events)", a.runs);
    }
    if a.check {
        let mut args = BTreeMap::new();
        for p in &def.params {
            let ty = p.ty.as_ref().ok_or_else(|| bad(BadInput::UntypedParameter))?;
            let v = interp::value_from_flat(ty, &host[&p.name], &sizes)
                .map_err(|e| failed(Failure::CheckInput(e)))?;
            args.insert(p.name.clone(), v);
        }
        let v = interp::eval_def(&program, &def_name, &args, &sizes)
            .map_err(|e| failed(Failure::CheckInterp(e)))?;
        let gold = interp::value_to_flat(&v);
        let c = compare(&out, &gold, a.rtol, a.atol);
        println!("check: largest relative error {:.3e}", c.max_rel_error);
        if !c.ok {
            return Err(failed(Failure::CheckFailed(c.message)));
        }
        println!("check: ok");
    }
    Ok(())
}

/// Global and local sizes: the flags' when given, else the kernel's.
fn launch_sizes(
    k: &Kernel,
    sizes: &Sizes,
    flags: &CompileFlags,
) -> Result<([i64; 3], Option<[i64; 3]>), CliError> {
    let ev = |e: &ArithExpr, what: &'static str| -> Result<i64, CliError> {
        e.eval_with(&|n| sizes.get(n).copied())
            .map_err(|source| bad(ExecError::Unsized { what, expr: e.clone(), source }))
    };
    let global = match &flags.global {
        Some(s) => parse_dims("global", s)?,
        None => [
            ev(&k.global[0], "global size")?,
            ev(&k.global[1], "global size")?,
            ev(&k.global[2], "global size")?,
        ],
    };
    let local = match (&flags.local, &k.local) {
        (Some(s), _) => Some(parse_dims("local", s)?),
        (None, Some(l)) => {
            Some([ev(&l[0], "local size")?, ev(&l[1], "local size")?, ev(&l[2], "local size")?])
        }
        (None, None) => None,
    };
    Ok((global, local))
}

/// Builds `k` and runs it once through [`launch::run`] on the def's inputs
/// (vectors padded): its output, unpadded, and the output's .npy shape.
/// Runs `k` once for its output and, with `runs` above 0, times it (one
/// warm-up); returns the output, its shape and the median time.
fn run_kernel(
    rt: &Runtime,
    (file, k): (&Path, &Kernel),
    host: &Arrays,
    sizes: &Sizes,
    (global, local): (Vec<usize>, Option<Vec<usize>>),
    runs: usize,
) -> Result<(HostArray, Vec<usize>, Option<f64>), ExecError> {
    let ev = |e: &ArithExpr, what: &'static str| -> Result<i64, ExecError> {
        e.eval_with(&|n| sizes.get(n).copied()).map_err(|source| ExecError::Unsized {
            what,
            expr: e.clone(),
            source,
        })
    };
    let program = rt.build(&format!("{} (generated)", file.display()), &k.source, "")?;
    let (olens, w, _) = shape_of(&k.output_type)?;
    let mut shape = Vec::new();
    for e in &olens {
        shape.push(ev(e, "output length")? as usize);
    }
    if w > 1 {
        shape.push(w);
    }
    // The output's name is no identifier: no input of the def shadows it.
    const OUT: &str = "<output>";
    let mut device = launch::upload_inputs(rt, k, host)?;
    device.insert(OUT.into(), launch::output_buffer(rt, "output", &k.output_type, sizes)?);
    let step = Step {
        kernel: k,
        program: &program,
        // The parameters are bound by name: no error names the def.
        def: &k.name,
        sizes,
        global,
        local,
        args: launch::Args::ByName,
        output: OUT,
    };
    let once = RunCounts { warmup: 0, runs: 1 };
    let steps = [step];
    launch::run(rt, &steps, Buffers { device: &device, host }, once, Stop::NEVER)?;
    let out = device.get(OUT).ok_or(ExecError::NoOutput)?;
    let out = rt.download(out)?;
    let median = match runs {
        0 => None,
        _ => {
            let counts = RunCounts { warmup: 1, runs };
            launch::run(rt, &steps, Buffers { device: &device, host }, counts, Stop::NEVER)?.median()
        }
    };
    Ok((unpad_lanes(out, &k.output_type, w), shape, median))
}
