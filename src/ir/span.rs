//! Source positions.

use std::fmt;

/// A byte range in one source file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span { start: start as u32, end: end as u32 }
    }
    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }
}

/// A source file's name and text, to turn spans into `file:line:col`.
#[derive(Clone, Debug)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
}

/// A resolved position, printed as `file:line:col`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub file: String,
    pub line: usize,
    pub col: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

impl Location {
    /// The one rendering of an error at a position, whatever its layer:
    /// `file:line:col: error: msg`.
    pub fn error(&self, msg: impl fmt::Display) -> String {
        format!("{self}: error: {msg}")
    }
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        SourceFile { name: name.into(), text: text.into() }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn location(&self, offset: u32) -> Location {
        let offset = (offset as usize).min(self.text.len());
        let before = &self.text[..floor_char_boundary(&self.text, offset)];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        Location { file: self.name.clone(), line, col }
    }

    /// An error at the start of `span` ([`Location::error`]).
    pub fn error_at(&self, span: Span, msg: impl fmt::Display) -> String {
        self.location(span.start).error(msg)
    }

    /// An error at `span`, or at no position in the file (`file: error: msg`).
    pub fn error_in(&self, span: Option<Span>, msg: impl fmt::Display) -> String {
        match span {
            Some(span) => self.error_at(span, msg),
            None => format!("{}: error: {msg}", self.name),
        }
    }

    /// The source text a span covers, cut to one line for messages.
    pub fn snippet(&self, span: Span) -> &str {
        let s = floor_char_boundary(&self.text, span.start as usize);
        let e = floor_char_boundary(&self.text, (span.end as usize).max(span.start as usize));
        let t = &self.text[s..e];
        t.split('\n').next().unwrap_or("")
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A text file (a program, a derivation, a config) that cannot be read.
/// Clone (errors holding it are given again), hence the `Arc`.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ReadError {
    #[error("{file}: {source}")]
    Io { file: String, source: std::sync::Arc<std::io::Error> },
    /// Not UTF-8: the position of the first byte that is not.
    #[error("{}", not_utf8(.at, *.byte, *.offset))]
    Utf8 { at: Location, byte: u8, offset: usize },
}

/// Equal when the same file failed the same way: `io::Error` has no `==`,
/// so its kind and OS code are compared.
impl PartialEq for ReadError {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (ReadError::Io { file: a, source: x }, ReadError::Io { file: b, source: y }) => {
                a == b && x.kind() == y.kind() && x.raw_os_error() == y.raw_os_error()
            }
            (
                ReadError::Utf8 { at: a, byte: b, offset: o },
                ReadError::Utf8 { at: a2, byte: b2, offset: o2 },
            ) => (a, b, o) == (a2, b2, o2),
            _ => false,
        }
    }
}

impl Eq for ReadError {}

fn not_utf8(at: &Location, byte: u8, offset: usize) -> String {
    at.error(format_args!("not UTF-8 text (byte 0x{byte:02x} at byte offset {offset})"))
}

/// The text of the file at `path`; an error names the file, and for text
/// that is not UTF-8 the line, column and byte where it stops being so.
pub fn read_text(path: &std::path::Path) -> Result<String, ReadError> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| ReadError::Io { file: file.clone(), source: e.into() })?;
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        // The prefix before `offset` is valid UTF-8 by construction.
        let valid = std::str::from_utf8(&bytes[..offset]).unwrap_or("");
        let at = SourceFile::new(file, valid).location(offset as u32);
        ReadError::Utf8 { at, byte: bytes[offset], offset }
    })
}

impl SourceFile {
    /// The message for a `def` the file lacks: `def: None` when it has no
    /// `def` at all (positioned at the end of the file), else the name
    /// asked for (positioned at 1:1, with the defs it has).
    pub fn missing_def(&self, def: Option<&str>, have: &[&str]) -> String {
        match def {
            None => self.location(self.text.len() as u32).error("no `def` in the file"),
            Some(d) => {
                let list = if have.is_empty() { "none".to_string() } else { have.join(", ") };
                self.location(0).error(format_args!("no `def {d}` in the file (its defs: {list})"))
            }
        }
    }
}
