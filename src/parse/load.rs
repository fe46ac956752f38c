//! Reading and parsing a `.lift` file: the one program loader of `lift
//! compile`, `lift exec`, `lift explore` and the harness.

use super::{parse_program, ParseError};
use crate::ir::{read_text, Location, Program, ReadError, SourceFile};
use std::path::Path;

/// Why a `.lift` file did not load.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// It cannot be read, or is not UTF-8 text.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// A syntax or name error: `file:line:col: error: expected X, found `Y``.
    #[error("{at}: error: {error}")]
    Syntax { at: Location, error: ParseError },
}

impl LoadError {
    /// The error without the text found at its position: a syntax error
    /// gives where and what was expected, so that no line of a source file
    /// is copied into a results row (issue 23).
    pub fn without_source_text(&self) -> String {
        match self {
            LoadError::Read(e) => e.to_string(),
            LoadError::Syntax { at, error } => format!("{at}: error: expected {}", error.expected),
        }
    }
}

/// Reads and parses the `.lift` file at `path`.
pub fn load_program(path: &Path) -> Result<(SourceFile, Program), LoadError> {
    let text = read_text(path)?;
    let file = SourceFile::new(path.display().to_string(), text);
    match parse_program(&file) {
        Ok(program) => Ok((file, program)),
        Err(error) => Err(LoadError::Syntax { at: file.location(error.span.start), error }),
    }
}
