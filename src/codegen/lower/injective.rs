//! A `scatter` writes element `f(i)` of its result from work-item `i`: two
//! indices `i` that `f` maps to one element are two work-items writing
//! one element (a race on the device, an unwritten element that the
//! interpreter refuses). The lowering accepts a scatter only where `f` is
//! proven injective over `[0, n)` (issue 23); with its indices proven
//! inside `[0, n)` (`bounds`), that makes it a permutation.
//!
//! Proven injective, for an index function already simplified with its
//! index `i` ranging over `[0, n)`:
//!
//! * any function at a constant length of at most [`ENUMERATE_LIMIT`]
//!   elements whose only variable is `i`: evaluated at every index;
//! * `f(i + 1) - f(i)` simplifies to a non-zero constant (`a * i + b`,
//!   `N - 1 - i`): strictly monotone;
//! * `(g(i)) % n` with `g(i + 1) - g(i)` equal to 1 or -1 (`(i + c) % N`):
//!   `n` consecutive values, one per remainder;
//! * `(i % a) * b + i / a` with `a * b = n` (a transposition): the two
//!   digits of `i` in base `a`, swapped.

use crate::arith::{prove_eq, prove_le, simplify, ArithExpr};
use std::collections::HashMap;

/// Largest constant length whose index function is checked by evaluating
/// it at every index (a fraction of a millisecond per thousand elements).
pub(super) const ENUMERATE_LIMIT: i64 = 1 << 16;

/// Whether `f` (over the index `param` in `[0, n)`, simplified, its values
/// proven inside `[0, n)`) is proven injective.
pub(super) fn proven_injective(f: &ArithExpr, param: &str, n: &ArithExpr) -> bool {
    if let Some(len) = n.as_cst() {
        if let Some(answer) = enumerated(f, param, len) {
            return answer;
        }
    }
    step(f, param).is_some_and(|d| d != 0) || rotation(f, param, n) || transposition(f, param, n)
}

/// Evaluates `f` at every index of a constant length: `None` when the
/// length is too large or `f` names another variable (a symbolic size).
fn enumerated(f: &ArithExpr, param: &str, len: i64) -> Option<bool> {
    if !(0..=ENUMERATE_LIMIT).contains(&len) {
        return None;
    }
    let mut seen = vec![false; len as usize];
    for i in 0..len {
        let v = f.eval_with(&|name| (name == param).then_some(i)).ok()?;
        match usize::try_from(v).ok().and_then(|v| seen.get_mut(v)) {
            Some(s) if !*s => *s = true,
            // Outside the array (the bounds check refuses it anyway) or
            // written twice.
            _ => return Some(false),
        }
    }
    Some(true)
}

/// `f(i + 1) - f(i)` when it simplifies to a constant.
fn step(f: &ArithExpr, param: &str) -> Option<i64> {
    let ArithExpr::Var(i) = find_var(f, param)? else { return None };
    let next = ArithExpr::add(ArithExpr::Var(i), ArithExpr::Cst(1));
    let shifted = f.substitute(&HashMap::from([(param.to_string(), next)]));
    simplify(&ArithExpr::sub(shifted, f.clone())).as_cst()
}

/// `g(i) % n` where `g` steps by 1 or -1: its `n` values are consecutive
/// integers, which leave `n` different remainders (C's remainder of a
/// negative one is negative or 0, which the bounds check has refused
/// unless it is the only value).
fn rotation(f: &ArithExpr, param: &str, n: &ArithExpr) -> bool {
    let ArithExpr::Mod(g, m) = f else { return false };
    prove_eq(m, n) && matches!(step(g, param), Some(1 | -1))
}

/// `(i % a) * b + i / a` (either order, the product's factors in any order)
/// with `a >= 1` and `a * b = n`.
fn transposition(f: &ArithExpr, param: &str, n: &ArithExpr) -> bool {
    let ArithExpr::Sum(ts) = f else { return false };
    let [x, y] = ts.as_slice() else { return false };
    [(x, y), (y, x)].into_iter().any(|(quot, prod)| {
        let ArithExpr::Div(q, a) = quot else { return false };
        if !is_var(q, param) || !prove_le(&ArithExpr::Cst(1), a) {
            return false;
        }
        let ArithExpr::Prod(fs) = prod else { return false };
        let Some(k) =
            fs.iter().position(|t| matches!(t, ArithExpr::Mod(r, a2) if is_var(r, param) && prove_eq(a2, a)))
        else {
            return false;
        };
        let b: Vec<ArithExpr> =
            fs.iter().enumerate().filter(|(j, _)| *j != k).map(|(_, t)| t.clone()).collect();
        let b = ArithExpr::prod(b);
        // `b >= 1` too: with `a * b = n` and `a >= 1` it follows for a
        // positive `n`, but a product proven equal says nothing of signs.
        prove_le(&ArithExpr::Cst(1), &b) && prove_eq(&simplify(&ArithExpr::mul((**a).clone(), b)), n)
    })
}

fn is_var(e: &ArithExpr, param: &str) -> bool {
    matches!(e, ArithExpr::Var(v) if v.name == param)
}

/// The variable `param` as it occurs in `f` (with its range).
fn find_var(f: &ArithExpr, param: &str) -> Option<ArithExpr> {
    f.vars().into_iter().find(|v| v.name == param).map(ArithExpr::Var)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_i(text: &str, n: ArithExpr) -> ArithExpr {
        let e = crate::arith::parse_arith(text).unwrap();
        let i = ArithExpr::index("i", ArithExpr::Cst(0), n);
        simplify(&e.substitute(&HashMap::from([("i".to_string(), i)])))
    }

    #[test]
    fn permutations_are_proven_and_collisions_refused() {
        let n = ArithExpr::size("N");
        for ok in ["i", "N - 1 - i", "(i + 3) % N", "(N - 1 - i + 5) % N"] {
            assert!(proven_injective(&with_i(ok, n.clone()), "i", &n), "{ok}");
        }
        for bad in ["i / 2", "7", "0 * i", "(2 * i) % N", "i % 2"] {
            assert!(!proven_injective(&with_i(bad, n.clone()), "i", &n), "{bad}");
        }
        let (m, k) = (ArithExpr::size("M"), ArithExpr::size("K"));
        let mk = ArithExpr::mul(m.clone(), k.clone());
        assert!(proven_injective(&with_i("(i % M) * K + i / M", mk.clone()), "i", &mk));
        assert!(!proven_injective(&with_i("(i % M) * M + i / M", mk.clone()), "i", &mk));
        let c = ArithExpr::Cst(16);
        assert!(proven_injective(&with_i("(i % 4) * 4 + i / 4", c.clone()), "i", &c));
        assert!(!proven_injective(&with_i("(i % 4) * 2 + i / 8", c.clone()), "i", &c));
        let big = ArithExpr::Cst(ENUMERATE_LIMIT * 4);
        assert!(proven_injective(&with_i("(i % 8) * 32768 + i / 8", big.clone()), "i", &big));
    }
}
