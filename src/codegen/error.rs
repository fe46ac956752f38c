//! Errors of the compiler, from type inference to printing.

use crate::ir::Span;

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
