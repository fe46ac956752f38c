//! One runner per kind of variant, behind one trait, listed in one
//! registry. A runner says which variants a config offers and which it
//! claims, and runs one for a benchmark at one size: it hands back an
//! [`Execution`] (or why there is none); `super::runner` validates it and
//! turns it into the results row. Runners never build rows themselves.
//!
//! Adding a peer is a new file here implementing [`VariantRunner`] and one
//! line in [`Registry::new`] (`docs/ARCHITECTURE.md` gives the steps).

mod clblast;
mod cublas;
mod explored;
mod halide;
mod lift;
mod reference;

use super::clock::Timing;
use super::config::Config;
use super::data::{Arrays, Sizes};
use super::roofline::Roofline;
use super::variant::{Execution, Workload};
use super::variant_name::Variant;
use crate::launch::RunCounts;
use crate::runtime::Runtime;
use indicatif::ProgressBar;
use std::path::PathBuf;

/// What to run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Size presets, in order.
    pub sizes: Vec<String>,
    /// Variants to keep (`reference`, Lift levels, `clblast`); `None`: all.
    pub variants: Option<Vec<Variant>>,
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

impl RunOptions {
    /// Whether the user asked for `v` by name (`--variants`).
    pub fn asked_for(&self, v: &Variant) -> bool {
        self.variants.as_ref().is_some_and(|k| k.contains(v))
    }
}

/// One benchmark at one size on one device: what every runner reads.
pub struct Bench<'a> {
    pub cfg: &'a Config,
    /// The size preset's name.
    pub preset: &'a str,
    pub sizes: &'a Sizes,
    pub rt: &'a Runtime,
    pub opts: &'a RunOptions,
    pub inputs: &'a Arrays,
    pub buffers: &'a Arrays,
    /// The run's progress bar (a search shows itself on it).
    pub progress: &'a ProgressBar,
}

impl<'a> Bench<'a> {
    /// The config and data every variant runs on.
    pub fn workload(&self) -> Workload<'a> {
        Workload { cfg: self.cfg, sizes: self.sizes, inputs: self.inputs, buffers: self.buffers }
    }
}

/// Why a variant gave no execution.
#[derive(Clone, Debug, PartialEq)]
pub enum Failure {
    /// Not run: a library, program or section it needs is missing.
    Skipped { timing: Timing, message: String },
    /// It did not build or run.
    Error { timing: Timing, message: String },
}

impl Failure {
    /// An error of a variant timed by OpenCL profiling events.
    pub fn error(message: impl std::fmt::Display) -> Failure {
        Failure::Error { timing: Timing::Profiling, message: message.to_string() }
    }

    /// What the row's message says.
    pub fn message(&self) -> &str {
        match self {
            Failure::Skipped { message, .. } | Failure::Error { message, .. } => message,
        }
    }
}

/// One row's worth of a runner's work.
#[derive(Debug)]
pub struct Outcome {
    /// The row's variant.
    pub variant: Variant,
    pub result: Result<Execution, Failure>,
    /// Said before everything else in the row's message (`note; rest`).
    pub note_before: Option<String>,
}

impl Outcome {
    pub fn new(variant: Variant, result: Result<Execution, Failure>) -> Outcome {
        Outcome { variant, result, note_before: None }
    }
}

/// A kind of variant: the reference, the Lift levels, a peer...
pub trait VariantRunner {
    /// The variants `cfg` has of this kind, in row order (a run with
    /// `opts` may ask for more, such as `explored-other`).
    fn offers(&self, cfg: &Config, opts: Option<&RunOptions>) -> Vec<Variant>;
    /// Whether this runner runs `v`.
    fn claims(&self, v: &Variant) -> bool;
    /// Runs `v` (one it claims); one outcome per row (`explored-other`
    /// gives one per other device, maybe none).
    fn run(&self, bench: &Bench, v: &Variant) -> Vec<Outcome>;
}

/// Every runner, in the order their rows are written.
pub struct Registry {
    runners: Vec<Box<dyn VariantRunner>>,
}

impl Registry {
    /// The one list of runners. A peer's runner goes here, one line each.
    pub fn new() -> Registry {
        Registry {
            runners: vec![
                Box::new(reference::Reference),
                Box::new(lift::Lift),
                Box::new(explored::Explored),
                Box::new(clblast::ClBlastRunner::default()),
                Box::new(cublas::CuBlasRunner::default()),
                Box::new(halide::Halide),
            ],
        }
    }

    /// The runner of `v`, if any claims it.
    pub fn runner_for(&self, v: &Variant) -> Option<&dyn VariantRunner> {
        self.runners.iter().find(|r| r.claims(v)).map(|r| r.as_ref())
    }

    /// Every variant `cfg` offers, in row order.
    pub fn offers(&self, cfg: &Config, opts: Option<&RunOptions>) -> Vec<Variant> {
        self.runners.iter().flat_map(|r| r.offers(cfg, opts)).collect()
    }
}

impl Default for Registry {
    fn default() -> Registry {
        Registry::new()
    }
}
