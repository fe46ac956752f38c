//! Evaluating one candidate on one device: compile, check the device's
//! limits, build, validate on a small input against the interpreter's
//! result of the original program, then time at the requested size
//! (profiling events, median of several runs).

use crate::arith::{self, ArithExpr};
use crate::codegen::CompileError;
use crate::compile::{compile, CompileOptions, Kernel, KernelParam};
use crate::ir::{Pattern, Program};
use crate::launch::{self, Args, Buffers, LaunchError, RunCounts, Step, Stop, Times};
use crate::rewrite::Constraint;
use crate::runtime::DeviceBuffer;
use crate::runtime::{Runtime, RuntimeError, RuntimeProgram};
use crate::types::{Arrays, HostArray, Sizes, Type};
use crate::validate::{Expected, Oracle};
use std::collections::BTreeMap;

/// The validation-size time below which a candidate's time at the requested
/// size is not predicted (see `measure`).
const PREDICT_FLOOR_MS: f64 = 0.5;

/// The probe sizes are the requested divided by this (`probe_sizes`).
const PROBE_DIVISOR: i64 = 4;

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
    smallest_sizes(requested, cs, |want| floor.min(want))
}

/// The sizes a candidate is timed at once before the requested ones,
/// where its time at the validation sizes is launch overhead: each a
/// quarter of the requested (or the next that meets the constraints).
fn probe_sizes(requested: &Sizes, cs: &[Constraint]) -> Sizes {
    smallest_sizes(requested, cs, |want| (want / PROBE_DIVISOR).max(1))
}

/// Each size of `requested` in turn lowered to the smallest value from
/// `start(requested value)` at which `cs` hold (the requested sizes if
/// none fits).
fn smallest_sizes(requested: &Sizes, cs: &[Constraint], start: impl Fn(i64) -> i64) -> Sizes {
    // The scan may try hundreds of thousands of values (a reduction's
    // chunks make N a multiple of 2^19): one map changed in place, the
    // constraints that can be checked chosen once.
    let cs: Vec<&Constraint> = cs.iter().filter(|c| evaluable(requested, c)).collect();
    let holds = |s: &Sizes| cs.iter().all(|c| c.expr.eval_with(&|v| s.get(v).copied()) == Ok(0));
    let mut cur = requested.clone();
    for (name, &want) in requested {
        let set = |cur: &mut Sizes, v: i64| {
            if let Some(x) = cur.get_mut(name) {
                *x = v;
            }
        };
        let found = scan_values(start(want), want).find(|&v| {
            set(&mut cur, v);
            holds(&cur)
        });
        set(&mut cur, found.unwrap_or(want));
    }
    if holds(&cur) {
        cur
    } else {
        requested.clone()
    }
}

/// Where a device's measuring time went, in seconds: replaying
/// derivations, generating OpenCL, the driver's builds, the interpreter's
/// gold results and the runs on the device (validation, probe, timing).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Phases {
    pub derive_s: f64,
    pub codegen_s: f64,
    pub build_s: f64,
    pub gold_s: f64,
    pub run_s: f64,
}

impl Phases {
    /// The seconds of all phases together.
    pub fn total(&self) -> f64 {
        self.derive_s + self.codegen_s + self.build_s + self.gold_s + self.run_s
    }

    /// The seconds spent in each phase since `earlier`, a copy of these
    /// phases taken before.
    pub fn since(&self, earlier: &Phases) -> Phases {
        Phases {
            derive_s: self.derive_s - earlier.derive_s,
            codegen_s: self.codegen_s - earlier.codegen_s,
            build_s: self.build_s - earlier.build_s,
            gold_s: self.gold_s - earlier.gold_s,
            run_s: self.run_s - earlier.run_s,
        }
    }

    pub fn add(&mut self, o: &Phases) {
        self.derive_s += o.derive_s;
        self.codegen_s += o.codegen_s;
        self.build_s += o.build_s;
        self.gold_s += o.gold_s;
        self.run_s += o.run_s;
    }
}

/// Runs `f`, adding its wall time to the phase `pick` chooses.
pub fn timed<T>(
    phases: &std::cell::Cell<Phases>,
    pick: fn(&mut Phases) -> &mut f64,
    f: impl FnOnce() -> T,
) -> T {
    let t0 = std::time::Instant::now();
    let out = f();
    let mut p = phases.get();
    *pick(&mut p) += t0.elapsed().as_secs_f64();
    phases.set(p);
    out
}

/// Whether `cs` hold at sizes `s`. A constraint over more than the sizes
/// (a length inside `iterate`, which depends on the iteration) cannot be
/// checked here: one not evaluable at the `requested` sizes is left out.
fn holds_at(requested: &Sizes, cs: &[Constraint], s: &Sizes) -> bool {
    cs.iter().filter(|c| evaluable(requested, c)).all(|c| c.expr.eval_with(&|v| s.get(v).copied()) == Ok(0))
}

/// The values below `want` a size is lowered to, in ascending order: the
/// `SCAN` values from `from`, then the divisors of `want` above them
/// (which the constraints that hold at `want`, multiples of tiles, often
/// allow). Scanning every value up to a requested 2^25 took 70 ms per
/// candidate where no small size meets a chunk of 2^16, most of a
/// 30 s search's time outside the device's runs.
fn scan_values(from: i64, want: i64) -> impl Iterator<Item = i64> {
    let near = from..want.min(from.saturating_add(SCAN));
    let far_from = from.saturating_add(SCAN);
    let mut far: Vec<i64> = Vec::new();
    let mut d = 1;
    while d * d <= want {
        if want % d == 0 {
            far.extend([d, want / d].into_iter().filter(|&v| v >= far_from && v < want));
        }
        d += 1;
    }
    far.sort_unstable();
    far.dedup();
    near.chain(far)
}

/// Values scanned one by one from a size's floor (`scan_values`).
const SCAN: i64 = 1 << 14;

/// Whether constraint `c` mentions only sizes that `requested` gives.
fn evaluable(requested: &Sizes, c: &Constraint) -> bool {
    c.expr.eval_with(&|v| requested.get(v).copied()).is_ok()
}

/// Of the `computed` sizes, the one with the fewest points at which `cs`
/// hold, no more than `REUSE_GROWTH` times the points of `smallest` and
/// none of them below it (the validation is no less thorough: every
/// length stays at or above the floor's).
fn reused_sizes(
    computed: impl Iterator<Item = Sizes>,
    smallest: &Sizes,
    requested: &Sizes,
    cs: &[Constraint],
) -> Option<Sizes> {
    let most = points(smallest) * REUSE_GROWTH;
    computed
        .filter(|s| smallest.iter().all(|(k, v)| s.get(k).is_some_and(|w| w >= v)))
        .filter(|s| points(s) <= most && holds_at(requested, cs, s))
        .min_by(|a, b| points(a).total_cmp(&points(b)))
}

/// The points of a grid of `sizes` (the product of its lengths).
fn points(sizes: &Sizes) -> f64 {
    sizes.values().map(|&v| v as f64).product()
}

/// How many times the points of a candidate's smallest validation sizes
/// the sizes of an already computed gold may have to be used instead.
const REUSE_GROWTH: f64 = 4.0;

/// No size is validated below this (where it is requested larger).
pub const MIN_VALIDATION_FLOOR: i64 = 17;

/// Whether compiling `def` of `prog` for the timed `sizes` changes its
/// kernel (`Bench::specialises`).
pub fn specialises(prog: &Program, def: &str, sizes: &Sizes, local: Option<[i64; 3]>) -> bool {
    let every = CompileOptions { local, ..Default::default() };
    let sized = CompileOptions { sizes: sizes.clone(), ..every.clone() };
    let at = |o: &CompileOptions| crate::compile::compile_for_launch(prog, def, o, sizes);
    match (at(&every), at(&sized)) {
        (Ok(a), Ok(b)) => a.source != b.source,
        _ => true,
    }
}

/// What the validation oracle reported (its own type, kept whole).
pub use crate::validate::OracleError;

/// What a search's candidates are checked against (`prepare_search`):
/// the user's def, and whether each candidate's output goes through a
/// second stage before it is compared.
#[derive(Clone, Debug)]
pub struct Gold {
    pub def: String,
    pub always_then: bool,
}

/// Why a `--then` def cannot be a second stage.
#[derive(Debug, thiserror::Error)]
pub enum FinisherError {
    #[error("--then {def}: {error}")]
    Compile { def: String, error: CompileError },
    #[error("--then {def}: expected a def whose first parameter is an array (`[T]P`, the partial results), found none")]
    NoArray { def: String },
    #[error(
        "--then {def}: expected a def of one array whose every length is its own size (`[T]P`, `[[T]P]Q`)"
    )]
    LengthsNotSizes { def: String },
    #[error(transparent)]
    Build(#[from] RuntimeError),
}

/// What stops the search on a device before or between candidates (a
/// candidate's own failure is its row's status instead).
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error("no device selected by `{selector}`")]
    NoneSelected { selector: String },
    /// The inputs could not be made.
    #[error(transparent)]
    Inputs(#[from] OracleError),
    #[error(transparent)]
    Then(#[from] FinisherError),
    /// A worker thread panicked: `what` says where it was noticed.
    #[error("{0}")]
    Panicked(&'static str),
}

/// Why a built candidate did not run to the end.
#[derive(Debug, thiserror::Error)]
enum RunError {
    #[error(transparent)]
    Launch(#[from] LaunchError),
    #[error("the output buffer is missing")]
    NoOutput,
}

impl From<RuntimeError> for RunError {
    fn from(e: RuntimeError) -> RunError {
        RunError::Launch(e.into())
    }
}

fn eval_at(expr: &ArithExpr, sizes: &Sizes, what: &'static str) -> Result<i64, LaunchError> {
    expr.eval_with(&|v| sizes.get(v).copied()).map_err(|error| LaunchError::Eval {
        what,
        expr: expr.clone(),
        error,
    })
}

/// The device buffers of a candidate's output and of its second stage's,
/// by name: not identifiers, so that no parameter's array shadows them.
const OUT: &str = "<out>";
const FINAL: &str = "<final>";

/// The fixed second stage of a candidate that leaves partial results
/// (`lift explore --then DEF`): a one-input def compiled with its sizes
/// symbolic, run on the candidate's output; both kernels are validated
/// together and their times summed, as the harness's `explored` variant
/// runs them.
///
/// Several second stages may be given (`--then A,B`): a candidate gets the
/// first whose size constraints hold for its partial results at every
/// size it runs at (a work-group tree needs a multiple of its lanes; a
/// sequential sum takes any count), as the harness chooses them, and that
/// leaves as many results as the gold def (`Bench::leaves_gold_size`: the
/// rows and the columns stage of a map of reductions both bind a 2D
/// output).
///
/// A stage of one size (`[T]P`) takes any output as a flat array of `T`;
/// a stage of several (`[[T]P]Q`, the rows of a column reduction's
/// partials) takes an output of the same nesting, each of its sizes the
/// candidate's length at the same level ([`Finisher::bind`]).
pub struct Finisher {
    pub def: String,
    pub kernel: Kernel,
    pub program: RuntimeProgram,
    /// Its first array reads the candidate's output, its other arrays and
    /// its scalars the def's inputs of the same names.
    args: BTreeMap<String, String>,
    /// Those other arrays (uploaded with the candidate's inputs).
    arrays: Vec<String>,
}

/// A second stage's sizes as expressions in the candidate's sizes.
pub type Binding = BTreeMap<String, ArithExpr>;

impl Finisher {
    /// The type of its one input.
    fn input(&self) -> Option<&Type> {
        input_type(&self.kernel)
    }

    /// Its sizes for a candidate whose output has type `out`, or `None`
    /// when the output does not have the stage's shape.
    pub fn bind(&self, out: &Type) -> Option<Binding> {
        let input = self.input()?;
        match input {
            Type::Array(elem, len) if !matches!(**elem, Type::Array(..)) => {
                let ArithExpr::Var(v) = len else { return None };
                // A vector output (`[float4]M`) is `[float]4M` to a stage
                // of floats, a tuple (`(float, int)`, 8 bytes) one element.
                let parts = arith::simplify(&ArithExpr::div(out.size_in_bytes(), elem.size_in_bytes()));
                Some([(v.name.clone(), parts)].into())
            }
            _ => {
                let mut b = Binding::new();
                unify(input, out, &mut b).then_some(b)
            }
        }
    }

    /// The binding's values at the candidate's `sizes`.
    fn values(b: &Binding, sizes: &Sizes) -> Result<Sizes, LaunchError> {
        b.iter().map(|(k, e)| Ok((k.clone(), eval_at(e, sizes, "output size")?))).collect()
    }

    /// The def's split constraints with its sizes replaced by the
    /// binding's expressions (in the candidate's sizes).
    pub fn constraints(&self, original: &Program, b: &Binding) -> Vec<Constraint> {
        let map: std::collections::HashMap<String, ArithExpr> =
            b.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
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

    /// Whether the def's constraints hold for its sizes at `values`.
    pub fn fits(&self, original: &Program, values: &Sizes) -> bool {
        let Some(def) = original.def(&self.def) else { return false };
        crate::passes::sizes_fit::sizes_fit(original, def, values).is_ok()
    }

    pub fn new(rt: &Runtime, prog: &Program, def: &str) -> Result<Finisher, FinisherError> {
        let kernel = compile(prog, def, &CompileOptions::default())
            .map_err(|error| FinisherError::Compile { def: def.to_string(), error })?;
        let inputs = kernel.params.iter().filter(|p| matches!(p, KernelParam::Input { .. })).count();
        let sizes = kernel.params.iter().filter(|p| matches!(p, KernelParam::Size { .. })).count();
        if inputs == 0 {
            return Err(FinisherError::NoArray { def: def.to_string() });
        }
        let lens = input_type(&kernel).map(|t| t.lengths()).unwrap_or_default();
        let distinct: std::collections::BTreeSet<_> = lens.iter().map(|l| l.to_string()).collect();
        if sizes != lens.len()
            || distinct.len() != lens.len()
            || lens.iter().any(|l| !matches!(l, ArithExpr::Var(_)))
        {
            return Err(FinisherError::LengthsNotSizes { def: def.to_string() });
        }
        let program = rt.build(&format!("--then {def}"), &kernel.source, "")?;
        // Its first array reads the candidate's output; another array or
        // a scalar (a derived stage's map may read one of the def's: a
        // bias per column, a scale) the def's input of the same name.
        let (mut args, mut arrays, mut first) = (BTreeMap::new(), Vec::new(), true);
        for p in &kernel.params {
            match p {
                KernelParam::Input { name, .. } if std::mem::take(&mut first) => {
                    args.insert(name.clone(), OUT.to_string());
                }
                KernelParam::Input { name, .. } => {
                    arrays.push(name.clone());
                    args.insert(name.clone(), name.clone());
                }
                KernelParam::Scalar { name, .. } => {
                    args.insert(name.clone(), name.clone());
                }
                _ => {}
            }
        }
        Ok(Finisher { def: def.to_string(), kernel, program, args, arrays })
    }

    /// Its launch on the candidate's partial results (its sizes `sizes`,
    /// from [`Finisher::bind`]), into [`FINAL`], on a device of `units`
    /// compute units.
    fn step<'a>(&'a self, sizes: &'a Sizes, units: usize) -> Result<Step<'a>, LaunchError> {
        let (global, local) = launch::ndrange(&self.kernel, sizes)?;
        let local = local.or_else(|| spread_local(&global, units));
        Ok(Step {
            kernel: &self.kernel,
            program: &self.program,
            def: &self.def,
            sizes,
            global,
            local,
            args: Args::Mapped(&self.args),
            output: FINAL,
        })
    }
}

/// Work-groups for a one-dimensional stage whose kernel leaves the local
/// size to the driver: the largest power of two up to 64 that divides the
/// work-items and still gives every compute unit a work-group. A stage
/// has few work-items (one per reduction: 4,096 rows of partials), and a
/// driver's large groups leave most of a GPU idle: on the H100 the rows of
/// `gemvt`'s 32 partials took 0.0119 ms with the driver's choice and
/// 0.0071 ms in groups of 32 (docs/EXPLORE.md).
/// Where none does (fewer work-items than that), the driver chooses.
fn spread_local(global: &[usize], units: usize) -> Option<Vec<usize>> {
    let [g] = global else { return None };
    [64, 32, 16, 8, 4, 2].into_iter().find(|&l| g % l == 0 && g / l >= units.max(1)).map(|l| vec![l])
}

/// The type of a kernel's first input array.
fn input_type(k: &Kernel) -> Option<&Type> {
    k.params.iter().find_map(|p| match p {
        KernelParam::Input { ty, .. } => Some(ty),
        _ => None,
    })
}

/// Binds the size variables of the stage's input type `want` to the
/// lengths of `got` at the same level; the element types must be equal.
fn unify(want: &Type, got: &Type, b: &mut Binding) -> bool {
    match (want, got) {
        (Type::Array(we, wl), Type::Array(ge, gl)) => {
            let ArithExpr::Var(v) = wl else { return false };
            if b.insert(v.name.clone(), gl.clone()).is_some_and(|old| old != *gl) {
                return false;
            }
            unify(we, ge, b)
        }
        (Type::Array(..), _) | (_, Type::Array(..)) => false,
        _ => crate::passes::typecheck::same_type(want, got),
    }
}

/// Validation sizes, in order.
type GoldKey = Vec<(String, i64)>;
/// Inputs and the interpreter's result at one key's sizes, once computed.
type GoldSlot = std::sync::Arc<std::sync::OnceLock<Result<Expected, OracleError>>>;

/// Gold results by validation sizes, each computed once for every device
/// of a search: the devices' workers validate at the same sizes, and the
/// interpreter's gold of a large reduction takes seconds (two workers
/// computing their own took dot's search from 16 s to 27 s of them). A
/// worker asking for sizes another is computing waits for that result;
/// other sizes go on at once.
#[derive(Default)]
pub struct GoldCache(std::sync::Mutex<BTreeMap<GoldKey, GoldSlot>>);

impl GoldCache {
    fn slot(&self, key: GoldKey) -> GoldSlot {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(key).or_default().clone()
    }

    /// The sizes whose gold is computed and valid.
    fn computed(&self) -> Vec<GoldKey> {
        let map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        map.iter().filter(|(_, g)| g.get().is_some_and(|r| r.is_ok())).map(|(k, _)| k.clone()).collect()
    }
}

/// Whether the device still builds and runs a one-work-item kernel
/// that writes 1.0 and the host reads it back. A kernel fault on a GPU
/// (a misaligned or out-of-bounds access) is sticky to the process's
/// context: every later build and run fails, so the search must stop
/// rather than log each later candidate as failed.
pub fn device_alive(rt: &Runtime) -> bool {
    const SRC: &str = "kernel void lift_alive(global float* o) { o[0] = 1.0f; }\n";
    let alive = || -> Result<bool, RuntimeError> {
        let program = rt.build("liveness probe", SRC, "")?;
        let out = rt.zeroed("alive", crate::runtime::ElemKind::F32, 4)?;
        let launch = crate::runtime::Launch {
            program: &program,
            kernel: "lift_alive",
            args: vec![crate::runtime::KernelArg::Buffer(&out)],
            global: vec![1],
            local: None,
        };
        rt.run(&[launch])?;
        Ok(matches!(rt.download(&out)?, HostArray::F32(v) if v.first() == Some(&1.0)))
    };
    alive().unwrap_or(false)
}

/// What one evaluation needs besides the candidate.
pub struct Bench<'a> {
    pub rt: &'a Runtime,
    pub original: &'a Program,
    pub def: &'a str,
    /// The def the candidates' results are checked against: `def`, or the
    /// user's def where the search runs on another (`prepare_search`: a
    /// part split off it, a flattened batch).
    pub gold: &'a str,
    /// Whether every candidate gets a second stage (the search runs on a
    /// part of the user's def, `epilogue`, `columns`), not only those that
    /// leave partial results.
    pub always_then: bool,
    pub sizes: &'a Sizes,
    pub inputs: &'a Arrays,
    pub oracle: Oracle<'a>,
    pub seed: u64,
    pub warmup: usize,
    pub runs: usize,
    /// The best time so far: a candidate more than 4 times slower is run once.
    pub cutoff_ms: Option<f64>,
    /// Milliseconds of budget left: a candidate predicted to take longer
    /// than half of it is not timed.
    pub left_ms: f64,
    /// A run longer than this is the candidate's only one (`Stop`).
    pub once_over_ms: f64,
    /// Gold results by validation sizes, computed once each (shared by
    /// the devices of one search).
    pub golds: &'a GoldCache,
    /// `inputs` on the device, each uploaded once for all candidates (no
    /// kernel writes its inputs): re-uploading 1.3 GB of a 3D stencil's
    /// inputs for every candidate took most of its time on the H100.
    pub uploaded: std::cell::RefCell<BTreeMap<String, DeviceBuffer>>,
    /// The def's result type, found once (`computes_everything`).
    pub whole: std::cell::OnceCell<Option<Type>>,
    /// The gold def's result type, found once (`leaves_gold_size`).
    pub gold_whole: std::cell::OnceCell<Option<Type>>,
    /// The lengths the gold def's reductions reduce, found once (the
    /// interpreter's tolerance at a validation size, `validate`).
    pub gold_sums: std::cell::OnceCell<Vec<crate::arith::ArithExpr>>,
    /// The fixed second stages (the first that fits is used), if
    /// candidates leave partial results; empty otherwise.
    pub then: &'a [Finisher],
    /// The smallest length per size the candidate is validated at (the
    /// interpreter computes the gold result there).
    pub validation_floor: i64,
    /// Where this device's measuring time went.
    pub phases: std::cell::Cell<Phases>,
}

impl Bench<'_> {
    /// Whether a candidate's kernel computes the def's whole result (its
    /// output has the def's type, as the naive lowering's has): it gets no
    /// second stage, which would apply a map after the reduction (a norm's
    /// square root) a second time.
    fn computes_everything(&self, k: &Kernel) -> bool {
        if self.always_then {
            return false;
        }
        let whole = self.whole.get_or_init(|| crate::passes::typecheck::def_result(self.original, self.def));
        whole.as_ref().is_some_and(|t| crate::passes::typecheck::same_type(t, &k.output_type))
    }

    /// Whether second stage `f`, bound by `b`, leaves as many bytes as the
    /// gold def's result at the timed sizes. A stage adding up rows of
    /// partial results and one adding up columns both bind any 2D output;
    /// only the one matching the kernel's layout leaves the def's count.
    /// Where either count is unknown the stage is let through (validation
    /// still decides).
    fn leaves_gold_size(&self, f: &Finisher, b: &Binding) -> bool {
        let gold =
            self.gold_whole.get_or_init(|| crate::passes::typecheck::def_result(self.original, self.gold));
        let Some(gold) = gold else { return true };
        let Ok(values) = Finisher::values(b, self.sizes) else { return true };
        let stage = f.kernel.output_type.size_in_bytes().eval_with(&|v| values.get(v).copied());
        let want = gold.size_in_bytes().eval_with(&|v| self.sizes.get(v).copied());
        match (stage, want) {
            (Ok(s), Ok(w)) => s == w,
            _ => true,
        }
    }

    /// The validation sizes for constraints `cs`: the smallest from the
    /// floor up that they allow, the floor halved (down to 17) while the
    /// interpreter would not hold the gold there by its own estimate
    /// (`validate::interp_elements`: a square product written with one
    /// size, or `A Aᵀ`, has a million points each reducing a thousand
    /// values, and the interpreter keeps every value as a tree).
    ///
    /// Where sizes whose gold is already computed also meet `cs` and are
    /// no more than `REUSE_GROWTH` times as large, those are used instead:
    /// candidates of one shape differ in their divisibility constraints
    /// (a work-group of 32 or 64, 4 or 8 outputs per work-item), each
    /// smallest size is another, and the interpreter's gold of a 3D
    /// stencil at 64 x 44 x 44 took longer than the rest of a candidate's
    /// evaluation together.
    fn validation_sizes_for(&self, cs: &[Constraint]) -> Sizes {
        let smallest = self.smallest_validation_sizes(cs);
        let computed = self.golds.computed().into_iter().map(|k| k.into_iter().collect());
        reused_sizes(computed, &smallest, self.sizes, cs).filter(|s| self.gold_fits(s)).unwrap_or(smallest)
    }

    /// The smallest validation sizes for `cs` (`validation_sizes_for`
    /// without the reuse of computed golds: the same whatever the search
    /// measured before).
    fn smallest_validation_sizes(&self, cs: &[Constraint]) -> Sizes {
        let mut floor = self.validation_floor;
        loop {
            let vsizes = validation_sizes(self.sizes, cs, floor);
            if self.gold_fits(&vsizes) || floor / 2 < MIN_VALIDATION_FLOOR {
                break vsizes;
            }
            floor = (floor / 2) | 1;
        }
    }

    /// Whether the interpreter holds the gold at `s` by its own estimate.
    fn gold_fits(&self, s: &Sizes) -> bool {
        crate::validate::interp_elements(self.original, self.gold, s)
            .is_none_or(|n| n <= crate::interp::MAX_WORK as f64 / 2.0)
    }

    /// The candidate's kernel for every size, compiled with the local size
    /// `local`, and all its constraints (`rule_constraints`, its second
    /// stage's, and the launch's whole work-groups where the kernel needs
    /// them) with that second stage.
    ///
    /// A kernel compiled for exactly the work-items it needs has no bound
    /// check, but launches whole work-groups only where its count divides:
    /// at the validation size as well, which can make that size the timed
    /// one (a dot product split into chunks of 128 x 128, in work-groups
    /// of 1024, divides only from 2^24 elements up; the interpreter's gold
    /// there took most of dot's search). Where those constraints make the
    /// smallest validation size more than `REUSE_GROWTH` times larger, the
    /// candidate is compiled to round its count up to whole work-groups
    /// instead (`CompileOptions::whole_groups`, a bound check in its
    /// loops), validated at the small size and timed as that kernel. The
    /// choice depends on the candidate alone, so `rebuilt` makes the same.
    fn generic(&self, prog: &Program, cs: &[Constraint], local: Option<[i64; 3]>) -> Generic<'_> {
        let opts = CompileOptions { local, ..Default::default() };
        let mut all = self.rule_constraints(prog, cs);
        let kernel = timed(
            &self.phases,
            |p| &mut p.codegen_s,
            || crate::compile::compile_for_launch(prog, self.def, &opts, self.sizes),
        );
        let fin = kernel.as_ref().ok().and_then(|k| self.second_stage(k, &mut all));
        let Ok(Kernel { global, local: Some(l), whole_groups: false, .. }) = &kernel else {
            return Generic { kernel, all, fin };
        };
        let launch: Vec<Constraint> = global
            .iter()
            .zip(l)
            .map(|(g, l)| Constraint {
                expr: ArithExpr::modulo(g.clone(), l.clone()),
                text: format!("{g} % {l} == 0"),
            })
            .collect();
        let loose = points(&self.smallest_validation_sizes(&all));
        let own = all.len();
        all.extend(launch);
        if points(&self.smallest_validation_sizes(&all)) <= loose * REUSE_GROWTH {
            return Generic { kernel, all, fin };
        }
        all.truncate(own);
        let rounded = CompileOptions { whole_groups: true, ..opts };
        let kernel = timed(
            &self.phases,
            |p| &mut p.codegen_s,
            || crate::compile::compile_for_launch(prog, self.def, &rounded, self.sizes),
        );
        Generic { kernel, all, fin }
    }

    fn gold_at(&self, sizes: &Sizes) -> Result<Expected, OracleError> {
        let key: GoldKey = sizes.iter().map(|(k, v)| (k.clone(), *v)).collect();
        let slot = self.golds.slot(key);
        slot.get_or_init(|| self.oracle.expected(self.original, self.gold, sizes, self.seed)).clone()
    }

    /// Evaluates a candidate program (its rule constraints in `cs`) with an
    /// optional local size, compiled once for every size: the kernel
    /// validated at a small size is the kernel timed.
    pub fn evaluate(&self, prog: &Program, cs: &[Constraint], local: Option<[i64; 3]>) -> Outcome {
        self.evaluate_as(prog, cs, local, Compiled::Generic)
    }

    /// Evaluates a candidate compiled for the sizes it runs at (the sizes
    /// folded into its indices and loop bounds, `lift compile --size`):
    /// validated by its kernel compiled for the validation size, timed by
    /// its kernel compiled for the timed size. No prediction cuts it
    /// short: it is one of the search's fastest already (`specialise`).
    pub fn evaluate_specialised(
        &self,
        prog: &Program,
        cs: &[Constraint],
        local: Option<[i64; 3]>,
    ) -> Outcome {
        self.evaluate_as(prog, cs, local, Compiled::ForSizes)
    }

    /// Whether compiling the candidate for the timed sizes changes its
    /// kernel (where it does not, measuring it again would only measure
    /// noise).
    pub fn specialises(&self, prog: &Program, local: Option<[i64; 3]>) -> bool {
        specialises(prog, self.def, self.sizes, local)
    }

    /// A candidate's rule constraints `cs` with its splits' and the
    /// original def's.
    fn rule_constraints(&self, prog: &Program, cs: &[Constraint]) -> Vec<Constraint> {
        let mut all = cs.to_vec();
        all.extend(split_constraints(prog, self.def));
        all.extend(split_constraints(self.original, self.def));
        all
    }

    /// A candidate that has validated, compiled (for the timed sizes where
    /// `for_sizes`, as `specialise` measured it) and built again with its
    /// second stage, to be timed again by `time_again` (`runoff`).
    pub fn rebuilt(
        &self,
        prog: &Program,
        cs: &[Constraint],
        local: Option<[i64; 3]>,
        for_sizes: bool,
    ) -> Result<Rebuilt<'_>, (Status, String)> {
        let refused = |e: CompileError| (Status::Refused, e.to_string());
        // The kernel and stage `evaluate_as` validated and timed.
        let Generic { kernel, fin, .. } = self.generic(prog, cs, local);
        let kernel = kernel.map_err(refused)?;
        let kernel = if for_sizes {
            let sized = CompileOptions { local, sizes: self.sizes.clone(), ..Default::default() };
            crate::compile::compile_for_launch(prog, self.def, &sized, self.sizes).map_err(refused)?
        } else {
            kernel
        };
        let program = timed(
            &self.phases,
            |p| &mut p.build_s,
            || self.rt.build("explored candidate", &kernel.source, ""),
        )
        .map_err(|e| (Status::BuildFailed, e.to_string()))?;
        Ok(Rebuilt { kernel, program, fin })
    }

    /// The median of `runs` timed runs (after the bench's warm-up) of a
    /// rebuilt candidate at the requested sizes, with no early stop.
    pub fn time_again(&self, r: &Rebuilt<'_>, runs: usize) -> Result<f64, (Status, String)> {
        let cand = Candidate { kernel: &r.kernel, program: &r.program, fin: r.fin.as_ref() };
        let counts = RunCounts { warmup: self.warmup, runs: runs.max(1) };
        let at = RunAt { inputs: self.inputs, sizes: self.sizes, counts, output: Output::Skip };
        let (t, _) = self.run(&cand, at).map_err(|e| (Status::RunFailed, e.to_string()))?;
        t.median().ok_or((Status::RunFailed, "internal: a timed run gave no time".to_string()))
    }

    fn evaluate_as(
        &self,
        prog: &Program,
        cs: &[Constraint],
        local: Option<[i64; 3]>,
        how: Compiled,
    ) -> Outcome {
        let Generic { kernel, all, fin } = self.generic(prog, cs, local);
        let vsizes = self.validation_sizes_for(&all);
        let fail = |s: Status, m: String| Outcome::fail(s, m, vsizes.clone());
        let kernel = match kernel {
            Ok(k) => k,
            Err(e) => return fail(Status::Refused, e.to_string()),
        };
        if let Err((status, message)) = self.fits(&kernel, &vsizes, fin.as_ref()) {
            return fail(status, message);
        }
        // For `Compiled::ForSizes`, the kernels validated and timed.
        let sized = match how {
            Compiled::Generic => None,
            Compiled::ForSizes => match self.specialised_kernels(prog, local, &vsizes, fin.as_ref()) {
                Ok(k) => Some(k),
                Err((status, message)) => return fail(status, message),
            },
        };
        let (kv, kt) = sized.as_ref().map_or((&kernel, &kernel), |(v, t)| (v, t));
        let build = |k: &Kernel| {
            timed(&self.phases, |p| &mut p.build_s, || self.rt.build("explored candidate", &k.source, ""))
        };
        let (pv, pt) = match (build(kv), sized.is_some().then(|| build(kt)).transpose()) {
            (Ok(v), Ok(t)) => (v, t),
            (Err(e), _) | (_, Err(e)) => return fail(Status::BuildFailed, e.to_string()),
        };
        let validating = Candidate { kernel: kv, program: &pv, fin: fin.as_ref() };
        if let Err((status, message)) = self.validate(&validating, &vsizes, &all, how) {
            return fail(status, message);
        }
        let timing = Candidate { kernel: kt, program: pt.as_ref().unwrap_or(&pv), fin: fin.as_ref() };
        self.time(&timing, vsizes.clone())
    }

    /// The second stage for the candidate's partial results where it
    /// leaves some: the first whose constraints, with its size `P` the
    /// candidate's number of partial results, hold at the timed size; they
    /// join the candidate's own (`all`), so the validation size fits it too
    /// and the stage validated is the stage timed.
    fn second_stage<'b>(&'b self, k: &Kernel, all: &mut Vec<Constraint>) -> Option<(&'b Finisher, Binding)> {
        if self.computes_everything(k) {
            return None;
        }
        for f in self.then {
            let Some(b) = f.bind(&k.output_type).filter(|b| self.leaves_gold_size(f, b)) else {
                continue;
            };
            let cs = f.constraints(self.original, &b);
            if crate::explore::space::constraints_hold(&cs, self.sizes) {
                all.extend(cs);
                return Some((f, b));
            }
        }
        None
    }

    /// The candidate's kernels compiled for the validation size and for
    /// the timed size, each within the device's limits at its size.
    fn specialised_kernels(
        &self,
        prog: &Program,
        local: Option<[i64; 3]>,
        vsizes: &Sizes,
        fin: Option<&(&Finisher, Binding)>,
    ) -> Result<(Kernel, Kernel), (Status, String)> {
        let at = |sizes: &Sizes| {
            let opts = CompileOptions { local, sizes: sizes.clone(), ..Default::default() };
            timed(
                &self.phases,
                |p| &mut p.codegen_s,
                || crate::compile::compile_for_launch(prog, self.def, &opts, sizes),
            )
            .map_err(|e| (Status::Refused, e.to_string()))
        };
        let (v, t) = (at(vsizes)?, at(self.sizes)?);
        self.fits(&v, vsizes, fin)?;
        self.fits(&t, vsizes, fin)?;
        Ok((v, t))
    }

    /// The validation run at `vsizes` against the gold result; for a
    /// generic kernel also the prediction of its time at the requested
    /// size from that run (or from a probe), which rules out hopeless
    /// candidates: a kernel cannot be stopped once launched.
    fn validate(
        &self,
        cand: &Candidate<'_>,
        vsizes: &Sizes,
        all: &[Constraint],
        how: Compiled,
    ) -> Result<(), (Status, String)> {
        let (vin, want, scale) = timed(&self.phases, |p| &mut p.gold_s, || self.gold_at(vsizes))
            .map_err(|e| (Status::Invalid, format!("no gold result: {e}")))?;
        let run = RunAt { inputs: &vin, sizes: vsizes, counts: ONCE, output: Output::Read };
        let (t, out) = self.run(cand, run).map_err(|e| (Status::RunFailed, e.to_string()))?;
        let out =
            out.ok_or((Status::RunFailed, "internal: the validation run read no output".to_string()))?;
        let sums =
            self.gold_sums.get_or_init(|| crate::validate::reduction_lengths(self.original, self.gold));
        let longest = crate::validate::longest_at(sums, vsizes);
        let c = self.oracle.check(&out, &want, scale.as_ref(), longest);
        if !c.ok {
            return Err((Status::Invalid, c.message));
        }
        if how == Compiled::ForSizes {
            return Ok(());
        }
        let ratio: f64 =
            self.sizes.iter().map(|(k, v)| *v as f64 / *vsizes.get(k).unwrap_or(v) as f64).product();
        let small = t.ms.first().copied().unwrap_or(0.0);
        let predicted = small * ratio;
        let limit = self.cutoff_ms.map_or(f64::INFINITY, |c| 50.0 * c).min(self.left_ms / 2.0);
        // Below PREDICT_FLOOR_MS the small run's time is launch
        // overhead, not work (on a GPU every kernel takes ~10 us at
        // the validation size): scaling it up predicts nothing.
        if small >= PREDICT_FLOOR_MS && predicted > limit {
            return Err((
                Status::Slow,
                format!("predicted {predicted:.1} ms from {small:.3} ms at the validation size"),
            ));
        }
        if small < PREDICT_FLOOR_MS {
            if let Some(message) = self.probe(cand, all, limit) {
                return Err((Status::Slow, message));
            }
        }
        Ok(())
    }

    /// The timed runs at the requested size: `runs` of them, and more
    /// where those took less than `FILL_MS` together (`fill_runs`).
    fn time(&self, cand: &Candidate<'_>, vsizes: Sizes) -> Outcome {
        let counts = RunCounts { warmup: self.warmup, runs: self.runs.max(1) };
        let at = |counts| RunAt { inputs: self.inputs, sizes: self.sizes, counts, output: Output::Skip };
        let timed = self.run(cand, at(counts)).map(|(mut t, _)| {
            if let Some(more) = fill_runs(&t, self.runs.max(1)) {
                // Warm already: the extra runs need no warm-up.
                if let Ok((m, _)) = self.run(cand, at(RunCounts { warmup: 0, runs: more })) {
                    t.ms.extend(m.ms);
                    t.out_of_budget |= m.out_of_budget;
                }
            }
            t
        });
        match timed {
            Err(e) => Outcome::fail(Status::RunFailed, e.to_string(), vsizes),
            Ok(t) => {
                let mut message = if t.out_of_budget {
                    format!("timed {} of {} runs: the budget ran out", t.ms.len(), self.runs)
                } else if t.ms.len() < self.runs.max(1) && t.median().is_some_and(|m| m > self.once_over_ms) {
                    format!("one run over {:.0} ms (1% of the budget): timed once", self.once_over_ms)
                } else if t.ms.len() < self.runs.max(1) {
                    "over 4x slower than the best so far: timed once".to_string()
                } else {
                    String::new()
                };
                // Which second stage ran, where there was a choice.
                if let (Some((f, _)), true) = (&cand.fin, self.then.len() > 1) {
                    let sep = if message.is_empty() { "" } else { "; " };
                    message = format!("{message}{sep}then {}", f.def);
                }
                Outcome { status: Status::Ok, median_ms: t.median(), message, valid_sizes: vsizes }
            }
        }
    }

    /// Where the validation run says nothing of the time (launch
    /// overhead), one run at the probe sizes (`probe_sizes`) on the
    /// requested inputs' buffers (a size-generic kernel reads a prefix of
    /// each): why not to time the candidate, if that run predicts more
    /// than `limit`. A naive product at 4096^3 takes seconds per run, and
    /// a run cannot be stopped once launched.
    fn probe(&self, cand: &Candidate<'_>, cs: &[Constraint], limit: f64) -> Option<String> {
        let psizes = probe_sizes(self.sizes, cs);
        let ratio: f64 =
            self.sizes.iter().map(|(k, v)| *v as f64 / *psizes.get(k).unwrap_or(v) as f64).product();
        if ratio < 2.0 || self.fits(cand.kernel, &psizes, cand.fin).is_err() {
            return None;
        }
        let (t, _) = self
            .run(cand, RunAt { inputs: self.inputs, sizes: &psizes, counts: ONCE, output: Output::Skip })
            .ok()?;
        let probe = t.ms.first().copied()?;
        let predicted = probe * ratio;
        let at: Vec<String> = psizes.iter().map(|(k, v)| format!("{k}={v}")).collect();
        (probe >= PREDICT_FLOOR_MS && predicted > limit)
            .then(|| format!("predicted {predicted:.1} ms from {probe:.3} ms at {}", at.join(",")))
    }

    /// The device's limits and the launch shape at both sizes, and a
    /// second stage for the partial results at both, where one is needed.
    fn fits(
        &self,
        kernel: &Kernel,
        vsizes: &Sizes,
        fin: Option<&(&Finisher, Binding)>,
    ) -> Result<(), (Status, String)> {
        for s in [vsizes, self.sizes] {
            match launch::ndrange(kernel, s) {
                Ok((g, Some(l))) => {
                    let wg: usize = l.iter().product();
                    if wg > self.rt.info.max_work_group {
                        let max = self.rt.info.max_work_group;
                        return Err((
                            Status::Limits,
                            format!("work-group of {wg} exceeds the device's {max}"),
                        ));
                    }
                    if g.iter().zip(&l).any(|(g, l)| *l == 0 || g % l != 0) {
                        return Err((
                            Status::Limits,
                            format!("global size {g:?} is not a multiple of local size {l:?}"),
                        ));
                    }
                }
                Ok(_) => {}
                Err(e) => return Err((Status::Refused, e.to_string())),
            }
            // Local memory: the arrays whose length the sizes give (a staged
            // row) on top of the constant ones.
            let local = launch::local_bytes(kernel, s).map_err(|e| (Status::Refused, e.to_string()))?
                + kernel.static_local_bytes;
            let most = self.rt.info.local_mem;
            if local > most {
                return Err((
                    Status::Limits,
                    format!("{local} bytes of local memory exceed the device's {most}"),
                ));
            }
        }
        if self.then.is_empty() || self.computes_everything(kernel) {
            return Ok(());
        }
        let fitting = fin.map(|(f, b)| -> Result<bool, LaunchError> {
            for s in [vsizes, self.sizes] {
                if !f.fits(self.original, &Finisher::values(b, s)?) {
                    return Ok(false);
                }
            }
            Ok(true)
        });
        match fitting.transpose().map_err(|e| (Status::Refused, e.to_string()))? {
            Some(true) => Ok(()),
            _ => {
                // The counts in the message are scalars.
                let count =
                    arith::simplify(&ArithExpr::div(kernel.output_type.size_in_bytes(), ArithExpr::Cst(4)));
                let parts = [vsizes, self.sizes]
                    .iter()
                    .map(|s| eval_at(&count, s, "output size"))
                    .collect::<Result<Vec<i64>, LaunchError>>()
                    .map_err(|e| (Status::Refused, e.to_string()))?;
                let names: Vec<&str> = self.then.iter().map(|f| f.def.as_str()).collect();
                Err((
                    Status::Refused,
                    format!("no second stage ({}) fits {parts:?} partial results", names.join(", ")),
                ))
            }
        }
    }

    /// Runs a candidate and its second stage on `inputs` at `sizes`: the
    /// times (the search's early stops apply) and the final output.
    fn run(&self, c: &Candidate<'_>, at: RunAt<'_>) -> Result<(Times, Option<HostArray>), RunError> {
        // The requested inputs stay on the device between candidates; the
        // validation inputs (other sizes, made per size) are uploaded here.
        let cached = std::ptr::eq(at.inputs, self.inputs);
        let mut device =
            if cached { std::mem::take(&mut *self.uploaded.borrow_mut()) } else { BTreeMap::new() };
        let result = timed(&self.phases, |p| &mut p.run_s, || self.run_on(c, at, &mut device));
        if cached {
            device.remove(OUT);
            device.remove(FINAL);
            *self.uploaded.borrow_mut() = device;
        }
        result
    }

    /// `run` with the device buffers that are already there (`device`):
    /// the kernel's other inputs are uploaded into it, and its output (and
    /// the second stage's) allocated there.
    fn run_on(
        &self,
        c: &Candidate<'_>,
        at: RunAt<'_>,
        device: &mut BTreeMap<String, DeviceBuffer>,
    ) -> Result<(Times, Option<HostArray>), RunError> {
        let RunAt { inputs, sizes, counts, output } = at;
        // The second stage reads the candidate's output as its partials.
        let fin_sizes = match c.fin {
            Some((_, b)) => Some(Finisher::values(b, sizes)?),
            None => None,
        };
        for (name, buf) in launch::upload_inputs_missing(self.rt, c.kernel, inputs, device)? {
            device.insert(name, buf);
        }
        for name in c.fin.iter().flat_map(|(f, _)| &f.arrays) {
            if !device.contains_key(name) {
                let h = inputs.get(name).ok_or_else(|| LaunchError::NoInput(name.clone()))?;
                device.insert(name.clone(), self.rt.upload(name, h)?);
            }
        }
        device.insert(OUT.into(), launch::output_buffer(self.rt, "out", &c.kernel.output_type, sizes)?);
        let (global, local) = launch::ndrange(c.kernel, sizes)?;
        let mut steps = vec![Step {
            kernel: c.kernel,
            program: c.program,
            def: self.def,
            sizes,
            global,
            local,
            args: Args::ByName,
            output: OUT,
        }];
        if let (Some((f, _)), Some(s)) = (c.fin, &fin_sizes) {
            device.insert(FINAL.into(), launch::output_buffer(self.rt, "final", &f.kernel.output_type, s)?);
            steps.push(f.step(s, self.rt.info.compute_units as usize)?);
        }
        let stop =
            Stop { cutoff_ms: self.cutoff_ms, budget_ms: self.left_ms, once_over_ms: self.once_over_ms };
        let times = launch::run(self.rt, &steps, Buffers { device, host: inputs }, counts, stop)?;
        let key = if c.fin.is_some() { FINAL } else { OUT };
        let out = device.get(key).ok_or(RunError::NoOutput)?;
        match output {
            Output::Read => Ok((times, Some(self.rt.download(out)?))),
            Output::Skip => Ok((times, None)),
        }
    }
}

/// A candidate's timed runs last at least this long together: five runs
/// of a few-microsecond kernel are chosen by their noise (one srad2 kernel
/// took 5.8 and 7.3 us in two five-run medians of one search on the H100).
const FILL_MS: f64 = 1.0;
/// At most this many runs in all.
const MOST_RUNS: usize = 500;

/// How many runs to add to `t` (all `runs` of it taken) so that they last
/// `FILL_MS` together; `None` when they already do, or where a run was cut
/// short (the budget, or a candidate too slow to time again).
fn fill_runs(t: &Times, runs: usize) -> Option<usize> {
    let median = t.median()?;
    if t.out_of_budget || t.ms.len() < runs || median <= 0.0 {
        return None;
    }
    let want = runs_to_fill(median, FILL_MS, t.ms.len(), MOST_RUNS);
    (want > t.ms.len()).then(|| want - t.ms.len())
}

/// Runs of a kernel of `ms` that last `fill_ms` together, at least
/// `least` (and 1) and at most `most` (or `least` where that is more);
/// `most` where the time is unknown (0).
pub fn runs_to_fill(ms: f64, fill_ms: f64, least: usize, most: usize) -> usize {
    let fill = if ms > 0.0 { (fill_ms / ms).ceil() as usize } else { most };
    fill.clamp(least.max(1), most.max(least))
}

/// One run and no warm-up: the validation and probe runs.
const ONCE: RunCounts = RunCounts { warmup: 0, runs: 1 };

/// What a run runs on: the host inputs (the search's own, kept on the
/// device, or the validation ones), the sizes, how many runs, and whether
/// the output is read back.
#[derive(Clone, Copy)]
struct RunAt<'a> {
    inputs: &'a Arrays,
    sizes: &'a Sizes,
    counts: RunCounts,
    output: Output,
}

/// Whether a run reads its output back: the validation run compares it,
/// the timed and probe runs do not look at it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Output {
    Read,
    Skip,
}

/// How a candidate is compiled: once for every size, or for each size it
/// runs at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Compiled {
    Generic,
    ForSizes,
}

/// A candidate's kernel for every size, its constraints and its second
/// stage (`Bench::generic`).
struct Generic<'b> {
    kernel: Result<Kernel, CompileError>,
    all: Vec<Constraint>,
    fin: Option<(&'b Finisher, Binding)>,
}

/// A validated candidate built again to be timed again (`Bench::rebuilt`).
pub struct Rebuilt<'b> {
    kernel: Kernel,
    program: RuntimeProgram,
    fin: Option<(&'b Finisher, Binding)>,
}

/// A built candidate and the second stage it takes, if any.
struct Candidate<'a> {
    kernel: &'a Kernel,
    program: &'a RuntimeProgram,
    fin: Option<&'a (&'a Finisher, Binding)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Workers asking for the same sizes at once compute their gold once
    /// (one waits for the other); only valid golds count as computed.
    #[test]
    fn a_gold_is_computed_once_for_every_worker() {
        let golds = GoldCache::default();
        let key = |n: i64| vec![("N".to_string(), n)];
        let count = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    golds.slot(key(7)).get_or_init(|| {
                        count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        std::thread::sleep(std::time::Duration::from_millis(20));
                        Err(OracleError::NoDef("g".into()))
                    });
                });
            }
        });
        assert_eq!(count.into_inner(), 1);
        assert!(golds.computed().is_empty(), "a failed gold is not reused");
        let ok: Expected = (Arrays::new(), HostArray::F32(vec![1.0]), None);
        golds.slot(key(9)).get_or_init(|| Ok(ok));
        assert_eq!(golds.computed(), vec![key(9)]);
    }

    /// Short kernels get runs enough to fill FILL_MS; long ones, cut ones
    /// and those out of budget get none.
    #[test]
    fn short_kernels_are_timed_until_the_runs_fill_a_millisecond() {
        let t = |ms: Vec<f64>, out_of_budget| Times { host_ms: ms.clone(), ms, out_of_budget };
        assert_eq!(fill_runs(&t(vec![0.006; 5], false), 5), Some(162));
        assert_eq!(fill_runs(&t(vec![0.0001; 5], false), 5), Some(MOST_RUNS - 5));
        assert_eq!(fill_runs(&t(vec![0.25; 5], false), 5), None);
        assert_eq!(fill_runs(&t(vec![0.006; 5], true), 5), None);
        assert_eq!(fill_runs(&t(vec![0.006], false), 5), None);
    }

    #[test]
    fn probe_sizes_are_a_quarter_and_keep_the_constraints() {
        let requested: Sizes = [("K".to_string(), 4096), ("M".to_string(), 4032)].into();
        // M % 96 == 0: a quarter (1008) does not divide, 1056 is the next.
        let cs = [Constraint {
            expr: ArithExpr::modulo(ArithExpr::size("M"), ArithExpr::Cst(96)),
            text: "M % 96 == 0".into(),
        }];
        let p = probe_sizes(&requested, &cs);
        assert_eq!(p, [("K".to_string(), 1024), ("M".to_string(), 1056)].into());
        assert_eq!(validation_sizes(&requested, &cs, 64)["M"], 96);
    }

    #[test]
    fn sizes_far_above_the_floor_are_divisors_of_the_request() {
        let v: Vec<i64> = scan_values(1001, 1 << 25).collect();
        assert_eq!(v[..3], [1001, 1002, 1003]);
        assert_eq!(v[SCAN as usize], 1 << 15);
        assert_eq!(v.last(), Some(&(1 << 24)));
        // A chunk of 2^19 at 2^25: 2^19, found past the scanned values.
        let requested: Sizes = [("N".to_string(), 1 << 25)].into();
        let cs = [Constraint {
            expr: ArithExpr::modulo(ArithExpr::size("N"), ArithExpr::Cst(1 << 19)),
            text: "N % 2^19 == 0".into(),
        }];
        assert_eq!(validation_sizes(&requested, &cs, 1001)["N"], 1 << 19);
        // Below the request only the request itself: kept.
        assert_eq!(scan_values(10, 12).collect::<Vec<_>>(), [10, 11]);
    }

    #[test]
    fn validation_reuses_computed_sizes_that_meet_the_constraints() {
        let sz = |x: i64, y: i64| -> Sizes { [("X".to_string(), x), ("Y".to_string(), y)].into() };
        let div = |v: &str, n: i64| Constraint {
            expr: ArithExpr::modulo(ArithExpr::size(v), ArithExpr::Cst(n)),
            text: format!("{v} % {n} == 0"),
        };
        let requested = sz(256, 256);
        let cs = [div("X", 32), div("Y", 4)];
        let smallest = validation_sizes(&requested, &cs, 41);
        assert_eq!(smallest, sz(64, 44));
        // 128 x 48 meets both and is within four times 64 x 44; the
        // smaller 64 x 42 fails Y % 4; 256 x 256 is too large; 160 x 24
        // is smaller in y.
        let computed = [sz(64, 42), sz(256, 256), sz(160, 24), sz(128, 48)];
        let got = reused_sizes(computed.iter().cloned(), &smallest, &requested, &cs);
        assert_eq!(got, Some(sz(128, 48)));
        assert_eq!(reused_sizes([sz(64, 42)].into_iter(), &smallest, &requested, &cs), None);
    }

    #[test]
    fn a_stage_spreads_over_the_compute_units() {
        // 4,096 rows on 132 units: groups of 16 give 256 groups (32 would
        // give 128, fewer than the units).
        assert_eq!(spread_local(&[4096], 132), Some(vec![16]));
        assert_eq!(spread_local(&[1 << 20], 132), Some(vec![64]));
        // On a CPU of 2 units the largest group that divides.
        assert_eq!(spread_local(&[96], 2), Some(vec![32]));
        // Fewer work-items than units, an odd count, a 2D range: the
        // driver's choice.
        assert_eq!(spread_local(&[100], 132), None);
        assert_eq!(spread_local(&[4095], 2), None);
        assert_eq!(spread_local(&[64, 64], 2), None);
    }
}
