//! Constant interval analysis: bounds every expression by two (possibly
//! infinite) integers, treating size variables as `[1, +inf)` and index
//! variables as their range. Cheap and never recursive into the simplifier,
//! so the prover can always fall back on it.

use std::cmp::{max, min};

use crate::arith::{ArithExpr as E, Var, VarKind};

/// An extended integer. `i128` holds every product of two `i64`s; anything
/// beyond that saturates to the infinity of its sign, which keeps bounds
/// sound (no evaluation in `i64` can reach it anyway).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Ext {
    NegInf,
    Fin(i128),
    PosInf,
}

use Ext::{Fin, NegInf, PosInf};

impl Ext {
    fn from_i128(v: Option<i128>, sign_hint: i8) -> Ext {
        match v {
            Some(v) => Fin(v),
            None if sign_hint < 0 => NegInf,
            None => PosInf,
        }
    }
    fn sign(self) -> i8 {
        match self {
            NegInf => -1,
            PosInf => 1,
            Fin(v) => v.signum() as i8,
        }
    }
    fn neg(self) -> Ext {
        match self {
            NegInf => PosInf,
            PosInf => NegInf,
            Fin(v) => Ext::from_i128(v.checked_neg(), 1),
        }
    }
    /// Sum of two bounds on the same side (never `-inf + +inf`).
    fn add(self, o: Ext) -> Ext {
        match (self, o) {
            (Fin(a), Fin(b)) => Ext::from_i128(a.checked_add(b), a.signum() as i8),
            (NegInf, _) | (_, NegInf) => NegInf,
            _ => PosInf,
        }
    }
    /// Product; `0 * inf = 0` is right for bounds of finite values.
    fn mul(self, o: Ext) -> Ext {
        match (self, o) {
            (Fin(a), Fin(b)) => Ext::from_i128(a.checked_mul(b), (a.signum() * b.signum()) as i8),
            (Fin(0), _) | (_, Fin(0)) => Fin(0),
            (a, b) => {
                if a.sign() * b.sign() < 0 {
                    NegInf
                } else {
                    PosInf
                }
            }
        }
    }
    pub(crate) fn fin(self) -> Option<i128> {
        match self {
            Fin(v) => Some(v),
            _ => None,
        }
    }
}

/// Inclusive bounds `lo <= e <= hi`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Iv {
    pub lo: Ext,
    pub hi: Ext,
}

const ANY: Iv = Iv { lo: NegInf, hi: PosInf };

/// Variable ranges may mention other variables; a cycle of ranges would
/// recurse forever, so the nesting is capped.
const MAX_RANGE_NESTING: u8 = 8;

pub(crate) fn interval(e: &E) -> Iv {
    iv(e, 0)
}

fn iv(e: &E, nest: u8) -> Iv {
    match e {
        E::Cst(c) => Iv { lo: Fin(i128::from(*c)), hi: Fin(i128::from(*c)) },
        E::Var(v) => var_iv(v, nest),
        E::Sum(ts) => ts.iter().fold(Iv { lo: Fin(0), hi: Fin(0) }, |acc, t| {
            let x = iv(t, nest);
            Iv { lo: acc.lo.add(x.lo), hi: acc.hi.add(x.hi) }
        }),
        E::Prod(fs) => fs.iter().fold(Iv { lo: Fin(1), hi: Fin(1) }, |acc, f| mul(acc, iv(f, nest))),
        E::Div(a, b) | E::ExactDiv(a, b) => div(iv(a, nest), iv(b, nest)),
        E::Mod(a, b) => rem(iv(a, nest), iv(b, nest)),
        E::Pow(a, b) => pow(iv(a, nest), iv(b, nest)),
        E::Log2(a) => {
            let a = iv(a, nest);
            let lg = |v: i128| Fin(i128::from(127 - v.max(1).leading_zeros()));
            let lo = a.lo.fin().map_or(Fin(0), lg);
            // An i64 has at most 62 as its floor log2.
            let hi = a.hi.fin().map_or(Fin(62), lg);
            Iv { lo, hi: min(hi, Fin(62)) }
        }
        E::Min(a, b) => {
            let (a, b) = (iv(a, nest), iv(b, nest));
            Iv { lo: min(a.lo, b.lo), hi: min(a.hi, b.hi) }
        }
        E::Max(a, b) => {
            let (a, b) = (iv(a, nest), iv(b, nest));
            Iv { lo: max(a.lo, b.lo), hi: max(a.hi, b.hi) }
        }
        E::IfThenElse(_, t, f) => {
            let (t, f) = (iv(t, nest), iv(f, nest));
            Iv { lo: min(t.lo, f.lo), hi: max(t.hi, f.hi) }
        }
    }
}

fn var_iv(v: &Var, nest: u8) -> Iv {
    if nest >= MAX_RANGE_NESTING {
        return match v.kind {
            VarKind::Size => Iv { lo: Fin(1), hi: PosInf },
            VarKind::Index => ANY,
        };
    }
    let lo = iv(&v.range.start, nest + 1).lo;
    let hi = match &v.range.stop {
        Some(s) => iv(s, nest + 1).hi.add(Fin(-1)),
        None => PosInf,
    };
    match v.kind {
        VarKind::Size => Iv { lo: max(lo, Fin(1)), hi },
        VarKind::Index => Iv { lo, hi },
    }
}

fn mul(a: Iv, b: Iv) -> Iv {
    let c = [a.lo.mul(b.lo), a.lo.mul(b.hi), a.hi.mul(b.lo), a.hi.mul(b.hi)];
    Iv { lo: c.iter().copied().min().unwrap_or(NegInf), hi: c.iter().copied().max().unwrap_or(PosInf) }
}

/// Truncating division of a finite value by a bound (`x / inf = 0`).
fn tdiv(x: i128, d: Ext) -> Ext {
    match d {
        Fin(d) if d != 0 => Ext::from_i128(x.checked_div(d), 1),
        Fin(_) => PosInf,
        _ => Fin(0),
    }
}

fn div(a: Iv, b: Iv) -> Iv {
    if b.lo >= Fin(1) {
        // For a positive divisor the quotient grows with a; for a fixed a it
        // moves towards zero as b grows.
        let hi = match a.hi {
            Fin(h) if h >= 0 => tdiv(h, b.lo),
            Fin(h) => tdiv(h, b.hi),
            other => other,
        };
        let lo = match a.lo {
            Fin(l) if l >= 0 => tdiv(l, b.hi),
            Fin(l) => tdiv(l, b.lo),
            other => other,
        };
        Iv { lo, hi }
    } else if b.hi <= Fin(-1) {
        let q = div(a, Iv { lo: b.hi.neg(), hi: b.lo.neg() });
        Iv { lo: q.hi.neg(), hi: q.lo.neg() }
    } else {
        // Any non-zero divisor: |a / b| <= |a|.
        let m = max(a.lo.neg(), a.hi);
        Iv { lo: m.neg(), hi: m }
    }
}

fn rem(a: Iv, b: Iv) -> Iv {
    // |a % b| <= |b| - 1, and the result has the sign of a.
    let bmax = max(b.lo.neg(), b.hi);
    let m = match bmax {
        Fin(v) => Ext::from_i128(v.checked_sub(1), 1),
        other => other,
    };
    let lo = if a.lo >= Fin(0) { Fin(0) } else { max(a.lo, m.neg()) };
    let hi = if a.hi <= Fin(0) { Fin(0) } else { min(a.hi, m) };
    Iv { lo, hi }
}

fn pow(a: Iv, b: Iv) -> Iv {
    if a.lo < Fin(0) || b.lo < Fin(0) {
        return ANY;
    }
    let p = |x: Ext, y: Ext| match (x, y) {
        (Fin(x), Fin(y)) => Ext::from_i128(u32::try_from(y).ok().and_then(|y| x.checked_pow(y)), 1),
        _ => PosInf,
    };
    let lo = if a.lo >= Fin(1) { p(a.lo, b.lo) } else { Fin(0) };
    // 0^0 = 1: a zero base still allows the value 1.
    Iv { lo, hi: max(p(a.hi, b.hi), Fin(1)) }
}
