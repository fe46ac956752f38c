//! The benchmark runner: for every config, size and variant it builds, runs,
//! validates and records one row, and carries on past failures.

use super::clblast::run_clblast;
use super::clock::HOST_TWIN;
use super::config::{Config, Gold};
use super::data::{Arrays, HostArray, Sizes};
use super::expected::{interpreter_gold, rust_gold_scaled};
use super::inputs::{check_fits, make_host_arrays};
use super::results::{ResultsError, ResultsWriter, Row, Status};
use super::roofline::Roofline;
use super::variant::{run_lift, run_reference, Execution};
use crate::launch::stats::summarize;
use crate::launch::RunCounts;
use crate::runtime::{ClBlast, CuBlas, Runtime};
use crate::validate::compare_scaled;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;

/// What to run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Size presets, in order.
    pub sizes: Vec<String>,
    /// Variants to keep (`reference`, Lift levels, `clblast`); `None`: all.
    pub variants: Option<Vec<String>>,
    pub counts: RunCounts,
    pub resume: bool,
    /// `reports/<device-slug>/`.
    pub report_dir: PathBuf,
    /// The results file in `report_dir` (`results.csv`; other suites have their own).
    pub results_file: String,
    pub roofline: Option<Roofline>,
    pub git_commit: String,
    /// Where to look for cuBLAS and the CUDA runtime first (`--cublas-lib`).
    pub cublas_dir: Option<PathBuf>,
    /// `OCL_ICD_FILENAMES` as lift was started (`None`: unset), given to
    /// the peers it starts (see `halide::PeerTarget`).
    pub icd_filenames: Option<String>,
    /// How long to explore a benchmark whose `explored` program is not
    /// committed for this device (`--explore-budget`); `None`: never.
    pub explore_budget: Option<std::time::Duration>,
}

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

pub(super) struct Planned<'a> {
    pub(super) cfg: &'a Config,
    pub(super) preset: String,
    pub(super) index: usize,
    pub(super) sizes: Sizes,
    pub(super) variants: Vec<String>,
}

fn plan<'a>(configs: &'a [Config], opts: &RunOptions, notes: &mut Vec<String>) -> Vec<Planned<'a>> {
    let mut out = Vec::new();
    for cfg in configs {
        for preset in &opts.sizes {
            let Some((index, sizes)) = cfg.preset(preset) else {
                notes.push(format!("{}: no size preset `{preset}`; skipped", cfg.name));
                continue;
            };
            let mut variants = Vec::new();
            if cfg.reference.is_some() {
                variants.push("reference".to_string());
            }
            if cfg.lift.is_some() {
                variants.extend(cfg.variants.iter().cloned());
            }
            if cfg.explored.is_some() {
                variants.push(super::explored::variant_name(cfg).to_string());
                // Only on request: other devices' programs (performance portability).
                if opts.variants.as_ref().is_some_and(|k| k.iter().any(|v| v == "explored-other")) {
                    variants.push("explored-other".to_string());
                }
            }
            if cfg.clblast.is_some() {
                variants.push("clblast".to_string());
            }
            if cfg.cublas.is_some() {
                variants.push("cublas".to_string());
            }
            if cfg.halide.is_some() {
                variants.push("halide".to_string());
            }
            if let Some(keep) = &opts.variants {
                variants.retain(|v| keep.contains(v));
            }
            out.push(Planned { cfg, preset: preset.clone(), index, sizes: sizes.clone(), variants });
        }
    }
    out
}

/// Runs everything planned, appending each row to `results.csv` as it
/// finishes. Only a results file that cannot be written stops the run.
pub fn run(rt: &Runtime, configs: &[Config], opts: &RunOptions) -> Result<RunReport, ResultsError> {
    let csv = opts.report_dir.join(&opts.results_file);
    let mut writer = ResultsWriter::open(&csv, opts.resume)?;
    let mut notes: Vec<String> = writer.dropped.iter().cloned().collect();
    let planned = plan(configs, opts, &mut notes);
    // Loaded once, only when some benchmark has a CLBlast bar.
    let blas: Result<ClBlast, String> = if planned.iter().any(|p| p.variants.iter().any(|v| v == "clblast")) {
        ClBlast::load().map_err(String::from)
    } else {
        Err("not needed".into())
    };
    // cuBLAS only on NVIDIA devices, loaded once when some benchmark has it.
    let cublas: Result<CuBlas, String> = if !planned.iter().any(|p| p.variants.iter().any(|v| v == "cublas"))
    {
        Err("not needed".into())
    } else if !super::cublas::is_nvidia(&rt.info.vendor, &rt.info.platform_name) {
        Err(format!("cuBLAS runs on NVIDIA devices only; this is {}", rt.info.name))
    } else {
        CuBlas::load(opts.cublas_dir.as_slice()).map_err(String::from)
    };
    let total: usize = planned.iter().map(|p| p.variants.len()).sum();
    let pb = ProgressBar::new(total as u64);
    pb.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} [{elapsed}] {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut rows = Vec::new();
    for p in &planned {
        // Whether a peer of this benchmark and size was timed on the host:
        // then the rows it is compared with get their host-timed twins.
        let host_peer = std::cell::Cell::new(false);
        let mut emit = |row: Row, writer: &mut ResultsWriter| -> Result<(), ResultsError> {
            host_peer.set(host_peer.get() || is_host_timed_peer(&row));
            writer.append(&row)?;
            let line = row_line(&row);
            if pb.is_hidden() {
                println!("{line}");
            } else {
                pb.println(line);
            }
            pb.inc(1);
            rows.push(row);
            Ok(())
        };
        let pending: Vec<&String> =
            p.variants.iter().filter(|v| !writer.is_done(&p.cfg.name, &p.preset, v)).collect();
        pb.inc((p.variants.len() - pending.len()) as u64);
        if pending.is_empty() {
            continue;
        }
        pb.set_message(format!("{} {} inputs", p.cfg.name, p.preset));
        let fits = check_fits(p.cfg, &p.sizes, rt.info.max_alloc, rt.info.global_mem);
        let (inputs, buffers) = match fits.and_then(|()| make_host_arrays(p.cfg, &p.sizes)) {
            Ok(x) => x,
            Err(msg) => {
                for v in &pending {
                    emit(error_row(p, v, rt, opts, &format!("inputs: {msg}")), &mut writer)?;
                }
                continue;
            }
        };
        let mut bench = Bench {
            p,
            rt,
            opts,
            inputs: &inputs,
            buffers: &buffers,
            rust: None,
            interp: None,
            blas: &blas,
            cublas: &cublas,
            twins: Vec::new(),
            progress: &pb,
        };
        // The reference runs first: its validated output is the gold of
        // the Lift rows at sizes beyond the interpreter's reach, so it also
        // runs (unrecorded) when resuming needs it.
        let mut reference_gold: Result<HostArray, String> = Err("this benchmark has no reference".into());
        let lift_pending = pending.iter().any(|v| *v != "reference");
        if p.cfg.reference.is_some() && (pending.iter().any(|v| *v == "reference") || lift_pending) {
            pb.set_message(format!("{} {} reference", p.cfg.name, p.preset));
            let (row, out) = bench.reference();
            reference_gold = out;
            if pending.iter().any(|v| *v == "reference") {
                emit(row, &mut writer)?;
            }
        }
        for v in pending.iter().filter(|v| **v != "reference") {
            pb.set_message(format!("{} {} {v}", p.cfg.name, p.preset));
            let row = if v.as_str() == "clblast" {
                bench.clblast(&reference_gold)
            } else if v.as_str() == "halide" {
                super::halide::halide_row(&mut bench, &reference_gold)
            } else if v.as_str() == "explored" || v.as_str() == "lift-tuned" {
                super::explored::explored_row(&mut bench, &reference_gold, v)
            } else if v.as_str() == "explored-other" {
                for row in super::explored::other_rows(&mut bench, &reference_gold) {
                    emit(row, &mut writer)?;
                }
                continue;
            } else if v.as_str() == "cublas" {
                super::cublas::cublas_row(&mut bench, &reference_gold)
            } else {
                bench.lift(v, &reference_gold)
            };
            emit(row, &mut writer)?;
        }
        if host_peer.get() {
            for twin in std::mem::take(&mut bench.twins) {
                let parent = twin.variant.strip_suffix(HOST_TWIN).unwrap_or_default();
                if pending.iter().any(|v| *v == parent)
                    && !writer.is_done(&p.cfg.name, &p.preset, &twin.variant)
                {
                    pb.inc_length(1);
                    emit(twin, &mut writer)?;
                }
            }
        }
    }
    pb.finish_and_clear();
    Ok(RunReport { csv, rows, notes })
}

/// A validated peer row timed on the host.
fn is_host_timed_peer(row: &Row) -> bool {
    matches!(row.variant.as_str(), "clblast" | "halide") && row.timing == "host" && row.status == Status::Ok
}

pub(super) struct Bench<'a> {
    pub(super) p: &'a Planned<'a>,
    pub(super) rt: &'a Runtime,
    pub(super) opts: &'a RunOptions,
    pub(super) inputs: &'a Arrays,
    pub(super) buffers: &'a Arrays,
    /// The Rust gold and its error scale, computed once per size.
    rust: Option<Result<(HostArray, Option<HostArray>), String>>,
    interp: Option<Result<HostArray, String>>,
    /// CLBlast, or why it could not be loaded.
    blas: &'a Result<ClBlast, String>,
    /// cuBLAS, or why it is not used.
    pub(super) cublas: &'a Result<CuBlas, String>,
    /// The host-timed twins of the rows finished so far (the same runs timed
    /// on the host as a host-timed peer is: CLBlast, Halide's CPU build),
    /// written only where such a peer ran beside them (`super::clock`).
    twins: Vec<Row>,
    /// The run's progress bar (a search shows itself on it).
    pub(super) progress: &'a ProgressBar,
}

impl Bench<'_> {
    /// The gold result of a non-reference row whose output is `output`.
    pub(super) fn gold_for(
        &mut self,
        output: &str,
        reference_gold: &Result<HostArray, String>,
    ) -> Result<HostArray, String> {
        match &self.p.cfg.validation.gold {
            Gold::Rust(name) => self.rust_gold(name, output),
            Gold::Interpreter if self.interp_allowed() => self.interp_gold(),
            _ => reference_gold.clone(),
        }
    }

    fn interp_allowed(&self) -> bool {
        self.p.cfg.validation.max_interp_size.is_none_or(|m| self.p.index <= m)
    }

    fn rust_gold(&mut self, name: &str, output: &str) -> Result<HostArray, String> {
        let (inputs, sizes) = (self.inputs, &self.p.sizes);
        let gold = self.rust.get_or_insert_with(|| rust_gold_scaled(name, inputs, sizes, output));
        gold.as_ref().map(|(g, _)| g.clone()).map_err(Clone::clone)
    }

    /// The Rust gold's error scale, once `rust_gold` has run.
    fn rust_scale(&self) -> Option<&HostArray> {
        match (&self.p.cfg.validation.gold, &self.rust) {
            (Gold::Rust(_), Some(Ok((_, scale)))) => scale.as_ref(),
            _ => None,
        }
    }

    fn interp_gold(&mut self) -> Result<HostArray, String> {
        let (cfg, inputs, sizes) = (self.p.cfg, self.inputs, &self.p.sizes);
        self.interp.get_or_insert_with(|| interpreter_gold(cfg, inputs, sizes)).clone()
    }

    /// Runs the reference; returns its row and, when it validated (or has
    /// nothing to validate against), its output as gold for the Lift rows.
    fn reference(&mut self) -> (Row, Result<HostArray, String>) {
        let cfg = self.p.cfg;
        let Some(r) = cfg.reference.as_ref() else {
            return (
                error_row(self.p, "reference", self.rt, self.opts, "no reference"),
                Err("no reference".into()),
            );
        };
        let exec =
            match run_reference(self.rt, cfg, &self.p.sizes, self.inputs, self.buffers, self.opts.counts) {
                Ok(e) => e,
                Err(msg) => {
                    let why = format!("the reference did not run: {msg}");
                    return (error_row(self.p, "reference", self.rt, self.opts, &msg), Err(why));
                }
            };
        let gold = match &cfg.validation.gold {
            Gold::Rust(name) => Some(self.rust_gold(name, &r.output)),
            Gold::Interpreter if self.interp_allowed() => Some(self.interp_gold()),
            Gold::Reference
                if self.interp_allowed() && cfg.lift.as_ref().is_some_and(|l| l.high_level.is_some()) =>
            {
                self.interp_gold().ok().map(Ok)
            }
            _ => None,
        };
        let row = self.finish_row("reference", &exec, gold.as_ref());
        let out = if row.status == Status::Ok {
            Ok(exec.output)
        } else {
            Err(format!("the reference is {}: {}", row.status, row.message))
        };
        (row, out)
    }

    fn lift(&mut self, level: &str, reference_gold: &Result<HostArray, String>) -> Row {
        let cfg = self.p.cfg;
        let exec =
            match run_lift(self.rt, cfg, level, &self.p.sizes, self.inputs, self.buffers, self.opts.counts) {
                Ok(e) => e,
                Err(msg) => return error_row(self.p, level, self.rt, self.opts, &msg),
            };
        let output = cfg.lift.as_ref().map(|l| l.output.clone()).unwrap_or_default();
        let gold = self.gold_for(&output, reference_gold);
        self.finish_row(level, &exec, Some(&gold))
    }

    /// The CLBlast baseline: skipped (not failed) when the library is missing.
    fn clblast(&mut self, reference_gold: &Result<HostArray, String>) -> Row {
        let cfg = self.p.cfg;
        let Some(spec) = &cfg.clblast else {
            return error_row(self.p, "clblast", self.rt, self.opts, "no clblast section");
        };
        let blas = match self.blas {
            Ok(b) => b,
            Err(msg) => {
                let mut row = base_row(self.p, "clblast", self.rt, self.opts);
                row.status = Status::Skipped;
                row.timing = "host".into();
                row.message = msg.clone();
                return row;
            }
        };
        let exec = match run_clblast(
            self.rt,
            blas,
            cfg,
            spec,
            &self.p.sizes,
            self.inputs,
            self.buffers,
            self.opts.counts,
        ) {
            Ok(e) => e,
            Err(msg) => return error_row(self.p, "clblast", self.rt, self.opts, &msg),
        };
        let gold = self.gold_for(&spec.output, reference_gold);
        let mut row = self.finish_row("clblast", &exec, Some(&gold));
        row.timing = "host".into();
        row
    }

    /// Validates and fills a row. `gold`: `None` means nothing to check
    /// against (recorded as ok with a note); `Some(Err)` means the gold
    /// itself failed, which makes the row an error.
    pub(super) fn finish_row(
        &mut self,
        variant: &str,
        exec: &Execution,
        gold: Option<&Result<HostArray, String>>,
    ) -> Row {
        let mut row = base_row(self.p, variant, self.rt, self.opts);
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
                let c = compare_scaled(&exec.output, g, self.rust_scale(), v.rtol, v.atol);
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
        // An explored program of another device (`explored@<slug>`) is
        // compared with this device's rows, not with a peer.
        if !exec.host_ms.is_empty() && !variant.contains('@') {
            let mut twin = row.clone();
            twin.variant = super::clock::twin(variant);
            twin.timing = "host".into();
            self.set_times(&mut twin, &exec.host_ms);
            let note = format!(
                "`{variant}`'s runs timed on the host (from the first kernel object made to the queue's finish), \
                 as the host-timed peer beside it"
            );
            twin.message = if row.message.is_empty() { note } else { format!("{note}; {}", row.message) };
            self.twins.push(twin);
        }
        row
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

pub(super) fn base_row(p: &Planned, variant: &str, rt: &Runtime, opts: &RunOptions) -> Row {
    Row {
        benchmark: p.cfg.name.clone(),
        size: p.preset.clone(),
        variant: variant.to_string(),
        timing: "profiling".into(),
        device: rt.info.name.clone(),
        driver: rt.info.driver.clone(),
        opencl_version: rt.info.opencl_version.clone(),
        git_commit: opts.git_commit.clone(),
        date: super::env::now_utc(),
        ..Row::default()
    }
}

pub(super) fn error_row(p: &Planned, variant: &str, rt: &Runtime, opts: &RunOptions, msg: &str) -> Row {
    let mut row = base_row(p, variant, rt, opts);
    row.status = Status::Error;
    row.message = msg.to_string();
    row
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
                    && x.variant == "reference"
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
