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
    rebuild(stmts, &Rebuild { fin, truth: &constant_truth })
}

/// `stmts` with every comparison in a selection's condition that `truth`
/// decides taken out: a condition that holds is dropped from its `&&`, one
/// that fails leaves the other branch. `truth` answers for a comparison of
/// two index expressions (`None`: it depends on the point). The lowering
/// uses it with the ranges of the loop and work-item variables (see
/// `Lowerer::truth`).
pub(crate) fn prune_selections(stmts: &[Stmt], truth: Truth<'_>) -> Vec<Stmt> {
    rebuild(stmts, &Rebuild { fin: &|e| e.clone(), truth })
}

/// Decides `lhs op rhs` for index expressions, where it can.
pub(crate) type Truth<'a> = &'a dyn Fn(CmpOp, &ArithExpr, &ArithExpr) -> Option<bool>;

struct Rebuild<'a> {
    fin: &'a dyn Fn(&ArithExpr) -> ArithExpr,
    truth: Truth<'a>,
}

fn rebuild(stmts: &[Stmt], r: &Rebuild<'_>) -> Vec<Stmt> {
    stmts.iter().map(|s| stmt(s, r)).collect()
}

fn stmt(s: &Stmt, r: &Rebuild<'_>) -> Stmt {
    let fin = r.fin;
    match s {
        Stmt::Decl { qualifier, ty, pointer, name, len, init } => Stmt::Decl {
            qualifier: *qualifier,
            ty: ty.clone(),
            pointer: *pointer,
            name: name.clone(),
            len: len.as_ref().map(fin),
            init: init.as_ref().map(|e| expr(e, r)),
        },
        Stmt::Assign { target, op, value } => {
            Stmt::Assign { target: expr(target, r), op: *op, value: expr(value, r) }
        }
        Stmt::Expr(e) => Stmt::Expr(expr(e, r)),
        Stmt::CountedFor { var, init, bound, step, body } => Stmt::CountedFor {
            var: var.clone(),
            init: expr(init, r),
            bound: expr(bound, r),
            step: expr(step, r),
            body: rebuild(body, r),
        },
        Stmt::If { cond, then, otherwise } => {
            Stmt::If { cond: expr(cond, r), then: rebuild(then, r), otherwise: rebuild(otherwise, r) }
        }
        Stmt::Block(b) => Stmt::Block(rebuild(b, r)),
        Stmt::Barrier { .. } | Stmt::Comment(_) => s.clone(),
        Stmt::For { .. } | Stmt::Return(_) => s.user_only(),
    }
}

fn expr(e: &CExpr, r: &Rebuild<'_>) -> CExpr {
    let fin = r.fin;
    match e {
        CExpr::Raw(_) | CExpr::Var(_) | CExpr::Int(_) | CExpr::Float(_) | CExpr::Double(_) => e.clone(),
        CExpr::Arith(a) => CExpr::Arith(fin(a)),
        CExpr::Index(base, index) => CExpr::Index(base.clone(), fin(index)),
        CExpr::Call(name, args) => CExpr::Call(name.clone(), args.iter().map(|a| expr(a, r)).collect()),
        CExpr::Field(base, field) => CExpr::field(expr(base, r), field.clone()),
        CExpr::Ternary(cond, then, otherwise) => match decided(expr(cond, r), r.truth) {
            Decided::Holds => expr(then, r),
            Decided::Fails => expr(otherwise, r),
            Decided::Open(cond) => CExpr::ternary(cond, expr(then, r), expr(otherwise, r)),
        },
        CExpr::Binary(op, lhs, rhs) => CExpr::binary(*op, expr(lhs, r), expr(rhs, r)),
        CExpr::Cast(ty, e) => CExpr::Cast(ty.clone(), Box::new(expr(e, r))),
        CExpr::Unary(op, e) => CExpr::Unary(*op, Box::new(expr(e, r))),
        CExpr::TupleLit(ty, fields) => {
            CExpr::TupleLit(ty.clone(), fields.iter().map(|f| expr(f, r)).collect())
        }
        CExpr::VectorLit(ty, fields) => {
            CExpr::VectorLit(ty.clone(), fields.iter().map(|f| expr(f, r)).collect())
        }
    }
}

/// A selection's condition after [`decided`].
enum Decided {
    Holds,
    Fails,
    /// What is left to test at run time.
    Open(CExpr),
}

/// `c`, a condition made of comparisons joined by `&&` (as a selection's
/// guard is built), with the comparisons `truth` decides taken out.
fn decided(c: CExpr, truth: Truth<'_>) -> Decided {
    match c {
        CExpr::Raw(ref t) if t == "1" => Decided::Holds,
        CExpr::Binary(BinOp::And, lhs, rhs) => match (decided(*lhs, truth), decided(*rhs, truth)) {
            (Decided::Fails, _) | (_, Decided::Fails) => Decided::Fails,
            (Decided::Holds, d) | (d, Decided::Holds) => d,
            (Decided::Open(l), Decided::Open(r)) => Decided::Open(CExpr::binary(BinOp::And, l, r)),
        },
        CExpr::Binary(op, lhs, rhs) => {
            let verdict = match (&*lhs, &*rhs, comparison(op)) {
                (CExpr::Arith(a), CExpr::Arith(b), Some(cmp)) => truth(cmp, a, b),
                _ => None,
            };
            match verdict {
                Some(true) => Decided::Holds,
                Some(false) => Decided::Fails,
                None => Decided::Open(CExpr::Binary(op, lhs, rhs)),
            }
        }
        other => Decided::Open(other),
    }
}

/// The comparison a binary operator is, if it is one.
fn comparison(op: BinOp) -> Option<CmpOp> {
    [CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge, CmpOp::Eq, CmpOp::Ne]
        .into_iter()
        .find(|c| BinOp::from(*c) == op)
}

/// Decides a comparison of two constants.
fn constant_truth(op: CmpOp, a: &ArithExpr, b: &ArithExpr) -> Option<bool> {
    match (a, b) {
        (ArithExpr::Cst(a), ArithExpr::Cst(b)) => Some(op.holds(*a, *b)),
        _ => None,
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
        let at = |e: &CExpr| prune_selections(&[Stmt::Expr(e.clone())], &constant_truth);
        assert_eq!(at(&sel(1, 2)), [Stmt::Expr(CExpr::raw("x"))]);
        assert_eq!(at(&sel(2, 2)), [Stmt::Expr(CExpr::raw("0.0f"))]);
    }
}
