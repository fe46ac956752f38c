//! Range reasoning: sound (not complete) proofs of `a < b`, `a <= b` and
//! `a == b` for every assignment of the variables inside their ranges, and
//! symbolic minimum/maximum values.
//!
//! A difference `b - a` is first bounded by constant interval analysis; if
//! that is too coarse, index variables are replaced symbolically by the ends
//! of their ranges (a few rounds, since ranges can mention other index
//! variables) and the now simpler bound is checked again.

mod interval;
mod symbolic;

pub(crate) use interval::{interval, Ext};

use crate::arith::simplify::terms::has_index_var;
use crate::arith::simplify::{mk_prod, mk_sum, simplify_in, Cx};
use crate::arith::ArithExpr as E;
use std::sync::Arc;

/// Rounds of symbolic substitution before giving up.
const ROUNDS: usize = 4;

/// Whether `d >= target` for all assignments. `d` is in normal form.
fn at_least(d: &E, target: i128, cx: Cx<'_>) -> bool {
    if interval(d).lo >= Ext::Fin(target) {
        return true;
    }
    if !cx.symbolic() {
        return false;
    }
    let mut cur = d.clone();
    for _ in 0..ROUNDS {
        let Some(lo) = symbolic::bound(&cur, false, cx) else { return false };
        if interval(&lo).lo >= Ext::Fin(target) {
            return true;
        }
        // Without index variables another round can still relax rounded
        // quotients of sizes; a bound that no longer changes is final.
        if lo == cur {
            return false;
        }
        cur = lo;
    }
    false
}

/// `b - a` in normal form, simplified one level deeper. `ExactDiv` has the
/// value of `Div`, so comparing a type's `N / 128` (exact) with an index
/// bound's `N / 128` must let them cancel.
fn difference(a: &E, b: &E, cx: Cx<'_>) -> E {
    let (a, b) = if has_exact_div(a) || has_exact_div(b) {
        (simplify_in(&erase_exact(a), cx), simplify_in(&erase_exact(b), cx))
    } else {
        (a.clone(), b.clone())
    };
    let neg_a = mk_prod(vec![E::Cst(-1), a], cx);
    mk_sum(vec![b, neg_a], cx)
}

fn has_exact_div(e: &E) -> bool {
    match e {
        E::ExactDiv(..) => true,
        E::Cst(_) | E::Var(_) => false,
        E::Sum(es) | E::Prod(es) => es.iter().any(has_exact_div),
        E::Div(a, b) | E::Mod(a, b) | E::Pow(a, b) | E::Min(a, b) | E::Max(a, b) => {
            has_exact_div(a) || has_exact_div(b)
        }
        E::Log2(a) => has_exact_div(a),
        E::IfThenElse(p, t, f) => {
            has_exact_div(&p.lhs) || has_exact_div(&p.rhs) || has_exact_div(t) || has_exact_div(f)
        }
    }
}

/// The same expression with every `ExactDiv` turned into a `Div`.
fn erase_exact(e: &E) -> E {
    let r = |x: &E| Arc::new(erase_exact(x));
    match e {
        E::ExactDiv(a, b) | E::Div(a, b) => E::Div(r(a), r(b)),
        E::Cst(_) | E::Var(_) => e.clone(),
        E::Sum(es) => E::sum(es.iter().map(erase_exact).collect()),
        E::Prod(es) => E::prod(es.iter().map(erase_exact).collect()),
        E::Mod(a, b) => E::Mod(r(a), r(b)),
        E::Pow(a, b) => E::Pow(r(a), r(b)),
        E::Min(a, b) => E::Min(r(a), r(b)),
        E::Max(a, b) => E::Max(r(a), r(b)),
        E::Log2(a) => E::Log2(r(a)),
        E::IfThenElse(p, t, f) => E::IfThenElse(
            Arc::new(crate::arith::Pred { lhs: erase_exact(&p.lhs), op: p.op, rhs: erase_exact(&p.rhs) }),
            r(t),
            r(f),
        ),
    }
}

/// `a <= b` for operands in normal form.
pub(crate) fn prove_le_in(a: &E, b: &E, cx: Cx<'_>) -> bool {
    if a == b {
        return true;
    }
    let cx = cx.deeper();
    at_least(&difference(a, b, cx), 0, cx)
}

/// `a < b` for operands in normal form.
pub(crate) fn prove_lt_in(a: &E, b: &E, cx: Cx<'_>) -> bool {
    if a == b {
        return false;
    }
    let cx = cx.deeper();
    at_least(&difference(a, b, cx), 1, cx)
}

/// `a == b` for operands in normal form.
pub(crate) fn prove_eq_in(a: &E, b: &E, cx: Cx<'_>) -> bool {
    if a == b {
        return true;
    }
    let cx = cx.deeper();
    let d = difference(a, b, cx);
    if d == E::Cst(0) {
        return true;
    }
    let neg = mk_prod(vec![E::Cst(-1), d.clone()], cx);
    at_least(&d, 0, cx) && at_least(&neg, 0, cx)
}

pub(crate) fn is_nonneg(e: &E, cx: Cx<'_>) -> bool {
    interval(e).lo >= Ext::Fin(0) || prove_le_in(&E::Cst(0), e, cx)
}

pub(crate) fn is_nonpos(e: &E, cx: Cx<'_>) -> bool {
    interval(e).hi <= Ext::Fin(0) || prove_le_in(e, &E::Cst(0), cx)
}

/// A symbolic inclusive bound with every index variable eliminated where
/// possible (size variables remain, as parameters).
fn value_bound(e: &E, up: bool) -> Option<E> {
    let cx = Cx::top();
    let mut cur = simplify_in(e, cx);
    for _ in 0..ROUNDS {
        if !has_index_var(&cur) {
            break;
        }
        // Bounds combine min/max cheaply; normalise them for the caller.
        let next = simplify_in(&symbolic::bound(&cur, up, cx)?, cx);
        if next == cur {
            break;
        }
        cur = next;
    }
    Some(cur)
}

/// The smallest value `e` can take, as an expression over size variables
/// (`None`: unbounded or unknown). Sound: `e >= min_value(e)` everywhere.
pub fn min_value(e: &E) -> Option<E> {
    value_bound(e, false)
}

/// The largest value `e` can take, as for [`min_value`].
pub fn max_value(e: &E) -> Option<E> {
    value_bound(e, true)
}

/// Whether `a < b` for every assignment of the variables in their ranges.
pub fn prove_lt(a: &E, b: &E) -> bool {
    let cx = Cx::top();
    prove_lt_in(&simplify_in(a, cx), &simplify_in(b, cx), cx)
}

/// Whether `a <= b` for every assignment of the variables in their ranges.
pub fn prove_le(a: &E, b: &E) -> bool {
    let cx = Cx::top();
    prove_le_in(&simplify_in(a, cx), &simplify_in(b, cx), cx)
}

/// Whether `a == b` for every assignment of the variables in their ranges.
pub fn prove_eq(a: &E, b: &E) -> bool {
    let cx = Cx::top();
    prove_eq_in(&simplify_in(a, cx), &simplify_in(b, cx), cx)
}
