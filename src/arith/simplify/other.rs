//! Min, max, conditionals, powers and logarithms: folded when constant or
//! when the prover decides the comparison.

use super::Cx;
use crate::arith::range::{prove_eq_in, prove_le_in, prove_lt_in};
use crate::arith::{ArithExpr as E, CmpOp, Pred};

pub(crate) fn mk_min(a: E, b: E, cx: Cx<'_>) -> E {
    min_max(a, b, true, cx)
}

pub(crate) fn mk_max(a: E, b: E, cx: Cx<'_>) -> E {
    min_max(a, b, false, cx)
}

fn min_max(a: E, b: E, is_min: bool, cx: Cx<'_>) -> E {
    if let (E::Cst(x), E::Cst(y)) = (&a, &b) {
        return E::Cst(if is_min { *x.min(y) } else { *x.max(y) });
    }
    if a == b {
        return a;
    }
    if prove_le_in(&a, &b, cx) {
        return if is_min { a } else { b };
    }
    if prove_le_in(&b, &a, cx) {
        return if is_min { b } else { a };
    }
    // Both are commutative: order the operands canonically.
    let (a, b) = if b < a { (b, a) } else { (a, b) };
    if is_min {
        E::min(a, b)
    } else {
        E::max(a, b)
    }
}

/// Decides a predicate when the ranges allow it.
pub(crate) fn decide(p: &Pred, cx: Cx<'_>) -> Option<bool> {
    let (l, r) = (&p.lhs, &p.rhs);
    let lt = |a: &E, b: &E| prove_lt_in(a, b, cx);
    let le = |a: &E, b: &E| prove_le_in(a, b, cx);
    match p.op {
        CmpOp::Lt => decide_pair(lt(l, r), le(r, l)),
        CmpOp::Le => decide_pair(le(l, r), lt(r, l)),
        CmpOp::Gt => decide_pair(lt(r, l), le(l, r)),
        CmpOp::Ge => decide_pair(le(r, l), lt(l, r)),
        CmpOp::Eq => decide_pair(prove_eq_in(l, r, cx), lt(l, r) || lt(r, l)),
        CmpOp::Ne => decide_pair(lt(l, r) || lt(r, l), prove_eq_in(l, r, cx)),
    }
}

fn decide_pair(holds: bool, fails: bool) -> Option<bool> {
    match (holds, fails) {
        (true, _) => Some(true),
        (false, true) => Some(false),
        _ => None,
    }
}

pub(crate) fn mk_ite(p: Pred, t: E, f: E, cx: Cx<'_>) -> E {
    if let (E::Cst(l), E::Cst(r)) = (&p.lhs, &p.rhs) {
        return if p.op.holds(*l, *r) { t } else { f };
    }
    // Equal branches: the condition does not matter (evaluating it can only
    // fail where the original fails too).
    if t == f {
        return t;
    }
    match decide(&p, cx) {
        Some(true) => t,
        Some(false) => f,
        None => E::if_then_else(p, t, f),
    }
}

pub(crate) fn mk_pow(a: E, b: E) -> E {
    match (&a, &b) {
        (E::Cst(x), E::Cst(y)) => match u32::try_from(*y).ok().and_then(|y| x.checked_pow(y)) {
            Some(v) => E::Cst(v),
            None => E::pow(a, b),
        },
        (_, E::Cst(0)) => E::Cst(1),
        (_, E::Cst(1)) => a,
        _ => E::pow(a, b),
    }
}

pub(crate) fn mk_log2(a: E) -> E {
    match &a {
        E::Cst(x) if *x > 0 => E::Cst(63 - i64::from(x.leading_zeros())),
        // log2(2^e) = e for every e where 2^e does not overflow.
        E::Pow(base, e) if **base == E::Cst(2) => (**e).clone(),
        _ => E::log2(a),
    }
}
