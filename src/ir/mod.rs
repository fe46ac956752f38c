//! The Lift IR (CGO 2017, Section 4): expressions and function declarations.
//!
//! The IR is an owned tree of plain data. Every [`Expr`] and [`Param`]
//! carries an id that is unique within its [`Program`], and so does every
//! [`FunDecl`]; analyses key their
//! results (types, address spaces, memories, views) on these ids in side
//! tables and never modify the tree.
//!
//! * An expression is a literal, a parameter reference or a call of a
//!   function declaration with argument expressions.
//! * A function declaration is a lambda, a built-in [`Pattern`] or a
//!   [`UserFun`] (by index into [`Program::user_funs`]).
//!
//! The parser desugars composition `f o g` into `\p -> f(g(p))`, partial
//! application `split(128)` into the pattern itself (its data argument comes
//! from the call), and a call of an earlier `def` into a copy of its lambda
//! with fresh ids; so the IR has no composition and no `def` references.

pub mod build;
pub mod c;
pub mod equiv;
mod pattern;
pub mod span;
mod value;
pub mod visit;
pub mod visitor;

pub use build::IdGen;
pub(crate) use pattern::layout_pattern;
pub use pattern::{IndexFun, MapKind, PadMode, Pattern, PatternName, ReduceKind};
pub use span::{read_text, Location, ReadError, SourceFile, Span};
pub use value::Value;
pub use visit::Path;
pub use visitor::{MutVisitor, Visitor};

use crate::types::Type;

/// Identifies an [`Expr`] within a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExprId(pub u32);

/// Identifies a [`Param`] within a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ParamId(pub u32);

/// Identifies a [`FunDecl`] within a program; analyses key what they find
/// about a function (the length variable of an `iterate`) by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FunId(pub u32);

impl FunId {
    /// The id of a declaration a transformation has just built; the
    /// transformation renumbers its result (`build::renumber_funs`) before
    /// any analysis sees it, so ids stay unique in every analysed program.
    pub const FRESH: FunId = FunId(u32::MAX);
}

/// Index into [`Program::user_funs`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UserFunId(pub u32);

/// A parsed `.lift` file: user functions and top-level definitions.
#[derive(Clone, Debug, Default)]
pub struct Program {
    pub user_funs: Vec<UserFun>,
    pub defs: Vec<Def>,
    /// One past the largest [`ExprId`] in use.
    pub next_expr: u32,
    /// One past the largest [`ParamId`] in use.
    pub next_param: u32,
    /// One past the largest [`FunId`] in use.
    pub next_fun: u32,
}

impl Program {
    pub fn def(&self, name: &str) -> Option<&Def> {
        self.defs.iter().find(|d| d.name == name)
    }
    pub fn user_fun(&self, id: UserFunId) -> &UserFun {
        &self.user_funs[id.0 as usize]
    }
}

/// `def name(params) = body`: a kernel candidate. Parameters have declared
/// types; array parameters become kernel inputs, scalar ones kernel scalars.
#[derive(Clone, Debug)]
pub struct Def {
    pub name: String,
    pub params: Vec<Param>,
    pub body: Expr,
    pub span: Span,
}

/// A lambda or `def` parameter. `ty` is set for `def` parameters and for
/// annotated lambda parameters; otherwise type inference finds it.
#[derive(Clone, Debug)]
pub struct Param {
    pub id: ParamId,
    pub name: String,
    pub ty: Option<Type>,
    pub span: Span,
}

/// A user function: a C function over non-array values.
#[derive(Clone, Debug)]
pub struct UserFun {
    pub name: String,
    pub params: Vec<(String, Type)>,
    pub ret: Type,
    /// The body exactly as written between the braces; the code generator
    /// emits it verbatim.
    pub body_text: String,
    /// The body parsed, for the interpreter.
    pub body: Vec<c::Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub id: ExprId,
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    Literal(Literal),
    Param(ParamId),
    Call(Box<FunDecl>, Vec<Expr>),
}

/// A compile-time constant value.
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    Float(f32),
    Int(i32),
    Tuple(Vec<Literal>),
}

impl Literal {
    pub fn ty(&self) -> Type {
        match self {
            Literal::Float(_) => Type::FLOAT,
            Literal::Int(_) => Type::INT,
            Literal::Tuple(ls) => Type::Tuple(ls.iter().map(Literal::ty).collect()),
        }
    }
}

/// A function declaration: what a call calls.
#[derive(Clone, Debug)]
pub struct FunDecl {
    pub id: FunId,
    pub kind: FunKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum FunKind {
    Lambda(Lambda),
    Pattern(Pattern),
    UserFun(UserFunId),
}

/// `\(p1, ..., pn) -> body`: called with exactly n arguments (a reduction's
/// function `\(acc, x) -> ...` takes two).
#[derive(Clone, Debug)]
pub struct Lambda {
    pub params: Vec<Param>,
    pub body: Box<Expr>,
}
