//! The generality suite (`lift generality`): programs the project was not
//! written for, explored as a new user would (the def, its sizes and a
//! time budget, nothing else), beside PyTorch on the same device.
//!
//! For each program of `benchmarks/generality/suite.yaml` it runs
//! `explore::explore` (every candidate validated against the interpreter
//! at sizes that are not powers of two before it is timed; full
//! reductions get their derived second stages), keeps the search's log
//! and best program under `<out>/generality/<name>/`, and appends one row
//! to `<out>/results-generality.csv` as soon as the program is done, so a
//! failure later loses nothing. Each row says how far the best is from
//! the device's limits (the bytes it must move against a copy measured in
//! the same run, and the FP32 rate where the manifest gives its flops) and
//! its speedup over PyTorch, timed on the device clock on both sides
//! (OpenCL profiling events; CUDA events around the PyTorch call).

pub mod isolate;
pub mod manifest;
pub mod peer;
pub mod ported;
pub mod row;

use crate::explore::{self, ExploreOptions};
use crate::ir::Program;
use crate::runtime::DeviceInfo;
use manifest::Entry;
use peer::PeerTime;
pub use row::{Outcome, Row};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The suite's results file in a device's report folder.
pub const RESULTS: &str = "results-generality.csv";

/// What a run of the suite does.
#[derive(Clone, Debug)]
pub struct Options {
    /// The repository root (the peer script).
    pub root: PathBuf,
    /// The suite's folder: its `suite.yaml` and programs.
    pub suite: PathBuf,
    /// The device's report folder (`reports/<slug>/`).
    pub out_dir: PathBuf,
    /// The search's budget per program.
    pub budget: Duration,
    /// Only these programs (all when empty).
    pub only: Vec<String>,
    /// Keep the rows already in the results file and run the others.
    pub resume: bool,
    /// The Python that runs the PyTorch peer; `None`: no peer.
    pub python: Option<PathBuf>,
    /// Timed runs of the peer.
    pub peer_runs: usize,
    /// The commit and date stamped on every row.
    pub commit: String,
    pub date: String,
    pub progress: bool,
    /// Measure the programs another device's search found
    /// (`DIR/<name>/best.lift`) instead of searching (`ported`).
    pub ported_from: Option<PathBuf>,
    /// Search each program in a child process (`isolate`); `None`: in
    /// this one.
    pub isolation: Option<isolate::Isolation>,
}

/// Why the suite could not run at all (one program's failure is a row).
#[derive(Debug, thiserror::Error)]
pub enum GeneralityError {
    #[error(transparent)]
    Manifest(#[from] manifest::ManifestError),
    #[error("{}: {problem}", path.display())]
    Results { path: std::path::PathBuf, problem: row::RowsError },
    #[error("measuring the device's limits: {0}")]
    Roofline(#[from] super::roofline::RooflineError),
    /// Another run holds the folder (its `results-generality.csv.lock`).
    #[error(transparent)]
    Locked(#[from] crate::outfile::LockError),
    /// The child process of an isolated run could not report.
    #[error("the search's child process: {0}")]
    Child(#[from] isolate::ChildError),
    /// A child is started for one program (`--only NAME`).
    #[error("a child process searches one program, and --only names {got}")]
    ChildPrograms { got: usize },
    /// The path of this executable, which the children run, is unknown.
    #[error("this executable's path (to start each program's search in a child process): {0}")]
    Exe(std::io::Error),
}

/// The device's limits, measured once per run.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub copy_gbps: f64,
    pub gflops: f64,
    /// The bytes the large copy read (and wrote).
    pub copy_bytes: u64,
}

/// Runs the suite on one device; returns the rows of this run (those kept
/// by `--resume` are not repeated).
pub fn run(opts: &Options, device: &DeviceInfo) -> Result<Vec<Row>, GeneralityError> {
    let entries = manifest::load(&opts.suite, &opts.only)?;
    let path = results_path_for(opts);
    let mut writer = row::Writer::open(&path, opts.resume, &opts.commit)?;
    let todo: Vec<&Entry> = entries.iter().filter(|e| !writer.has(&e.name, &device.name)).collect();
    let gpu = device.is_gpu();
    let limits = measure_limits(device)?;
    let peer = match &opts.python {
        Some(py) => {
            let jobs: Vec<_> = todo.iter().map(|e| (e.name.clone(), e.sizes(gpu).clone())).collect();
            peer::run(py, &opts.root, &jobs, opts.peer_runs)
        }
        None => BTreeMap::new(),
    };
    let bar = progress_bar(opts.progress, todo.len());
    let mut rows = Vec::new();
    // The program during whose search the device stopped working: a GPU
    // kernel fault is sticky to the process, so the later programs are not
    // run (their rows say why) rather than each failing to make a context.
    let mut lost: Option<String> = None;
    for e in todo {
        bar.set_message(e.name.clone());
        let peer_time = peer.get(&e.name).cloned().unwrap_or(PeerTime::Missing("no peer (--no-peer)".into()));
        let r = match &lost {
            Some(during) => Row::new(e, device, e.sizes(device.is_gpu()), opts, peer_time).failed(format!(
                "not run: the device stopped working while exploring `{during}` (run again to go on)"
            )),
            None => match (&opts.isolation, &opts.ported_from) {
                (Some(iso), None) => {
                    let r = Row::new(e, device, e.sizes(gpu), opts, peer_time);
                    let r = isolate::search_in_child(iso, opts, e).into_row(r);
                    match super::variant::load_program_for_row(&e.file) {
                        Ok((_, program)) => with_limits(r, (device, e), &program, e.sizes(gpu), limits),
                        Err(_) => r,
                    }
                }
                _ => {
                    let (r, device_lost) = one(opts, device, e, limits, peer_time);
                    if device_lost {
                        lost = Some(e.name.clone());
                    }
                    r
                }
            },
        };
        writer.append(&r)?;
        bar.inc(1);
        rows.push(r);
    }
    bar.finish_and_clear();
    Ok(rows)
}

fn progress_bar(show: bool, n: usize) -> indicatif::ProgressBar {
    if !show {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(n as u64);
    let style =
        indicatif::ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} exploring {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style);
    bar
}

fn measure_limits(device: &DeviceInfo) -> Result<Limits, GeneralityError> {
    let rt = crate::runtime::Runtime::new(device.clone()).map_err(super::roofline::RooflineError::from)?;
    let roof = super::roofline::measure(&rt, "")?;
    Ok(Limits { copy_gbps: roof.bandwidth_gbps, gflops: roof.gflops, copy_bytes: roof.copy_bytes })
}

/// Explores one program and makes its row, and whether the device stopped
/// working during its search; every failure is the row's status and
/// message.
fn one(opts: &Options, device: &DeviceInfo, e: &Entry, limits: Limits, peer: PeerTime) -> (Row, bool) {
    let mut lost = false;
    let r = explore_one(opts, device, e, limits, peer, &mut lost);
    (r, lost)
}

fn explore_one(
    opts: &Options,
    device: &DeviceInfo,
    e: &Entry,
    limits: Limits,
    peer: PeerTime,
    lost: &mut bool,
) -> Row {
    let sizes = e.sizes(device.is_gpu()).clone();
    let r = Row::new(e, device, &sizes, opts, peer);
    let (_, program) = match super::variant::load_program_for_row(&e.file) {
        Ok(p) => p,
        Err(m) => return r.failed(m.to_string()),
    };
    let r = match &opts.ported_from {
        Some(from) => ported::one(r, e, &program, device, from),
        None => search(opts, (device, e), &program, r, lost),
    };
    with_limits(r, (device, e), &program, &sizes, limits)
}

/// `r` with the search's columns: `e`'s def of `program` explored on
/// `device`, its log and best program under `<out>/generality/<name>/`.
fn search(
    opts: &Options,
    (device, e): (&DeviceInfo, &Entry),
    program: &Program,
    mut r: Row,
    lost: &mut bool,
) -> Row {
    // The search makes `<name>/` itself; the folder above it is ours.
    let searches = opts.out_dir.join("generality");
    if let Err(err) = crate::outfile::create_dir(&searches) {
        return r.failed(format!("{}: {err}", searches.display()));
    }
    let xo = explore_options(opts, e, e.sizes(device.is_gpu()));
    let report = match explore::explore(program, std::slice::from_ref(device), &xo) {
        Ok(rep) => rep,
        Err(err) => {
            *lost = matches!(err, explore::ExploreError::DeviceLost { .. });
            return r.failed(err.to_string());
        }
    };
    let Some(d) = report.devices.into_iter().next() else {
        return r.failed("the search returned no device".into());
    };
    r.tried = d.tried;
    r.valid = d.valid;
    r.naive_ms = d.naive_ms;
    let Some(best) = d.best else {
        return r.failed(format!("none of {} candidates validated", d.tried));
    };
    r.set_best(best.median_ms, best.candidate, &best.params);
    r
}

/// The child of an isolated run (`isolate`): searches the one program of
/// `opts.only` and writes what the search left to `result`.
pub fn run_child(opts: &Options, device: &DeviceInfo, result: &Path) -> Result<(), GeneralityError> {
    let entries = manifest::load(&opts.suite, &opts.only)?;
    let [e] = entries.as_slice() else {
        return Err(GeneralityError::ChildPrograms { got: entries.len() });
    };
    let peer = PeerTime::Missing("searched in a child process".into());
    let mut lost = false;
    let mut r = Row::new(e, device, e.sizes(device.is_gpu()), opts, peer);
    // The message is the search's own (the parent's row says why there is
    // no peer time).
    r.message.clear();
    let r = match super::variant::load_program_for_row(&e.file) {
        Ok((_, program)) => search(opts, (device, e), &program, r, &mut lost),
        Err(m) => r.failed(m.to_string()),
    };
    Ok(isolate::Searched::of(&r).write(result)?)
}

/// How the suite explores `e` at `sizes`: its def, the budget, and the
/// search's log and best program under `<out>/generality/<name>/`.
fn explore_options(opts: &Options, e: &Entry, sizes: &BTreeMap<String, i64>) -> ExploreOptions {
    ExploreOptions {
        def: e.name.clone(),
        sizes: sizes.clone(),
        budget: opts.budget,
        seed: 1,
        out: opts.out_dir.join("generality").join(&e.name),
        resume: false,
        limits: Default::default(),
        max_candidates: None,
        warmup: 1,
        runs: 5,
        progress: false,
        then: Vec::new(),
        reference: None,
        // As a plain `lift explore`: the fastest measured again compiled
        // for the suite's sizes too.
        specialise: true,
    }
}

/// The row's bytes and flops against the device's limits, and its bytes
/// against a copy of as many, measured now on `device`.
fn with_limits(
    mut r: Row,
    (device, e): (&DeviceInfo, &Entry),
    program: &Program,
    sizes: &BTreeMap<String, i64>,
    limits: Limits,
) -> Row {
    if r.status != Outcome::Ok {
        return r;
    }
    match super::roofline::min_traffic(program, &e.name, sizes) {
        Ok(bytes) => {
            r.set_bytes(bytes, limits.copy_gbps);
            match own_copy_gbps(device, bytes, limits) {
                Ok(own) => r.set_own_copy(own),
                Err(m) => r.message = row::join(&r.message, &format!("no copy of its own bytes: {m}")),
            }
        }
        Err(m) => r.message = format!("no byte count: {m}"),
    }
    if let Some(f) = &e.flops {
        if let Ok(flops) = f.eval_with(&|v| sizes.get(v).copied()) {
            r.set_flops(flops as f64, limits.gflops);
        }
    }
    r
}

/// The rate of a copy of `bytes` in all (half read, half written): the
/// large copy's where `bytes` are at least as many as it moved.
fn own_copy_gbps(
    device: &DeviceInfo,
    bytes: u64,
    limits: Limits,
) -> Result<f64, super::roofline::RooflineError> {
    if !super::roofline::fewer_than_the_large_copy(bytes, limits.copy_bytes) {
        return Ok(limits.copy_gbps);
    }
    let rt = crate::runtime::Runtime::new(device.clone())?;
    super::roofline::copy_gbps_of(&rt, bytes)
}

/// The report folder's results file.
pub fn results_path(out_dir: &Path) -> PathBuf {
    out_dir.join(RESULTS)
}

/// The results file of this run: the ported programs' own beside the
/// device's search results.
pub fn results_path_for(opts: &Options) -> PathBuf {
    match opts.ported_from {
        Some(_) => opts.out_dir.join(ported::RESULTS),
        None => results_path(&opts.out_dir),
    }
}
