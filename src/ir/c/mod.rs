//! The C subset user functions are written in, in one place: its syntax
//! tree (`ast`), the names a user function may not take (`names`), the
//! OpenCL built-ins a body may call with their overload resolution
//! (`builtins`), the checks of a parsed body's names and types (`check`), the evaluation of a body on values (`eval`, the
//! built-ins' meanings in `eval_builtins`), the printer of a tree as
//! OpenCL C (`print`) and the vectorisation of a body for `floatn` lanes
//! (`vector`).
//!
//! It sits inside `ir` because a [`crate::ir::UserFun`] holds its parsed
//! body, and every layer above (the parser, the interpreter, the rewrite
//! rules, the code generator) reads that body through this module.

pub mod ast;
pub mod builtins;
pub mod check;
pub mod eval;
mod eval_builtins;
pub mod fault;
pub mod names;
pub mod print;
pub mod vector;

pub use ast::{AssignOp, BinOp, CExpr, CStmt, UnOp};
pub use builtins::is_builtin;
pub use names::{is_reserved_name, GENERATED_PREFIXES};
pub use print::body_text;
