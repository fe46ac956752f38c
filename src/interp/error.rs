//! Interpreter errors. Runtime errors carry the span of the expression
//! being evaluated.

use crate::arith::EvalError;
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
    #[error("{msg}")]
    Runtime { msg: String, span: Span },
    /// An error inside a user function's body.
    #[error("in user function `{fun}`: {msg}")]
    UserFun { fun: String, msg: String, span: Span },
    /// The evaluation produced more array elements than the interpreter's
    /// budget (`interp::MAX_WORK`).
    #[error("the interpreter's budget of {limit} array elements is spent here (it holds every value as a tree); validate at smaller sizes")]
    TooLarge { limit: u64, span: Span },
    /// Flat host data does not fit a type.
    #[error("{0}")]
    Data(String),
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
