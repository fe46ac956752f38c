//! The syntax tree of C: one tree of expressions (`CExpr`) and one of
//! statements (`Stmt`), for user-function bodies and generated kernels
//! alike.
//!
//! The parser builds a user function's body in it and the interpreter
//! evaluates it; the code generator builds its kernels in it (their
//! parameters and modules are in `kernel`) and emits a user function's
//! body as the text the user wrote (it is valid OpenCL C), never as a tree
//! inside the kernel's. Most forms are shared; a few only the generator
//! makes (marked "Kernel only" below: a body never holds them, and the
//! passes over bodies stop with [`CExpr::kernel_only`] or
//! [`Stmt::kernel_only`]), and two only the parser makes (`For` and
//! `Return`, marked "User only": the kernel passes stop with
//! [`Stmt::user_only`]). Keeping one tree keeps one printer and one set of
//! operators; marking the forms keeps each side's passes from guessing at
//! statements they never see. The subset of user functions: declarations,
//! assignments (`=`, `+=`, `-=`, `*=`, `/=`), `if`/`else`, `for`,
//! `return`, blocks; expressions with C operators, calls of OpenCL
//! built-ins (`sqrt`, `fabs`, `min`, `dot`, ...: the table of `builtins`,
//! with their signatures) and of earlier user functions, casts, vector
//! literals `(float4)(a, b, c, d)`, component access `v.x` / `v.s0` and
//! tuple fields `t._0`.

use crate::arith::{ArithExpr, CmpOp};
use crate::types::Type;

/// A C statement. Shared: `Decl` (whose qualifier, pointer and length are
/// the kernel's: a body's declarations have none), `Assign`, `If`, `Block`
/// and `Expr`.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `[qualifier] ty[*] name[[len]] [= init];`
    Decl {
        /// Kernel only: an address space (`local` arrays, pointers).
        qualifier: Option<&'static str>,
        /// The type of the variable, or of what it points to or holds
        /// elements of (an array type prints as its element's).
        ty: Type,
        /// Kernel only: a pointer to `ty` (the buffers `iterate` swaps).
        pointer: bool,
        name: String,
        /// Kernel only: an array of this many elements.
        len: Option<ArithExpr>,
        init: Option<CExpr>,
    },
    /// `target op value;` (the generator only sets: `AssignOp::Set`).
    Assign {
        target: CExpr,
        op: AssignOp,
        value: CExpr,
    },
    If {
        cond: CExpr,
        then: Vec<Stmt>,
        otherwise: Vec<Stmt>,
    },
    Block(Vec<Stmt>),
    Expr(CExpr),
    /// User only: `for (init; cond; step) body`.
    For {
        init: Box<Stmt>,
        cond: CExpr,
        step: Box<Stmt>,
        body: Vec<Stmt>,
    },
    /// User only: `return e;`.
    Return(CExpr),
    /// Kernel only: `for (int var = init; var < bound; var += step) body`,
    /// the one loop the generator writes; the passes over kernels read
    /// its index, start, bound and step without parsing a general `for`.
    CountedFor {
        var: String,
        init: CExpr,
        bound: CExpr,
        step: CExpr,
        body: Vec<Stmt>,
    },
    /// Kernel only: `barrier(...)` with the fences named.
    Barrier {
        local: bool,
        global: bool,
    },
    /// Kernel only: `// text`.
    Comment(String),
}

impl Stmt {
    /// A user-function declaration: no qualifier, pointer or length.
    pub fn decl(ty: Type, name: impl Into<String>, init: Option<CExpr>) -> Stmt {
        Stmt::Decl { qualifier: None, ty, pointer: false, name: name.into(), len: None, init }
    }

    /// `target = value;`, the only assignment the generator writes.
    pub fn set(target: CExpr, value: CExpr) -> Stmt {
        Stmt::Assign { target, op: AssignOp::Set, value }
    }

    /// The statement lists nested directly in this one (a block's, a
    /// loop's body, both branches of an `if`), for passes that walk a
    /// kernel's statements without caring which holds them.
    pub fn bodies_mut(&mut self) -> Vec<&mut Vec<Stmt>> {
        match self {
            Stmt::Block(b) | Stmt::CountedFor { body: b, .. } | Stmt::For { body: b, .. } => vec![b],
            Stmt::If { then, otherwise, .. } => vec![then, otherwise],
            Stmt::Decl { .. }
            | Stmt::Assign { .. }
            | Stmt::Expr(_)
            | Stmt::Return(_)
            | Stmt::Barrier { .. }
            | Stmt::Comment(_) => Vec::new(),
        }
    }

    /// The internal error of a user-function body holding a kernel-only
    /// statement (or a declaration with a kernel's qualifier, pointer or
    /// length): the parser never makes one, and the vectoriser copies only
    /// what it reads, so reaching this is a compiler bug.
    pub fn kernel_only(&self) -> ! {
        panic!("ICE: the kernel-only C statement {self:?} in a user-function body (only the code generator makes it)")
    }

    /// The internal error of a kernel holding a user-only statement: the
    /// generator writes no `return` and no loop but its counted one, and
    /// user functions reach a kernel as text, so reaching this is a
    /// compiler bug.
    pub fn user_only(&self) -> ! {
        panic!("ICE: the user-function C statement {self:?} in a generated kernel (the code generator makes no `return` and no general `for`)")
    }
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

    /// The operator as C writes it.
    pub fn text(self) -> &'static str {
        match self {
            AssignOp::Set => "=",
            AssignOp::Add => "+=",
            AssignOp::Sub => "-=",
            AssignOp::Mul => "*=",
            AssignOp::Div => "/=",
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
