//! Why the code generator refuses a program it type-checked: the limit or
//! the proof that failed, with the types, lengths and indices involved.

use crate::arith::ArithExpr;
use crate::ir::IndexFun;
use crate::types::Type;
use crate::view::ViewError;

/// A program the code generator cannot compile as written. `what` names
/// the pattern whose index is checked (`at`, `gather`, `scatter`).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Unsupported {
    #[error("the index function `\\{} -> {}` of `{what}` gives {value} at i = {at}, outside the {len} elements of its array", function.param, function.body)]
    IndexFunOutside { function: IndexFun, what: String, value: ArithExpr, at: &'static str, len: ArithExpr },
    #[error(
        "cannot prove that the index function `\\{} -> {}` of `scatter` is a permutation of its {len} \
         elements (two work-items could write one element): use one such as `\\i -> {len} - 1 - i`, \
         `(i + c) % {len}` or `(i % a) * b + i / a` with a * b = {len}",
        function.param,
        function.body
    )]
    NotPermutation { function: IndexFun, len: ArithExpr },
    #[error("at({index}) is outside the {len} elements of its array")]
    AtOutside { index: ArithExpr, len: ArithExpr },
    #[error(
        "cannot prove that the index `{index}` of `{what}` stays inside the {len} elements of its array \
         (kernels do not check bounds): bound it (`% {len}`) or give the sizes (--size)"
    )]
    IndexNotInside { index: ArithExpr, what: String, len: ArithExpr },
    #[error("cannot prove that the divisor `{divisor}` in the index of `{what}` is never 0")]
    DivisorZero { divisor: ArithExpr, what: String },
    #[error(
        "cannot prove that `{term}` in the index of `{what}` fits a 32-bit int (within ±{limit}): \
         kernels compute indices in `int`"
    )]
    TermTooLarge { term: ArithExpr, what: String, limit: ArithExpr },
    #[error("the high-level `reduce`/`partRed` must be lowered to reduceSeq (inside maps) first")]
    HighLevelReduce,
    #[error("a high-level `map` whose function computes must be lowered to mapGlb, mapWrg, mapLcl or mapSeq first")]
    HighLevelMap,
    #[error("mapVec applies a user function; wrap other functions in a user function")]
    MapVecFunction,
    #[error("an array accumulator must be computed into memory first, e.g. with toPrivate(mapSeq(...))")]
    ArrayAccumulator,
    #[error("`id` copies single values; copy an array with a map of id")]
    IdOfArray,
    #[error("generate takes a user function of the index, or a lambda that computes nothing (a literal, another generate)")]
    GenerateFunction,
    #[error("scatter only reorders where results are written; use gather to reorder reads")]
    ScatterReads,
    /// `mapLcl(dim)` updating `array` in place outside a `mapLcl(other)`
    /// of `items` work-items.
    #[error(
        "mapLcl({dim}) updates `{array}` in place, but it is not inside a mapLcl({other}): all {items} work-items \
         of dimension {other} would run it and race; nest it in mapLcl({other}) or write to a new array"
    )]
    InPlaceRace { dim: u8, array: String, other: u8, items: ArithExpr },
    #[error("slideSeqPlus keeps its window in private memory: its size and step must be known at compile time, found {size} and {step} (give the sizes with --size)")]
    WindowUnknown { size: ArithExpr, step: ArithExpr },
    #[error("slideSeqPlus keeps its window of type {window} in private memory: {values} values are more than {max} (use mapSeq over slide)")]
    WindowTooLarge { window: Type, values: i64, max: i64 },
    #[error("slideSeqPlus keeps its window of type {window} in private memory: its elements need a size known at compile time, found {values} values (give the sizes with --size)")]
    WindowUnsized { window: Type, values: ArithExpr },
    #[error("an array of type {ty} that is only passed on or rearranged is written here; copy it with a map of id")]
    PassedOnWritten { ty: Type },
    /// `count` elements of C type `elem`.
    #[error(
        "a private array of {count} {elem} is more than {max} scalars \
         (a thread's stack on CPU devices; registers on GPUs): use toLocal or toGlobal"
    )]
    PrivateTooLarge { count: i64, elem: String, max: i64 },
    #[error("private memory of type {ty} needs a length known at compile time, found {count}")]
    PrivateUnsized { ty: Type, count: ArithExpr },
    #[error("iterate needs its buffers in local or global memory (use toLocal or toGlobal)")]
    IterateBuffers,
    #[error("iterate takes a lambda or a composition (f o g)")]
    IterateFunction,
    #[error("an array of type {ty} cannot be passed to a function as a value")]
    ArrayAsValue { ty: Type },
    #[error("cannot write here: the output goes through a pattern that only reads (zip, pad, generate, a parameter)")]
    ReadOnlyOutput,
    /// Into `space` memory (its C qualifier) of `elem`.
    #[error("cannot write {ty} through asScalar here (into {space} memory of {elem})")]
    AsScalarWrite { ty: Type, space: &'static str, elem: Type },
    #[error("cannot unroll a loop of symbolic length {len}")]
    UnrollSymbolic { len: ArithExpr },
    #[error("cannot unroll {count} iterations here: a kernel unrolls at most {max} in all (use mapSeq or reduceSeq)")]
    UnrollTooMany { count: i64, max: usize },
    #[error("a parameter may not be called `out`")]
    OutParam,
    /// A `mapLcl` after another whose barrier was left out: both sit in a
    /// loop of `mapLcl(dim)` over `len` that work-items run different
    /// numbers of times, where a barrier would hang the work-group.
    #[error(
        "this mapLcl may read what the mapLcl before it wrote, but both sit in the loop of mapLcl({dim}) over \
         {len}, which work-items run different numbers of times, so no barrier can join them: launch as many \
         work-items in dimension {dim} as it has elements (--local), or split it so that each runs it once"
    )]
    BarrierInDivergentLoop { dim: u8, len: ArithExpr },
    /// A `mapLcl` whose barrier was left out (it sits in a loop of
    /// `mapLcl(dim)` over `len` that work-items run different numbers of
    /// times) with statements after it in that loop that may read what it
    /// wrote.
    #[error(
        "what this mapLcl writes may be read after it inside the loop of mapLcl({dim}) over {len}, which work-items \
         run different numbers of times, so no barrier can order the writes before the reads: launch as many \
         work-items in dimension {dim} as it has elements (--local), or split it so that each runs it once"
    )]
    ReadInDivergentLoop { dim: u8, len: ArithExpr },
    #[error(transparent)]
    View(#[from] ViewError),
}

/// The messages no compile-error or fuzz test pins, each rendered as it
/// was when the error carried text.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::CompileError;
    use crate::ir::Span;
    use crate::types::ScalarType;

    fn says(reason: Unsupported, want: &str) {
        let e = CompileError::unsupported(reason, Span::new(0, 1));
        assert_eq!(e.to_string(), format!("cannot compile: {want}"));
    }

    fn floats() -> Type {
        Type::array(Type::FLOAT, ArithExpr::size("N"))
    }

    #[test]
    fn map_vec_function() {
        says(
            Unsupported::MapVecFunction,
            "mapVec applies a user function; wrap other functions in a user function",
        );
    }

    #[test]
    fn array_accumulator() {
        says(
            Unsupported::ArrayAccumulator,
            "an array accumulator must be computed into memory first, e.g. with toPrivate(mapSeq(...))",
        );
    }

    #[test]
    fn generate_function() {
        says(
            Unsupported::GenerateFunction,
            "generate takes a user function of the index, or a lambda that computes nothing (a literal, another generate)",
        );
    }

    #[test]
    fn window_unknown() {
        let (size, step) = (ArithExpr::size("K"), ArithExpr::Cst(1));
        says(
            Unsupported::WindowUnknown { size, step },
            "slideSeqPlus keeps its window in private memory: its size and step must be known at compile time, found K and 1 (give the sizes with --size)",
        );
    }

    #[test]
    fn window_too_large() {
        let window = Type::array(Type::FLOAT, ArithExpr::Cst(600));
        says(
            Unsupported::WindowTooLarge { window, values: 600, max: 512 },
            "slideSeqPlus keeps its window of type [float]600 in private memory: 600 values are more than 512 (use mapSeq over slide)",
        );
    }

    #[test]
    fn passed_on_written() {
        says(
            Unsupported::PassedOnWritten { ty: floats() },
            "an array of type [float]N that is only passed on or rearranged is written here; copy it with a map of id",
        );
    }

    #[test]
    fn private_unsized() {
        says(
            Unsupported::PrivateUnsized { ty: floats(), count: ArithExpr::size("N") },
            "private memory of type [float]N needs a length known at compile time, found N",
        );
    }

    #[test]
    fn iterate_buffers() {
        says(
            Unsupported::IterateBuffers,
            "iterate needs its buffers in local or global memory (use toLocal or toGlobal)",
        );
    }

    #[test]
    fn iterate_function() {
        says(Unsupported::IterateFunction, "iterate takes a lambda or a composition (f o g)");
    }

    #[test]
    fn array_as_value() {
        says(
            Unsupported::ArrayAsValue { ty: floats() },
            "an array of type [float]N cannot be passed to a function as a value",
        );
    }

    #[test]
    fn read_only_output() {
        says(
            Unsupported::ReadOnlyOutput,
            "cannot write here: the output goes through a pattern that only reads (zip, pad, generate, a parameter)",
        );
    }

    #[test]
    fn as_scalar_write() {
        let ty = Type::Tuple(vec![Type::Vector(ScalarType::Float, 2), Type::Vector(ScalarType::Float, 2)]);
        says(
            Unsupported::AsScalarWrite { ty, space: "__global", elem: Type::FLOAT },
            "cannot write (float2, float2) through asScalar here (into __global memory of float)",
        );
    }

    #[test]
    fn out_param() {
        says(Unsupported::OutParam, "a parameter may not be called `out`");
    }
}
