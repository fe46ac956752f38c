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
use super::expected::{ConfigReference, ExpectedError};
pub use super::search_spec::{Oracle, SearchSpec};
use crate::explore::{self, space::SpaceLimits, ExploreError, ExploreOptions};
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

/// Why a benchmark has no explored program for this device (its row is
/// skipped, saying this).
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// An earlier search found none and wrote why into the cache folder.
    #[error("{why} (delete {} to explore again)", dir.display())]
    Recorded { why: String, dir: PathBuf },
    #[error("exploring is off (--explore-budget 0)")]
    Off,
    #[error("the search ran on no device")]
    NoDevice,
    #[error("a search of {secs}s found no valid program ({tried} tried; log {})", log.display())]
    NoneValid { secs: u64, tried: usize, log: PathBuf },
    /// Recording a search that found none.
    #[error("{}: {source}", dir.display())]
    Record { dir: PathBuf, source: std::io::Error },
    #[error("no size preset `{0}`")]
    NoPreset(String),
    #[error(transparent)]
    Load(#[from] crate::parse::LoadError),
    #[error(transparent)]
    Oracle(#[from] ExpectedError),
    #[error(transparent)]
    Explore(#[from] ExploreError),
}

/// The cached program of the device, or a new search's; `Err` says why
/// there is none.
pub fn device_program(s: &SearchRun) -> Result<Found, SearchError> {
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
        return Err(SearchError::Recorded { why: why.trim().to_string(), dir: s.dir.to_path_buf() });
    }
    let budget = s.budget.ok_or(SearchError::Off)?;
    let report = search(s, budget)?;
    let d = report.devices.first().ok_or(SearchError::NoDevice)?;
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
            let why =
                SearchError::NoneValid { secs: budget.as_secs(), tried: d.tried, log: report.csv.clone() };
            crate::outfile::replace(&s.dir.join(NONE_FILE), format!("{why}\n").as_bytes())
                .map_err(|source| SearchError::Record { dir: s.dir.to_path_buf(), source })?;
            Err(why)
        }
    }
}

/// The presets' sizes: `at` and the `valid_at` ones, with the run's
/// presets among the latter.
fn sizes_of(s: &SearchRun) -> Result<(Sizes, Vec<Sizes>), SearchError> {
    let sizes =
        |p: &str| s.cfg.preset(p).map(|(_, b)| b.clone()).ok_or_else(|| SearchError::NoPreset(p.into()));
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
fn search(s: &SearchRun, budget: Duration) -> Result<explore::Report, SearchError> {
    let (_, program) = crate::parse::load_program(&s.spec.program)?;
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
        // The harness compiles the program as its config says
        // (`static_sizes`), so the search times it for every size.
        specialise: false,
    };
    Ok(explore::explore(&program, std::slice::from_ref(s.device), &opts)?)
}
