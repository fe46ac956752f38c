//! Interpreter errors. Runtime errors carry the span of the expression
//! being evaluated.

use crate::arith::EvalError;
use crate::ir::c::fault::Fault;
use crate::ir::Span;
use crate::types::Type;

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum InterpError {
    #[error("no `def {0}` in the program")]
    NoSuchDef(String),
    /// A `def` argument is missing or does not match its declared type.
    #[error("argument {name}: {problem}")]
    /// Boxed: an interpreter `Result` stays small on its hot path.
    Argument { name: String, problem: Box<ArgumentProblem> },
    /// A pattern met data it cannot handle (out-of-bounds index, lengths
    /// that do not divide, a type mismatch).
    /// Boxed: an interpreter `Result` stays small on its hot path.
    #[error("{problem}")]
    Runtime { problem: Box<RuntimeProblem>, span: Span },
    /// An error inside a user function's body.
    #[error("in user function `{fun}`: {fault}")]
    UserFun { fun: String, fault: Box<Fault>, span: Span },
    /// The evaluation produced more array elements than the interpreter's
    /// budget (`interp::MAX_WORK`).
    #[error("the interpreter's budget of {limit} array elements is spent here (it holds every value as a tree); validate at smaller sizes")]
    TooLarge { limit: u64, span: Span },
    /// Flat host data does not fit a type.
    /// Boxed: it holds a type.
    #[error("{0}")]
    Data(Box<DataProblem>),
}

/// What is wrong with a `def` argument.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ArgumentProblem {
    #[error("missing")]
    Missing,
    #[error("the parameter has no declared type")]
    Untyped,
    /// The value does not have the declared type `whole` (the sizes bound
    /// so far said as ` with N = 4, ...`, `found` as `Value::describe`).
    #[error("expected {whole}{bound}, found {found}")]
    Mismatch { whole: Type, bound: String, found: String },
    /// A length of the declared type that does not evaluate.
    #[error("{source} in {whole}")]
    Length { source: EvalError, whole: Type },
}

/// What a pattern (or the evaluation around it) cannot do with the data it
/// met. `found` fields are `Value::describe` of the offending value; `what`
/// names the pattern (or its operand) that expected something else.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RuntimeProblem {
    #[error("no user function #{0}")]
    NoSuchFun(u32),
    #[error("parameter #{0} is not bound")]
    Unbound(u32),
    #[error("{0}")]
    Arith(EvalError),
    #[error("{what} expects an array, got {found}")]
    NotAnArray { what: &'static str, found: String },
    #[error("{what}: index {i} out of bounds for an array of {len}")]
    IndexOutOfBounds { what: &'static str, i: i64, len: usize },
    #[error("lambda takes {want} arguments, got {got}")]
    LambdaArity { want: usize, got: usize },
    #[error("pattern expects {want} arguments, got {got}")]
    PatternArity { want: usize, got: usize },
    /// `slide` or `slideSeqPlus` (`name`) with windows that do not fit.
    #[error("{name}({size}, {step}) of an array of {n}")]
    Windows { name: &'static str, size: i64, step: i64, n: i64 },
    #[error("mapVec expects a vector, got {found}")]
    NotAVector { found: String },
    #[error("partRed to {m} of an array of {len}")]
    PartRed { m: i64, len: usize },
    #[error("generate of length {0}")]
    GenerateLength(i64),
    #[error("split({m}) of an array of {len} elements")]
    Split { m: i64, len: usize },
    #[error("scatter writes index {i} of {len}")]
    ScatterIndex { i: i64, len: usize },
    #[error("scatter leaves an element of {len} unwritten")]
    ScatterUnwritten { len: usize },
    #[error("pad({left}, {right}) of an array of {n}")]
    Pad { left: i64, right: i64, n: i64 },
    #[error("padConst({left}, {right}) with a negative amount")]
    PadConstNegative { left: i64, right: i64 },
    #[error("transpose of a ragged array")]
    RaggedTranspose,
    #[error("zip of arrays of different lengths {}", comma_list(lens))]
    ZipLengths { lens: Vec<usize> },
    #[error("get({i}) of {found}")]
    Get { i: usize, found: String },
    #[error("asVector({m}) needs scalars, a multiple of {m} of them")]
    AsVector { m: usize },
    #[error("asScalar of {found}")]
    AsScalar { found: String },
    #[error("asScalar of a tuple with {found}")]
    AsScalarField { found: String },
    #[error("asScalar of a tuple of vectors of different widths")]
    AsScalarWidths,
    #[error("filter index {found}")]
    FilterIndex { found: String },
}

/// `1, 2, 3`.
fn comma_list(xs: &[usize]) -> String {
    xs.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")
}

/// Why flat host data does not make a value of a type (`len`: the data's
/// scalar count).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DataProblem {
    #[error("a value of type {ty} has {used} scalars but the data has {len}")]
    Count { ty: Type, used: usize, len: usize },
    #[error("length of {ty}: {source}")]
    Length { ty: Type, source: EvalError },
    #[error("length {n} of {ty} does not fit {len} scalars")]
    LengthFit { n: i64, ty: Type, len: usize },
    #[error("the data ends after {len} scalars")]
    Short { len: usize },
    #[error("int element {i} is the float {x}")]
    NotInt { i: usize, x: f32 },
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The texts users saw when these errors were preformatted strings.
    #[test]
    fn runtime_problems_render_as_before() {
        let cases: Vec<(RuntimeProblem, &str)> = vec![
            (RuntimeProblem::NoSuchFun(3), "no user function #3"),
            (RuntimeProblem::Unbound(2), "parameter #2 is not bound"),
            (RuntimeProblem::Arith(EvalError::Unbound("N".into())), "unbound variable `N`"),
            (
                RuntimeProblem::NotAnArray { what: "map", found: "an int".into() },
                "map expects an array, got an int",
            ),
            (
                RuntimeProblem::IndexOutOfBounds { what: "gather", i: -1, len: 4 },
                "gather: index -1 out of bounds for an array of 4",
            ),
            (RuntimeProblem::LambdaArity { want: 2, got: 1 }, "lambda takes 2 arguments, got 1"),
            (RuntimeProblem::PatternArity { want: 2, got: 3 }, "pattern expects 2 arguments, got 3"),
            (
                RuntimeProblem::Windows { name: "slide", size: 5, step: 1, n: 3 },
                "slide(5, 1) of an array of 3",
            ),
            (RuntimeProblem::NotAVector { found: "a float".into() }, "mapVec expects a vector, got a float"),
            (RuntimeProblem::PartRed { m: 3, len: 8 }, "partRed to 3 of an array of 8"),
            (RuntimeProblem::GenerateLength(1 << 40), "generate of length 1099511627776"),
            (RuntimeProblem::Split { m: 3, len: 8 }, "split(3) of an array of 8 elements"),
            (RuntimeProblem::ScatterIndex { i: 9, len: 4 }, "scatter writes index 9 of 4"),
            (RuntimeProblem::ScatterUnwritten { len: 4 }, "scatter leaves an element of 4 unwritten"),
            (RuntimeProblem::Pad { left: -1, right: 0, n: 4 }, "pad(-1, 0) of an array of 4"),
            (
                RuntimeProblem::PadConstNegative { left: 0, right: -2 },
                "padConst(0, -2) with a negative amount",
            ),
            (RuntimeProblem::RaggedTranspose, "transpose of a ragged array"),
            (
                RuntimeProblem::ZipLengths { lens: vec![4, 3, 4] },
                "zip of arrays of different lengths 4, 3, 4",
            ),
            (RuntimeProblem::Get { i: 2, found: "a tuple of 2".into() }, "get(2) of a tuple of 2"),
            (RuntimeProblem::AsVector { m: 4 }, "asVector(4) needs scalars, a multiple of 4 of them"),
            (RuntimeProblem::AsScalar { found: "an int".into() }, "asScalar of an int"),
            (RuntimeProblem::AsScalarField { found: "an int".into() }, "asScalar of a tuple with an int"),
            (RuntimeProblem::AsScalarWidths, "asScalar of a tuple of vectors of different widths"),
            (RuntimeProblem::FilterIndex { found: "a float".into() }, "filter index a float"),
        ];
        for (problem, text) in cases {
            let e = InterpError::Runtime { problem: Box::new(problem), span: Span::default() };
            assert_eq!(e.to_string(), text);
        }
    }

    #[test]
    fn data_problems_render_as_before() {
        let ty = Type::array(Type::FLOAT, crate::arith::ArithExpr::size("N"));
        let cases: Vec<(DataProblem, &str)> = vec![
            (
                DataProblem::Count { ty: ty.clone(), used: 4, len: 5 },
                "a value of type [float]N has 4 scalars but the data has 5",
            ),
            (
                DataProblem::Length { ty: ty.clone(), source: EvalError::Unbound("N".into()) },
                "length of [float]N: unbound variable `N`",
            ),
            (DataProblem::LengthFit { n: 9, ty, len: 5 }, "length 9 of [float]N does not fit 5 scalars"),
            (DataProblem::Short { len: 5 }, "the data ends after 5 scalars"),
            (DataProblem::NotInt { i: 1, x: 2.5 }, "int element 1 is the float 2.5"),
        ];
        for (problem, text) in cases {
            assert_eq!(InterpError::Data(Box::new(problem)).to_string(), text);
        }
    }
}
