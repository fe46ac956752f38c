//! The syntax tree of C expressions, and of user-function bodies.
//!
//! One expression tree serves both the user functions and the kernels the
//! code generator builds (its statements, parameters and modules are in
//! `kernel`). The code generator emits a user function's body as the text
//! the user wrote (it is valid OpenCL C); the interpreter evaluates this
//! parsed form. The subset of user functions: declarations, assignments (`=`, `+=`, `-=`, `*=`, `/=`),
//! `if`/`else`, `for`, `return`, blocks; expressions with C operators,
//! calls of OpenCL built-ins (`sqrt`, `fabs`, `min`, `dot`, ...: the table
//! of `builtins`, with their signatures) and of
//! earlier user functions, casts, vector literals `(float4)(a, b, c, d)`,
//! component access `v.x` / `v.s0` and tuple fields `t._0`.

use crate::arith::{ArithExpr, CmpOp};
use crate::types::Type;

#[derive(Clone, Debug, PartialEq)]
pub enum CStmt {
    Decl { ty: Type, name: String, init: Option<CExpr> },
    Assign { target: CExpr, op: AssignOp, value: CExpr },
    If { cond: CExpr, then: Vec<CStmt>, otherwise: Vec<CStmt> },
    For { init: Box<CStmt>, cond: CExpr, step: Box<CStmt>, body: Vec<CStmt> },
    Return(CExpr),
    Block(Vec<CStmt>),
    Expr(CExpr),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AssignOp {
    Set,
    Add,
    Sub,
    Mul,
    Div,
}

impl AssignOp {
    /// The operator of a compound assignment (`x op= v` is `x = x op v`).
    pub fn binary(self) -> Option<BinOp> {
        match self {
            AssignOp::Set => None,
            AssignOp::Add => Some(BinOp::Add),
            AssignOp::Sub => Some(BinOp::Sub),
            AssignOp::Mul => Some(BinOp::Mul),
            AssignOp::Div => Some(BinOp::Div),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
}

/// A binary operator of C, in user-function bodies and in generated
/// kernels alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Or,
}

/// A C expression. The forms before `Raw` are the user-function language's
/// (the parser makes them, the checker, the interpreter and the vectoriser
/// read them); the code generator uses them too, and adds the last three,
/// which only it makes: a body never holds them.
#[derive(Clone, Debug, PartialEq)]
pub enum CExpr {
    Int(i64),
    /// A literal with an `f` suffix: a `float`.
    Float(f64),
    /// A literal without one (`1.0`): a `double` to OpenCL, which matters
    /// for overloads (`fmax(x, 1.0)` of a float `x` is ambiguous); the
    /// interpreter computes it in f32.
    Double(f64),
    Var(String),
    /// `e.name`: a vector component (`x`, `s3`, `xy`) or a tuple field (`_0`).
    Field(Box<CExpr>, String),
    Unary(UnOp, Box<CExpr>),
    Binary(BinOp, Box<CExpr>, Box<CExpr>),
    Ternary(Box<CExpr>, Box<CExpr>, Box<CExpr>),
    Call(String, Vec<CExpr>),
    Cast(Type, Box<CExpr>),
    /// `(float4)(a, b, c, d)` or `(float4)(a)` (broadcast).
    VectorLit(Type, Vec<CExpr>),
    /// `(T){a, b}`: a tuple (struct) literal.
    TupleLit(Type, Vec<CExpr>),
    /// Kernel only: C text that needs no further structure (a literal, a
    /// name, a call the generator wrote out).
    Raw(String),
    /// Kernel only: an integer index expression.
    Arith(ArithExpr),
    /// Kernel only: `base[index]`.
    Index(String, ArithExpr),
}

impl CExpr {
    pub fn raw(s: impl Into<String>) -> CExpr {
        CExpr::Raw(s.into())
    }
    pub fn call(name: impl Into<String>, args: Vec<CExpr>) -> CExpr {
        CExpr::Call(name.into(), args)
    }
    pub fn binary(op: BinOp, lhs: CExpr, rhs: CExpr) -> CExpr {
        CExpr::Binary(op, Box::new(lhs), Box::new(rhs))
    }
    pub fn ternary(cond: CExpr, then: CExpr, otherwise: CExpr) -> CExpr {
        CExpr::Ternary(Box::new(cond), Box::new(then), Box::new(otherwise))
    }
    pub fn field(base: CExpr, field: impl Into<String>) -> CExpr {
        CExpr::Field(Box::new(base), field.into())
    }

    /// The expressions directly inside this one, in the order printed.
    pub fn children(&self) -> Vec<&CExpr> {
        match self {
            CExpr::Int(_)
            | CExpr::Float(_)
            | CExpr::Double(_)
            | CExpr::Var(_)
            | CExpr::Raw(_)
            | CExpr::Arith(_)
            | CExpr::Index(..) => Vec::new(),
            CExpr::Call(_, args) | CExpr::VectorLit(_, args) | CExpr::TupleLit(_, args) => {
                args.iter().collect()
            }
            CExpr::Field(base, _) | CExpr::Unary(_, base) | CExpr::Cast(_, base) => vec![base],
            CExpr::Ternary(c, a, b) => vec![c, a, b],
            CExpr::Binary(_, a, b) => vec![a, b],
        }
    }

    /// Calls `f` on this expression and on every expression inside it,
    /// each before its parts, in the order printed: for the passes that
    /// look for some forms wherever they are (names, index expressions).
    pub fn walk<'a>(&'a self, f: &mut dyn FnMut(&'a CExpr)) {
        f(self);
        for c in self.children() {
            c.walk(f);
        }
    }

    /// The internal error of a user-function body holding a kernel-only
    /// form: the parser never makes one, and the vectoriser copies only
    /// what it reads, so reaching this is a compiler bug.
    pub fn kernel_only(&self) -> ! {
        panic!("ICE: the kernel-only C expression {self:?} in a user-function body (only the code generator makes it)")
    }
}

impl BinOp {
    /// The operator as C writes it.
    pub fn text(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }
}

impl From<CmpOp> for BinOp {
    fn from(c: CmpOp) -> BinOp {
        match c {
            CmpOp::Lt => BinOp::Lt,
            CmpOp::Le => BinOp::Le,
            CmpOp::Gt => BinOp::Gt,
            CmpOp::Ge => BinOp::Ge,
            CmpOp::Eq => BinOp::Eq,
            CmpOp::Ne => BinOp::Ne,
        }
    }
}
