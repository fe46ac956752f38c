//! Bad input (exit 2): the lower layers' errors about what the user gave,
//! and the command line's own checks of flags, files and sizes. `String`
//! fields hold what the user typed (a flag's value, a name).

use super::arg_error::{ExecError, ExploreCheckError};
use super::explore_cmd::MAX_BUDGET_SECS;
use crate::arith::{ArithExpr, EvalError};
use crate::compile::CompileError;
use crate::explore::shard::MergeError;
use crate::explore::ExploreError;
use crate::harness::builds::BuildsError;
use crate::harness::chart::ChartError;
use crate::harness::config::{ConfigError, LIFT_LEVELS};
use crate::harness::expected::ExpectedError;
use crate::harness::generality::GeneralityError;
use crate::harness::npy::NpyError;
use crate::harness::report::ReportError;
use crate::harness::results::ResultsError;
use crate::ir::{ReadError, SourceFile};
use crate::parse::LoadError;
use crate::passes::sizes_fit::{SizeFitError, MAX_ELEMS};
use crate::rewrite::derivation::{DerivationError, DeriveFileError};
use crate::rewrite::RewriteError;
use crate::runtime::RuntimeError;
use crate::types::HostMemError;
use std::io;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum BadInput {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error(transparent)]
    Results(#[from] ResultsError),
    #[error(transparent)]
    Builds(#[from] BuildsError),
    #[error(transparent)]
    Chart(#[from] ChartError),
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Derive(#[from] DeriveFileError),
    #[error(transparent)]
    Npy(#[from] NpyError),
    #[error(transparent)]
    Exec(#[from] ExecError),
    #[error(transparent)]
    HostMem(#[from] HostMemError),
    #[error(transparent)]
    Expected(#[from] ExpectedError),
    #[error(transparent)]
    Explore(#[from] ExploreError),
    #[error(transparent)]
    Merge(#[from] MergeError),
    #[error(transparent)]
    Generality(#[from] GeneralityError),
    #[error(transparent)]
    Report(#[from] ReportError),
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error(transparent)]
    Source(#[from] InSource),

    // Flag values.
    #[error("--variants: `{0}` is not reference, {levels}, clblast, halide, explored, explored-other, cublas or lift-<name>", levels = LIFT_LEVELS.join(", "))]
    Variant(String),
    #[error("--suite: no benchmark of suite `{suite}`; known: {}", .known.join(", "))]
    Suite { suite: String, known: Vec<String> },
    #[error("no benchmark `{name}`; known: {}", .known.join(", "))]
    Benchmark { name: String, known: Vec<String> },
    #[error("--size {size}: no selected benchmark defines this preset (they define: {})", .known.join(", "))]
    Preset { size: String, known: Vec<String> },
    /// `--local`/`--global` (`flag`) with no, or more than 3, sizes.
    #[error("--{flag} `{text}`: expected 1 to 3 comma-separated sizes")]
    DimCount { flag: &'static str, text: String },
    #[error("--{flag} `{text}`: `{part}` is not a positive integer")]
    Dim { flag: &'static str, text: String, part: String },
    #[error("--size `{0}`: expected NAME=VALUE")]
    SizeSyntax(String),
    #[error("--size `{0}`: value must be a positive integer")]
    SizeValue(String),
    #[error("--size `{0}`: at most {MAX_ELEMS} (kernels index with 32-bit ints)")]
    SizeTooLarge(String),
    /// A `--size` name that no parameter type of the def uses (`known`:
    /// those it uses).
    #[error("--size `{size}`: `def {def}` of {} has no size `{size}` (its sizes: {})", .file.display(), list_or_none(.known))]
    UnknownSize { size: String, def: String, file: PathBuf, known: Vec<String> },
    /// `--budget`/`--explore-budget` (`flag`).
    #[error("{flag} `{text}`: expected a duration like 90s, 5m or 1h")]
    Duration { flag: &'static str, text: String },
    #[error("{flag} `{text}`: at most a week ({MAX_BUDGET_SECS}s, 10080m or 168h)")]
    DurationTooLong { flag: &'static str, text: String },
    #[error("--input `{0}`: expected NAME=FILE.npy or NAME=NUMBER")]
    InputSyntax(String),
    #[error("missing --input {0}=...")]
    MissingInput(String),
    #[error("--input `{name}`: `{def}` has no such parameter")]
    UnknownInput { name: String, def: String },

    // Files and folders.
    /// `--out` that is a link, or cannot be made.
    #[error("--out: {0}")]
    Out(io::Error),
    #[error("--out: cannot write in {}: {source}", .dir.display())]
    OutDir { dir: PathBuf, source: io::Error },
    #[error("-o {}: {source}", .path.display())]
    WriteOut { path: PathBuf, source: io::Error },
    /// `lift exec --output`, probed before running.
    #[error("--output {}: {source}", .path.display())]
    Output { path: PathBuf, source: io::Error },
    /// `lift rewrite -o`.
    #[error("{}: {source}", .path.display())]
    Write { path: PathBuf, source: io::Error },
    #[error("standard output: {0}")]
    Stdout(io::Error),
    #[error("{}: no such file", .0.display())]
    NoSuchFile(PathBuf),
    #[error("{} config(s) broken", .0)]
    BrokenConfigs(usize),
    #[error("--from {}: expected a config with an `explored.explore:` block (docs/CONFIG.md)", .0.display())]
    NoSearch(PathBuf),
    #[error("--config {}: it has no input `{input}` for `def {def}`'s parameter", .config.display())]
    ConfigInput { config: PathBuf, input: String, def: String },

    // The program and its defs.
    /// A def the program lost to its derivation.
    #[error("{}: no `def {def}`", .file.display())]
    NoDef { file: PathBuf, def: String },
    #[error("{}: --then {def}: no `def {def}` in the program", .file.display())]
    NoThen { file: PathBuf, def: String },
    #[error("no def `{0}`")]
    NoDefNamed(String),
    #[error("parameter `{param}` of `{def}` has no type")]
    Untyped { param: String, def: String },
    #[error("untyped parameter")]
    UntypedParameter,
    #[error("def {def}: {source}")]
    Rewrite { def: String, source: RewriteError },
    #[error("{}: {source}", .file.display())]
    Prepare { file: PathBuf, source: RewriteError },
    /// A derivation file (`file`) that does not parse or replay.
    #[error("{}", .source.render(.file))]
    Derivation { file: String, source: DerivationError },
    /// An error of the search in the program `file` (no def, a size
    /// missing, a rewrite that fails).
    #[error("{file}: {source}")]
    ExploreIn { file: String, source: ExploreError },
    #[error("{file}: --size: {source}")]
    InputsFit { file: String, source: ExploreCheckError },

    // `lift exec`'s inputs, buffers and launch sizes.
    /// An int32 .npy input (`file`) for a float array with a value that
    /// no float holds exactly.
    #[error("{file}: int32 value {value} at flat index {index} has no exact float, but `{param}` is a float array")]
    InexactFloat { file: String, value: i32, index: usize, param: String },
    #[error("input `{0}`: float data for an int array")]
    FloatForInt(String),
    #[error("`{expr}`: {source}")]
    Unsized { expr: ArithExpr, source: EvalError },
    #[error("{what} would have {bytes} bytes")]
    NegativeBytes { what: Buffer, bytes: i64 },
    #[error("{what} needs {bytes} bytes, more than the device allocates at once ({max_alloc} bytes, CL_DEVICE_MAX_MEM_ALLOC_SIZE)")]
    OverAlloc { what: Buffer, bytes: i64, max_alloc: u64 },
    #[error(
        "the buffers need {total} bytes together, more than the device's global memory ({global_mem} bytes)"
    )]
    OverGlobal { total: i64, global_mem: u64 },
    #[error("local array `{name}` needs {bytes} bytes at these sizes, more than the device's local memory ({local_mem} bytes)")]
    OverLocal { name: String, bytes: i64, local_mem: u64 },
    #[error("--check: {what} has {elems} elements, more than the interpreter's budget of {limit}; check at smaller sizes")]
    CheckBudget { what: Buffer, elems: u64, limit: u64 },
    #[error("global size {size} in dimension {dim}: expected 1 to {MAX_ELEMS}")]
    GlobalSize { size: i64, dim: usize },
    #[error("local size {size} in dimension {dim}: expected a positive size")]
    LocalSize { size: i64, dim: usize },
    #[error("local size {local} does not divide global size {global} in dimension {dim}")]
    LocalDivides { local: i64, global: i64, dim: usize },
    #[error("local size {local:?} has {count} work-items, more than the device's {max} (CL_DEVICE_MAX_WORK_GROUP_SIZE)")]
    WorkGroup { local: Vec<i64>, count: i64, max: usize },

    // Usage.
    #[error("lift builds: --chart writes beside the CSV: give -o FILE")]
    ChartWithoutOut,
    #[error("expected a .lift file and --def, or --from CONFIG")]
    ExploreUsage,
    #[error("--merge: no device selected")]
    MergeNoDevice,
    #[error("lift rewrite: expected a .lift file (or --rules)")]
    RewriteUsage,
}

/// An error placed in the source file it is about (`file:line:col: error:`).
#[derive(Debug, thiserror::Error)]
pub enum InSource {
    /// `def: None`: the file has no `def`; `have`: the defs it has.
    #[error("{}", .file.missing_def(.def.as_deref(), &.have.iter().map(String::as_str).collect::<Vec<_>>()))]
    MissingDef { file: SourceFile, def: Option<String>, have: Vec<String> },
    #[error("{}", .file.error_in(.source.span(), .source))]
    Compile { file: SourceFile, source: CompileError },
    /// Sizes that do not fit the program: at the fact's place, else
    /// `file: message`.
    #[error("{}", sizes_fit_text(.file, .source))]
    SizesFit { file: SourceFile, source: SizeFitError },
}

fn sizes_fit_text(file: &SourceFile, e: &SizeFitError) -> String {
    match e.span {
        Some(span) => file.error_at(span, e),
        None => format!("{}: {e}", file.name),
    }
}

/// A buffer `lift exec` allocates, as its messages name it.
#[derive(Debug, thiserror::Error)]
pub enum Buffer {
    #[error("input `{0}`")]
    Input(String),
    #[error("the output")]
    Output,
    #[error("temporary `{0}`")]
    Temporary(String),
}

/// `1, 2, 3`, or `none`.
fn list_or_none(xs: &[String]) -> String {
    if xs.is_empty() {
        "none".to_string()
    } else {
        xs.join(", ")
    }
}
