//! Products: flattening, constant folding, `ExactDiv(a, b) * b = a` and
//! bounded distribution over sums.

use super::sum::mk_sum;
use super::terms::{remove_all, split_term};
use super::Cx;
use crate::arith::ArithExpr as E;

/// Distributing over sums multiplies their term counts; beyond this many
/// resulting terms the product is left factored.
const MAX_DISTRIBUTED_TERMS: usize = 32;

/// Normal form of the product of normalised factors.
pub(crate) fn mk_prod(factors: Vec<E>, cx: Cx<'_>) -> E {
    let mut flat = Vec::with_capacity(factors.len());
    for f in factors {
        match f {
            E::Prod(fs) => flat.extend(std::sync::Arc::unwrap_or_clone(fs)),
            other => flat.push(other),
        }
    }
    let mut coef: i64 = 1;
    for f in &flat {
        if let E::Cst(c) = f {
            match coef.checked_mul(*c) {
                Some(v) => coef = v,
                None => return unsimplified(flat),
            }
        }
    }
    let mut others: Vec<E> = flat.into_iter().filter(|f| !matches!(f, E::Cst(_))).collect();
    if coef == 0 {
        return E::Cst(0);
    }
    others.sort();
    if let Some(e) = cancel_exact_div(coef, &others, cx) {
        return e;
    }
    if let Some(e) = distribute(coef, &others, cx) {
        return e;
    }
    super::terms::build_term(coef, others)
}

/// The fallback when the constant factors overflow: sorted, unfolded.
fn unsimplified(mut flat: Vec<E>) -> E {
    flat.sort();
    E::prod(flat)
}

/// `ExactDiv(a, b) * b * rest = a * rest`: the division is exact by
/// contract, so multiplying back restores the dividend.
fn cancel_exact_div(coef: i64, others: &[E], cx: Cx<'_>) -> Option<E> {
    for (p, f) in others.iter().enumerate() {
        let E::ExactDiv(a, b) = f else { continue };
        let (bc, bfs) = split_term(b);
        if bc == 0 || coef.checked_rem(bc) != Some(0) {
            continue;
        }
        let rest: Vec<E> =
            others.iter().enumerate().filter(|(q, _)| *q != p).map(|(_, g)| g.clone()).collect();
        let Some(mut rest) = remove_all(&rest, &bfs) else { continue };
        rest.push(E::Cst(coef.checked_div(bc)?));
        rest.push((**a).clone());
        return Some(mk_prod(rest, cx));
    }
    None
}

/// Whether `s` is the divisor of some division or modulo among `others`:
/// then `(x / s) * s` must stay factored so the sum can recombine it with
/// `x % s`.
fn is_divisor_of_other(s: &E, others: &[E]) -> bool {
    others.iter().any(|f| match f {
        E::Div(_, d) | E::ExactDiv(_, d) | E::Mod(_, d) => **d == *s,
        _ => false,
    })
}

/// Multiplies out the first sum factor, when the result stays small.
fn distribute(coef: i64, others: &[E], cx: Cx<'_>) -> Option<E> {
    let mut total: usize = 1;
    for f in others {
        if let E::Sum(ts) = f {
            total = total.saturating_mul(ts.len());
        }
    }
    if total > MAX_DISTRIBUTED_TERMS {
        return None;
    }
    let p = others.iter().position(|f| matches!(f, E::Sum(_)) && !is_divisor_of_other(f, others))?;
    let E::Sum(ts) = &others[p] else { return None };
    let rest: Vec<E> = others.iter().enumerate().filter(|(q, _)| *q != p).map(|(_, g)| g.clone()).collect();
    let mut out = Vec::with_capacity(ts.len());
    for t in ts.iter() {
        let mut fs = rest.clone();
        fs.push(E::Cst(coef));
        fs.push(t.clone());
        out.push(mk_prod(fs, cx));
    }
    Some(mk_sum(out, cx))
}
