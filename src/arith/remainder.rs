//! Cheap answers about `e % n` for a constant `n`, for questions whose only
//! use is whether the simplifier would make `e % n` a non-zero constant (the
//! vector-access alignment check): simplifying `e % n` costs tens of
//! thousands of instructions per distinct `e`, and the unrolled copies of one
//! access each ask a distinct one. Both answers rest on the simplifier being
//! sound (property-tested in `tests/arith_props.rs`, where these are too).

use super::expr::{ArithExpr, Var, VarKind};
use super::simplify::terms::gcd;

/// Whether every value of `e` is a multiple of `n` (`n >= 1`), seen from its
/// structure alone: constants, sums of multiples, products whose factors'
/// multiples make one. `false` means "not seen". Where it holds, `e % n`
/// is zero everywhere, so it cannot simplify to a non-zero constant.
pub fn is_multiple_of(e: &ArithExpr, n: u64) -> bool {
    n >= 1 && factor_in(e, n) == n
}

/// `gcd(d, n)` for a `d` that every value of `e` is a multiple of.
fn factor_in(e: &ArithExpr, n: u64) -> u64 {
    match e {
        ArithExpr::Cst(c) => gcd(c.unsigned_abs(), n),
        ArithExpr::Sum(terms) => {
            terms.iter().fold(n, |g, t| if g == 1 { 1 } else { gcd(g, factor_in(t, n)) })
        }
        ArithExpr::Prod(factors) => factors.iter().fold(1, |g, f| {
            if g == n {
                n
            } else {
                gcd((u128::from(g) * u128::from(factor_in(f, n)) % u128::from(n)) as u64, n)
            }
        }),
        _ => 1,
    }
}

/// Whether `e % n` (`n >= 1`, C semantics) takes two different values at two
/// points inside the variables' ranges (every variable at its lowest value,
/// then all of them one above it, then one at a time one above it). Where it does, `e % n` is not a
/// constant, so a sound simplifier cannot make it one. `false` means "not
/// seen". Expressions with an exact division (which the simplifier may
/// treat as exact where a point would not be) are not looked at.
pub fn remainder_varies(e: &ArithExpr, n: i64) -> bool {
    if n < 1 || has_exact_div(e) {
        return false;
    }
    // The variables of `e` and those their ranges name, transitively.
    let mut vars: Vec<&Var> = Vec::new();
    collect_vars(e, &mut vars);
    let mut i = 0;
    while i < vars.len() {
        let range = &vars[i].range;
        for bound in std::iter::once(&*range.start).chain(range.stop.as_deref()) {
            if has_exact_div(bound) {
                return false;
            }
            collect_vars(bound, &mut vars);
        }
        i += 1;
        if vars.len() > 32 {
            return false;
        }
    }
    // Sizes first: `.. * N` is the usual witness, and the search stops at one.
    vars.sort_by_key(|v| v.kind != VarKind::Size);
    let lookup_in =
        |vals: &[Option<i64>], name: &str| vars.iter().position(|v| v.name == name).and_then(|i| vals[i]);
    // The lowest point, each variable at its start (the starts may name
    // other variables).
    let mut low: Vec<Option<i64>> = vec![None; vars.len()];
    loop {
        let mut progress = false;
        for i in 0..vars.len() {
            if low[i].is_none() {
                if let Ok(s) = vars[i].range.start.eval_with(&|name| lookup_in(&low, name)) {
                    low[i] = Some(s);
                    progress = true;
                }
            }
        }
        if !progress {
            break;
        }
    }
    if low.iter().any(Option::is_none) {
        return false;
    }
    // `e % n` at a point, where every variable lies in its range.
    let rem_at = |vals: &[Option<i64>]| -> Option<i64> {
        let lookup = |name: &str| lookup_in(vals, name);
        for (v, x) in vars.iter().zip(vals) {
            let x = (*x)?;
            if x < v.range.start.eval_with(&lookup).ok()? || (v.kind == VarKind::Size && x < 1) {
                return None;
            }
            if let Some(stop) = &v.range.stop {
                if x >= stop.eval_with(&lookup).ok()? {
                    return None;
                }
            }
        }
        Some(e.eval_with(&lookup).ok()? % n)
    };
    let Some(r0) = rem_at(&low) else { return false };
    let up = |x: &Option<i64>| x.and_then(|x| x.checked_add(1));
    // Every variable one up first (`(x + N) % N * M` needs two to move).
    let all_up: Vec<Option<i64>> = low.iter().map(up).collect();
    rem_at(&all_up).is_some_and(|r| r != r0)
        || (0..vars.len()).any(|i| {
            let mut p = low.clone();
            p[i] = up(&p[i]);
            rem_at(&p).is_some_and(|r| r != r0)
        })
}

/// Pushes the variables of `e` not in `out` yet.
fn collect_vars<'a>(e: &'a ArithExpr, out: &mut Vec<&'a Var>) {
    e.visit_vars(&mut |v| {
        if !out.iter().any(|o| o.name == v.name) {
            out.push(v)
        }
    });
}

fn has_exact_div(e: &ArithExpr) -> bool {
    match e {
        ArithExpr::Cst(_) | ArithExpr::Var(_) => false,
        ArithExpr::ExactDiv(..) => true,
        ArithExpr::Sum(es) | ArithExpr::Prod(es) => es.iter().any(has_exact_div),
        ArithExpr::Div(a, b)
        | ArithExpr::Mod(a, b)
        | ArithExpr::Pow(a, b)
        | ArithExpr::Min(a, b)
        | ArithExpr::Max(a, b) => has_exact_div(a) || has_exact_div(b),
        ArithExpr::Log2(a) => has_exact_div(a),
        ArithExpr::IfThenElse(p, t, f) => {
            has_exact_div(&p.lhs) || has_exact_div(&p.rhs) || has_exact_div(t) || has_exact_div(f)
        }
    }
}
