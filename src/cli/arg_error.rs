//! The command line's own typed errors: values clap's parsers refuse
//! (clap prints them after its `invalid value` words), `lift exec`'s
//! inputs and output that do not fit the def, and `lift explore`'s checks
//! before and after a search. `CliError` receives their rendering.

use super::MAX_RUNS;
use crate::arith::{ArithExpr, EvalError};
use crate::harness::roofline::RooflineError;
use crate::launch::LaunchError;
use crate::runtime::RuntimeError;
use crate::types::{Sizes, Type};
use crate::validate::InputSizeError;

/// A flag's value that its parser refuses.
#[derive(Debug, thiserror::Error)]
pub enum ArgError {
    #[error("`{0}`: expected a positive integer, at most {MAX_RUNS}")]
    RunCount(String),
    #[error("`{0}`: expected an integer from 0 to {MAX_RUNS}")]
    WarmupCount(String),
    #[error("`{0}`: expected a finite number of at least 0")]
    Tolerance(String),
    /// `--depth`, with its upper bound.
    #[error("`{text}`: expected an integer from 0 to {max}")]
    Depth { text: String, max: usize },
}

/// Why `lift exec` cannot pass an input, or read back the output.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// An element type that is no scalar, vector or tuple of one scalar type.
    #[error("element type {0} cannot be passed from a .npy file")]
    NotNpyElement(Type),
    #[error(
        "input `{name}` has shape {shape:?}; its last dimension must be the vector width {width} ({ty})"
    )]
    VectorWidth { name: String, shape: Vec<usize>, width: usize, ty: Type },
    #[error("input `{name}` has shape {shape:?}; {ty} needs {want} dimension(s)")]
    Dimensions { name: String, shape: Vec<usize>, ty: Type, want: usize },
    #[error("input `{name}`: length `{len}`: {source}; pass --size")]
    UnknownLength { name: String, len: ArithExpr, source: EvalError },
    /// Boxed: the largest, and rare.
    #[error(transparent)]
    Length(Box<LengthMismatch>),
    #[error("input `{name}`: a {ty} needs a .npy file")]
    NeedsNpy { name: String, ty: Type },
    #[error("input `{name}`: `{text}` is not a {ty}")]
    NotA { name: String, text: String, ty: Type },
    /// A length of the output (`what`) that the sizes do not give.
    #[error("{what} `{expr}`: {source}; pass --size")]
    Unsized { what: &'static str, expr: ArithExpr, source: EvalError },
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error(transparent)]
    Launch(#[from] LaunchError),
    #[error("the output buffer is missing")]
    NoOutput,
}

/// An input whose shape gives a length other than the sizes do.
#[derive(Debug, thiserror::Error)]
#[error("input `{name}` has shape {shape:?}, but `{len}` = {value} with sizes {sizes:?}")]
pub struct LengthMismatch {
    pub name: String,
    pub shape: Vec<usize>,
    pub len: ArithExpr,
    pub value: i64,
    pub sizes: Sizes,
}

/// `lift explore`'s checks of the inputs before a search and of the
/// best candidate's traffic after it.
#[derive(Debug, thiserror::Error)]
pub enum ExploreCheckError {
    #[error(transparent)]
    Sizes(#[from] InputSizeError),
    #[error(
        "input `{name}` needs {bytes} bytes, more than {device} allocates at once ({max_alloc} bytes, CL_DEVICE_MAX_MEM_ALLOC_SIZE)"
    )]
    OverAlloc { name: String, bytes: u64, device: String, max_alloc: u64 },
    #[error("the inputs need {total} bytes together, more than the global memory of {device} ({global_mem} bytes)")]
    OverGlobal { total: u64, device: String, global_mem: u64 },
    #[error("device not found")]
    NoDevice,
    #[error(transparent)]
    Roofline(#[from] RooflineError),
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
}
