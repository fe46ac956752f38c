//! Symbolic integer arithmetic: the index and length expressions of the compiler.
//!
//! Array lengths in types (`[float]N/128`), view index expressions and loop
//! bounds are all [`ArithExpr`]s. Variables carry a range, which the
//! simplifier ([`simplify`]) uses to apply the range-dependent rules of the
//! CGO 2017 paper (Section 5.3), for instance `x / y = 0` when `0 <= x < y`.
//!
//! Invariants:
//! * every variable is an integer that is non-negative unless its range says
//!   otherwise; size variables are `>= 1`;
//! * `Div` and `Mod` have C semantics (truncation towards zero), which matches
//!   the generated OpenCL exactly;
//! * expressions are plain data: comparing two expressions structurally is
//!   meaningful only after both were simplified.

mod expr;
mod memo;
mod parse;
mod range;
mod remainder;
mod simplify;
#[cfg(test)]
mod tests;

pub use expr::{ArithExpr, CmpOp, EvalError, Pred, Range, Var, VarKind};
pub use memo::{CanonicalNames, Memo};
pub use parse::{parse_arith, parse_arith_with, ArithParseError, ArithProblem};
pub use range::{max_value, min_value, prove_eq, prove_le, prove_lt};
pub use remainder::{is_multiple_of, remainder_varies};
pub(crate) use simplify::terms::gcd;

/// Simplifies an expression using the variables' ranges.
///
/// The result has the same value as `e` for every assignment of the
/// variables inside their ranges (property-tested in `tests/arith_props.rs`),
/// is in a canonical form (flattened, sorted, like terms collected), and
/// `simplify(simplify(e)) == simplify(e)`.
pub fn simplify(e: &ArithExpr) -> ArithExpr {
    simplify::simplify_top(e)
}
