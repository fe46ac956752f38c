//! How many array elements the interpreter makes evaluating a def, roughly,
//! before it runs: every call's result counted once per element of the
//! maps and reductions around it (the interpreter evaluates a map's
//! function once per element and keeps every value as a tree). The search
//! validates where this fits the interpreter's budget
//! (`interp::MAX_WORK`), rather than finding out by running into it: a
//! square product written with one size, or `A Aᵀ`, has a million points
//! at its default validation size, each reducing a thousand values.

use crate::ir::{layout_pattern, Expr, ExprKind, FunDecl, FunKind, Pattern, Program};
use crate::passes::typecheck::{typecheck_def, Types};
use crate::types::{Sizes, Type};

/// The estimate for `def` at `sizes`; `None` where it does not type or a
/// length does not evaluate.
pub fn interp_elements(prog: &Program, def: &str, sizes: &Sizes) -> Option<f64> {
    let d = prog.def(def)?;
    let types = typecheck_def(prog, d).ok()?;
    let mut c = Cost { types: &types, sizes, total: 0.0 };
    c.expr(&d.body, 1.0)?;
    Some(c.total)
}

struct Cost<'a> {
    types: &'a Types,
    sizes: &'a Sizes,
    total: f64,
}

impl Cost<'_> {
    /// The elements of a value of type `t` (1 for a scalar).
    fn elements(&self, t: &Type) -> Option<f64> {
        match t {
            Type::Array(e, n) => Some(self.len(n)? * self.elements(e)?),
            Type::Tuple(ts) => ts.iter().map(|t| self.elements(t)).sum(),
            Type::Scalar(_) | Type::Vector(..) => Some(1.0),
        }
    }

    fn len(&self, n: &crate::arith::ArithExpr) -> Option<f64> {
        n.eval_with(&|v| self.sizes.get(v).copied()).ok().map(|v| v.max(1) as f64)
    }

    /// `e` evaluated `times` times.
    fn expr(&mut self, e: &Expr, times: f64) -> Option<()> {
        let ExprKind::Call(f, args) = &e.kind else { return Some(()) };
        let ty = self.types.exprs.get(&e.id)?;
        self.total += times * self.elements(ty)?;
        for a in args {
            self.expr(a, times)?;
        }
        // A pattern's function runs once per element of its last argument
        // (a map's, a reduction's); a lambda applied here, once.
        let per = match &f.kind {
            FunKind::Pattern(_) => match args.last().and_then(|a| self.types.exprs.get(&a.id)) {
                Some(Type::Array(_, n)) => self.len(n)?,
                _ => 1.0,
            },
            FunKind::Lambda(_) | FunKind::UserFun(_) => 1.0,
        };
        self.fun(f, times * per)
    }

    fn fun(&mut self, f: &FunDecl, times: f64) -> Option<()> {
        match &f.kind {
            FunKind::Lambda(l) => self.expr(&l.body, times),
            FunKind::Pattern(p) => match p.nested_fun() {
                Some(g) => self.fun(g, times),
                None => Some(()),
            },
            FunKind::UserFun(_) => Some(()),
        }
    }
}

/// The operators the def's user functions apply at `sizes`, as written
/// (`ir::c::ops`: each `+`, `*`, comparison, call counts once; a vector
/// operation once per lane is not counted): each user function's count
/// times the number of times it runs, which is the product of the lengths
/// of the maps and reductions around it (an `iterate`'s count, a
/// `generate`'s length). What `lift explore` holds a best candidate's time
/// against the FP32 rate with. `None` where the def does not type, a
/// length does not evaluate, or a user function has a loop.
pub fn userfun_ops(prog: &Program, def: &str, sizes: &Sizes) -> Option<f64> {
    let d = prog.def(def)?;
    let types = typecheck_def(prog, d).ok()?;
    let mut c = Ops { prog, cost: Cost { types: &types, sizes, total: 0.0 } };
    c.expr(&d.body, 1.0)?;
    Some(c.cost.total)
}

struct Ops<'a> {
    prog: &'a Program,
    cost: Cost<'a>,
}

impl Ops<'_> {
    fn expr(&mut self, e: &Expr, times: f64) -> Option<()> {
        let ExprKind::Call(f, args) = &e.kind else { return Some(()) };
        for a in args {
            self.expr(a, times)?;
        }
        let arg = args.last().and_then(|a| self.cost.types.exprs.get(&a.id));
        self.apply(f, times, arg)
    }

    /// `f` applied `times` times to a value of type `arg` (where known): a
    /// pattern's function runs once per element of it (`map(map(g))`'s `g`
    /// once per element of each row), a copy's once, an `iterate`'s `n`
    /// times, a `generate`'s once per element it makes.
    fn apply(&mut self, f: &FunDecl, times: f64, arg: Option<&Type>) -> Option<()> {
        let p = match &f.kind {
            FunKind::Lambda(l) => return self.expr(&l.body, times),
            FunKind::UserFun(id) => {
                let ops = crate::ir::c::ops::stmts_ops(&self.prog.user_fun(*id).body)?;
                self.cost.total += times * ops as f64;
                return Some(());
            }
            FunKind::Pattern(p) => p,
        };
        let (per, elem) = match arg {
            Some(Type::Array(e, n)) => (self.cost.len(n)?, Some(&**e)),
            _ => (1.0, None),
        };
        match p {
            Pattern::Map { f, .. }
            | Pattern::MapVec { f }
            | Pattern::Reduce { f, .. }
            | Pattern::PartRed { f, .. }
            | Pattern::SlideSeq { f, .. } => self.apply(f, times * per, elem),
            Pattern::Iterate { n, f } => self.apply(f, times * f64::from(*n), arg),
            Pattern::Generate { len, f } => self.apply(f, times * self.cost.len(len)?, None),
            Pattern::ToGlobal(f) | Pattern::ToLocal(f) | Pattern::ToPrivate(f) => self.apply(f, times, arg),
            layout_pattern!() | Pattern::Id => Some(()),
        }
    }
}
