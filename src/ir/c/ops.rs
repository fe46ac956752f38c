//! Counting a user function's C operators: the size check on user
//! functions (`harness::userfun_size`) and the arithmetic a program does
//! (`validate::cost::userfun_ops`) both count them.

use super::ast::{AssignOp, CExpr, Stmt};

/// Operators of an expression.
pub fn expr_ops(e: &CExpr) -> usize {
    match e {
        CExpr::Raw(_) | CExpr::Arith(_) | CExpr::Index(..) => e.kernel_only(),
        CExpr::Int(_) | CExpr::Float(_) | CExpr::Double(_) | CExpr::Var(_) => 0,
        CExpr::Field(x, _) | CExpr::Cast(_, x) => expr_ops(x),
        CExpr::Unary(_, x) => 1 + expr_ops(x),
        CExpr::Binary(_, a, b) => 1 + expr_ops(a) + expr_ops(b),
        CExpr::Ternary(c, a, b) => 1 + expr_ops(c) + expr_ops(a) + expr_ops(b),
        CExpr::Call(_, args) => 1 + args.iter().map(expr_ops).sum::<usize>(),
        CExpr::VectorLit(_, xs) | CExpr::TupleLit(_, xs) => xs.iter().map(expr_ops).sum(),
    }
}

/// Operators of a statement list (arithmetic, comparison, logic, ternary,
/// calls, compound assignments); `None` when it has a loop.
pub fn stmts_ops(stmts: &[Stmt]) -> Option<usize> {
    let mut n = 0;
    for s in stmts {
        n += match s {
            Stmt::Decl { qualifier: None, pointer: false, len: None, init, .. } => {
                init.as_ref().map_or(0, expr_ops)
            }
            Stmt::Assign { target, op, value } => {
                usize::from(*op != AssignOp::Set) + expr_ops(target) + expr_ops(value)
            }
            Stmt::If { cond, then, otherwise } => expr_ops(cond) + stmts_ops(then)? + stmts_ops(otherwise)?,
            Stmt::For { .. } => return None,
            Stmt::Return(e) | Stmt::Expr(e) => expr_ops(e),
            Stmt::Block(b) => stmts_ops(b)?,
            Stmt::Decl { .. } | Stmt::CountedFor { .. } | Stmt::Barrier { .. } | Stmt::Comment(_) => {
                s.kernel_only()
            }
        };
    }
    Some(n)
}
