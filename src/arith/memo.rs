//! Memoised simplification and proofs for one compilation.
//!
//! Code generation asks the same questions many times: every unrolled copy
//! of a vector access proves again that its scalars are consecutive, and
//! every read simplifies the same index expressions. [`Memo`] answers a
//! repeated question from a side table. Its answers are exactly those of
//! [`simplify`](super::simplify) and the `prove_*` functions, which are
//! deterministic; it only saves their time. It is owned by one compilation
//! (never global) and mutates through `RefCell`s so that shared borrows of
//! the compiler's state can use it.

use super::range::{prove_eq_in, prove_le_in};
use super::simplify::{simplify_in, Cx};
use super::{ArithExpr, Range};
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Question {
    Le,
    Eq,
}

/// An expression compared and hashed together with its variables' kinds
/// and ranges. `Var` equality looks at names alone, but one name can carry
/// different ranges in different questions (the code generator substitutes
/// known sizes into ranges for its decisions), and the answers depend on them.
#[derive(Debug)]
struct Exact(ArithExpr);

impl PartialEq for Exact {
    fn eq(&self, other: &Self) -> bool {
        exact_eq(&self.0, &other.0)
    }
}

impl Eq for Exact {}

impl Hash for Exact {
    fn hash<H: Hasher>(&self, h: &mut H) {
        exact_hash(&self.0, h)
    }
}

fn exact_eq(a: &ArithExpr, b: &ArithExpr) -> bool {
    use ArithExpr as E;
    let all = |xs: &[E], ys: &[E]| xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| exact_eq(x, y));
    let range = |r: &Range, s: &Range| {
        exact_eq(&r.start, &s.start)
            && match (&r.stop, &s.stop) {
                (Some(x), Some(y)) => exact_eq(x, y),
                (None, None) => true,
                (Some(_), None) | (None, Some(_)) => false,
            }
    };
    match (a, b) {
        (E::Cst(x), E::Cst(y)) => x == y,
        (E::Var(v), E::Var(w)) => v.name == w.name && v.kind == w.kind && range(&v.range, &w.range),
        (E::Sum(xs), E::Sum(ys)) | (E::Prod(xs), E::Prod(ys)) => all(xs, ys),
        (E::Div(a1, b1), E::Div(a2, b2))
        | (E::ExactDiv(a1, b1), E::ExactDiv(a2, b2))
        | (E::Mod(a1, b1), E::Mod(a2, b2))
        | (E::Pow(a1, b1), E::Pow(a2, b2))
        | (E::Min(a1, b1), E::Min(a2, b2))
        | (E::Max(a1, b1), E::Max(a2, b2)) => exact_eq(a1, a2) && exact_eq(b1, b2),
        (E::Log2(x), E::Log2(y)) => exact_eq(x, y),
        (E::IfThenElse(p, t1, f1), E::IfThenElse(q, t2, f2)) => {
            p.op == q.op
                && exact_eq(&p.lhs, &q.lhs)
                && exact_eq(&p.rhs, &q.rhs)
                && exact_eq(t1, t2)
                && exact_eq(f1, f2)
        }
        _ => false,
    }
}

fn exact_hash<H: Hasher>(e: &ArithExpr, h: &mut H) {
    use ArithExpr as E;
    std::mem::discriminant(e).hash(h);
    match e {
        E::Cst(c) => c.hash(h),
        E::Var(v) => {
            v.name.hash(h);
            v.kind.hash(h);
            exact_hash(&v.range.start, h);
            if let Some(stop) = &v.range.stop {
                exact_hash(stop, h);
            }
        }
        E::Sum(es) | E::Prod(es) => {
            es.len().hash(h);
            es.iter().for_each(|x| exact_hash(x, h));
        }
        E::Div(a, b) | E::ExactDiv(a, b) | E::Mod(a, b) | E::Pow(a, b) | E::Min(a, b) | E::Max(a, b) => {
            exact_hash(a, h);
            exact_hash(b, h);
        }
        E::Log2(a) => exact_hash(a, h),
        E::IfThenElse(p, t, f) => {
            p.op.hash(h);
            exact_hash(&p.lhs, h);
            exact_hash(&p.rhs, h);
            exact_hash(t, h);
            exact_hash(f, h);
        }
    }
}

/// Side tables of simplified forms and proof results, keyed by the
/// expressions asked about (with their variables' ranges).
#[derive(Debug, Default)]
pub struct Memo {
    simplified: RefCell<HashMap<Exact, ArithExpr>>,
    proofs: RefCell<HashMap<(Question, Exact, Exact), bool>>,
}

impl Memo {
    /// [`simplify`](super::simplify), remembered.
    pub fn simplify(&self, e: &ArithExpr) -> ArithExpr {
        if let ArithExpr::Cst(_) = e {
            return e.clone();
        }
        let key = Exact(e.clone());
        if let Some(s) = self.simplified.borrow().get(&key) {
            return s.clone();
        }
        let s = simplify_in(e, Cx::top());
        self.simplified.borrow_mut().insert(key, s.clone());
        s
    }

    /// [`prove_le`](super::prove_le), remembered.
    pub fn prove_le(&self, a: &ArithExpr, b: &ArithExpr) -> bool {
        self.prove(Question::Le, a, b)
    }

    /// [`prove_eq`](super::prove_eq), remembered.
    pub fn prove_eq(&self, a: &ArithExpr, b: &ArithExpr) -> bool {
        self.prove(Question::Eq, a, b)
    }

    fn prove(&self, q: Question, a: &ArithExpr, b: &ArithExpr) -> bool {
        // The public provers simplify their operands at the top level first;
        // so does this, through the table.
        let (a, b) = (self.simplify(a), self.simplify(b));
        let key = (q, Exact(a), Exact(b));
        if let Some(r) = self.proofs.borrow().get(&key) {
            return *r;
        }
        let (_, Exact(a), Exact(b)) = &key;
        let r = match q {
            Question::Le => prove_le_in(a, b, Cx::top()),
            Question::Eq => prove_eq_in(a, b, Cx::top()),
        };
        self.proofs.borrow_mut().insert(key, r);
        r
    }
}

/// Renames variables to `v0`, `v1`, ... in order of first appearance
/// (their ranges included), consistently across every expression it
/// renames. A question about expressions that differ only in the names of
/// their variables (the loop variables of unrolled copies of an access) then
/// becomes one question for a [`Memo`]. Renaming is injective, so a proof
/// about the renamed expressions holds for the originals; use it only for
/// decisions, never for expressions that are printed.
#[derive(Debug, Default)]
pub struct CanonicalNames {
    names: HashMap<String, String>,
}

impl CanonicalNames {
    pub fn rename(&mut self, e: &ArithExpr) -> ArithExpr {
        use ArithExpr as E;
        match e {
            E::Cst(_) => e.clone(),
            E::Var(v) => {
                let next = format!("v{}", self.names.len());
                let name = self.names.entry(v.name.clone()).or_insert(next).clone();
                let start = self.rename(&v.range.start);
                let stop = v.range.stop.as_ref().map(|s| Box::new(self.rename(s)));
                E::Var(super::Var { name, kind: v.kind, range: Range { start: Box::new(start), stop } })
            }
            E::Sum(es) => E::Sum(es.iter().map(|x| self.rename(x)).collect()),
            E::Prod(es) => E::Prod(es.iter().map(|x| self.rename(x)).collect()),
            E::Div(a, b) => E::Div(self.boxed(a), self.boxed(b)),
            E::ExactDiv(a, b) => E::ExactDiv(self.boxed(a), self.boxed(b)),
            E::Mod(a, b) => E::Mod(self.boxed(a), self.boxed(b)),
            E::Pow(a, b) => E::Pow(self.boxed(a), self.boxed(b)),
            E::Min(a, b) => E::Min(self.boxed(a), self.boxed(b)),
            E::Max(a, b) => E::Max(self.boxed(a), self.boxed(b)),
            E::Log2(a) => E::Log2(self.boxed(a)),
            E::IfThenElse(p, t, f) => {
                let p = super::Pred { lhs: self.rename(&p.lhs), op: p.op, rhs: self.rename(&p.rhs) };
                E::IfThenElse(Box::new(p), self.boxed(t), self.boxed(f))
            }
        }
    }

    fn boxed(&mut self, e: &ArithExpr) -> Box<ArithExpr> {
        Box::new(self.rename(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::{parse_arith, prove_eq, prove_le, simplify};

    #[test]
    fn answers_as_the_functions_do_and_remembers() {
        let memo = Memo::default();
        let i = ArithExpr::index("i", ArithExpr::Cst(0), ArithExpr::size("N"));
        let exprs = [
            ArithExpr::add(
                ArithExpr::mul(ArithExpr::div(i.clone(), ArithExpr::Cst(4)), ArithExpr::Cst(4)),
                ArithExpr::modulo(i.clone(), ArithExpr::Cst(4)),
            ),
            ArithExpr::div(i.clone(), ArithExpr::size("N")),
            parse_arith("(N / 4) * 4 + 3").expect("parses"),
        ];
        for e in &exprs {
            for _ in 0..2 {
                assert_eq!(memo.simplify(e), simplify(e));
                assert_eq!(memo.prove_eq(e, &i), prove_eq(e, &i));
                assert_eq!(memo.prove_le(e, &ArithExpr::size("N")), prove_le(e, &ArithExpr::size("N")));
            }
        }
        assert_eq!(memo.simplified.borrow().len(), exprs.len() + 2);
        assert!(memo.proofs.borrow().len() <= 2 * exprs.len());
        // The same name with another range is another question.
        let j = ArithExpr::index("i", ArithExpr::Cst(0), ArithExpr::Cst(4));
        let q = ArithExpr::div(j.clone(), ArithExpr::Cst(4));
        assert_eq!(
            memo.simplify(&ArithExpr::div(i.clone(), ArithExpr::Cst(4))),
            simplify(&ArithExpr::div(i, ArithExpr::Cst(4)))
        );
        assert_eq!(memo.simplify(&q), ArithExpr::Cst(0));
    }

    #[test]
    fn canonical_names_are_consistent_and_keep_ranges() {
        let n = ArithExpr::size("N");
        let a = ArithExpr::index("i_16", ArithExpr::Cst(0), n.clone());
        let b = ArithExpr::index("i_17", ArithExpr::Cst(0), n.clone());
        let e = |x: &ArithExpr| ArithExpr::add(ArithExpr::mul(x.clone(), n.clone()), x.clone());
        let (mut ca, mut cb) = (CanonicalNames::default(), CanonicalNames::default());
        let (ra, rb) = (ca.rename(&e(&a)), cb.rename(&e(&b)));
        assert!(exact_eq(&ra, &rb));
        assert_eq!(ra.to_string(), "v0 * v1 + v0");
        // Another range under the same name stays another question.
        let c = ArithExpr::index("i_16", ArithExpr::Cst(0), ArithExpr::Cst(4));
        assert!(!exact_eq(&CanonicalNames::default().rename(&e(&c)), &ra));
    }
}
