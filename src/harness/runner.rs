//! The benchmark runner: for every config, size and variant it asks the
//! registry's runner (`super::runners`) for an execution, turns it into one
//! row (validation, statistics, the host-timed twin: `RowBuilder`, the one
//! place rows are made), and carries on past failures.

use super::clock::Timing;
use super::config::{Config, Gold};
use super::data::{Arrays, HostArray, Sizes};
use super::expected::{interpreter_gold, rust_gold_scaled, ExpectedError};
use super::inputs::{check_fits, make_host_arrays};
use super::results::{ResultsError, ResultsWriter, Row, Status};
use super::runners::{Bench, Failure, Outcome, Registry};
use super::variant::Execution;
use super::variant_name::Variant;
use crate::launch::stats::summarize;
use crate::runtime::Runtime;
use crate::validate::compare_scaled;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::sync::Arc;

pub use super::runners::RunOptions;

/// The rows of a run and where they went.
#[derive(Debug)]
pub struct RunReport {
    pub csv: PathBuf,
    pub rows: Vec<Row>,
    /// Presets a benchmark does not define.
    pub notes: Vec<String>,
}

impl RunReport {
    /// Rows that did not end `ok` or `skipped`.
    pub fn failures(&self) -> usize {
        self.rows.iter().filter(|r| matches!(r.status, Status::Failed | Status::Error)).count()
    }
}

/// One benchmark at one size, with the variants to run.
struct Planned<'a> {
    cfg: &'a Config,
    preset: String,
    index: usize,
    sizes: Sizes,
    variants: Vec<Variant>,
}

/// The variants `cfg` has, in row order (`lift list`).
pub fn offered_variants(cfg: &Config) -> Vec<Variant> {
    Registry::new().offers(cfg, None)
}

fn plan<'a>(
    registry: &Registry,
    configs: &'a [Config],
    opts: &RunOptions,
    notes: &mut Vec<String>,
) -> Vec<Planned<'a>> {
    let mut out = Vec::new();
    for cfg in configs {
        for preset in &opts.sizes {
            let Some((index, sizes)) = cfg.preset(preset) else {
                notes.push(format!("{}: no size preset `{preset}`; skipped", cfg.name));
                continue;
            };
            let mut variants = registry.offers(cfg, Some(opts));
            if let Some(keep) = &opts.variants {
                variants.retain(|v| keep.contains(v));
            }
            out.push(Planned { cfg, preset: preset.clone(), index, sizes: sizes.clone(), variants });
        }
    }
    out
}

/// Where finished rows go: the results file, the terminal, the report.
struct Sink<'a> {
    writer: ResultsWriter,
    progress: &'a ProgressBar,
    rows: Vec<Row>,
    /// Whether a peer of the current benchmark and size was timed on the
    /// host: then the rows it is compared with get their host-timed twins.
    host_peer: bool,
}

impl Sink<'_> {
    fn emit(&mut self, row: Row) -> Result<(), ResultsError> {
        self.host_peer |= is_host_timed_peer(&row);
        self.writer.append(&row)?;
        let line = row_line(&row);
        if self.progress.is_hidden() {
            println!("{line}");
        } else {
            self.progress.println(line);
        }
        self.progress.inc(1);
        self.rows.push(row);
        Ok(())
    }

    fn is_done(&self, p: &Planned, v: &Variant) -> bool {
        self.writer.is_done(&p.cfg.name, &p.preset, v)
    }
}

/// Runs everything planned, appending each row to `results.csv` as it
/// finishes. Only a results file that cannot be written stops the run.
pub fn run(rt: &Runtime, configs: &[Config], opts: &RunOptions) -> Result<RunReport, ResultsError> {
    let csv = opts.report_dir.join(&opts.results_file);
    let writer = ResultsWriter::open(&csv, opts.resume)?;
    let mut notes: Vec<String> = writer.dropped.iter().cloned().collect();
    let registry = Registry::new();
    let planned = plan(&registry, configs, opts, &mut notes);
    let total: usize = planned.iter().map(|p| p.variants.len()).sum();
    let pb = ProgressBar::new(total as u64);
    pb.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} [{elapsed}] {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut sink = Sink { writer, progress: &pb, rows: Vec::new(), host_peer: false };
    for p in &planned {
        run_planned(&registry, rt, opts, p, &mut sink)?;
    }
    pb.finish_and_clear();
    Ok(RunReport { csv, rows: sink.rows, notes })
}

/// Every pending variant of one benchmark at one size.
fn run_planned(
    registry: &Registry,
    rt: &Runtime,
    opts: &RunOptions,
    p: &Planned,
    sink: &mut Sink,
) -> Result<(), ResultsError> {
    sink.host_peer = false;
    let pending: Vec<&Variant> = p.variants.iter().filter(|v| !sink.is_done(p, v)).collect();
    sink.progress.inc((p.variants.len() - pending.len()) as u64);
    if pending.is_empty() {
        return Ok(());
    }
    sink.progress.set_message(format!("{} {} inputs", p.cfg.name, p.preset));
    let fits = check_fits(p.cfg, &p.sizes, rt.info.max_alloc, rt.info.global_mem);
    let (inputs, buffers) = match fits.and_then(|()| make_host_arrays(p.cfg, &p.sizes)) {
        Ok(x) => x,
        Err(msg) => {
            for v in &pending {
                let mut row = base_row(p, v, Timing::Profiling, rt, opts);
                row.message = format!("inputs: {msg}");
                sink.emit(row)?;
            }
            return Ok(());
        }
    };
    let bench = Bench {
        cfg: p.cfg,
        preset: &p.preset,
        sizes: &p.sizes,
        rt,
        opts,
        inputs: &inputs,
        buffers: &buffers,
        progress: sink.progress,
    };
    let mut rows = RowBuilder { p, rt, opts, inputs: &inputs, rust: None, interp: None, twins: Vec::new() };
    let run = |v: &Variant| match registry.runner_for(v) {
        Some(r) => r.run(&bench, v),
        None => vec![Outcome::new(v.clone(), Err(Failure::error(format!("no runner runs `{v}`"))))],
    };
    let reference_gold = reference_first(&mut rows, &pending, sink, &run)?;
    for v in pending.iter().filter(|v| ***v != Variant::Reference) {
        sink.progress.set_message(format!("{} {} {v}", p.cfg.name, p.preset));
        for outcome in run(v) {
            let row = rows.row(&outcome, &reference_gold);
            sink.emit(row)?;
        }
    }
    if sink.host_peer {
        for (parent, twin) in std::mem::take(&mut rows.twins) {
            if pending.contains(&&parent) && !sink.is_done(p, &parent.twin()) {
                sink.progress.inc_length(1);
                sink.emit(twin)?;
            }
        }
    }
    Ok(())
}

/// Runs the reference first: its validated output is the gold of the other
/// rows at sizes beyond the interpreter's reach, so it also runs
/// (unrecorded) when resuming needs it. Returns that gold, or why there is
/// none.
fn reference_first(
    rows: &mut RowBuilder,
    pending: &[&Variant],
    sink: &mut Sink,
    run: &dyn Fn(&Variant) -> Vec<Outcome>,
) -> Result<Result<HostArray, NoGold>, ResultsError> {
    let p = rows.p;
    let recorded = pending.contains(&&Variant::Reference);
    if p.cfg.reference.is_none() {
        return Ok(Err(NoGold::NoReference));
    }
    sink.progress.set_message(format!("{} {} reference", p.cfg.name, p.preset));
    let mut gold = Err(NoGold::NoReferenceRow);
    for outcome in run(&Variant::Reference) {
        let row = rows.row(&outcome, &Err(NoGold::IsReference));
        gold = match outcome.result {
            Ok(exec) if row.status == Status::Ok => Ok(exec.output),
            Ok(_) => Err(NoGold::ReferenceFailed { status: row.status, message: row.message.clone() }),
            Err(f) => Err(NoGold::ReferenceDidNotRun(f.message().to_string())),
        };
        if recorded {
            sink.emit(row)?;
        }
    }
    Ok(gold)
}

/// Why a row has no gold result to be checked against (its message says
/// `no gold result: ` and this).
#[derive(Clone, Debug, thiserror::Error)]
enum NoGold {
    #[error("this benchmark has no reference")]
    NoReference,
    #[error("the reference gave no row")]
    NoReferenceRow,
    /// The reference's own row, checked against the Rust or interpreter gold.
    #[error("this is the reference")]
    IsReference,
    #[error("the reference is {status}: {message}")]
    ReferenceFailed { status: Status, message: String },
    #[error("the reference did not run: {0}")]
    ReferenceDidNotRun(String),
    /// Shared: a size computes its Rust or interpreter gold once, for every row.
    #[error(transparent)]
    Expected(Arc<ExpectedError>),
}

/// A validated peer row timed on the host.
fn is_host_timed_peer(row: &Row) -> bool {
    row.variant.is_peer() && row.timing == Timing::Host.as_str() && row.status == Status::Ok
}

/// Makes every row of one benchmark at one size from its runners'
/// outcomes: validates executions (computing each gold once), fills times,
/// rates and build facts, and keeps the host-timed twins.
struct RowBuilder<'a> {
    p: &'a Planned<'a>,
    rt: &'a Runtime,
    opts: &'a RunOptions,
    inputs: &'a Arrays,
    /// The Rust gold and its error scale, computed once per size.
    rust: Option<Result<(HostArray, Option<HostArray>), NoGold>>,
    interp: Option<Result<HostArray, NoGold>>,
    /// The host-timed twins of the rows made so far, with the variant each
    /// twins (the same runs timed on the host as a host-timed peer is:
    /// CLBlast, Halide's CPU build), written only where such a peer ran
    /// beside them (`super::clock`).
    twins: Vec<(Variant, Row)>,
}

impl RowBuilder<'_> {
    /// The row of one outcome. `reference_gold`: the reference's output,
    /// or why there is none.
    fn row(&mut self, o: &Outcome, reference_gold: &Result<HostArray, NoGold>) -> Row {
        let mut row = match &o.result {
            Ok(exec) => self.validated(&o.variant, exec, reference_gold),
            Err(Failure::Skipped { timing, message }) => {
                let mut row = base_row(self.p, &o.variant, *timing, self.rt, self.opts);
                row.status = Status::Skipped;
                row.message = message.clone();
                row
            }
            Err(Failure::Error { timing, message }) => {
                let mut row = base_row(self.p, &o.variant, *timing, self.rt, self.opts);
                row.message = message.clone();
                row
            }
        };
        if let Some(note) = &o.note_before {
            row.message = join_notes(note, &row.message);
        }
        row
    }

    /// Validates and fills a row: checked against the gold of its output
    /// (`None`: nothing to check against, recorded as ok with a note; a gold
    /// that failed makes the row an error).
    fn validated(
        &mut self,
        variant: &Variant,
        exec: &Execution,
        reference_gold: &Result<HostArray, NoGold>,
    ) -> Row {
        let gold = match variant {
            Variant::Reference => self.reference_gold(),
            _ => Some(self.gold_for(&exec.output_name, reference_gold)),
        };
        let mut row = base_row(self.p, variant, exec.timing, self.rt, self.opts);
        let v = &self.p.cfg.validation;
        match gold {
            None => {
                row.status = Status::Ok;
                row.message = "not validated: no gold result at this size".into();
            }
            Some(Err(msg)) => {
                row.status = Status::Error;
                row.message = format!("no gold result: {msg}");
            }
            Some(Ok(g)) => {
                let c = compare_scaled(&exec.output, &g, self.rust_scale(), v.rtol, v.atol);
                row.max_rel_error = Some(c.max_rel_error).filter(|x| x.is_finite());
                row.status = if c.ok { Status::Ok } else { Status::Failed };
                row.message = c.message;
            }
        }
        row.compile_ms = exec.compile_ms;
        row.kernel_lines = exec.kernel_lines;
        row.kernel_bytes = exec.kernel_bytes;
        row.build_options = exec.build_options.clone();
        self.set_times(&mut row, &exec.times_ms);
        // Another device's program is compared with this device's rows,
        // not with a peer.
        if !exec.host_ms.is_empty() && !variant.is_other_device() {
            self.keep_twin(variant, &row, &exec.host_ms);
        }
        if let Some(runs) = exec.median_of {
            row.runs = Some(runs);
            (row.min_ms, row.max_ms, row.ci_low_ms, row.ci_high_ms) = (None, None, None, None);
        }
        if let Some(note) = &exec.note {
            row.message =
                if row.message.is_empty() { note.clone() } else { format!("{}; {note}", row.message) };
        }
        row
    }

    /// `row`'s host-timed twin: the same runs, their host times.
    fn keep_twin(&mut self, variant: &Variant, row: &Row, host_ms: &[f64]) {
        let mut twin = row.clone();
        twin.variant = variant.twin();
        twin.timing = Timing::Host.as_str().into();
        self.set_times(&mut twin, host_ms);
        let note = format!(
            "`{variant}`'s runs timed on the host (from the first kernel object made to the queue's finish), \
             as the host-timed peer beside it"
        );
        twin.message = join_notes(&note, &row.message);
        self.twins.push((variant.clone(), twin));
    }

    /// The gold of the reference's own row: the Rust or interpreter gold,
    /// or the interpreter's where the program is also written at high
    /// level; `None` where there is nothing to check it against.
    fn reference_gold(&mut self) -> Option<Result<HostArray, NoGold>> {
        let cfg = self.p.cfg;
        match &cfg.validation.gold {
            Gold::Rust(name) => Some(self.rust_gold(name, &cfg.reference.as_ref()?.output)),
            Gold::Interpreter if self.interp_allowed() => Some(self.interp_gold()),
            Gold::Reference
                if self.interp_allowed() && cfg.lift.as_ref().is_some_and(|l| l.high_level.is_some()) =>
            {
                self.interp_gold().ok().map(Ok)
            }
            _ => None,
        }
    }

    /// The gold result of a non-reference row whose output is `output`.
    fn gold_for(
        &mut self,
        output: &str,
        reference_gold: &Result<HostArray, NoGold>,
    ) -> Result<HostArray, NoGold> {
        match &self.p.cfg.validation.gold {
            Gold::Rust(name) => self.rust_gold(name, output),
            Gold::Interpreter if self.interp_allowed() => self.interp_gold(),
            _ => reference_gold.clone(),
        }
    }

    fn interp_allowed(&self) -> bool {
        self.p.cfg.validation.max_interp_size.is_none_or(|m| self.p.index <= m)
    }

    fn rust_gold(&mut self, name: &str, output: &str) -> Result<HostArray, NoGold> {
        let (inputs, sizes) = (self.inputs, &self.p.sizes);
        let gold = self.rust.get_or_insert_with(|| {
            rust_gold_scaled(name, inputs, sizes, output).map_err(|e| NoGold::Expected(Arc::new(e)))
        });
        gold.as_ref().map(|(g, _)| g.clone()).map_err(Clone::clone)
    }

    /// The Rust gold's error scale, once `rust_gold` has run.
    fn rust_scale(&self) -> Option<&HostArray> {
        match (&self.p.cfg.validation.gold, &self.rust) {
            (Gold::Rust(_), Some(Ok((_, scale)))) => scale.as_ref(),
            _ => None,
        }
    }

    fn interp_gold(&mut self) -> Result<HostArray, NoGold> {
        let (cfg, inputs, sizes) = (self.p.cfg, self.inputs, &self.p.sizes);
        let gold = || interpreter_gold(cfg, inputs, sizes).map_err(|e| NoGold::Expected(Arc::new(e)));
        self.interp.get_or_insert_with(gold).clone()
    }

    /// The row's times and the rates derived from their median.
    fn set_times(&self, row: &mut Row, times_ms: &[f64]) {
        let Some(s) = summarize(times_ms) else { return };
        row.median_ms = Some(s.median);
        row.min_ms = Some(s.min);
        row.max_ms = Some(s.max);
        row.ci_low_ms = Some(s.ci_low);
        row.ci_high_ms = Some(s.ci_high);
        row.runs = Some(s.runs);
        let secs = s.median / 1e3;
        let cfg = self.p.cfg;
        let metric = |e: &Option<crate::arith::ArithExpr>| {
            e.as_ref().and_then(|e| super::config::eval(e, &self.p.sizes).ok()).map(|x| x as f64 / secs / 1e9)
        };
        if secs > 0.0 {
            row.gelems = metric(&cfg.elements);
            row.gbps = metric(&cfg.bytes);
            row.gflops = metric(&cfg.flops);
            if let Some(r) = &self.opts.roofline {
                row.frac_bandwidth = row.gbps.map(|g| g / r.bandwidth_gbps);
                row.frac_flops = row.gflops.map(|g| g / r.gflops);
            }
        }
    }
}

/// A row with what every row says (who, where, when) and no result yet:
/// `error` until it is filled in.
fn base_row(p: &Planned, variant: &Variant, timing: Timing, rt: &Runtime, opts: &RunOptions) -> Row {
    Row {
        sizes: super::results::sizes_cell(&p.sizes),
        timing: timing.as_str().into(),
        device: rt.info.name.clone(),
        driver: rt.info.driver.clone(),
        opencl_version: rt.info.opencl_version.clone(),
        git_commit: opts.git_commit.clone(),
        date: super::env::now_utc(),
        ..Row::new(&p.cfg.name, &p.preset, variant.clone())
    }
}

/// `note`, then `rest` where there is one.
fn join_notes(note: &str, rest: &str) -> String {
    if rest.is_empty() {
        note.to_string()
    } else {
        format!("{note}; {rest}")
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// The line printed as each row finishes.
pub fn row_line(r: &Row) -> String {
    let t = r.median_ms.map_or("-".to_string(), |m| format!("{m:.4} ms"));
    let msg = if r.message.is_empty() { String::new() } else { format!("  {}", first_line(&r.message)) };
    format!("{:<12} {:<6} {:<11} {:<7} {:>14}{msg}", r.benchmark, r.size, r.variant, r.status, t)
}

/// The table that closes a run: one line per row with the speedup over the
/// reference of the same benchmark and size.
pub fn summary_table(rows: &[Row]) -> String {
    let mut out = format!(
        "{:<12} {:<6} {:<11} {:<7} {:>12} {:>9} {:>9} {:>10}\n",
        "benchmark", "size", "variant", "status", "median ms", "speedup", "GB/s", "max rel err"
    );
    for r in rows {
        let reference = rows
            .iter()
            .find(|x| {
                x.benchmark == r.benchmark
                    && x.size == r.size
                    && x.variant == Variant::Reference
                    && x.status == Status::Ok
            })
            .and_then(|x| x.median_ms);
        let speedup = match (reference, r.median_ms, r.status) {
            (Some(a), Some(b), Status::Ok) if b > 0.0 => format!("{:.2}x", a / b),
            _ => "-".into(),
        };
        let f = |x: Option<f64>, p: usize| x.map_or("-".to_string(), |v| format!("{v:.p$}"));
        out.push_str(&format!(
            "{:<12} {:<6} {:<11} {:<7} {:>12} {:>9} {:>9} {:>10}\n",
            r.benchmark,
            r.size,
            r.variant,
            r.status,
            f(r.median_ms, 4),
            speedup,
            f(r.gbps, 1),
            r.max_rel_error.map_or("-".to_string(), |v| format!("{v:.1e}")),
        ));
    }
    out
}
