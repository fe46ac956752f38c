//! Printing user-function bodies (`ast::Stmt`) as OpenCL C, in the body
//! layout: two spaces a level, a branch of one statement unbraced, the
//! user's general `for`.
//!
//! A user function written by the user is emitted as the text it was
//! written with; a body the compiler makes (a vectorised version of a
//! multi-statement user function) is printed from its parsed form here,
//! its expressions with every compound one parenthesised.

use crate::ir::c::ast::{CExpr, Stmt};
use crate::types::c_type;
use std::fmt::Write;

/// The statements of a body, one per line, indented, ending with a line break.
pub fn body_text(stmts: &[Stmt]) -> String {
    let mut out = String::new();
    for s in stmts {
        stmt(&mut out, s, 1);
    }
    out.push('\n');
    out
}

fn indent(out: &mut String, depth: usize) {
    out.push('\n');
    for _ in 0..depth {
        out.push_str("  ");
    }
}

fn stmt(out: &mut String, s: &Stmt, depth: usize) {
    indent(out, depth);
    match s {
        Stmt::Decl { qualifier: None, ty, pointer: false, name, len: None, init } => {
            let _ = write!(out, "{} {name}", c_type(ty));
            if let Some(e) = init {
                let _ = write!(out, " = {}", expr(e));
            }
            out.push(';');
        }
        Stmt::Assign { target, op, value } => {
            let _ = write!(out, "{} {} {};", expr(target), op.text(), expr(value));
        }
        Stmt::If { cond, then, otherwise } => {
            let _ = write!(out, "if {}", wrapped(cond));
            branch(out, then, depth);
            if !otherwise.is_empty() {
                indent(out, depth);
                out.push_str("else");
                branch(out, otherwise, depth);
            }
        }
        Stmt::For { init, cond, step, body } => {
            let (mut i, mut st) = (String::new(), String::new());
            stmt(&mut i, init, 0);
            stmt(&mut st, step, 0);
            let (i, st) = (i.trim().trim_end_matches(';'), st.trim().trim_end_matches(';'));
            let _ = write!(out, "for ({i}; {}; {st})", expr(cond));
            branch(out, body, depth);
        }
        Stmt::Return(e) => {
            let _ = write!(out, "return {};", expr(e));
        }
        Stmt::Block(b) => {
            out.push('{');
            b.iter().for_each(|s| stmt(out, s, depth + 1));
            indent(out, depth);
            out.push('}');
        }
        Stmt::Expr(e) => {
            let _ = write!(out, "{};", expr(e));
        }
        Stmt::Decl { .. } | Stmt::CountedFor { .. } | Stmt::Barrier { .. } | Stmt::Comment(_) => {
            s.kernel_only()
        }
    }
}

/// A branch of an `if` as the parser reads it back: one statement as it
/// is (a block keeps its braces), several in braces.
fn branch(out: &mut String, stmts: &[Stmt], depth: usize) {
    match stmts {
        [one] => stmt(out, one, depth + 1),
        _ => {
            indent(out, depth);
            out.push('{');
            stmts.iter().for_each(|s| stmt(out, s, depth + 1));
            indent(out, depth);
            out.push('}');
        }
    }
}

/// A condition in parentheses (an operator's own are already there; a
/// cast's are not the condition's).
fn wrapped(e: &CExpr) -> String {
    if matches!(e, CExpr::Binary(..) | CExpr::Ternary(..) | CExpr::Unary(..)) {
        expr(e)
    } else {
        format!("({})", expr(e))
    }
}

/// An expression as body text.
fn expr(e: &CExpr) -> String {
    super::text(e, super::Parens::Every)
}
