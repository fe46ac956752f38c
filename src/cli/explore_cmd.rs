//! `lift explore`: the search of `crate::explore` from the command line.

use super::{bad, CliError};
use crate::explore::{self, space::SpaceLimits, ExploreError, ExploreOptions};
use clap::Args;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug, Clone)]
pub(crate) struct ExploreArgs {
    /// The .lift file.
    file: PathBuf,
    /// The high-level `def` to explore.
    #[arg(long)]
    def: String,
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
    /// Algorithmic rewrite steps at most (stage 1).
    #[arg(long, default_value_t = 2)]
    depth: usize,
    /// Candidates per device at most.
    #[arg(long)]
    max_candidates: Option<usize>,
    /// Timed runs per candidate (the median is kept).
    #[arg(long, default_value_t = 5)]
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
}

/// `90s`, `5m`, `1h`, `120`.
pub(crate) fn parse_budget(s: &str) -> Result<Duration, CliError> {
    let t = s.trim();
    let (num, mult) = match t.chars().last() {
        Some('s') => (&t[..t.len() - 1], 1),
        Some('m') => (&t[..t.len() - 1], 60),
        Some('h') => (&t[..t.len() - 1], 3600),
        _ => (t, 1),
    };
    num.trim()
        .parse::<u64>()
        .ok()
        .filter(|v| *v > 0)
        .map(|v| Duration::from_secs(v * mult))
        .ok_or_else(|| bad(format!("--budget `{s}`: expected a duration like 90s, 5m or 1h")))
}

fn parse_sizes(list: &[String]) -> Result<BTreeMap<String, i64>, CliError> {
    let mut out = BTreeMap::new();
    for s in list {
        let (k, v) = s.split_once('=').ok_or_else(|| bad(format!("--size `{s}`: expected NAME=VALUE")))?;
        let v = v
            .trim()
            .parse::<i64>()
            .ok()
            .filter(|v| *v >= 1)
            .ok_or_else(|| bad(format!("--size `{s}`: value must be a positive integer")))?;
        out.insert(k.trim().to_string(), v);
    }
    Ok(out)
}

pub(crate) fn explore_cmd(a: &ExploreArgs) -> Result<(), CliError> {
    let (_, program) = crate::harness::variant::load_program(&a.file).map_err(bad)?;
    let mut opts = ExploreOptions {
        def: a.def.clone(),
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
        config: None,
    };
    if let Some(path) = &a.config {
        let cfg =
            crate::harness::config::load(path, std::path::Path::new(".")).map_err(|e| bad(e.to_string()))?;
        crate::explore::measure::Oracle::from_config(&cfg).map_err(bad)?;
        if let Some(d) = program.def(&a.def) {
            if let Some(p) = d.params.iter().find(|p| !cfg.inputs.iter().any(|i| i.name == p.name)) {
                return Err(bad(format!(
                    "--config {}: it has no input `{}` for `def {}`'s parameter",
                    path.display(),
                    p.name,
                    a.def
                )));
            }
        }
        opts.config = Some(cfg);
    }
    for t in &a.then {
        if program.def(t).is_none() {
            return Err(bad(format!("{}: --then {t}: no `def {t}` in the program", a.file.display())));
        }
    }
    let file = a.file.display().to_string();
    let devices = explore::select_devices(&a.device).map_err(|e| bad(e.to_string()))?;
    for d in &devices {
        eprintln!("device: {}", d.short());
    }
    let report = explore::explore(&program, &devices, &opts).map_err(|e| match e {
        ExploreError::NoDef(_) | ExploreError::MissingSize(_) | ExploreError::Rewrite(_) => {
            bad(format!("{file}: {e}"))
        }
        ExploreError::Locked(crate::harness::outfile::LockError::Held { .. }) => bad(e.to_string()),
        ExploreError::Log(_)
        | ExploreError::Runtime(_)
        | ExploreError::Io { .. }
        | ExploreError::Locked(_) => CliError::Failed(e.to_string()),
    })?;
    for n in &report.notes {
        eprintln!("warning: {n}");
    }
    println!("{} shapes; log {}", report.shapes, report.csv.display());
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
                for f in &d.files {
                    println!("  wrote {}", f.display());
                }
            }
            None => println!("{}: {} tried, none valid", d.device, d.tried),
        }
    }
    if any {
        Ok(())
    } else {
        Err(CliError::Failed("no candidate validated".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets() {
        assert_eq!(parse_budget("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_budget("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_budget("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse_budget("20").unwrap(), Duration::from_secs(20));
        let e = parse_budget("soon").unwrap_err();
        assert_eq!(e.message(), "--budget `soon`: expected a duration like 90s, 5m or 1h");
        assert_eq!(e.code(), 2);
    }
}
