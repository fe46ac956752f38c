//! Vectorised user-function bodies (ICFP 2015, Figure 4e, `vect_n(f)`).
//!
//! A body that is one `return` of component-wise arithmetic
//! ([`is_componentwise`]) means the same on `floatn` as on `float`. A body
//! of several statements (BlackScholes') is rewritten statement by
//! statement ([`vector_body`]): float locals become `floatn`, an `if` that
//! only assigns locals becomes selections (`x = c ? e : x`, component-wise
//! for a vector condition in OpenCL C), calls of other user functions call
//! their vectorised versions, and a returned tuple of floats becomes a
//! tuple of vectors.
//!
//! Every float local is made a vector, even one computed from uniform
//! (scalar) parameters only: OpenCL widens the scalar, and each lane then
//! holds what the scalar body computed. What is refused (loops, integer
//! locals, an `if` that returns or whose condition reads what it assigns,
//! component or field access, casts) keeps the function scalar; the rule
//! that asked then does not apply.

use super::ast::{AssignOp, BinOp, CExpr, Stmt, UnOp};
use crate::ir::UserFun;
use crate::types::{ScalarType, Type};
use std::collections::HashSet;

/// Vectorised callees: `callee(name, which_args_are_vectors)` gives the
/// name of the version of user function `name` taking vectors where
/// marked, or why there is none (the caller's error, which a body's own
/// [`BodyError`] converts into).
pub type Callee<'a, E> = dyn FnMut(&str, &[bool]) -> Result<String, E> + 'a;

/// Built-ins that apply component-wise to vectors (and broadcast scalars).
pub const COMPONENTWISE: [&str; 24] = [
    "fabs",
    "sqrt",
    "rsqrt",
    "native_sqrt",
    "native_rsqrt",
    "exp",
    "native_exp",
    "log",
    "native_log",
    "sin",
    "cos",
    "tan",
    "floor",
    "ceil",
    "round",
    "trunc",
    "fmin",
    "fmax",
    "mad",
    "fma",
    "pow",
    "native_recip",
    "copysign",
    "native_divide",
];

/// Whether `e` is component-wise arithmetic (`+ - * /`, negation and the
/// [`COMPONENTWISE`] built-ins over literals and variables): as the one
/// `return` of a float function it vectorises by changing types only.
pub fn is_componentwise(e: &CExpr) -> bool {
    match e {
        CExpr::Raw(_) | CExpr::Arith(_) | CExpr::Index(..) => e.kernel_only(),
        CExpr::Int(_) | CExpr::Float(_) | CExpr::Double(_) | CExpr::Var(_) => true,
        CExpr::Unary(UnOp::Neg, a) => is_componentwise(a),
        CExpr::Unary(UnOp::Not, _) => false,
        CExpr::Binary(op, a, b) => {
            matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div)
                && is_componentwise(a)
                && is_componentwise(b)
        }
        CExpr::Call(name, args) => {
            COMPONENTWISE.contains(&name.as_str()) && args.iter().all(is_componentwise)
        }
        CExpr::Field(..)
        | CExpr::Ternary(..)
        | CExpr::Cast(..)
        | CExpr::VectorLit(..)
        | CExpr::TupleLit(..) => false,
    }
}

/// Whether `e` is arithmetic (`+ - * /`, unary operators, calls of any
/// function) over literals and variables: as the one `return` of a
/// function, OpenCL's overloading gives the same text a meaning on vectors,
/// which is how the code generator's vector copy of a function for
/// `mapVec` reuses the body as written.
pub fn is_overloaded_arithmetic(e: &CExpr) -> bool {
    match e {
        CExpr::Raw(_) | CExpr::Arith(_) | CExpr::Index(..) => e.kernel_only(),
        CExpr::Int(_) | CExpr::Float(_) | CExpr::Double(_) | CExpr::Var(_) => true,
        CExpr::Unary(_, a) => is_overloaded_arithmetic(a),
        CExpr::Binary(op, a, b) => {
            matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div)
                && is_overloaded_arithmetic(a)
                && is_overloaded_arithmetic(b)
        }
        CExpr::Call(_, args) => args.iter().all(is_overloaded_arithmetic),
        CExpr::Field(..)
        | CExpr::Ternary(..)
        | CExpr::Cast(..)
        | CExpr::VectorLit(..)
        | CExpr::TupleLit(..) => false,
    }
}

/// A user function's body has no vector version: which function, and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("user function `{fun}` {reason}, so it has no vector version")]
pub struct BodyError {
    pub fun: String,
    pub reason: BodyReason,
}

/// What in a user function's body has no vector version.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BodyReason {
    #[error("has an empty body")]
    Empty,
    #[error("does not end with its only `return`")]
    NoFinalReturn,
    #[error("has an `if` that does more than assign its locals")]
    IfDoesMore,
    #[error("has an `if` whose condition reads a variable it assigns")]
    IfReadsAssigned,
    #[error("declares a local that is not a float")]
    NonFloatLocal,
    #[error("assigns something other than its float locals")]
    AssignsOther,
    #[error("has a loop")]
    Loop,
    #[error("returns before its end")]
    EarlyReturn,
    #[error("has a block or an expression statement")]
    BlockOrExpr,
    #[error("does not return a float or a tuple literal of floats")]
    BadResult,
    #[error("has a condition that is not one comparison")]
    BadCondition,
    #[error("has a literal without the `f` suffix (a double)")]
    Double,
    #[error("calls `{0}`, which is not component-wise")]
    NotComponentwise(String),
    #[error("uses `!`, `%`, `&&`, `||` or a comparison outside a condition")]
    NonArithmetic,
    #[error("accesses components or fields, casts, or builds a literal")]
    Access,
}

/// The body of `u` for `width`-vectors, its parameters at `vec_params`
/// being vectors (the others uniform scalars).
pub fn vector_body<E: From<BodyError>>(
    u: &UserFun,
    vec_params: &[bool],
    width: u8,
    callee: &mut Callee<'_, E>,
) -> Result<Vec<Stmt>, E> {
    let mut v = Vectoriser {
        fun: &u.name,
        width,
        vectors: u.params.iter().zip(vec_params).filter(|(_, v)| **v).map(|((n, _), _)| n.clone()).collect(),
        locals: HashSet::new(),
        callee,
    };
    let (last, init) = u.body.split_last().ok_or_else(|| v.why(BodyReason::Empty))?;
    let mut out = Vec::new();
    for s in init {
        v.stmt(s, &mut out)?;
    }
    match last {
        Stmt::Return(e) => out.push(Stmt::Return(v.result(e, &u.ret)?)),
        _ => return Err(v.why(BodyReason::NoFinalReturn)),
    }
    Ok(out)
}

struct Vectoriser<'a, 'b, E> {
    fun: &'a str,
    width: u8,
    /// Names whose values are vectors: vector parameters and every local.
    vectors: HashSet<String>,
    locals: HashSet<String>,
    callee: &'a mut Callee<'b, E>,
}

impl<E: From<BodyError>> Vectoriser<'_, '_, E> {
    fn why(&self, reason: BodyReason) -> E {
        BodyError { fun: self.fun.to_string(), reason }.into()
    }

    fn vector(&self) -> Type {
        Type::Vector(ScalarType::Float, self.width)
    }

    fn stmt(&mut self, s: &Stmt, out: &mut Vec<Stmt>) -> Result<(), E> {
        match s {
            Stmt::Decl {
                qualifier: None,
                ty: Type::Scalar(ScalarType::Float),
                pointer: false,
                name,
                len: None,
                init,
            } => {
                let init = init.as_ref().map(|e| self.expr(e)).transpose()?;
                self.locals.insert(name.clone());
                self.vectors.insert(name.clone());
                out.push(Stmt::decl(self.vector(), name.clone(), init));
                Ok(())
            }
            Stmt::Assign { target: CExpr::Var(x), op, value } if self.locals.contains(x) => {
                out.push(Stmt::Assign { target: CExpr::Var(x.clone()), op: *op, value: self.expr(value)? });
                Ok(())
            }
            Stmt::If { cond, then, otherwise } => {
                // Each branch statement as (local, operator, value, taken).
                let mut assigns = Vec::new();
                for (branch, taken) in [(then, true), (otherwise, false)] {
                    for s in branch {
                        match s {
                            Stmt::Assign { target: CExpr::Var(x), op, value } if self.locals.contains(x) => {
                                assigns.push((x, *op, value, taken))
                            }
                            _ => return Err(self.why(BodyReason::IfDoesMore)),
                        }
                    }
                }
                if assigns.iter().any(|(x, ..)| mentions(cond, x)) {
                    return Err(self.why(BodyReason::IfReadsAssigned));
                }
                let c = self.cond(cond)?;
                for (x, op, value, taken) in assigns {
                    let var = CExpr::Var(x.clone());
                    let new = match op.binary() {
                        None => self.expr(value)?,
                        Some(b) => CExpr::Binary(b, Box::new(var.clone()), Box::new(self.expr(value)?)),
                    };
                    let (a, b) = if taken { (new, var.clone()) } else { (var.clone(), new) };
                    let value = CExpr::Ternary(Box::new(c.clone()), Box::new(a), Box::new(b));
                    out.push(Stmt::Assign { target: var, op: AssignOp::Set, value });
                }
                Ok(())
            }
            Stmt::Decl { qualifier: None, pointer: false, len: None, .. } => {
                Err(self.why(BodyReason::NonFloatLocal))
            }
            Stmt::Assign { .. } => Err(self.why(BodyReason::AssignsOther)),
            Stmt::For { .. } => Err(self.why(BodyReason::Loop)),
            Stmt::Return(_) => Err(self.why(BodyReason::EarlyReturn)),
            Stmt::Block(_) | Stmt::Expr(_) => Err(self.why(BodyReason::BlockOrExpr)),
            Stmt::Decl { .. } | Stmt::CountedFor { .. } | Stmt::Barrier { .. } | Stmt::Comment(_) => {
                s.kernel_only()
            }
        }
    }

    /// The returned value: a float, or a tuple literal of floats.
    fn result(&mut self, e: &CExpr, ret: &Type) -> Result<CExpr, E> {
        match (e, ret) {
            (CExpr::TupleLit(_, parts), Type::Tuple(ts))
                if ts.iter().all(|t| *t == Type::Scalar(ScalarType::Float)) && parts.len() == ts.len() =>
            {
                let parts = parts.iter().map(|p| self.expr(p)).collect::<Result<Vec<_>, _>>()?;
                Ok(CExpr::TupleLit(Type::Tuple(vec![self.vector(); ts.len()]), parts))
            }
            (_, Type::Scalar(ScalarType::Float)) => self.expr(e),
            _ => Err(self.why(BodyReason::BadResult)),
        }
    }

    fn is_vector(&self, e: &CExpr) -> bool {
        self.vectors.iter().any(|v| mentions(e, v))
    }

    /// A condition: one comparison of values. On vectors it gives an
    /// integer vector (all bits set where true), which a selection takes
    /// lane by lane; used as a number it would be -1, not 1, so a
    /// comparison is only allowed here.
    fn cond(&mut self, e: &CExpr) -> Result<CExpr, E> {
        match e {
            CExpr::Binary(
                op @ (BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne),
                a,
                b,
            ) => Ok(CExpr::Binary(*op, Box::new(self.expr(a)?), Box::new(self.expr(b)?))),
            _ => Err(self.why(BodyReason::BadCondition)),
        }
    }

    fn expr(&mut self, e: &CExpr) -> Result<CExpr, E> {
        Ok(match e {
            CExpr::Raw(_) | CExpr::Arith(_) | CExpr::Index(..) => e.kernel_only(),
            CExpr::Int(_) | CExpr::Float(_) | CExpr::Var(_) => e.clone(),
            // OpenCL refuses a double scalar with a float vector.
            CExpr::Double(_) => return Err(self.why(BodyReason::Double)),
            CExpr::Unary(UnOp::Neg, a) => CExpr::Unary(UnOp::Neg, Box::new(self.expr(a)?)),
            CExpr::Binary(op @ (BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div), a, b) => {
                CExpr::Binary(*op, Box::new(self.expr(a)?), Box::new(self.expr(b)?))
            }
            CExpr::Ternary(c, a, b) => {
                CExpr::Ternary(Box::new(self.cond(c)?), Box::new(self.expr(a)?), Box::new(self.expr(b)?))
            }
            CExpr::Call(name, args) if COMPONENTWISE.contains(&name.as_str()) => {
                CExpr::Call(name.clone(), args.iter().map(|a| self.expr(a)).collect::<Result<_, _>>()?)
            }
            CExpr::Call(name, args) if !super::is_builtin(name) => {
                let which: Vec<bool> = args.iter().map(|a| self.is_vector(a)).collect();
                let args = args.iter().map(|a| self.expr(a)).collect::<Result<_, _>>()?;
                if which.iter().any(|v| *v) {
                    CExpr::Call((self.callee)(name, &which)?, args)
                } else {
                    CExpr::Call(name.clone(), args)
                }
            }
            CExpr::Call(name, _) => return Err(self.why(BodyReason::NotComponentwise(name.clone()))),
            CExpr::Unary(UnOp::Not, _) | CExpr::Binary(..) => {
                return Err(self.why(BodyReason::NonArithmetic));
            }
            CExpr::Field(..) | CExpr::Cast(..) | CExpr::VectorLit(..) | CExpr::TupleLit(..) => {
                return Err(self.why(BodyReason::Access));
            }
        })
    }
}

/// Whether `e` reads the variable `name`.
fn mentions(e: &CExpr, name: &str) -> bool {
    match e {
        CExpr::Raw(_) | CExpr::Arith(_) | CExpr::Index(..) => e.kernel_only(),
        CExpr::Int(_) | CExpr::Float(_) | CExpr::Double(_) => false,
        CExpr::Var(v) => v == name,
        CExpr::Field(a, _) | CExpr::Unary(_, a) | CExpr::Cast(_, a) => mentions(a, name),
        CExpr::Binary(_, a, b) => mentions(a, name) || mentions(b, name),
        CExpr::Ternary(a, b, c) => mentions(a, name) || mentions(b, name) || mentions(c, name),
        CExpr::Call(_, args) | CExpr::VectorLit(_, args) | CExpr::TupleLit(_, args) => {
            args.iter().any(|a| mentions(a, name))
        }
    }
}
