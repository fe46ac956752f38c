//! Property tests of the arithmetic simplifier and prover: on random
//! expressions over variables with random ranges, evaluated at random points
//! inside those ranges, simplification never changes a value, is idempotent,
//! and every proof / bound the prover gives holds.

use std::collections::{BTreeMap, HashMap};

use lift::arith::{
    is_multiple_of, max_value, min_value, prove_eq, prove_le, prove_lt, remainder_varies, simplify,
    ArithExpr as E, CanonicalNames, CmpOp, Memo, Pred, Range, Var, VarKind,
};
use proptest::prelude::*;

/// The variables of one case: sizes `N`, `M`; `a in [0, N)`, `d in [0, M)`
/// and `c in [lo, lo + len)` with a possibly negative `lo`.
#[derive(Clone, Debug)]
struct Scope {
    c_lo: i64,
    c_len: i64,
}

impl Scope {
    fn vars(&self) -> Vec<E> {
        self.vars_named(["N", "M", "a", "d", "c"])
    }

    /// The same variables under other names (in their ranges too).
    fn vars_named(&self, [n, m, a, d, c]: [&str; 5]) -> Vec<E> {
        let idx = |name: &str, start: E, stop: E| {
            E::Var(Var { name: name.into(), kind: VarKind::Index, range: Range::new(start, stop) })
        };
        vec![
            E::size(n),
            E::size(m),
            idx(a, E::cst(0), E::size(n)),
            idx(d, E::cst(0), E::size(m)),
            idx(c, E::cst(self.c_lo), E::cst(self.c_lo + self.c_len)),
        ]
    }

    /// `e` with its variables renamed to `names` (see [`Scope::vars_named`]).
    fn renamed(&self, e: &E, names: [&str; 5]) -> E {
        let to = self.vars_named(names);
        let map: HashMap<String, E> =
            ["N", "M", "a", "d", "c"].iter().map(|n| n.to_string()).zip(to).collect();
        e.substitute(&map)
    }

    /// A point inside the ranges, from raw random numbers.
    fn point(&self, raw: &[u32; 5]) -> HashMap<String, i64> {
        let n = 1 + i64::from(raw[0] % 12);
        let m = 1 + i64::from(raw[1] % 12);
        let mut env = HashMap::new();
        env.insert("N".to_string(), n);
        env.insert("M".to_string(), m);
        env.insert("a".to_string(), i64::from(raw[2]) % n);
        env.insert("d".to_string(), i64::from(raw[3]) % m);
        env.insert("c".to_string(), self.c_lo + i64::from(raw[4]) % self.c_len);
        env
    }
}

fn scope() -> impl Strategy<Value = Scope> {
    (-6i64..4, 1i64..8).prop_map(|(c_lo, c_len)| Scope { c_lo, c_len })
}

fn cmp_op() -> impl Strategy<Value = CmpOp> {
    prop_oneof![
        Just(CmpOp::Lt),
        Just(CmpOp::Le),
        Just(CmpOp::Gt),
        Just(CmpOp::Ge),
        Just(CmpOp::Eq),
        Just(CmpOp::Ne)
    ]
}

/// Random expressions over the scope's variables, biased towards the shapes
/// views produce: sums of scaled indices, divisions and remainders by
/// positive constants and sizes, with subtraction making them negative.
fn expr(vars: Vec<E>) -> impl Strategy<Value = E> {
    let leaf = prop_oneof![(-6i64..=6).prop_map(E::cst), proptest::sample::select(vars.clone()),];
    let sizes = vec![E::size("N"), E::size("M"), E::add(E::size("N"), E::cst(2))];
    leaf.prop_recursive(4, 40, 3, move |inner| {
        let divisor = prop_oneof![(1i64..9).prop_map(E::cst), proptest::sample::select(sizes.clone()),];
        prop_oneof![
            3 => proptest::collection::vec(inner.clone(), 2..4).prop_map(E::sum),
            2 => (inner.clone(), inner.clone()).prop_map(|(a, b)| E::sub(a, b)),
            2 => ((-4i64..=4), inner.clone()).prop_map(|(k, a)| E::mul(E::cst(k), a)),
            1 => (inner.clone(), inner.clone()).prop_map(|(a, b)| E::mul(a, b)),
            3 => (inner.clone(), divisor.clone()).prop_map(|(a, b)| E::div(a, b)),
            3 => (inner.clone(), divisor.clone()).prop_map(|(a, b)| E::modulo(a, b)),
            // Rule 4 shapes and multiples of the divisor.
            2 => (inner.clone(), divisor.clone(), inner.clone()).prop_map(|(x, y, z)| {
                E::sum(vec![E::mul(E::div(x.clone(), y.clone()), y.clone()), E::modulo(x, y), z])
            }),
            2 => (inner.clone(), divisor.clone(), inner.clone(), any::<bool>()).prop_map(|(x, y, z, m)| {
                let n = E::add(E::mul(x, y.clone()), z);
                if m { E::modulo(n, y) } else { E::div(n, y) }
            }),
            1 => (inner.clone(), inner.clone()).prop_map(|(a, b)| E::div(a, b)),
            1 => (inner.clone(), inner.clone()).prop_map(|(a, b)| E::min(a, b)),
            1 => (inner.clone(), inner.clone()).prop_map(|(a, b)| E::max(a, b)),
            1 => (inner.clone(), cmp_op(), inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(l, op, r, t, f)| E::if_then_else(Pred { lhs: l, op, rhs: r }, t, f)),
            // Exact by construction.
            1 => (inner.clone(), divisor).prop_map(|(a, b)| E::exact_div(E::mul(a, b.clone()), b)),
            1 => (inner.clone(), 0i64..4).prop_map(|(a, k)| E::pow(a, E::cst(k))),
            1 => inner.prop_map(|a| E::log2(E::add(E::mul(a.clone(), a), E::cst(1)))),
        ]
    })
}

fn case() -> impl Strategy<Value = (Scope, E, E, Vec<[u32; 5]>)> {
    scope().prop_flat_map(|s| {
        let vars = s.vars();
        (Just(s), expr(vars.clone()), expr(vars), proptest::collection::vec(any::<[u32; 5]>(), 12))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn simplify_preserves_values_and_is_idempotent((s, e, _, points) in case()) {
        let simp = simplify(&e);
        prop_assert_eq!(simplify(&simp), simp.clone(), "not idempotent on {}", e);
        for raw in &points {
            let env = s.point(raw);
            // Points where the original has no value (division by zero,
            // overflow) say nothing about the rewrite.
            if let Ok(v) = e.eval(&env) {
                prop_assert_eq!(simp.eval(&env), Ok(v), "{} => {} at {:?}", e, simp, env);
            }
        }
    }

    #[test]
    fn prover_is_sound((s, a, b, points) in case()) {
        let lt = prove_lt(&a, &b);
        let le = prove_le(&a, &b);
        let eq = prove_eq(&a, &b);
        let lo = min_value(&a);
        let hi = max_value(&a);
        for raw in &points {
            let env = s.point(raw);
            let (Ok(x), Ok(y)) = (a.eval(&env), b.eval(&env)) else { continue };
            prop_assert!(!lt || x < y, "proved {} < {} but {} >= {} at {:?}", a, b, x, y, env);
            prop_assert!(!le || x <= y, "proved {} <= {} but {} > {} at {:?}", a, b, x, y, env);
            prop_assert!(!eq || x == y, "proved {} == {} but {} != {} at {:?}", a, b, x, y, env);
            if let Some(Ok(l)) = lo.as_ref().map(|l| l.eval(&env)) {
                prop_assert!(l <= x, "min_value({}) = {} = {} > {} at {:?}", a, lo.as_ref().unwrap(), l, x, env);
            }
            if let Some(Ok(h)) = hi.as_ref().map(|h| h.eval(&env)) {
                prop_assert!(h >= x, "max_value({}) = {} = {} < {} at {:?}", a, hi.as_ref().unwrap(), h, x, env);
            }
        }
    }

    /// A compilation's `Memo` answers as the functions do, also for copies
    /// of an expression under other names, which it may answer from the
    /// original's renamed form (order-preserving renamings) or not.
    #[test]
    fn memo_answers_as_the_functions_do((s, a, b, _p) in case()) {
        let memo = Memo::default();
        let kept = ["N_1", "M_1", "a_1", "d_1", "c_1"];
        let reordered = ["a", "b", "z", "y", "x"];
        for (x, y) in [(a.clone(), b.clone()), (s.renamed(&a, kept), s.renamed(&b, kept)), (s.renamed(&a, reordered), s.renamed(&b, reordered))] {
            prop_assert_eq!(memo.simplify(&x), simplify(&x), "{}", x);
            prop_assert_eq!(memo.prove_le(&x, &y), prove_le(&x, &y), "{} <= {}", x, y);
            prop_assert_eq!(memo.prove_eq(&x, &y), prove_eq(&x, &y), "{} == {}", x, y);
        }
    }

    /// `Memo::simplify_known` (remembered by the expression as given, before
    /// the known sizes are substituted) answers as substituting and then
    /// simplifying does, asked again, for a copy, and under other known sizes.
    #[test]
    fn memo_known_answers_as_substitute_then_simplify((s, a, b, _p) in case(), n in 1i64..9, m in 1i64..9) {
        let memo = Memo::default();
        let knowns: [BTreeMap<String, i64>; 3] = [
            BTreeMap::from([("N".to_string(), n)]),
            BTreeMap::new(),
            BTreeMap::from([("N".to_string(), n), ("M".to_string(), m)]),
        ];
        let kept = ["N_1", "M_1", "a_1", "d_1", "c_1"];
        for _ in 0..2 {
            for known in &knowns {
                for x in [&a, &b, &a.clone(), &s.renamed(&a, kept)] {
                    let mut plain = x.clone();
                    plain.substitute_known(known);
                    prop_assert_eq!(memo.simplify_known(x, known), simplify(&plain), "{} with {:?}", x, known);
                }
            }
        }
    }

    /// Renaming through one `CanonicalNames` reuses the renamed form of a
    /// node shared with an expression renamed before (a copy with a variable
    /// substituted shares the rest): the answers are those for unshared
    /// copies, and substitution itself rebuilds exactly the tree it should.
    #[test]
    fn canonical_names_of_shared_nodes((_s, a, b, _p) in case(), k in -3i64..4) {
        let zero: HashMap<String, E> = [("c".to_string(), E::cst(k))].into();
        let a0 = a.substitute(&zero);
        // Debug output shows the variables' ranges too (`==` compares names).
        let full = |e: &E| format!("{e:?}");
        prop_assert_eq!(full(&a0), full(&substituted_deep(&a, "c", k)));
        let (mut shared, mut fresh) = (CanonicalNames::default(), CanonicalNames::default());
        for (x, y) in [(&a, deep_copy(&a)), (&a0, deep_copy(&a0)), (&b, deep_copy(&b)), (&a, deep_copy(&a))] {
            prop_assert_eq!(full(&shared.rename(x)), full(&fresh.rename(&y)), "{}", x);
        }
    }

    /// The alignment check's shortcuts (`is_multiple_of`, `remainder_varies`)
    /// stand in for simplifying `e % n` where only "is it a non-zero
    /// constant" matters: where either holds, the simplifier (plain and
    /// through a `Memo`) never gives a non-zero constant, and a multiple is
    /// one at every point.
    #[test]
    fn remainder_shortcuts_agree_with_the_simplifier((s, e, _, points) in case(), n in 1i64..9, k in -2i64..3) {
        let memo = Memo::default();
        // Also the shapes vector indices take: `e * n + k * n`, `e * N + k`.
        let shapes = [
            e.clone(),
            E::sum(vec![E::mul(e.clone(), E::cst(n)), E::cst(k * n)]),
            E::sum(vec![E::mul(e.clone(), E::size("N")), E::mul(E::cst(n), s.vars()[2].clone()), E::cst(k)]),
        ];
        for x in &shapes {
            let multiple = is_multiple_of(x, n as u64);
            let varies = remainder_varies(x, n);
            if !(multiple || varies) {
                continue;
            }
            let rem = E::modulo(x.clone(), E::cst(n));
            for simp in [simplify(&rem), memo.simplify(&rem)] {
                prop_assert!(!matches!(simp, E::Cst(r) if r != 0), "{} % {} => {} (multiple {}, varies {})", x, n, simp, multiple, varies);
                if varies {
                    prop_assert!(simp.as_cst().is_none(), "{} % {} => {} but varies", x, n, simp);
                }
            }
            if multiple {
                for raw in &points {
                    if let Ok(v) = x.eval(&s.point(raw)) {
                        prop_assert_eq!(v % n, 0, "{} = {} is no multiple of {}", x, v, n);
                    }
                }
            }
        }
    }

    /// An expression against a shifted copy of itself: simplification
    /// cancels `e`, so `e < e + k` must be proved exactly when `k > 0`.
    #[test]
    fn prover_on_shifted_copies((_s, e, _, _p) in case(), k in -3i64..4) {
        let shifted = E::add(e.clone(), E::cst(k));
        prop_assert_eq!(prove_lt(&e, &shifted), k > 0, "{} < {}", e, shifted);
        prop_assert_eq!(prove_le(&e, &shifted), k >= 0, "{} <= {}", e, shifted);
        prop_assert_eq!(prove_eq(&e, &shifted), k == 0, "{} == {}", e, shifted);
    }
}

/// `e` rebuilt node by node: equal to `e`, sharing nothing with it.
fn deep_copy(e: &E) -> E {
    rebuild(e, &|_| None)
}

/// `e` with the variable `name` replaced by `k`, rebuilt node by node.
fn substituted_deep(e: &E, name: &str, k: i64) -> E {
    rebuild(e, &|v: &Var| (v.name == name).then_some(E::cst(k)))
}

fn rebuild(e: &E, var: &dyn Fn(&Var) -> Option<E>) -> E {
    let r = |x: &E| rebuild(x, var);
    match e {
        E::Cst(c) => E::cst(*c),
        E::Var(v) => var(v).unwrap_or_else(|| {
            let range = Range {
                start: std::sync::Arc::new(r(&v.range.start)),
                stop: v.range.stop.as_ref().map(|s| std::sync::Arc::new(r(s))),
            };
            E::Var(Var { name: v.name.clone(), kind: v.kind, range })
        }),
        E::Sum(es) => E::sum(es.iter().map(r).collect()),
        E::Prod(es) => E::prod(es.iter().map(r).collect()),
        E::Div(a, b) => E::div(r(a), r(b)),
        E::ExactDiv(a, b) => E::exact_div(r(a), r(b)),
        E::Mod(a, b) => E::modulo(r(a), r(b)),
        E::Pow(a, b) => E::pow(r(a), r(b)),
        E::Log2(a) => E::log2(r(a)),
        E::Min(a, b) => E::min(r(a), r(b)),
        E::Max(a, b) => E::max(r(a), r(b)),
        E::IfThenElse(p, t, f) => {
            E::if_then_else(Pred { lhs: r(&p.lhs), op: p.op, rhs: r(&p.rhs) }, r(t), r(f))
        }
    }
}
