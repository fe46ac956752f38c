//! The simplifier: a bottom-up rewrite built from "smart constructors".
//!
//! Every `mk_*` function takes operands that are already in normal form and
//! returns an expression in normal form, so rebuilding a node from simplified
//! children is enough to normalise the whole tree. Normal form:
//! * a `Sum` has at least two terms, none of them a `Sum`, like terms
//!   collected, at most one constant (the last term), the other terms ordered
//!   by their non-constant factors;
//! * a `Prod` has at least two factors, none of them a `Prod`, at most one
//!   constant (the first factor, never 0 or 1), the others sorted; sums are
//!   distributed over unless that would grow the expression too much or
//!   would destroy a `(x / y) * y` pattern;
//! * range-dependent rules (`x / y = 0` when `0 <= x < y`, ...) have been
//!   applied wherever the prover could establish their side conditions.

mod div_mod;
mod other;
mod prod;
mod sum;
pub(crate) mod terms;

pub(crate) use div_mod::{mk_div, mk_exact_div, mk_mod};
pub(crate) use other::{mk_ite, mk_log2, mk_max, mk_min, mk_pow};
pub(crate) use prod::mk_prod;
pub(crate) use sum::mk_sum;

use super::{ArithExpr as E, Memo, Pred};

/// How deep the simplifier is nested inside the prover. Proving a side
/// condition simplifies bound expressions, which may again want to prove
/// something; the depth cap keeps that recursion (and its cost) bounded.
///
/// With a [`Memo`], the divisions and remainders (whose range rules are most
/// of the simplifier's cost) are remembered by their simplified operands:
/// the unrolled copies of an access repeat most of them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cx<'m> {
    depth: u8,
    memo: Option<&'m Memo>,
}

/// Range rules run only at depths below this; deeper, the simplifier is
/// purely structural and the prover uses constant intervals only.
const MAX_DEPTH: u8 = 1;

impl<'m> Cx<'m> {
    pub(crate) fn top() -> Cx<'static> {
        Cx { depth: 0, memo: None }
    }
    /// The top level, remembering divisions and remainders in `memo`.
    pub(crate) fn top_with(memo: &'m Memo) -> Cx<'m> {
        Cx { depth: 0, memo: Some(memo) }
    }
    pub(crate) fn deeper(self) -> Cx<'m> {
        Cx { depth: self.depth.saturating_add(1), memo: self.memo }
    }
    /// Whether the prover may use symbolic bounds (which simplify) here.
    pub(crate) fn symbolic(self) -> bool {
        self.depth <= MAX_DEPTH
    }
    /// Whether rules that need the prover may run at this depth.
    pub(crate) fn ranges(self) -> bool {
        self.depth < MAX_DEPTH
    }
}

/// Simplifies bottom-up at the given prover depth.
pub(crate) fn simplify_in(e: &E, cx: Cx<'_>) -> E {
    let s = |x: &E| simplify_in(x, cx);
    match e {
        E::Cst(_) | E::Var(_) => e.clone(),
        E::Sum(es) => match recombine_raw(es) {
            Some(es) => mk_sum(es.iter().map(s).collect(), cx),
            None => mk_sum(es.iter().map(s).collect(), cx),
        },
        E::Prod(es) => mk_prod(es.iter().map(s).collect(), cx),
        E::Div(a, b) => remembered(DivMod::Div, s(a), s(b), cx),
        E::ExactDiv(a, b) => remembered(DivMod::ExactDiv, s(a), s(b), cx),
        E::Mod(a, b) => remembered(DivMod::Mod, s(a), s(b), cx),
        E::Pow(a, b) => mk_pow(s(a), s(b)),
        E::Log2(a) => mk_log2(s(a)),
        E::Min(a, b) => mk_min(s(a), s(b), cx),
        E::Max(a, b) => mk_max(s(a), s(b), cx),
        E::IfThenElse(p, t, f) => mk_ite(Pred { lhs: s(&p.lhs), op: p.op, rhs: s(&p.rhs) }, s(t), s(f), cx),
    }
}

/// Which of the remembered constructors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum DivMod {
    Div,
    ExactDiv,
    Mod,
}

/// `mk_div`, `mk_exact_div` or `mk_mod`, through the memo if there is one.
/// They are deterministic functions of their operands (with the variables'
/// ranges) and the depth, so a remembered answer is the one they would give.
fn remembered(op: DivMod, a: E, b: E, cx: Cx<'_>) -> E {
    let make = |a: E, b: E| match op {
        DivMod::Div => mk_div(a, b, cx),
        DivMod::ExactDiv => mk_exact_div(a, b, cx),
        DivMod::Mod => mk_mod(a, b, cx),
    };
    match cx.memo {
        // Constant operands fold at once.
        Some(memo) if !matches!((&a, &b), (E::Cst(_), E::Cst(_))) => memo.div_mod(op, cx.depth, a, b, make),
        Some(_) | None => make(a, b),
    }
}

/// Rule 4 on the unsimplified input: `(x / y) * y + x % y` written exactly
/// so (as join-after-split views produce it) becomes `x` before the costly
/// range reasoning on `x / y` and `x % y` is attempted. The general rule
/// runs again on normal forms in `mk_sum`.
fn recombine_raw(terms: &[E]) -> Option<Vec<E>> {
    let div_times = |t: &E| -> Option<(E, E)> {
        let E::Prod(fs) = t else { return None };
        match fs.as_slice() {
            [E::Div(x, y), z] | [z, E::Div(x, y)] if **y == *z => Some(((**x).clone(), (**y).clone())),
            _ => None,
        }
    };
    for (i, t) in terms.iter().enumerate() {
        let Some((x, y)) = div_times(t) else { continue };
        let modulo = E::Mod(std::sync::Arc::new(x.clone()), std::sync::Arc::new(y));
        let Some(j) = terms.iter().position(|u| *u == modulo) else { continue };
        let mut out: Vec<E> =
            terms.iter().enumerate().filter(|(k, _)| *k != i && *k != j).map(|(_, u)| u.clone()).collect();
        out.push(x);
        return Some(out);
    }
    None
}

/// Simplifies at the top level. One pass is enough for idempotence: every
/// constructor returns a normal form, and the prover is deterministic, so a
/// second pass would rebuild every node unchanged (property-tested).
pub(crate) fn simplify_top(e: &E) -> E {
    simplify_in(e, Cx::top())
}
