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
use super::simplify::{simplify_in, Cx, DivMod};
use super::{ArithExpr, Range};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Question {
    Le,
    Eq,
}

/// Expressions are compared and hashed together with their variables'
/// kinds and ranges (`exact_eq`, `exact_hash`). `Var` equality looks at
/// names alone, but one name can carry different ranges in different
/// questions (the code generator substitutes known sizes into ranges for
/// its decisions), and the answers depend on them.
///
/// The tables are keyed by that hash and hold the expressions asked about
/// in buckets: a lookup hashes the question once and clones nothing.
type Buckets<V> = HashMap<u64, Vec<V>, BuildHasherDefault<Prehashed>>;

/// A remembered division or remainder: constructor, prover depth, the
/// simplified operands and the result.
type DivModEntry = (DivMod, u8, ArithExpr, ArithExpr, ArithExpr);

/// A hasher for keys that already are hashes.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// A fast non-cryptographic hasher (multiply and rotate, as in rustc's
/// `FxHasher`); the keys are the compiler's own expressions, not input an
/// attacker chooses, and the result is deterministic.
#[derive(Debug, Default)]
struct Fx(u64);

impl Hasher for Fx {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }
    fn write_u8(&mut self, n: u8) {
        self.write_u64(u64::from(n));
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
    fn write_i64(&mut self, n: i64) {
        self.write_u64(n as u64);
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// The hash of `e` with its variables' ranges.
fn hash_of(e: &ArithExpr) -> u64 {
    let mut h = Fx::default();
    exact_hash(e, &mut h);
    h.finish()
}

/// Shared nodes are equal without looking inside (the memo's keys are
/// often copies of the expression asked about).
fn exact_eq(a: &ArithExpr, b: &ArithExpr) -> bool {
    use ArithExpr as E;
    let all = |xs: &Arc<Vec<E>>, ys: &Arc<Vec<E>>| {
        Arc::ptr_eq(xs, ys) || (xs.len() == ys.len() && xs.iter().zip(ys.iter()).all(|(x, y)| exact_eq(x, y)))
    };
    let same = |x: &Arc<E>, y: &Arc<E>| Arc::ptr_eq(x, y) || exact_eq(x, y);
    let range = |r: &Range, s: &Range| {
        same(&r.start, &s.start)
            && match (&r.stop, &s.stop) {
                (Some(x), Some(y)) => same(x, y),
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
        | (E::Max(a1, b1), E::Max(a2, b2)) => same(a1, a2) && same(b1, b2),
        (E::Log2(x), E::Log2(y)) => same(x, y),
        (E::IfThenElse(p, t1, f1), E::IfThenElse(q, t2, f2)) => {
            (Arc::ptr_eq(p, q) || (p.op == q.op && exact_eq(&p.lhs, &q.lhs) && exact_eq(&p.rhs, &q.rhs)))
                && same(t1, t2)
                && same(f1, f2)
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
    /// Expression, its simplified form and the latter's hash.
    simplified: RefCell<Buckets<(ArithExpr, ArithExpr, u64)>>,
    /// Keyed by question and the hashes of both simplified operands.
    proofs: RefCell<Buckets<(Question, ArithExpr, ArithExpr, bool)>>,
    /// Divisions and remainders of simplified operands at a prover depth.
    div_mods: RefCell<Buckets<DivModEntry>>,
    /// The known-size maps [`Memo::simplify_known`] was asked with.
    knowns: RefCell<Vec<BTreeMap<String, i64>>>,
    /// Keyed by the index of a known-size map and the expression as given:
    /// the expression and its finished form.
    finished: RefCell<Buckets<(usize, ArithExpr, ArithExpr)>>,
    /// The rank names made so far (see [`Memo::simplify_by_rank`]).
    rank_names: RefCell<Arc<Vec<String>>>,
}

impl Memo {
    /// [`simplify`](super::simplify), remembered.
    pub fn simplify(&self, e: &ArithExpr) -> ArithExpr {
        if let ArithExpr::Cst(_) = e {
            return e.clone();
        }
        self.simplify_hashed(e).0
    }

    /// [`simplify`](super::simplify) of `e` with the sizes `known`
    /// substituted, remembered by `e` as given. The code generator asks this
    /// for every access index, and the unrolled copies of an access repeat
    /// their raw (large) indices: a repeated one is then answered without
    /// copying it and substituting into the copy.
    pub fn simplify_known(&self, e: &ArithExpr, known: &BTreeMap<String, i64>) -> ArithExpr {
        if let ArithExpr::Cst(_) = e {
            return e.clone();
        }
        let k = self.known_index(known);
        let mut h = Fx::default();
        k.hash(&mut h);
        exact_hash(e, &mut h);
        let h = h.finish();
        if let Some(bucket) = self.finished.borrow().get(&h) {
            if let Some((.., r)) = bucket.iter().find(|(k2, x, _)| *k2 == k && exact_eq(x, e)) {
                return r.clone();
            }
        }
        let mut s = e.clone();
        s.substitute_known(known);
        // Asked by rank directly: the exact substituted form is rarely
        // asked again (this table answers repeats of `e`).
        let r = match s {
            ArithExpr::Cst(_) => s,
            _ => self.simplify_by_rank(&s),
        };
        self.finished.borrow_mut().entry(h).or_default().push((k, e.clone(), r.clone()));
        r
    }

    /// The position of `known` among the maps asked with (one per
    /// compilation in practice).
    fn known_index(&self, known: &BTreeMap<String, i64>) -> usize {
        let mut knowns = self.knowns.borrow_mut();
        match knowns.iter().position(|k| k == known) {
            Some(i) => i,
            None => {
                knowns.push(known.clone());
                knowns.len() - 1
            }
        }
    }

    /// The simplified form and its hash.
    fn simplify_hashed(&self, e: &ArithExpr) -> (ArithExpr, u64) {
        let h = hash_of(e);
        if let ArithExpr::Cst(_) = e {
            return (e.clone(), h);
        }
        if let Some(found) = self.lookup_simplified(e, h) {
            return found;
        }
        let s = self.simplify_by_rank(e);
        let sh = hash_of(&s);
        self.simplified.borrow_mut().entry(h).or_default().push((e.clone(), s.clone(), sh));
        (s, sh)
    }

    fn lookup_simplified(&self, e: &ArithExpr, h: u64) -> Option<(ArithExpr, u64)> {
        let table = self.simplified.borrow();
        let (_, s, sh) = table.get(&h)?.iter().find(|(k, _, _)| exact_eq(k, e))?;
        Some((s.clone(), *sh))
    }

    /// Simplifies `e` with its variables renamed by rank (see [`by_rank`]),
    /// through the table, and renames the result back. Unrolled copies of
    /// an access differ in the names of their inner loops' variables
    /// (`i_80`, `i_81`, ...) and otherwise often not at all: renamed, they
    /// are one question.
    fn simplify_by_rank(&self, e: &ArithExpr) -> ArithExpr {
        let mut names: Vec<&str> = Vec::new();
        collect_names(e, &mut names);
        names.sort_unstable();
        names.dedup();
        if names.len() >= RANK_LIMIT {
            return simplify_in(e, Cx::top_with(self));
        }
        let ranked = self.rank_names(names.len());
        let by_rank = ByRank { names: &names, ranked: &ranked };
        // The renamed question is looked up without being built: hashed and
        // compared through the renaming (the hash is the renamed tree's).
        let mut h = Fx::default();
        hash_by_rank(e, &mut h, &by_rank);
        let h = h.finish();
        let found = self.simplified.borrow().get(&h).and_then(|bucket| {
            bucket.iter().find(|(k, _, _)| eq_by_rank(k, e, &by_rank)).map(|(_, s, _)| s.clone())
        });
        let s = match found {
            Some(s) => s,
            None => {
                let renamed = rename_vars(e, &|n| by_rank.name(n).to_string());
                let s = simplify_in(&renamed, Cx::top_with(self));
                let sh = hash_of(&s);
                self.simplified.borrow_mut().entry(h).or_default().push((renamed, s.clone(), sh));
                s
            }
        };
        rename_vars(&s, &|n| {
            let rank = n.strip_prefix(RANK_PREFIX).and_then(|r| r.parse::<usize>().ok());
            // The simplifier only rebuilds what it was given: every name is a rank.
            rank.and_then(|r| names.get(r)).map_or_else(|| n.to_string(), |n| n.to_string())
        })
    }

    /// The names of ranks `0..n` (`#000000`, ...), made once per memo.
    fn rank_names(&self, n: usize) -> Arc<Vec<String>> {
        let mut ranked = self.rank_names.borrow_mut();
        if ranked.len() < n {
            let v = Arc::make_mut(&mut ranked);
            let have = v.len();
            v.extend((have..n).map(|rank| format!("{RANK_PREFIX}{rank:06}")));
        }
        ranked.clone()
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
        let ((a, ha), (b, hb)) = (self.simplify_hashed(a), self.simplify_hashed(b));
        let mut h = Fx::default();
        (q, ha, hb).hash(&mut h);
        let h = h.finish();
        if let Some(bucket) = self.proofs.borrow().get(&h) {
            if let Some((.., r)) =
                bucket.iter().find(|(q2, x, y, _)| *q2 == q && exact_eq(x, &a) && exact_eq(y, &b))
            {
                return *r;
            }
        }
        let r = match q {
            Question::Le => prove_le_in(&a, &b, Cx::top_with(self)),
            Question::Eq => prove_eq_in(&a, &b, Cx::top_with(self)),
        };
        self.proofs.borrow_mut().entry(h).or_default().push((q, a, b, r));
        r
    }

    /// `make(a, b)`, remembered under `op` and `depth`.
    pub(super) fn div_mod(
        &self,
        op: DivMod,
        depth: u8,
        a: ArithExpr,
        b: ArithExpr,
        make: impl FnOnce(ArithExpr, ArithExpr) -> ArithExpr,
    ) -> ArithExpr {
        let mut h = Fx::default();
        (op, depth).hash(&mut h);
        exact_hash(&a, &mut h);
        exact_hash(&b, &mut h);
        let h = h.finish();
        if let Some(bucket) = self.div_mods.borrow().get(&h) {
            let same = |(o, d, x, y, _): &&DivModEntry| {
                *o == op && *d == depth && exact_eq(x, &a) && exact_eq(y, &b)
            };
            if let Some((.., r)) = bucket.iter().find(same) {
                return r.clone();
            }
        }
        let r = make(a.clone(), b.clone());
        self.div_mods.borrow_mut().entry(h).or_default().push((op, depth, a, b, r.clone()));
        r
    }

    /// How many expressions and proofs are remembered.
    #[cfg(test)]
    fn sizes(&self) -> (usize, usize) {
        let count = |n: usize, b: usize| n + b;
        (
            self.simplified.borrow().values().map(Vec::len).fold(0, count),
            self.proofs.borrow().values().map(Vec::len).fold(0, count),
        )
    }
}

/// Rank names are `#` and six digits: they sort as the ranks do, so
/// renaming by rank keeps the order of every two names, which is all the
/// simplifier and the prover look at (`Var`'s `Eq` and `Ord`). Their
/// answers for the renamed expression are therefore the renamed answers.
const RANK_PREFIX: &str = "#";
const RANK_LIMIT: usize = 1_000_000;

/// The renaming of [`Memo::simplify_by_rank`]: `names` sorted, the name of
/// rank `i` is `ranked[i]`.
struct ByRank<'n> {
    names: &'n [&'n str],
    ranked: &'n [String],
}

impl ByRank<'_> {
    fn name<'a>(&'a self, n: &'a str) -> &'a str {
        match self.names.binary_search(&n) {
            Ok(rank) => &self.ranked[rank],
            Err(_) => n,
        }
    }
}

/// [`exact_hash`] of `e` renamed by `r`, without building it.
fn hash_by_rank<H: Hasher>(e: &ArithExpr, h: &mut H, r: &ByRank<'_>) {
    use ArithExpr as E;
    std::mem::discriminant(e).hash(h);
    match e {
        E::Cst(c) => c.hash(h),
        E::Var(v) => {
            r.name(&v.name).hash(h);
            v.kind.hash(h);
            hash_by_rank(&v.range.start, h, r);
            if let Some(stop) = &v.range.stop {
                hash_by_rank(stop, h, r);
            }
        }
        E::Sum(es) | E::Prod(es) => {
            es.len().hash(h);
            es.iter().for_each(|x| hash_by_rank(x, h, r));
        }
        E::Div(a, b) | E::ExactDiv(a, b) | E::Mod(a, b) | E::Pow(a, b) | E::Min(a, b) | E::Max(a, b) => {
            hash_by_rank(a, h, r);
            hash_by_rank(b, h, r);
        }
        E::Log2(a) => hash_by_rank(a, h, r),
        E::IfThenElse(p, t, f) => {
            p.op.hash(h);
            hash_by_rank(&p.lhs, h, r);
            hash_by_rank(&p.rhs, h, r);
            hash_by_rank(t, h, r);
            hash_by_rank(f, h, r);
        }
    }
}

/// [`exact_eq`] of `renamed` and `e` renamed by `r`, without building it.
fn eq_by_rank(renamed: &ArithExpr, e: &ArithExpr, r: &ByRank<'_>) -> bool {
    use ArithExpr as E;
    let all =
        |xs: &[E], ys: &[E]| xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| eq_by_rank(x, y, r));
    let range = |a: &Range, b: &Range| {
        eq_by_rank(&a.start, &b.start, r)
            && match (&a.stop, &b.stop) {
                (Some(x), Some(y)) => eq_by_rank(x, y, r),
                (None, None) => true,
                (Some(_), None) | (None, Some(_)) => false,
            }
    };
    match (renamed, e) {
        (E::Cst(x), E::Cst(y)) => x == y,
        (E::Var(v), E::Var(w)) => v.name == r.name(&w.name) && v.kind == w.kind && range(&v.range, &w.range),
        (E::Sum(xs), E::Sum(ys)) | (E::Prod(xs), E::Prod(ys)) => all(xs, ys),
        (E::Div(a1, b1), E::Div(a2, b2))
        | (E::ExactDiv(a1, b1), E::ExactDiv(a2, b2))
        | (E::Mod(a1, b1), E::Mod(a2, b2))
        | (E::Pow(a1, b1), E::Pow(a2, b2))
        | (E::Min(a1, b1), E::Min(a2, b2))
        | (E::Max(a1, b1), E::Max(a2, b2)) => eq_by_rank(a1, a2, r) && eq_by_rank(b1, b2, r),
        (E::Log2(x), E::Log2(y)) => eq_by_rank(x, y, r),
        (E::IfThenElse(p, t1, f1), E::IfThenElse(q, t2, f2)) => {
            p.op == q.op
                && eq_by_rank(&p.lhs, &q.lhs, r)
                && eq_by_rank(&p.rhs, &q.rhs, r)
                && eq_by_rank(t1, t2, r)
                && eq_by_rank(f1, f2, r)
        }
        _ => false,
    }
}

/// Every variable name in `e`, its variables' ranges included.
fn collect_names<'e>(e: &'e ArithExpr, out: &mut Vec<&'e str>) {
    use ArithExpr as E;
    match e {
        E::Cst(_) => {}
        E::Var(v) => {
            out.push(&v.name);
            collect_names(&v.range.start, out);
            if let Some(stop) = &v.range.stop {
                collect_names(stop, out);
            }
        }
        E::Sum(es) | E::Prod(es) => es.iter().for_each(|x| collect_names(x, out)),
        E::Div(a, b) | E::ExactDiv(a, b) | E::Mod(a, b) | E::Pow(a, b) | E::Min(a, b) | E::Max(a, b) => {
            collect_names(a, out);
            collect_names(b, out);
        }
        E::Log2(a) => collect_names(a, out),
        E::IfThenElse(p, t, f) => {
            collect_names(&p.lhs, out);
            collect_names(&p.rhs, out);
            collect_names(t, out);
            collect_names(f, out);
        }
    }
}

/// `e` with every variable name (in ranges too) replaced by `f(name)`.
fn rename_vars(e: &ArithExpr, f: &dyn Fn(&str) -> String) -> ArithExpr {
    use ArithExpr as E;
    let r = |x: &ArithExpr| Arc::new(rename_vars(x, f));
    match e {
        E::Cst(_) => e.clone(),
        E::Var(v) => E::Var(super::Var {
            name: f(&v.name),
            kind: v.kind,
            range: Range {
                start: rename_bound(&v.range.start, &mut |b| rename_vars(b, f)),
                stop: v.range.stop.as_ref().map(|s| rename_bound(s, &mut |b| rename_vars(b, f))),
            },
        }),
        E::Sum(es) => E::sum(es.iter().map(|x| rename_vars(x, f)).collect()),
        E::Prod(es) => E::prod(es.iter().map(|x| rename_vars(x, f)).collect()),
        E::Div(a, b) => E::Div(r(a), r(b)),
        E::ExactDiv(a, b) => E::ExactDiv(r(a), r(b)),
        E::Mod(a, b) => E::Mod(r(a), r(b)),
        E::Pow(a, b) => E::Pow(r(a), r(b)),
        E::Min(a, b) => E::Min(r(a), r(b)),
        E::Max(a, b) => E::Max(r(a), r(b)),
        E::Log2(a) => E::Log2(r(a)),
        E::IfThenElse(p, t, el) => {
            let p = super::Pred { lhs: rename_vars(&p.lhs, f), op: p.op, rhs: rename_vars(&p.rhs, f) };
            E::IfThenElse(Arc::new(p), r(t), r(el))
        }
    }
}

/// A range bound renamed by `rename`; a constant bound (most are) has no
/// names and is shared as it is.
fn rename_bound(b: &Arc<ArithExpr>, rename: &mut dyn FnMut(&ArithExpr) -> ArithExpr) -> Arc<ArithExpr> {
    match **b {
        ArithExpr::Cst(_) => b.clone(),
        _ => Arc::new(rename(b)),
    }
}

/// Shared nodes (original, renamed) by the original's address.
type ByAddress<T> = HashMap<usize, (T, T), BuildHasherDefault<Fx>>;

/// Renames variables to `v0`, `v1`, ... in order of first appearance
/// (their ranges included), consistently across every expression it
/// renames. A question about expressions that differ only in the names of
/// their variables (the loop variables of unrolled copies of an access) then
/// becomes one question for a [`Memo`]. Renaming is injective, so a proof
/// about the renamed expressions holds for the originals; use it only for
/// decisions, never for expressions that are printed.
///
/// A node shared between the expressions it renames (a copy of one with a
/// variable substituted shares the rest) is renamed once: the second time,
/// all its names are known, so the answer is the same.
#[derive(Debug, Default)]
pub struct CanonicalNames {
    names: HashMap<String, String, BuildHasherDefault<Fx>>,
    /// Renamed sums and products by the address of their terms; each entry
    /// keeps its original alive, so no address is reused while it is here.
    terms: ByAddress<Arc<Vec<ArithExpr>>>,
    /// Renamed operands by address, likewise.
    nodes: ByAddress<Arc<ArithExpr>>,
}

impl CanonicalNames {
    pub fn rename(&mut self, e: &ArithExpr) -> ArithExpr {
        use ArithExpr as E;
        match e {
            E::Cst(_) => e.clone(),
            E::Var(v) => {
                let name = match self.names.get(&v.name) {
                    Some(name) => name.clone(),
                    None => {
                        let next = format!("v{}", self.names.len());
                        self.names.insert(v.name.clone(), next.clone());
                        next
                    }
                };
                let start = rename_bound(&v.range.start, &mut |b| self.rename(b));
                let stop = v.range.stop.as_ref().map(|s| rename_bound(s, &mut |b| self.rename(b)));
                E::Var(super::Var { name, kind: v.kind, range: Range { start, stop } })
            }
            E::Sum(es) => E::Sum(self.terms(es)),
            E::Prod(es) => E::Prod(self.terms(es)),
            E::Div(a, b) => E::Div(self.boxed(a), self.boxed(b)),
            E::ExactDiv(a, b) => E::ExactDiv(self.boxed(a), self.boxed(b)),
            E::Mod(a, b) => E::Mod(self.boxed(a), self.boxed(b)),
            E::Pow(a, b) => E::Pow(self.boxed(a), self.boxed(b)),
            E::Min(a, b) => E::Min(self.boxed(a), self.boxed(b)),
            E::Max(a, b) => E::Max(self.boxed(a), self.boxed(b)),
            E::Log2(a) => E::Log2(self.boxed(a)),
            E::IfThenElse(p, t, f) => {
                let p = super::Pred { lhs: self.rename(&p.lhs), op: p.op, rhs: self.rename(&p.rhs) };
                E::IfThenElse(Arc::new(p), self.boxed(t), self.boxed(f))
            }
        }
    }

    fn boxed(&mut self, e: &Arc<ArithExpr>) -> Arc<ArithExpr> {
        let key = Arc::as_ptr(e) as usize;
        if let Some((_, r)) = self.nodes.get(&key) {
            return r.clone();
        }
        let r = Arc::new(self.rename(e));
        self.nodes.insert(key, (e.clone(), r.clone()));
        r
    }

    fn terms(&mut self, es: &Arc<Vec<ArithExpr>>) -> Arc<Vec<ArithExpr>> {
        let key = Arc::as_ptr(es) as usize;
        if let Some((_, r)) = self.terms.get(&key) {
            return r.clone();
        }
        let r = Arc::new(es.iter().map(|x| self.rename(x)).collect::<Vec<_>>());
        self.terms.insert(key, (es.clone(), r.clone()));
        r
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
        // Each new expression is remembered as asked and renamed by rank.
        let (simplified, proofs) = memo.sizes();
        assert_eq!(simplified, 2 * (exprs.len() + 2));
        assert!(proofs <= 2 * exprs.len());
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
    fn questions_differing_in_names_share_one_answer() {
        let memo = Memo::default();
        let n = ArithExpr::size("N");
        // `k_1 < i_9` but `i_10 < k_1`: the second pair sorts the other way.
        let q = |x: &str, y: &str| {
            let x = ArithExpr::index(x, ArithExpr::Cst(0), ArithExpr::Cst(8));
            let y = ArithExpr::index(y, ArithExpr::Cst(0), n.clone());
            let e = ArithExpr::add(ArithExpr::mul(y, ArithExpr::Cst(8)), x);
            ArithExpr::add(ArithExpr::mul(ArithExpr::div(e.clone(), ArithExpr::Cst(8)), n.clone()), e)
        };
        let (a, b, c) = (q("i_8", "j_8"), q("i_9", "j_9"), q("k_1", "i_10"));
        for e in [&a, &b, &c] {
            assert_eq!(memo.simplify(e), simplify(e));
        }
        // `a` is remembered as asked and renamed; `b` renames to `a`'s
        // renamed form, so only its own entry is new; `c` orders its names
        // differently and is a question of its own.
        assert_eq!(memo.sizes().0, 2 + 1 + 2);
        assert_eq!(memo.simplify(&b).to_string(), simplify(&b).to_string());
        assert!(memo.simplify(&b).to_string().contains("j_9"));
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
