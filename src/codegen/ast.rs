//! A small OpenCL C syntax tree: what the lowering produces and the
//! printer writes. Only the constructs the compiler emits exist here.

use crate::arith::ArithExpr;
use crate::ir::c::BinOp;

#[derive(Clone, Debug, PartialEq)]
pub enum CExpr {
    /// C text that needs no further structure (a literal, a name).
    Raw(String),
    /// An integer index expression.
    Arith(ArithExpr),
    /// `base[index]`.
    Index {
        base: String,
        index: ArithExpr,
    },
    Call {
        name: String,
        args: Vec<CExpr>,
    },
    /// `base.field`.
    Field {
        base: Box<CExpr>,
        field: String,
    },
    Ternary {
        cond: Box<CExpr>,
        then: Box<CExpr>,
        otherwise: Box<CExpr>,
    },
    /// The operators are the user-function language's (`ir::c::BinOp`).
    Binary {
        op: BinOp,
        lhs: Box<CExpr>,
        rhs: Box<CExpr>,
    },
    /// `(ty)e`.
    Cast {
        ty: String,
        e: Box<CExpr>,
    },
    /// `(ty){a, b}`.
    StructLit {
        ty: String,
        fields: Vec<CExpr>,
    },
}

impl CExpr {
    /// The expressions directly inside this one, in the order printed.
    pub fn children(&self) -> Vec<&CExpr> {
        match self {
            CExpr::Raw(_) | CExpr::Arith(_) | CExpr::Index { .. } => Vec::new(),
            CExpr::Call { args, .. } | CExpr::StructLit { fields: args, .. } => args.iter().collect(),
            CExpr::Field { base, .. } => vec![base],
            CExpr::Ternary { cond, then, otherwise } => vec![cond, then, otherwise],
            CExpr::Binary { lhs, rhs, .. } => vec![lhs, rhs],
            CExpr::Cast { e, .. } => vec![e],
        }
    }

    pub fn raw(s: impl Into<String>) -> CExpr {
        CExpr::Raw(s.into())
    }
    pub fn call(name: impl Into<String>, args: Vec<CExpr>) -> CExpr {
        CExpr::Call { name: name.into(), args }
    }
    pub fn binary(op: BinOp, lhs: CExpr, rhs: CExpr) -> CExpr {
        CExpr::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs) }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `[qualifier] ty name[[len]] [= init];`
    Decl {
        qualifier: Option<&'static str>,
        ty: String,
        name: String,
        len: Option<ArithExpr>,
        init: Option<CExpr>,
    },
    Assign {
        lhs: CExpr,
        rhs: CExpr,
    },
    Expr(CExpr),
    /// `for (int var = init; var < bound; var += step) body`
    For {
        var: String,
        init: CExpr,
        bound: CExpr,
        step: CExpr,
        body: Vec<Stmt>,
    },
    If {
        cond: CExpr,
        then: Vec<Stmt>,
        otherwise: Vec<Stmt>,
    },
    Block(Vec<Stmt>),
    Barrier {
        local: bool,
        global: bool,
    },
    Comment(String),
}

/// A kernel parameter: its C type (with qualifiers) and name.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub ty: String,
    pub name: String,
}

/// A complete OpenCL program: declarations, then one kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    /// Type definitions and functions, as C text, in order.
    pub preamble: Vec<String>,
    pub kernel_name: String,
    /// The work-group size the kernel must be launched with, when known
    /// when compiling: `reqd_work_group_size`, which lets the driver plan
    /// registers and barriers for exactly that many work-items.
    pub work_group_size: Option<[i64; 3]>,
    pub params: Vec<Param>,
    pub body: Vec<Stmt>,
}
