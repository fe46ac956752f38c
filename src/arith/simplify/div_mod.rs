//! Integer division and remainder with C (truncating) semantics: constant
//! folding, exact division, common-factor cancellation, nested divisions and
//! the range-dependent rules (1), (2), (3), (5) and (6) of the paper.

use super::prod::mk_prod;
use super::sum::mk_sum;
use super::terms::{divide_term, gcd, intersect, remove_all, split_term, sum_terms, Term};
use super::Cx;
use crate::arith::range::{is_nonneg, is_nonpos, prove_le_in, prove_lt_in};
use crate::arith::ArithExpr as E;

/// `a / b` (`exact`: `ExactDiv`, whose value is the same truncated quotient
/// but which also promises that the division leaves no remainder).
fn mk_div_like(a: E, b: E, exact: bool, cx: Cx<'_>) -> E {
    let rebuild = |a: E, b: E| if exact { E::exact_div(a, b) } else { E::div(a, b) };
    if let (E::Cst(x), E::Cst(y)) = (&a, &b) {
        return match x.checked_div(*y) {
            Some(q) => E::Cst(q),
            None => rebuild(a, b),
        };
    }
    match b {
        // Division by zero has no value; keep it for the caller to see.
        E::Cst(0) => return rebuild(a, b),
        E::Cst(1) => return a,
        E::Cst(-1) => return mk_prod(vec![E::Cst(-1), a], cx),
        _ => {}
    }
    if a == E::Cst(0) {
        return a;
    }
    if a == b {
        return E::Cst(1);
    }
    let terms: Vec<Term> = sum_terms(&a).iter().map(split_term).collect();
    let d = split_term(&b);
    // Every term a multiple of b: the division is exact whatever the signs.
    if let Some(q) = divide_all(&terms, &d, cx) {
        return q;
    }
    if let Some((a2, b2)) = cancel_common(&terms, &d, cx) {
        return mk_div_like(a2, b2, exact, cx);
    }
    // (x / c) / b = x / (c * b) for positive c and b, at any sign of x:
    // truncation is symmetric and floor division composes.
    if let E::Div(x, c) | E::ExactDiv(x, c) = &a {
        let inner_exact = matches!(a, E::ExactDiv(..));
        if is_positive(c, cx) && is_positive(&b, cx) && fits(c, &b) {
            let cb = mk_prod(vec![(**c).clone(), b.clone()], cx);
            return mk_div_like((**x).clone(), cb, exact && inner_exact, cx);
        }
    }
    if cx.ranges() && is_positive(&b, cx) {
        // Rule (1), both signs: |a| < b gives 0.
        if small_against(&a, &b, cx) {
            return E::Cst(0);
        }
        // Rule (2): (q * b + z) / b = q + z / b, sound for truncation when a
        // and z have the same sign.
        if let Some((q, z)) = split_multiples(&terms, &d, &b, cx) {
            if same_sign(&a, &z, cx) {
                let mut out = q;
                out.push(mk_div_like(z, b, exact, cx));
                return mk_sum(out, cx);
            }
        }
    }
    rebuild(a, b)
}

pub(crate) fn mk_div(a: E, b: E, cx: Cx<'_>) -> E {
    mk_div_like(a, b, false, cx)
}

pub(crate) fn mk_exact_div(a: E, b: E, cx: Cx<'_>) -> E {
    mk_div_like(a, b, true, cx)
}

/// `a % b`, C semantics (the result has the sign of `a`).
pub(crate) fn mk_mod(a: E, b: E, cx: Cx<'_>) -> E {
    if let (E::Cst(x), E::Cst(y)) = (&a, &b) {
        return match x.checked_rem(*y) {
            Some(r) => E::Cst(r),
            None => E::modulo(a, b),
        };
    }
    match b {
        E::Cst(0) => return E::modulo(a, b),
        E::Cst(1) | E::Cst(-1) => return E::Cst(0),
        _ => {}
    }
    if a == E::Cst(0) || a == b {
        return E::Cst(0);
    }
    let terms: Vec<Term> = sum_terms(&a).iter().map(split_term).collect();
    let d = split_term(&b);
    // Rule (5): a multiple of b leaves no remainder.
    if divide_all(&terms, &d, cx).is_some() {
        return E::Cst(0);
    }
    // (x % c) % b = x % b when b divides c: both results have the sign of
    // x, are smaller than |b| and are congruent to x modulo b.
    if let E::Mod(x, c) = &a {
        if divide_term(&split_term(c), &d).is_some() {
            return mk_mod((**x).clone(), b, cx);
        }
    }
    if cx.ranges() && is_positive(&b, cx) {
        // Rule (3), both signs: |a| < b leaves a unchanged.
        if small_against(&a, &b, cx) {
            return a;
        }
        // Rules (6) then (5): (q * b + z) % b = z % b when a and z have the
        // same sign (then the truncated quotients differ by exactly q).
        if let Some((_, z)) = split_multiples(&terms, &d, &b, cx) {
            if same_sign(&a, &z, cx) {
                return mk_mod(z, b, cx);
            }
        }
    }
    E::modulo(a, b)
}

/// The quotient when every term is a multiple of the divisor.
fn divide_all(terms: &[Term], d: &Term, cx: Cx<'_>) -> Option<E> {
    let mut out = Vec::with_capacity(terms.len());
    for t in terms {
        let (c, fs) = divide_term(t, d)?;
        let mut fs = fs;
        fs.push(E::Cst(c));
        out.push(mk_prod(fs, cx));
    }
    Some(mk_sum(out, cx))
}

/// Divides dividend and divisor by their common constant and symbolic
/// factors. The rational quotient is unchanged, so the truncated one is too.
fn cancel_common(terms: &[Term], d: &Term, cx: Cx<'_>) -> Option<(E, E)> {
    let mut g = d.0.unsigned_abs();
    let mut common = d.1.clone();
    for (c, fs) in terms {
        g = gcd(g, c.unsigned_abs());
        common = intersect(&common, fs);
    }
    if g <= 1 && common.is_empty() {
        return None;
    }
    let g = i64::try_from(g).ok().filter(|g| *g >= 1)?;
    let shrink = |(c, fs): &Term| -> Option<E> {
        let mut rest = remove_all(fs, &common)?;
        rest.push(E::Cst(c.checked_div(g)?));
        Some(mk_prod(rest, cx))
    };
    let mut num = Vec::with_capacity(terms.len());
    for t in terms {
        num.push(shrink(t)?);
    }
    Some((mk_sum(num, cx), shrink(d)?))
}

/// Splits the dividend into multiples of the divisor (returned as
/// quotients) and the rest `z`. A constant divisor also splits off the
/// multiple part of a constant term at least as large as it. `None` when
/// nothing is a multiple.
fn split_multiples(terms: &[Term], d: &Term, b: &E, cx: Cx<'_>) -> Option<(Vec<E>, E)> {
    let mut q = Vec::new();
    let mut z = Vec::new();
    for t in terms {
        if let Some((c, mut fs)) = divide_term(t, d) {
            fs.push(E::Cst(c));
            q.push(mk_prod(fs, cx));
            continue;
        }
        if let (E::Cst(bv), (c, fs)) = (b, t) {
            if fs.is_empty() && *bv > 0 && *c >= *bv {
                q.push(E::Cst(c / bv));
                z.push(E::Cst(c % bv));
                continue;
            }
        }
        z.push(super::terms::build_term(t.0, t.1.clone()));
    }
    if q.is_empty() {
        return None;
    }
    Some((q, mk_sum(z, cx)))
}

/// `-b < a < b`, for a positive `b`.
fn small_against(a: &E, b: &E, cx: Cx<'_>) -> bool {
    if is_nonneg(a, cx) {
        return prove_lt_in(a, b, cx);
    }
    let neg_b = mk_prod(vec![E::Cst(-1), b.clone()], cx);
    prove_lt_in(&neg_b, a, cx) && (is_nonpos(a, cx) || prove_lt_in(a, b, cx))
}

/// Whether `a` and `z` are provably both non-negative or both non-positive.
fn same_sign(a: &E, z: &E, cx: Cx<'_>) -> bool {
    (is_nonneg(z, cx) && is_nonneg(a, cx)) || (is_nonpos(z, cx) && is_nonpos(a, cx))
}

fn is_positive(e: &E, cx: Cx<'_>) -> bool {
    prove_le_in(&E::Cst(1), e, cx)
}

/// Whether multiplying two constant divisors stays in range (symbolic ones
/// are assumed to, like every array length).
fn fits(c: &E, b: &E) -> bool {
    match (c, b) {
        (E::Cst(x), E::Cst(y)) => x.checked_mul(*y).is_some(),
        _ => true,
    }
}
