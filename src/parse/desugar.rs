//! Desugaring the surface tree into the IR: name resolution, composition
//! into lambdas, `$` and calls into `Call`s, `let` into a called lambda,
//! and calls of earlier `def`s into fresh copies of their lambdas.

use super::ast::{SExpr, SKind, SParam};
use super::error::{PResult, ParseError};
use super::patterns::is_pattern;
use super::types::snippet;
use crate::ir::{
    Def, Expr, ExprId, ExprKind, FunDecl, FunId, FunKind, IdGen, Lambda, Literal, Param, ParamId, Span,
    UserFun, UserFunId,
};

/// What a pattern application denotes: a function still waiting for its
/// data, or a value.
pub enum Form {
    Fun(FunDecl),
    Value(Expr),
}

/// Desugaring state for one `def`.
pub struct Ctx<'a> {
    pub src: &'a str,
    pub next_expr: u32,
    pub next_param: u32,
    pub next_fun: u32,
    pub user_funs: &'a [UserFun],
    pub defs: &'a [Def],
    /// Size names declared by the current def's parameter types.
    pub sizes: Vec<String>,
    /// Parameters in scope, innermost last.
    pub scope: Vec<(String, ParamId)>,
}

pub const UNKNOWN_NAME: &str = "a known name (parameter, size, pattern, user function or earlier def)";

impl Ctx<'_> {
    pub fn err(&self, span: Span, expected: impl Into<String>) -> ParseError {
        ParseError::new(span, snippet(self.src, span), expected)
    }

    pub fn mk(&mut self, kind: ExprKind, span: Span) -> Expr {
        let id = ExprId(self.next_expr);
        self.next_expr += 1;
        Expr { id, kind, span }
    }

    pub fn fun_decl(&mut self, kind: FunKind, span: Span) -> FunDecl {
        let id = FunId(self.next_fun);
        self.next_fun += 1;
        FunDecl { id, kind, span }
    }

    pub fn fresh_param(&mut self, name: &str, ty: Option<crate::types::Type>, span: Span) -> Param {
        let id = ParamId(self.next_param);
        self.next_param += 1;
        Param { id, name: name.to_string(), ty, span }
    }

    /// A parameter introduced by desugaring; the name is unique so that the
    /// printed program re-parses to the same structure.
    pub fn synthetic_param(&mut self, span: Span) -> Param {
        let name = format!("_p{}", self.next_param);
        self.fresh_param(&name, None, span)
    }

    fn lookup(&self, name: &str) -> Option<ParamId> {
        self.scope.iter().rev().find(|(n, _)| n == name).map(|(_, id)| *id)
    }

    fn user_fun(&self, name: &str) -> Option<UserFunId> {
        self.user_funs.iter().position(|u| u.name == name).map(|i| UserFunId(i as u32))
    }

    /// An earlier def; a pattern of the same name takes precedence.
    fn def_index(&self, name: &str) -> Option<usize> {
        if is_pattern(name) {
            return None;
        }
        self.defs.iter().position(|d| d.name == name)
    }

    /// Builds a call, checking the argument count of lambdas and user functions.
    pub fn call(&mut self, fd: FunDecl, args: Vec<Expr>, span: Span) -> PResult<Expr> {
        let want = match &fd.kind {
            FunKind::Lambda(l) => Some(l.params.len()),
            FunKind::UserFun(id) => self.user_funs.get(id.0 as usize).map(|u| u.params.len()),
            FunKind::Pattern(_) => None,
        };
        if let Some(n) = want {
            if n != args.len() {
                return Err(self
                    .err(span, format!("{n} argument{} for this function, not {}", plural(n), args.len())));
            }
        }
        Ok(self.mk(ExprKind::Call(Box::new(fd), args), span))
    }

    /// Desugars an expression that must denote a value.
    pub fn value(&mut self, e: &SExpr) -> PResult<Expr> {
        match &e.kind {
            SKind::Name(n) => {
                if let Some(id) = self.lookup(n) {
                    return Ok(self.mk(ExprKind::Param(id), e.span));
                }
                if self.sizes.contains(n) {
                    return Err(self.err(e.span, "a value (sizes appear only in types, pattern parameters and index functions)"));
                }
                if self.is_function_name(n) {
                    return Err(self.err(e.span, "a value (apply this function with `$` or `(...)`)"));
                }
                Err(self.err(e.span, UNKNOWN_NAME))
            }
            SKind::Int(_) | SKind::Float(_) | SKind::Neg(_) | SKind::Tuple(_) => {
                let lit = self.literal(e)?;
                Ok(self.mk(ExprKind::Literal(lit), e.span))
            }
            SKind::Bin(_, _, _, op_span) => Err(self.err(
                *op_span,
                "a value (arithmetic on data is written in a user function; `+ - * / %` are for sizes and indices)",
            )),
            SKind::Call(callee, args) => {
                let args: Vec<&SExpr> = args.iter().collect();
                self.apply(callee, &args, e.span)
            }
            SKind::Apply(f, x) => self.apply(f, &[x.as_ref()], e.span),
            SKind::Compose(_) => Err(self.err(e.span, "a value (apply the composition to data with `$`)")),
            SKind::Lambda(..) => Err(self.err(e.span, "a value (call the lambda with `$` or `(...)`)")),
            SKind::Let(p, v, body) => {
                let value = self.value(v)?;
                let param = self.fresh_param(&p.name, p.ty.clone(), p.span);
                self.scope.push((p.name.clone(), param.id));
                let body = self.value(body);
                self.scope.pop();
                let body = body?;
                let lam = self.fun_decl(FunKind::Lambda(Lambda { params: vec![param], body: Box::new(body) }), e.span);
                self.call(lam, vec![value], e.span)
            }
        }
    }

    /// A compile-time constant: numbers, negated numbers, tuples of these.
    pub fn literal(&self, e: &SExpr) -> PResult<Literal> {
        match &e.kind {
            SKind::Int(v) => i32::try_from(*v)
                .map(Literal::Int)
                .map_err(|_| self.err(e.span, "an integer literal that fits in 32 bits")),
            SKind::Float(v) => Ok(Literal::Float(*v as f32)),
            SKind::Neg(inner) => match self.literal(inner)? {
                Literal::Int(v) => Ok(Literal::Int(v.wrapping_neg())),
                Literal::Float(v) => Ok(Literal::Float(-v)),
                Literal::Tuple(_) => Err(self.err(e.span, "a number after `-`")),
            },
            SKind::Tuple(items) => {
                Ok(Literal::Tuple(items.iter().map(|i| self.literal(i)).collect::<PResult<_>>()?))
            }
            SKind::Name(_)
            | SKind::Bin(..)
            | SKind::Call(..)
            | SKind::Compose(_)
            | SKind::Apply(..)
            | SKind::Lambda(..)
            | SKind::Let(..) => Err(self.err(e.span, "a constant (a number or a tuple of numbers)")),
        }
    }

    fn is_function_name(&self, n: &str) -> bool {
        is_pattern(n) || self.user_fun(n).is_some() || self.def_index(n).is_some()
    }

    /// `callee(args)` (or `callee $ arg`) in a value position.
    fn apply(&mut self, callee: &SExpr, args: &[&SExpr], span: Span) -> PResult<Expr> {
        match &callee.kind {
            SKind::Name(n) if self.lookup(n).is_none() && !self.sizes.contains(n) => {
                if let Some(id) = self.user_fun(n) {
                    let vals = self.values(args)?;
                    let fd = self.fun_decl(FunKind::UserFun(id), callee.span);
                    return self.call(fd, vals, span);
                }
                if let Some(i) = self.def_index(n) {
                    let fd = self.copy_def(i, callee.span);
                    let vals = self.values(args)?;
                    return self.call(fd, vals, span);
                }
                if is_pattern(n) {
                    return match self.pattern(n, callee.span, args, span)? {
                        Form::Value(e) => Ok(e),
                        Form::Fun(_) => {
                            Err(self.err(span, format!("a value (`{n}` needs its data argument here)")))
                        }
                    };
                }
                Err(self.err(callee.span, UNKNOWN_NAME))
            }
            // `split(128)(xs)` and `split(128) $ xs`: the data joins the parameters.
            SKind::Call(inner, first) if matches!(&inner.kind, SKind::Name(n) if is_pattern(n) && self.lookup(n).is_none()) =>
            {
                let SKind::Name(n) = &inner.kind else { return Err(self.err(span, "a pattern")) };
                let all: Vec<&SExpr> = first.iter().chain(args.iter().copied()).collect();
                match self.pattern(n, inner.span, &all, span)? {
                    Form::Value(e) => Ok(e),
                    Form::Fun(_) => {
                        Err(self.err(span, format!("a value (`{n}` needs its data argument here)")))
                    }
                }
            }
            _ => {
                let fd = self.fun(callee)?;
                let vals = self.values(args)?;
                self.call(fd, vals, span)
            }
        }
    }

    pub fn values(&mut self, args: &[&SExpr]) -> PResult<Vec<Expr>> {
        args.iter().map(|a| self.value(a)).collect()
    }

    /// Desugars an expression that must denote a function.
    pub fn fun(&mut self, e: &SExpr) -> PResult<FunDecl> {
        match &e.kind {
            SKind::Name(n) => {
                if self.lookup(n).is_some() || self.sizes.contains(n) {
                    return Err(self.err(e.span, "a function (this name is a value)"));
                }
                if let Some(id) = self.user_fun(n) {
                    return Ok(self.fun_decl(FunKind::UserFun(id), e.span));
                }
                if let Some(i) = self.def_index(n) {
                    return Ok(self.copy_def(i, e.span));
                }
                if is_pattern(n) {
                    return self.pattern_fun(n, e.span, &[], e.span);
                }
                Err(self.err(e.span, UNKNOWN_NAME))
            }
            SKind::Call(callee, args) => match &callee.kind {
                SKind::Name(n) if is_pattern(n) && self.lookup(n).is_none() => {
                    let args: Vec<&SExpr> = args.iter().collect();
                    self.pattern_fun(n, callee.span, &args, e.span)
                }
                SKind::Name(n)
                    if self.lookup(n).is_none() && !self.is_function_name(n) && !self.sizes.contains(n) =>
                {
                    Err(self.err(callee.span, UNKNOWN_NAME))
                }
                _ => {
                    Err(self.err(e.span, "a function (this call is a value; only patterns take parameters)"))
                }
            },
            SKind::Compose(parts) => {
                let fds: Vec<FunDecl> = parts.iter().map(|p| self.fun(p)).collect::<PResult<_>>()?;
                let p = self.synthetic_param(e.span);
                let mut inner = self.mk(ExprKind::Param(p.id), e.span);
                for (fd, part) in fds.into_iter().zip(parts).rev() {
                    inner = self.call(fd, vec![inner], part.span)?;
                }
                Ok(self.fun_decl(FunKind::Lambda(Lambda { params: vec![p], body: Box::new(inner) }), e.span))
            }
            SKind::Lambda(params, body) => self.lambda(params, body, e.span),
            SKind::Int(_)
            | SKind::Float(_)
            | SKind::Neg(_)
            | SKind::Bin(..)
            | SKind::Tuple(_)
            | SKind::Apply(..)
            | SKind::Let(..) => Err(self.err(e.span, "a function")),
        }
    }

    fn lambda(&mut self, params: &[SParam], body: &SExpr, span: Span) -> PResult<FunDecl> {
        let ps: Vec<Param> = params.iter().map(|p| self.fresh_param(&p.name, p.ty.clone(), p.span)).collect();
        let depth = self.scope.len();
        self.scope.extend(ps.iter().map(|p| (p.name.clone(), p.id)));
        let body = self.value(body);
        self.scope.truncate(depth);
        Ok(self.fun_decl(FunKind::Lambda(Lambda { params: ps, body: Box::new(body?) }), span))
    }

    /// A pattern application that must be a function.
    fn pattern_fun(&mut self, n: &str, name_span: Span, args: &[&SExpr], span: Span) -> PResult<FunDecl> {
        match self.pattern(n, name_span, args, span)? {
            Form::Fun(fd) => Ok(fd),
            Form::Value(_) => Err(self.err(span, "a function (this application already has its data)")),
        }
    }

    /// A copy of an earlier def as a lambda, with fresh ids throughout.
    fn copy_def(&mut self, i: usize, span: Span) -> FunDecl {
        let mut gen = IdGen::new(self.next_expr, self.next_param, self.next_fun);
        let fd = gen.def_as_lambda(&self.defs[i], span);
        (self.next_expr, self.next_param, self.next_fun) = (gen.next_expr, gen.next_param, gen.next_fun);
        fd
    }
}

pub fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
