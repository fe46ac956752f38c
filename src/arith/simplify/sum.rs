//! Sums: flattening, collecting like terms, constant folding and the
//! recombination rule `(x / y) * y + x % y = x` (rule 4 of the paper).

use super::prod::mk_prod;
use super::terms::{build_term, into_term, remove_all, split_term, Term};
use super::Cx;
use crate::arith::ArithExpr as E;

/// Normal form of the sum of normalised terms.
pub(crate) fn mk_sum(terms: Vec<E>, cx: Cx<'_>) -> E {
    let mut flat = Vec::with_capacity(terms.len());
    for t in terms {
        match t {
            E::Sum(ts) => flat.extend(std::sync::Arc::unwrap_or_clone(ts)),
            other => flat.push(other),
        }
    }
    // Collect like terms: sort by factor list, then merge runs. Moving the
    // terms (no copies) matters: this is the simplifier's hottest loop.
    let mut split: Vec<Term> = flat.into_iter().map(into_term).collect();
    split.sort_by(|x, y| x.1.cmp(&y.1));
    let mut collected: Vec<Term> = Vec::with_capacity(split.len());
    let mut overflow = false;
    for (c, fs) in split {
        match collected.last_mut() {
            Some(last) if last.1 == fs => match last.0.checked_add(c) {
                Some(v) => last.0 = v,
                None => {
                    overflow = true;
                    collected.push((c, fs));
                }
            },
            _ => collected.push((c, fs)),
        }
    }
    if overflow {
        // A coefficient that does not fit: keep the sum as it is.
        return unsimplified(collected.into_iter().map(|(c, fs)| build_term(c, fs)).collect());
    }
    collected.retain(|t| t.0 != 0);
    if let Some(e) = recombine_div_mod(&collected, cx) {
        return e;
    }
    build(collected)
}

/// The fallback when folding would overflow: flattened, sorted, otherwise
/// untouched (deterministic, and a fixpoint of `mk_sum`).
fn unsimplified(mut flat: Vec<E>) -> E {
    flat.sort();
    E::sum(flat)
}

/// Orders the terms (constant last) and builds the expression.
fn build(collected: Vec<Term>) -> E {
    let mut out: Vec<E> = Vec::with_capacity(collected.len());
    let mut constant = None;
    for (c, fs) in collected {
        if fs.is_empty() {
            constant = Some(E::Cst(c));
        } else {
            out.push(build_term(c, fs));
        }
    }
    out.extend(constant);
    match out.len() {
        0 => E::Cst(0),
        1 => out.pop().unwrap_or(E::Cst(0)),
        _ => E::sum(out),
    }
}

/// Finds `k * G * (x / y) * y` and `k * G * (x % y)` among the terms and
/// replaces the pair by `k * G * x`. This holds for C division whenever
/// `y != 0`, which evaluating the original already requires. Each
/// application removes a division, so the recursion terminates.
fn recombine_div_mod(terms: &[Term], cx: Cx<'_>) -> Option<E> {
    for (i, (c, fs)) in terms.iter().enumerate() {
        for (p, f) in fs.iter().enumerate() {
            let E::Div(x, y) = f else { continue };
            let (yc, yfs) = split_term(y);
            let others: Vec<E> =
                fs.iter().enumerate().filter(|(q, _)| *q != p).map(|(_, g)| g.clone()).collect();
            let Some(g) = remove_all(&others, &yfs) else { continue };
            if yc == 0 || c.checked_rem(yc) != Some(0) {
                continue;
            }
            let Some(k) = c.checked_div(yc) else { continue };
            let mut key = g.clone();
            key.push(E::Mod(x.clone(), y.clone()));
            key.sort();
            let Some(j) = terms.iter().position(|(c2, fs2)| *c2 == k && *fs2 == key) else { continue };
            let mut rest: Vec<E> = terms
                .iter()
                .enumerate()
                .filter(|(q, _)| *q != i && *q != j)
                .map(|(_, (c, fs))| build_term(*c, fs.clone()))
                .collect();
            let mut factors = g;
            factors.push(E::Cst(k));
            factors.push((**x).clone());
            rest.push(mk_prod(factors, cx));
            return Some(mk_sum(rest, cx));
        }
    }
    None
}
