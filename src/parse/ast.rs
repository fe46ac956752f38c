//! The surface syntax tree, before desugaring. It keeps composition, `$`,
//! partial application and names, which `desugar` resolves into the IR.

use crate::ir::Span;
use crate::types::Type;

#[derive(Clone, Debug)]
pub struct SExpr {
    pub kind: SKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum SKind {
    Name(String),
    Int(i64),
    Float(f64),
    Neg(Box<SExpr>),
    /// Integer arithmetic (`+ - * / %`), allowed in index functions and
    /// pattern parameters only; `op_span` locates the operator.
    Bin(char, Box<SExpr>, Box<SExpr>, Span),
    Call(Box<SExpr>, Vec<SExpr>),
    /// `f1 o f2 o ... o fn`.
    Compose(Vec<SExpr>),
    /// `f $ x`.
    Apply(Box<SExpr>, Box<SExpr>),
    Lambda(Vec<SParam>, Box<SExpr>),
    Tuple(Vec<SExpr>),
    /// `let x = value in body`.
    Let(SParam, Box<SExpr>, Box<SExpr>),
}

/// A parameter with an optional type annotation.
#[derive(Clone, Debug)]
pub struct SParam {
    pub name: String,
    pub ty: Option<Type>,
    pub span: Span,
}

/// A parsed `def`, before desugaring.
#[derive(Clone, Debug)]
pub struct SDef {
    pub name: String,
    pub name_span: Span,
    pub params: Vec<SParam>,
    pub body: SExpr,
    pub span: Span,
}

impl SExpr {
    pub fn new(kind: SKind, span: Span) -> SExpr {
        SExpr { kind, span }
    }
}
