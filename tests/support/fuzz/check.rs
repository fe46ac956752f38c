//! What every fuzz input goes through: parse, then type check and compile
//! each def at the four optimisation levels of the CLI; a def that compiles
//! at small concrete sizes is run on the OpenCL device at every level and
//! compared with the interpreter.

use lift::arith::ArithExpr;
use lift::compile::{compile, CompileError, CompileOptions, Kernel, KernelParam};
use lift::interp;
use lift::ir::{ExprKind, FunKind, Pattern, Program, SourceFile};
use lift::runtime::{ElemKind, KernelArg, Launch, Runtime};
use lift::types::{HostArray, ScalarType, Type};
use lift::validate::compare;
use std::collections::{BTreeMap, HashSet};

use super::Rng;

/// The CLI's optimisation levels (`--no-arith-simplify` and friends).
pub const LEVELS: [(&str, bool, bool, bool); 4] = [
    ("none", false, false, false),
    ("barrier", true, false, false),
    ("barrier+cf", true, true, false),
    ("all", true, true, true),
];

pub fn level_options(level: usize) -> CompileOptions {
    let (_, b, c, a) = LEVELS[level];
    CompileOptions { barrier_elim: b, cf_simplify: c, arith_simplify: a, ..CompileOptions::default() }
}

pub type Sizes = BTreeMap<String, i64>;

/// How one input fared in the front end.
#[derive(Debug, Default)]
pub struct Front {
    pub parse_error: Option<String>,
    /// Per def: its name and each level's kernel or error.
    pub defs: Vec<(String, Vec<Result<Kernel, CompileError>>)>,
}

impl Front {
    /// Errors without a source position (internal errors): a refusal must
    /// say where.
    pub fn unpositioned(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (d, ks) in &self.defs {
            for k in ks {
                if let Err(e @ CompileError::Internal(_)) = k {
                    out.push(format!("def {d}: {e}"));
                }
            }
        }
        out
    }
}

/// Parses `text` and compiles every def at every level.
pub fn front_end(name: &str, text: &str) -> (Option<Program>, Front) {
    let file = SourceFile::new(name, text);
    let mut front = Front::default();
    let program = match lift::parse::parse_program(&file) {
        Ok(p) => p,
        Err(e) => {
            front.parse_error = Some(e.to_string());
            return (None, front);
        }
    };
    for d in &program.defs {
        let ks = (0..LEVELS.len()).map(|l| compile(&program, &d.name, &level_options(l))).collect();
        front.defs.push((d.name.clone(), ks));
    }
    (Some(program), front)
}

/// The outcome of running one def on the device.
#[derive(Debug)]
pub enum Diff {
    /// Every level computed the interpreter's result.
    Same,
    /// Not run: why (sizes not found, too large, the interpreter refused).
    Skipped(String),
    /// The driver refused the kernel or the launch failed.
    DeviceError { level: &'static str, msg: String },
    /// A level's result differs from the interpreter's.
    Mismatch { level: &'static str, sizes: Sizes, msg: String },
}

fn size_vars(prog: &Program, def: &str) -> Vec<String> {
    let mut names = Vec::new();
    if let Some(d) = prog.def(def) {
        for p in &d.params {
            if let Some(t) = &p.ty {
                lift::types::size_names(t, &mut names);
            }
        }
    }
    names.sort();
    names.dedup();
    names
}

/// Divisibility the program needs (`split`, `asVector`) and whole
/// work-groups for the kernels' launch sizes.
fn constraints(prog: &Program, def: &str, kernels: &[&Kernel]) -> Vec<ArithExpr> {
    let mut out = Vec::new();
    if let Some(d) = prog.def(def) {
        if let Ok(types) = lift::passes::typecheck::typecheck_def(prog, d) {
            for (_, e) in lift::ir::visit::expr_positions(&d.body) {
                let ExprKind::Call(f, args) = &e.kind else { continue };
                let FunKind::Pattern(p) = &f.kind else { continue };
                let n = match p {
                    Pattern::Split(n) => n.clone(),
                    Pattern::AsVector(w) => ArithExpr::Cst(i64::from(*w)),
                    _ => continue,
                };
                if let Some(Type::Array(_, len)) = args.first().and_then(|a| types.exprs.get(&a.id)) {
                    out.push(ArithExpr::modulo(len.clone(), n));
                }
            }
        }
    }
    for k in kernels {
        if let Some(l) = &k.local {
            for (g, l) in k.global.iter().zip(l) {
                out.push(ArithExpr::modulo(g.clone(), l.clone()));
            }
        }
    }
    out
}

/// Small sizes, each scanned upwards from `floor` (up to `cap`), at which
/// every constraint holds.
fn pick_sizes(vars: &[String], cs: &[ArithExpr], floor: i64, cap: i64) -> Option<Sizes> {
    // A constraint over a variable that is not a size (an `iterate`'s
    // length) is left to the interpreter.
    let holds = |s: &Sizes| cs.iter().all(|c| c.eval_with(&|v| s.get(v).copied()).map_or(true, |x| x == 0));
    // Variables are fixed one at a time; a constraint over a variable not
    // fixed yet does not count (it cannot be evaluated) until it is.
    let mut cur = Sizes::new();
    for v in vars {
        let found = (floor..=cap).find(|&x| {
            let mut t = cur.clone();
            t.insert(v.clone(), x);
            holds(&t)
        })?;
        cur.insert(v.clone(), found);
    }
    holds(&cur).then_some(cur)
}

fn elem_width(ty: &Type) -> Option<(usize, ScalarType)> {
    match ty.base_elem() {
        Type::Scalar(s) => Some((1, *s)),
        Type::Vector(s, w) => Some((*w as usize, *s)),
        Type::Tuple(_) | Type::Array(..) => None,
    }
}

/// A 3-wide vector takes four lanes in a buffer (OpenCL's layout).
fn pad3(h: &HostArray) -> HostArray {
    match h {
        HostArray::F32(v) => HostArray::F32(v.chunks(3).flat_map(|c| [c[0], c[1], c[2], 0.0]).collect()),
        HostArray::I32(v) => HostArray::I32(v.chunks(3).flat_map(|c| [c[0], c[1], c[2], 0]).collect()),
    }
}

fn unpad3(h: HostArray) -> HostArray {
    match h {
        HostArray::F32(v) => HostArray::F32(v.chunks(4).flat_map(|c| c[..3].to_vec()).collect()),
        HostArray::I32(v) => HostArray::I32(v.chunks(4).flat_map(|c| c[..3].to_vec()).collect()),
    }
}

const MAX_ELEMS: i64 = 1 << 18;

/// Random inputs at `sizes`: floats in [0, 1) (well-conditioned sums),
/// ints 0 (a valid index wherever one is read), scalars fixed.
fn inputs(
    prog: &Program,
    def: &str,
    sizes: &Sizes,
    rng: &mut Rng,
) -> Result<BTreeMap<String, HostArray>, String> {
    let d = prog.def(def).ok_or("no def")?;
    let mut out = BTreeMap::new();
    for p in &d.params {
        let ty = p.ty.as_ref().ok_or("untyped parameter")?;
        let (w, s) = elem_width(ty).ok_or_else(|| format!("parameter `{}` of type {ty}", p.name))?;
        let mut n = w as i64;
        for l in ty.lengths() {
            n = n.saturating_mul(l.eval_with(&|v| sizes.get(v).copied()).map_err(|e| e.to_string())?);
        }
        if !(0..=MAX_ELEMS).contains(&n) {
            return Err(format!("parameter `{}` has {n} elements", p.name));
        }
        let n = n as usize;
        out.insert(
            p.name.clone(),
            match s {
                ScalarType::Float => HostArray::F32((0..n).map(|_| (rng.float() + 1.0) / 2.0).collect()),
                _ => HostArray::I32(vec![if matches!(ty, Type::Array(..)) { 0 } else { 1 }; n]),
            },
        );
    }
    Ok(out)
}

fn eval(e: &ArithExpr, sizes: &Sizes) -> Result<i64, String> {
    e.eval_with(&|v| sizes.get(v).copied()).map_err(|err| err.to_string())
}

/// Runs `def` at every level (its kernels in `kernels`) on `rt` and
/// compares with the interpreter. `floor` is the smallest size tried.
pub fn differential(
    rt: &Runtime,
    prog: &Program,
    def: &str,
    kernels: &[&Kernel],
    floor: i64,
    rng: &mut Rng,
    seen: &mut HashSet<String>,
) -> Diff {
    // A kernel already run (the defs a mutation did not touch) is not run
    // again.
    let fresh: Vec<(usize, &Kernel)> =
        kernels.iter().enumerate().filter(|(_, k)| !seen.contains(&k.source)).map(|(i, k)| (i, *k)).collect();
    if fresh.is_empty() {
        return Diff::Skipped("already run".into());
    }
    if kernels.iter().any(|k| elem_width(&k.output_type).is_none()) {
        return Diff::Skipped("a tuple result (this runner passes arrays of scalars and vectors)".into());
    }
    let vars = size_vars(prog, def);
    let cs = constraints(prog, def, kernels);
    let Some(sizes) = pick_sizes(&vars, &cs, floor, 4096) else {
        return Diff::Skipped("no small sizes fit".into());
    };
    // The interpreter walks values one by one: a matrix product at 64^3
    // and four kernel builds took over a minute on a loaded machine (a
    // false hang in the long run).
    let work = sizes.values().fold(1i64, |a, v| a.saturating_mul(*v));
    if work > 1 << 15 {
        return Diff::Skipped(format!("sizes {sizes:?} too large for the interpreter"));
    }
    // Outputs beyond the bound are not interpreted (that could take long).
    match eval(&kernels[0].output_type.size_in_bytes(), &sizes) {
        Ok(b) if (0..=16 * MAX_ELEMS).contains(&b) => {}
        Ok(b) => return Diff::Skipped(format!("an output of {b} bytes")),
        Err(e) => return Diff::Skipped(format!("output size: {e}")),
    }
    let host = match inputs(prog, def, &sizes, rng) {
        Ok(h) => h,
        Err(e) => return Diff::Skipped(e),
    };
    let d = prog.def(def).expect("def");
    let mut args = BTreeMap::new();
    for p in &d.params {
        let v = match interp::value_from_flat(p.ty.as_ref().expect("typed"), &host[&p.name], &sizes) {
            Ok(v) => v,
            Err(e) => return Diff::Skipped(format!("input: {e}")),
        };
        args.insert(p.name.clone(), v);
    }
    // The interpreter is the oracle; where it refuses the sizes, `lift exec`
    // refuses them before launch too (its check is the type checker's).
    let gold = match interp::eval_def(prog, def, &args, &sizes) {
        Ok(v) => interp::value_to_flat(&v),
        Err(e) => return Diff::Skipped(format!("interpreter: {e}")),
    };
    // A gold of NaNs only validates nothing (`validate::compare` fails it).
    if let HostArray::F32(g) = &gold {
        if !g.is_empty() && g.iter().all(|x| x.is_nan()) {
            return Diff::Skipped("the interpreter's result is NaN everywhere".into());
        }
    }
    // Launches beyond the runner's bound are not run, as outputs beyond it
    // are not interpreted: a skip, not a device error (a padded input made
    // an output of 4 MB, inside the output bound, from 10^6 work-items).
    for (_, k) in &fresh {
        for g in &k.global {
            match eval(g, &sizes) {
                Ok(v) if (1..=MAX_ELEMS).contains(&v) => {}
                Ok(v) => return Diff::Skipped(format!("a launch of {v} work-items")),
                Err(e) => return Diff::Skipped(format!("global size: {e}")),
            }
        }
    }
    // The kernel compiled for these sizes too (`lift compile --size`, what
    // `lift explore` times its leaders with, `explore::specialise`), where
    // it compiles.
    let sized =
        compile(prog, def, &CompileOptions { sizes: sizes.clone(), ..level_options(LEVELS.len() - 1) });
    let in_bounds = |k: &&Kernel| {
        k.global.iter().all(|g| matches!(eval(g, &sizes), Ok(v) if (1..=MAX_ELEMS).contains(&v)))
    };
    let sized: Vec<(&'static str, &Kernel)> =
        sized.as_ref().ok().filter(in_bounds).map(|k| (SIZED, k)).into_iter().collect();
    let levels = fresh.into_iter().map(|(level, k)| (LEVELS[level].0, k)).chain(sized);
    for (name, k) in levels {
        if !seen.insert(k.source.clone()) {
            continue;
        }
        match run_kernel(rt, k, &host, &sizes) {
            Err(msg) => return Diff::DeviceError { level: name, msg },
            Ok(out) => {
                let c = compare(&out, &gold, 1e-3, 1e-3);
                if !c.ok {
                    return Diff::Mismatch { level: name, sizes, msg: c.message };
                }
            }
        }
    }
    Diff::Same
}

/// The level name of the kernel compiled at level `all` for the sizes it
/// runs at.
pub const SIZED: &str = "all, sizes known";

fn run_kernel(
    rt: &Runtime,
    k: &Kernel,
    host: &BTreeMap<String, HostArray>,
    sizes: &Sizes,
) -> Result<HostArray, String> {
    let mut global = Vec::new();
    for g in &k.global {
        let v = eval(g, sizes)?;
        if !(1..=MAX_ELEMS).contains(&v) {
            return Err(format!("global size {v}"));
        }
        global.push(v as usize);
    }
    while global.len() > 1 && global.last() == Some(&1) {
        global.pop();
    }
    let local = match &k.local {
        Some(l) => Some(
            l.iter()
                .take(global.len())
                .map(|e| eval(e, sizes).map(|v| v as usize))
                .collect::<Result<Vec<_>, _>>()?,
        ),
        None => None,
    };
    if let Some(l) = &local {
        let wg: usize = l.iter().product();
        if wg > rt.info.max_work_group || l.contains(&0) {
            return Err(format!("work-group {l:?} beyond the device"));
        }
    }
    let program = rt.build("fuzz", &k.source, "").map_err(|e| e.to_string())?;
    let (w, s) = elem_width(&k.output_type).ok_or("tuple output")?;
    let out_bytes = eval(&k.output_type.size_in_bytes(), sizes)?;
    if !(0..=4 * MAX_ELEMS * 4).contains(&out_bytes) {
        return Err(format!("output of {out_bytes} bytes"));
    }
    let kind = if s == ScalarType::Float { ElemKind::F32 } else { ElemKind::I32 };
    let mut bufs = Vec::new();
    let mut out_index = 0;
    let d_params = &k.params;
    for p in d_params {
        match p {
            KernelParam::Input { name, ty } => {
                let (w, _) = elem_width(ty).ok_or("tuple input")?;
                let h = if w == 3 { pad3(&host[name]) } else { host[name].clone() };
                bufs.push(rt.upload(name, &h).map_err(|e| e.to_string())?);
            }
            KernelParam::Output { .. } => {
                out_index = bufs.len();
                bufs.push(rt.zeroed("out", kind, out_bytes as usize).map_err(|e| e.to_string())?);
            }
            KernelParam::Temp { name, bytes } => {
                let b = eval(bytes, sizes)?;
                if !(0..=1 << 26).contains(&b) {
                    return Err(format!("temporary of {b} bytes"));
                }
                bufs.push(rt.zeroed(name, ElemKind::F32, b as usize).map_err(|e| e.to_string())?);
            }
            KernelParam::Scalar { .. } | KernelParam::Size { .. } | KernelParam::Local { .. } => {}
        }
    }
    let mut it = bufs.iter();
    let mut args = Vec::new();
    for p in d_params {
        args.push(match p {
            KernelParam::Scalar { name, .. } => match &host[name] {
                HostArray::F32(v) => KernelArg::Float(v[0]),
                HostArray::I32(v) => KernelArg::Int(v[0]),
            },
            KernelParam::Size { name } => KernelArg::Int(sizes[name] as i32),
            KernelParam::Local { bytes, .. } => KernelArg::Local(eval(bytes, sizes)?.max(1) as usize),
            KernelParam::Input { .. } | KernelParam::Output { .. } | KernelParam::Temp { .. } => {
                KernelArg::Buffer(it.next().ok_or("buffer")?)
            }
        });
    }
    rt.run(&[Launch { program: &program, kernel: &k.name, args, global, local }])
        .map_err(|e| e.to_string())?;
    let out = rt.download(&bufs[out_index]).map_err(|e| e.to_string())?;
    Ok(if w == 3 { unpad3(out) } else { out })
}
