//! The statements and the module of a generated kernel: what the code
//! generator's lowering produces and `print::Writer` writes. Their
//! expressions are the one C expression tree (`ast::CExpr`). Only the
//! constructs the compiler emits exist here; a user-function body has its
//! own statements (`ast::CStmt`), which are the user language's.

use super::ast::CExpr;
use crate::arith::ArithExpr;

/// The alignment of every local array (`print` declares it): vectors of
/// up to this many bytes in local memory are read and written through a
/// cast pointer (`codegen::lower::access::through_cast`).
pub const LOCAL_ALIGN_BYTES: u32 = 16;

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
