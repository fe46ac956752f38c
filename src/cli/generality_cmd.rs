//! `lift generality`: the generality suite (`harness::generality`) from the
//! command line.

use super::{bad, failed, BadInput, CliError, Failure};
use crate::harness::chart::{self, FontSource};
use crate::harness::{env, generality};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug, Clone)]
pub(crate) struct GeneralityArgs {
    /// Device: substring of platform, vendor or device name, `gpu`, `cpu`, or P:D.
    #[arg(long)]
    device: Option<String>,
    /// The search's wall-time budget per program: `60s`, `2m`.
    #[arg(long, default_value = "60s")]
    budget: String,
    /// Only these programs (comma-separated names of the suite's suite.yaml).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Keep the `ok` rows of results-generality.csv (same commit) and run the other programs.
    #[arg(long)]
    resume: bool,
    /// The Python that runs the PyTorch peer (peers/pytorch/generality.py).
    #[arg(long, default_value = "python3")]
    python: PathBuf,
    /// Run no PyTorch peer.
    #[arg(long)]
    no_peer: bool,
    /// Timed runs of each PyTorch program (the median is kept).
    #[arg(long, default_value_t = 20, value_parser = super::positive)]
    peer_runs: usize,
    /// Reports directory; results go to DIR/<device-slug>/.
    #[arg(long, default_value = "reports")]
    out: PathBuf,
    /// Repository root (the peer; the suite's default folder).
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// The suite's folder: its suite.yaml and the programs it names
    /// (default: ROOT/benchmarks/generality; ROOT/benchmarks/holdout is the holdout suite).
    #[arg(long, value_name = "DIR")]
    suite: Option<PathBuf>,
    /// Search nothing: measure the programs another device's search found,
    /// DIR/<name>/best.lift (e.g. reports/<gpu>/generality), on this device;
    /// rows go to results-generality-ported.csv.
    #[arg(long, value_name = "DIR")]
    programs_from: Option<PathBuf>,
    /// Search every program in this process rather than one child process
    /// each (a kernel fault that loses the device then stops the programs
    /// after it).
    #[arg(long)]
    in_process: bool,
    /// Internal: run as the child of an isolated run, searching the one
    /// program of --only and writing the search's result to FILE.
    #[arg(long, value_name = "FILE", hide = true)]
    child_result: Option<PathBuf>,
    /// Internal: the child's report folder (the parent's DIR/<device-slug>/).
    #[arg(long, value_name = "DIR", hide = true, requires = "child_result")]
    child_dir: Option<PathBuf>,
}

pub(crate) fn generality_cmd(a: &GeneralityArgs) -> Result<(), CliError> {
    let budget = super::explore_cmd::parse_budget(&a.budget)?;
    let device = crate::runtime::select_device(a.device.as_deref()).map_err(bad)?;
    eprintln!("device: {}", device.short());
    // `--out` itself is never a link (its subfolders are checked where
    // they are made).
    crate::outfile::create_dir(&a.out).map_err(|e| bad(BadInput::Out(e)))?;
    let out_dir = a.child_dir.clone().unwrap_or_else(|| a.out.join(device.slug()));
    let opts = generality::Options {
        root: a.root.clone(),
        suite: a
            .suite
            .clone()
            .unwrap_or_else(|| a.root.join(crate::harness::generality::manifest::SUITE_DIR)),
        out_dir: out_dir.clone(),
        budget,
        only: a.only.clone(),
        resume: a.resume,
        python: (!a.no_peer).then(|| a.python.clone()),
        peer_runs: a.peer_runs,
        // The GPU machine's copy of the tree has no git: the commit comes
        // with the binary's run script there, as for `lift all`.
        commit: std::env::var("LIFT_GIT_COMMIT").unwrap_or_else(|_| env::git_commit(&a.root)),
        date: env::now_utc(),
        progress: a.child_result.is_none(),
        ported_from: a.programs_from.clone(),
        isolation: isolation(a)?,
    };
    if let Some(result) = &a.child_result {
        return generality::run_child(&opts, &device, result).map_err(failed);
    }
    let rows = generality::run(&opts, &device).map_err(|e| match e {
        generality::GeneralityError::Manifest(_)
        | generality::GeneralityError::Locked(crate::outfile::LockError::Held { .. }) => bad(e),
        _ => failed(e),
    })?;
    for r in &rows {
        println!("{}", summary_line(r));
    }
    let csv = generality::results_path_for(&opts);
    println!("results: {}", csv.display());
    // The GPU machine may have no fonts: a figure that cannot be drawn is
    // a warning (`lift plot` draws it later), never a lost result. A
    // ported run has no figure of its own (`lift report` compares it).
    if opts.ported_from.is_none() {
        match chart::render_generality_figure(&csv, &out_dir, &FontSource::System) {
            Ok(files) => files.iter().for_each(|f| println!("chart: {}", f.display())),
            Err(e) => eprintln!("warning: no figure: {e}"),
        }
    }
    let failures = rows.iter().filter(|r| r.status != generality::Outcome::Ok).count();
    if failures > 0 {
        return Err(failed(Failure::GeneralityRows { failed: failures, total: rows.len() }));
    }
    Ok(())
}

/// Each program searched in a child process of this executable, unless
/// `--in-process`, a child itself, or measuring found programs.
fn isolation(a: &GeneralityArgs) -> Result<Option<generality::isolate::Isolation>, CliError> {
    if a.in_process || a.child_result.is_some() || a.programs_from.is_some() {
        return Ok(None);
    }
    let exe = std::env::current_exe().map_err(|e| failed(generality::GeneralityError::Exe(e)))?;
    Ok(Some(generality::isolate::Isolation { exe, device: a.device.clone() }))
}

fn summary_line(r: &generality::Row) -> String {
    let ms = |v: Option<f64>| v.map_or("-".to_string(), |t| format!("{t:.4} ms"));
    if r.status != generality::Outcome::Ok {
        return format!("{:<12} failed: {}", r.program, r.message);
    }
    let own = r.pct_own_copy_if_bound().map_or(String::new(), |p| format!(" ({p:.0}% of a same-size copy)"));
    let limit = r.pct_of_limit().map_or(String::new(), |p| format!(", {p:.0}% of the limit{own}"));
    let vs = r.speedup.map_or(String::new(), |s| format!(", {s:.2}x PyTorch ({})", ms(r.peer_ms)));
    format!("{:<12} {} ({} valid of {}){limit}{vs}", r.program, ms(r.lift_ms), r.valid, r.tried)
}
