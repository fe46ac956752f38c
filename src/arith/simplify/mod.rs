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

use super::{ArithExpr as E, Pred};

/// How deep the simplifier is nested inside the prover. Proving a side
/// condition simplifies bound expressions, which may again want to prove
/// something; the depth cap keeps that recursion (and its cost) bounded.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cx {
    depth: u8,
}

/// Range rules run only at depths below this; deeper, the simplifier is
/// purely structural and the prover uses constant intervals only.
const MAX_DEPTH: u8 = 2;

impl Cx {
    pub(crate) fn top() -> Cx {
        Cx { depth: 0 }
    }
    pub(crate) fn deeper(self) -> Cx {
        Cx { depth: self.depth.saturating_add(1) }
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
pub(crate) fn simplify_in(e: &E, cx: Cx) -> E {
    let s = |x: &E| simplify_in(x, cx);
    match e {
        E::Cst(_) | E::Var(_) => e.clone(),
        E::Sum(es) => mk_sum(es.iter().map(s).collect(), cx),
        E::Prod(es) => mk_prod(es.iter().map(s).collect(), cx),
        E::Div(a, b) => mk_div(s(a), s(b), cx),
        E::ExactDiv(a, b) => mk_exact_div(s(a), s(b), cx),
        E::Mod(a, b) => mk_mod(s(a), s(b), cx),
        E::Pow(a, b) => mk_pow(s(a), s(b)),
        E::Log2(a) => mk_log2(s(a)),
        E::Min(a, b) => mk_min(s(a), s(b), cx),
        E::Max(a, b) => mk_max(s(a), s(b), cx),
        E::IfThenElse(p, t, f) => mk_ite(Pred { lhs: s(&p.lhs), op: p.op, rhs: s(&p.rhs) }, s(t), s(f), cx),
    }
}

/// Simplifies to a fixpoint. One bottom-up pass almost always reaches it;
/// the extra passes make idempotence hold even when a rewrite high in the
/// tree exposes an opportunity the pass has already walked past.
pub(crate) fn simplify_fix(e: &E) -> E {
    let mut cur = simplify_in(e, Cx::top());
    for _ in 0..3 {
        let next = simplify_in(&cur, Cx::top());
        if next == cur {
            break;
        }
        cur = next;
    }
    cur
}
