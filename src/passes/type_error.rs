//! The type checker's errors: the rule that failed, with the types,
//! lengths and names involved, rendered into the messages users see.

use crate::arith::ArithExpr;
use crate::ir::{FunId, PadMode, Span};
use crate::types::Type;

/// A type error: what was expected, what was found, where. The problem is
/// boxed: its types and lengths would make every typed result large.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{problem}")]
pub struct TypeError {
    pub problem: Box<TypeProblem>,
    pub span: Span,
}

impl TypeError {
    pub fn new(problem: TypeProblem, span: Span) -> TypeError {
        TypeError { problem: Box::new(problem), span }
    }
}

/// What does not type-check. `pattern` names the pattern (or the part of
/// one, `join (inner)`) whose check failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TypeProblem {
    #[error("parameter `{param}` of `def {def}` needs a type")]
    Untyped { param: String, def: String },
    #[error("internal: parameter used before it was bound")]
    Unbound,
    #[error("lambda: expected {expected} argument(s), found {found}")]
    LambdaArity { expected: usize, found: usize },
    #[error("`{param}`: expected {declared}, found {found}")]
    ParamType { param: String, declared: Type, found: Type },
    #[error("{fun}: expected {expected} argument(s), found {found}")]
    UserFunArity { fun: String, expected: usize, found: usize },
    #[error("{fun}: parameter `{param}` expects {expected}, found {found}")]
    UserFunParam { fun: String, param: String, expected: Type, found: Type },
    #[error("{pattern}: expected 1 argument, found {found}")]
    OneArg { pattern: &'static str, found: usize },
    #[error("{pattern}: expected an array, found {found}")]
    NotArray { pattern: &'static str, found: Type },
    #[error("{pattern}: expected 2 arguments (init, array), found {found}")]
    ReductionArity { pattern: &'static str, found: usize },
    #[error("{pattern}: the function returns {returned} but the accumulator has type {init}")]
    Accumulator { pattern: &'static str, returned: Type, init: Type },
    #[error("mapVec: expected a vector, found {found}")]
    NotVector { found: Type },
    #[error("mapVec: the function must return a scalar, found {found}")]
    NotScalarResult { found: Type },
    #[error("internal error: iterate with a non-unique id {id:?}")]
    IterateId { id: FunId },
    #[error("iterate: the function changes the element type from {from} to {to}")]
    IterateElem { from: Type, to: Type },
    #[error("iterate({n}): the array is empty after {after} iterations")]
    IterateEmpty { n: u32, after: u32 },
    #[error(
        "iterate({n}): the length still changes after {max} iterations (at most {max} iterations may change it)"
    )]
    IterateUnbounded { n: u32, max: u32 },
    #[error("generate: expected no data argument, found {found}")]
    GenerateArgs { found: usize },
    /// `what` is `size` or `step`.
    #[error("{pattern}: the window {what} must be positive, found {found}")]
    Window { pattern: &'static str, what: &'static str, found: i64 },
    #[error("split: the chunk size must be positive, found {found}")]
    ChunkSize { found: i64 },
    #[error("split: length {len} is not divisible by {chunk}")]
    Indivisible { len: i64, chunk: i64 },
    #[error("zip: expected {expected} arrays, found {found}")]
    ZipArity { expected: usize, found: usize },
    #[error("zip: lengths {first} and {other} differ")]
    ZipLengths { first: ArithExpr, other: ArithExpr },
    #[error("get({index}): the tuple has only {components} components")]
    TupleIndex { index: usize, components: usize },
    #[error("get({index}): expected a tuple, found {found}")]
    NotTuple { index: usize, found: Type },
    #[error("asVector({width}): expected an array of scalars, found {found}")]
    NotScalars { width: u8, found: Type },
    #[error("asVector({width}): length {len} is not a multiple of {width}")]
    NotMultiple { width: u8, len: i64 },
    #[error("asScalar: expected an array of vectors or of tuples of vectors of one width, found {found}")]
    NotVectors { found: Type },
    #[error("filter: expected 2 arguments (array, indices), found {found}")]
    FilterArity { found: usize },
    #[error("filter: indices must be [int], found {found}")]
    FilterIndices { found: Type },
    /// `side` elements padded on one side of an array of `len`.
    #[error(
        "pad({left}, {right}, {}): pads {side} elements on one side of an array of {len}; {} pads at most the array's length",
        mode.name(),
        mode.name()
    )]
    PadTooWide { left: ArithExpr, right: ArithExpr, mode: PadMode, side: ArithExpr, len: ArithExpr },
    #[error("padConst: value of type {value} for elements of type {elem}")]
    PadConstType { value: Type, elem: Type },
    /// `pattern` is `pad` or `padConst`, `side` `left` or `right`.
    #[error("{pattern}: the {side} amount must be at least 0, found {found}")]
    PadNegative { pattern: &'static str, side: &'static str, found: ArithExpr },
}

/// The messages no compile-error, robustness or fuzz test pins, each
/// rendered as it was when the error carried text.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ScalarType;

    fn says(p: TypeProblem, want: &str) {
        assert_eq!(TypeError::new(p, Span::new(0, 1)).to_string(), want);
    }

    fn floats() -> Type {
        Type::array(Type::FLOAT, ArithExpr::size("N"))
    }

    #[test]
    fn untyped() {
        says(
            TypeProblem::Untyped { param: "x".into(), def: "f".into() },
            "parameter `x` of `def f` needs a type",
        );
    }

    #[test]
    fn unbound() {
        says(TypeProblem::Unbound, "internal: parameter used before it was bound");
    }

    #[test]
    fn lambda_arity() {
        says(TypeProblem::LambdaArity { expected: 2, found: 1 }, "lambda: expected 2 argument(s), found 1");
    }

    #[test]
    fn param_type() {
        let p = TypeProblem::ParamType { param: "a".into(), declared: Type::INT, found: Type::FLOAT };
        says(p, "`a`: expected int, found float");
    }

    #[test]
    fn user_fun_arity() {
        let p = TypeProblem::UserFunArity { fun: "add".into(), expected: 2, found: 3 };
        says(p, "add: expected 2 argument(s), found 3");
    }

    #[test]
    fn user_fun_param() {
        let p = TypeProblem::UserFunParam {
            fun: "add".into(),
            param: "b".into(),
            expected: Type::FLOAT,
            found: floats(),
        };
        says(p, "add: parameter `b` expects float, found [float]N");
    }

    #[test]
    fn one_arg() {
        says(TypeProblem::OneArg { pattern: "join", found: 2 }, "join: expected 1 argument, found 2");
    }

    #[test]
    fn reduction_arity() {
        let p = TypeProblem::ReductionArity { pattern: "reduceSeq", found: 1 };
        says(p, "reduceSeq: expected 2 arguments (init, array), found 1");
    }

    #[test]
    fn not_vector() {
        says(TypeProblem::NotVector { found: Type::FLOAT }, "mapVec: expected a vector, found float");
    }

    #[test]
    fn not_scalar_result() {
        let p = TypeProblem::NotScalarResult { found: Type::Vector(ScalarType::Float, 4) };
        says(p, "mapVec: the function must return a scalar, found float4");
    }

    #[test]
    fn iterate_id() {
        says(
            TypeProblem::IterateId { id: FunId(7) },
            "internal error: iterate with a non-unique id FunId(7)",
        );
    }

    #[test]
    fn iterate_elem() {
        let p = TypeProblem::IterateElem { from: Type::FLOAT, to: Type::INT };
        says(p, "iterate: the function changes the element type from float to int");
    }

    #[test]
    fn generate_args() {
        says(TypeProblem::GenerateArgs { found: 1 }, "generate: expected no data argument, found 1");
    }

    #[test]
    fn zip_arity() {
        says(TypeProblem::ZipArity { expected: 2, found: 3 }, "zip: expected 2 arrays, found 3");
    }

    #[test]
    fn zip_lengths() {
        let p = TypeProblem::ZipLengths { first: ArithExpr::size("N"), other: ArithExpr::Cst(4) };
        says(p, "zip: lengths N and 4 differ");
    }

    #[test]
    fn tuple_index() {
        says(TypeProblem::TupleIndex { index: 2, components: 2 }, "get(2): the tuple has only 2 components");
    }

    #[test]
    fn not_tuple() {
        says(TypeProblem::NotTuple { index: 0, found: Type::FLOAT }, "get(0): expected a tuple, found float");
    }

    #[test]
    fn not_scalars() {
        let p = TypeProblem::NotScalars { width: 4, found: Type::array(floats(), ArithExpr::Cst(2)) };
        says(p, "asVector(4): expected an array of scalars, found [[float]N]2");
    }

    #[test]
    fn not_vectors() {
        says(
            TypeProblem::NotVectors { found: floats() },
            "asScalar: expected an array of vectors or of tuples of vectors of one width, found [float]N",
        );
    }

    #[test]
    fn filter_arity() {
        says(TypeProblem::FilterArity { found: 1 }, "filter: expected 2 arguments (array, indices), found 1");
    }

    #[test]
    fn filter_indices() {
        says(TypeProblem::FilterIndices { found: floats() }, "filter: indices must be [int], found [float]N");
    }

    #[test]
    fn pad_const_type() {
        let p = TypeProblem::PadConstType { value: Type::INT, elem: Type::FLOAT };
        says(p, "padConst: value of type int for elements of type float");
    }
}
