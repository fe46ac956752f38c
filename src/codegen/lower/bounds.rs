//! User index arithmetic stays inside its buffer (issue 23).
//!
//! The index functions of `gather` and `scatter` and the index of `at` are
//! the user's arithmetic, emitted as 32-bit C `int` expressions that the
//! kernel never checks. The lowering accepts one only where the range
//! analysis proves, for every index `i` in `[0, n)` of an array of `n`
//! elements, that
//!
//! * the index it gives lies in `[0, n)`, and
//! * every divisor is provably not 0 (the interpreter reports a division by
//!   zero; x86 traps), and
//! * every sum and product of the user's expression lies within
//!   `[-limit, limit]`, where `limit` is `2^31 - 1` when the length is a
//!   constant and `n` otherwise (a length fits an `int`: `sizes_fit`), so
//!   the 32-bit arithmetic of the kernel computes what the interpreter's
//!   64-bit arithmetic computes.
//!
//! Anything else is refused with the pattern's position: as "outside" when
//! the first or last index provably gives an index outside the array, as
//! "not proven" otherwise (giving the sizes with `--size` often proves it).

use super::Lowerer;
use crate::arith::{prove_eq, prove_le, prove_lt, ArithExpr, Range, Var, VarKind};
use crate::codegen::{CompileError, Unsupported};
use crate::ir::{IndexFun, Span};
use std::collections::HashMap;

/// Largest value of a C `int`.
const INT_MAX: i64 = i32::MAX as i64;

impl Lowerer<'_> {
    /// Refuses `gather`'s or `scatter`'s index function `g` over `n`
    /// elements unless it provably stays inside them without overflow.
    pub(crate) fn check_index_fun(
        &self,
        what: &str,
        g: &IndexFun,
        n: &ArithExpr,
        span: Span,
    ) -> Result<(), CompileError> {
        for n in self.lengths(n) {
            self.check_index_fun_at(what, g, &n, span)?;
        }
        Ok(())
    }

    /// [`Self::check_index_fun`] for one length.
    fn check_index_fun_at(
        &self,
        what: &str,
        g: &IndexFun,
        n: &ArithExpr,
        span: Span,
    ) -> Result<(), CompileError> {
        let n = self.known(n);
        let i = ArithExpr::Var(Var {
            name: g.param.clone(),
            kind: VarKind::Index,
            range: Range::new(ArithExpr::Cst(0), n.clone()),
        });
        let raw = self.known_raw(&g.body).substitute(&HashMap::from([(g.param.clone(), i)]));
        let body = crate::arith::simplify(&raw);
        let at = |k: ArithExpr| {
            let m = HashMap::from([(g.param.clone(), k)]);
            crate::arith::simplify(&body.substitute(&m))
        };
        let ends =
            [(ArithExpr::Cst(0), "0"), (ArithExpr::sub(n.clone(), ArithExpr::Cst(1)), "its last index")];
        for (k, name) in ends {
            let v = at(k);
            if outside(&v, &n) {
                let (function, what, len) = (g.clone(), what.to_string(), n.clone());
                return self.unsupported(
                    span,
                    Unsupported::IndexFunOutside { function, what, value: v, at: name, len },
                );
            }
        }
        self.check_inside(what, &body, &n, span)?;
        self.check_terms(what, &raw, &n, span)?;
        if what == "scatter" && !super::injective::proven_injective(&body, &g.param, &n) {
            return self.unsupported(span, Unsupported::NotPermutation { function: g.clone(), len: n });
        }
        Ok(())
    }

    /// Refuses `at(index)` of an array of `n` elements unless the index is
    /// provably inside it.
    pub(crate) fn check_at(&self, index: &ArithExpr, n: &ArithExpr, span: Span) -> Result<(), CompileError> {
        for n in self.lengths(n) {
            self.check_at_len(index, &n, span)?;
        }
        Ok(())
    }

    /// [`Self::check_at`] for one length.
    fn check_at_len(&self, index: &ArithExpr, n: &ArithExpr, span: Span) -> Result<(), CompileError> {
        let (raw, n) = (self.known_raw(index), self.known(n));
        let index = crate::arith::simplify(&raw);
        if let (Some(k), Some(c)) = (index.as_cst(), n.as_cst()) {
            if (0..c).contains(&k) {
                return Ok(());
            }
        }
        if outside(&index, &n) {
            return self.unsupported(span, Unsupported::AtOutside { index, len: n });
        }
        self.check_inside("at", &index, &n, span)?;
        self.check_terms("at", &raw, &n, span)
    }

    /// `e` (over the index variable in `[0, n)` and sizes) lies in `[0, n)`
    /// and none of its sums and products leaves `[-limit, limit]`.
    fn check_inside(&self, what: &str, e: &ArithExpr, n: &ArithExpr, span: Span) -> Result<(), CompileError> {
        if !inside(e, n) {
            let (index, what, len) = (e.clone(), what.to_string(), n.clone());
            return self.unsupported(span, Unsupported::IndexNotInside { index, what, len });
        }
        self.check_terms(what, e, n, span)
    }

    /// None of the sums and products of `e` leaves `[-limit, limit]`.
    fn check_terms(&self, what: &str, e: &ArithExpr, n: &ArithExpr, span: Span) -> Result<(), CompileError> {
        let limit = if n.as_cst().is_some() { ArithExpr::Cst(INT_MAX) } else { n.clone() };
        let neg = ArithExpr::mul(ArithExpr::Cst(-1), limit.clone());
        let (mut bad, mut zero) = (None, None);
        visit_terms(e, &mut |t| match t {
            ArithExpr::Div(_, d) | ArithExpr::ExactDiv(_, d) | ArithExpr::Mod(_, d) => {
                let neg = ArithExpr::mul(ArithExpr::Cst(-1), (**d).clone());
                let nonzero = at_least_one(d) || at_least_one(&neg);
                if zero.is_none() && !nonzero {
                    zero = Some((**d).clone());
                }
            }
            _ => {
                if bad.is_none() && !within(t, &neg, &limit) {
                    bad = Some(t.clone());
                }
            }
        });
        if let Some(d) = zero {
            return self.unsupported(span, Unsupported::DivisorZero { divisor: d, what: what.to_string() });
        }
        match bad {
            None => Ok(()),
            Some(term) => {
                self.unsupported(span, Unsupported::TermTooLarge { term, what: what.to_string(), limit })
            }
        }
    }

    /// The lengths `n` takes: one per length of each enclosing `iterate`
    /// whose length variable it names (inside an `iterate` lengths are the
    /// run-time `iter_len_k`, whose values the lowering knows).
    fn lengths(&self, n: &ArithExpr) -> Vec<ArithExpr> {
        let mut out = vec![n.clone()];
        for v in n.vars() {
            if let Some(lens) = self.iter_lens.get(&v.name) {
                out = out
                    .iter()
                    .flat_map(|e| {
                        lens.iter().map(|l| e.substitute(&HashMap::from([(v.name.clone(), l.clone())])))
                    })
                    .collect();
            }
        }
        out
    }

    /// `e` with the sizes known at compile time substituted, simplified.
    fn known(&self, e: &ArithExpr) -> ArithExpr {
        crate::arith::simplify(&self.known_raw(e))
    }

    /// `e` with the sizes known at compile time substituted, as written
    /// (the kernel computes it so where simplification is off).
    fn known_raw(&self, e: &ArithExpr) -> ArithExpr {
        let mut e = e.clone();
        e.substitute_known(&self.inp.opts.sizes);
        // A size that the kernel's own `split(m)` or `asVector(m)` splits
        // is a multiple of m at every launch (`sizes_fit` refuses others):
        // write it so, `N` as `m * N`, which proves strided index functions
        // such as `reorder-stride`'s `(N/s) * (i % s) + i / s`.
        let divisors = &self.size_divisors;
        let map: HashMap<String, ArithExpr> = e
            .vars()
            .into_iter()
            .filter_map(|v| {
                let d = *divisors.get(&v.name)?;
                (d > 1).then(|| (v.name.clone(), ArithExpr::mul(ArithExpr::Cst(d), ArithExpr::Var(v))))
            })
            .collect();
        if map.is_empty() {
            e
        } else {
            e.substitute(&map)
        }
    }
}

/// Per size variable, the least common multiple of the constant factors
/// that split (`split(m)`, `asVector(m)`) an array of exactly that length
/// in the def being lowered; computed once per lowering.
pub(super) fn size_divisors(inp: &super::Inputs<'_>) -> HashMap<String, i64> {
    use crate::ir::{ExprKind, FunKind, Pattern};
    let mut out: HashMap<String, i64> = HashMap::new();
    for d in &inp.program.defs {
        for (_, e) in crate::ir::visit::expr_positions(&d.body) {
            let ExprKind::Call(f, args) = &e.kind else { continue };
            let m = if let FunKind::Pattern(Pattern::Split(n)) = &f.kind {
                n.as_cst()
            } else if let FunKind::Pattern(Pattern::AsVector(w)) = &f.kind {
                Some(i64::from(*w))
            } else {
                None
            };
            // Only the lowered def's expressions have types here.
            let len = args.first().and_then(|a| inp.types.exprs.get(&a.id));
            if let (Some(m @ 2..), Some(crate::types::Type::Array(_, len))) = (m, len) {
                if let ArithExpr::Var(v) = crate::arith::simplify(len) {
                    // (A multiple too large to be a length is dropped.)
                    let old = out.get(&v.name).copied().unwrap_or(1);
                    let l = old / crate::arith::gcd(old as u64, m as u64) as i64 * m;
                    if l <= 1 << 30 {
                        out.insert(v.name, l);
                    }
                }
            }
        }
    }
    out
}

/// Provably below 0 or at least `n`.
fn outside(v: &ArithExpr, n: &ArithExpr) -> bool {
    prove_lt(v, &ArithExpr::Cst(0)) || prove_le(n, v)
}

/// Calls `f` on every sum, product, quotient and remainder of `e` (the
/// operations that can overflow or divide by zero), outermost first.
fn visit_terms(e: &ArithExpr, f: &mut dyn FnMut(&ArithExpr)) {
    match e {
        ArithExpr::Cst(_) | ArithExpr::Var(_) => {}
        ArithExpr::Sum(ts) | ArithExpr::Prod(ts) => {
            f(e);
            ts.iter().for_each(|t| visit_terms(t, f));
        }
        ArithExpr::Div(a, b) | ArithExpr::ExactDiv(a, b) | ArithExpr::Mod(a, b) => {
            f(e);
            visit_terms(a, f);
            visit_terms(b, f);
        }
        ArithExpr::Min(a, b) | ArithExpr::Max(a, b) => {
            visit_terms(a, f);
            visit_terms(b, f);
        }
        ArithExpr::Pow(..) | ArithExpr::Log2(_) => f(e),
        ArithExpr::IfThenElse(p, t, o) => {
            visit_terms(&p.lhs, f);
            visit_terms(&p.rhs, f);
            visit_terms(t, f);
            visit_terms(o, f);
        }
    }
}

/// `0 <= e < n` for every value of the index variables.
fn inside(e: &ArithExpr, n: &ArithExpr) -> bool {
    let zero = ArithExpr::Cst(0);
    if prove_le(&zero, e) && prove_lt(e, n) {
        return true;
    }
    match (bound(e, false), bound(e, true)) {
        (Some(lo), Some(hi)) => prove_le(&zero, &lo) && prove_lt(&hi, n),
        _ => false,
    }
}

/// `e >= 1` for every value of the index variables.
fn at_least_one(e: &ArithExpr) -> bool {
    let one = ArithExpr::Cst(1);
    prove_le(&one, e) || bound(e, false).is_some_and(|l| prove_le(&one, &l))
}

/// `lo <= e <= hi` for every value of the index variables.
fn within(e: &ArithExpr, lo: &ArithExpr, hi: &ArithExpr) -> bool {
    if prove_le(lo, e) && prove_le(e, hi) {
        return true;
    }
    match (bound(e, false), bound(e, true)) {
        (Some(l), Some(h)) => prove_le(lo, &l) && prove_le(&h, hi),
        _ => false,
    }
}

/// An inclusive bound of `e` over the sizes alone (`up`: upper), where the
/// prover's own bounds keep a `min` of two candidates it cannot order
/// (`(i + 1) % N` in `[0, N - 1]`, the transposition `i / M + (i % M) * N`).
fn bound(e: &ArithExpr, up: bool) -> Option<ArithExpr> {
    use ArithExpr as E;
    let nonneg = |x: &E| bound(x, false).is_some_and(|l| prove_le(&E::Cst(0), &l));
    let b = match e {
        E::Cst(_) => e.clone(),
        E::Var(v) => match v.kind {
            VarKind::Size => e.clone(),
            VarKind::Index if up => ArithExpr::sub(v.range.stop.as_deref()?.clone(), E::Cst(1)),
            VarKind::Index => (*v.range.start).clone(),
        },
        E::Sum(ts) => E::sum(ts.iter().map(|t| bound(t, up)).collect::<Option<Vec<_>>>()?),
        E::Prod(fs) => {
            let (c, rest): (i64, Vec<&E>) = match fs.split_first() {
                Some((E::Cst(c), rest)) => (*c, rest.iter().collect()),
                _ => (1, fs.iter().collect()),
            };
            if !rest.iter().all(|f| nonneg(f)) {
                return crate::arith::max_value(e).filter(|_| up).or_else(|| {
                    if up {
                        None
                    } else {
                        crate::arith::min_value(e)
                    }
                });
            }
            let dir = up == (c >= 0);
            let mut out = vec![E::Cst(c)];
            for f in rest {
                out.push(bound(f, dir)?);
            }
            E::prod(out)
        }
        E::Div(a, d) | E::ExactDiv(a, d)
            if nonneg(a) && bound(d, false).is_some_and(|l| prove_le(&E::Cst(1), &l)) =>
        {
            match up {
                true => quotient_bound(bound(a, true)?, bound(d, false)?),
                false => match bound(d, true) {
                    Some(dh) => E::div(bound(a, false)?, dh),
                    None => E::Cst(0),
                },
            }
        }
        E::Mod(a, d) if nonneg(a) && bound(d, false).is_some_and(|l| prove_le(&E::Cst(1), &l)) => match up {
            true => {
                let dmax = ArithExpr::sub(bound(d, true)?, E::Cst(1));
                match bound(a, true) {
                    Some(amax) if prove_le(&amax, &dmax) => amax,
                    _ => dmax,
                }
            }
            false => E::Cst(0),
        },
        E::Div(..)
        | E::ExactDiv(..)
        | E::Mod(..)
        | E::Pow(..)
        | E::Log2(_)
        | E::Min(..)
        | E::Max(..)
        | E::IfThenElse(..) => {
            return if up { crate::arith::max_value(e) } else { crate::arith::min_value(e) };
        }
    };
    Some(crate::arith::simplify(&b))
}

/// An upper bound of `a / d` for `0 <= a <= amax` and `d >= dmin >= 1`:
/// `amax / dmin`, or `q - 1` where `amax + 1 = q * dmin` (the simplifier
/// keeps `(M * N - 1) / M`, the last index of a transposition, as it is).
fn quotient_bound(amax: ArithExpr, dmin: ArithExpr) -> ArithExpr {
    let top = crate::arith::simplify(&ArithExpr::add(amax.clone(), ArithExpr::Cst(1)));
    let q = crate::arith::simplify(&ArithExpr::div(top.clone(), dmin.clone()));
    if prove_eq(&ArithExpr::mul(q.clone(), dmin.clone()), &top) {
        ArithExpr::sub(q, ArithExpr::Cst(1))
    } else {
        ArithExpr::div(amax, dmin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i(n: ArithExpr) -> ArithExpr {
        ArithExpr::Var(Var {
            name: "i".into(),
            kind: VarKind::Index,
            range: Range::new(ArithExpr::Cst(0), n),
        })
    }

    #[test]
    fn proves_the_usual_index_functions() {
        let (n, m) = (ArithExpr::size("N"), ArithExpr::size("M"));
        let len = ArithExpr::mul(m.clone(), n.clone());
        let x = i(len.clone());
        let t = ArithExpr::add(
            ArithExpr::div(x.clone(), m.clone()),
            ArithExpr::mul(ArithExpr::modulo(x.clone(), m.clone()), n.clone()),
        );
        assert!(inside(&crate::arith::simplify(&t), &len), "{:?}", bound(&crate::arith::simplify(&t), true));
        let y = i(n.clone());
        let r = ArithExpr::modulo(ArithExpr::add(y.clone(), ArithExpr::Cst(2)), n.clone());
        assert!(inside(&r, &n));
        let rev = ArithExpr::sub(ArithExpr::sub(n.clone(), ArithExpr::Cst(1)), y.clone());
        assert!(inside(&rev, &n));
        assert!(!inside(&ArithExpr::add(y.clone(), ArithExpr::Cst(1)), &n));
    }
}
