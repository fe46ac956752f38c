//! Unrolled copies of a loop body from one lowering of it.
//!
//! A loop is unrolled when it is marked so or when its index addresses a
//! private array (CGO 2018, Section 5.4: private arrays live in registers
//! only when every index is a constant). The body is lowered once with the
//! index as a variable `i` in `[0, n)`, which is correct for every value of
//! `i` in that range; copy `k` is that body with `i` replaced by `k` and
//! every index expression simplified again. Lowering each copy afresh
//! (walking its views again) cost most of the compile time of kernels that
//! unroll register tiles (`mm-nvidia`: 1,412 access indices).
//!
//! The copy is exact as long as `i` appears only as a variable of index
//! expressions: a body whose C text names `i` elsewhere (a raw string, or
//! a nested access printed into the name of an index variable, as
//! `pos[neigh[i]]` is) is refused by [`names_outside_indices`], and the
//! caller lowers each copy afresh.

use crate::arith::{ArithExpr, CmpOp};
use crate::codegen::c_type;
use crate::ir::c::{BinOp, CExpr, Stmt};

/// Whether `name` occurs as a word in the C text of `stmts` other than as
/// an index variable (in a raw expression, a declaration, a loop header or
/// the printed name of another index variable).
pub(crate) fn names_outside_indices(stmts: &[Stmt], name: &str) -> bool {
    stmts.iter().any(|s| stmt_names(s, name))
}

fn has_word(text: &str, name: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

/// Whether a variable of `e` other than `name` has `name` in its printed name.
fn arith_names(e: &ArithExpr, name: &str) -> bool {
    let mut found = false;
    e.visit_vars(&mut |v| found |= v.name != name && has_word(&v.name, name));
    found
}

fn stmt_names(s: &Stmt, name: &str) -> bool {
    match s {
        Stmt::Decl { name: n, init, ty, len, .. } => {
            has_word(n, name)
                || has_word(&c_type(ty), name)
                || len.as_ref().is_some_and(|e| arith_names(e, name))
                || init.as_ref().is_some_and(|e| expr_names(e, name))
        }
        Stmt::Assign { target, value, .. } => expr_names(target, name) || expr_names(value, name),
        Stmt::Expr(e) => expr_names(e, name),
        Stmt::CountedFor { var, init, bound, step, body } => {
            has_word(var, name)
                || expr_names(init, name)
                || expr_names(bound, name)
                || expr_names(step, name)
                || names_outside_indices(body, name)
        }
        Stmt::If { cond, then, otherwise } => {
            expr_names(cond, name)
                || names_outside_indices(then, name)
                || names_outside_indices(otherwise, name)
        }
        Stmt::Block(b) => names_outside_indices(b, name),
        Stmt::Barrier { .. } => false,
        Stmt::Comment(c) => has_word(c, name),
        Stmt::For { .. } | Stmt::Return(_) => s.user_only(),
    }
}

fn expr_names(e: &CExpr, name: &str) -> bool {
    match e {
        CExpr::Raw(t) | CExpr::Var(t) => has_word(t, name),
        CExpr::Int(_) | CExpr::Float(_) | CExpr::Double(_) => false,
        CExpr::Arith(e) => arith_names(e, name),
        CExpr::Index(base, index) => has_word(base, name) || arith_names(index, name),
        CExpr::Call(f, args) => has_word(f, name) || args.iter().any(|a| expr_names(a, name)),
        CExpr::Field(base, _) => expr_names(base, name),
        CExpr::Ternary(cond, then, otherwise) => {
            expr_names(cond, name) || expr_names(then, name) || expr_names(otherwise, name)
        }
        CExpr::Binary(_, lhs, rhs) => expr_names(lhs, name) || expr_names(rhs, name),
        CExpr::Cast(_, e) | CExpr::Unary(_, e) => expr_names(e, name),
        CExpr::TupleLit(ty, fields) | CExpr::VectorLit(ty, fields) => {
            has_word(&c_type(ty), name) || fields.iter().any(|f| expr_names(f, name))
        }
    }
}

/// `stmts` with every index expression passed through `fin` (which puts the
/// copy's constant for the loop index and simplifies). A selection whose
/// condition becomes a comparison of constants keeps only the branch taken,
/// as a lowering of the copy with a constant index would have.
pub(crate) fn instantiate(stmts: &[Stmt], fin: &dyn Fn(&ArithExpr) -> ArithExpr) -> Vec<Stmt> {
    stmts.iter().map(|s| stmt(s, fin)).collect()
}

fn stmt(s: &Stmt, fin: &dyn Fn(&ArithExpr) -> ArithExpr) -> Stmt {
    match s {
        Stmt::Decl { qualifier, ty, pointer, name, len, init } => Stmt::Decl {
            qualifier: *qualifier,
            ty: ty.clone(),
            pointer: *pointer,
            name: name.clone(),
            len: len.as_ref().map(fin),
            init: init.as_ref().map(|e| expr(e, fin)),
        },
        Stmt::Assign { target, op, value } => {
            Stmt::Assign { target: expr(target, fin), op: *op, value: expr(value, fin) }
        }
        Stmt::Expr(e) => Stmt::Expr(expr(e, fin)),
        Stmt::CountedFor { var, init, bound, step, body } => Stmt::CountedFor {
            var: var.clone(),
            init: expr(init, fin),
            bound: expr(bound, fin),
            step: expr(step, fin),
            body: instantiate(body, fin),
        },
        Stmt::If { cond, then, otherwise } => Stmt::If {
            cond: expr(cond, fin),
            then: instantiate(then, fin),
            otherwise: instantiate(otherwise, fin),
        },
        Stmt::Block(b) => Stmt::Block(instantiate(b, fin)),
        Stmt::Barrier { .. } | Stmt::Comment(_) => s.clone(),
        Stmt::For { .. } | Stmt::Return(_) => s.user_only(),
    }
}

fn expr(e: &CExpr, fin: &dyn Fn(&ArithExpr) -> ArithExpr) -> CExpr {
    match e {
        CExpr::Raw(_) | CExpr::Var(_) | CExpr::Int(_) | CExpr::Float(_) | CExpr::Double(_) => e.clone(),
        CExpr::Arith(a) => CExpr::Arith(fin(a)),
        CExpr::Index(base, index) => CExpr::Index(base.clone(), fin(index)),
        CExpr::Call(name, args) => CExpr::Call(name.clone(), args.iter().map(|a| expr(a, fin)).collect()),
        CExpr::Field(base, field) => CExpr::field(expr(base, fin), field.clone()),
        CExpr::Ternary(cond, then, otherwise) => {
            let cond = expr(cond, fin);
            match constant_truth(&cond) {
                Some(true) => expr(then, fin),
                Some(false) => expr(otherwise, fin),
                None => CExpr::ternary(cond, expr(then, fin), expr(otherwise, fin)),
            }
        }
        CExpr::Binary(op, lhs, rhs) => CExpr::binary(*op, expr(lhs, fin), expr(rhs, fin)),
        CExpr::Cast(ty, e) => CExpr::Cast(ty.clone(), Box::new(expr(e, fin))),
        CExpr::Unary(op, e) => CExpr::Unary(*op, Box::new(expr(e, fin))),
        CExpr::TupleLit(ty, fields) => {
            CExpr::TupleLit(ty.clone(), fields.iter().map(|f| expr(f, fin)).collect())
        }
        CExpr::VectorLit(ty, fields) => {
            CExpr::VectorLit(ty.clone(), fields.iter().map(|f| expr(f, fin)).collect())
        }
    }
}

/// The value of a condition made of comparisons of constants joined by
/// `&&` (as a selection's guard is built), if it is one.
fn constant_truth(c: &CExpr) -> Option<bool> {
    match c {
        CExpr::Raw(t) if t == "1" => Some(true),
        CExpr::Binary(BinOp::And, lhs, rhs) => Some(constant_truth(lhs)? && constant_truth(rhs)?),
        CExpr::Binary(op, lhs, rhs) => {
            let (CExpr::Arith(ArithExpr::Cst(a)), CExpr::Arith(ArithExpr::Cst(b))) = (&**lhs, &**rhs) else {
                return None;
            };
            let cmp = [CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge, CmpOp::Eq, CmpOp::Ne]
                .into_iter()
                .find(|c| BinOp::from(*c) == *op)?;
            Some(cmp.holds(*a, *b))
        }
        CExpr::Raw(_)
        | CExpr::Int(_)
        | CExpr::Float(_)
        | CExpr::Double(_)
        | CExpr::Var(_)
        | CExpr::Unary(..)
        | CExpr::VectorLit(..)
        | CExpr::Arith(_)
        | CExpr::Index(..)
        | CExpr::Call(..)
        | CExpr::Field(..)
        | CExpr::Ternary(..)
        | CExpr::Cast(..)
        | CExpr::TupleLit(..) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_counts_as_a_whole_word_only() {
        assert!(has_word("x + i_3", "i_3"));
        assert!(!has_word("i_31 + ai_3", "i_3"));
        let s = [Stmt::Expr(CExpr::raw("f(i_3)"))];
        assert!(names_outside_indices(&s, "i_3"));
        assert!(!names_outside_indices(&s, "i_4"));
        let var = |n: &str| {
            ArithExpr::Var(crate::arith::Var {
                name: n.into(),
                kind: crate::arith::VarKind::Index,
                range: crate::arith::Range::natural(),
            })
        };
        let read = |n: &str| [Stmt::Expr(CExpr::Index("pos".into(), var(n)))];
        assert!(!names_outside_indices(&read("i_3"), "i_3"));
        assert!(names_outside_indices(&read("neigh[i_3 + 4]"), "i_3"));
    }

    #[test]
    fn a_selection_on_constants_keeps_the_branch_taken() {
        let c = |v| CExpr::Arith(ArithExpr::Cst(v));
        let sel = |a, b| {
            CExpr::ternary(
                CExpr::binary(
                    BinOp::And,
                    CExpr::binary(BinOp::Lt, c(a), c(b)),
                    CExpr::binary(BinOp::Ge, c(a), c(0)),
                ),
                CExpr::raw("x"),
                CExpr::raw("0.0f"),
            )
        };
        let id = |e: &ArithExpr| e.clone();
        assert_eq!(expr(&sel(1, 2), &id), CExpr::raw("x"));
        assert_eq!(expr(&sel(2, 2), &id), CExpr::raw("0.0f"));
    }
}
