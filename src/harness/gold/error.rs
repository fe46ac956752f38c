//! What a gold function or an input generator refuses: a size or input it
//! reads that is missing or of the wrong shape, or sizes its computation
//! cannot serve. Every message is written here; a row's `error` text is
//! its rendering.
//!
//! The lookups come in three wordings, one per family of gold functions
//! (`part2` and `cgo18`; `part1` and `icfp15`; `basic`), which the results
//! files already carry: each family has its variants.

/// Why a gold function or generator gave no result.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum GoldError {
    // The lookups of `part2` and `cgo18`.
    #[error("size `{0}` is not bound")]
    SizeUnbound(String),
    #[error("size `{name}` = {value} must be positive")]
    SizeNotPositive { name: String, value: i64 },
    #[error("input `{name}` has {len} elements, expected {expected}")]
    InputLength { name: String, len: usize, expected: usize },
    #[error("input `{0}` is int, expected float")]
    InputNotFloat(String),
    #[error("input `{0}` is missing")]
    InputMissing(String),
    /// A product of sizes past `usize`.
    #[error("{0:?} overflows")]
    Overflow(Vec<usize>),
    #[error(transparent)]
    Part1(#[from] Part1Lookup),
    #[error(transparent)]
    Basic(#[from] BasicLookup),
    #[error("dot needs x and y of N = {0} elements, a multiple of 128")]
    DotLength(usize),
    #[error("transpose needs x of M*N = {expected} elements, got {len}")]
    TransposeLength { expected: usize, len: usize },
    #[error("scalar `{0}` is empty")]
    EmptyScalar(&'static str),
    #[error("stencil2d needs W, H >= 3")]
    Stencil2dTooSmall,
    #[error("x = {x}, t = {t} and v = {v} must be positive")]
    BlackScholesDomain { x: f64, t: f64, v: f64 },
    #[error("neighbour {j} of atom {atom} is {k}, outside 0..{atoms}")]
    Neighbour { j: usize, atom: usize, k: i32, atoms: usize },
    #[error("{atoms} atoms cannot have {neighbours} distinct neighbours each")]
    TooFewAtoms { atoms: usize, neighbours: usize },
    #[error("points near a boundary need two clusters or more, C = {0}")]
    OneCluster(usize),
    #[error("no point near a boundary found for point {0}")]
    NoBoundaryPoint(usize),
    /// A `part1` or `icfp15` gold function's error, named.
    #[error("gold function {name}: {source}")]
    In { name: String, source: Box<GoldError> },
    /// A `part1` generator's error, named with the input it makes.
    #[error("generator {name} (input {input}): {source}")]
    Generator { name: String, input: String, source: Box<GoldError> },
}

/// A size or input as `part1` and `icfp15` read it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Part1Lookup {
    #[error("size {name} = {value} too large")]
    SizeTooLarge { name: String, value: i64 },
    #[error("size {name} = {value} must be positive")]
    SizeNotPositive { name: String, value: i64 },
    #[error("size {0} is not bound")]
    SizeUnbound(String),
    #[error("input {name} has {len} floats, expected {expected}")]
    FloatsLength { name: String, len: usize, expected: usize },
    #[error("input {name} has {len} ints, expected {expected}")]
    IntsLength { name: String, len: usize, expected: usize },
    #[error("input {0} holds ints, expected floats")]
    NotFloats(String),
    #[error("input {0} holds floats, expected ints")]
    NotInts(String),
    #[error("input {0} is missing")]
    Missing(String),
}

/// A size or input as `basic` reads it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BasicLookup {
    #[error("input `{0}` must be float")]
    NotFloat(String),
    #[error("missing input `{0}`")]
    MissingInput(String),
    #[error("missing size `{0}`")]
    MissingSize(String),
}
