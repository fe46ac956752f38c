//! `lift explore`: search the derivations and parameters of a high-level
//! program for the fastest validated kernel on each device
//! (`docs/EXPLORE.md`).
//!
//! Files: `space` (stage 1, algorithmic rewriting, and stage 2, lowering
//! choices, as derivation templates), `tuner` (stage 3, parameter values,
//! successive halving with local search), `measure` (compile, build,
//! validate, time), `log` (`explore.csv`, the cache, resuming), `reduction`
//! and `rows` (macro shapes for full and row reductions), `matmul` (tiled
//! matrix products), `stencil`
//! (the space of stencil defs, instead of stages 1 and 2), `split` (one
//! search shared by identical devices), `shard` (`--shard`, `--merge`).

pub mod choice;
pub mod columns;
pub mod copy;
pub mod epilogue;
pub mod finish;
pub mod flatten;
pub mod log;
pub mod matmul;
pub mod measure;
pub mod partials;
pub mod passes;
pub mod recompute;
pub mod reduction;
pub mod remote;
pub mod replay;
pub mod rows;
pub mod runoff;
pub mod shard;
pub mod space;
pub mod specialise;
pub mod split;
pub mod staged;
pub mod stencil;
pub mod strategy;
pub mod tuner;

use crate::compile::{compile, CompileOptions};
use crate::ir::equiv::canonical_def;
use crate::ir::Program;
use crate::runtime::{self, DeviceInfo, Runtime};
use crate::types::Sizes;
use log::{fnv_hex, Log, LogError, Row};
use measure::{Bench, Status};
use remote::Meter;
use space::{Shape, Slot, SpaceLimits};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};
use tuner::{Point, ShapeSpace, Tuner};

/// What to explore and how long.
#[derive(Clone, Debug)]
pub struct ExploreOptions {
    pub def: String,
    /// The sizes candidates are timed at (every size variable of the def).
    pub sizes: Sizes,
    pub budget: Duration,
    pub seed: u64,
    pub out: PathBuf,
    pub resume: bool,
    pub limits: SpaceLimits,
    /// Candidates per device at most (tests; `None`: the budget decides).
    pub max_candidates: Option<usize>,
    pub warmup: usize,
    pub runs: usize,
    pub progress: bool,
    /// Fixed second stages for candidates that leave partial results
    /// (`--then DEF[,DEF...]`, defs of the same file, the first that fits
    /// a candidate's partial results is used; see `reduction`). Empty: none.
    pub then: Vec<String>,
    /// Validate against this reference (`--config`: a benchmark config's
    /// input generators, Rust gold and tolerances; see
    /// `validate::Oracle`). `None`: random inputs against the interpreter.
    pub reference: Option<std::sync::Arc<dyn crate::validate::Reference>>,
    /// Measure the fastest candidates again compiled for the timed sizes
    /// in the budget's last tenth (`specialise`).
    pub specialise: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ExploreError {
    #[error("no `def {0}` in the program")]
    NoDef(String),
    #[error("size `{0}` of the def is not given (pass --size {0}=VALUE)")]
    MissingSize(String),
    #[error("the program cannot be rewritten: {0}")]
    Rewrite(#[from] crate::rewrite::RewriteError),
    #[error(transparent)]
    Log(#[from] LogError),
    /// The device, its inputs or the second stage, before candidates run.
    #[error(transparent)]
    Runtime(measure::DeviceError),
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    /// Another explorer holds `--out` (its `explore.csv.lock`).
    #[error(transparent)]
    Locked(#[from] crate::outfile::LockError),
    /// A candidate's run failed and the device then failed a one-item
    /// probe kernel too (`Bench::device_alive`).
    #[error("{device} stopped working after candidate {candidate} ({message}); what was logged is kept: run again with --resume to go on")]
    DeviceLost { device: String, candidate: usize, message: String },
    /// A worker process could not start or plan the search (`remote`).
    #[error(transparent)]
    Worker(#[from] remote::RemoteError),
}

/// The program in normal form and the shapes to search.
pub struct Plan {
    pub base: Program,
    pub def: String,
    pub shapes: Vec<Shape>,
    /// Whether the shapes are the stencil space's.
    pub stencil: bool,
    /// The shapes that come from macro recipes (`reduction`, `rows`,
    /// `matmul`), by index.
    pub macros: Vec<usize>,
}

/// Stages 1 and 2: every lowering of every stage-1 program. The first
/// shape is the naive lowering of the program as written.
pub fn plan(program: &Program, def: &str, sizes: &Sizes, limits: &SpaceLimits) -> Result<Plan, ExploreError> {
    let d = program.def(def).ok_or_else(|| ExploreError::NoDef(def.into()))?;
    let types =
        crate::passes::typecheck::typecheck_def(program, d).map_err(crate::rewrite::RewriteError::Type)?;
    for p in &d.params {
        if let Some(t) = types.params.get(&p.id) {
            for l in t.lengths() {
                for v in l.vars() {
                    if !sizes.contains_key(&v.name) {
                        return Err(ExploreError::MissingSize(v.name));
                    }
                }
            }
        }
    }
    let base = crate::rewrite::prepare(program, def)?;
    // Stencils get their own space (`stencil`): the generic one cannot
    // reach k outputs per work-item or tiles in local memory.
    let mut macros = Vec::new();
    let (shapes, is_stencil) = match stencil::shapes(&base, def, sizes, &limits.valid_at) {
        Some(mut s) if !s.is_empty() => {
            // A 1D neighbourhood in every row: its k-outputs shapes too.
            s.extend(stencil::one_dim_shapes(&base, def, sizes, &limits.valid_at));
            (s, true)
        }
        _ => {
            let mut shapes = Vec::new();
            for (i, alg) in space::algorithmic_shapes(&base, def, sizes, limits).into_iter().enumerate() {
                shapes.extend(space::lowerings(&base, def, &alg, limits.max_lowerings));
                if i != 0 {
                    continue;
                }
                // The macro shapes of the program as written (reductions,
                // rows, tiled products): measured right after the naive
                // lowering (`spaces_for`), so that a short budget reaches
                // them.
                let mut recipes = Vec::new();
                if limits.reductions {
                    recipes.extend(reduction::reduction_shapes(&base, def, sizes));
                    recipes.extend(partials::partial_shapes(&base, def, sizes));
                }
                // The row shapes need no second stage.
                recipes.extend(rows::row_shapes(&base, def, sizes));
                recipes.extend(matmul::matmul_shapes(&base, def, sizes));
                recipes.extend(staged::staged_shapes(&base, def, sizes));
                for r in recipes {
                    let from = shapes.len();
                    shapes.extend(space::lowerings(&base, def, &r, limits.max_lowerings));
                    macros.extend(from..shapes.len());
                }
                // A 1D stencil's blocked shape comes complete (lowered).
                let from = shapes.len();
                shapes.extend(stencil::one_dim_shapes(&base, def, sizes, &limits.valid_at));
                macros.extend(from..shapes.len());
            }
            (shapes, false)
        }
    };
    // Every shape starts from a point the sizes admit (`fit_defaults`);
    // one with no such point near its defaults is kept as it was.
    let mut shapes = shapes;
    let at: Vec<&Sizes> = std::iter::once(sizes).chain(&limits.valid_at).collect();
    for s in shapes.iter_mut().filter(|s| !s.slots.is_empty()) {
        space::fit_defaults(s, &base, def, &at);
    }
    Ok(Plan { base, def: def.to_string(), shapes, stencil: is_stencil, macros })
}

/// The best candidate of one device.
#[derive(Clone, Debug)]
pub struct Best {
    pub median_ms: f64,
    pub candidate: usize,
    /// Its point of the search space (the order `choice::pick` breaks
    /// near-ties by).
    pub point: Point,
    pub hash: String,
    /// The program as it prints (eta-expansions undone).
    pub program: Program,
    pub derivation: Vec<String>,
    pub params: String,
    /// The local size to launch with (trailing 1s for fewer dimensions).
    pub local: Option<[i64; 3]>,
    /// Whether this process measured it (else its time came from an
    /// earlier run's log and is measured again before it is written).
    pub measured: bool,
    /// The candidate as evaluated (before `release`) and its rule
    /// constraints, to measure it again.
    pub evaluated: Program,
    pub constraints: Vec<crate::rewrite::Constraint>,
    /// Whether the time is that of its kernel compiled for the timed sizes
    /// (`specialise`; `lift compile --size`), not of its kernel for every
    /// size.
    pub static_sizes: bool,
}

/// What one device's search found.
#[derive(Clone, Debug)]
pub struct DeviceResult {
    pub device: String,
    pub slug: String,
    pub tried: usize,
    pub valid: usize,
    /// Candidates evaluated in this run (the others came from the cache).
    pub measured: usize,
    /// The naive lowering's time, when it was measured in this run.
    pub naive_ms: Option<f64>,
    /// The candidate written: the first in the space's order of those
    /// within `choice::TIE` of the fastest, set once the search is over
    /// (`choice::settle`; `near` holds the candidates until then).
    pub best: Option<Best>,
    /// The measured candidates within `choice::TIE` of the fastest.
    pub near: Vec<Best>,
    /// The fastest measured candidates, which `specialise` takes at the end
    /// to measure again compiled for the timed sizes.
    pub leaders: Vec<Best>,
    /// What that gave, per leader it validated for: (its candidate, its
    /// time for every size, its row's candidate, its time for its sizes).
    pub specialised: Vec<(usize, f64, usize, f64)>,
    /// The near-fastest timed again side by side (`runoff`), where there
    /// were two or more.
    pub runoff: Option<runoff::Runoff>,
    /// The fastest measured candidate (number, ms) where `best` is another.
    pub fastest: Option<(usize, f64)>,
    /// Files written for the best program.
    pub files: Vec<PathBuf>,
    /// Best candidates of an earlier run's log that did not hold up when
    /// measured again.
    pub notes: Vec<String>,
    /// The labels of the shapes (`Shape::label`) of which no candidate was
    /// measured within the budget, in plan order.
    pub untried: Vec<String>,
    /// The devices that shared this search (identical ones split its
    /// candidates, `split`), each with its own count and time.
    pub shares: Vec<Share>,
    /// Where the search's wall time went (`Timing`).
    pub timing: Timing,
}

/// One device's part of a search: `P:D`, how many candidates it measured,
/// and the seconds it spent measuring (building, validating, timing).
/// Against the search's wall time, the rest is set-up and time the device
/// waited: for the tuner's next points, or for a program another device
/// was measuring.
#[derive(Clone, Debug, PartialEq)]
pub struct Share {
    pub device: String,
    pub measured: usize,
    pub busy_s: f64,
    /// Where `busy_s` went.
    pub phases: measure::Phases,
}

/// The wall time of a search's stages, in seconds: planning (the shapes
/// and their slots), setting up the devices (inputs, second stages) and the
/// tuner's batches, and confirming logged times at the end. What does not
/// shrink with more devices shows here.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timing {
    pub plan_s: f64,
    pub search_s: f64,
    /// Of `search_s`, the leading device's set-up before its first
    /// candidate (its context, the inputs, the second stages): each
    /// device of a shared search sets up at once, so this does not shrink.
    pub setup_s: f64,
    pub confirm_s: f64,
}

impl Timing {
    /// The seconds of all three stages.
    pub fn total(&self) -> f64 {
        self.plan_s + self.search_s + self.confirm_s
    }
}

#[derive(Debug)]
pub struct Report {
    pub shapes: usize,
    pub csv: PathBuf,
    /// What resuming dropped or skipped, and best candidates from the
    /// earlier log that did not hold up when measured again.
    pub notes: Vec<String>,
    pub devices: Vec<DeviceResult>,
}

/// Devices for a selector: `all`, or comma-separated selectors of
/// [`runtime::select_device`]; each device once. A selector by name (not
/// `P:D`) takes the device it selects and every device of the same model
/// on its platform, so that identical GPUs share the search (`split`).
pub fn select_devices(sel: &str) -> Result<Vec<DeviceInfo>, ExploreError> {
    let rerr = |e: runtime::RuntimeError| ExploreError::Runtime(e.into());
    if sel.trim() == "all" {
        return runtime::list_devices().map_err(rerr);
    }
    let mut out: Vec<DeviceInfo> = Vec::new();
    for part in sel.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let d = runtime::select_device(Some(part)).map_err(rerr)?;
        let by_index = part
            .split_once(':')
            .is_some_and(|(p, i)| p.parse::<usize>().is_ok() && i.parse::<usize>().is_ok());
        let mut picked = vec![d.clone()];
        if !by_index {
            let all = runtime::list_devices().map_err(rerr)?;
            picked.extend(all.into_iter().filter(|x| {
                x.platform_index == d.platform_index && x.device_index != d.device_index && x.name == d.name
            }));
        }
        for d in picked {
            if !out.iter().any(|x| x.platform_index == d.platform_index && x.device_index == d.device_index) {
                out.push(d);
            }
        }
    }
    if out.is_empty() {
        return Err(ExploreError::Runtime(measure::DeviceError::NoneSelected { selector: sel.into() }));
    }
    Ok(out)
}

fn sizes_text(s: &Sizes) -> String {
    s.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",")
}

/// Local sizes worth trying for a kernel that leaves it to the driver
/// (0 = the driver's choice).
fn local_domain(max_wg: usize) -> Vec<i64> {
    let mut v = vec![0];
    v.extend((4..=10).map(|k| 1i64 << k).filter(|&l| l as usize <= max_wg));
    v
}

/// Per device: the tuner's spaces (slots plus a local-size slot where the
/// kernel leaves the local size open) and the order of the first phase:
/// the naive lowering first, then shapes launching enough work-items to
/// fill the device before those that cannot, each group with the macro
/// shapes first, then, on a GPU, those whose global accesses are more
/// often coalesced (`codegen::coalescing`, in quarters), then in plan
/// order.
fn spaces_for(
    plan: &Plan,
    sizes: &Sizes,
    max_wg: usize,
    units: u32,
    gpu: bool,
) -> (Vec<Shape>, Vec<ShapeSpace>, Vec<usize>) {
    let mut shapes = plan.shapes.clone();
    let mut rank = Vec::new();
    for (i, s) in shapes.iter_mut().enumerate() {
        let kernel = s
            .instantiate(&plan.base, &plan.def, &s.defaults())
            .ok()
            .and_then(|inst| compile(&inst.program, &plan.def, &CompileOptions::default()).ok());
        let mut few = false;
        let mut scattered = 0;
        if let Some(k) = &kernel {
            if gpu {
                let share = crate::codegen::coalescing::coalesced_share(&k.accesses, sizes).unwrap_or(1.0);
                scattered = ((1.0 - share) * 4.0).round() as i64;
            }
            if k.local.is_none() && !stencil::has_local_slots(s) && rows::local_of(s, &s.defaults()).is_none()
            {
                s.slots.push(Slot { name: "local".into(), domain: local_domain(max_wg), default: 0 });
            }
            let items: i64 =
                k.global.iter().filter_map(|g| g.eval_with(&|v| sizes.get(v).copied()).ok()).product();
            few = items < i64::from(units.max(1)) * 4;
        }
        rank.push((i != 0, few, !plan.macros.contains(&i), scattered, i));
    }
    rank.sort();
    let order = rank.into_iter().map(|(_, _, _, _, i)| i).collect();
    let spaces = shapes
        .iter()
        .map(|s| ShapeSpace {
            domains: s.slots.iter().map(|x| x.domain.clone()).collect(),
            defaults: s.defaults(),
        })
        .collect();
    (shapes, spaces, order)
}

/// The first `n` candidates the search would measure with a fake measure
/// (a deterministic function of the point) instead of a device: for a seed,
/// the candidate sequence does not depend on anything but the times.
pub fn dry_run(plan: &Plan, sizes: &Sizes, seed: u64, n: usize) -> Vec<String> {
    dry_run_shard(plan, sizes, seed, n, None)
}

/// `dry_run` of one shard's search (`--shard`): its shapes only.
pub fn dry_run_shard(
    plan: &Plan,
    sizes: &Sizes,
    seed: u64,
    n: usize,
    shard: Option<shard::Shard>,
) -> Vec<String> {
    let (shapes, spaces, mut order) = spaces_for(plan, sizes, 256, 4, false);
    if let Some(s) = shard {
        order.retain(|&i| s.owns(&plan.shapes[i]));
    }
    let mut t = Tuner::new(spaces, order, seed);
    let mut out = Vec::new();
    let count = std::cell::Cell::new(0);
    t.run(
        &mut |p: &Point| {
            count.set(count.get() + 1);
            let s = &shapes[p.shape];
            out.push(format!("{} {}", p.shape, params_text(s, &p.values)));
            let h = fnv_hex(&format!("{p:?}"));
            Some(u64::from_str_radix(&h[..6], 16).unwrap_or(0) as f64)
        },
        &|| count.get() >= n,
        &|| false,
    );
    out
}

fn params_text(s: &Shape, values: &[i64]) -> String {
    s.slots.iter().zip(values).map(|(s, v)| format!("{}={v}", s.name)).collect::<Vec<_>>().join(" ")
}

/// The local size a candidate is launched with: its `local` slot where it
/// has one (0: the driver's choice), else the stencil or row shape's.
fn local_size(shape: &Shape, values: &[i64]) -> Option<[i64; 3]> {
    shape
        .slots
        .iter()
        .position(|s| s.name == "local")
        .map(|i| values[i])
        .filter(|&l| l > 0)
        .map(|l| [l, 1, 1])
        .or_else(|| stencil::local_of(shape, values))
        .or_else(|| rows::local_of(shape, values))
}

/// The cache key of a candidate: its def up to renaming, its user
/// functions and its local size (the same program is measured once).
fn program_hash(program: &Program, def: &str, local: Option<[i64; 3]>) -> Option<String> {
    let d = program.def(def)?;
    let ufs: String =
        program.user_funs.iter().map(|u| format!("{}({:?}){};", u.name, u.params, u.body_text)).collect();
    Some(fnv_hex(&format!("{}|{ufs}|local={local:?}", canonical_def(program, d))))
}

/// One instantiated point to judge: its program, local size, program hash
/// and the sizes key the log is searched under.
#[derive(Clone, Copy)]
struct Candidate<'a> {
    point: &'a Point,
    inst: &'a space::Instance,
    local: Option<[i64; 3]>,
    hash: &'a str,
    size_key: &'a str,
}

/// How one candidate ended, and whether this run measured it.
struct Judged {
    status: String,
    median: Option<f64>,
    message: String,
    valid_sizes: String,
    measured: bool,
}

/// What the devices of one group (identical devices: one search, its
/// candidates split among them by `split`) share while they search.
struct Group {
    queue: split::BatchQueue,
    /// Candidates taken (for `--max-candidates`).
    count: AtomicUsize,
    tried: AtomicUsize,
    valid: AtomicUsize,
    /// The best time so far, whichever device measured it: every device's
    /// early stops use it.
    best_ms: Mutex<Option<f64>>,
    /// Programs (hashes) a device is measuring now: another device that
    /// meets the same program waits for its row (each program once).
    measuring: Mutex<std::collections::HashSet<String>>,
    logged: Condvar,
    /// A device failed to write the log: the search stops.
    failed: AtomicBool,
    /// A leader's kernel changes compiled for the timed sizes: the search
    /// stops early enough to measure it so (`specialise`).
    specialisable: AtomicBool,
}

impl Group {
    fn new() -> Group {
        Group {
            queue: split::BatchQueue::new(),
            count: AtomicUsize::new(0),
            tried: AtomicUsize::new(0),
            valid: AtomicUsize::new(0),
            best_ms: Mutex::new(None),
            measuring: Mutex::new(Default::default()),
            logged: Condvar::new(),
            failed: AtomicBool::new(false),
            specialisable: AtomicBool::new(false),
        }
    }

    fn best(&self) -> Option<f64> {
        *self.best_ms.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn improve(&self, t: f64) {
        let mut b = self.best_ms.lock().unwrap_or_else(|e| e.into_inner());
        if b.is_none_or(|x| t < x) {
            *b = Some(t);
        }
    }

    /// Whether a device of the group is measuring `hash` now.
    fn is_measuring(&self, hash: &str) -> bool {
        self.measuring.lock().unwrap_or_else(|e| e.into_inner()).contains(hash)
    }

    /// `hash` is logged (or failed to be): devices waiting for it look again.
    fn release(&self, hash: &str) {
        self.measuring.lock().unwrap_or_else(|e| e.into_inner()).remove(hash);
        self.logged.notify_all();
    }
}

/// The points of a batch per device of a group of several: wider batches
/// give the devices more to take between two turns of the tuner.
const BATCH_PER_DEVICE: usize = 8;

/// What one device's thread keeps while it measures points: its bench,
/// its result so far, logged times to confirm, a failure to write the log
/// (which stops the search) and the seconds spent measuring.
struct Measuring<M> {
    /// This process's bench on the device, or a worker process's
    /// (`remote`).
    meter: M,
    res: DeviceResult,
    /// Candidates whose times came from an earlier run's log: measured
    /// again before one of them is written as the best (`confirm`).
    pending: Vec<Best>,
    failure: Option<ExploreError>,
    /// Whether the device left the search (its worker process failed):
    /// the other devices measure the points it would have taken.
    gone: bool,
    busy_s: f64,
}

impl<M: Meter> Measuring<M> {
    fn new(meter: M, res: DeviceResult) -> Self {
        Measuring { meter, res, pending: Vec::new(), failure: None, gone: false, busy_s: 0.0 }
    }

    /// The result with this device's measuring time in its share.
    fn finish(mut self) -> (M, DeviceResult, Vec<Best>, Option<ExploreError>) {
        if let Some(s) = self.res.shares.first_mut() {
            s.busy_s = self.busy_s;
            s.phases = self.meter.phases().get();
        }
        (self.meter, self.res, self.pending, self.failure)
    }
}

/// A point with its replayed program, its work-group and its hash.
struct Prepared {
    point: Point,
    inst: space::Instance,
    local: Option<[i64; 3]>,
    hash: String,
}

/// One device's part of a group's search, sent to the group's leader.
struct Part {
    res: DeviceResult,
    pending: Vec<Best>,
}

/// A device's runtime, the search's inputs and its second stages there.
type Setup = (Runtime, crate::types::Arrays, Vec<measure::Finisher>);

/// What candidates are validated against: the interpreter, or the
/// benchmark config's reference (`--config`).
fn oracle_of(opts: &ExploreOptions) -> crate::validate::Oracle<'_> {
    match &opts.reference {
        None => crate::validate::Oracle::Interpreter,
        Some(r) => crate::validate::Oracle::Reference(r.as_ref()),
    }
}

/// Opens `info` and prepares what its candidates are evaluated with.
fn setup(
    info: DeviceInfo,
    original: &Program,
    opts: &ExploreOptions,
    gold: &str,
) -> Result<Setup, ExploreError> {
    let rt = Runtime::new(info).map_err(|e| ExploreError::Runtime(e.into()))?;
    let inputs = oracle_of(opts)
        .inputs(original, gold, &opts.sizes, opts.seed)
        .map_err(|e| ExploreError::Runtime(e.into()))?;
    let then = opts
        .then
        .iter()
        .map(|d| measure::Finisher::new(&rt, original, d).map_err(|e| ExploreError::Runtime(e.into())))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((rt, inputs, then))
}

/// The evaluation of a search's candidates on a device (`setup`).
fn bench_for<'b>(
    stencil: bool,
    (opts, gold): (&'b ExploreOptions, &'b measure::Gold),
    original: &'b Program,
    (rt, inputs, then): &'b Setup,
    golds: &'b measure::GoldCache,
) -> Bench<'b> {
    Bench {
        rt,
        original,
        def: &opts.def,
        gold: &gold.def,
        always_then: gold.always_then,
        sizes: &opts.sizes,
        inputs,
        oracle: oracle_of(opts),
        seed: opts.seed,
        warmup: opts.warmup,
        runs: opts.runs,
        cutoff_ms: None,
        left_ms: f64::INFINITY,
        // A candidate of a hundredth of the budget per run is timed
        // once: the naive lowering of a large product (0.5 s a run on
        // an H100) spent a fifth of a 30 s budget on its five runs.
        once_over_ms: (opts.budget.as_secs_f64() * 10.0).max(MIN_ONCE_OVER_MS),
        golds,
        uploaded: Default::default(),
        whole: Default::default(),
        gold_whole: Default::default(),
        gold_sums: Default::default(),
        then,
        validation_floor: validation_floor(stencil, &opts.sizes),
        phases: Default::default(),
    }
}

/// A device's result before its search: nothing tried yet.
fn empty_result(info: &DeviceInfo) -> DeviceResult {
    let mut res = DeviceResult::blank(info.name.clone(), info.slug());
    res.shares = vec![Share {
        device: format!("{}:{}", info.platform_index, info.device_index),
        measured: 0,
        busy_s: 0.0,
        phases: Default::default(),
    }];
    res
}

impl DeviceResult {
    /// A device's result with nothing tried and no shares.
    pub fn blank(device: String, slug: String) -> DeviceResult {
        DeviceResult {
            device,
            slug,
            tried: 0,
            valid: 0,
            measured: 0,
            naive_ms: None,
            best: None,
            near: Vec::new(),
            leaders: Vec::new(),
            specialised: Vec::new(),
            runoff: None,
            fastest: None,
            files: Vec::new(),
            notes: Vec::new(),
            untried: Vec::new(),
            shares: Vec::new(),
            timing: Timing::default(),
        }
    }
}

/// One device's part of its group's search: the group's leader runs the
/// tuner (`lead`), the others measure points of its batches (`help`).
struct Worker<'a> {
    plan: &'a Plan,
    opts: &'a ExploreOptions,
    /// What candidates are validated against (`prepare_search`).
    gold: &'a measure::Gold,
    original: &'a Program,
    log: &'a Mutex<Log>,
    deadline: Instant,
    /// The end of the budget: `deadline`, or later by the share kept for
    /// `specialise`.
    end: Instant,
    /// Whether `specialise` runs (not in a shard: `--merge` chooses).
    specialise: bool,
    /// Whether this is the whole search (not a shard), which chooses its
    /// best itself and so runs `runoff`.
    unsharded: bool,
    bar: indicatif::ProgressBar,
    group: &'a Group,
    /// The shapes with their tuner slots (`spaces_for`).
    shapes: &'a [Shape],
    /// Gold results, shared by every device of the search.
    golds: &'a measure::GoldCache,
}

impl Worker<'_> {
    /// Runs the group's search: the tuner's batches measured by this
    /// device and the `helpers` (their parts arrive on `parts`), then the
    /// parts joined and logged best times confirmed here.
    fn lead(
        &self,
        info: DeviceInfo,
        spaces: Vec<ShapeSpace>,
        order: Vec<usize>,
        helpers: usize,
        parts: std::sync::mpsc::Receiver<Result<Part, ExploreError>>,
    ) -> Result<DeviceResult, ExploreError> {
        // Closed however this returns, so that the helpers return too.
        let close = split::CloseOnDrop(&self.group.queue);
        let started = Instant::now();
        let dev = setup(info.clone(), self.original, self.opts, &self.gold.def)?;
        let setup_s = started.elapsed().as_secs_f64();
        let bench = bench_for(self.plan.stencil, (self.opts, self.gold), self.original, &dev, self.golds);
        let mut m = Measuring::new(bench, empty_result(&info));
        let mut tuner = Tuner::new(spaces, order, self.opts.seed);
        {
            let mut own = |p: split::Take| self.measure(&mut m, p);
            let mut batch = |b: &[Point]| self.group.queue.lead(b, &mut own);
            let stop = || self.stopped();
            // The first phase's share: half of the budget (`Tuner::run`).
            let share_spent = || Instant::now() + self.opts.budget / 2 >= self.search_end();
            let width = if helpers == 0 { 1 } else { BATCH_PER_DEVICE * (helpers + 1) };
            tuner.run_batches(&mut batch, &stop, &share_spent, width);
        }
        let (mut bench, mut res, mut pending, failure) = m.finish();
        drop(close);
        res.timing.search_s = started.elapsed().as_secs_f64();
        res.timing.setup_s = setup_s;
        for _ in 0..helpers {
            match parts.recv() {
                Ok(Ok(p)) => absorb(&mut res, &mut pending, p),
                Ok(Err(e)) => res.notes.push(format!("{}: a device left the search: {e}", res.device)),
                Err(_) => break,
            }
        }
        if let Some(e) = failure {
            return Err(e);
        }
        let confirming = Instant::now();
        confirm(&mut bench, &mut res, pending);
        if self.specialise {
            let mut record = |id: &(String, String, String), row: Row| self.record(id, row);
            specialise::run(&mut bench, &mut res, self.end, &mut record)?;
        }
        if self.unsharded {
            res.runoff = runoff::run(&mut bench, &mut res, runoff::allowance(self.opts.budget));
        }
        choice::settle(&mut res);
        res.timing.confirm_s = confirming.elapsed().as_secs_f64();
        self.bar.finish();
        Ok(res)
    }

    /// A helper's part: points of the leader's batches until it closes the
    /// queue, measured in this process or, given a `worker` command, by a
    /// process of its own (`remote`); the part goes to the leader on `to`
    /// (an error too: the leader and the other helpers then measure its
    /// share).
    fn help(
        &self,
        info: DeviceInfo,
        worker: Option<&remote::WorkerCommand>,
        to: std::sync::mpsc::Sender<Result<Part, ExploreError>>,
    ) {
        let part = match worker {
            Some(cmd) => remote::Child::spawn(cmd, &info, &remote::plan_key(self.shapes))
                .map_err(ExploreError::from)
                .and_then(|child| self.serve(Measuring::new(child, empty_result(&info)))),
            None => setup(info.clone(), self.original, self.opts, &self.gold.def).and_then(|dev| {
                let bench =
                    bench_for(self.plan.stencil, (self.opts, self.gold), self.original, &dev, self.golds);
                self.serve(Measuring::new(bench, empty_result(&info)))
            }),
        };
        // The leader has returned early (by an error) when no one listens.
        let _ = to.send(part);
    }

    /// Measures points of the leader's batches with `m` until the queue
    /// closes or the device leaves the search.
    fn serve<M: Meter>(&self, mut m: Measuring<M>) -> Result<Part, ExploreError> {
        self.group.queue.serve(&mut |p: split::Take| self.measure(&mut m, p));
        let (_, res, pending, failure) = m.finish();
        match failure {
            Some(e) => Err(e),
            None => Ok(Part { res, pending }),
        }
    }

    /// Whether the search is over: the budget spent, `--max-candidates`
    /// reached, or a device failed to write the log.
    fn stopped(&self) -> bool {
        self.bar.set_position(self.elapsed_secs());
        Instant::now() >= self.search_end()
            || self.group.failed.load(Ordering::SeqCst)
            || self.opts.max_candidates.is_some_and(|m| self.group.count.load(Ordering::SeqCst) >= m)
    }

    /// A point's program: `None` when it does not replay or its size
    /// constraints fail (nothing to measure), or the search is over.
    fn prepare(&self, p: &Point) -> Option<Prepared> {
        let opts = self.opts;
        if self.stopped() {
            return None;
        }
        let shape = &self.shapes[p.shape];
        let inst = shape.instantiate(&self.plan.base, &opts.def, &p.values).ok()?;
        if !std::iter::once(&opts.sizes)
            .chain(&opts.limits.valid_at)
            .all(|s| space::constraints_hold(&inst.constraints, s))
        {
            return None;
        }
        let local = local_size(shape, &p.values);
        let hash = program_hash(&inst.program, &opts.def, local)?;
        Some(Prepared { point: p.clone(), inst, local, hash })
    }

    /// Measures (or finds in the log) and logs one point, or defers it
    /// when `may_defer` and another device of the group is measuring the
    /// same program now (`split`).
    fn measure<M: Meter>(&self, m: &mut Measuring<M>, (p, may_defer): split::Take) -> split::Outcome {
        let t0 = Instant::now();
        let prepared = measure::timed(m.meter.phases(), |p| &mut p.derive_s, || self.prepare(p));
        let outcome = match prepared {
            None => split::Outcome::Done(None),
            Some(prep) if may_defer && self.group.is_measuring(&prep.hash) => split::Outcome::Deferred,
            Some(prep) => {
                let t = self.measure_prepared(m, prep);
                // Its point goes back to the others.
                if m.gone {
                    split::Outcome::Left
                } else {
                    split::Outcome::Done(t)
                }
            }
        };
        m.busy_s += t0.elapsed().as_secs_f64();
        outcome
    }

    /// Measures (or finds in the log) and logs one prepared point; its
    /// time when it validated. A failure to write the log goes to
    /// `m.failure` and stops the search.
    fn measure_prepared<M: Meter>(&self, m: &mut Measuring<M>, prep: Prepared) -> Option<f64> {
        let Measuring { meter, res, pending, failure, gone, .. } = m;
        let opts = self.opts;
        let taken = self.group.count.fetch_add(1, Ordering::SeqCst);
        if opts.max_candidates.is_some_and(|m| taken >= m) {
            return None;
        }
        let Prepared { point: p, inst, local, hash } = prep;
        let p = &p;
        let shape = &self.shapes[p.shape];
        let params = params_text(shape, &p.values);
        let derivation = inst.derivation.join(" ; ");
        let size_key = sizes_text(&opts.sizes);
        let id = (res.device.clone(), derivation.clone(), params.clone());
        let cand = Candidate { point: p, inst: &inst, local, hash: &hash, size_key: &size_key };
        let (judged, claimed) = match self.judge(meter, res, &cand)? {
            Ok(j) => j,
            Err(e) => {
                // The point is not logged: another device takes it.
                self.group.release(&hash);
                res.notes.push(format!("{}: left the search: {e}", res.device));
                *gone = true;
                return None;
            }
        };
        let Judged { status, median, message, valid_sizes, measured } = judged;
        let ok = Status::parse(&status) == Some(Status::Ok);
        // A failed run's message, for the error if the device is lost.
        let run_failed = (Status::parse(&status) == Some(Status::RunFailed)).then(|| message.clone());
        let row = Row {
            candidate: 0,
            device: res.device.clone(),
            hash: hash.clone(),
            shape: p.shape,
            status,
            median_ms: median,
            params: params.clone(),
            derivation,
            sizes: size_key,
            valid_sizes,
            message,
        };
        let recorded = self.record(&id, row);
        if claimed {
            self.group.release(&hash);
        }
        let candidate = match recorded {
            Ok(c) => c,
            Err(e) => {
                *failure = Some(e);
                self.group.failed.store(true, Ordering::SeqCst);
                return None;
            }
        };
        res.tried += 1;
        self.group.tried.fetch_add(1, Ordering::SeqCst);
        if let Some(message) = run_failed.filter(|_| measured && !meter.alive()) {
            let device = res.device.clone();
            *failure = Some(ExploreError::DeviceLost { device, candidate, message });
            self.group.failed.store(true, Ordering::SeqCst);
            return None;
        }
        let t = median.filter(|_| ok)?;
        res.valid += 1;
        self.group.valid.fetch_add(1, Ordering::SeqCst);
        if p.shape == 0 && p.values == shape.defaults() && measured {
            res.naive_ms = Some(t);
        }
        if measured {
            self.group.improve(t);
        }
        let near = choice::fastest_ms(&res.near).is_none_or(|f| choice::within(t, f));
        if (self.specialise && specialise::leading(t, &res.leaders)) || near || !measured {
            let entry = Best {
                median_ms: t,
                candidate,
                point: p.clone(),
                hash,
                program: crate::rewrite::release(&inst.program, &opts.def),
                derivation: inst.derivation.clone(),
                params,
                local,
                measured,
                evaluated: inst.program.clone(),
                constraints: inst.constraints.clone(),
                static_sizes: false,
            };
            if measured && self.specialise {
                // Whether the budget's last tenth is kept for `specialise`.
                if !self.group.specialisable.load(Ordering::SeqCst)
                    && measure::specialises(&inst.program, &opts.def, &opts.sizes, local)
                {
                    self.group.specialisable.store(true, Ordering::SeqCst);
                }
                specialise::offer(&mut res.leaders, entry.clone());
            }
            if near || !measured {
                keep_best(res, pending, entry);
            }
        }
        self.show();
        Some(t)
    }

    /// A candidate's status and time: from the log where the same program
    /// was measured at these sizes on this device, else measured now (its
    /// early stops set from the group's best so far and the budget left).
    /// Where another device of the group is measuring the same program,
    /// waits for its row. The flag: this device measured it and must
    /// `Group::release` its hash once the row is logged.
    fn judge<M: Meter>(
        &self,
        meter: &mut M,
        res: &mut DeviceResult,
        cand: &Candidate,
    ) -> Option<Result<(Judged, bool), remote::RemoteError>> {
        let Candidate { point, inst, local, hash, size_key } = *cand;
        let cached = loop {
            let mut busy = self.group.measuring.lock().ok()?;
            let found = {
                let log = self.log.lock().ok()?;
                log.cached(hash, &res.device, size_key).cloned().map(|c| {
                    let now = log.measured_now(&c);
                    (c, now)
                })
            };
            if found.is_some() {
                break found;
            }
            if busy.insert(hash.to_string()) {
                break None;
            }
            // Woken when a row is logged; the timeout only guards against
            // a missed wake-up.
            let _ = self.group.logged.wait_timeout(busy, Duration::from_millis(500));
        };
        if let Some((r, measured_now)) = cached {
            let j = Judged {
                status: r.status.clone(),
                median: r.median_ms,
                message: format!("same program as candidate {} (cached)", r.candidate),
                valid_sizes: r.valid_sizes,
                measured: measured_now,
            };
            return Some(Ok((j, false)));
        }
        res.measured += 1;
        // This device's own count (a leader's `absorb` appends the others').
        if let Some(s) = res.shares.first_mut() {
            s.measured += 1;
        }
        let left_ms = self.search_end().saturating_duration_since(Instant::now()).as_secs_f64() * 1e3;
        let o = match meter.measure(point, inst, local, (self.group.best(), left_ms)) {
            Ok(o) => o,
            Err(e) => return Some(Err(e)),
        };
        let j = Judged {
            status: o.status.as_str().to_string(),
            median: o.median_ms,
            message: o.message,
            valid_sizes: sizes_text(&o.valid_sizes),
            measured: true,
        };
        Some(Ok((j, true)))
    }

    /// The candidate number of a logged point: the earlier run's, where
    /// `--resume` found the same (device, derivation, parameters), else
    /// the number `row` gets when appended to the log.
    fn record(&self, id: &(String, String, String), row: Row) -> Result<usize, ExploreError> {
        let mut log = self.log.lock().map_err(|_| {
            ExploreError::Runtime(measure::DeviceError::Panicked(
                "internal: another device's worker panicked holding the log",
            ))
        })?;
        if let Some(c) = log.previous_candidate(id) {
            return Ok(c);
        }
        Ok(log.append(row)?.candidate)
    }

    /// The progress bar: time spent, the group's candidates, its best so far.
    fn show(&self) {
        self.bar.set_position(self.elapsed_secs());
        let best = self.group.best().map_or("-".into(), |b| format!("{b:.4} ms"));
        let (tried, valid) =
            (self.group.tried.load(Ordering::SeqCst), self.group.valid.load(Ordering::SeqCst));
        self.bar.set_message(format!("tried {tried} valid {valid} best {best}"));
    }

    fn elapsed_secs(&self) -> u64 {
        let total = self.opts.budget.as_secs();
        total.saturating_sub(self.end.saturating_duration_since(Instant::now()).as_secs())
    }

    /// When the search stops: `deadline` where a leader's kernel changes
    /// compiled for the timed sizes (the rest of the budget is
    /// `specialise`'s), else the end of the budget.
    fn search_end(&self) -> Instant {
        search_end(
            self.deadline,
            self.end,
            self.specialise && self.group.specialisable.load(Ordering::SeqCst),
        )
    }
}

/// A helper's part joined into the leader's result: counts added, the
/// faster best kept, logged times to confirm pooled.
fn absorb(res: &mut DeviceResult, pending: &mut Vec<Best>, part: Part) {
    let Part { res: r, pending: p } = part;
    res.tried += r.tried;
    res.valid += r.valid;
    res.measured += r.measured;
    res.naive_ms = res.naive_ms.or(r.naive_ms);
    res.notes.extend(r.notes);
    res.shares.extend(r.shares);
    for b in r.near {
        choice::offer(&mut res.near, b);
    }
    for b in r.leaders {
        specialise::offer(&mut res.leaders, b);
    }
    pending.extend(p);
}

/// The smallest length per size a candidate is validated at. Stencils
/// validate on smaller grids: a few hundred points per dimension hold every
/// boundary case, and the interpreter's gold of a million points took most
/// of a short budget. Other programs: about `VALIDATION_POINTS` points in
/// all (1001 for one size), the sizes requested below the floor (a batch of
/// 16) counted at their value: the interpreter's gold of a batch of 16
/// products at 101 cubed took 15 s of a 30 s budget.
fn validation_floor(stencil: bool, sizes: &Sizes) -> i64 {
    match (stencil, sizes.len()) {
        (true, n) if n >= 3 => 41,
        (true, _) => 257,
        (false, 0 | 1) => 1001,
        (false, _) => {
            let mut wants: Vec<i64> = sizes.values().copied().collect();
            wants.sort_unstable();
            let mut points = VALIDATION_POINTS as f64;
            let mut floor = 1.0;
            for (i, &w) in wants.iter().enumerate() {
                // The floor if this size and the larger ones share what is left.
                floor = points.powf(1.0 / (wants.len() - i) as f64);
                if (w as f64) >= floor {
                    break;
                }
                points /= w.max(1) as f64;
            }
            // Odd: the scan upwards from it meets no power of two first.
            let f = (floor.ceil() as i64).max(measure::MIN_VALIDATION_FLOOR);
            f | 1
        }
    }
}

/// Points of a non-stencil program's validation sizes (`validation_floor`):
/// 101 cubed, a million.
const VALIDATION_POINTS: i64 = 101 * 101 * 101;

/// Runs shorter than this are always repeated, whatever the budget.
const MIN_ONCE_OVER_MS: f64 = 20.0;

/// A candidate within the tie band of the fastest so far: one of the
/// near-fastest (`choice::offer`), where this run measured it; else one of
/// the logged times to measure again before one is written (`confirm`),
/// the fastest `MAX_RETIMED` kept.
fn keep_best(res: &mut DeviceResult, pending: &mut Vec<Best>, entry: Best) {
    if entry.measured {
        choice::offer(&mut res.near, entry);
        return;
    }
    pending.push(entry);
    if pending.len() > 2 * MAX_RETIMED {
        pending.sort_by(|a, b| a.median_ms.total_cmp(&b.median_ms));
        pending.truncate(MAX_RETIMED);
    }
}

/// Logged candidates measured again at most, per device, before the best
/// is written (`confirm`).
const MAX_RETIMED: usize = 20;

/// Measures again the fastest candidates whose times came from an earlier
/// run's log (`--resume`), fastest first, while one of them would beat the
/// best measured in this run: a row of the log is a claim (it may be
/// stale, from another machine's load, or edited), not a measurement.
fn confirm(bench: &mut Bench, res: &mut DeviceResult, mut pending: Vec<Best>) {
    pending.sort_by(|a, b| a.median_ms.total_cmp(&b.median_ms));
    pending.truncate(MAX_RETIMED);
    for mut b in pending {
        // Also those within the tie band: `choice::settle` picks among them.
        if choice::fastest_ms(&res.near).is_some_and(|f| !choice::within(b.median_ms, f)) {
            break;
        }
        bench.cutoff_ms = None;
        // Past the deadline: enough time for one candidate's timed runs.
        bench.left_ms = 20_000.0;
        let o = bench.evaluate(&b.evaluated, &b.constraints, b.local);
        match (o.status, o.median_ms) {
            (Status::Ok, Some(t)) if t.is_finite() && t > 0.0 => {
                b.median_ms = t;
                b.measured = true;
                choice::offer(&mut res.near, b);
            }
            (status, _) => res.notes.push(format!(
                "{}: candidate {} of the earlier log ({:.4} ms there) did not hold up when measured again: {} {}",
                res.device,
                b.candidate,
                b.median_ms,
                status.as_str(),
                o.message
            )),
        }
    }
}

/// A device handed to its worker thread.
struct SendDevice(DeviceInfo);

// SAFETY: a `cl_device_id` is an opaque handle that the OpenCL API accepts
// from any thread (every OpenCL call but `clSetKernelArg` on one kernel is
// thread-safe, OpenCL 1.2 Appendix A.2); the rest of `DeviceInfo` is owned
// data.
unsafe impl Send for SendDevice {}

/// `64` for a 1D local size, `32,4` for a 2D one (trailing 1s dropped).
pub fn local_text(l: &[i64; 3]) -> String {
    let n = l.iter().rposition(|&x| x != 1).map_or(1, |i| i + 1);
    l[..n].iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",")
}

/// When the search stops (`Worker::search_end`).
fn search_end(deadline: Instant, end: Instant, reserved: bool) -> Instant {
    if reserved {
        deadline
    } else {
        end
    }
}

/// The search's deadline, the end of the budget, and whether the
/// leaders are measured again compiled for the timed sizes in between
/// (`specialise`: not in a shard, where `--merge` chooses).
fn deadlines(opts: &ExploreOptions, unsharded: bool) -> (Instant, Instant, bool) {
    // A budget beyond what an `Instant` holds is no deadline at all.
    let after = |d: Duration| {
        Instant::now()
            .checked_add(d)
            .unwrap_or_else(|| Instant::now() + Duration::from_secs(100 * 365 * 24 * 3600))
    };
    let end = after(opts.budget);
    let specialising = opts.specialise && unsharded;
    let deadline = if specialising { after(opts.budget.mul_f64(1.0 - specialise::RESERVE)) } else { end };
    (deadline, end, specialising)
}

/// The program a search ran on, where `prepare_search` changed the
/// user's (products joined, second stages added, arrays recomputed): the
/// derivation replays on it, not on the user's file.
fn searched_program(original: &Program, prepared: &Program) -> Option<Program> {
    let print = crate::parse::print_program;
    (print(original) != print(prepared)).then(|| prepared.clone())
}

/// Writes `best.lift` and `best.derivation` (the steps for `lift rewrite
/// --apply` on the original file, or on `search.lift`, also written, where
/// the search ran on a prepared program: `searched`) into `dir`.
fn write_best(
    dir: &Path,
    opts: &ExploreOptions,
    b: &Best,
    device: &str,
    searched: Option<&Program>,
) -> Result<Vec<PathBuf>, ExploreError> {
    let (def, then) = (&opts.def, &opts.then);
    let io = |p: &Path, source| ExploreError::Io { path: p.display().to_string(), source };
    crate::outfile::create_dir(dir).map_err(|e| io(dir, e))?;
    let mut files = Vec::new();
    if let Some(p) = searched {
        let path = dir.join("search.lift");
        let text = format!(
            "// The program `lift explore` searched for def {def}, prepared from the user's: best.derivation replays on it.\n{}",
            crate::parse::print_program(p)
        );
        crate::outfile::replace(&path, text.as_bytes()).map_err(|e| io(&path, e))?;
        files.push(path);
    }
    let lift = dir.join("best.lift");
    let mut text = format!(
        "// Found by `lift explore` on {device}: candidate {} ({}), median {:.4} ms.\n",
        b.candidate, b.hash, b.median_ms
    );
    if let Some(l) = b.local {
        let l = local_text(&l);
        text.push_str(&format!("// Launch it with local size {l} (`lift compile --local {l}`).\n"));
    }
    if b.static_sizes {
        let sizes = opts.sizes.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",");
        text.push_str(&format!(
            "{} (`lift compile --size {sizes}`); compiled for every size it took longer.\n",
            replay::STATIC_SIZES_HEADER
        ));
    }
    if !then.is_empty() {
        text.push_str(&format!(
            "// Its output is followed by the first of {} whose size constraints hold for it and that leaves the def's number of results.\n",
            then.join(", ")
        ));
    }
    text.push_str(&crate::parse::print_program(&b.program));
    crate::outfile::replace(&lift, text.as_bytes()).map_err(|e| io(&lift, e))?;
    let der = dir.join("best.derivation");
    let mut text = format!("# def {def}, found by `lift explore` on {device}; {}\n", b.params);
    if searched.is_some() {
        text.push_str(&format!(
            "# replays on search.lift beside it: `lift rewrite search.lift --def {def} --apply best.derivation`\n"
        ));
    }
    if let Some(l) = b.local {
        text.push_str(&format!("# local size {}\n", local_text(&l)));
    }
    if b.static_sizes {
        text.push_str("# compiled for the timed sizes (`lift compile --size`)\n");
    }
    for l in &b.derivation {
        text.push_str(l);
        text.push('\n');
    }
    crate::outfile::replace(&der, text.as_bytes()).map_err(|e| io(&der, e))?;
    files.extend([lift, der]);
    Ok(files)
}

/// The program and options a search runs on, and the def its candidates
/// are validated against: a product written without `join` in the joined
/// form the tiled shapes match (`flatten`: the same values in the same
/// order), a full reduction without `--then` with second stages derived
/// from its own `reduce` (`finish`), and with them the reduction shapes;
/// a product with more than a map after its reduction split into the
/// product, searched, and a stage applying the rest (`epilogue`), and
/// reductions down columns likewise into the map of reductions and a
/// stage adding the partials (`columns`), the user's def the gold.
/// The plan `explore` searches for `opts.def`: the program as the search
/// rewrites it first (lets recomputed, an epilogue or a column reduction
/// split off, batches flattened, a second stage derived where no `--then`
/// is given), planned; with the options it searches with.
pub fn searched_plan(
    program: &Program,
    opts: &ExploreOptions,
) -> Result<(Plan, ExploreOptions), ExploreError> {
    let (program, opts, _) = prepare_search(program, opts);
    let plan = plan(&program, &opts.def, &opts.sizes, &opts.limits)?;
    Ok((plan, opts))
}

fn prepare_search(program: &Program, opts: &ExploreOptions) -> (Program, ExploreOptions, measure::Gold) {
    let mut gold = measure::Gold { def: opts.def.clone(), always_then: false };
    let mut opts = opts.clone();
    let mut program = program.clone();
    if let Some((p, name)) = copy::copied(&program, &opts.def) {
        // A def of views alone: its result copied by a kernel.
        program = p;
        opts.def = name;
    }
    if let Some((p, name)) = recompute::recomputed(&program, &opts.def) {
        // Arrays bound by `let` recomputed where read (the gold stays the
        // user's def).
        program = p;
        opts.def = name;
    }
    if opts.then.is_empty() {
        if let Some(s) = epilogue::split(&program, &opts.def, &opts.sizes) {
            program = s.program;
            opts.def = s.product;
            opts.then = s.stages;
            gold.always_then = true;
        } else if let Some(s) = columns::split(&program, &opts.def, &opts.sizes) {
            // The partial shapes, for the map of reductions.
            program = s.program;
            opts.def = s.product;
            opts.then = s.stages;
            opts.limits.reductions = true;
            gold.always_then = true;
        } else if let Some(s) = passes::split(&program, &opts.def, &opts.sizes) {
            // The pass explored, the rest a second stage.
            program = s.program;
            opts.def = s.pass;
            opts.then = s.stages;
            gold.always_then = true;
        } else if let Some(s) = passes::nested(&program, &opts.def) {
            // The map of inner reductions explored as a matrix-vector
            // product is (no partial results), the outer one a stage.
            program = s.program;
            opts.def = s.pass;
            opts.then = s.stages;
            gold.always_then = true;
        } else if let Some((p, flat)) = flatten::flat_batch(&program, &opts.def) {
            // The same results in the same order: no stage of its own.
            program = p;
            opts.def = flat;
        }
    }
    let program = flatten::joined_products(&program, &opts.def, &opts.sizes).unwrap_or(program);
    if opts.then.is_empty() {
        if let Some(d) = finish::derive(&program, &opts.def) {
            opts.then = d.defs.clone();
            opts.limits.reductions = true;
            return (d.program, opts, gold);
        }
    }
    (program, opts, gold)
}

/// The devices grouped by model, in the order given: devices of one name,
/// work-group limit and compute units share a search (`split`). `keys[i]`
/// stands for device `i`.
fn group_by_model<K: PartialEq>(keys: &[K]) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        match groups.iter_mut().find(|g| keys[g[0]] == *k) {
            Some(g) => g.push(i),
            None => groups.push(vec![i]),
        }
    }
    groups
}

/// Runs the search on every device until the budget is spent or the tuner
/// has nothing left to try: one search per device model, its candidates
/// split among the identical devices of the model (one thread each).
pub fn explore(
    program: &Program,
    devices: &[DeviceInfo],
    opts: &ExploreOptions,
) -> Result<Report, ExploreError> {
    explore_with(program, devices, opts, None, None)
}

/// `explore` for shard `shard` of a search split over machines
/// (`--shard i/n`): only its shapes (`shard::Shard::owns`), into its own
/// log in `--out` (`explore-shard-I-of-N.csv`), and no best written: the
/// merge step (`shard::merge`) picks one from all the shards' logs.
pub fn explore_shard(
    program: &Program,
    devices: &[DeviceInfo],
    opts: &ExploreOptions,
    shard: shard::Shard,
) -> Result<Report, ExploreError> {
    explore_with(program, devices, opts, Some(shard), None)
}

/// `explore` (or `explore_shard` for `Some(shard)`) with every device of
/// a group but the leader's measured by a worker process of its own,
/// started by `worker` (`remote`: NVIDIA's driver builds slower when two
/// threads of one process build at once).
pub fn explore_in_processes(
    program: &Program,
    devices: &[DeviceInfo],
    opts: &ExploreOptions,
    shard: Option<shard::Shard>,
    worker: &remote::WorkerCommand,
) -> Result<Report, ExploreError> {
    explore_with(program, devices, opts, shard, Some(worker))
}

fn explore_with(
    program: &Program,
    devices: &[DeviceInfo],
    opts: &ExploreOptions,
    shard: Option<shard::Shard>,
    worker: Option<&remote::WorkerCommand>,
) -> Result<Report, ExploreError> {
    let planning = Instant::now();
    let original = program;
    let (program, opts, gold) = prepare_search(program, opts);
    let searched = searched_program(original, &program);
    let (program, opts, gold) = (&program, &opts, &gold);
    let plan = plan(program, &opts.def, &opts.sizes, &opts.limits)?;
    crate::outfile::create_dir(&opts.out)
        .map_err(|source| ExploreError::Io { path: opts.out.display().to_string(), source })?;
    let csv = opts.out.join(shard.map_or("explore.csv".to_string(), |s| s.log_name()));
    // One explorer per log, as one run per results file: the lock is
    // taken before the log is opened and held until the best is written.
    let _lock = crate::outfile::lock_beside(&csv)?;
    let log = Log::open(&csv, opts.resume)?;
    let mut notes = log.notes.clone();
    let log = Mutex::new(log);
    let (deadline, end, specialising) = deadlines(opts, shard.is_none());
    let multi = indicatif::MultiProgress::new();
    if !opts.progress {
        multi.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let style = indicatif::ProgressStyle::with_template("{prefix:<24} {bar:20} {pos}/{len}s {msg}")
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    let keys: Vec<_> = devices.iter().map(|d| (d.name.clone(), d.max_work_group, d.compute_units)).collect();
    // Per model: its devices, the shapes with their tuner slots, the
    // tuner's spaces, the first phase's order (a shard's shapes only) and
    // what its devices share.
    let models: Vec<_> = group_by_model(&keys)
        .into_iter()
        .map(|g| {
            let d = &devices[g[0]];
            let (shapes, spaces, mut order) =
                spaces_for(&plan, &opts.sizes, d.max_work_group, d.compute_units, d.is_gpu());
            if let Some(s) = shard {
                order.retain(|&i| s.owns(&plan.shapes[i]));
            }
            (g, shapes, spaces, order, Group::new())
        })
        .collect();
    let owned: Vec<Vec<usize>> = models.iter().map(|m| m.3.clone()).collect();
    let plan_s = planning.elapsed().as_secs_f64();
    let golds = measure::GoldCache::default();
    let results: Vec<Result<DeviceResult, ExploreError>> = std::thread::scope(|scope| {
        let mut leaders = Vec::new();
        for (g, shapes, spaces, order, group) in &models {
            let bar = multi.add(indicatif::ProgressBar::new(opts.budget.as_secs().max(1)));
            bar.set_style(style.clone());
            let name = devices[g[0]].name.chars().take(20).collect::<String>();
            bar.set_prefix(if g.len() > 1 { format!("{name} x{}", g.len()) } else { name });
            let w = Worker {
                plan: &plan,
                opts,
                gold,
                original: program,
                log: &log,
                deadline,
                end,
                specialise: specialising,
                unsharded: shard.is_none(),
                bar,
                group,
                shapes,
                golds: &golds,
            };
            let (to, parts) = std::sync::mpsc::channel();
            for &h in &g[1..] {
                let (w, to, dev) =
                    (Worker { bar: w.bar.clone(), ..w }, to.clone(), SendDevice(devices[h].clone()));
                scope.spawn(move || {
                    let dev = dev;
                    w.help(dev.0, worker, to)
                });
            }
            drop(to);
            let (spaces, order, helpers) = (spaces.clone(), order.clone(), g.len() - 1);
            let dev = SendDevice(devices[g[0]].clone());
            leaders.push(scope.spawn(move || {
                // Moves the whole wrapper (a closure would capture only the field).
                let dev = dev;
                w.lead(dev.0, spaces, order, helpers, parts)
            }));
        }
        leaders
            .into_iter()
            .map(|h| {
                h.join().unwrap_or(Err(ExploreError::Runtime(measure::DeviceError::Panicked(
                    "a worker thread panicked",
                ))))
            })
            .collect()
    });
    let mut out = Vec::new();
    let several = results.len() > 1;
    let log = log
        .into_inner()
        .map_err(|_| ExploreError::Runtime(measure::DeviceError::Panicked("the log's lock was poisoned")))?;
    for (r, mut owned) in results.into_iter().zip(owned) {
        let mut r = r?;
        r.timing.plan_s = plan_s;
        notes.append(&mut r.notes);
        let logged = log.shapes_logged(&r.device);
        // In plan order.
        owned.sort_unstable();
        r.untried = owned.iter().filter(|i| !logged.contains(i)).map(|&i| plan.shapes[i].label()).collect();
        // A shard's best is only a claim until the merge measures it again.
        if let (Some(b), None) = (&r.best, shard) {
            let dir = if several { opts.out.join(&r.slug) } else { opts.out.clone() };
            r.files = write_best(&dir, opts, b, &r.device, searched.as_ref())?;
        }
        out.push(r);
    }
    Ok(Report { shapes: plan.shapes.len(), csv, notes, devices: out })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::types::sizes_of as sizes;

    #[test]
    fn the_search_keeps_the_reserve_unless_a_leader_specialises() {
        let opts = ExploreOptions {
            def: "d".into(),
            sizes: Default::default(),
            budget: Duration::from_secs(100),
            seed: 1,
            out: PathBuf::new(),
            resume: false,
            limits: Default::default(),
            max_candidates: None,
            warmup: 1,
            runs: 1,
            progress: false,
            then: Vec::new(),
            reference: None,
            specialise: true,
        };
        let (deadline, end, on) = deadlines(&opts, true);
        assert!(on && end > deadline);
        // Ninety of the hundred seconds (a second's slack for the clock).
        let gap = end.duration_since(deadline).as_secs_f64();
        assert!((9.0..11.0).contains(&gap), "{gap}");
        assert_eq!(search_end(deadline, end, false), end);
        assert_eq!(search_end(deadline, end, true), deadline);
        // A shard, or `--no-specialise`: the whole budget.
        let (d, e, on) = deadlines(&opts, false);
        assert!(!on && d == e);
        let (d, e, on) = deadlines(&ExploreOptions { specialise: false, ..opts }, true);
        assert!(!on && d == e);
    }

    #[test]
    fn a_lost_device_says_what_is_kept() {
        let e = ExploreError::DeviceLost {
            device: "GPU".into(),
            candidate: 6,
            message: "CL_INVALID_COMMAND_QUEUE".into(),
        };
        assert_eq!(
            e.to_string(),
            "GPU stopped working after candidate 6 (CL_INVALID_COMMAND_QUEUE); what was logged is kept: run again with --resume to go on"
        );
    }

    #[test]
    fn on_a_gpu_coalesced_lowerings_come_first() {
        let src = "userfun mul(x: float, y: float): float { return x * y; }\n\
                   def f(a: [[float]N]M, s: [float]M) = map(\\(r, si) -> map(\\x -> mul(x, si)) $ r) $ zip(a, s)\n";
        let p = crate::parse::parse_program(&crate::ir::SourceFile::new("t.lift", src.to_string())).unwrap();
        let sz = sizes(&[("M", 8192), ("N", 4096)]);
        let plan = plan(&p, "f", &sz, &SpaceLimits::default()).unwrap();
        let share = |shapes: &[Shape], i: usize| {
            let inst = shapes[i].instantiate(&plan.base, "f", &shapes[i].defaults()).unwrap();
            let k = compile(&inst.program, "f", &CompileOptions::default()).unwrap();
            crate::codegen::coalescing::coalesced_share(&k.accesses, &sz).unwrap()
        };
        let (shapes, _, order) = spaces_for(&plan, &sz, 1024, 132, true);
        assert_eq!(order[0], 0, "the naive lowering first");
        let shares: Vec<f64> = order[1..].iter().map(|&i| share(&shapes, i)).collect();
        assert!(shares[0] == 1.0, "{shares:?}");
        // Off a GPU coalescing does not decide: the plan's order differs.
        let (_, _, cpu) = spaces_for(&plan, &sz, 1024, 132, false);
        assert_ne!(cpu, order);
        assert!(share(&shapes, cpu[1]) < 1.0);
    }

    #[test]
    fn identical_devices_share_one_search() {
        let keys = [("H100", 1024, 132), ("CPU", 4096, 16), ("H100", 1024, 132), ("H100", 1024, 114)];
        // The two identical H100s together; another model and a device of
        // the same name but other compute units each on their own.
        assert_eq!(group_by_model(&keys), vec![vec![0, 2], vec![1], vec![3]]);
        assert_eq!(group_by_model(&keys[1..2]), vec![vec![0]]);
    }

    #[test]
    fn validation_floors_keep_the_points_near_a_million() {
        let big = 1 << 12;
        assert_eq!(validation_floor(false, &sizes(&[("N", big)])), 1001);
        assert_eq!(validation_floor(false, &sizes(&[("M", big), ("N", big)])), 1017);
        assert_eq!(validation_floor(false, &sizes(&[("M", big), ("N", big), ("K", big)])), 101);
        // A batch of 16 counts at its value: the other three share the rest.
        let batch = sizes(&[("B", 16), ("M", 256), ("N", 256), ("K", 256)]);
        assert_eq!(validation_floor(false, &batch), 41);
        // Stencils as before.
        assert_eq!(validation_floor(true, &sizes(&[("H", big), ("W", big)])), 257);
        assert_eq!(validation_floor(true, &sizes(&[("X", 256), ("Y", 256), ("Z", 256)])), 41);
    }
}
