//! Recursive-descent parser of the Lift expression language into the
//! surface tree. Precedence, lowest first: `$` (right-associative), `o`/`∘`,
//! `+ -`, `* / %`, unary `-`, calls `f(args)`. Lambdas and `let` extend as
//! far to the right as possible.

use super::ast::{SDef, SExpr, SKind, SParam};
use super::error::{PResult, ParseError};
use super::lexer::{describe, Tok, Token};
use crate::ir::Span;

/// Words that cannot be used as names.
pub const KEYWORDS: [&str; 5] = ["def", "userfun", "let", "in", "o"];

/// A cursor over the token stream of one file.
pub struct Parser<'a> {
    pub text: &'a str,
    pub toks: Vec<Token>,
    pub pos: usize,
    /// Current nesting of `expr`/`c_expr`, bounded so that hostile input
    /// cannot overflow the stack (here or in the recursive passes after).
    pub depth: usize,
    /// Chained terms (`f o g o ...`, `a + b + ...`) on the current path:
    /// each adds a level to the trees later passes walk recursively.
    pub chain: usize,
}

/// Deepest expression nesting accepted.
pub const MAX_DEPTH: usize = 100;

/// Most chained terms on one path of an expression tree.
pub const MAX_CHAIN: usize = 1000;

impl<'a> Parser<'a> {
    pub fn new(text: &'a str, toks: Vec<Token>) -> Parser<'a> {
        Parser { text, toks, pos: 0, depth: 0, chain: 0 }
    }

    pub fn peek(&self) -> &Token {
        // `lex` always ends the stream with `Eof`, and `bump` never moves past it.
        &self.toks[self.pos.min(self.toks.len() - 1)]
    }
    pub fn peek_at(&self, k: usize) -> &Token {
        &self.toks[(self.pos + k).min(self.toks.len() - 1)]
    }
    pub fn bump(&mut self) -> Token {
        let t = self.peek().clone();
        if t.tok != Tok::Eof {
            self.pos += 1;
        }
        t
    }
    pub fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek().tok, Tok::Punct(q) if q == p)
    }
    pub fn is_word(&self, w: &str) -> bool {
        matches!(&self.peek().tok, Tok::Ident(s) if s == w)
    }
    pub fn eat_punct(&mut self, p: &str) -> bool {
        let yes = self.is_punct(p);
        if yes {
            self.bump();
        }
        yes
    }
    /// An error at the current token.
    pub fn error(&self, expected: impl Into<String>) -> ParseError {
        let t = self.peek();
        ParseError::new(t.span, describe(t, self.text), expected)
    }
    pub fn expect_punct(&mut self, p: &str) -> PResult<Span> {
        if self.is_punct(p) {
            Ok(self.bump().span)
        } else {
            Err(self.error(format!("`{p}`")))
        }
    }
    pub fn expect_word(&mut self, w: &str) -> PResult<Span> {
        if self.is_word(w) {
            Ok(self.bump().span)
        } else {
            Err(self.error(format!("`{w}`")))
        }
    }
    /// A name that is not a keyword.
    pub fn ident(&mut self, what: &str) -> PResult<(String, Span)> {
        match &self.peek().tok {
            Tok::Ident(s) if !KEYWORDS.contains(&s.as_str()) => {
                let s = s.clone();
                Ok((s, self.bump().span))
            }
            _ => Err(self.error(what.to_string())),
        }
    }
    pub fn prev_end(&self) -> u32 {
        if self.pos == 0 {
            0
        } else {
            self.toks[self.pos - 1].span.end
        }
    }

    /// `def name(p: T, ...) = expr`; the `def` keyword is current.
    pub fn def(&mut self) -> PResult<SDef> {
        let start = self.expect_word("def")?;
        let (name, name_span) = self.ident("a name for the `def`")?;
        self.expect_punct("(")?;
        let mut params = Vec::new();
        if !self.is_punct(")") {
            loop {
                let (pname, pspan) = self.ident("a parameter name")?;
                self.expect_punct(":")?;
                let ty = self.ty()?;
                params.push(SParam { name: pname, ty: Some(ty), span: pspan });
                if !self.eat_punct(",") {
                    break;
                }
            }
        }
        self.expect_punct(")")?;
        self.expect_punct("=")?;
        let body = self.expr()?;
        let span = start.to(body.span);
        Ok(SDef { name, name_span, params, body, span })
    }

    /// The lowest level: `f $ x`, right-associative.
    pub fn expr(&mut self) -> PResult<SExpr> {
        self.enter()?;
        let r = self.expr_inner();
        self.depth -= 1;
        r
    }

    /// Counts one level of nesting, failing beyond [`MAX_DEPTH`].
    pub fn enter(&mut self) -> PResult<()> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error(format!("at most {MAX_DEPTH} levels of nested expressions")));
        }
        self.depth += 1;
        Ok(())
    }

    /// Counts one more chained term, failing beyond [`MAX_CHAIN`]; the
    /// caller restores `chain` when its chain ends.
    pub fn chain_term(&mut self) -> PResult<()> {
        if self.chain >= MAX_CHAIN {
            return Err(self.error(format!(
                "at most {MAX_CHAIN} chained terms (`o`, `+`, `*`, ...) along one path of an expression"
            )));
        }
        self.chain += 1;
        Ok(())
    }

    fn expr_inner(&mut self) -> PResult<SExpr> {
        let f = self.compose()?;
        if self.eat_punct("$") {
            let x = self.expr()?;
            let span = f.span.to(x.span);
            return Ok(SExpr::new(SKind::Apply(Box::new(f), Box::new(x)), span));
        }
        Ok(f)
    }

    fn compose(&mut self) -> PResult<SExpr> {
        let first = self.sum()?;
        if !self.is_word("o") {
            return Ok(first);
        }
        let mut parts = vec![first];
        let base = self.chain;
        while self.is_word("o") {
            self.chain_term()?;
            self.bump();
            parts.push(self.sum()?);
        }
        self.chain = base;
        let span = parts[0].span.to(parts[parts.len() - 1].span);
        Ok(SExpr::new(SKind::Compose(parts), span))
    }

    pub(super) fn sum(&mut self) -> PResult<SExpr> {
        let mut acc = self.product()?;
        let base = self.chain;
        while let Some(op) = ['+', '-'].into_iter().find(|c| self.is_punct(&c.to_string())) {
            self.chain_term()?;
            let op_span = self.bump().span;
            let rhs = self.product()?;
            let span = acc.span.to(rhs.span);
            acc = SExpr::new(SKind::Bin(op, Box::new(acc), Box::new(rhs), op_span), span);
        }
        self.chain = base;
        Ok(acc)
    }

    fn product(&mut self) -> PResult<SExpr> {
        let mut acc = self.unary()?;
        let base = self.chain;
        while let Some(op) = ['*', '/', '%'].into_iter().find(|c| self.is_punct(&c.to_string())) {
            self.chain_term()?;
            let op_span = self.bump().span;
            let rhs = self.unary()?;
            let span = acc.span.to(rhs.span);
            acc = SExpr::new(SKind::Bin(op, Box::new(acc), Box::new(rhs), op_span), span);
        }
        self.chain = base;
        Ok(acc)
    }

    fn unary(&mut self) -> PResult<SExpr> {
        if self.is_punct("-") {
            let start = self.bump().span;
            self.enter()?;
            let e = self.unary();
            self.depth -= 1;
            let e = e?;
            let span = start.to(e.span);
            return Ok(SExpr::new(SKind::Neg(Box::new(e)), span));
        }
        self.postfix()
    }

    fn postfix(&mut self) -> PResult<SExpr> {
        let mut e = self.primary()?;
        while self.is_punct("(") {
            self.bump();
            let args = self.comma_list(")")?;
            let end = self.expect_punct(")")?;
            let span = e.span.to(end);
            e = SExpr::new(SKind::Call(Box::new(e), args), span);
        }
        Ok(e)
    }

    /// Zero or more expressions separated by commas, up to `close` (not eaten).
    fn comma_list(&mut self, close: &str) -> PResult<Vec<SExpr>> {
        let mut out = Vec::new();
        if self.is_punct(close) {
            return Ok(out);
        }
        loop {
            out.push(self.expr()?);
            if !self.eat_punct(",") {
                return Ok(out);
            }
        }
    }

    fn primary(&mut self) -> PResult<SExpr> {
        let t = self.peek().clone();
        match &t.tok {
            Tok::Int(v) => {
                self.bump();
                Ok(SExpr::new(SKind::Int(*v), t.span))
            }
            Tok::Float(v) => {
                self.bump();
                Ok(SExpr::new(SKind::Float(*v), t.span))
            }
            Tok::Ident(w) if w == "let" => self.let_expr(),
            Tok::Ident(w) if !KEYWORDS.contains(&w.as_str()) => {
                self.bump();
                Ok(SExpr::new(SKind::Name(w.clone()), t.span))
            }
            Tok::Punct("\\") => self.lambda(),
            Tok::Punct("(") => {
                self.bump();
                let mut items = self.comma_list(")")?;
                let end = self.expect_punct(")")?;
                let span = t.span.to(end);
                if items.len() >= 2 {
                    return Ok(SExpr::new(SKind::Tuple(items), span));
                }
                match items.pop() {
                    Some(mut e) => {
                        e.span = span;
                        Ok(e)
                    }
                    None => Err(ParseError::new(span, "()", "an expression")),
                }
            }
            _ => Err(self.error("an expression")),
        }
    }

    fn lambda(&mut self) -> PResult<SExpr> {
        let start = self.expect_punct("\\")?;
        let mut params = Vec::new();
        if self.eat_punct("(") {
            loop {
                params.push(self.lambda_param()?);
                if !self.eat_punct(",") {
                    break;
                }
            }
            self.expect_punct(")")?;
        } else {
            params.push(self.lambda_param()?);
        }
        self.expect_punct("->")?;
        let body = self.expr()?;
        let span = start.to(body.span);
        Ok(SExpr::new(SKind::Lambda(params, Box::new(body)), span))
    }

    fn lambda_param(&mut self) -> PResult<SParam> {
        let (name, span) = self.ident("a parameter name")?;
        let ty = if self.eat_punct(":") { Some(self.ty()?) } else { None };
        Ok(SParam { name, ty, span })
    }

    fn let_expr(&mut self) -> PResult<SExpr> {
        let start = self.expect_word("let")?;
        let (name, pspan) = self.ident("a name to bind")?;
        self.expect_punct("=")?;
        let value = self.expr()?;
        self.expect_word("in")?;
        let body = self.expr()?;
        let span = start.to(body.span);
        let p = SParam { name, ty: None, span: pspan };
        Ok(SExpr::new(SKind::Let(p, Box::new(value), Box::new(body)), span))
    }
}
