//! The benchmark commands: all, run, list, devices, roofline, plot, table1.

use super::{bad, failed, BadInput, CliError, ConfigArgs, Failure, RunArgs};
use crate::harness::config::{self, Config, ConfigError};
use crate::harness::runner::{self, RunOptions};
use crate::harness::runners::Registry;
use crate::harness::table1::Table1Entry;
use crate::harness::variant_name::Variant;
use crate::harness::{chart, env, roofline, suite};
use crate::launch::RunCounts;
use crate::runtime::{self, Runtime};
use std::path::{Path, PathBuf};

/// Loads every config; broken ones come back as their errors.
fn load_configs(c: &ConfigArgs) -> Result<(Vec<Config>, Vec<ConfigError>), CliError> {
    let trust = config::Trust { executables: c.allow_config_executables };
    let all = config::load_dir_trusting(&c.configs, &c.root, trust).map_err(bad)?;
    let mut ok = Vec::new();
    let mut broken = Vec::new();
    for r in all {
        match r {
            Ok(cfg) => ok.push(cfg),
            Err(e) => broken.push(e),
        }
    }
    Ok((ok, broken))
}

fn open_device(sel: Option<&str>) -> Result<Runtime, CliError> {
    let info = runtime::select_device(sel).map_err(bad)?;
    println!("device: {}", info.short());
    Runtime::new(info).map_err(bad)
}

fn size_presets(arg: Option<&str>, gpu: bool) -> Vec<String> {
    match arg {
        None if gpu => vec!["small".into(), "large".into()],
        None => vec!["tiny".into()],
        Some("paper") => vec!["small".into(), "large".into()],
        Some(s) => s.split(',').map(|x| x.trim().to_string()).filter(|x| !x.is_empty()).collect(),
    }
}

/// Creates `dir` and probes that a file can be written in it, so that an
/// unwritable `--out` is bad input found before anything runs.
/// Neither `dir` nor its parent (`--out`) may be a symbolic link.
fn writable_dir(dir: &Path) -> Result<(), CliError> {
    let probe = dir.join(".lift-write-probe");
    let _ = std::fs::remove_file(&probe);
    dir.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or(Ok(()), crate::outfile::create_dir)
        .and_then(|()| crate::outfile::create_dir(dir))
        .and_then(|()| std::fs::OpenOptions::new().write(true).create_new(true).open(&probe))
        .and_then(|_| std::fs::remove_file(&probe))
        .map_err(|source| bad(BadInput::OutDir { dir: dir.to_path_buf(), source }))
}

/// `--variants`: each word a variant some runner runs (a row's own name;
/// never a host-timed twin or one other device's program).
fn parse_variants(words: &[String]) -> Result<Vec<Variant>, CliError> {
    let registry = Registry::new();
    let mut out = Vec::new();
    for w in words {
        match Variant::parse(w) {
            Some(v) if !v.is_twin() && !v.is_other_device() && registry.runner_for(&v).is_some() => {
                out.push(v)
            }
            _ => return Err(bad(BadInput::Variant(w.clone()))),
        }
    }
    Ok(out)
}

pub(crate) fn run_cmd(a: &RunArgs, only: Option<&[String]>) -> Result<(), CliError> {
    // Read before this process touches OpenCL: on the H100 host the Halide
    // peer started by the harness saw `OCL_ICD_FILENAMES` without the NVIDIA
    // library that the user's environment lists (and found no NVIDIA
    // platform), where it ran when started by hand.
    let icd_filenames = std::env::var("OCL_ICD_FILENAMES").ok();
    let variants = a.variants.as_deref().map(parse_variants).transpose()?;
    let explore_budget = super::explore_cmd::parse_explore_budget(&a.explore_budget)?;
    let (mut configs, broken) = load_configs(&a.cfg)?;
    select_configs(&mut configs, &broken, a.suite.as_deref(), only)?;
    for b in &broken {
        eprintln!("error: {b}");
    }
    let mut rt = open_device(a.device.as_deref())?;
    if let Some(dir) = &a.dump_builds {
        rt.dump_builds_to(dir.clone()).map_err(bad)?;
    }
    if a.size.is_none() && !rt.info.is_gpu() {
        println!("no GPU selected: running on the {} device with the `tiny` size preset", rt.info.kind);
    }
    let sizes = size_presets(a.size.as_deref(), rt.info.is_gpu());
    check_presets(&configs, &sizes)?;
    let report_dir = a.out.join(rt.info.slug());
    writable_dir(&report_dir)?;
    let date = env::now_utc();
    let roof = roofline_for(&rt, a, only.is_some(), &report_dir, &date);
    // A copy of the tree shipped to another machine (a GPU host) may carry
    // no .git, or a stale one: LIFT_GIT_COMMIT names the commit.
    let git_commit = std::env::var("LIFT_GIT_COMMIT").unwrap_or_else(|_| env::git_commit(&a.cfg.root));
    let cublas_dir = a.cublas_lib.clone().or_else(|| std::env::var_os("LIFT_CUBLAS_DIR").map(PathBuf::from));
    let mut failures = 0;
    let mut chart_failed = false;
    let mut csvs = Vec::new();
    for s in suite::suites(&configs) {
        let these: Vec<Config> = configs.iter().filter(|c| c.suite == s).cloned().collect();
        let opts = RunOptions {
            sizes: sizes.clone(),
            variants: variants.clone(),
            counts: RunCounts { warmup: a.warmup, runs: a.runs },
            resume: a.resume,
            report_dir: report_dir.clone(),
            results_file: suite::results_file(&s),
            roofline: roof.clone(),
            git_commit: git_commit.clone(),
            cublas_dir: cublas_dir.clone(),
            icd_filenames: icd_filenames.clone(),
            explore_budget,
        };
        println!("suite {s}: {} benchmark(s)", these.len());
        let report = runner::run(&rt, &these, &opts).map_err(|e| match e {
            // --resume onto a results file of another format is bad input.
            // So is a folder another run is writing to (as for explore).
            crate::harness::results::ResultsError::Format { .. }
            | crate::harness::results::ResultsError::Lock(crate::outfile::LockError::Held { .. }) => bad(e),
            _ => failed(e),
        })?;
        for n in &report.notes {
            println!("note: {n}");
        }
        println!();
        print!("{}", runner::summary_table(&report.rows));
        chart_failed |= !write_suite_outputs(&s, &report, &report_dir);
        failures += report.failures();
        csvs.push(report.csv.display().to_string());
    }
    if failures > 0 || !broken.is_empty() {
        return Err(failed(Failure::Rows { failures, broken: broken.len(), csvs }));
    }
    if chart_failed {
        return Err(failed(Failure::Charts { csvs }));
    }
    Ok(())
}

/// Keeps the configs of `--suite` and of the benchmarks named on the
/// command line (each must exist; a broken config of that name is the error).
fn select_configs(
    configs: &mut Vec<Config>,
    broken: &[ConfigError],
    suite_arg: Option<&str>,
    only: Option<&[String]>,
) -> Result<(), CliError> {
    if let Some(s) = suite_arg {
        let known = suite::suites(configs);
        if !known.iter().any(|k| k == s) {
            return Err(bad(BadInput::Suite { suite: s.to_string(), known }));
        }
        configs.retain(|c| c.suite == s);
    }
    if let Some(names) = only {
        let known: Vec<String> = configs.iter().map(|c| c.name.clone()).collect();
        for n in names {
            if !known.contains(n) {
                let hint = broken.iter().find(|b| b.to_string().contains(&format!("{n}.yaml"))).cloned();
                return Err(bad(hint.map_or_else(
                    || BadInput::Benchmark { name: n.clone(), known: known.clone() },
                    BadInput::Config,
                )));
            }
        }
        configs.retain(|c| names.contains(&c.name));
    }
    Ok(())
}

/// A preset no selected benchmark defines is a typo, not a run that skips
/// everything (one some benchmarks lack is skipped for those).
fn check_presets(configs: &[Config], sizes: &[String]) -> Result<(), CliError> {
    for s in sizes {
        if !configs.iter().any(|c| c.preset(s).is_some()) {
            let mut known: Vec<&str> = Vec::new();
            for (name, _) in configs.iter().flat_map(|c| &c.sizes) {
                if !known.contains(&name.as_str()) {
                    known.push(name);
                }
            }
            let known = known.into_iter().map(str::to_string).collect();
            return Err(bad(BadInput::Preset { size: s.clone(), known }));
        }
    }
    Ok(())
}

/// The device's limits: measured (and saved) at the start of `lift all`,
/// else read from an earlier run's `roofline.csv`, if any.
fn roofline_for(
    rt: &Runtime,
    a: &RunArgs,
    only: bool,
    report_dir: &Path,
    date: &str,
) -> Option<roofline::Roofline> {
    let roof_path = report_dir.join("roofline.csv");
    if !(only || a.no_roofline || a.resume && roof_path.exists()) {
        println!("measuring device limits (roofline)...");
        match roofline::measure(rt, date) {
            Ok(r) => {
                println!("  bandwidth {:.1} GB/s, FP32 {:.1} GFLOP/s", r.bandwidth_gbps, r.gflops);
                if let Err(e) = roofline::save(&r, &roof_path) {
                    eprintln!("warning: {e}");
                }
                Some(r)
            }
            Err(e) => {
                eprintln!("warning: roofline measurement failed: {e}");
                None
            }
        }
    } else {
        roofline::load(&roof_path)
    }
}

/// Writes a suite's charts and, where other devices' programs ran, the
/// portability table; prints where they went. False where the charts failed.
fn write_suite_outputs(s: &str, report: &runner::RunReport, report_dir: &Path) -> bool {
    let mut charted = true;
    match suite::render_figures(s, &report.csv, report_dir) {
        Ok(files) => {
            for f in files {
                println!("chart: {}", f.display());
            }
        }
        Err(e) => {
            eprintln!("error: charts: {e}");
            charted = false;
        }
    }
    println!("results: {}", report.csv.display());
    if report.rows.iter().any(|r| r.variant.is_other_device()) {
        let path = report_dir.join("portability.csv");
        let text = crate::harness::explored::portability_csv(&report.rows);
        match crate::outfile::replace(&path, text.as_bytes()) {
            Ok(()) => println!("portability: {}", path.display()),
            Err(e) => eprintln!("error: {}: {e}", path.display()),
        }
    }
    charted
}

pub(crate) fn list_cmd(c: &ConfigArgs) -> Result<(), CliError> {
    let (configs, broken) = load_configs(c)?;
    for cfg in &configs {
        let sizes: Vec<String> = cfg
            .sizes
            .iter()
            .map(|(n, b)| {
                format!("{n}({})", b.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(","))
            })
            .collect();
        let variants: Vec<String> = runner::offered_variants(cfg).iter().map(Variant::to_string).collect();
        println!("{:<12} {} [{}]", cfg.name, cfg.description, cfg.suite);
        println!("{:<12} sizes: {}; variants: {}", "", sizes.join(" "), variants.join(", "));
    }
    for b in &broken {
        eprintln!("error: {b}");
    }
    if broken.is_empty() {
        Ok(())
    } else {
        Err(bad(BadInput::BrokenConfigs(broken.len())))
    }
}

pub(crate) fn devices_cmd() -> Result<(), CliError> {
    let devices = runtime::list_devices().map_err(bad)?;
    for d in devices {
        println!("{d}");
    }
    Ok(())
}

pub(crate) fn roofline_cmd(device: Option<&str>, out: &Path) -> Result<(), CliError> {
    crate::outfile::not_a_link(out).map_err(|e| bad(BadInput::Out(e)))?;
    let rt = open_device(device)?;
    let r = roofline::measure(&rt, &env::now_utc()).map_err(failed)?;
    let path = out.join(rt.info.slug()).join("roofline.csv");
    roofline::save(&r, &path).map_err(failed)?;
    println!(
        "bandwidth {:.1} GB/s (copy of {} MiB), FP32 {:.1} GFLOP/s",
        r.bandwidth_gbps,
        r.copy_bytes >> 20,
        r.gflops
    );
    println!("written: {}", path.display());
    Ok(())
}

pub(crate) fn plot_cmd(csvs: &[PathBuf], out: &Path) -> Result<(), CliError> {
    crate::outfile::not_a_link(out).map_err(|e| bad(BadInput::Out(e)))?;
    for c in csvs {
        if !c.is_file() {
            return Err(bad(BadInput::NoSuchFile(c.clone())));
        }
    }
    // A stencil results file draws that suite's figures (one file each);
    // the others are CGO 2017's and draw Figure 8 together.
    let stencil_file = suite::results_file(suite::STENCIL_SUITE);
    let named = |c: &PathBuf, name: &str| c.file_name().is_some_and(|n| *n == *name);
    let (generality_csvs, csvs): (Vec<PathBuf>, Vec<PathBuf>) =
        csvs.iter().cloned().partition(|c| named(c, crate::harness::generality::RESULTS));
    let (stencils, cgo17): (Vec<PathBuf>, Vec<PathBuf>) =
        csvs.iter().cloned().partition(|c| named(c, &stencil_file));
    let mut files = Vec::new();
    for c in &generality_csvs {
        let dir = c.parent().map_or_else(|| out.to_path_buf(), Path::to_path_buf);
        files.extend(chart::render_generality_figure(c, &dir, &chart::FontSource::System).map_err(failed)?);
    }
    if !cgo17.is_empty() {
        files.extend(chart::render_figure8(&cgo17, out).map_err(failed)?);
    }
    for c in &stencils {
        let dir = if stencils.len() > 1 {
            out.join(c.parent().and_then(|p| p.file_name()).unwrap_or_default())
        } else {
            out.to_path_buf()
        };
        files.extend(suite::render_figures(suite::STENCIL_SUITE, c, &dir).map_err(failed)?);
    }
    for f in files {
        println!("chart: {}", f.display());
    }
    Ok(())
}

/// Table 1 entries: the reference sources and the Lift programs of every
/// config (the low-level program is all its Lift kernels' defs).
pub(crate) fn table1_entries(configs: &[Config]) -> Vec<Table1Entry> {
    configs
        .iter()
        .map(|c| Table1Entry {
            benchmark: c.name.clone(),
            reference_files: c.reference.as_ref().map(|r| r.sources.clone()).unwrap_or_default(),
            high_level: c.lift.as_ref().and_then(|l| l.high_level.clone()),
            low_level: c
                .lift
                .as_ref()
                .map(|l| l.kernels.iter().map(|k| (k.program.clone(), k.def.clone())).collect())
                .unwrap_or_default(),
        })
        .collect()
}

/// `lift builds`: the dump folder's programs measured, as CSV.
pub(crate) fn builds_cmd(
    dir: &Path,
    results: Option<&Path>,
    out: Option<&Path>,
    chart: Option<&str>,
    c: &ConfigArgs,
) -> Result<(), CliError> {
    if chart.is_some() && out.is_none() {
        return Err(bad(BadInput::ChartWithoutOut));
    }
    let rows = match results {
        Some(p) => crate::harness::results::read_rows(p).map_err(bad)?,
        None => Vec::new(),
    };
    // Benchmark names come from the configs and the results (a run of
    // configs since renamed still matches its own rows).
    let (configs, _) = load_configs(c)?;
    let mut known: Vec<String> = configs.into_iter().map(|c| c.name).collect();
    known.extend(rows.iter().map(|r| r.benchmark.clone()));
    known.sort();
    known.dedup();
    let measured = crate::harness::builds::measure_builds(dir, &known, &rows).map_err(bad)?;
    let text = crate::harness::builds::builds_csv(&measured);
    let Some(p) = out else {
        print!("{text}");
        return Ok(());
    };
    std::fs::write(p, text).map_err(|source| failed(Failure::Write { path: p.to_path_buf(), source }))?;
    if let Some(size) = chart {
        let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let fonts = crate::harness::chart::FontSource::System;
        let written =
            crate::harness::chart::render_levels_figure(&measured, size, dir, &fonts).map_err(bad)?;
        for w in written {
            println!("chart: {}", w.display());
        }
    }
    Ok(())
}

pub(crate) fn table1_cmd(c: &ConfigArgs, out: &Path) -> Result<(), CliError> {
    let (configs, broken) = load_configs(c)?;
    for b in &broken {
        eprintln!("error: {b}");
    }
    // Table 1 is CGO 2017's: the other suites' programs are not in it.
    let configs: Vec<Config> = configs.into_iter().filter(|c| c.suite == config::DEFAULT_SUITE).collect();
    let entries = table1_entries(&configs);
    let t = crate::harness::table1::write_table1(&entries, out).map_err(failed)?;
    print!("{}", crate::harness::table1::table1_markdown(&t.rows));
    println!("table: {}", t.csv.display());
    println!("table: {}", t.markdown.display());
    if broken.is_empty() {
        Ok(())
    } else {
        Err(failed(Failure::BrokenConfigs(broken.len())))
    }
}
