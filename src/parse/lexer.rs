//! The lexer, shared by the Lift expression language and the C subset of
//! user-function bodies (both use the same identifiers, numbers and
//! punctuation, so one token stream serves both parsers).

use super::error::{PResult, ParseError};
use crate::ir::Span;

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Ident(String),
    /// An integer literal (no `.`, exponent or `f`).
    Int(i64),
    /// A floating-point literal (`0.0f`, `1.5e-3f`, `2.0`).
    Float(f64),
    /// Punctuation and operators; `∘` is lexed as the keyword `o`.
    Punct(&'static str),
    Eof,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
}

/// Multi-character operators first so that the longest match wins.
const PUNCTS: [&str; 37] = [
    "->", "+=", "-=", "*=", "/=", "<=", ">=", "==", "!=", "&&", "||", "++", "--", "(", ")", "[", "]", "{",
    "}", ",", ":", ";", ".", "+", "-", "*", "/", "%", "<", ">", "=", "!", "?", "\\", "$", "&", "|",
];

/// Splits `text` into tokens, ending with one `Eof` token.
pub fn lex(text: &str) -> PResult<Vec<Token>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if text[i..].starts_with("//") {
            i = text[i..].find('\n').map_or(text.len(), |n| i + n);
        } else if text[i..].starts_with("/*") {
            match text[i + 2..].find("*/") {
                Some(n) => i = i + 2 + n + 2,
                None => return Err(ParseError::new(Span::new(i, i + 2), "/*", "`*/` closing this comment")),
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            out.push(Token { tok: Tok::Ident(text[start..i].to_string()), span: Span::new(start, i) });
        } else if c.is_ascii_digit() || (c == b'.' && bytes.get(i + 1).is_some_and(|d| d.is_ascii_digit())) {
            let (tok, end) = number(text, i)?;
            out.push(Token { tok, span: Span::new(i, end) });
            i = end;
        } else if text[i..].starts_with('∘') {
            let end = i + '∘'.len_utf8();
            out.push(Token { tok: Tok::Ident("o".to_string()), span: Span::new(i, end) });
            i = end;
        } else if let Some(p) = PUNCTS.iter().find(|p| text[i..].starts_with(**p)) {
            out.push(Token { tok: Tok::Punct(p), span: Span::new(i, i + p.len()) });
            i += p.len();
        } else {
            let ch = text[i..].chars().next().unwrap_or('?');
            let end = i + ch.len_utf8();
            return Err(ParseError::new(Span::new(i, end), ch.to_string(), "a token"));
        }
    }
    out.push(Token { tok: Tok::Eof, span: Span::new(text.len(), text.len()) });
    Ok(out)
}

/// Lexes a number starting at `start`: digits, an optional fraction, an
/// optional exponent and an optional `f` suffix (which needs a fraction or
/// an exponent, as in C).
fn number(text: &str, start: usize) -> PResult<(Tok, usize)> {
    let b = text.as_bytes();
    let digits = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let mut i = digits(start);
    let mut is_float = false;
    if i < b.len() && b[i] == b'.' {
        is_float = true;
        i = digits(i + 1);
    }
    let mut bad = false;
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        is_float = true;
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let e = digits(i);
        bad |= e == i;
        i = e;
    }
    let body_end = i;
    if i < b.len() && (b[i] == b'f' || b[i] == b'F') {
        bad |= !is_float;
        i += 1;
    }
    // A number glued to letters (`12abc`, `1.0fx`) is malformed as a whole.
    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
        bad = true;
        i += 1;
    }
    let lexeme = &text[start..i];
    let err = || ParseError::new(Span::new(start, i), lexeme, "a number such as `2`, `0.5f` or `1.5e-3f`");
    if bad {
        return Err(err());
    }
    let body = &text[start..body_end];
    let tok = if is_float {
        let v: f64 = body.parse().map_err(|_| err())?;
        if !v.is_finite() {
            return Err(err());
        }
        Tok::Float(v)
    } else {
        // Integers are C `int`s everywhere (sizes, indices, user-function
        // bodies): a wider literal would be a `long` to OpenCL but not to
        // the interpreter.
        match body.parse::<i64>() {
            Ok(v) if v <= i32::MAX as i64 => Tok::Int(v),
            _ => {
                return Err(ParseError::new(
                    Span::new(start, i),
                    lexeme,
                    format!("an integer of at most {} (32-bit int)", i32::MAX),
                ))
            }
        }
    };
    Ok((tok, i))
}

/// How a token is shown in error messages.
pub fn describe(t: &Token, text: &str) -> String {
    match t.tok {
        Tok::Eof => "end of file".to_string(),
        _ => text.get(t.span.start as usize..t.span.end as usize).unwrap_or("?").to_string(),
    }
}
