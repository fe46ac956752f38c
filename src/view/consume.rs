//! View consumption: from a view and the indices of a scalar access to a
//! memory location (CGO 2017, Figure 5, right-hand side).

use super::{MemRef, View};
use crate::arith::{ArithExpr, CanonicalNames, CmpOp, Memo, Pred};
use crate::ir::{IndexFun, MapKind, PadMode};
use crate::types::Type;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// Where a read or write goes, before printing.
#[derive(Clone, Debug)]
pub enum Access {
    /// `mem[index]`, then the tuple fields `fields` (outermost first).
    /// `vector: Some(n)`: a vector of `n` scalars starting at scalar `index`
    /// (`vloadn`/`vstoren`). `component: Some((c, n))`: scalar `c` of the
    /// `n`-vector at `index` (a scalar view of vector memory).
    Mem {
        mem: MemRef,
        index: ArithExpr,
        vector: Option<u8>,
        component: Option<(ArithExpr, u8)>,
        fields: Vec<usize>,
    },
    /// A private value given by C text, then tuple fields.
    Value { c: String, fields: Vec<usize> },
    /// `conds ? then : otherwise` (padConst).
    Select { conds: Vec<Pred>, then: Box<Access>, otherwise: String },
    /// A tuple assembled from components (a zip read as a whole), of type `ty`.
    Tuple { parts: Vec<Access>, ty: Type },
    /// `fun(index)` (generate).
    Call { fun: String, index: ArithExpr },
    /// The integer value of an index expression.
    IndexValue(ArithExpr),
}

/// A view that cannot be consumed as asked.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct ViewError(pub String);

/// Consumes `view` with `indices` (outermost first) and no tuple accesses.
/// `print` turns an access into C text; `filter` needs it to index by a
/// loaded value.
pub fn consume(
    view: &View,
    indices: &[ArithExpr],
    ty: Option<&Type>,
    print: &dyn Fn(&Access) -> String,
    memo: &Memo,
) -> Result<Access, ViewError> {
    consume_in(view, indices, ty, print, memo, None)
}

/// [`consume`] at a point inside the parallel maps `threads` (kind and loop
/// variable, outermost first): private memory written by a parallel map
/// ([`View::DropIndex`]) may then only be read at the reading thread's own
/// index, the one element that thread holds.
pub fn consume_in(
    view: &View,
    indices: &[ArithExpr],
    ty: Option<&Type>,
    print: &dyn Fn(&Access) -> String,
    memo: &Memo,
    threads: Option<&[(MapKind, ArithExpr)]>,
) -> Result<Access, ViewError> {
    // The stack's top is the outermost index.
    let mut c = Consumer {
        stack: indices.iter().rev().cloned().collect(),
        tuple: Vec::new(),
        print,
        ty,
        subst: HashMap::new(),
        memo,
        threads,
    };
    let a = c.go(view, Flags::default())?;
    Ok(if c.subst.is_empty() { a } else { substitute(a, &c.subst) })
}

/// The symbolic scalar offset of [`Consumer::check_consecutive`]; no
/// generated name starts with two underscores.
const OFFSET_VAR: &str = "__vec_offset";

/// The index consuming `base` gives, read off `general`, the index
/// consuming `base + c` gave: consumption only builds around the index it is
/// given (it never looks into it but to print a filter's index, whose text
/// then names `c`), so putting `base` back for `base + c` gives the same
/// tree, node for node, and so the same questions to the memo. `None` where
/// `c` is still named after that (a filter), or was never found.
fn first_of(general: &ArithExpr, base: &ArithExpr, c: &ArithExpr) -> Option<ArithExpr> {
    let is_at = |e: &ArithExpr| matches!(e, ArithExpr::Sum(t) if t.len() == 2 && t[1] == *c && t[0] == *base);
    let first = general.rewritten(&|e| is_at(e).then(|| base.clone()))?;
    (!names_offset(&first)).then_some(first)
}

/// How often the offset variable `c` is a term of `e`, looking through sums
/// only (so that `e` is `rest + k * c` with `rest` free of `c`); `None` where
/// `c` occurs anywhere else (under a product, a division, a filter's index).
fn offset_terms(e: &ArithExpr) -> Option<usize> {
    match e {
        ArithExpr::Sum(terms) => terms.iter().map(offset_terms).sum(),
        ArithExpr::Var(v) if v.name == OFFSET_VAR => Some(1),
        _ => (!names_offset(e)).then_some(0),
    }
}

/// Whether a variable of `e` names the offset variable (is it, or a filter
/// index printed from an expression with it).
fn names_offset(e: &ArithExpr) -> bool {
    let found = std::cell::Cell::new(false);
    e.rewritten(&|e| {
        if matches!(e, ArithExpr::Var(v) if v.name.contains(OFFSET_VAR)) {
            found.set(true);
        }
        None
    });
    found.get()
}

/// Largest index expression consumption builds (in nodes).
const MAX_INDEX_NODES: usize = 20_000;

/// Whether `e` has at most `budget` nodes (counting stops when it runs out).
fn fits(e: &ArithExpr, budget: &mut usize) -> bool {
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    match e {
        ArithExpr::Cst(_) | ArithExpr::Var(_) => true,
        ArithExpr::Sum(xs) | ArithExpr::Prod(xs) => xs.iter().all(|x| fits(x, budget)),
        ArithExpr::Div(a, b)
        | ArithExpr::ExactDiv(a, b)
        | ArithExpr::Mod(a, b)
        | ArithExpr::Pow(a, b)
        | ArithExpr::Min(a, b)
        | ArithExpr::Max(a, b) => fits(a, budget) && fits(b, budget),
        ArithExpr::Log2(a) => fits(a, budget),
        ArithExpr::IfThenElse(p, a, b) => {
            fits(&p.lhs, budget) && fits(&p.rhs, budget) && fits(a, budget) && fits(b, budget)
        }
    }
}

/// Replaces the index variables of layout maps by the indices they stand for.
fn substitute(a: Access, m: &HashMap<String, ArithExpr>) -> Access {
    // One layout map's index may mention another's variable: the (small)
    // values are resolved to their fixpoints first, so that the (large)
    // access indices are rewritten in one pass. Substitution is structural,
    // so this gives what repeated passes over each index gave.
    let fixpoint = |e: &ArithExpr| {
        let mut e = e.clone();
        for _ in 0..=m.len() {
            let next = e.substitute(m);
            if next == e {
                break;
            }
            e = next;
        }
        e
    };
    // Only the variables that occur are resolved, each once. The maps are
    // small (one entry per layout map) and asked for every variable of
    // large indices: a scan of the names is cheaper than hashing each.
    let resolved: RefCell<Vec<(&str, ArithExpr)>> = RefCell::new(Vec::new());
    let lookup = |name: &str| -> Option<ArithExpr> {
        if let Some((_, v)) = resolved.borrow().iter().find(|(k, _)| *k == name) {
            return Some(v.clone());
        }
        let (k, v) =
            if m.len() <= 8 { m.iter().find(|(k, _)| k.as_str() == name)? } else { m.get_key_value(name)? };
        let v = fixpoint(v);
        resolved.borrow_mut().push((k, v.clone()));
        Some(v)
    };
    let s = |mut e: ArithExpr| {
        e.substitute_with(&lookup);
        e
    };
    match a {
        Access::Mem { mem, index, vector, component, fields } => {
            Access::Mem { mem, index: s(index), vector, component: component.map(|(c, n)| (s(c), n)), fields }
        }
        Access::Value { .. } => a,
        Access::Select { conds, then, otherwise } => Access::Select {
            conds: conds.into_iter().map(|p| Pred { lhs: s(p.lhs), op: p.op, rhs: s(p.rhs) }).collect(),
            then: Box::new(substitute(*then, m)),
            otherwise,
        },
        Access::Tuple { parts, ty } => {
            Access::Tuple { parts: parts.into_iter().map(|p| substitute(p, m)).collect(), ty }
        }
        Access::Call { fun, index } => Access::Call { fun, index: s(index) },
        Access::IndexValue(e) => Access::IndexValue(s(e)),
    }
}

#[derive(Clone, Default)]
struct Flags {
    vector: Option<u8>,
    component: Option<(ArithExpr, u8)>,
}

struct Consumer<'a> {
    stack: Vec<ArithExpr>,
    tuple: Vec<usize>,
    print: &'a dyn Fn(&Access) -> String,
    ty: Option<&'a Type>,
    subst: HashMap<String, ArithExpr>,
    /// Simplifications and proofs shared by the whole compilation.
    memo: &'a Memo,
    threads: Option<&'a [(MapKind, ArithExpr)]>,
}

impl Consumer<'_> {
    /// The memory index that scalar `at` of `of` reads, with the indices
    /// below it on the stack, or `None` when it is not a plain memory read.
    fn scalar_index(&self, of: &View, at: ArithExpr, flags: &Flags) -> Result<Option<ArithExpr>, ViewError> {
        let mut stack = self.stack.clone();
        stack.push(at);
        let mut sub = self.sub(stack, self.subst.clone());
        sub.tuple = self.tuple.clone();
        let a = sub.go(of, Flags { vector: None, ..flags.clone() })?;
        Ok(match substitute(a, &sub.subst) {
            Access::Mem { index, .. } => Some(index),
            Access::Value { .. }
            | Access::Select { .. }
            | Access::Tuple { .. }
            | Access::Call { .. }
            | Access::IndexValue(_) => None,
        })
    }

    /// A vector load or store (`vloadn`) is only right when the `n` scalars
    /// of `of` starting at `base` are consecutive in memory; `pad` with
    /// clamping, `gather`, `transpose` or overlapping windows break that.
    fn check_consecutive(&self, of: &View, base: &ArithExpr, n: u8, flags: &Flags) -> Result<(), ViewError> {
        let not_consecutive = || {
            ViewError(format!(
                "asVector({n}) over data whose {n} consecutive elements are not consecutive in memory \
                 (a pad, gather, transpose or overlapping slide below it): copy the data first, \
                 e.g. with toLocal(mapLcl(id)), and vectorise the copy"
            ))
        };
        // One consumption with a symbolic offset `c` in `[0, n)` answers for
        // every scalar of the vector (see `consecutive_for_every_offset`);
        // the first scalar's index is read off it.
        let c = ArithExpr::index(OFFSET_VAR, ArithExpr::Cst(0), ArithExpr::Cst(i64::from(n)));
        let general = self.scalar_index(of, ArithExpr::add(base.clone(), c.clone()), flags).ok().flatten();
        let first = match general.as_ref().and_then(|g| first_of(g, base, &c)) {
            Some(first) => first,
            None => match self.scalar_index(of, base.clone(), flags)? {
                Some(first) => first,
                None => return Err(not_consecutive()),
            },
        };
        // Vector accesses address whole vectors: the first scalar must sit at
        // a multiple of n (assumed where it depends on sizes, e.g. rows of N
        // floats with N % n == 0, which asVector's type already requires).
        // The answers do not depend on variable names: asked with canonical
        // names, the unrolled copies of one access share them in the memo.
        // Most unrolled copies ask a distinct question; where `first` is a
        // multiple of n by its form, or its remainder is seen to take two
        // values (`.. * N + k * 4` at N = 1 and 2), the simplifier, sound,
        // cannot make the remainder a non-zero constant: no question (and
        // no renaming, which the shortcuts do not need).
        let mut names = CanonicalNames::default();
        let mut renamed = None;
        if !(crate::arith::is_multiple_of(&first, u64::from(n))
            || crate::arith::remainder_varies(&first, i64::from(n)))
        {
            let first = renamed.insert(names.rename(&first));
            if let ArithExpr::Cst(r) =
                self.memo.simplify(&ArithExpr::modulo(first.clone(), ArithExpr::Cst(n as i64)))
            {
                if r != 0 {
                    return Err(ViewError(format!(
                        "asVector({n}) over data that starts {r} scalars past a multiple of {n} in memory \
                         (a slide or pad offset): vectors must be aligned to their width"
                    )));
                }
            }
        }
        if general.is_some_and(|g| self.consecutive_for_every_offset(g, &c)) {
            return Ok(());
        }
        // Renamed before the scalars, as their names must follow its own.
        let first = renamed.unwrap_or_else(|| names.rename(&first));
        for c in 1..n as i64 {
            let at = ArithExpr::add(base.clone(), ArithExpr::Cst(c));
            let Some(next) = self.scalar_index(of, at, flags)? else { return Err(not_consecutive()) };
            if !self.memo.prove_eq(&ArithExpr::sub(names.rename(&next), first.clone()), &ArithExpr::Cst(c)) {
                return Err(not_consecutive());
            }
        }
        Ok(())
    }

    /// Whether `general - general[c := 0]` simplifies to `c`, where
    /// `general` is `index(base + c)` for a symbolic `c` in `[0, n)`: one
    /// consumption answers for every scalar of a vector, where comparing the
    /// `n` scalars one by one took `n` consumptions per unrolled access (most
    /// of mm-nvidia's compile time). `false` means "not shown" (the caller
    /// then compares one by one).
    fn consecutive_for_every_offset(&self, general: ArithExpr, c: &ArithExpr) -> bool {
        // Most often `c` is one term of nested sums (`.. + (i * 4 + c)`):
        // then `general - general[c := 0]` is `c` as it stands, without a
        // question to the prover.
        if offset_terms(&general) == Some(1) {
            return true;
        }
        let zero: HashMap<String, ArithExpr> = [(OFFSET_VAR.to_string(), ArithExpr::Cst(0))].into();
        let first = general.substitute(&zero);
        let mut names = CanonicalNames::default();
        let (g, f, c) = (names.rename(&general), names.rename(&first), names.rename(c));
        self.memo.prove_eq(&ArithExpr::sub(g, f), &c)
    }

    fn pop(&mut self, what: &str) -> Result<ArithExpr, ViewError> {
        let i = self
            .stack
            .pop()
            .ok_or_else(|| ViewError(format!("internal: {what} view consumed without an index")))?;
        // Each layout layer may repeat the index it gets (`join` reads
        // `i / n` and `i % n`): a long chain of them grows it exponentially.
        let mut budget = MAX_INDEX_NODES;
        if !fits(&i, &mut budget) {
            return Err(ViewError(format!(
                "the index of a {what} has more than {MAX_INDEX_NODES} terms: too many layout patterns \
                 (split, join, gather, ...) are stacked on this array"
            )));
        }
        Ok(i)
    }

    /// Consumes `view`: one arm per kind of view, each calling the
    /// consumption of its family (memory and values at the leaves, layout
    /// views that rewrite the indices, tuples, vectors, padding, private
    /// maps).
    fn go(&mut self, view: &View, flags: Flags) -> Result<Access, ViewError> {
        match view {
            View::Mem { mem, ty } => self.memory(mem, ty, flags),
            View::Value { c, .. } => Ok(Access::Value { c: c.clone(), fields: self.fields() }),
            View::Access { index, of } => self.push_then(index.clone(), of, flags),
            View::Split { n, of } => self.split(n, of, flags),
            View::Join { n, of } => self.join(n, of, flags),
            View::Transpose { of } => self.transpose(of, flags),
            View::Gather { f, of } => self.gather(f, of, flags),
            View::Slide { step, of } => self.slide(step, of, flags),
            View::Pad { left, len, mode, of } => self.pad(left, (len, *mode), of, flags),
            View::PadConst { left, len, value, of } => self.pad_const(left, (len, value), of, flags),
            View::Zip { of } => self.zip(of, flags),
            View::Get { k, of } => self.get(*k, of, flags),
            View::AsVector { n, of } => self.as_vector(*n, of, flags),
            View::AsScalar { n, of } => self.as_scalar(*n, of, flags),
            View::Filter { of, idx, of_len } => self.filter(of, idx, of_len, flags),
            View::IndexValue(e) => Ok(Access::IndexValue(e.clone())),
            View::DropIndex { of, kind, keep, depth } => self.drop_index(of, *kind, (*keep, *depth), flags),
            View::MapLayout { var, body } => self.map_layout(var, body, flags),
            View::Generate { fun } => Ok(Access::Call { fun: fun.clone(), index: self.pop("generate")? }),
        }
    }

    /// A consumer for a part of the view (a zip's component, a filter's
    /// indices, one scalar of a vector) with its own index stack.
    fn sub(&self, stack: Vec<ArithExpr>, subst: HashMap<String, ArithExpr>) -> Consumer<'_> {
        Consumer {
            stack,
            tuple: Vec::new(),
            print: self.print,
            memo: self.memo,
            ty: None,
            subst,
            threads: self.threads,
        }
    }

    /// The tuple fields taken so far, outermost first (consumed).
    fn fields(&mut self) -> Vec<usize> {
        self.tuple.drain(..).rev().collect()
    }

    fn push_then(&mut self, index: ArithExpr, of: &View, flags: Flags) -> Result<Access, ViewError> {
        self.stack.push(index);
        self.go(of, flags)
    }

    // Leaves.

    /// A memory read: the indices flattened row-major.
    fn memory(&mut self, mem: &MemRef, ty: &Type, flags: Flags) -> Result<Access, ViewError> {
        let mut flat = ArithExpr::Cst(0);
        let mut t = ty;
        let mut first = true;
        while let Type::Array(elem, n) = t {
            let i = match self.stack.pop() {
                Some(i) => i,
                None => {
                    return Err(ViewError(format!(
                        "internal: array `{}` of type {ty} read without enough indices",
                        mem.name
                    )))
                }
            };
            flat = if first { i } else { ArithExpr::add(ArithExpr::mul(flat, n.clone()), i) };
            first = false;
            t = elem;
        }
        let fields = self.fields();
        if let (Some((_, n)), Type::Tuple(ts)) = (&flags.component, t) {
            // asScalar of tuples of vectors in memory: the code
            // generator reads one field's component, or all of them.
            let vector = |t: &Type| matches!(t, Type::Vector(_, w) if w == n);
            let fits = match fields[..] {
                [] => ts.iter().all(vector),
                [k] => ts.get(k).is_some_and(vector),
                _ => false,
            };
            if !fits {
                return Err(ViewError(format!(
                    "asScalar over memory of {t} read as fields {fields:?}: only tuples of \
                     {n}-vectors (or one such field) can be read as scalars"
                )));
            }
        }
        Ok(Access::Mem {
            mem: mem.clone(),
            index: flat,
            vector: flags.vector,
            component: flags.component,
            fields,
        })
    }

    // Layout views: each rewrites the indices it pops.

    fn split(&mut self, n: &ArithExpr, of: &View, flags: Flags) -> Result<Access, ViewError> {
        let i = self.pop("split")?;
        let j = self.pop("split")?;
        self.push_then(ArithExpr::add(ArithExpr::mul(i, n.clone()), j), of, flags)
    }

    fn join(&mut self, n: &ArithExpr, of: &View, flags: Flags) -> Result<Access, ViewError> {
        let k = self.pop("join")?;
        self.stack.push(ArithExpr::modulo(k.clone(), n.clone()));
        self.push_then(ArithExpr::div(k, n.clone()), of, flags)
    }

    fn transpose(&mut self, of: &View, flags: Flags) -> Result<Access, ViewError> {
        let i = self.pop("transpose")?;
        let j = self.pop("transpose")?;
        self.stack.push(i);
        self.push_then(j, of, flags)
    }

    fn gather(&mut self, f: &IndexFun, of: &View, flags: Flags) -> Result<Access, ViewError> {
        let i = self.pop("gather")?;
        let m = HashMap::from([(f.param.clone(), i)]);
        self.push_then(f.body.substitute(&m), of, flags)
    }

    fn slide(&mut self, step: &ArithExpr, of: &View, flags: Flags) -> Result<Access, ViewError> {
        let i = self.pop("slide")?;
        let j = self.pop("slide")?;
        self.push_then(ArithExpr::add(ArithExpr::mul(i, step.clone()), j), of, flags)
    }

    /// A layout map's element: its index variable stands for the index.
    fn map_layout(&mut self, var: &str, body: &View, flags: Flags) -> Result<Access, ViewError> {
        let i = self.pop("map")?;
        self.subst.insert(var.to_string(), i);
        self.go(body, flags)
    }

    /// `filter`: the index is the value loaded from `idx`.
    fn filter(
        &mut self,
        of: &View,
        idx: &View,
        of_len: &ArithExpr,
        flags: Flags,
    ) -> Result<Access, ViewError> {
        let i = self.pop("filter")?;
        let mut sub = self.sub(vec![i], self.subst.clone());
        let at = substitute(sub.go(idx, Flags::default())?, &sub.subst);
        // The loaded index is opaque to the simplifier; its range is
        // that of a valid index into `of`.
        let text = (self.print)(&at);
        self.push_then(ArithExpr::index(&text, ArithExpr::Cst(0), of_len.clone()), of, flags)
    }

    // Padding.

    fn pad(
        &mut self,
        left: &ArithExpr,
        (len, mode): (&ArithExpr, PadMode),
        of: &View,
        flags: Flags,
    ) -> Result<Access, ViewError> {
        let i = self.pop("pad")?;
        let j = ArithExpr::sub(i, left.clone());
        self.push_then(pad_index(j, len, mode), of, flags)
    }

    /// `padConst`: the value outside `[0, len)`, else the element.
    fn pad_const(
        &mut self,
        left: &ArithExpr,
        (len, value): (&ArithExpr, &String),
        of: &View,
        flags: Flags,
    ) -> Result<Access, ViewError> {
        let i = self.pop("padConst")?;
        let j = ArithExpr::sub(i, left.clone());
        let inner = self.push_then(j.clone(), of, flags)?;
        Ok(Access::Select {
            conds: vec![
                Pred { lhs: j.clone(), op: CmpOp::Ge, rhs: ArithExpr::Cst(0) },
                Pred { lhs: j, op: CmpOp::Lt, rhs: len.clone() },
            ],
            then: Box::new(inner),
            otherwise: value.clone(),
        })
    }

    // Tuples.

    /// A zip's component when a `get` chose one, else the whole tuple.
    fn zip(&mut self, of: &[Rc<View>], flags: Flags) -> Result<Access, ViewError> {
        if let Some(k) = self.tuple.pop() {
            let v = of.get(k).ok_or_else(|| ViewError(format!("internal: zip has no component {k}")))?;
            return self.go(v, flags);
        }
        let ty = self
            .ty
            .cloned()
            .ok_or_else(|| ViewError("internal: whole tuple read without its type".into()))?;
        let mut parts = Vec::new();
        for v in of {
            let mut sub = self.sub(self.stack.clone(), HashMap::new());
            parts.push(sub.go(v, flags.clone())?);
            let subst = sub.subst;
            self.subst.extend(subst);
        }
        self.stack.clear();
        Ok(Access::Tuple { parts, ty })
    }

    fn get(&mut self, k: usize, of: &View, flags: Flags) -> Result<Access, ViewError> {
        self.tuple.push(k);
        self.go(of, flags)
    }

    // Vectors.

    fn as_vector(&mut self, n: u8, of: &View, flags: Flags) -> Result<Access, ViewError> {
        let i = self.pop("asVector")?;
        let base = ArithExpr::mul(i, ArithExpr::Cst(n as i64));
        // A component of the vector (asScalar over asVector, perhaps
        // through a zip): the one scalar it is, no vector access.
        if let Some((c, _)) = &flags.component {
            self.stack.push(ArithExpr::add(base, c.clone()));
            return self.go(of, Flags { component: None, ..flags });
        }
        self.check_consecutive(of, &base, n, &flags)?;
        self.stack.push(base);
        self.go(of, Flags { vector: Some(n), ..flags })
    }

    fn as_scalar(&mut self, n: u8, of: &View, flags: Flags) -> Result<Access, ViewError> {
        let i = self.pop("asScalar")?;
        let w = ArithExpr::Cst(n as i64);
        self.stack.push(ArithExpr::div(i.clone(), w.clone()));
        self.go(of, Flags { component: Some((ArithExpr::modulo(i, w), n)), ..flags })
    }

    // Private memory of parallel maps.

    /// Private memory written by a parallel map of `kind`: read only at the
    /// reading thread's own index. With `keep`, the index stays on the
    /// stack (`depth` below its top).
    fn drop_index(
        &mut self,
        of: &View,
        kind: MapKind,
        (keep, depth): (bool, usize),
        flags: Flags,
    ) -> Result<Access, ViewError> {
        // A kept index is only looked at (none yet: nothing to check).
        let i = if keep {
            self.stack.len().checked_sub(1 + depth).map(|at| self.stack[at].clone())
        } else {
            Some(self.pop("private map")?)
        };
        if let (Some(ts), Some(i)) = (self.threads, i) {
            let i = if self.subst.is_empty() { i } else { i.substitute(&self.subst) };
            let own =
                |v: &ArithExpr| *v == i || crate::arith::simplify(&i) == *v || crate::arith::prove_eq(&i, v);
            if !ts.iter().any(|(k, v)| *k == kind && own(v)) {
                return Err(ViewError(format!(
                    "private memory written by a parallel map holds only each thread's own \
                     element, but it is read here at index {i}, which another thread holds \
                     (a gather, transpose or other reordering): write it to local memory \
                     (toLocal) instead"
                )));
            }
        }
        self.go(of, flags)
    }
}

/// The index inside `[0, n)` that `pad`'s boundary handling reads for `j`.
pub fn pad_index(j: ArithExpr, n: &ArithExpr, mode: PadMode) -> ArithExpr {
    let zero = ArithExpr::Cst(0);
    let last = ArithExpr::sub(n.clone(), ArithExpr::Cst(1));
    match mode {
        PadMode::Clamp => ArithExpr::max(zero, ArithExpr::min(j, last)),
        PadMode::Mirror => ArithExpr::if_then_else(
            Pred { lhs: j.clone(), op: CmpOp::Lt, rhs: zero.clone() },
            ArithExpr::sub(ArithExpr::mul(ArithExpr::Cst(-1), j.clone()), ArithExpr::Cst(1)),
            ArithExpr::if_then_else(
                Pred { lhs: j.clone(), op: CmpOp::Ge, rhs: n.clone() },
                ArithExpr::sub(
                    ArithExpr::sub(ArithExpr::mul(ArithExpr::Cst(2), n.clone()), ArithExpr::Cst(1)),
                    j.clone(),
                ),
                j,
            ),
        ),
        PadMode::Wrap => ArithExpr::modulo(ArithExpr::add(j, n.clone()), n.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(name: &str) -> ArithExpr {
        ArithExpr::index(name, ArithExpr::Cst(0), ArithExpr::Cst(8))
    }

    // The shortcut of `consecutive_for_every_offset` takes only an offset
    // that is a term of nested sums; anything else goes to the prover.
    #[test]
    fn offset_terms_looks_through_sums_only() {
        let c = v(OFFSET_VAR);
        let base = ArithExpr::mul(v("i"), ArithExpr::Cst(4));
        let at = ArithExpr::add(base.clone(), c.clone());
        let linear = ArithExpr::add(ArithExpr::mul(v("j"), v("k")), at.clone());
        assert_eq!(offset_terms(&linear), Some(1));
        assert_eq!(offset_terms(&ArithExpr::add(linear.clone(), c.clone())), Some(2));
        assert_eq!(offset_terms(&ArithExpr::div(at.clone(), ArithExpr::Cst(4))), None);
        assert_eq!(offset_terms(&ArithExpr::mul(at.clone(), ArithExpr::Cst(2))), None);
        let printed = ArithExpr::index(&format!("idx[{at}]"), ArithExpr::Cst(0), ArithExpr::Cst(8));
        assert_eq!(offset_terms(&ArithExpr::add(printed.clone(), c.clone())), None);
        assert_eq!(offset_terms(&v("i")), Some(0));
        // The first scalar's index puts `base` back for `base + c`, and
        // refuses where `c` is only named in a filter's printed index.
        let general =
            ArithExpr::add(ArithExpr::modulo(at.clone(), v("n")), ArithExpr::div(at.clone(), v("n")));
        let direct =
            ArithExpr::add(ArithExpr::modulo(base.clone(), v("n")), ArithExpr::div(base.clone(), v("n")));
        assert_eq!(first_of(&general, &base, &c), Some(direct));
        assert_eq!(first_of(&ArithExpr::add(printed, at), &base, &c), None);
        assert_eq!(first_of(&v("j"), &base, &c), None);
    }
}
