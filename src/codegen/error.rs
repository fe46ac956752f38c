//! Errors of the compiler, from type inference to printing.

use super::unsupported::Unsupported;
use crate::ir::Span;
use crate::passes::sizes_fit::SizeFitError;
use crate::passes::typecheck::TypeError;
use crate::passes::wellformed::WellFormedError;

/// A compile error with the position it refers to.
#[derive(Clone, Debug, thiserror::Error)]
pub enum CompileError {
    #[error("no `def {0}` in the program")]
    NoSuchDef(String),
    #[error(transparent)]
    Type(#[from] TypeError),
    /// Known sizes that do not fit the def; `span` is the fact's place,
    /// else the def's.
    #[error("{source}")]
    Sizes { source: SizeFitError, span: Span },
    #[error("cannot compile: {0}")]
    WellFormed(#[from] WellFormedError),
    /// Boxed: its types and lengths would make every result large.
    #[error("cannot compile: {reason}")]
    Unsupported { reason: Box<Unsupported>, span: Span },
    #[error("internal compiler error: {0}")]
    Internal(String),
}

impl CompileError {
    pub fn unsupported(reason: Unsupported, span: Span) -> CompileError {
        CompileError::Unsupported { reason: Box::new(reason), span }
    }

    pub fn span(&self) -> Option<Span> {
        match self {
            CompileError::Sizes { span, .. } | CompileError::Unsupported { span, .. } => Some(*span),
            CompileError::Type(e) => Some(e.span),
            CompileError::WellFormed(e) => Some(e.span),
            CompileError::NoSuchDef(_) | CompileError::Internal(_) => None,
        }
    }
}
