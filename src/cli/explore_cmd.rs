//! `lift explore`: the search of `crate::explore` from the command line.

use super::arg_error::{ArgError, ExploreCheckError};
use super::compile_cmd::parse_sizes;
use super::{bad, failed, BadInput, CliError, Failure};
use crate::explore::{
    self, measure::Phases, space::SpaceLimits, ExploreError, ExploreOptions, Share, Timing,
};
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug, Clone)]
pub(crate) struct ExploreArgs {
    /// The .lift file (not with --from).
    #[arg(required_unless_present = "from", conflicts_with = "from")]
    file: Option<PathBuf>,
    /// The high-level `def` to explore.
    #[arg(long, required_unless_present = "from", conflicts_with = "from")]
    def: Option<String>,
    /// Explore as a benchmark config's `explored.explore:` block says (its
    /// program, def, `then`, the preset `at` as --size, `valid_at` as
    /// --valid-at, `oracle: config` as --config), as `lift run` does where
    /// a device has no committed program.
    #[arg(long, value_name = "CONFIG.yaml", conflicts_with_all = ["sizes", "valid_at", "then", "config"])]
    from: Option<PathBuf>,
    /// Device(s): a selector (substring, `gpu`, `cpu`, `P:D`), several
    /// separated by commas, or `all`.
    #[arg(long, default_value = "all")]
    device: String,
    /// The sizes candidates are timed at: `N=16777216` (repeatable or
    /// comma-separated); every size of the def.
    #[arg(long = "size", value_name = "NAME=VALUE", value_delimiter = ',')]
    sizes: Vec<String>,
    /// Other sizes the kept program must also run at (`W=96,H=40`,
    /// repeatable): a candidate whose rule constraints fail at one of them
    /// is not measured (a committed program runs at every size preset).
    #[arg(long = "valid-at", value_name = "NAME=VALUE,...")]
    valid_at: Vec<String>,
    /// Wall-time budget: `90s`, `5m`, `1h` or seconds.
    #[arg(long, default_value = "5m")]
    budget: String,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where explore.csv and the best program go.
    #[arg(long, default_value = "explore-out")]
    out: PathBuf,
    /// Keep the rows of an earlier explore.csv in --out and go on from there.
    #[arg(long)]
    resume: bool,
    /// Algorithmic rewrite steps at most (stage 1; 0 to 16).
    #[arg(long, default_value_t = 2, value_parser = depth)]
    depth: usize,
    /// Candidates per device at most.
    #[arg(long)]
    max_candidates: Option<usize>,
    /// Timed runs per candidate (the median is kept; 1 to 10000).
    #[arg(long, default_value_t = 5, value_parser = super::positive)]
    runs: usize,
    /// A def of the same file run after every candidate on its output (the
    /// second stage of a reduction, `sumPartials`), instead of the stages
    /// derived from a full reduction's own `reduce`. Several,
    /// comma-separated: each candidate gets the first whose size
    /// constraints hold for its number of partial results.
    #[arg(long, value_name = "DEF", value_delimiter = ',')]
    then: Vec<String>,
    /// Validate as this benchmark config does (`configs/icfp15-md.yaml`):
    /// its input generators, its Rust gold with its error scale and its
    /// tolerances, instead of random inputs against the interpreter.
    #[arg(long, value_name = "CONFIG.yaml")]
    config: Option<PathBuf>,
    /// Search only shard I of N (by shape; docs/EXPLORE.md), logging into
    /// --out/explore-shard-I-of-N.csv; `--merge` picks the best later.
    #[arg(long, value_name = "I/N", value_parser = shard, conflicts_with = "merge")]
    shard: Option<explore::shard::Shard>,
    /// Read every shard log in --out, check its rows against this search,
    /// measure the fastest candidates again on the device and write the
    /// best into --out.
    #[arg(long, conflicts_with_all = ["resume", "max_candidates"])]
    merge: bool,
    /// Keep every candidate compiled for every size: do not measure the
    /// fastest again compiled for the timed sizes in the budget's last
    /// tenth (docs/EXPLORE.md, "Compiled for the timed sizes").
    #[arg(long)]
    no_specialise: bool,
    /// Measure every device of a shared search from a thread of this
    /// process, instead of a process for each device but the first
    /// (docs/EXPLORE.md, "Several devices").
    #[arg(long)]
    threads: bool,
    /// Internal: serve device P:D of the parent's search as its worker
    /// process, measuring the points it sends on standard input.
    #[arg(long, hide = true, value_name = "P:D")]
    serve_device: Option<String>,
}

fn shard(s: &str) -> Result<explore::shard::Shard, explore::shard::BadShard> {
    explore::shard::Shard::parse(s)
}

/// The longest `--budget`: a week.
pub(crate) const MAX_BUDGET_SECS: u64 = 7 * 24 * 3600;

/// The most algorithmic rewrite steps of stage 1.
const MAX_DEPTH: usize = 16;

fn depth(s: &str) -> Result<usize, ArgError> {
    match s.trim().parse::<u64>() {
        Ok(n) if n <= MAX_DEPTH as u64 => Ok(n as usize),
        _ => Err(ArgError::Depth { text: s.into(), max: MAX_DEPTH }),
    }
}

/// `90s`, `5m`, `1h`, `120`; at most [`MAX_BUDGET_SECS`].
pub(crate) fn parse_budget(s: &str) -> Result<Duration, CliError> {
    parse_duration("--budget", s)
}

/// `--explore-budget` of `lift run`: a budget, or `0`/`off` for none.
pub(crate) fn parse_explore_budget(s: &str) -> Result<Option<Duration>, CliError> {
    match s.trim() {
        "0" | "0s" | "off" => Ok(None),
        t => parse_duration("--explore-budget", t).map(Some),
    }
}

/// A duration given to `flag`: `90s`, `5m`, `1h`, `120`; at most
/// [`MAX_BUDGET_SECS`].
fn parse_duration(flag: &'static str, s: &str) -> Result<Duration, CliError> {
    let t = s.trim();
    let (num, mult) = match t.chars().last() {
        Some('s') => (&t[..t.len() - 1], 1),
        Some('m') => (&t[..t.len() - 1], 60),
        Some('h') => (&t[..t.len() - 1], 3600),
        _ => (t, 1),
    };
    let secs = num
        .trim()
        .parse::<u64>()
        .ok()
        .filter(|v| *v > 0)
        .ok_or_else(|| bad(BadInput::Duration { flag, text: s.to_string() }))?;
    match secs.checked_mul(mult) {
        Some(v) if v <= MAX_BUDGET_SECS => Ok(Duration::from_secs(v)),
        _ => Err(bad(BadInput::DurationTooLong { flag, text: s.to_string() })),
    }
}

/// The random inputs at `--size` fit 32-bit indices, the host cap and
/// every device, checked before anything is allocated (a size whose
/// sizes are missing is left to the search's own error).
fn inputs_fit(
    program: &crate::ir::Program,
    opts: &ExploreOptions,
    devices: &[crate::runtime::DeviceInfo],
) -> Result<(), ExploreCheckError> {
    use crate::validate::input_counts;
    let counts = match input_counts(program, &opts.def, &opts.sizes) {
        Ok(c) => c,
        Err(e) if e.is_unknown() => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    let total: u64 = counts.iter().map(|(_, n, _)| *n as u64 * 4).sum();
    for d in devices {
        if let Some((name, n, _)) = counts.iter().find(|(_, n, _)| *n as u64 * 4 > d.max_alloc) {
            return Err(ExploreCheckError::OverAlloc {
                name: name.clone(),
                bytes: *n as u64 * 4,
                device: d.name.clone(),
                max_alloc: d.max_alloc,
            });
        }
        if total > d.global_mem {
            return Err(ExploreCheckError::OverGlobal {
                total,
                device: d.name.clone(),
                global_mem: d.global_mem,
            });
        }
    }
    Ok(())
}

/// `a` with what `--from CONFIG` gives filled in (unchanged without it).
fn resolve_from(a: &ExploreArgs) -> Result<ExploreArgs, CliError> {
    let Some(path) = &a.from else { return Ok(a.clone()) };
    let cfg = crate::harness::config::load(path, std::path::Path::new(".")).map_err(bad)?;
    let Some(s) = cfg.explored.as_ref().and_then(|e| e.search.as_ref()) else {
        return Err(bad(BadInput::NoSearch(path.clone())));
    };
    // The loader checked that the presets exist.
    let preset = |p: &str| -> Vec<String> {
        cfg.preset(p).map(|(_, b)| b.iter().map(|(k, v)| format!("{k}={v}")).collect()).unwrap_or_default()
    };
    let mut r = a.clone();
    r.file = Some(s.program.clone());
    r.def = Some(s.def.clone());
    r.then = s.then.clone();
    r.sizes = preset(&s.at);
    r.valid_at = s.valid_at.iter().map(|p| preset(p).join(",")).collect();
    r.config = (s.oracle == crate::harness::search::Oracle::Config).then(|| path.clone());
    Ok(r)
}

pub(crate) fn explore_cmd(a: &ExploreArgs) -> Result<(), CliError> {
    let started = std::time::Instant::now();
    let a = &resolve_from(a)?;
    let (Some(file_path), Some(def)) = (&a.file, &a.def) else {
        return Err(bad(BadInput::ExploreUsage));
    };
    let (file, program) = crate::parse::load_program(file_path).map_err(bad)?;
    if program.def(def).is_none() {
        return Err(super::compile_cmd::missing_def(&file, &program, Some(def)));
    }
    // A link in place of `--out` is bad input, as for `lift run`.
    crate::outfile::not_a_link(&a.out).map_err(|e| bad(BadInput::Out(e)))?;
    let mut opts = ExploreOptions {
        def: def.clone(),
        sizes: parse_sizes(&a.sizes)?,
        budget: parse_budget(&a.budget)?,
        seed: a.seed,
        out: a.out.clone(),
        resume: a.resume,
        limits: SpaceLimits {
            depth: a.depth,
            reductions: !a.then.is_empty(),
            valid_at: a
                .valid_at
                .iter()
                .map(|v| parse_sizes(&v.split(',').map(str::to_string).collect::<Vec<_>>()))
                .collect::<Result<_, _>>()?,
            ..SpaceLimits::default()
        },
        max_candidates: a.max_candidates,
        warmup: 1,
        runs: a.runs,
        progress: true,
        then: a.then.clone(),
        reference: None,
        specialise: !a.no_specialise,
    };
    if let Some(path) = &a.config {
        let cfg = crate::harness::config::load(path, std::path::Path::new(".")).map_err(bad)?;
        let reference = crate::harness::expected::ConfigReference::new(cfg).map_err(bad)?;
        let cfg = reference.config();
        if let Some(d) = program.def(def) {
            if let Some(p) = d.params.iter().find(|p| !cfg.inputs.iter().any(|i| i.name == p.name)) {
                return Err(bad(BadInput::ConfigInput {
                    config: path.clone(),
                    input: p.name.clone(),
                    def: def.clone(),
                }));
            }
        }
        opts.reference = Some(std::sync::Arc::new(reference));
    }
    for t in &a.then {
        if program.def(t).is_none() {
            return Err(bad(BadInput::NoThen { file: file_path.clone(), def: t.clone() }));
        }
    }
    let file = file_path.display().to_string();
    if let Some(d) = &a.serve_device {
        let device = explore::select_devices(d).map_err(bad)?.remove(0);
        let (input, output) = (std::io::stdin().lock(), std::io::stdout().lock());
        return explore::remote::serve(&program, device, &opts, input, output)
            .map_err(|e| explore_error(&file, e));
    }
    let devices = explore::select_devices(&a.device).map_err(bad)?;
    for d in &devices {
        eprintln!("device: {}", d.short());
    }
    if opts.reference.is_none() {
        inputs_fit(&program, &opts, &devices)
            .map_err(|source| bad(BadInput::InputsFit { file: file.clone(), source }))?;
    }
    let report = if a.merge {
        let Some(d) = devices.first() else { return Err(bad(BadInput::MergeNoDevice)) };
        eprintln!("merge: the shard logs' fastest candidates are measured again on {}", d.name);
        explore::shard::merge(&program, d, &opts).map_err(|e| match e {
            e @ explore::shard::MergeError::Bad(_) => bad(e),
            explore::shard::MergeError::Explore(e) => explore_error(&file, e),
        })?
    } else {
        let run = match (worker_command(a, devices.len()), a.shard) {
            (Some(w), shard) => explore::explore_in_processes(&program, &devices, &opts, shard, &w),
            (None, Some(s)) => explore::explore_shard(&program, &devices, &opts, s),
            (None, None) => explore::explore(&program, &devices, &opts),
        };
        run.map_err(|e| explore_error(&file, e))?
    };
    for n in &report.notes {
        eprintln!("warning: {n}");
    }
    match (a.merge, a.shard) {
        (true, _) => println!("{} shapes; shard logs merged from {}", report.shapes, report.csv.display()),
        (false, Some(s)) => println!(
            "{} shapes, shard {}/{}; log {} (`lift explore --merge` writes the best)",
            report.shapes,
            s.index,
            s.count,
            report.csv.display()
        ),
        (false, None) => println!("{} shapes; log {}", report.shapes, report.csv.display()),
    }
    let until_searched = started.elapsed().as_secs_f64();
    if print_devices(&report, &devices, (&program, def, &opts.sizes), until_searched) {
        Ok(())
    } else {
        Err(failed(Failure::NoneValidated { most: most_common_failure(&report.csv) }))
    }
}

/// The failure message the log's rows give most often (the first of
/// equals), how many give it, and how many rows the log has: why no
/// candidate validated, in the user's words of the refusal.
fn most_common_failure(csv: &std::path::Path) -> Option<(String, usize, usize)> {
    let rows = crate::explore::log::read_rows(csv, &mut Vec::new()).ok()?;
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for (_, r) in rows.iter().filter(|(_, r)| r.status != "ok" && !r.message.is_empty()) {
        match counts.iter_mut().find(|(m, _)| *m == r.message) {
            Some((_, k)) => *k += 1,
            None => counts.push((&r.message, 1)),
        }
    }
    let most = counts.iter().map(|(_, k)| *k).max()?;
    let (m, k) = counts.into_iter().find(|(_, k)| *k == most)?;
    Some((m.to_string(), k, rows.len()))
}

/// How to start a worker process for a search over several devices: this
/// program with these arguments (`explore::remote`); `None` for one
/// device, with `--threads`, or where this program's path is unknown.
fn worker_command(a: &ExploreArgs, devices: usize) -> Option<explore::remote::WorkerCommand> {
    if devices < 2 || a.threads {
        return None;
    }
    match std::env::current_exe() {
        Ok(program) => {
            Some(explore::remote::WorkerCommand { program, args: std::env::args_os().skip(1).collect() })
        }
        Err(e) => {
            eprintln!(
                "warning: this program's path is unknown ({e}): every device is measured from a thread"
            );
            None
        }
    }
}

/// Each device model's result: its best, how far from the limit, what
/// the budget did not reach, how the devices shared it, the files
/// written. Whether one has a best.
fn print_devices(
    report: &explore::Report,
    devices: &[crate::runtime::DeviceInfo],
    (program, def, sizes): (&crate::ir::Program, &str, &crate::types::Sizes),
    until_searched: f64,
) -> bool {
    // The searches of several models run at once: the longest is theirs.
    let searching = report.devices.iter().map(|d| d.timing.total()).fold(0.0, f64::max);
    let before_s = (until_searched - searching).max(0.0);
    let mut any = false;
    for d in &report.devices {
        let naive = d.naive_ms.map_or("-".into(), |t| format!("{t:.4} ms"));
        match &d.best {
            Some(b) => {
                any = true;
                println!(
                    "{} [{}]: {} tried, {} valid; naive {naive}, best {:.4} ms (candidate {}, {})",
                    d.device, d.slug, d.tried, d.valid, b.median_ms, b.candidate, b.params
                );
                if let Some(line) = specialised_line(&d.specialised) {
                    println!("  {line}");
                }
                if let Some(r) = &d.runoff {
                    println!("  {}", runoff_line(r));
                }
                if let Some((c, t)) = d.fastest {
                    println!("  {}", fastest_line(c, t, d.runoff.as_ref()));
                }
                let limits = std::time::Instant::now();
                match limit_line(devices, d, program, def, sizes, b) {
                    Ok(line) => println!("  {line}"),
                    Err(e) => println!("  no roofline: {e}"),
                }
                let limit_s = limits.elapsed().as_secs_f64();
                if let Some(line) = untried_line(&d.untried, report.shapes) {
                    println!("  {line}");
                }
                if let Some(line) = shares_line(&d.shares) {
                    println!("  {line}");
                }
                println!("  {}", timing_line(&d.timing, &d.shares));
                println!("  {}", outside_line(before_s, limit_s));
                for f in &d.files {
                    println!("  wrote {}", f.display());
                }
            }
            None => println!("{}: {} tried, none valid", d.device, d.tried),
        }
    }
    any
}

/// Lift's error for a failed search: bad input (exit 2) or a failure.
fn explore_error(file: &str, e: ExploreError) -> CliError {
    match e {
        ExploreError::NoDef(_) | ExploreError::MissingSize(_) | ExploreError::Rewrite(_) => {
            bad(BadInput::ExploreIn { file: file.to_string(), source: e })
        }
        ExploreError::Locked(crate::outfile::LockError::Held { .. }) => bad(e),
        ExploreError::Log(ref l) if l.is_format() => bad(e),
        ExploreError::Log(_)
        | ExploreError::Runtime(_)
        | ExploreError::Io { .. }
        | ExploreError::Locked(_)
        | ExploreError::DeviceLost { .. }
        | ExploreError::Worker(_) => failed(e),
    }
}

/// How a search shared by identical devices was split: the candidates
/// each device measured (none for a search on one device).
fn shares_line(shares: &[Share]) -> Option<String> {
    if shares.len() < 2 {
        return None;
    }
    let each: Vec<String> = shares.iter().map(|s| format!("[{}] {}", s.device, s.measured)).collect();
    Some(format!("{} devices shared the search; candidates measured: {}", shares.len(), each.join(", ")))
}

/// Which shapes the budget did not reach (none measured), the first
/// few by name: a longer `--budget` may find more there.
fn untried_line(untried: &[String], shapes: usize) -> Option<String> {
    const SHOWN: usize = 3;
    let first = untried.first()?;
    let mut names: Vec<&str> = vec![first];
    for u in untried {
        if names.len() < SHOWN && !names.contains(&u.as_str()) {
            names.push(u);
        }
    }
    let more = if untried.len() > names.len() { ", ..." } else { "" };
    Some(format!(
        "{} of {shapes} shapes not reached within the budget ({}{more})",
        untried.len(),
        names.join("; ")
    ))
}

/// How far the best candidate is from the device's memory bandwidth:
/// the bytes its kernel must move at least (its arrays read once and its
/// result written once) over its median time, against the bandwidth of a
/// large copy measured now on the same device (`harness::roofline`); and
/// from its FP32 rate, where the user functions do arithmetic
/// (`fp32_text`).
fn limit_line(
    devices: &[crate::runtime::DeviceInfo],
    d: &explore::DeviceResult,
    program: &crate::ir::Program,
    def: &str,
    sizes: &crate::types::Sizes,
    b: &explore::Best,
) -> Result<String, ExploreCheckError> {
    let info = devices.iter().find(|i| i.name == d.device).ok_or(ExploreCheckError::NoDevice)?;
    let bytes = crate::harness::roofline::min_traffic(program, def, sizes)?;
    let rt = crate::runtime::Runtime::new(info.clone())?;
    let (roof, same) = crate::harness::roofline::measure_beside(&rt, bytes)?;
    let gbps = bytes as f64 / (b.median_ms * 1e6);
    let pct = 100.0 * gbps / roof.bandwidth_gbps;
    // A problem smaller than the copy can be served from a cache.
    let why = if pct > 100.0 && bytes < roof.copy_bytes {
        format!(
            " (over 100%: {:.1} MB fit in a cache that the copy's {:.1} MB do not)",
            bytes as f64 / 1e6,
            roof.copy_bytes as f64 / 1e6
        )
    } else {
        String::new()
    };
    // A copy of the program's own bytes, where they are fewer than the
    // large copy's (read plus written).
    let own = same.map_or(String::new(), |same| {
        format!(", {:.0}% of a copy of the same bytes ({same:.1} GB/s)", 100.0 * gbps / same)
    });
    let fp32 = crate::validate::userfun_ops(program, def, sizes)
        .filter(|&ops| ops > 0.0)
        .map_or(String::new(), |ops| fp32_text(ops, b.median_ms, roof.gflops, pct));
    Ok(format!(
        "{:.1} MB moved at least: {gbps:.1} GB/s, {pct:.0}% of a copy's {:.1} GB/s measured now{why}{own}{fp32}",
        bytes as f64 / 1e6,
        roof.bandwidth_gbps
    ))
}

/// What measuring the leaders again compiled for the timed sizes gave
/// (`explore::specialise`): how many, and the largest change.
fn specialised_line(s: &[(usize, f64, usize, f64)]) -> Option<String> {
    let (c, every, row, sized) = s.iter().min_by(|a, b| (a.3 / a.1).total_cmp(&(b.3 / b.1)))?;
    let change = 100.0 * (sized / every - 1.0);
    let verdict = if change < 0.0 { "at best" } else { "none faster, the least slower" };
    Some(format!(
        "{} of the fastest measured again compiled for --size: {verdict} {change:+.1}% (candidate {c}: {every:.4} ms \
         for every size, {sized:.4} ms for its sizes as candidate {row})",
        s.len()
    ))
}

/// Why the fastest candidate measured (`c`, `t` ms in the search) is not
/// the one written: within the tie band of it, or, where the near-fastest
/// were timed again, within the rounds' band.
fn fastest_line(c: usize, t: f64, runoff: Option<&explore::runoff::Runoff>) -> String {
    let how = match runoff {
        Some(r) => {
            format!("timed again side by side, the two were within {:.1}% of each other", r.band * 100.0)
        }
        None => format!("within {:.0}% of the one written", explore::choice::TIE * 100.0),
    };
    format!(
        "candidate {c} measured {t:.4} ms in the search; {how}: taken as equal, the first in the search space's \
         order is written (repeated runs and several devices then agree)"
    )
}

/// What timing the near-fastest again side by side gave
/// (`explore::runoff`): how many, their times in the search and in the
/// rounds, and how many were left tied.
fn runoff_line(r: &explore::runoff::Runoff) -> String {
    let range = |f: fn(&(usize, f64, f64)) -> f64| {
        let lo = r.times.iter().map(f).fold(f64::INFINITY, f64::min);
        let hi = r.times.iter().map(f).fold(0.0, f64::max);
        format!("{lo:.4}-{hi:.4} ms")
    };
    let fastest = r.times.iter().map(|t| t.2).fold(f64::INFINITY, f64::min);
    let tied = r.times.iter().filter(|t| t.2 <= fastest * (1.0 + r.band)).count();
    format!(
        "the {} near-fastest timed again in {} interleaved rounds: {} ({} in the search); {tied} within {:.1}% \
         of the fastest (the widest spread of one candidate's rounds) taken as equal",
        r.times.len(),
        r.rounds,
        range(|t| t.2),
        range(|t| t.1),
        r.band * 100.0
    )
}

/// The user functions' operations (`validate::userfun_ops`, an
/// addition and a multiplication two, as an FMA's two flops) over `ms`,
/// against the FP32 rate measured now (`peak` GFLOP/s), and which limit
/// is nearer where it is this one (`pct_copy` the bandwidth's share).
fn fp32_text(ops: f64, ms: f64, peak: f64, pct_copy: f64) -> String {
    let gflops = ops / (ms * 1e6);
    let pct = 100.0 * gflops / peak;
    let nearer = if pct > 100.0 {
        // The FMA chains of `harness::roofline` are one kernel's rate: a
        // CPU's OpenCL may vectorise another better.
        " (over 100%: this kernel runs faster than the FMA chains the rate was measured with)"
    } else if pct > pct_copy {
        " (the nearer limit)"
    } else {
        ""
    };
    let count = if ops >= 1e9 { format!("{:.2} G", ops / 1e9) } else { format!("{:.2} M", ops / 1e6) };
    format!(
        "; {count} operations of its user functions: {gflops:.1} GFLOP/s, {pct:.0}% of the FP32 rate's {peak:.0} GFLOP/s measured now{nearer}"
    )
}

/// Where the wall time went: what more devices shorten (the search, while
/// every device is busy) and what they do not (planning, confirming, and
/// the devices' waits).
fn timing_line(t: &Timing, shares: &[Share]) -> String {
    let busy: Vec<String> = shares.iter().map(|s| format!("{:.1}", s.busy_s)).collect();
    let mut p = Phases::default();
    for s in shares {
        p.add(&s.phases);
    }
    // What the phases do not cover: choosing validation sizes, checking
    // results, the log.
    let busy_s: f64 = shares.iter().map(|s| s.busy_s).sum();
    let other = (busy_s - p.total()).max(0.0);
    format!(
        "time: planning {:.1} s, search {:.1} s (setting up the device {:.1} s; measuring: {} s; \
         of it replaying {:.1} s, generating {:.1} s, driver builds {:.1} s, gold results {:.1} s, \
         device runs {:.1} s, other {other:.1} s), confirming, specialising and timing again {:.1} s",
        t.plan_s,
        t.search_s,
        t.setup_s,
        busy.join(" + "),
        p.derive_s,
        p.codegen_s,
        p.build_s,
        p.gold_s,
        p.run_s,
        t.confirm_s
    )
}

/// The command's time outside the search: before it (the device list,
/// the inputs' check) and measuring the limit line's copy and FP32 rates
/// after it; with the time line they add up to the command's wall time.
fn outside_line(before_s: f64, limit_s: f64) -> String {
    format!("outside the search: {before_s:.1} s before it, {limit_s:.1} s measuring the limits")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_outside_the_search_is_one_line() {
        assert_eq!(
            outside_line(0.42, 2.049),
            "outside the search: 0.4 s before it, 2.0 s measuring the limits"
        );
    }

    #[test]
    fn untried_shapes_are_named() {
        assert_eq!(untried_line(&[], 5), None);
        let u: Vec<String> = ["a", "a", "b", "c", "d"].iter().map(|s| s.to_string()).collect();
        assert_eq!(
            untried_line(&u, 9).unwrap(),
            "5 of 9 shapes not reached within the budget (a; b; c, ...)"
        );
        assert_eq!(untried_line(&u[..1], 9).unwrap(), "1 of 9 shapes not reached within the budget (a)");
    }

    #[test]
    fn the_specialised_line_gives_the_largest_gain() {
        assert_eq!(specialised_line(&[]), None);
        let s = [(5, 3.0, 20, 3.03), (7, 3.5, 21, 3.08), (9, 3.1, 22, 3.9)];
        assert_eq!(
            specialised_line(&s).unwrap(),
            "3 of the fastest measured again compiled for --size: at best -12.0% (candidate 7: 3.5000 ms \
             for every size, 3.0800 ms for its sizes as candidate 21)"
        );
        let slower = [(5, 3.0, 20, 3.09), (9, 3.1, 22, 3.9)];
        assert_eq!(
            specialised_line(&slower).unwrap(),
            "2 of the fastest measured again compiled for --size: none faster, the least slower +3.0% (candidate 5: \
             3.0000 ms for every size, 3.0900 ms for its sizes as candidate 20)"
        );
    }

    #[test]
    fn the_runoff_and_fastest_lines() {
        let r = explore::runoff::Runoff {
            times: vec![(4, 3.01, 3.02), (9, 3.03, 3.015), (2, 3.05, 3.06)],
            band: 0.005,
            rounds: 3,
        };
        assert_eq!(
            runoff_line(&r),
            "the 3 near-fastest timed again in 3 interleaved rounds: 3.0150-3.0600 ms (3.0100-3.0500 ms in the \
             search); 2 within 0.5% of the fastest (the widest spread of one candidate's rounds) taken as equal"
        );
        assert_eq!(
            fastest_line(4, 3.01, Some(&r)),
            "candidate 4 measured 3.0100 ms in the search; timed again side by side, the two were within 0.5% of \
             each other: taken as equal, the first in the search space's order is written (repeated runs and \
             several devices then agree)"
        );
        assert!(fastest_line(4, 3.01, None).contains("; within 2% of the one written: taken as equal"));
    }

    #[test]
    fn the_fp32_share_names_the_nearer_limit() {
        // 2 x 4096^3 operations in 3 ms against 67,000 GFLOP/s.
        let ops = 2.0 * 4096f64.powi(3);
        assert_eq!(
            fp32_text(ops, 3.0, 67_000.0, 2.0),
            "; 137.44 G operations of its user functions: 45813.0 GFLOP/s, 68% of the FP32 rate's 67000 GFLOP/s \
             measured now (the nearer limit)"
        );
        assert_eq!(
            fp32_text(2e6, 1.0, 1.0, 80.0),
            "; 2.00 M operations of its user functions: 2.0 GFLOP/s, 200% of the FP32 rate's 1 GFLOP/s measured now \
             (over 100%: this kernel runs faster than the FMA chains the rate was measured with)"
        );
        assert!(!fp32_text(1e6, 1.0, 67_000.0, 80.0).contains('('));
    }

    #[test]
    fn shares_and_time_lines() {
        let phases = Phases { derive_s: 1.0, codegen_s: 0.5, build_s: 10.0, gold_s: 4.0, run_s: 12.0 };
        let share = |d: &str, measured, busy_s| Share { device: d.into(), measured, busy_s, phases };
        let one = [share("0:0", 12, 30.04)];
        assert_eq!(shares_line(&one), None);
        let two = [share("0:0", 12, 30.04), share("0:1", 9, 28.5)];
        assert_eq!(
            shares_line(&two).unwrap(),
            "2 devices shared the search; candidates measured: [0:0] 12, [0:1] 9"
        );
        let t = Timing { plan_s: 0.26, search_s: 31.0, setup_s: 0.71, confirm_s: 1.04 };
        assert_eq!(
            timing_line(&t, &two),
            "time: planning 0.3 s, search 31.0 s (setting up the device 0.7 s; measuring: 30.0 + 28.5 s; \
             of it replaying 2.0 s, generating 1.0 s, driver builds 20.0 s, gold results 8.0 s, device runs 24.0 s, other 3.5 s), \
             confirming, specialising and timing again 1.0 s"
        );
    }

    #[test]
    fn budgets() {
        assert_eq!(parse_budget("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_budget("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_budget("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse_budget("20").unwrap(), Duration::from_secs(20));
        let e = parse_budget("soon").unwrap_err();
        assert_eq!(e.to_string(), "--budget `soon`: expected a duration like 90s, 5m or 1h");
        assert_eq!(e.code(), 2);
        let e = parse_budget("99999999999999999h").unwrap_err();
        assert_eq!(e.to_string(), "--budget `99999999999999999h`: at most a week (604800s, 10080m or 168h)");
        assert!(parse_budget("168h").is_ok() && parse_budget("169h").is_err());
        assert_eq!(parse_explore_budget("off").unwrap(), None);
        assert_eq!(parse_explore_budget("0").unwrap(), None);
        assert_eq!(parse_explore_budget("45s").unwrap(), Some(Duration::from_secs(45)));
        let e = parse_explore_budget("-1").unwrap_err();
        assert_eq!(e.to_string(), "--explore-budget `-1`: expected a duration like 90s, 5m or 1h");
        let e = parse_sizes(&["N=1099511627776".into()]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--size `N=1099511627776`: at most 2147483647 (kernels index with 32-bit ints)"
        );
    }
}
