//! Why a variant (the reference, a Lift level, an explored program, a
//! vendor BLAS or the Halide peer) gave no execution. Its row's `error`
//! text is this enum's rendering; the layers below keep their own types
//! and render through them ([`RunError::Runtime`], [`RunError::Launch`]...).

use super::buildopts::BuildOptsError;
use super::npy::NpyError;
use crate::arith::{ArithExpr, EvalError};
use crate::compile::CompileError;
use crate::ir::ReadError;
use crate::launch::LaunchError;
use crate::passes::sizes_fit::SizeFitError;
use crate::rewrite::RewriteError;
use crate::runtime::{BlasError, RuntimeError};
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error(transparent)]
    Blas(#[from] BlasError),
    #[error(transparent)]
    Npy(#[from] NpyError),
    #[error(transparent)]
    Launch(#[from] LaunchError),
    #[error(transparent)]
    BuildOptions(#[from] BuildOptsError),
    #[error(transparent)]
    Read(#[from] ReadError),
    /// A load, compile or derivation error as `ir::SourceFile` renders it
    /// for a row: file and position, never the text of the line.
    #[error("{0}")]
    Located(String),
    /// A config's `args` that misses a parameter of the kernel's def.
    #[error("{}: {section}: `args` does not bind parameter `{param}` of `{def}`", file.display())]
    Unbound { file: PathBuf, section: &'static str, def: String, param: String },
    #[error("size `{0}` is not bound by the preset")]
    UnknownSize(String),
    /// `reference` or `lift`.
    #[error("no {0} section")]
    NoSection(&'static str),
    #[error("unknown Lift variant `{0}`")]
    UnknownVariant(String),
    #[error("unknown Lift level `{0}`")]
    UnknownLevel(String),
    #[error("level `all` is missing")]
    NoLevelAll,
    /// `section.output` names a scalar input.
    #[error("{section}.output `{name}` is a scalar, not a buffer")]
    ScalarOutput { section: &'static str, name: String },
    #[error("explored.output `{0}` is not a buffer")]
    NotABuffer(String),
    #[error("argument `{expr}` of `{kernel}`: {source}")]
    Argument { expr: ArithExpr, kernel: String, source: EvalError },
    /// A file that could not be read, or an executable that could not start.
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}: error: {source}", path.display())]
    Prepare { path: PathBuf, source: RewriteError },
    #[error("{}: error: {source}", path.display())]
    Compile { path: PathBuf, source: CompileError },
    /// Sizes that break a fact the program needs, where no span names the place.
    #[error("{}: {source}", path.display())]
    SizeFit { path: PathBuf, source: SizeFitError },
    #[error("element of `{name}`: {source}")]
    ElementSize { name: String, source: EvalError },
    #[error("{}: no def `{def}`", path.display())]
    NoDef { path: PathBuf, def: String },
    /// The last alternative def's constraint that fails at these sizes.
    #[error("{}: def {def}: {source}", path.display())]
    DefMisfit { path: PathBuf, def: String, source: SizeFitError },
    #[error("{}: no def to run", .0.display())]
    NoDefToRun(PathBuf),
    #[error("size of intermediate `{name}`: {source}")]
    IntermediateSize { name: String, source: EvalError },
    /// A CLBlast or cuBLAS dimension (`what`: m, n, k...).
    #[error("clblast {what} `{expr}`: {source}")]
    BlasDim { what: &'static str, expr: ArithExpr, source: EvalError },
    #[error("clblast {what} `{expr}` is {value}")]
    BlasNegative { what: &'static str, expr: ArithExpr, value: i64 },
    #[error("clblast: scalar input `{0}` is not a float")]
    BlasScalar(String),
    /// `library`: `clblast` or `cublas`.
    #[error("{library}: no device buffer `{name}`")]
    NoDeviceBuffer { library: &'static str, name: String },
    #[error("cublas: `{name}` holds {bytes} bytes, the call needs {need}")]
    BufferTooSmall { name: String, bytes: usize, need: usize },
    #[error("no array `{0}`")]
    NoArray(String),
    #[error("shape of `{name}`: {source}")]
    Shape { name: String, source: EvalError },
    #[error("shape of `{name}`: {value} is negative")]
    NegativeDim { name: String, value: i64 },
    /// The peer's executable failed; `last`: the last line it printed.
    #[error("{} exited with {status}: {last}", exe.display())]
    Exited { exe: PathBuf, status: std::process::ExitStatus, last: String },
    #[error("the Halide executable printed no `median_ms=<x>` line")]
    NoMedian,
    #[error("`median_ms={0}` is not a positive number")]
    BadMedian(String),
    #[error("`device_ms={0}` is not a positive number")]
    BadDeviceTime(String),
    #[error("unknown clock `{0}` (expected profiling or cuda-events)")]
    UnknownClock(String),
    #[error("`device_ms` without `clock=<clock>`")]
    NoClock,
    #[error("the Halide output has shape {got:?}, expected {want:?}")]
    OutputShape { got: Vec<usize>, want: Vec<usize> },
}

/// Why a peer is not run at all: its row is `skipped`, saying this.
#[derive(Debug, thiserror::Error)]
pub enum Unavailable {
    /// CLBlast, cuBLAS or the CUDA runtime did not load.
    #[error(transparent)]
    Library(#[from] BlasError),
    /// cuBLAS on a device of another vendor (named).
    #[error("cuBLAS runs on NVIDIA devices only; this is {0}")]
    NotNvidia(String),
    /// A config's executable whose links lead out of the repository's `peers/`.
    #[error(
        "{} resolves outside {}; a config runs no other program unless lift is given --allow-config-executables",
        exe.display(),
        dir.display()
    )]
    Outside { exe: PathBuf, dir: PathBuf },
    #[error(
        "no Halide executable ({}; the PATH is searched only with --allow-config-executables)",
        listed(tried)
    )]
    NoExecutable { tried: Vec<PathBuf> },
    #[error("no Halide executable ({} or `{name}` on the PATH)", listed(tried))]
    NotOnPath { tried: Vec<PathBuf>, name: String },
}

/// Paths as a message lists them.
fn listed(paths: &[PathBuf]) -> String {
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
}
