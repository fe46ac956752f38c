//! Types (`float`, `int4`, `(float, int)`, `[[float]M]N`, `[float](N/128)`)
//! and the conversion of surface integer expressions into `ArithExpr`s.

use super::ast::{SExpr, SKind};
use super::error::{PResult, ParseError};
use super::grammar::Parser;
use super::lexer::Tok;
use crate::arith::ArithExpr;
use crate::ir::Span;
use crate::types::{named_type, Type};

const TYPE_EXPECTED: &str = "a type such as `float`, `int4`, `(float, int)` or `[float]N`";

impl Parser<'_> {
    pub fn ty(&mut self) -> PResult<Type> {
        self.enter()?;
        let r = self.ty_inner();
        self.depth -= 1;
        r
    }

    fn ty_inner(&mut self) -> PResult<Type> {
        let t = self.peek().clone();
        match &t.tok {
            Tok::Ident(name) => match named_type(name) {
                Some(ty) => {
                    self.bump();
                    Ok(ty)
                }
                None => Err(self.error(TYPE_EXPECTED)),
            },
            Tok::Punct("[") => {
                self.bump();
                let elem = self.ty()?;
                self.expect_punct("]")?;
                let len = self.length()?;
                Ok(Type::array(elem, len))
            }
            Tok::Punct("(") => {
                self.bump();
                let mut items = vec![self.ty()?];
                while self.eat_punct(",") {
                    items.push(self.ty()?);
                }
                self.expect_punct(")")?;
                if items.len() == 1 {
                    Ok(items.swap_remove(0))
                } else {
                    Ok(Type::Tuple(items))
                }
            }
            _ => Err(self.error(TYPE_EXPECTED)),
        }
    }

    /// An array length: an integer, a size name, or a parenthesised integer
    /// expression over sizes. Division in a length asserts exactness.
    fn length(&mut self) -> PResult<ArithExpr> {
        let t = self.peek().clone();
        match &t.tok {
            Tok::Int(v) if *v >= 1 => {
                self.bump();
                Ok(ArithExpr::Cst(*v))
            }
            Tok::Ident(name) if named_type(name).is_none() => {
                let (name, _) = self.ident("an array length")?;
                Ok(ArithExpr::size(&name))
            }
            Tok::Punct("(") => {
                self.bump();
                let e = self.sum()?;
                self.expect_punct(")")?;
                to_arith(self.text, &e, true, &mut |name, _| Ok(ArithExpr::size(name)))
            }
            _ => Err(self.error("an array length (a positive integer, a size name or `(expression)`)")),
        }
    }
}

/// Converts surface integer arithmetic to an `ArithExpr`; `resolve` turns
/// names into variables (or rejects them). `exact` makes `/` an exact
/// division, as in array lengths.
pub fn to_arith(
    src: &str,
    e: &SExpr,
    exact: bool,
    resolve: &mut dyn FnMut(&str, Span) -> PResult<ArithExpr>,
) -> PResult<ArithExpr> {
    match &e.kind {
        SKind::Int(v) => Ok(ArithExpr::Cst(*v)),
        SKind::Name(n) => resolve(n, e.span),
        SKind::Neg(inner) => match &inner.kind {
            // Fold `-3` to a constant so that printing and re-parsing agree.
            SKind::Int(v) => Ok(ArithExpr::Cst(-*v)),
            _ => Ok(ArithExpr::mul(ArithExpr::Cst(-1), to_arith(src, inner, exact, resolve)?)),
        },
        SKind::Bin(op, a, b, op_span) => {
            let a = to_arith(src, a, exact, resolve)?;
            let b = to_arith(src, b, exact, resolve)?;
            Ok(match op {
                '+' => ArithExpr::add(a, b),
                '-' => ArithExpr::sub(a, b),
                '*' => ArithExpr::mul(a, b),
                '/' if exact => ArithExpr::exact_div(a, b),
                '/' => ArithExpr::div(a, b),
                '%' => ArithExpr::modulo(a, b),
                other => {
                    return Err(ParseError::new(*op_span, other.to_string(), "`+`, `-`, `*`, `/` or `%`"))
                }
            })
        }
        SKind::Float(_)
        | SKind::Call(..)
        | SKind::Compose(_)
        | SKind::Apply(..)
        | SKind::Lambda(..)
        | SKind::Tuple(_)
        | SKind::Let(..) => {
            Err(ParseError::new(e.span, snippet(src, e.span), "integer arithmetic over sizes"))
        }
    }
}

/// The source text of a span, cut to its first line, for error messages.
pub fn snippet(src: &str, span: Span) -> String {
    let s = src.get(span.start as usize..span.end as usize).unwrap_or("");
    s.split('\n').next().unwrap_or("").to_string()
}
