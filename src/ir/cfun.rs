//! The C subset of user-function bodies.
//!
//! The code generator emits a user function's body as the text the user
//! wrote (it is valid OpenCL C); the interpreter evaluates this parsed form.
//! The subset: declarations, assignments (`=`, `+=`, `-=`, `*=`, `/=`),
//! `if`/`else`, `for`, `return`, blocks; expressions with C operators,
//! calls of OpenCL built-ins (`sqrt`, `rsqrt`, `fabs`, `exp`, `cos`, `sin`,
//! `min`, `max`, `fmin`, `fmax`, `mad`, `dot`, `floor`, `pow`, ...) and of
//! earlier user functions, casts, vector literals `(float4)(a, b, c, d)`,
//! component access `v.x` / `v.s0` and tuple fields `t._0`.

use crate::types::Type;

/// The OpenCL built-in functions a user-function body may call (the
/// interpreter implements each of them; the code generator emits calls
/// verbatim).
pub const BUILTINS: [&str; 66] = [
    "sqrt",
    "native_sqrt",
    "half_sqrt",
    "rsqrt",
    "native_rsqrt",
    "half_rsqrt",
    "fabs",
    "exp",
    "native_exp",
    "half_exp",
    "exp2",
    "native_exp2",
    "exp10",
    "log",
    "native_log",
    "log2",
    "native_log2",
    "log10",
    "cos",
    "native_cos",
    "sin",
    "native_sin",
    "tan",
    "native_tan",
    "acos",
    "asin",
    "atan",
    "cosh",
    "sinh",
    "tanh",
    "floor",
    "ceil",
    "round",
    "trunc",
    "native_recip",
    "half_recip",
    "cbrt",
    "sign",
    "pow",
    "powr",
    "native_powr",
    "pown",
    "fmin",
    "fmax",
    "fmod",
    "atan2",
    "hypot",
    "copysign",
    "native_divide",
    "half_divide",
    "step",
    "fdim",
    "min",
    "max",
    "abs",
    "clamp",
    "mad",
    "fma",
    "mix",
    "select",
    "dot",
    "length",
    "distance",
    "normalize",
    "cross",
    "fast_length",
];

/// Words of OpenCL C that a user function or its parameters may not be
/// named: the kernel is printed with these names verbatim, so `half` or
/// `global` as a name fails the OpenCL build (found by fuzzing).
pub const RESERVED_C: [&str; 56] = [
    "auto",
    "bool",
    "break",
    "case",
    "char",
    "const",
    "constant",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "global",
    "goto",
    "half",
    "if",
    "inline",
    "int",
    "kernel",
    "local",
    "long",
    "private",
    "read_only",
    "read_write",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "size_t",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "uchar",
    "uint",
    "ulong",
    "union",
    "unsigned",
    "ushort",
    "void",
    "volatile",
    "while",
    "write_only",
    "__global",
    "__local",
    "__private",
    "__constant",
    "__kernel",
    "barrier",
    "get_global_id",
];

/// Whether `name` is one of [`RESERVED_C`] or [`BUILTINS`].
pub fn is_reserved_c(name: &str) -> bool {
    RESERVED_C.contains(&name) || is_builtin(name)
}

/// Whether `name` is one of [`BUILTINS`].
pub fn is_builtin(name: &str) -> bool {
    BUILTINS.contains(&name)
}

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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
}

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

#[derive(Clone, Debug, PartialEq)]
pub enum CExpr {
    Int(i64),
    Float(f64),
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
}
