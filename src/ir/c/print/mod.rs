//! The one printer of C text: expressions (operators, parentheses,
//! literals) here, user-function bodies in `body`, kernels in `kernel`.
//! Bodies and kernels are the same statement tree (`ast::Stmt`) printed in
//! two layouts, each fixed by text the tests compare byte for byte: a body
//! as the parser reads it back (a one-statement branch unbraced, its
//! general `for` on one line), a kernel as the generator has always
//! written it (every branch braced, local arrays aligned). Each layout
//! stops on the forms only the other side makes.
//!
//! Expressions print in one of two parenthesisations. A kernel relies on
//! C's precedence only as far as a reader does: an operand that is not a
//! primary expression is parenthesised, a whole expression is not. A body
//! the compiler makes (a vectorised user function) puts every compound
//! expression in parentheses, so it relies on no precedence at all and
//! reads back as the same tree. Both are kept because both are fixed by
//! the generated text the tests compare byte for byte. Float literals
//! print the shortest text that reads back as the same `f32` (the
//! interpreter computes in `f32`).

mod body;
mod kernel;

pub use body::body_text;
pub use kernel::Writer;

use super::ast::{CExpr, UnOp};
use crate::types::c_type;

/// Which parenthesisation an expression prints in (see the module's doc).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Parens {
    Operands,
    Every,
}

/// An expression as kernel C text.
pub fn expr(e: &CExpr) -> String {
    text(e, Parens::Operands)
}

fn text(e: &CExpr, p: Parens) -> String {
    match e {
        CExpr::Int(i) => i.to_string(),
        CExpr::Float(f) => format!("{:?}f", *f as f32),
        CExpr::Double(d) => format!("{d:?}"),
        CExpr::Var(s) | CExpr::Raw(s) => s.clone(),
        CExpr::Arith(a) => a.to_string(),
        CExpr::Index(base, index) => format!("{base}[{index}]"),
        CExpr::Field(b, f) => format!("{}.{f}", tight(b, p)),
        CExpr::Unary(op, a) => {
            let op = match op {
                UnOp::Neg => "-",
                UnOp::Not => "!",
            };
            own(p, format!("{op}{}", tight(a, p)))
        }
        CExpr::Binary(op, a, b) => own(p, format!("{} {} {}", operand(a, p), op.text(), operand(b, p))),
        CExpr::Ternary(c, a, b) => {
            own(p, format!("{} ? {} : {}", operand(c, p), operand(a, p), operand(b, p)))
        }
        CExpr::Call(name, args) => format!("{name}({})", list(args, p)),
        CExpr::Cast(t, a) => own(p, format!("({}){}", c_type(t), tight(a, p))),
        CExpr::VectorLit(t, args) => format!("({})({})", c_type(t), list(args, p)),
        CExpr::TupleLit(t, args) => format!("({}){{{}}}", c_type(t), list(args, p)),
    }
}

/// An operator expression's own text: in parentheses where every compound
/// expression has them.
fn own(p: Parens, s: String) -> String {
    match p {
        Parens::Every => format!("({s})"),
        Parens::Operands => s,
    }
}

/// An operand of a binary operator or a selection.
fn operand(e: &CExpr, p: Parens) -> String {
    match p {
        Parens::Every => text(e, p),
        Parens::Operands => wrap_unless(primary(e), text(e, p)),
    }
}

/// The operand of a unary operator, a cast or a field access. Bodies
/// parenthesise every operand here that is not an atom, even one in its
/// own parentheses already, and a compound literal too.
fn tight(e: &CExpr, p: Parens) -> String {
    match p {
        Parens::Every => wrap_unless(primary(e) && !matches!(e, CExpr::TupleLit(..)), text(e, p)),
        Parens::Operands => operand(e, p),
    }
}

fn wrap_unless(bare: bool, s: String) -> String {
    if bare {
        s
    } else {
        format!("({s})")
    }
}

/// Whether `e` prints as a primary (or postfix) expression, which needs no
/// parentheses as an operand.
fn primary(e: &CExpr) -> bool {
    match e {
        CExpr::Int(i) => *i >= 0,
        CExpr::Float(f) | CExpr::Double(f) => *f >= 0.0,
        CExpr::Raw(s) => !s.contains(' ') && !s.starts_with('-'),
        CExpr::Arith(a) => {
            matches!(a, crate::arith::ArithExpr::Var(_))
                || matches!(a, crate::arith::ArithExpr::Cst(c) if *c >= 0)
        }
        CExpr::Var(_) | CExpr::Index(..) | CExpr::Call(..) | CExpr::Field(..) | CExpr::TupleLit(..) => true,
        CExpr::Unary(..)
        | CExpr::Ternary(..)
        | CExpr::Binary(..)
        | CExpr::Cast(..)
        | CExpr::VectorLit(..) => false,
    }
}

fn list(args: &[CExpr], p: Parens) -> String {
    args.iter().map(|a| text(a, p)).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::c::BinOp;
    use crate::types::{ScalarType, Type};

    #[test]
    fn kernels_parenthesise_operands_and_bodies_every_compound_expression() {
        let sum = CExpr::binary(BinOp::Add, CExpr::Var("a".into()), CExpr::Int(-1));
        let lit = CExpr::VectorLit(Type::Vector(ScalarType::Float, 4), vec![sum.clone()]);
        let e = CExpr::binary(BinOp::Mul, sum, CExpr::field(lit, "x"));
        assert_eq!(expr(&e), "(a + (-1)) * ((float4)(a + (-1))).x");
        assert_eq!(text(&e, Parens::Every), "((a + -1) * ((float4)((a + -1))).x)");
    }
}
