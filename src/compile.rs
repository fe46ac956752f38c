//! The compiler's entry point: from a parsed program and a `def` name to an
//! OpenCL kernel with its parameter list and launch sizes.

use crate::arith::ArithExpr;
use crate::ir::{Program, Span};
use crate::types::Type;
use std::collections::BTreeMap;

/// Which optimisations run; each can be switched off on its own (these are
/// the bars of the paper's Figure 8). The kernel is correct either way.
#[derive(Clone, Debug)]
pub struct CompileOptions {
    /// Simplify array indices with the range-aware rules (Section 5.3).
    pub arith_simplify: bool,
    /// Remove barriers that no data sharing needs (Section 5.4).
    pub barrier_elim: bool,
    /// Turn loops that run once into blocks, at most once into `if`s (5.5).
    pub cf_simplify: bool,
    /// Sizes known at compile time (`N = 4096`); others stay symbolic.
    pub sizes: BTreeMap<String, i64>,
    /// Local size per dimension; inferred when `None`.
    pub local: Option<[i64; 3]>,
    /// Global size per dimension; inferred when `None`.
    pub global: Option<[i64; 3]>,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            arith_simplify: true,
            barrier_elim: true,
            cf_simplify: true,
            sizes: BTreeMap::new(),
            local: None,
            global: None,
        }
    }
}

/// What a kernel parameter is bound to, in the order of the kernel's
/// parameter list.
#[derive(Clone, Debug, PartialEq)]
pub enum KernelParam {
    /// An array parameter of the `def`: `const global T* restrict name`.
    Input { name: String, ty: Type },
    /// A scalar parameter of the `def` (`alpha: float`), passed by value.
    Scalar { name: String, ty: Type },
    /// The result buffer, `global T* out`.
    Output { ty: Type },
    /// A global temporary buffer the kernel needs, of `bytes` bytes.
    Temp { name: String, bytes: ArithExpr },
    /// One `int` per size variable.
    Size { name: String },
}

/// A compiled kernel.
#[derive(Clone, Debug)]
pub struct Kernel {
    pub name: String,
    /// The complete OpenCL C source.
    pub source: String,
    pub params: Vec<KernelParam>,
    /// Global size per dimension, as expressions of the sizes.
    pub global: [ArithExpr; 3],
    /// Local size per dimension; `None` leaves it to the OpenCL driver.
    pub local: Option<[ArithExpr; 3]>,
    pub output_type: Type,
}

/// A compile error with the position it refers to.
#[derive(Clone, Debug, thiserror::Error)]
pub enum CompileError {
    #[error("no `def {0}` in the program")]
    NoSuchDef(String),
    #[error("{msg}")]
    Type { msg: String, span: Span },
    #[error("cannot compile: {msg}")]
    Unsupported { msg: String, span: Span },
    #[error("internal compiler error: {0}")]
    Internal(String),
}

impl CompileError {
    pub fn span(&self) -> Option<Span> {
        match self {
            CompileError::Type { span, .. } | CompileError::Unsupported { span, .. } => Some(*span),
            CompileError::NoSuchDef(_) | CompileError::Internal(_) => None,
        }
    }
}

/// Compiles `def` of `program` to an OpenCL kernel.
pub fn compile(program: &Program, def: &str, opts: &CompileOptions) -> Result<Kernel, CompileError> {
    let _ = (program, opts);
    Err(CompileError::NoSuchDef(def.to_string()))
}
