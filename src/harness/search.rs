//! The search run by the harness (`lift run`/`lift all` with
//! `--explore-budget`): a device with no committed explored program gets
//! one found here, from the config's `explored.explore:` block, and cached
//! under the output folder so that a second run (or `--resume`) reuses it
//! without searching again.
//!
//! The block says what `.ci/explore-icfp15.sh` and `.ci/explore-cgo18.sh`
//! pass `lift explore` on the command line: the high-level program and
//! def, the second stages (`then`), the size preset timed (`at`), the
//! presets the kept program must also fit (`valid_at`) and whether the
//! config validates the candidates (`oracle`).

use super::config::Config;
use super::data::Sizes;
use super::expected::ConfigReference;
pub use super::search_spec::{Oracle, SearchSpec};
use crate::explore::{self, space::SpaceLimits, ExploreOptions};
use crate::launch::RunCounts;
use crate::runtime::DeviceInfo;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// A program the harness found (or found in an earlier run's cache).
#[derive(Clone, Debug)]
pub struct Found {
    /// `<cache>/best.lift`.
    pub file: PathBuf,
    /// How it came to be, for the row's message.
    pub note: String,
}

/// Written beside the log when a search ended without a program, so that
/// the next run does not search again (delete the folder to do so).
const NONE_FILE: &str = "none.txt";

/// Whether the cache folder `dir` already answers (a program, or a search
/// that found none): then no search runs.
pub fn answered(dir: &Path) -> bool {
    dir.join("best.lift").is_file() || dir.join(NONE_FILE).is_file()
}

/// What one search is given.
pub struct SearchRun<'a> {
    pub cfg: &'a Config,
    pub spec: &'a SearchSpec,
    pub device: &'a DeviceInfo,
    /// `None`: exploring is off (a cached program is still used).
    pub budget: Option<Duration>,
    /// The cache: `<out>/<device-slug>/explored/<benchmark>/`.
    pub dir: &'a Path,
    /// The presets this run times: the program must fit them too.
    pub run_presets: &'a [String],
    pub counts: RunCounts,
}

/// The cached program of the device, or a new search's; `Err` says why
/// there is none.
pub fn device_program(s: &SearchRun) -> Result<Found, String> {
    let best = s.dir.join("best.lift");
    if best.is_file() {
        return Ok(Found {
            file: best,
            note: format!(
                "explored on this device by an earlier run (cached in {}; delete it to explore again)",
                s.dir.display()
            ),
        });
    }
    if let Ok(why) = std::fs::read_to_string(s.dir.join(NONE_FILE)) {
        return Err(format!("{} (delete {} to explore again)", why.trim(), s.dir.display()));
    }
    let budget = s.budget.ok_or("exploring is off (--explore-budget 0)")?;
    let report = search(s, budget)?;
    let d = report.devices.first().ok_or("the search ran on no device")?;
    match &d.best {
        Some(b) if best.is_file() => Ok(Found {
            file: best,
            note: format!(
                "explored in this run: {} tried, {} valid in {}s, best {:.4} ms at `{}` (log {})",
                d.tried,
                d.valid,
                budget.as_secs(),
                b.median_ms,
                s.spec.at,
                report.csv.display()
            ),
        }),
        _ => {
            let why = format!(
                "a search of {}s found no valid program ({} tried; log {})",
                budget.as_secs(),
                d.tried,
                report.csv.display()
            );
            crate::outfile::replace(&s.dir.join(NONE_FILE), format!("{why}\n").as_bytes())
                .map_err(|e| format!("{}: {e}", s.dir.display()))?;
            Err(why)
        }
    }
}

/// The presets' sizes: `at` and the `valid_at` ones, with the run's
/// presets among the latter.
fn sizes_of(s: &SearchRun) -> Result<(Sizes, Vec<Sizes>), String> {
    let sizes =
        |p: &str| s.cfg.preset(p).map(|(_, b)| b.clone()).ok_or_else(|| format!("no size preset `{p}`"));
    let at = sizes(&s.spec.at)?;
    let mut valid_at = Vec::new();
    for p in s.spec.valid_at.iter().chain(s.run_presets) {
        if *p == s.spec.at || s.cfg.preset(p).is_none() {
            continue;
        }
        let v = sizes(p)?;
        if !valid_at.contains(&v) {
            valid_at.push(v);
        }
    }
    Ok((at, valid_at))
}

/// One search on the device into the cache folder (resuming its log,
/// where an earlier search was cut short).
fn search(s: &SearchRun, budget: Duration) -> Result<explore::Report, String> {
    let (_, program) = crate::parse::load_program(&s.spec.program).map_err(|e| e.to_string())?;
    let (sizes, valid_at) = sizes_of(s)?;
    let reference: Option<Arc<dyn crate::validate::Reference>> = match s.spec.oracle {
        Oracle::Config => Some(Arc::new(ConfigReference::new(s.cfg.clone())?)),
        Oracle::Interpreter => None,
    };
    let opts = ExploreOptions {
        def: s.spec.def.clone(),
        sizes,
        budget,
        seed: 1,
        out: s.dir.to_path_buf(),
        resume: true,
        limits: SpaceLimits { reductions: !s.spec.then.is_empty(), valid_at, ..SpaceLimits::default() },
        max_candidates: None,
        warmup: s.counts.warmup.min(1),
        // As `lift explore`'s default at most: more runs per candidate
        // leave fewer candidates in the budget.
        runs: s.counts.runs.clamp(1, 5),
        // The harness's own bar says what runs.
        progress: false,
        then: s.spec.then.clone(),
        reference,
    };
    explore::explore(&program, std::slice::from_ref(s.device), &opts).map_err(|e| e.to_string())
}
