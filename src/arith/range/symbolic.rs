//! Symbolic bounds: replaces index variables by the ends of their ranges
//! (following monotonicity) while keeping size variables as parameters, so
//! that `l_id - N` with `l_id in [0, N)` is bounded above by `-1`, which a
//! constant interval analysis cannot see.

use super::interval::{interval, Ext};
use crate::arith::simplify::terms::{has_index_var, split_term};
use crate::arith::simplify::{mk_div, mk_prod, mk_sum, simplify_in, Cx};
use crate::arith::{ArithExpr as E, VarKind};

/// An inclusive bound of `e` (`up`: upper, else lower) in normal form,
/// `None` when unknown. Index variables are replaced by one level of their
/// ranges; bounds may therefore still contain index variables from those.
pub(crate) fn bound(e: &E, up: bool, cx: Cx<'_>) -> Option<E> {
    raw(e, up, cx).or_else(|| {
        let iv = interval(e);
        let b = if up { iv.hi } else { iv.lo };
        b.fin().and_then(|v| i64::try_from(v).ok()).map(E::Cst)
    })
}

fn nonneg(e: &E) -> bool {
    interval(e).lo >= Ext::Fin(0)
}

fn positive(e: &E) -> bool {
    interval(e).lo >= Ext::Fin(1)
}

fn raw(e: &E, up: bool, cx: Cx<'_>) -> Option<E> {
    match e {
        E::Cst(_) => Some(e.clone()),
        E::Var(v) => match v.kind {
            // Sizes are the parameters bounds are expressed in.
            VarKind::Size => Some(e.clone()),
            VarKind::Index if up => {
                let stop = simplify_in(v.range.stop.as_deref()?, cx);
                Some(mk_sum(vec![stop, E::Cst(-1)], cx))
            }
            VarKind::Index => Some(simplify_in(&v.range.start, cx)),
        },
        E::Sum(ts) => {
            let mut out = Vec::with_capacity(ts.len());
            for t in ts.iter() {
                out.push(bound(t, up, cx)?);
            }
            Some(mk_sum(out, cx))
        }
        E::Prod(_) => prod_bound(e, up, cx),
        E::Div(a, b) | E::ExactDiv(a, b) => {
            if !positive(b) {
                return None;
            }
            if let E::Cst(_) = **b {
                // Truncating division by a positive constant is monotone.
                return Some(mk_div(bound(a, up, cx)?, (**b).clone(), cx));
            }
            if !nonneg(a) {
                return None;
            }
            let num = bound(a, up, cx)?;
            match bound(b, !up, cx) {
                Some(den) if positive(&den) => Some(mk_div(num, den, cx)),
                // Divisor unbounded above: the quotient can get down to 0.
                None if !up => Some(E::Cst(0)),
                _ => None,
            }
        }
        E::Mod(a, b) => {
            if !positive(b) {
                return None;
            }
            let bmax = mk_sum(vec![bound(b, true, cx)?, E::Cst(-1)], cx);
            match (nonneg(a), up) {
                (true, false) => Some(E::Cst(0)),
                (true, true) => match bound(a, true, cx) {
                    Some(amax) => Some(pick(amax, bmax, true)),
                    None => Some(bmax),
                },
                (false, true) => Some(bmax),
                (false, false) => Some(mk_prod(vec![E::Cst(-1), bmax], cx)),
            }
        }
        E::Min(a, b) | E::Max(a, b) => {
            let is_min = matches!(e, E::Min(..));
            let (x, y) = (bound(a, up, cx), bound(b, up, cx));
            match (x, y) {
                (Some(x), Some(y)) => Some(pick(x, y, is_min)),
                // min(a, b) <= a whatever b is; likewise max(a, b) >= a.
                (Some(x), None) | (None, Some(x)) if is_min == up => Some(x),
                _ => None,
            }
        }
        E::IfThenElse(_, t, f) => {
            let (x, y) = (bound(t, up, cx)?, bound(f, up, cx)?);
            Some(pick(x, y, !up))
        }
        E::Pow(..) | E::Log2(_) => None,
    }
}

/// The min (or max) of two bounds. Deciding it with the full prover costs
/// a recursive proof per bound; constant intervals settle the common cases
/// and otherwise the bound keeps both operands.
fn pick(x: E, y: E, is_min: bool) -> E {
    let (ix, iy) = (interval(&x), interval(&y));
    let x_le_y = x == y || ix.hi <= iy.lo;
    let y_le_x = iy.hi <= ix.lo;
    match (x_le_y, y_le_x, is_min) {
        (true, _, true) | (_, true, false) => x,
        (_, true, true) | (true, _, false) => y,
        _ => {
            let (a, b) = if y < x { (y, x) } else { (x, y) };
            if is_min {
                E::min(a, b)
            } else {
                E::max(a, b)
            }
        }
    }
}

/// `c * f1 * ... * fn`: a single factor scales its bound; several factors
/// need to be non-negative so that the bounds multiply monotonically.
fn prod_bound(e: &E, up: bool, cx: Cx<'_>) -> Option<E> {
    let (c, fs) = split_term(e);
    let dir = up == (c >= 0);
    let mut out = vec![E::Cst(c)];
    if let (true, [E::Div(x, d)]) = (dir, fs.as_slice()) {
        // k*m*(x/m) <= k*x for x >= 0: the only way past a rounded-down
        // quotient of sizes such as 14 * ((N - 2) / 14), which has no index
        // variable left to bound.
        if let E::Cst(m) = **d {
            if m > 0 && c % m == 0 && nonneg(x) && !has_index_var(x) {
                return Some(mk_prod(vec![E::Cst(c / m), bound(x, true, cx)?], cx));
            }
        }
    }
    if fs.len() == 1 {
        out.push(bound(&fs[0], dir, cx)?);
    } else {
        for f in &fs {
            if !nonneg(f) {
                return None;
            }
            let b = bound(f, dir, cx)?;
            // A lower bound is only usable in a product once it is itself
            // non-negative; 0 always is one for a non-negative factor.
            out.push(if dir || nonneg(&b) { b } else { E::Cst(0) });
        }
    }
    Some(mk_prod(out, cx))
}
