//! The grammar of user-function bodies (the tree of `ir::c::ast`), read
//! from the same token stream as the rest of the file. The text between
//! the braces is kept verbatim for the code generator; this parse feeds the
//! interpreter and the checks of `ir::c::check`, which catch mistakes early.

use super::error::PResult;
use super::grammar::Parser;
use super::lexer::Tok;
use crate::ir::c::{AssignOp, BinOp, CExpr, Stmt, UnOp};
use crate::types::{type_from_c_name, Type};

/// The C name of a type inside user-function bodies: `float`, `int4`, and
/// for tuples the struct `Tuple2_float_int` (fields `_0`, `_1`, ...).
/// `None` for arrays, which user functions never see.
pub fn c_type_name(ty: &Type) -> Option<String> {
    match ty {
        Type::Array(..) => None,
        other => Some(crate::types::c_type(other)),
    }
}

const STMT_EXPECTED: &str = "a statement";

impl Parser<'_> {
    /// Statements up to (not including) the closing `}`.
    pub fn c_block_items(&mut self) -> PResult<Vec<Stmt>> {
        let mut out = Vec::new();
        while !self.is_punct("}") {
            if self.peek().tok == Tok::Eof {
                return Err(self.error("`}` closing the function body"));
            }
            out.extend(self.c_stmt()?);
        }
        Ok(out)
    }

    fn c_type_here(&self) -> Option<Type> {
        match &self.peek().tok {
            Tok::Ident(n) => type_from_c_name(n),
            _ => None,
        }
    }

    /// One statement; a declaration of several variables yields several.
    fn c_stmt(&mut self) -> PResult<Vec<Stmt>> {
        self.enter()?;
        let r = self.c_stmt_inner();
        self.depth -= 1;
        r
    }

    fn c_stmt_inner(&mut self) -> PResult<Vec<Stmt>> {
        if self.eat_punct("{") {
            let body = self.c_block_items()?;
            self.expect_punct("}")?;
            return Ok(vec![Stmt::Block(body)]);
        }
        if self.eat_punct(";") {
            return Ok(vec![]);
        }
        if self.is_word("if") {
            self.bump();
            self.expect_punct("(")?;
            let cond = self.c_expr()?;
            self.expect_punct(")")?;
            let then = self.c_stmt()?;
            let otherwise = if self.is_word("else") {
                self.bump();
                self.c_stmt()?
            } else {
                vec![]
            };
            return Ok(vec![Stmt::If { cond, then, otherwise }]);
        }
        if self.is_word("for") {
            self.bump();
            self.expect_punct("(")?;
            let init = self.c_simple()?;
            self.expect_punct(";")?;
            let cond = self.c_expr()?;
            self.expect_punct(";")?;
            let step = self.c_simple()?;
            self.expect_punct(")")?;
            let body = self.c_stmt()?;
            let one = |mut v: Vec<Stmt>| if v.len() == 1 { v.swap_remove(0) } else { Stmt::Block(v) };
            return Ok(vec![Stmt::For { init: Box::new(one(init)), cond, step: Box::new(one(step)), body }]);
        }
        if self.is_word("return") {
            self.bump();
            let e = self.c_expr()?;
            self.expect_punct(";")?;
            return Ok(vec![Stmt::Return(e)]);
        }
        let s = self.c_simple()?;
        self.expect_punct(";")?;
        Ok(s)
    }

    /// A declaration, an assignment, `x++`/`x--` or an expression statement.
    fn c_simple(&mut self) -> PResult<Vec<Stmt>> {
        if self.is_word("const") {
            self.bump();
        }
        if let Some(ty) = self.c_type_here() {
            // `(float4)(...)` starts an expression; a type followed by a name declares.
            if matches!(self.peek_at(1).tok, Tok::Ident(_)) {
                self.bump();
                let mut out = Vec::new();
                loop {
                    let (name, _) = self.ident("a variable name")?;
                    let init = if self.eat_punct("=") { Some(self.c_expr()?) } else { None };
                    out.push(Stmt::decl(ty.clone(), name, init));
                    if !self.eat_punct(",") {
                        return Ok(out);
                    }
                }
            }
        }
        if self.is_punct(";") || self.is_punct(")") {
            return Err(self.error(STMT_EXPECTED));
        }
        let target = self.c_expr()?;
        let op = match &self.peek().tok {
            Tok::Punct("=") => Some(AssignOp::Set),
            Tok::Punct("+=") => Some(AssignOp::Add),
            Tok::Punct("-=") => Some(AssignOp::Sub),
            Tok::Punct("*=") => Some(AssignOp::Mul),
            Tok::Punct("/=") => Some(AssignOp::Div),
            Tok::Punct("++") => {
                self.bump();
                return Ok(vec![Stmt::Assign { target, op: AssignOp::Add, value: CExpr::Int(1) }]);
            }
            Tok::Punct("--") => {
                self.bump();
                return Ok(vec![Stmt::Assign { target, op: AssignOp::Sub, value: CExpr::Int(1) }]);
            }
            _ => None,
        };
        match op {
            Some(op) => {
                self.bump();
                let value = self.c_expr()?;
                Ok(vec![Stmt::Assign { target, op, value }])
            }
            None => Ok(vec![Stmt::Expr(target)]),
        }
    }

    pub fn c_expr(&mut self) -> PResult<CExpr> {
        self.enter()?;
        let r = self.c_expr_inner();
        self.depth -= 1;
        r
    }

    fn c_expr_inner(&mut self) -> PResult<CExpr> {
        let cond = self.c_binary(0)?;
        if self.eat_punct("?") {
            let a = self.c_expr()?;
            self.expect_punct(":")?;
            let b = self.c_expr()?;
            return Ok(CExpr::Ternary(Box::new(cond), Box::new(a), Box::new(b)));
        }
        Ok(cond)
    }

    /// Binary operators by precedence climbing; level 0 is `||`.
    fn c_binary(&mut self, level: usize) -> PResult<CExpr> {
        const LEVELS: [&[(&str, BinOp)]; 6] = [
            &[("||", BinOp::Or)],
            &[("&&", BinOp::And)],
            &[("==", BinOp::Eq), ("!=", BinOp::Ne)],
            &[("<=", BinOp::Le), (">=", BinOp::Ge), ("<", BinOp::Lt), (">", BinOp::Gt)],
            &[("+", BinOp::Add), ("-", BinOp::Sub)],
            &[("*", BinOp::Mul), ("/", BinOp::Div), ("%", BinOp::Rem)],
        ];
        let Some(ops) = LEVELS.get(level) else {
            return self.c_unary();
        };
        let mut acc = self.c_binary(level + 1)?;
        let base = self.chain;
        while let Some((_, op)) = ops.iter().find(|(p, _)| self.is_punct(p)) {
            self.chain_term()?;
            self.bump();
            let rhs = self.c_binary(level + 1)?;
            acc = CExpr::Binary(*op, Box::new(acc), Box::new(rhs));
        }
        self.chain = base;
        Ok(acc)
    }

    fn c_unary(&mut self) -> PResult<CExpr> {
        self.enter()?;
        let r = self.c_unary_inner();
        self.depth -= 1;
        r
    }

    fn c_unary_inner(&mut self) -> PResult<CExpr> {
        if self.eat_punct("-") {
            return Ok(CExpr::Unary(UnOp::Neg, Box::new(self.c_unary()?)));
        }
        if self.eat_punct("+") {
            return self.c_unary();
        }
        if self.eat_punct("!") {
            return Ok(CExpr::Unary(UnOp::Not, Box::new(self.c_unary()?)));
        }
        // A cast or a vector/tuple literal: `(` type `)`.
        if self.is_punct("(") {
            if let Tok::Ident(n) = &self.peek_at(1).tok {
                if let Some(ty) = type_from_c_name(n) {
                    if matches!(self.peek_at(2).tok, Tok::Punct(")")) {
                        self.bump();
                        self.bump();
                        self.bump();
                        return self.c_after_cast(ty);
                    }
                }
            }
        }
        self.c_postfix()
    }

    fn c_after_cast(&mut self, ty: Type) -> PResult<CExpr> {
        if matches!(ty, Type::Vector(..)) && self.is_punct("(") {
            self.bump();
            let args = self.c_args(")")?;
            return Ok(CExpr::VectorLit(ty, args));
        }
        if matches!(ty, Type::Tuple(_)) && self.eat_punct("{") {
            let args = self.c_args("}")?;
            return Ok(CExpr::TupleLit(ty, args));
        }
        Ok(CExpr::Cast(ty, Box::new(self.c_unary()?)))
    }

    /// Comma-separated expressions up to and including `close`.
    fn c_args(&mut self, close: &str) -> PResult<Vec<CExpr>> {
        let mut args = Vec::new();
        if !self.is_punct(close) {
            loop {
                args.push(self.c_expr()?);
                if !self.eat_punct(",") {
                    break;
                }
            }
        }
        self.expect_punct(close)?;
        Ok(args)
    }

    fn c_postfix(&mut self) -> PResult<CExpr> {
        let mut e = self.c_primary()?;
        loop {
            if self.eat_punct(".") {
                let t = self.peek().clone();
                let field = match &t.tok {
                    Tok::Ident(f) => f.clone(),
                    // `t._0` lexes as `.` then the identifier `_0`; `v.s0` likewise.
                    _ => return Err(self.error("a component or field name such as `x`, `s3` or `_0`")),
                };
                self.bump();
                e = CExpr::Field(Box::new(e), field);
            } else {
                return Ok(e);
            }
        }
    }

    fn c_primary(&mut self) -> PResult<CExpr> {
        let t = self.peek().clone();
        match &t.tok {
            Tok::Int(v) => {
                self.bump();
                Ok(CExpr::Int(*v))
            }
            Tok::Float(v) => {
                self.bump();
                let suffixed = self
                    .text
                    .get(t.span.start as usize..t.span.end as usize)
                    .is_some_and(|l| l.ends_with(['f', 'F']));
                Ok(if suffixed { CExpr::Float(*v) } else { CExpr::Double(*v) })
            }
            Tok::Ident(name) => {
                self.bump();
                if self.eat_punct("(") {
                    let args = self.c_args(")")?;
                    return Ok(CExpr::Call(name.clone(), args));
                }
                Ok(CExpr::Var(name.clone()))
            }
            Tok::Punct("(") => {
                self.bump();
                let e = self.c_expr()?;
                self.expect_punct(")")?;
                Ok(e)
            }
            _ => Err(self.error("a C expression")),
        }
    }
}
