//! Vectorised user functions for the vectorisation rules (ICFP 2015,
//! Figure 4e: `vect_n(f)`). A user function whose body is one `return` of
//! component-wise arithmetic (`+ - * /`, negation, component-wise OpenCL
//! built-ins) means the same on `floatn` as on `float`, so its vectorised
//! version is the same body with vector parameter and result types. A body
//! of several statements is vectorised statement by statement
//! (`ir::c::vector`).

use super::rule::Builder;
use crate::ir::c::vector::{is_componentwise, vector_body, BodyError};
use crate::ir::c::{CExpr, Stmt};
use crate::ir::{
    Expr, ExprKind, FunDecl, FunId, FunKind, Lambda, Literal, ParamId, Pattern, Program, UserFun, UserFunId,
};
use crate::types::{ScalarType, Type};
use std::collections::HashSet;

/// Why a function has no vector version.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VectorError {
    #[error("user function `{fun}` does not take and return floats only")]
    NotFloats { fun: String },
    #[error(
        "user function `{fun}` is not one `return` of component-wise arithmetic, so it has no vector version"
    )]
    NotOneReturn { fun: String },
    #[error(transparent)]
    Body(#[from] BodyError),
    #[error("`{0}` is not a user function")]
    NotUserFun(String),
    #[error("only user functions and lambdas over them are vectorised")]
    Pattern,
    #[error("a tuple literal has no vector version")]
    TupleLiteral,
    #[error("only calls of user functions are vectorised")]
    NotUserFunCall,
}

/// Why a user function cannot be vectorised as one `return`, if it cannot.
pub fn not_vectorisable(u: &UserFun) -> Option<VectorError> {
    let scalar = |t: &Type| matches!(t, Type::Scalar(ScalarType::Float));
    if !u.params.iter().all(|(_, t)| scalar(t)) || !scalar(&u.ret) {
        return Some(VectorError::NotFloats { fun: u.name.clone() });
    }
    match u.body.as_slice() {
        [Stmt::Return(e)] if is_componentwise(e) => None,
        _ => Some(VectorError::NotOneReturn { fun: u.name.clone() }),
    }
}

/// The version of user function `id` whose parameters at `vec_params`
/// (and its result) are vectors of `width`; added to the builder's user
/// functions unless an identical one exists.
pub fn vector_user_fun(
    b: &mut Builder,
    id: UserFunId,
    vec_params: &[bool],
    width: u8,
) -> Result<UserFunId, VectorError> {
    let u = b.user_funs[id.0 as usize].clone();
    let (body_text, body) = match not_vectorisable(&u) {
        None => (u.body_text.clone(), u.body.clone()),
        Some(why) => {
            let float = |t: &Type| matches!(t, Type::Scalar(ScalarType::Float));
            let ret_ok = float(&u.ret) || matches!(&u.ret, Type::Tuple(ts) if ts.iter().all(float));
            if !u.params.iter().all(|(_, t)| float(t)) || !ret_ok {
                return Err(why);
            }
            // A body of several statements: vectorised statement by
            // statement, the user functions it calls first.
            let mut callee = |name: &str, which: &[bool]| -> Result<String, VectorError> {
                let Some(i) = b.user_funs.iter().position(|w| w.name == name) else {
                    return Err(VectorError::NotUserFun(name.to_string()));
                };
                let v = vector_user_fun(b, UserFunId(i as u32), which, width)?;
                Ok(b.user_funs[v.0 as usize].name.clone())
            };
            let body = vector_body(&u, vec_params, width, &mut callee)?;
            (crate::ir::c::body_text(&body), body)
        }
    };
    let params: Vec<(String, Type)> = u
        .params
        .iter()
        .zip(vec_params)
        .map(|((n, t), v)| (n.clone(), if *v { vec_of(t, width) } else { t.clone() }))
        .collect();
    let ret = vec_of(&u.ret, width);
    if let Some(i) =
        b.user_funs.iter().position(|w| w.params == params && w.ret == ret && w.body_text == body_text)
    {
        return Ok(UserFunId(i as u32));
    }
    let mut name = format!("{}_vec{width}", u.name);
    let mut k = 2;
    while b.user_funs.iter().any(|w| w.name == name) {
        name = format!("{}_vec{width}_{k}", u.name);
        k += 1;
    }
    b.user_funs.push(UserFun { name, params, ret, body_text, body, ..u });
    Ok(UserFunId(b.user_funs.len() as u32 - 1))
}

fn vec_of(t: &Type, width: u8) -> Type {
    match t {
        Type::Scalar(s) => Type::Vector(*s, width),
        Type::Tuple(ts) => Type::Tuple(ts.iter().map(|t| vec_of(t, width)).collect()),
        other => other.clone(),
    }
}

/// `userfun splat_floatn(x: float): floatn { return (floatn)(x); }`, the
/// vector initial value of a vectorised reduction.
pub fn splat_fun(b: &mut Builder, width: u8) -> UserFunId {
    let name = format!("splat_float{width}");
    if let Some(i) = b.user_funs.iter().position(|u| u.name == name) {
        return UserFunId(i as u32);
    }
    let vt = Type::Vector(ScalarType::Float, width);
    let body_text = format!(" return (float{width})(x); ");
    let body = vec![Stmt::Return(CExpr::VectorLit(vt.clone(), vec![CExpr::Var("x".into())]))];
    let span = crate::ir::Span::default();
    b.user_funs.push(UserFun {
        name,
        params: vec![("x".into(), Type::FLOAT)],
        ret: vt,
        body_text,
        body,
        span,
    });
    UserFunId(b.user_funs.len() as u32 - 1)
}

/// `vect_n(f)` for a function applied to scalars: a unary user function
/// becomes `mapVec(f)`; a user function or lambda over user-function calls
/// gets vectorised user functions where its parameters flow.
pub fn vectorise_fun(
    b: &mut Builder,
    _prog: &Program,
    f: &FunDecl,
    width: u8,
) -> Result<FunDecl, VectorError> {
    match &f.kind {
        FunKind::UserFun(id) => {
            let n = b.user_funs[id.0 as usize].params.len();
            if n == 1 && not_vectorisable(&b.user_funs[id.0 as usize]).is_none() {
                return Ok(FunDecl {
                    id: FunId::FRESH,
                    kind: FunKind::Pattern(Pattern::MapVec { f: Box::new(f.clone()) }),
                    span: f.span,
                });
            }
            let v = vector_user_fun(b, *id, &vec![true; n], width)?;
            Ok(FunDecl { id: FunId::FRESH, kind: FunKind::UserFun(v), span: f.span })
        }
        FunKind::Lambda(_) => {
            // A fresh copy: the original may stay in the program.
            let fresh = b.gen.refresh_fun(f);
            // A refreshed lambda is a lambda.
            let FunKind::Lambda(l) = &fresh.kind else { return Err(VectorError::Pattern) };
            let vars: HashSet<ParamId> = l.params.iter().map(|p| p.id).collect();
            let (body, _) = vectorise_expr(b, &l.body, &vars, width)?;
            let params = l.params.iter().map(|p| crate::ir::Param { ty: None, ..p.clone() }).collect();
            Ok(FunDecl {
                id: FunId::FRESH,
                kind: FunKind::Lambda(Lambda { params, body: Box::new(body) }),
                span: f.span,
            })
        }
        FunKind::Pattern(_) => Err(VectorError::Pattern),
    }
}

/// The vectorised expression and whether it is a vector.
fn vectorise_expr(
    b: &mut Builder,
    e: &Expr,
    vars: &HashSet<ParamId>,
    width: u8,
) -> Result<(Expr, bool), VectorError> {
    match &e.kind {
        ExprKind::Param(p) => Ok((e.clone(), vars.contains(p))),
        ExprKind::Literal(Literal::Float(_) | Literal::Int(_)) => Ok((e.clone(), false)),
        ExprKind::Literal(Literal::Tuple(_)) => Err(VectorError::TupleLiteral),
        // `id` is the same on vectors: a copy (`map-id-nd`'s) vectorises
        // to a copy of vectors.
        ExprKind::Call(f, args) if matches!(f.kind, FunKind::Pattern(Pattern::Id)) => {
            let [a] = args.as_slice() else { return Err(VectorError::NotUserFunCall) };
            let (a, v) = vectorise_expr(b, a, vars, width)?;
            Ok((Expr { id: e.id, kind: ExprKind::Call(f.clone(), vec![a]), span: e.span }, v))
        }
        ExprKind::Call(f, args) => {
            let FunKind::UserFun(id) = &f.kind else {
                return Err(VectorError::NotUserFunCall);
            };
            let mut out = Vec::new();
            let mut which = Vec::new();
            for a in args {
                let (a, v) = vectorise_expr(b, a, vars, width)?;
                out.push(a);
                which.push(v);
            }
            if !which.iter().any(|v| *v) {
                return Ok((e.clone(), false));
            }
            let v = vector_user_fun(b, *id, &which, width)?;
            let call = Expr {
                id: e.id,
                kind: ExprKind::Call(
                    Box::new(FunDecl { id: FunId::FRESH, kind: FunKind::UserFun(v), span: f.span }),
                    out,
                ),
                span: e.span,
            };
            Ok((call, true))
        }
    }
}
