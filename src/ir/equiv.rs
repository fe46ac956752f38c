//! Structural equality and hashing of expressions, ignoring ids and spans:
//! two expressions are equal when they differ only in ids, spans and the
//! names of lambda parameters (alpha-equivalence). Floats compare by their
//! bits; user functions by name, so expressions of two programs compare.
//!
//! Both are computed from a canonical token string (`canonical_expr`), so
//! equal expressions hash equally by construction.

use super::{Def, Expr, ExprKind, FunDecl, FunKind, Literal, ParamId, Pattern, Program};
use crate::arith::ArithExpr;
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::fmt::Write;
use std::hash::{Hash, Hasher};

/// The canonical form of `e`: bound parameters are numbered in binding
/// order; free parameters keep their id (`$7`).
pub fn canonical_expr(prog: &Program, e: &Expr) -> String {
    let mut c = Canon { prog, bound: HashMap::new(), out: String::new() };
    c.expr(e);
    c.out
}

/// The canonical form of a def's body, its parameters numbered first (so
/// two programs' defs compare regardless of ids and parameter names).
pub fn canonical_def(prog: &Program, d: &Def) -> String {
    let mut c = Canon { prog, bound: HashMap::new(), out: String::new() };
    for p in &d.params {
        let n = c.bound.len();
        c.bound.insert(p.id, n);
        let _ = write!(c.out, "P{n}:{:?};", p.ty);
    }
    c.expr(&d.body);
    c.out
}

/// The canonical form of a function declaration (see [`canonical_expr`]).
pub fn canonical_fun(prog: &Program, f: &FunDecl) -> String {
    let mut c = Canon { prog, bound: HashMap::new(), out: String::new() };
    c.fun(f);
    c.out
}

/// Structural equality modulo ids, spans and parameter names.
pub fn expr_eq(prog: &Program, a: &Expr, b: &Expr) -> bool {
    canonical_expr(prog, a) == canonical_expr(prog, b)
}

/// A hash consistent with [`expr_eq`].
pub fn expr_hash(prog: &Program, e: &Expr) -> u64 {
    let mut h = DefaultHasher::new();
    canonical_expr(prog, e).hash(&mut h);
    h.finish()
}

struct Canon<'a> {
    prog: &'a Program,
    bound: HashMap<ParamId, usize>,
    out: String,
}

impl Canon<'_> {
    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Literal(l) => self.literal(l),
            ExprKind::Param(p) => match self.bound.get(p) {
                Some(n) => {
                    let _ = write!(self.out, "v{n}");
                }
                None => {
                    let _ = write!(self.out, "${}", p.0);
                }
            },
            ExprKind::Call(f, args) => {
                self.out.push_str("call(");
                self.fun(f);
                for a in args {
                    self.out.push(',');
                    self.expr(a);
                }
                self.out.push(')');
            }
        }
    }

    fn literal(&mut self, l: &Literal) {
        match l {
            Literal::Float(f) => {
                let _ = write!(self.out, "f{:08x}", f.to_bits());
            }
            Literal::Int(i) => {
                let _ = write!(self.out, "i{i}");
            }
            Literal::Tuple(ls) => {
                self.out.push('(');
                for l in ls {
                    self.literal(l);
                    self.out.push(',');
                }
                self.out.push(')');
            }
        }
    }

    fn fun(&mut self, f: &FunDecl) {
        match &f.kind {
            FunKind::Lambda(l) => {
                self.out.push_str("lam(");
                for p in &l.params {
                    let n = self.bound.len();
                    self.bound.insert(p.id, n);
                    let _ = write!(self.out, "v{n}:{:?};", p.ty);
                }
                self.expr(&l.body);
                self.out.push(')');
            }
            FunKind::UserFun(id) => {
                let name = self.prog.user_funs.get(id.0 as usize).map_or("?", |u| u.name.as_str());
                let _ = write!(self.out, "uf:{name}");
            }
            FunKind::Pattern(p) => self.pattern(p),
        }
    }

    fn arith(&mut self, a: &ArithExpr) {
        let _ = write!(self.out, "{a:?}");
    }

    fn pattern(&mut self, p: &Pattern) {
        match p {
            Pattern::Map { kind, f } => {
                let _ = write!(self.out, "map{kind:?}[");
                self.fun(f);
            }
            Pattern::MapVec { f } => {
                self.out.push_str("mapVec[");
                self.fun(f);
            }
            Pattern::Reduce { kind, f } => {
                let _ = write!(self.out, "reduce{kind:?}[");
                self.fun(f);
            }
            Pattern::PartRed { f, m } => {
                self.out.push_str("partRed[");
                self.arith(m);
                self.fun(f);
            }
            Pattern::Iterate { n, f } => {
                let _ = write!(self.out, "iterate{n}[");
                self.fun(f);
            }
            Pattern::Split(m) => {
                self.out.push_str("split[");
                self.arith(m);
            }
            Pattern::Join => self.out.push_str("join["),
            Pattern::Gather(ix) | Pattern::Scatter(ix) => {
                let kind = if matches!(p, Pattern::Gather(_)) { "gather[" } else { "scatter[" };
                self.out.push_str(kind);
                // Alpha-equivalence of the index variable.
                let mut m = HashMap::new();
                m.insert(ix.param.clone(), ArithExpr::size("#i"));
                self.arith(&ix.body.substitute(&m));
            }
            Pattern::Transpose => self.out.push_str("transpose["),
            Pattern::Zip(n) => {
                let _ = write!(self.out, "zip{n}[");
            }
            Pattern::Get(i) => {
                let _ = write!(self.out, "get{i}[");
            }
            Pattern::At(i) => {
                self.out.push_str("at[");
                self.arith(i);
            }
            Pattern::AsVector(n) => {
                let _ = write!(self.out, "asVector{n}[");
            }
            Pattern::AsScalar => self.out.push_str("asScalar["),
            Pattern::ToGlobal(f) => {
                self.out.push_str("toGlobal[");
                self.fun(f);
            }
            Pattern::ToLocal(f) => {
                self.out.push_str("toLocal[");
                self.fun(f);
            }
            Pattern::ToPrivate(f) => {
                self.out.push_str("toPrivate[");
                self.fun(f);
            }
            Pattern::Slide { size, step } => {
                self.out.push_str("slide[");
                self.arith(size);
                self.arith(step);
            }
            Pattern::SlideSeq { size, step, f } => {
                self.out.push_str("slideSeqPlus[");
                self.arith(size);
                self.arith(step);
                self.fun(f);
            }
            Pattern::Pad { left, right, mode } => {
                let _ = write!(self.out, "pad{mode:?}[");
                self.arith(left);
                self.arith(right);
            }
            Pattern::PadConst { left, right, value } => {
                self.out.push_str("padConst[");
                self.arith(left);
                self.arith(right);
                self.literal(value);
            }
            Pattern::Generate { len, f } => {
                self.out.push_str("generate[");
                self.arith(len);
                self.fun(f);
            }
            Pattern::Filter => self.out.push_str("filter["),
            Pattern::Id => self.out.push_str("id["),
        }
        self.out.push(']');
    }
}
