//! Helpers shared by the smart constructors: viewing an expression as
//! `coefficient * monomial`, multiset operations on factor lists, gcd.

use crate::arith::ArithExpr as E;

/// A term of a sum: constant coefficient times a sorted list of non-constant
/// factors (empty for a constant).
pub(crate) type Term = (i64, Vec<E>);

/// Splits a normalised expression into coefficient and factors.
pub(crate) fn split_term(e: &E) -> Term {
    match e {
        E::Cst(c) => (*c, Vec::new()),
        E::Prod(fs) => match fs.split_first() {
            Some((E::Cst(c), rest)) => (*c, rest.to_vec()),
            _ => (1, fs.to_vec()),
        },
        other => (1, vec![other.clone()]),
    }
}

/// [`split_term`] without copying.
pub(crate) fn into_term(e: E) -> Term {
    match e {
        E::Cst(c) => (c, Vec::new()),
        E::Prod(fs) => {
            let mut fs = std::sync::Arc::unwrap_or_clone(fs);
            match fs.first() {
                Some(E::Cst(c)) => {
                    let c = *c;
                    fs.remove(0);
                    (c, fs)
                }
                _ => (1, fs),
            }
        }
        other => (1, vec![other]),
    }
}

/// The terms of a normalised expression seen as a sum.
pub(crate) fn sum_terms(e: &E) -> Vec<E> {
    match e {
        E::Sum(ts) => ts.to_vec(),
        E::Cst(0) => Vec::new(),
        other => vec![other.clone()],
    }
}

/// Builds `c * f1 * ... * fn` from a coefficient and factors that are
/// already a valid monomial of a normal-form product (sorted, no constant,
/// no sum that the product constructor would distribute).
pub(crate) fn build_term(c: i64, mut fs: Vec<E>) -> E {
    if c == 0 {
        return E::Cst(0);
    }
    if fs.is_empty() {
        return E::Cst(c);
    }
    if c == 1 && fs.len() == 1 {
        if let Some(f) = fs.pop() {
            return f;
        }
    }
    if c != 1 {
        fs.insert(0, E::Cst(c));
    }
    E::prod(fs)
}

/// `from` without the factors of `sub` (as multisets), if `sub` is
/// contained in `from`.
pub(crate) fn remove_all(from: &[E], sub: &[E]) -> Option<Vec<E>> {
    let mut rest = from.to_vec();
    for s in sub {
        let pos = rest.iter().position(|f| f == s)?;
        rest.remove(pos);
    }
    Some(rest)
}

/// The multiset intersection of two factor lists, in `a`'s order.
pub(crate) fn intersect(a: &[E], b: &[E]) -> Vec<E> {
    let mut pool = b.to_vec();
    let mut out = Vec::new();
    for f in a {
        if let Some(pos) = pool.iter().position(|g| g == f) {
            pool.remove(pos);
            out.push(f.clone());
        }
    }
    out
}

/// Greatest common divisor (`gcd(0, x) = x`).
pub(crate) fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a
}

/// `t / d` when the term `t` is a multiple of `d` symbolically: the
/// coefficient divides and every factor of `d` occurs in `t`.
pub(crate) fn divide_term(t: &Term, d: &Term) -> Option<Term> {
    if d.0 == 0 || t.0.checked_rem(d.0)? != 0 {
        return None;
    }
    let rest = remove_all(&t.1, &d.1)?;
    Some((t.0.checked_div(d.0)?, rest))
}

/// Whether an index variable (one the prover would replace by its range)
/// occurs in `e`.
pub(crate) fn has_index_var(e: &E) -> bool {
    e.vars().iter().any(|v| v.kind == crate::arith::VarKind::Index)
}
