//! Evaluating one candidate on one device: compile, check the device's
//! limits, build, validate on a small input against the interpreter's
//! result of the original program, then time at the requested size
//! (profiling events, median of several runs).

use crate::arith::{self, ArithExpr};
use crate::compile::{compile, CompileOptions, Kernel, KernelParam};
use crate::harness::data::HostArray;
use crate::harness::inputs::SplitMix64;
use crate::harness::validate::compare;
use crate::ir::{Pattern, Program};
use crate::passes::sizes_fit::MAX_ELEMS;
use crate::rewrite::Constraint;
use crate::runtime::{DeviceBuffer, ElemKind, KernelArg, Launch, Runtime};
use crate::types::{ScalarType, Type};
use std::collections::BTreeMap;

/// The validation-size time below which a candidate's time at the requested
/// size is not predicted (see `measure`).
const PREDICT_FLOOR_MS: f64 = 0.5;

pub type Sizes = BTreeMap<String, i64>;
pub type Inputs = BTreeMap<String, HostArray>;

/// Where inputs and expected results come from. `Interpreter`: random
/// inputs (`make_inputs`) and the interpreter's result of the original
/// def, compared with rtol 1e-4, atol 1e-5. `Config`: the benchmark
/// config's generators, its Rust gold (with its per-element error scale)
/// and its tolerances, so the search validates as the harness does
/// (`lift explore --config`; MD's random positions put atoms almost on
/// top of each other, whose cancelling forces failed the fixed tolerance).
#[derive(Clone, Copy)]
pub enum Oracle<'a> {
    Interpreter,
    Config { cfg: &'a crate::harness::config::Config, gold: &'a str },
}

/// A validation size's inputs, expected result and its error scale.
pub type Expected = (Inputs, HostArray, Option<HostArray>);

impl<'a> Oracle<'a> {
    /// The oracle of `--config`: the config must have a Rust gold.
    pub fn from_config(cfg: &'a crate::harness::config::Config) -> Result<Oracle<'a>, String> {
        match &cfg.validation.gold {
            crate::harness::config::Gold::Rust(gold) => Ok(Oracle::Config { cfg, gold }),
            crate::harness::config::Gold::Interpreter | crate::harness::config::Gold::Reference => {
                Err(format!(
                    "--config {}: its gold is not a Rust function (`gold: rust:NAME`); \
                 without --config the search validates against the interpreter",
                    cfg.name
                ))
            }
        }
    }

    /// Inputs of `def` at `sizes`.
    pub fn inputs(&self, prog: &Program, def: &str, sizes: &Sizes, seed: u64) -> Result<Inputs, String> {
        match self {
            Oracle::Interpreter => make_inputs(prog, def, sizes, seed),
            Oracle::Config { cfg, .. } => crate::harness::inputs::make_host_arrays(cfg, sizes)
                .map(|(inputs, _)| inputs)
                .map_err(|e| format!("{}: inputs: {e}", cfg.name)),
        }
    }

    /// Inputs and the expected result at `sizes`.
    pub fn expected(&self, prog: &Program, def: &str, sizes: &Sizes, seed: u64) -> Result<Expected, String> {
        let inputs = self.inputs(prog, def, sizes, seed)?;
        match self {
            Oracle::Interpreter => {
                let out = gold(prog, def, &inputs, sizes)?;
                Ok((inputs, out, None))
            }
            Oracle::Config { cfg, gold } => {
                let output = cfg.explored.as_ref().map_or("", |e| e.output.as_str());
                let (out, scale) = crate::harness::expected::rust_gold_scaled(gold, &inputs, sizes, output)?;
                Ok((inputs, out, scale))
            }
        }
    }

    /// Compares a candidate's output with the expected one.
    pub fn check(
        &self,
        out: &HostArray,
        want: &HostArray,
        scale: Option<&HostArray>,
    ) -> crate::harness::validate::Check {
        match self {
            Oracle::Interpreter => compare(out, want, 1e-4, 1e-5),
            Oracle::Config { cfg, .. } => crate::harness::validate::compare_scaled(
                out,
                want,
                scale,
                cfg.validation.rtol,
                cfg.validation.atol,
            ),
        }
    }
}

/// How a candidate ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// Validated and timed.
    Ok,
    /// The compiler refused it (not fully lowered, unsupported).
    Refused,
    /// Beyond the device's limits (work-group size).
    Limits,
    /// The OpenCL driver did not build it.
    BuildFailed,
    /// It failed to launch or run.
    RunFailed,
    /// Its result differs from the interpreter's.
    Invalid,
    /// Its time at the small size, scaled to the requested size, says it
    /// would take far longer than the best so far or than the budget left.
    Slow,
}

impl Status {
    pub fn as_str(&self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Refused => "refused",
            Status::Limits => "limits",
            Status::BuildFailed => "build-failed",
            Status::RunFailed => "run-failed",
            Status::Invalid => "invalid",
            Status::Slow => "slow",
        }
    }
    pub fn parse(s: &str) -> Option<Status> {
        [
            Status::Ok,
            Status::Refused,
            Status::Limits,
            Status::BuildFailed,
            Status::RunFailed,
            Status::Invalid,
            Status::Slow,
        ]
        .into_iter()
        .find(|x| x.as_str() == s)
    }
}

/// The outcome of one evaluation.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub status: Status,
    pub median_ms: Option<f64>,
    pub message: String,
    /// The sizes it was validated at.
    pub valid_sizes: Sizes,
}

impl Outcome {
    pub fn fail(status: Status, message: impl Into<String>, valid_sizes: Sizes) -> Outcome {
        Outcome { status, median_ms: None, message: message.into(), valid_sizes }
    }
}

/// Random inputs for every parameter of `def` at `sizes`: floats uniform in
/// [0, 1) (well-conditioned sums, so a reordered reduction validates with a
/// tight tolerance), ints uniform in `[0, m)` where `m` is the shortest
/// outer length of any parameter: a program that indexes one input with
/// another (MD's neighbour lists) gets valid, varied indices, so a candidate
/// that reads the wrong neighbour fails validation (all-zero indices, as
/// before, let it pass).
pub fn make_inputs(prog: &Program, def: &str, sizes: &Sizes, seed: u64) -> Result<Inputs, String> {
    let d = prog.def(def).ok_or_else(|| format!("no def `{def}`"))?;
    let mut out = Inputs::new();
    let mut index_bound = i64::MAX;
    for p in &d.params {
        if let Some(l) = p.ty.as_ref().and_then(|t| t.lengths().first().cloned()) {
            if let Ok(v) = l.eval_with(&|v| sizes.get(v).copied()) {
                index_bound = index_bound.min(v.max(1));
            }
        }
    }
    let index_bound = if index_bound == i64::MAX { 1 } else { index_bound } as u64;
    let counts = input_counts(prog, def, sizes)?;
    for (i, (p, (_, n, float))) in d.params.iter().zip(counts).enumerate() {
        let mut rng = SplitMix64::new(seed.wrapping_add(i as u64));
        out.insert(
            p.name.clone(),
            if float {
                HostArray::F32((0..n).map(|_| rng.next_f64() as f32).collect())
            } else {
                HostArray::I32((0..n).map(|_| (rng.next_u64() % index_bound) as i32).collect())
            },
        );
    }
    Ok(out)
}

/// Why [`input_counts`] refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputSizeError {
    /// The def, a type or a size is missing (reported elsewhere first).
    #[error("{0}")]
    Unknown(String),
    /// The sizes are known and too large to allocate.
    #[error("{0}")]
    TooLarge(String),
}

impl From<InputSizeError> for String {
    fn from(e: InputSizeError) -> String {
        e.to_string()
    }
}

/// Each parameter's name, scalar count and whether it is float, at
/// `sizes`: checked against 32-bit indices and, together, the host cap
/// ([`crate::types::host_cap_bytes`]) before anything is allocated.
pub fn input_counts(
    prog: &Program,
    def: &str,
    sizes: &Sizes,
) -> Result<Vec<(String, usize, bool)>, InputSizeError> {
    use InputSizeError::{TooLarge, Unknown};
    let d = prog.def(def).ok_or_else(|| Unknown(format!("no def `{def}`")))?;
    let mut out = Vec::new();
    let mut total: u64 = 0;
    for p in &d.params {
        let ty = p.ty.as_ref().ok_or_else(|| Unknown(format!("parameter `{}` has no type", p.name)))?;
        let mut n: i64 = match ty.base_elem() {
            Type::Vector(_, w) => i64::from(*w),
            _ => 1,
        };
        for l in ty.lengths() {
            let v = l
                .eval_with(&|v| sizes.get(v).copied())
                .map_err(|e| Unknown(format!("length of `{}`: {e}", p.name)))?;
            n = n.checked_mul(v).filter(|n| *n <= MAX_ELEMS).ok_or_else(|| {
                TooLarge(format!("parameter `{}` has more than {MAX_ELEMS} scalars (32-bit indices)", p.name))
            })?;
        }
        let float = match ty.base_elem() {
            Type::Scalar(s) | Type::Vector(s, _) => *s == ScalarType::Float,
            _ => {
                return Err(Unknown(format!(
                    "parameter `{}`: only arrays of scalars or vectors are generated",
                    p.name
                )))
            }
        };
        let n = usize::try_from(n)
            .map_err(|_| TooLarge(format!("parameter `{}` has a negative size", p.name)))?;
        total = total.saturating_add(n as u64 * 4);
        out.push((p.name.clone(), n, float));
    }
    crate::types::check_host_bytes("the inputs", total).map_err(|e| TooLarge(e.to_string()))?;
    Ok(out)
}

/// The interpreter's result of `def` on `inputs`.
pub fn gold(prog: &Program, def: &str, inputs: &Inputs, sizes: &Sizes) -> Result<HostArray, String> {
    let d = prog.def(def).ok_or_else(|| format!("no def `{def}`"))?;
    let mut args = BTreeMap::new();
    for p in &d.params {
        let ty = p.ty.as_ref().ok_or("untyped parameter")?;
        let v = crate::interp::value_from_flat(ty, &inputs[&p.name], sizes).map_err(|e| e.to_string())?;
        args.insert(p.name.clone(), v);
    }
    let v = crate::interp::eval_def(prog, def, &args, sizes).map_err(|e| format!("interpreter: {e}"))?;
    Ok(crate::interp::value_to_flat(&v))
}

/// Divisibility the program itself needs: every `split(n)` and
/// `asVector(n)` must divide the length it splits.
pub fn split_constraints(prog: &Program, def: &str) -> Vec<Constraint> {
    let Some(d) = prog.def(def) else { return Vec::new() };
    let Ok(types) = crate::passes::typecheck::typecheck_def(prog, d) else { return Vec::new() };
    let mut out = Vec::new();
    for (_, e) in crate::ir::visit::expr_positions(&d.body) {
        let crate::ir::ExprKind::Call(f, args) = &e.kind else { continue };
        let crate::ir::FunKind::Pattern(p) = &f.kind else { continue };
        let n = match p {
            Pattern::Split(n) => n.clone(),
            Pattern::AsVector(w) => ArithExpr::Cst(i64::from(*w)),
            _ => continue,
        };
        if let Some(Type::Array(_, len)) = args.first().and_then(|a| types.exprs.get(&a.id)) {
            out.push(Constraint {
                expr: ArithExpr::modulo(len.clone(), n.clone()),
                text: format!("{len} % {n} == 0"),
            });
        }
    }
    out
}

/// The smallest sizes (each variable scanned upwards from `floor`, the
/// others at their requested values first) at which every constraint holds;
/// the requested sizes when the scan finds none below them.
pub fn validation_sizes(requested: &Sizes, cs: &[Constraint], floor: i64) -> Sizes {
    let mut cur = requested.clone();
    // A constraint over more than the sizes (a length inside `iterate`,
    // which depends on the iteration) cannot be checked here: left out.
    let cs: Vec<&Constraint> =
        cs.iter().filter(|c| c.expr.eval_with(&|v| requested.get(v).copied()).is_ok()).collect();
    let holds = |s: &Sizes| cs.iter().all(|c| c.expr.eval_with(&|v| s.get(v).copied()) == Ok(0));
    for (name, &want) in requested {
        let start = floor.min(want);
        for v in start..want {
            let mut t = cur.clone();
            t.insert(name.clone(), v);
            if holds(&t) {
                cur = t;
                break;
            }
        }
    }
    if holds(&cur) {
        cur
    } else {
        requested.clone()
    }
}

fn eval_at(e: &ArithExpr, sizes: &Sizes, what: &str) -> Result<i64, String> {
    e.eval_with(&|v| sizes.get(v).copied()).map_err(|err| format!("{what} `{e}`: {err}"))
}

/// The NDRange of a kernel at `sizes`: trailing 1s dropped; the local size
/// given overrides the compiler's.
fn ndrange(k: &Kernel, sizes: &Sizes) -> Result<(Vec<usize>, Option<Vec<usize>>), String> {
    let mut global = k
        .global
        .iter()
        .map(|e| eval_at(e, sizes, "global size").map(|v| v as usize))
        .collect::<Result<Vec<_>, _>>()?;
    while global.len() > 1 && global.last() == Some(&1) {
        global.pop();
    }
    let local = match &k.local {
        Some(l) => Some(
            l.iter()
                .take(global.len())
                .map(|e| eval_at(e, sizes, "local size").map(|v| v as usize))
                .collect::<Result<Vec<_>, _>>()?,
        ),
        None => None,
    };
    Ok((global, local))
}

/// A kernel with its device buffers at one size, ready to launch.
struct Bound {
    bufs: Vec<DeviceBuffer>,
    out_index: usize,
}

fn bind(rt: &Runtime, k: &Kernel, inputs: &Inputs, sizes: &Sizes) -> Result<Bound, String> {
    let mut bufs = Vec::new();
    let mut out_index = 0;
    for p in &k.params {
        match p {
            KernelParam::Input { name, .. } => {
                let h = inputs.get(name).ok_or_else(|| format!("no input `{name}`"))?;
                bufs.push(rt.upload(name, h).map_err(|e| e.to_string())?);
            }
            KernelParam::Output { ty } => {
                out_index = bufs.len();
                let bytes = eval_at(&ty.size_in_bytes(), sizes, "output size")?;
                let kind = if matches!(
                    ty.base_elem(),
                    Type::Scalar(ScalarType::Int) | Type::Vector(ScalarType::Int, _)
                ) {
                    ElemKind::I32
                } else {
                    ElemKind::F32
                };
                bufs.push(rt.zeroed("out", kind, bytes.max(0) as usize).map_err(|e| e.to_string())?);
            }
            KernelParam::Temp { name, bytes } => {
                let b = eval_at(bytes, sizes, "temporary size")?;
                bufs.push(rt.zeroed(name, ElemKind::F32, b.max(0) as usize).map_err(|e| e.to_string())?);
            }
            KernelParam::Scalar { .. } | KernelParam::Size { .. } => {}
        }
    }
    Ok(Bound { bufs, out_index })
}

fn args<'a>(k: &Kernel, b: &'a Bound, inputs: &Inputs, sizes: &Sizes) -> Result<Vec<KernelArg<'a>>, String> {
    let mut it = b.bufs.iter();
    let mut out = Vec::new();
    for p in &k.params {
        out.push(match p {
            KernelParam::Scalar { name, .. } => match inputs.get(name) {
                Some(HostArray::F32(v)) if !v.is_empty() => KernelArg::Float(v[0]),
                Some(HostArray::I32(v)) if !v.is_empty() => KernelArg::Int(v[0]),
                _ => return Err(format!("no scalar `{name}`")),
            },
            KernelParam::Size { name } => {
                KernelArg::Int(*sizes.get(name).ok_or_else(|| format!("size `{name}` unknown"))? as i32)
            }
            KernelParam::Input { .. } | KernelParam::Output { .. } | KernelParam::Temp { .. } => {
                KernelArg::Buffer(it.next().ok_or("buffer missing")?)
            }
        });
    }
    Ok(out)
}

/// The fixed second stage of a candidate that leaves partial results
/// (`lift explore --then DEF`): a one-input def compiled with its size
/// symbolic, run on the candidate's output; both kernels are validated
/// together and their times summed, as the harness's `explored` variant
/// runs them.
///
/// Several second stages may be given (`--then A,B`): a candidate gets the
/// first whose size constraints hold for its number of partial results at
/// every size it runs at (a work-group tree needs a multiple of its lanes;
/// a sequential sum takes any count), as the harness chooses them.
pub struct Finisher {
    pub def: String,
    pub kernel: Kernel,
    pub program: crate::runtime::RuntimeProgram,
}

impl Finisher {
    /// The def's one size (`P` of `[T]P`, at most one: `new` checks) set
    /// to `value`.
    fn sized<T: Clone>(&self, value: T) -> BTreeMap<String, T> {
        self.kernel
            .params
            .iter()
            .filter_map(|p| match p {
                KernelParam::Size { name } => Some((name.clone(), value.clone())),
                _ => None,
            })
            .collect()
    }

    /// The def's split constraints with its size `P` replaced by `parts`
    /// (an expression in the candidate's sizes).
    pub fn constraints(&self, original: &Program, parts: &ArithExpr) -> Vec<Constraint> {
        let map: std::collections::HashMap<String, ArithExpr> =
            self.sized(parts.clone()).into_iter().collect();
        split_constraints(original, &self.def)
            .into_iter()
            // A length inside `iterate` depends on the iteration: such a
            // constraint is the compiler's to check, not the sizes'.
            .filter(|c| c.expr.eval_with(&|v| map.contains_key(v).then_some(1)).is_ok())
            .map(|c| {
                let expr = arith::simplify(&c.expr.substitute(&map));
                Constraint { text: format!("{expr} == 0 (second stage {})", self.def), expr }
            })
            .collect()
    }

    /// Whether the def's constraints hold for `parts` partial results.
    pub fn fits(&self, original: &Program, parts: i64) -> bool {
        let Some(def) = original.def(&self.def) else { return false };
        crate::passes::sizes_fit::sizes_fit(original, def, &self.sized(parts)).is_ok()
    }

    pub fn new(rt: &Runtime, prog: &Program, def: &str) -> Result<Finisher, String> {
        let kernel =
            compile(prog, def, &CompileOptions::default()).map_err(|e| format!("--then {def}: {e}"))?;
        let inputs = kernel.params.iter().filter(|p| matches!(p, KernelParam::Input { .. })).count();
        let sizes = kernel.params.iter().filter(|p| matches!(p, KernelParam::Size { .. })).count();
        if inputs != 1 || sizes > 1 {
            return Err(format!("--then {def}: expected a def of one array `[T]P`, found {inputs} arrays"));
        }
        let program = rt.build(&format!("--then {def}"), &kernel.source, "").map_err(|e| e.to_string())?;
        Ok(Finisher { def: def.to_string(), kernel, program })
    }

    /// The launch on `input` (of `len` elements) into `out`.
    fn launch<'a>(
        &'a self,
        input: &'a DeviceBuffer,
        out: &'a DeviceBuffer,
        len: i64,
    ) -> Result<Launch<'a>, String> {
        let sizes: Sizes = self.sized(len);
        let mut a = Vec::new();
        for p in &self.kernel.params {
            a.push(match p {
                KernelParam::Input { .. } => KernelArg::Buffer(input),
                KernelParam::Output { .. } => KernelArg::Buffer(out),
                KernelParam::Size { .. } => KernelArg::Int(len as i32),
                KernelParam::Scalar { name, .. } | KernelParam::Temp { name, .. } => {
                    return Err(format!("the second stage's parameter `{name}` is not supported"))
                }
            });
        }
        let (global, local) = ndrange(&self.kernel, &sizes)?;
        Ok(Launch { program: &self.program, kernel: &self.kernel.name, args: a, global, local })
    }

    fn out_buffer(&self, rt: &Runtime, len: i64) -> Result<DeviceBuffer, String> {
        let sizes: Sizes = self.sized(len);
        let bytes = eval_at(&self.kernel.output_type.size_in_bytes(), &sizes, "output size")?;
        rt.zeroed("final", ElemKind::F32, bytes.max(0) as usize).map_err(|e| e.to_string())
    }
}

/// Inputs and the interpreter's result per validation sizes.
pub type GoldCache = BTreeMap<Vec<(String, i64)>, Result<Expected, String>>;

/// What one evaluation needs besides the candidate.
pub struct Bench<'a> {
    pub rt: &'a Runtime,
    pub original: &'a Program,
    pub def: &'a str,
    pub sizes: &'a Sizes,
    pub inputs: &'a Inputs,
    pub oracle: Oracle<'a>,
    pub seed: u64,
    pub warmup: usize,
    pub runs: usize,
    /// The best time so far: a candidate more than 4 times slower is run once.
    pub cutoff_ms: Option<f64>,
    /// Milliseconds of budget left: a candidate predicted to take longer
    /// than half of it is not timed.
    pub left_ms: f64,
    /// Gold results by validation sizes, computed once each.
    pub golds: std::cell::RefCell<GoldCache>,
    /// The fixed second stages (the first that fits is used), if
    /// candidates leave partial results; empty otherwise.
    pub then: &'a [Finisher],
    /// The smallest length per size the candidate is validated at (the
    /// interpreter computes the gold result there).
    pub validation_floor: i64,
}

/// Median of a non-empty list.
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

impl Bench<'_> {
    fn gold_at(&self, sizes: &Sizes) -> Result<Expected, String> {
        let key: Vec<(String, i64)> = sizes.iter().map(|(k, v)| (k.clone(), *v)).collect();
        let mut g = self.golds.borrow_mut();
        g.entry(key)
            .or_insert_with(|| self.oracle.expected(self.original, self.def, sizes, self.seed))
            .clone()
    }

    /// Evaluates a candidate program (its rule constraints in `cs`) with an
    /// optional local size.
    pub fn evaluate(&self, prog: &Program, cs: &[Constraint], local: Option<[i64; 3]>) -> Outcome {
        let opts = CompileOptions { local, ..Default::default() };
        let mut all = cs.to_vec();
        all.extend(split_constraints(prog, self.def));
        all.extend(split_constraints(self.original, self.def));
        let kernel = compile(prog, self.def, &opts);
        // The launch needs whole work-groups at the validation size too.
        if let Ok(Kernel { global, local: Some(l), .. }) = &kernel {
            for (g, l) in global.iter().zip(l) {
                all.push(Constraint {
                    expr: ArithExpr::modulo(g.clone(), l.clone()),
                    text: format!("{g} % {l} == 0"),
                });
            }
        }
        // The second stage: the first whose constraints, with its size
        // `P` the candidate's number of partial results, hold at the timed
        // size; they join the candidate's own, so the validation size fits
        // it too and the stage validated is the stage timed.
        let mut fin = None;
        if let Ok(k) = &kernel {
            let parts = arith::simplify(&ArithExpr::div(k.output_type.size_in_bytes(), ArithExpr::Cst(4)));
            for f in self.then {
                let cs = f.constraints(self.original, &parts);
                if crate::explore::space::constraints_hold(&cs, self.sizes) {
                    all.extend(cs);
                    fin = Some(f);
                    break;
                }
            }
        }
        let vsizes = validation_sizes(self.sizes, &all, self.validation_floor);
        let fail = |s: Status, m: String| Outcome::fail(s, m, vsizes.clone());
        let kernel = match kernel {
            Ok(k) => k,
            Err(e) => return fail(Status::Refused, e.to_string()),
        };
        // Device limits and launch shape, at both sizes.
        for s in [&vsizes, self.sizes] {
            match ndrange(&kernel, s) {
                Ok((g, Some(l))) => {
                    let wg: usize = l.iter().product();
                    if wg > self.rt.info.max_work_group {
                        return fail(
                            Status::Limits,
                            format!(
                                "work-group of {wg} exceeds the device's {}",
                                self.rt.info.max_work_group
                            ),
                        );
                    }
                    if g.iter().zip(&l).any(|(g, l)| *l == 0 || g % l != 0) {
                        return fail(
                            Status::Limits,
                            format!("global size {g:?} is not a multiple of local size {l:?}"),
                        );
                    }
                }
                Ok(_) => {}
                Err(e) => return fail(Status::Refused, e),
            }
        }
        if !self.then.is_empty() {
            let parts = [&vsizes, self.sizes]
                .iter()
                .map(|s| eval_at(&kernel.output_type.size_in_bytes(), s, "output size").map(|b| b / 4))
                .collect::<Result<Vec<i64>, String>>();
            let parts = match parts {
                Ok(p) => p,
                Err(e) => return fail(Status::Refused, e),
            };
            if !fin.is_some_and(|f| parts.iter().all(|&n| f.fits(self.original, n))) {
                let names: Vec<&str> = self.then.iter().map(|f| f.def.as_str()).collect();
                return fail(
                    Status::Refused,
                    format!("no second stage ({}) fits {parts:?} partial results", names.join(", ")),
                );
            }
        }
        let program = match self.rt.build("explored candidate", &kernel.source, "") {
            Ok(p) => p,
            Err(e) => return fail(Status::BuildFailed, e.to_string()),
        };
        // Validation at the small size.
        let (vin, want, scale) = match self.gold_at(&vsizes) {
            Ok(x) => x,
            Err(e) => return fail(Status::Invalid, format!("no gold result: {e}")),
        };
        let run = |inputs: &Inputs,
                   sizes: &Sizes,
                   times: usize,
                   warm: usize|
         -> Result<(Vec<f64>, HostArray, bool), String> {
            let b = bind(self.rt, &kernel, inputs, sizes)?;
            let a = args(&kernel, &b, inputs, sizes)?;
            let (global, local) = ndrange(&kernel, sizes)?;
            let mut launch = vec![Launch { program: &program, kernel: &kernel.name, args: a, global, local }];
            // The second stage reads the candidate's output (its length
            // counted
            // in scalars: a vector output (`[float4]M`) is read as `[float]4M`.
            let parts = eval_at(&kernel.output_type.size_in_bytes(), sizes, "output size")? / 4;
            let fin_out = match fin {
                Some(f) => Some(f.out_buffer(self.rt, parts)?),
                None => None,
            };
            if let (Some(f), Some(o)) = (fin, &fin_out) {
                launch.push(f.launch(&b.bufs[b.out_index], o, parts)?);
            }
            let (mut t, mut out_of_budget) = (Vec::new(), false);
            let started = std::time::Instant::now();
            for i in 0..warm.saturating_add(times) {
                let ns: u64 = self.rt.run(&launch).map_err(|e| e.to_string())?.iter().sum();
                let ms = ns as f64 / 1e6;
                if i >= warm {
                    t.push(ms);
                }
                // A candidate far slower than the best so far is not worth
                // more runs: its first time ranks it already.
                if self.cutoff_ms.is_some_and(|c| ms > 4.0 * c) && warm + times > 1 {
                    t = vec![ms];
                    break;
                }
                // Nor are runs past the budget (a large --runs): the times
                // taken so far give the median.
                if !t.is_empty() && started.elapsed().as_secs_f64() * 1e3 > self.left_ms {
                    out_of_budget = i + 1 < warm + times;
                    break;
                }
            }
            let out = self
                .rt
                .download(fin_out.as_ref().unwrap_or(&b.bufs[b.out_index]))
                .map_err(|e| e.to_string())?;
            Ok((t, out, out_of_budget))
        };
        match run(&vin, &vsizes, 1, 0) {
            Err(e) => return fail(Status::RunFailed, e),
            Ok((t, out, _)) => {
                let c = self.oracle.check(&out, &want, scale.as_ref());
                if !c.ok {
                    return fail(Status::Invalid, c.message);
                }
                // A kernel cannot be stopped once launched: predict its time
                // at the requested size from the small one (an over-estimate,
                // as launch overheads are scaled too) and skip hopeless ones.
                let ratio: f64 =
                    self.sizes.iter().map(|(k, v)| *v as f64 / *vsizes.get(k).unwrap_or(v) as f64).product();
                let small = t.first().copied().unwrap_or(0.0);
                let predicted = small * ratio;
                let limit = self.cutoff_ms.map_or(f64::INFINITY, |c| 50.0 * c).min(self.left_ms / 2.0);
                // Below PREDICT_FLOOR_MS the small run's time is launch
                // overhead, not work (on a GPU every kernel takes ~10 us at
                // the validation size): scaling it up predicts nothing.
                if small >= PREDICT_FLOOR_MS && predicted > limit {
                    return fail(
                        Status::Slow,
                        format!("predicted {predicted:.1} ms from {:.3} ms at the validation size", t[0]),
                    );
                }
            }
        }
        match run(self.inputs, self.sizes, self.runs.max(1), self.warmup) {
            Err(e) => fail(Status::RunFailed, e),
            Ok((mut t, _, out_of_budget)) => {
                let mut message = if out_of_budget {
                    format!("timed {} of {} runs: the budget ran out", t.len(), self.runs)
                } else if t.len() < self.runs.max(1) {
                    "over 4x slower than the best so far: timed once".to_string()
                } else {
                    String::new()
                };
                // Which second stage ran, where there was a choice.
                if let (Some(f), true) = (fin, self.then.len() > 1) {
                    let sep = if message.is_empty() { "" } else { "; " };
                    message = format!("{message}{sep}then {}", f.def);
                }
                Outcome { status: Status::Ok, median_ms: Some(median(&mut t)), message, valid_sizes: vsizes }
            }
        }
    }
}
