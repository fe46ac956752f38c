//! Construction of IR nodes with fresh ids, and copies of subtrees with
//! fresh ids (`refresh`). The parser (inlining earlier defs) and the rewrite
//! rules (duplicating a function) both copy subtrees through this, so every
//! `Expr`/`Param` id in a program stays unique.

use super::visitor::MutVisitor;
use super::{
    Def, Expr, ExprId, ExprKind, FunDecl, FunId, FunKind, Lambda, Param, ParamId, Pattern, Program, Span,
};
use crate::types::Type;
use std::collections::{HashMap, HashSet};

/// Hands out fresh expression and parameter ids (and names for parameters
/// introduced by a transformation).
#[derive(Clone, Debug, Default)]
pub struct IdGen {
    pub next_expr: u32,
    pub next_param: u32,
    pub next_fun: u32,
    /// Parameter names already used in the program; synthetic names avoid
    /// them so that the printed program re-parses to the same bindings.
    used_names: HashSet<String>,
    /// Whether copies give synthetic parameters new names (the parser keeps
    /// names as they are; rewrites rename, as a copy may end up nested in
    /// the scope of its original).
    rename_synthetic: bool,
}

/// Whether a parameter name is one made up by desugaring or a rewrite
/// (`_p12`), as opposed to one the programmer wrote.
pub fn is_synthetic(name: &str) -> bool {
    name.strip_prefix("_p").is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

impl IdGen {
    /// Counters starting at the given ids; no names reserved.
    pub fn new(next_expr: u32, next_param: u32, next_fun: u32) -> IdGen {
        IdGen { next_expr, next_param, next_fun, used_names: HashSet::new(), rename_synthetic: false }
    }

    /// A function declaration with a fresh id.
    pub fn fun(&mut self, kind: FunKind, span: Span) -> FunDecl {
        let id = FunId(self.next_fun);
        self.next_fun += 1;
        FunDecl { id, kind, span }
    }

    /// Counters after the program's largest ids, every parameter name in
    /// the program reserved.
    pub fn for_program(prog: &Program) -> IdGen {
        let mut g = IdGen::new(prog.next_expr, prog.next_param, prog.next_fun);
        g.rename_synthetic = true;
        for d in &prog.defs {
            for p in &d.params {
                g.used_names.insert(p.name.clone());
            }
            super::visit::walk_params(&d.body, &mut |p| {
                g.used_names.insert(p.name.clone());
            });
        }
        g
    }

    /// Writes the counters back, so later ids stay unique.
    pub fn store(&self, prog: &mut Program) {
        prog.next_expr = prog.next_expr.max(self.next_expr);
        prog.next_param = prog.next_param.max(self.next_param);
        prog.next_fun = prog.next_fun.max(self.next_fun);
    }

    pub fn expr(&mut self, kind: ExprKind, span: Span) -> Expr {
        let id = ExprId(self.next_expr);
        self.next_expr += 1;
        Expr { id, kind, span }
    }

    pub fn param(&mut self, name: &str, ty: Option<Type>, span: Span) -> Param {
        let id = ParamId(self.next_param);
        self.next_param += 1;
        self.used_names.insert(name.to_string());
        Param { id, name: name.to_string(), ty, span }
    }

    /// A parameter with a fresh synthetic name `_pN` not used anywhere yet.
    pub fn synthetic_param(&mut self, span: Span) -> Param {
        let mut n = self.next_param;
        while self.used_names.contains(&format!("_p{n}")) {
            n += 1;
        }
        self.param(&format!("_p{n}"), None, span)
    }

    /// A reference to a parameter.
    pub fn var(&mut self, p: &Param) -> Expr {
        self.expr(ExprKind::Param(p.id), p.span)
    }

    pub fn call(&mut self, f: FunDecl, args: Vec<Expr>, span: Span) -> Expr {
        self.expr(ExprKind::Call(Box::new(f), args), span)
    }

    /// `pattern(args)`.
    pub fn call_pattern(&mut self, p: Pattern, args: Vec<Expr>, span: Span) -> Expr {
        let f = self.fun(FunKind::Pattern(p), span);
        self.call(f, args, span)
    }

    /// `\_pN -> body(_pN)` with a fresh synthetic parameter.
    pub fn lambda1(&mut self, span: Span, body: impl FnOnce(&mut IdGen, Expr) -> Expr) -> FunDecl {
        let p = self.synthetic_param(span);
        let v = self.var(&p);
        let b = body(self, v);
        self.fun(FunKind::Lambda(Lambda { params: vec![p], body: Box::new(b) }), span)
    }

    /// A copy of a def as a lambda, with fresh ids throughout.
    pub fn def_as_lambda(&mut self, d: &Def, span: Span) -> FunDecl {
        let mut map = HashMap::new();
        let params = d.params.iter().map(|p| self.refresh_param(p, &mut map)).collect();
        let body = self.refresh_expr_in(&d.body, &mut map);
        self.fun(FunKind::Lambda(Lambda { params, body: Box::new(body) }), span)
    }

    /// A copy of `e` with fresh ids; parameters bound inside `e` get fresh
    /// ids too (synthetic ones also fresh names); free ones are kept.
    pub fn refresh_expr(&mut self, e: &Expr) -> Expr {
        self.refresh_expr_in(e, &mut HashMap::new())
    }

    /// A copy of `f` with fresh ids, as [`IdGen::refresh_expr`].
    pub fn refresh_fun(&mut self, f: &FunDecl) -> FunDecl {
        self.refresh_fun_in(f, &mut HashMap::new())
    }

    fn refresh_param(&mut self, p: &Param, map: &mut HashMap<ParamId, ParamId>) -> Param {
        let q = if self.rename_synthetic && is_synthetic(&p.name) {
            let mut q = self.synthetic_param(p.span);
            q.ty = p.ty.clone();
            q
        } else {
            self.param(&p.name, p.ty.clone(), p.span)
        };
        map.insert(p.id, q.id);
        q
    }

    fn refresh_expr_in(&mut self, e: &Expr, map: &mut HashMap<ParamId, ParamId>) -> Expr {
        let kind = match &e.kind {
            ExprKind::Literal(l) => ExprKind::Literal(l.clone()),
            ExprKind::Param(p) => ExprKind::Param(map.get(p).copied().unwrap_or(*p)),
            ExprKind::Call(fd, args) => {
                let fd = self.refresh_fun_in(fd, map);
                ExprKind::Call(Box::new(fd), args.iter().map(|a| self.refresh_expr_in(a, map)).collect())
            }
        };
        self.expr(kind, e.span)
    }

    fn refresh_fun_in(&mut self, fd: &FunDecl, map: &mut HashMap<ParamId, ParamId>) -> FunDecl {
        let kind = match &fd.kind {
            FunKind::UserFun(id) => FunKind::UserFun(*id),
            FunKind::Lambda(l) => {
                let params = l.params.iter().map(|p| self.refresh_param(p, map)).collect();
                FunKind::Lambda(Lambda { params, body: Box::new(self.refresh_expr_in(&l.body, map)) })
            }
            FunKind::Pattern(p) => {
                let mut p = p.clone();
                if let Some(g) = super::visit::nested_fun_mut(&mut p) {
                    *g = self.refresh_fun_in(g, map);
                }
                FunKind::Pattern(p)
            }
        };
        self.fun(kind, fd.span)
    }
}

/// `e` with every function declaration given a fresh id from `next_fun`:
/// transformations build declarations with [`FunId::FRESH`] and copy
/// others, and renumber their result so that ids are unique again.
pub fn renumber_funs(e: &Expr, next_fun: &mut u32) -> Expr {
    let mut e = e.clone();
    Renumber(next_fun).visit_expr(&mut e);
    e
}

/// Gives each declaration it meets the next id.
struct Renumber<'a>(&'a mut u32);

impl MutVisitor<'_> for Renumber<'_> {
    fn visit_fun(&mut self, fd: &mut FunDecl) {
        fd.id = FunId(*self.0);
        *self.0 += 1;
        self.super_fun(fd);
    }
}
