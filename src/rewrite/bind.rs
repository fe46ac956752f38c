//! Bindings and copies of `tile-mm` (`docs/REWRITE.md`, "tile-mm as small
//! steps", step 7): `tile-mm` binds its chunk tiles (`aLoc`, `bLoc`) and a
//! block's values (`aP`) by `let`, where `to-local` and `to-private` put
//! the copies, starts its accumulator from `map(id)` of a `generate` and
//! copies its result by `map_4(id)`.
//!
//! - `let-bind`: an array-valued call bound to a named `let` (a named
//!   parameter survives normalisation; a synthetic one would be
//!   beta-reduced away at once).
//! - `let-float`: a `let` in an argument of a call moved around the call,
//!   so that with `let-bind` an expression can be bound at any enclosing
//!   call (a rule replaces its own position only, so binding a
//!   sub-expression further up takes these two steps).
//! - `let-hoist`: a `let` whose value does not read a map's element moved
//!   out of the map's function (computed once), and `let-inline`, the
//!   inverse of `let-bind`: with `let-float` and `map-fission` they move
//!   an expression of the element out of a map (`tile-mm`'s chunk tiles
//!   `tiles(mt, X)` mapped over before the map over a tile's results).
//! - `map-const-generate`: a map of a constant function is a copy of
//!   generated values (the accumulator's start no longer reads the tile).
//! - `map-id-nd-call`: `map-id-nd` for an n-dimensional call (the copy of
//!   the result before `untile`); `map-id-nd` takes parameters only.

use super::algorithmic::{map_parts, rule, B, R};
use super::rule::{Args, Builder, Rule, RuleError, Site};
use crate::ir::visit::count_uses;
use crate::ir::{Expr, ExprKind, FunDecl, FunKind, Lambda, MapKind, Pattern};
use crate::types::Type;

pub static RULES: [Rule; 6] = [
    rule(BIND, "e   (an array-valued call)", "let v = e in v", &[], m_bind, b_bind),
    rule(
        FLOAT,
        "f(x1, .., let v = e in b, .., xk)   (the first such argument; a let of several values too)",
        "let v = e in f(x1, .., b, .., xk)",
        &[],
        m_float,
        b_float,
    ),
    rule(
        HOIST,
        "map(\\x -> let v = e in b) $ xs   (e without x)",
        "let v = e in map(\\x -> b) $ xs",
        &[],
        m_hoist,
        b_hoist,
    ),
    rule(
        INLINE,
        "let v = e in b   (v read at most once, or e a variable or literal)",
        "b[v := e]",
        &[],
        m_inline,
        b_inline,
    ),
    rule(
        GENERATE,
        "map(\\x -> c) $ xs   (c without x; a high-level map)",
        "map(id) $ generate(len, \\i -> c)",
        &[],
        m_generate,
        b_generate,
    ),
    rule(
        COPY,
        "e   (a call producing an n-dimensional array, n >= 2)",
        "map(...map(id)...) $ e   (n maps)",
        &[],
        m_copy,
        b_copy,
    ),
];

const BIND: &str = "let-bind";
const FLOAT: &str = "let-float";
const HOIST: &str = "let-hoist";
const INLINE: &str = "let-inline";
const GENERATE: &str = "map-const-generate";
const COPY: &str = "map-id-nd-call";

/// The function and arguments of a call; `None` for a literal or a
/// parameter.
fn call_parts(e: &Expr) -> Option<(&FunDecl, &[Expr])> {
    match &e.kind {
        ExprKind::Call(f, args) => Some((f, args)),
        ExprKind::Literal(_) | ExprKind::Param(_) => None,
    }
}

/// Whether `e` is a variable or a literal (copying it repeats no work).
fn is_trivial(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Literal(_) | ExprKind::Param(_) => true,
        ExprKind::Call(..) => false,
    }
}

fn m_bind(s: &Site<'_>) -> R {
    match (call_parts(s.expr), s.ty(s.expr)) {
        (Some(_), Some(Type::Array(..))) => Ok(()),
        (None, _) | (Some(_), None | Some(Type::Scalar(_) | Type::Vector(..) | Type::Tuple(_))) => {
            Err(s.no_match(BIND, "a call producing an array"))
        }
    }
}

/// `let v = e in v` is `e`. The name is made unique from the parameter's
/// id, so that the printed program reads back with the same bindings
/// after `let-float` moves the `let` past other names.
fn b_bind(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    m_bind(s)?;
    let span = s.expr.span;
    let g = &mut b.gen;
    let mut v = g.param("v", None, span);
    v.name = format!("v{}", v.id.0);
    let body = g.var(&v);
    let f = g.fun(FunKind::Lambda(Lambda { params: vec![v], body: Box::new(body) }), span);
    Ok(g.call(f, vec![s.expr.clone()], span))
}

/// The lambda and values of `let v = x in b` (or `let (v1, v2) = (x1, x2)
/// in b`): a call of a lambda with one argument per parameter.
fn let_parts(e: &Expr) -> Option<(&Lambda, &[Expr])> {
    let (f, args) = call_parts(e)?;
    match &f.kind {
        FunKind::Lambda(l) => (l.params.len() == args.len() && !args.is_empty()).then_some((l, args)),
        FunKind::Pattern(_) | FunKind::UserFun(_) => None,
    }
}

fn is_let(e: &Expr) -> bool {
    let_parts(e).is_some()
}

fn m_float(s: &Site<'_>) -> R {
    match call_parts(s.expr) {
        Some((_, args)) if args.iter().any(is_let) => Ok(()),
        Some(_) | None => Err(s.no_match(FLOAT, "a call with an argument `let v = e in b`")),
    }
}

/// All arguments of a call are evaluated in the scope of the call, and `v`
/// (each bound parameter) is visible in `b` only (parameter ids are unique: no other argument
/// reads it), so binding it around the call gives every argument the same
/// value.
fn b_float(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    m_float(s)?;
    let (f, args) = call_parts(s.expr).ok_or_else(|| s.no_match(FLOAT, "a call"))?;
    let i = args.iter().position(is_let).ok_or_else(|| s.no_match(FLOAT, "a let argument"))?;
    let (l, value) = let_parts(&args[i]).ok_or_else(|| s.no_match(FLOAT, "a let"))?;
    let span = s.expr.span;
    let mut inner = args.to_vec();
    inner[i] = (*l.body).clone();
    let call = b.gen.call(f.clone(), inner, span);
    let outer = b.gen.fun(FunKind::Lambda(Lambda { params: l.params.clone(), body: Box::new(call) }), span);
    Ok(b.gen.call(outer, value.to_vec(), span))
}

/// `(kind, x, the let's lambda and values, xs)` of `map(\x -> let v = e
/// in b) $ xs` with `e` not reading `x`.
type Hoist<'a> = (MapKind, &'a crate::ir::Param, &'a Lambda, &'a [Expr], &'a Expr, crate::ir::Span);

fn hoist_parts(e: &Expr) -> Option<Hoist<'_>> {
    let (kind, f, xs, span) = map_parts(e)?;
    let FunKind::Lambda(Lambda { params, body }) = &f.kind else { return None };
    let [x] = params.as_slice() else { return None };
    let (l, values) = let_parts(body)?;
    values.iter().all(|v| count_uses(v, x.id) == 0).then_some((kind, x, l, values, xs, span))
}

fn m_hoist(s: &Site<'_>) -> R {
    hoist_parts(s.expr)
        .map(|_| ())
        .ok_or_else(|| s.no_match(HOIST, "`map(\\x -> let v = e in b) $ xs` with `e` without `x`"))
}

/// `e` does not depend on the element, so computing it once before the
/// map gives every element the same `v`; `xs` is outside `v`'s scope on
/// both sides.
fn b_hoist(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    let (kind, x, l, values, xs, span) = hoist_parts(s.expr).ok_or_else(|| s.no_match(HOIST, "a map"))?;
    let g = &mut b.gen;
    let per = g.fun(FunKind::Lambda(Lambda { params: vec![x.clone()], body: l.body.clone() }), span);
    let m = g.call_pattern(Pattern::Map { kind, f: Box::new(per) }, vec![xs.clone()], span);
    let outer = g.fun(FunKind::Lambda(Lambda { params: l.params.clone(), body: Box::new(m) }), span);
    Ok(g.call(outer, values.to_vec(), span))
}

fn m_inline(s: &Site<'_>) -> R {
    if is_let(s.expr) {
        Ok(())
    } else {
        Err(s.no_match(INLINE, "`let v = e in b` (a call of a lambda)"))
    }
}

/// A pure language: `b` with `v` replaced by `e` has the same value. Only
/// where no work is repeated: `v` read once, or `e` a variable or a
/// literal.
fn b_inline(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    m_inline(s)?;
    let (l, values) = let_parts(s.expr).ok_or_else(|| s.no_match(INLINE, "a let"))?;
    for (p, v) in l.params.iter().zip(values) {
        let uses = count_uses(&l.body, p.id);
        if uses > 1 && !is_trivial(v) {
            let what = format!("`{}` is read {uses} times and its value is not a variable", p.name);
            return Err(RuleError::SideCondition { rule: INLINE, what });
        }
    }
    let by = l.params.iter().map(|p| p.id).zip(values.iter().cloned()).collect();
    Ok(crate::ir::visit::substitute(&l.body, &by, &mut b.gen))
}

/// `(c, xs)` of `map(\x -> c) $ xs` with `c` not reading `x`.
fn generate_parts(e: &Expr) -> Option<(&Expr, &Expr)> {
    let (MapKind::Map, f, xs, _) = map_parts(e)? else { return None };
    let FunKind::Lambda(Lambda { params, body }) = &f.kind else { return None };
    let [x] = params.as_slice() else { return None };
    (count_uses(body, x.id) == 0).then_some((body, xs))
}

fn m_generate(s: &Site<'_>) -> R {
    generate_parts(s.expr)
        .map(|_| ())
        .ok_or_else(|| s.no_match(GENERATE, "`map(\\x -> c) $ xs` with `c` without `x`"))
}

/// Both are `len` copies of `c` (`xs` is not read: only its length
/// matters, which its type gives).
fn b_generate(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    let (c, xs) = generate_parts(s.expr).ok_or_else(|| s.no_match(GENERATE, "a map"))?;
    let len = s.len(xs).ok_or_else(|| s.no_match(GENERATE, "a map over an array"))?;
    let span = s.expr.span;
    let g = &mut b.gen;
    let c = g.refresh_expr(c);
    let f = g.lambda1(span, |_, _| c);
    let values = g.call_pattern(Pattern::Generate { len, f: Box::new(f) }, vec![], span);
    let id = g.lambda1(span, |g, x| g.call_pattern(Pattern::Id, vec![x], span));
    Ok(g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(id) }, vec![values], span))
}

/// The number of array dimensions of a call's value, when it is 2 or more.
fn copy_dims(s: &Site<'_>) -> Option<usize> {
    call_parts(s.expr)?;
    let mut t = s.ty(s.expr)?;
    let mut dims = 0;
    while let Type::Array(e, _) = t {
        dims += 1;
        t = e.as_ref();
    }
    (dims >= 2).then_some(dims)
}

fn m_copy(s: &Site<'_>) -> R {
    copy_dims(s)
        .map(|_| ())
        .ok_or_else(|| s.no_match(COPY, "a call producing an array of 2 or more dimensions"))
}

/// A copy of every element: the same value.
fn b_copy(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    let dims = copy_dims(s).ok_or_else(|| s.no_match(COPY, "an n-dimensional call"))?;
    Ok(super::matmul::copy_nd(&mut b.gen, dims, s.expr.clone(), s.expr.span))
}
