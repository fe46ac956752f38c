//! The `.lift` front end: a hand-written lexer and recursive-descent parser
//! producing the IR of `crate::ir`.
//!
//! Files: `lexer` (tokens), `grammar` (expressions and `def`s into a surface
//! tree, `ast`), `types`, `cbody` (the grammar of user-function bodies; their
//! tree and checks are `ir::c`), `desugar` and `patterns` (surface tree into
//! IR), `pretty` (a printer whose output re-parses to the same program),
//! `load` (a file read and parsed, the one program loader).

mod ast;
mod cbody;
mod desugar;
mod error;
mod grammar;
mod lexer;
mod load;
mod patterns;
mod pretty;
mod types;

pub use crate::types::type_from_c_name;
pub use cbody::c_type_name;
pub use error::ParseError;
pub use load::{load_program, LoadError};
pub use pretty::{print_expr, print_expr_in, print_fun, print_fun_in, print_program};

use crate::ir::c::check::{NameCheck, ReturnCheck};
use crate::ir::c::Stmt;
use crate::types::named_type;
use crate::types::size_names;
use ast::SDef;
use desugar::Ctx;
use grammar::{Parser, KEYWORDS};
use lexer::Tok;

use crate::ir::{Def, Program, SourceFile, Span, UserFun};
use crate::types::Type;

/// Parses a whole `.lift` file into a program.
pub fn parse_program(file: &SourceFile) -> Result<Program, ParseError> {
    let toks = lexer::lex(&file.text)?;
    let mut p = Parser::new(&file.text, toks);
    let mut prog = Program::default();
    loop {
        if p.is_word("userfun") {
            let uf = p.user_fun(&prog)?;
            prog.user_funs.push(uf);
        } else if p.is_word("def") {
            let sd = p.def()?;
            check_new_name(&prog, &sd.name, sd.name_span, &file.text, true)?;
            let def = desugar_def(&mut prog, &sd, &file.text)?;
            prog.defs.push(def);
        } else if p.peek().tok == Tok::Eof {
            return Ok(prog);
        } else {
            return Err(p.error("`def`, `userfun` or the end of the file"));
        }
    }
}

/// What a name the kernel would get must be (`ir::c::is_reserved_name`).
const RESERVED_NAME: &str =
    "a name that is not an OpenCL C word or built-in, `out`, `lift_...`, `Tuple<n>...` or a generated name \
     such as `priv_0` or `gl_id_0` (reserved for generated code)";

/// Rejects a name already taken by a def, a user function, a pattern or a
/// type. A def may be named like a pattern (`def transpose(...)`): it is a
/// kernel name, and inside later defs the pattern keeps the name.
fn check_new_name(prog: &Program, name: &str, span: Span, src: &str, is_def: bool) -> Result<(), ParseError> {
    let taken = prog.defs.iter().any(|d| d.name == name)
        || prog.user_funs.iter().any(|u| u.name == name)
        || (!is_def && patterns::is_pattern(name))
        || named_type(name).is_some()
        || KEYWORDS.contains(&name)
        // The kernel of `def pow` would be the index helper `lift_pow` (compile.rs).
        || (is_def && matches!(name, "pow" | "log2"));
    if taken {
        return Err(ParseError::new(
            span,
            types::snippet(src, span),
            if is_def {
                "a name not already used by a def, user function or type"
            } else {
                "a name not already used by a def, user function, pattern or type"
            },
        ));
    }
    Ok(())
}

fn desugar_def(prog: &mut Program, sd: &SDef, src: &str) -> Result<Def, ParseError> {
    let mut sizes = Vec::new();
    for p in &sd.params {
        if let Some(t) = &p.ty {
            size_names(t, &mut sizes);
        }
    }
    let mut ctx = Ctx {
        src,
        next_expr: prog.next_expr,
        next_param: prog.next_param,
        next_fun: prog.next_fun,
        user_funs: &prog.user_funs,
        defs: &prog.defs,
        sizes,
        scope: Vec::new(),
    };
    let mut params = Vec::new();
    for sp in &sd.params {
        let mut names = vec![sp.name.clone()];
        if let Some(t) = &sp.ty {
            size_names(t, &mut names);
        }
        if let Some(bad) = names.into_iter().find(|n| crate::ir::c::is_reserved_name(n)) {
            return Err(ParseError::new(sp.span, bad, RESERVED_NAME));
        }
        if params.iter().any(|q: &crate::ir::Param| q.name == sp.name) || ctx.sizes.contains(&sp.name) {
            return Err(ctx.err(sp.span, "a parameter name not used by another parameter or size"));
        }
        let param = ctx.fresh_param(&sp.name, sp.ty.clone(), sp.span);
        ctx.scope.push((sp.name.clone(), param.id));
        params.push(param);
    }
    let body = ctx.value(&sd.body)?;
    check_size(&body, sd, src)?;
    let (ne, np, nf) = (ctx.next_expr, ctx.next_param, ctx.next_fun);
    prog.next_expr = ne;
    prog.next_param = np;
    prog.next_fun = nf;
    Ok(Def { name: sd.name.clone(), params, body, span: sd.span })
}

/// Most expressions one def may have once earlier defs are inlined.
pub const MAX_DEF_EXPRS: usize = 100_000;
/// Deepest expression tree of one def once earlier defs are inlined.
pub const MAX_DEF_DEPTH: usize = 4_000;

/// Bounds a desugared def, so that inlining (each call of an earlier def
/// copies its body: 20 defs each calling the previous twice make a million
/// copies) cannot exhaust memory, nor a deep tree the stack of the
/// recursive passes after parsing. Walks without recursion.
fn check_size(body: &crate::ir::Expr, sd: &SDef, src: &str) -> Result<(), ParseError> {
    use crate::ir::{ExprKind, FunKind};
    let mut stack = vec![(body, 1usize)];
    let mut count = 0usize;
    while let Some((e, d)) = stack.pop() {
        count += 1;
        let fail = |what: String| {
            ParseError::new(
                sd.name_span,
                types::snippet(src, sd.name_span),
                format!("a def of {what} (inlined calls of earlier defs included)"),
            )
        };
        if count > MAX_DEF_EXPRS {
            return Err(fail(format!("at most {MAX_DEF_EXPRS} expressions")));
        }
        if d > MAX_DEF_DEPTH {
            return Err(fail(format!("expressions nested at most {MAX_DEF_DEPTH} deep")));
        }
        if let ExprKind::Call(f, args) = &e.kind {
            stack.extend(args.iter().map(|a| (a, d + 1)));
            let mut f = &**f;
            let mut fd = d + 1;
            loop {
                match &f.kind {
                    FunKind::Lambda(l) => stack.push((&l.body, fd + 1)),
                    FunKind::Pattern(p) => {
                        if let Some(g) = p.nested_fun() {
                            f = g;
                            fd += 1;
                            continue;
                        }
                    }
                    FunKind::UserFun(_) => {}
                }
                break;
            }
        }
    }
    Ok(())
}

/// What the checks of a user function's body need to know of it.
struct BodyCheck<'b> {
    name: &'b str,
    name_span: Span,
    params: &'b [(String, Type)],
    ret: &'b Type,
    /// The index of the body's first token.
    first_tok: usize,
    /// The whole function.
    span: Span,
}

/// A bad assignment, `%`, condition or mix of vector types, at the
/// function's name.
fn function_type_error(b: &BodyCheck, rc: &mut ReturnCheck) -> Result<(), ParseError> {
    let (name, at) = (b.name, b.name_span);
    if let Some((target, ty, found)) = rc.bad_assign.take() {
        return Err(ParseError::new(
            at,
            format!("`{target}` assigned a {found} in `{name}`"),
            format!("a value of the type {ty} of `{target}` (OpenCL converts only scalars)"),
        ));
    }
    if let Some(t) = rc.bad_rem.take() {
        return Err(ParseError::new(
            at,
            format!("`%` on a {} in `{name}`", t.c_name()),
            "integer operands of `%` (fmod computes the remainder of floats)",
        ));
    }
    if let Some((t, what)) = rc.bad_cond.take() {
        return Err(ParseError::new(
            at,
            format!("a {t} as the condition of {what} in `{name}`"),
            "a scalar condition (OpenCL takes no vector here; select(a, b, c) chooses component-wise)",
        ));
    }
    if let Some((a, b)) = rc.bad_mix.take() {
        return Err(ParseError::new(
            at,
            format!("an operation on a {a} and a {b} in `{name}`"),
            "operands of one vector type (OpenCL converts only scalars to vectors)",
        ));
    }
    if let Some((v, x)) = rc.bad_rank.take() {
        return Err(ParseError::new(
            at,
            format!("an operation on a {v} and a {} in `{name}`", x.c_name()),
            "a scalar of no greater rank than the vector's elements (OpenCL C converts a scalar to a \
             vector only then: write `1.0f`, not `1.0`, beside a float vector)",
        ));
    }
    Ok(())
}

impl Parser<'_> {
    /// `userfun name(a: T, ...): R { C body }`.
    fn user_fun(&mut self, prog: &Program) -> Result<UserFun, ParseError> {
        let start = self.expect_word("userfun")?;
        let (name, name_span) = self.ident("a name for the user function")?;
        check_new_name(prog, &name, name_span, self.text, false)?;
        if crate::ir::c::is_reserved_name(&name) {
            return Err(ParseError::new(name_span, name, RESERVED_NAME));
        }
        let params = self.user_fun_params()?;
        self.expect_punct(":")?;
        let ret = self.scalar_like_type()?;
        let open = self.expect_punct("{")?;
        let first_tok = self.pos;
        let body = self.c_block_items()?;
        let close = self.expect_punct("}")?;
        let body_text = self.text.get(open.end as usize..close.start as usize).unwrap_or("").to_string();
        let span = start.to(close);
        let b = BodyCheck { name: &name, name_span, params: &params, ret: &ret, first_tok, span };
        self.check_body_names(prog, &b, &body)?;
        self.check_body_types(prog, &b, &body)?;
        Ok(UserFun { name, params, ret, body_text, body, span })
    }

    /// `(a: T, ...)`: distinct names, none reserved.
    fn user_fun_params(&mut self) -> Result<Vec<(String, Type)>, ParseError> {
        self.expect_punct("(")?;
        let mut params: Vec<(String, Type)> = Vec::new();
        if !self.is_punct(")") {
            loop {
                let (pname, pspan) = self.ident("a parameter name")?;
                if params.iter().any(|(n, _)| *n == pname) {
                    return Err(ParseError::new(pspan, pname, "a parameter name not used twice"));
                }
                if crate::ir::c::is_reserved_name(&pname) {
                    return Err(ParseError::new(pspan, pname, RESERVED_NAME));
                }
                self.expect_punct(":")?;
                params.push((pname, self.scalar_like_type()?));
                if !self.eat_punct(",") {
                    break;
                }
            }
        }
        self.expect_punct(")")?;
        Ok(params)
    }

    /// The tokens of the body just parsed (errors point at one of them).
    fn body_tokens(&self, b: &BodyCheck) -> &[lexer::Token] {
        &self.toks[b.first_tok..self.pos]
    }

    /// The span of the first identifier `name` of the body, else the
    /// whole function's.
    fn body_ident(&self, b: &BodyCheck, name: &str) -> Span {
        self.body_tokens(b)
            .iter()
            .find(|t| matches!(&t.tok, Tok::Ident(s) if *s == name))
            .map_or(b.span, |t| t.span)
    }

    /// Names used in the body must be parameters, locals, built-ins or
    /// earlier user functions.
    fn check_body_names(&self, prog: &Program, b: &BodyCheck, body: &[Stmt]) -> Result<(), ParseError> {
        let callable = |n: &str| crate::ir::c::is_builtin(n) || prog.user_funs.iter().any(|u| u.name == n);
        let mut check = NameCheck {
            scopes: vec![b.params.iter().map(|(n, _)| n.clone()).collect()],
            is_callable: &callable,
        };
        check.stmts(body).map_err(|e| {
            // Point at the first use of the offending name in the body.
            let hit = self.body_tokens(b).iter().find(|t| matches!(&t.tok, Tok::Ident(s) if *s == e.found));
            ParseError::new(hit.map_or(b.span, |t| t.span), e.found, e.expected)
        })
    }

    /// The body's types as OpenCL takes them: the first problem found, in
    /// the order below, is the error.
    fn check_body_types(&self, prog: &Program, b: &BodyCheck, body: &[Stmt]) -> Result<(), ParseError> {
        let user_fun = |n: &str| {
            let u = prog.user_funs.iter().find(|u| u.name == n)?;
            Some((u.params.iter().map(|(_, t)| t.clone()).collect(), u.ret.clone()))
        };
        let mut rc = ReturnCheck {
            ret: b.ret,
            scopes: vec![b.params.to_vec()],
            user_fun: &user_fun,
            returns: 0,
            bad_literal: None,
            bad_mix: None,
            bad_rank: None,
            bad_decl: None,
            bad_assign: None,
            bad_rem: None,
            bad_cond: None,
            bad_call: None,
            calls: Vec::new(),
        };
        let returns = rc.stmts(body);
        self.located_type_error(b, &mut rc)?;
        function_type_error(b, &mut rc)?;
        if let Err((k, found)) = returns {
            // The k-th `return` token of the body, in source order.
            let tok = self
                .body_tokens(b)
                .iter()
                .filter(|t| matches!(&t.tok, Tok::Ident(s) if s == "return"))
                .nth(k)
                .map_or(b.span, |t| t.span);
            return Err(ParseError::new(
                tok,
                format!("return of a {found}"),
                format!("a value of the declared result type {} of `{}`", b.ret, b.name),
            ));
        }
        Ok(())
    }

    /// A bad call, vector literal or declaration, at its token in the body.
    fn located_type_error(&self, b: &BodyCheck, rc: &mut ReturnCheck) -> Result<(), ParseError> {
        if let Some(bad) = rc.bad_call.take() {
            // The nth `name(` of the body, in source order.
            let tok = self
                .body_tokens(b)
                .windows(2)
                .filter(|w| {
                    matches!(&w[0].tok, Tok::Ident(s) if *s == bad.name) && w[1].tok == Tok::Punct("(")
                })
                .nth(bad.nth)
                .map_or(b.span, |w| w[0].span);
            return Err(ParseError::new(tok, bad.found, bad.expected));
        }
        if let Some((lit, found)) = rc.bad_literal.take() {
            // The literal's type name, `(float4)`, in the body.
            let name = crate::types::c_type(&lit);
            return Err(ParseError::new(
                self.body_ident(b, &name),
                format!("({name})(...) with {found}"),
                format!("a literal of type {name}: one scalar, or components adding up to its width"),
            ));
        }
        if let Some((var, ty, found)) = rc.bad_decl.take() {
            return Err(ParseError::new(
                self.body_ident(b, &var),
                format!("`{var}` initialised with a {found}"),
                format!("a value of the declared type {ty} of `{var}`"),
            ));
        }
        Ok(())
    }

    /// A parameter or result type of a user function: anything but an array.
    fn scalar_like_type(&mut self) -> Result<Type, ParseError> {
        let start = self.peek().span;
        let ty = self.ty()?;
        if matches!(ty, Type::Array(..))
            || matches!(&ty, Type::Tuple(ts) if ts.iter().any(|t| matches!(t, Type::Array(..))))
        {
            let span = Span::new(start.start as usize, self.prev_end() as usize);
            return Err(ParseError::new(
                span,
                types::snippet(self.text, span),
                "a scalar, vector or tuple type (user functions take no arrays)",
            ));
        }
        Ok(ty)
    }
}
