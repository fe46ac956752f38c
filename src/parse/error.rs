//! Parse errors: a position, the text found there and what the parser
//! expected, rendered as `file:line:col: error: expected X, found `Y``.

use crate::ir::{SourceFile, Span};

/// A syntax or name-resolution error in a `.lift` file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("expected {expected}, found `{found}`")]
pub struct ParseError {
    /// Where the offending text is.
    pub span: Span,
    /// The offending text (a token, a name, or `end of file`).
    pub found: String,
    /// What would have been accepted there.
    pub expected: String,
}

impl ParseError {
    pub fn new(span: Span, found: impl Into<String>, expected: impl Into<String>) -> ParseError {
        ParseError { span, found: found.into(), expected: expected.into() }
    }

    /// One line: `file:line:col: error: expected <what>, found `<text>``.
    pub fn render(&self, file: &SourceFile) -> String {
        file.error_at(self.span, self)
    }
}

pub type PResult<T> = Result<T, ParseError>;
