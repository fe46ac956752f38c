//! Parsing arithmetic expressions from text, as they appear in configs
//! (`N/128`, `2*N + 1`, `min(N, 64)`). Identifiers become size variables.

use super::{ArithExpr, Var};

/// A malformed arithmetic expression; `pos` is a byte offset into the text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("in `{text}` at column {}: {problem}", pos + 1)]
pub struct ArithParseError {
    pub text: String,
    pub pos: usize,
    pub problem: ArithProblem,
}

/// What the parser found at `pos` instead of what it needed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ArithProblem {
    #[error("expected an operator or the end of the expression")]
    OperatorOrEnd,
    #[error("expected `)`")]
    CloseParen,
    #[error("expected `(` after `{function}`")]
    OpenParen { function: String },
    #[error("expected `,`")]
    Comma,
    #[error("expected a number, a size name or `(`")]
    Operand,
    #[error("integer `{digits}` is too large")]
    TooLarge { digits: String },
}

/// Parses `+ - * / %`, parentheses, integer literals, identifiers (size
/// variables) and the functions `min`, `max`, `pow`, `log2`.
pub fn parse_arith(text: &str) -> Result<ArithExpr, ArithParseError> {
    parse_arith_with(text, &[])
}

/// Like [`parse_arith`], but identifiers naming one of `vars` become that
/// variable (with its kind and range) instead of a size variable.
pub fn parse_arith_with(text: &str, vars: &[Var]) -> Result<ArithExpr, ArithParseError> {
    let mut p = Parser { text, pos: 0, vars };
    let e = p.sum()?;
    p.skip_ws();
    if p.pos < text.len() {
        return Err(p.err(ArithProblem::OperatorOrEnd));
    }
    Ok(e)
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
    vars: &'a [Var],
}

impl Parser<'_> {
    fn err(&self, problem: ArithProblem) -> ArithParseError {
        ArithParseError { text: self.text.to_string(), pos: self.pos, problem }
    }
    fn skip_ws(&mut self) {
        while self.peek().is_some_and(|c| c.is_whitespace()) {
            self.pos += 1;
        }
    }
    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }
    fn eat(&mut self, c: char) -> bool {
        self.skip_ws();
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }
    fn sum(&mut self) -> Result<ArithExpr, ArithParseError> {
        let mut acc = self.product()?;
        loop {
            if self.eat('+') {
                acc = ArithExpr::add(acc, self.product()?);
            } else if self.eat('-') {
                acc = ArithExpr::sub(acc, self.product()?);
            } else {
                return Ok(acc);
            }
        }
    }
    fn product(&mut self) -> Result<ArithExpr, ArithParseError> {
        let mut acc = self.unary()?;
        loop {
            if self.eat('*') {
                acc = ArithExpr::mul(acc, self.unary()?);
            } else if self.eat('/') {
                acc = ArithExpr::div(acc, self.unary()?);
            } else if self.eat('%') {
                acc = ArithExpr::modulo(acc, self.unary()?);
            } else {
                return Ok(acc);
            }
        }
    }
    fn unary(&mut self) -> Result<ArithExpr, ArithParseError> {
        if self.eat('-') {
            return Ok(ArithExpr::mul(ArithExpr::Cst(-1), self.unary()?));
        }
        self.atom()
    }
    fn atom(&mut self) -> Result<ArithExpr, ArithParseError> {
        self.skip_ws();
        if self.eat('(') {
            let e = self.sum()?;
            if !self.eat(')') {
                return Err(self.err(ArithProblem::CloseParen));
            }
            return Ok(e);
        }
        let start = self.pos;
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.pos += 1;
                }
                let digits = &self.text[start..self.pos];
                digits.parse::<i64>().map(ArithExpr::Cst).map_err(|_| ArithParseError {
                    text: self.text.to_string(),
                    pos: start,
                    problem: ArithProblem::TooLarge { digits: digits.to_string() },
                })
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                while self.peek().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                    self.pos += 1;
                }
                let name = &self.text[start..self.pos];
                let arity = match name {
                    "min" | "max" | "pow" => 2,
                    "log2" => 1,
                    _ => {
                        return Ok(match self.vars.iter().find(|v| v.name == name) {
                            Some(v) => ArithExpr::Var(v.clone()),
                            None => ArithExpr::size(name),
                        })
                    }
                };
                if !self.eat('(') {
                    return Err(self.err(ArithProblem::OpenParen { function: name.to_string() }));
                }
                let a = self.sum()?;
                let b = if arity == 2 {
                    if !self.eat(',') {
                        return Err(self.err(ArithProblem::Comma));
                    }
                    Some(self.sum()?)
                } else {
                    None
                };
                if !self.eat(')') {
                    return Err(self.err(ArithProblem::CloseParen));
                }
                Ok(match (name, b) {
                    ("min", Some(b)) => ArithExpr::min(a, b),
                    ("max", Some(b)) => ArithExpr::max(a, b),
                    ("pow", Some(b)) => ArithExpr::pow(a, b),
                    (_, _) => ArithExpr::log2(a),
                })
            }
            _ => Err(self.err(ArithProblem::Operand)),
        }
    }
}

/// Each problem's message, as users of configs and manifests see it.
#[cfg(test)]
mod tests {
    use super::*;

    fn says(text: &str, want: &str) {
        assert_eq!(parse_arith(text).unwrap_err().to_string(), want);
    }

    #[test]
    fn operator_or_end() {
        says("N M", "in `N M` at column 3: expected an operator or the end of the expression");
    }

    #[test]
    fn close_paren() {
        says("(N", "in `(N` at column 3: expected `)`");
    }

    #[test]
    fn open_paren() {
        says("min N", "in `min N` at column 5: expected `(` after `min`");
    }

    #[test]
    fn comma() {
        says("max(N)", "in `max(N)` at column 6: expected `,`");
    }

    #[test]
    fn operand() {
        says("N + *", "in `N + *` at column 5: expected a number, a size name or `(`");
    }

    #[test]
    fn too_large() {
        says(
            "99999999999999999999",
            "in `99999999999999999999` at column 1: integer `99999999999999999999` is too large",
        );
    }
}
