//! The C this compiler reads and writes, in one place: the syntax tree of
//! C expressions and statements, of user-function bodies and generated
//! kernels alike (`ast`), the frame of a generated kernel (`kernel`), the
//! names a user function may not take (`names`), the OpenCL built-ins a
//! body may call with their overload resolution (`builtins`), the checks
//! of a parsed body's names and types (`check`), the evaluation of a body
//! on values (`eval`, the built-ins' meanings in `eval_builtins`), the one
//! printer of bodies and kernels as OpenCL C (`print`) and the
//! vectorisation of a body for `floatn` lanes (`vector`).
//!
//! It sits inside `ir` because a [`crate::ir::UserFun`] holds its parsed
//! body, and every layer above (the parser, the interpreter, the rewrite
//! rules, the code generator) reads that body through this module. The
//! code generator's kernels use the same tree, so C has one tree and one
//! printer; the few forms only one side makes are marked in `ast`, and the
//! other side's passes stop on them as internal errors. The parser of
//! bodies is not here but in `parse::cbody`: it is a method of the `.lift`
//! file parser, reading the same token stream with the same spans and
//! errors, and a body is parsed where its `userfun` declaration is.

pub mod ast;
pub mod builtins;
pub mod check;
pub mod eval;
mod eval_builtins;
pub mod fault;
pub mod kernel;
pub mod names;
pub mod ops;
pub mod print;
pub mod vector;

pub use ast::{AssignOp, BinOp, CExpr, Stmt, UnOp};
pub use builtins::is_builtin;
pub use names::{is_reserved_name, GENERATED_PREFIXES};
pub use print::body_text;
