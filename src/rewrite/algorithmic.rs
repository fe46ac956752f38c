//! Algorithmic rules (ICFP 2015, Figure 3): valid for any execution
//! strategy. `f*` below is a fresh copy of `f`. Reductions assume what
//! `reduce` promises: `f` associative and commutative with neutral `z`.

use super::rule::{
    apply_fun, arg, int_arg, pat, view, Args, Builder, Family, ParamSpec, Rule, RuleError, Site, View,
};
use crate::arith::{self, ArithExpr, Range, Var, VarKind};
use crate::ir::{Expr, FunDecl, FunId, IndexFun, MapKind, Pattern, ReduceKind, Span};
use crate::types::Type;

pub(super) type R = Result<(), RuleError>;
pub(super) type B = Result<Expr, RuleError>;

/// An algorithmic rule (also used by `interchange`, the newer ones).
pub(super) const fn rule(
    name: &'static str,
    lhs: &'static str,
    rhs: &'static str,
    params: &'static [ParamSpec],
    matches: fn(&Site<'_>) -> R,
    build: fn(&Site<'_>, &Args, &mut Builder) -> B,
) -> Rule {
    Rule { name, family: Family::Algorithmic, lhs, rhs, params, matches, build }
}

const N: ParamSpec = ParamSpec { name: "n", what: "chunk size" };

pub static RULES: [Rule; 22] = [
    rule(
        "iterate-decompose",
        "iterate(m+n, f)",
        "iterate(m, f) o iterate(n, f*)",
        &[ParamSpec { name: "m", what: "iterations of the outer iterate" }],
        m_iterate,
        b_iterate,
    ),
    rule("map-reorder", "map(f) o gather(g)", "gather(g) o map(f)", &[], m_map_reorder, b_map_reorder),
    rule("reorder-map", "gather(g) o map(f)", "map(f) o gather(g)", &[], m_reorder_map, b_reorder_map),
    rule("split-join", "map(f)", "join o map(map(f)) o split(n)", &[N], m_split_join, b_split_join),
    rule(
        "reduce-partred",
        "reduce(f, z)",
        "reduce(f, z) o partRed(f*, z*, m)",
        &[ParamSpec { name: "m", what: "number of partial results" }],
        m_reduce,
        b_reduce_partred,
    ),
    rule("reduce-to-partred", "reduce(f, z)", "partRed(f, z, 1)", &[], m_reduce, b_reduce_to_partred),
    rule("partred-reduce", "partRed(f, z, 1)", "reduce(f, z)", &[], m_partred_one, b_partred_reduce),
    rule(
        "reorder-stride",
        "partRed(f, z, 1) | reduce(f, z)",
        "partRed(f, z, 1) o gather(\\i -> i / (len/s) + (i % (len/s)) * s)   (Figure 3d then 4c)",
        &[ParamSpec { name: "s", what: "stride" }],
        m_reorder_stride,
        b_reorder_stride,
    ),
    rule(
        "map-stride",
        "map(f)",
        "scatter(r) o map(f) o gather(r)   with r = \\i -> i / (len/s) + (i % (len/s)) * s",
        &[ParamSpec { name: "s", what: "stride" }],
        m_map_stride,
        b_map_stride,
    ),
    rule(
        "partred-split",
        "partRed(f, z, m)",
        "join o map(partRed(f*, z*, m*n/len)) o split(n)",
        &[N],
        m_partred,
        b_partred_split,
    ),
    rule(
        "partred-iterate",
        "partRed(f, z, m)   (len = m * k^n)",
        "iterate(n, join o map(partRed(f*, z*, 1)) o split(k))",
        &[
            ParamSpec { name: "n", what: "iterations" },
            ParamSpec { name: "k", what: "reduction per iteration" },
        ],
        m_partred,
        b_partred_iterate,
    ),
    rule("split-join-id", "split(n) o join   (inner length n)", "id", &[], m_split_join_id, b_split_join_id),
    rule("join-split-id", "join o split(n)", "id", &[], m_join_split_id, b_join_split_id),
    rule("asvector-asscalar-id", "asVector(n) o asScalar   (vectors of n)", "id", &[], m_vec_sca, b_vec_sca),
    rule("asscalar-asvector-id", "asScalar o asVector(n)", "id", &[], m_sca_vec, b_sca_vec),
    rule("map-fusion", "map(f) o map(g)   (same kind)", "map(f o g)", &[], m_map_fusion, b_map_fusion),
    rule(
        "map-fission",
        "map(\\x -> f(.., g(x)))   (x only in g)",
        "map(\\y -> f(.., y)) o map(\\x -> g(x))",
        &[],
        m_map_fission,
        b_map_fission,
    ),
    rule(
        "reduce-map-fusion",
        "reduceSeq(f, z) o mapSeq(g)   (either unrolled)",
        "reduceSeq(\\(acc, x) -> f(acc, g(x)), z)",
        &[],
        m_reduce_map_fusion,
        b_reduce_map_fusion,
    ),
    rule(
        "reduce-flatten",
        "reduce(f, z) o join o map(reduce(f, z) o g)",
        "reduce(f, z) o join o map(g)",
        &[],
        m_reduce_flatten,
        b_reduce_flatten,
    ),
    rule("map-id", "x   (an array: a call or a parameter)", "map(id) $ x", &[], m_map_id, b_map_id),
    rule("map-join", "map(f) o join", "join o map(map(f))", &[], m_map_join, b_map_join),
    rule(
        "slide-tile",
        "slide(size, step)   (u - v = size - step)",
        "join o map(slide(size, step)) o slide(u, v)",
        &[ParamSpec { name: "u", what: "tile size" }, ParamSpec { name: "v", what: "tile step" }],
        m_slide,
        b_slide_tile,
    ),
];

fn iterate_parts<'a>(
    s: &Site<'a>,
    rule: &'static str,
) -> Result<(u32, &'a FunDecl, &'a Expr, Span), RuleError> {
    match view(s.expr) {
        Some((View::Iterate { n, f }, [xs], span)) if n >= 2 => Ok((n, f, xs, span)),
        _ => Err(s.no_match(rule, "`iterate(n, f) $ x` with n >= 2")),
    }
}

fn m_iterate(s: &Site<'_>) -> R {
    iterate_parts(s, "iterate-decompose").map(|_| ())
}

fn b_iterate(s: &Site<'_>, a: &Args, b: &mut Builder) -> B {
    let (n, f, xs, span) = iterate_parts(s, "iterate-decompose")?;
    let m = int_arg("iterate-decompose", a, "m", 1, i64::from(n) - 1)? as u32;
    let inner = Pattern::Iterate { n: n - m, f: Box::new(b.gen.refresh_fun(f)) };
    let inner = b.pattern(inner, vec![xs.clone()], span);
    Ok(b.pattern(Pattern::Iterate { n: m, f: Box::new(f.clone()) }, vec![inner], span))
}

/// `map(f) $ xs` of any kind.
pub fn map_parts(e: &Expr) -> Option<(MapKind, &FunDecl, &Expr, Span)> {
    match view(e) {
        Some((View::Map { kind, f }, [xs], span)) => Some((kind, f, xs, span)),
        _ => None,
    }
}

fn m_map_reorder(s: &Site<'_>) -> R {
    match map_parts(s.expr) {
        Some((_, _, xs, _)) if matches!(view(xs), Some((View::Gather(_), [_], _))) => Ok(()),
        _ => Err(s.no_match("map-reorder", "`map(f) $ gather(g) $ x`")),
    }
}

fn b_map_reorder(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    m_map_reorder(s)?;
    let (kind, f, xs, span) = map_parts(s.expr).ok_or_else(|| s.no_match("map-reorder", "a map"))?;
    let Some((View::Gather(ix), [inner], gspan)) = view(xs) else {
        return Err(s.no_match("map-reorder", "a gather"));
    };
    let m = b.pattern(Pattern::Map { kind, f: Box::new(f.clone()) }, vec![inner.clone()], span);
    Ok(b.pattern(Pattern::Gather(ix.clone()), vec![m], gspan))
}

fn m_reorder_map(s: &Site<'_>) -> R {
    match view(s.expr) {
        Some((View::Gather(_), [xs], _)) if map_parts(xs).is_some() => Ok(()),
        _ => Err(s.no_match("reorder-map", "`gather(g) $ map(f) $ x`")),
    }
}

fn b_reorder_map(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    m_reorder_map(s)?;
    let Some((View::Gather(ix), [xs], gspan)) = view(s.expr) else {
        return Err(s.no_match("reorder-map", "a gather"));
    };
    let (kind, f, inner, span) = map_parts(xs).ok_or_else(|| s.no_match("reorder-map", "a map"))?;
    let g = b.pattern(Pattern::Gather(ix.clone()), vec![inner.clone()], gspan);
    Ok(b.pattern(Pattern::Map { kind, f: Box::new(f.clone()) }, vec![g], span))
}

/// A high-level map, for `rule` (named in the refusal).
fn m_high_map(s: &Site<'_>, rule: &'static str) -> R {
    match map_parts(s.expr) {
        Some((MapKind::Map, ..)) => Ok(()),
        _ => Err(s.no_match(rule, "a high-level `map(f) $ x`")),
    }
}

fn m_split_join(s: &Site<'_>) -> R {
    m_high_map(s, "split-join")
}

fn m_map_stride(s: &Site<'_>) -> R {
    m_high_map(s, "map-stride")
}

fn b_split_join(s: &Site<'_>, a: &Args, b: &mut Builder) -> B {
    m_split_join(s)?;
    let (_, f, xs, span) = map_parts(s.expr).ok_or_else(|| s.no_match("split-join", "a map"))?;
    let n = arg("split-join", a, "n")?;
    let len = s.len(xs).ok_or_else(|| s.no_match("split-join", "a map over an array"))?;
    b.divides("split-join", &n, &len)?;
    Ok(split_map_join(b, f, xs, n, span))
}

/// `join(map(\c -> map(f, c), split(n, xs)))`.
pub fn split_map_join(b: &mut Builder, f: &FunDecl, xs: &Expr, n: ArithExpr, span: Span) -> Expr {
    let split = b.pattern(Pattern::Split(n), vec![xs.clone()], span);
    let f = f.clone();
    let inner = b.gen.lambda1(span, |g, c| {
        g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(f) }, vec![c], span)
    });
    let outer = b.pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(inner) }, vec![split], span);
    b.pattern(Pattern::Join, vec![outer], span)
}

/// `(kind, f, init, xs, span)` of a reduction.
pub(super) fn reduce_parts(e: &Expr) -> Option<(ReduceKind, &FunDecl, &Expr, &Expr, Span)> {
    match view(e) {
        Some((View::Reduce { kind, f }, [z, xs], span)) => Some((kind, f, z, xs, span)),
        _ => None,
    }
}

fn partred_parts(e: &Expr) -> Option<(&FunDecl, &ArithExpr, &Expr, &Expr, Span)> {
    match view(e) {
        Some((View::PartRed { f, m }, [z, xs], span)) => Some((f, m, z, xs, span)),
        _ => None,
    }
}

fn m_reduce(s: &Site<'_>) -> R {
    match reduce_parts(s.expr) {
        Some((ReduceKind::Reduce, _, z, xs, _)) if combines_partials(s, z, xs) => Ok(()),
        _ => Err(s.no_match(
            "reduce-partred",
            "a high-level `reduce(f, z) $ x` whose elements have the type of `z`",
        )),
    }
}

/// Whether a reduction's elements have its accumulator's type, so that
/// `f` can also combine partial results: `reduce`'s precondition (`f`
/// associative over one type). A fold such as `\(acc: float4, j: int) ->
/// ...` has no partial reductions.
pub(super) fn combines_partials(s: &Site<'_>, z: &Expr, xs: &Expr) -> bool {
    match (s.ty(z), s.ty(xs)) {
        (Some(acc), Some(Type::Array(elem, _))) => **elem == *acc,
        _ => false,
    }
}

fn b_reduce_partred(s: &Site<'_>, a: &Args, b: &mut Builder) -> B {
    m_reduce(s)?;
    let (kind, f, z, xs, span) =
        reduce_parts(s.expr).ok_or_else(|| s.no_match("reduce-partred", "a reduce"))?;
    let m = arg("reduce-partred", a, "m")?;
    let len = s.len(xs).ok_or_else(|| s.no_match("reduce-partred", "a reduce over an array"))?;
    b.divides("reduce-partred", &m, &len)?;
    let pr = Pattern::PartRed { f: Box::new(b.gen.refresh_fun(f)), m };
    let z2 = b.gen.refresh_expr(z);
    let inner = b.pattern(pr, vec![z2, xs.clone()], span);
    Ok(b.pattern(Pattern::Reduce { kind, f: Box::new(f.clone()) }, vec![z.clone(), inner], span))
}

fn b_reduce_to_partred(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    m_reduce(s)?;
    let (_, f, z, xs, span) =
        reduce_parts(s.expr).ok_or_else(|| s.no_match("reduce-to-partred", "a reduce"))?;
    let pr = Pattern::PartRed { f: Box::new(f.clone()), m: ArithExpr::Cst(1) };
    Ok(b.pattern(pr, vec![z.clone(), xs.clone()], span))
}

fn m_partred(s: &Site<'_>) -> R {
    partred_parts(s.expr).map(|_| ()).ok_or_else(|| s.no_match("partred", "`partRed(f, z, m) $ x`"))
}

fn m_partred_one(s: &Site<'_>) -> R {
    match partred_parts(s.expr) {
        Some((_, m, ..)) if arith::simplify(m).as_cst() == Some(1) => Ok(()),
        _ => Err(s.no_match("partred-reduce", "`partRed(f, z, 1) $ x`")),
    }
}

fn b_partred_reduce(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    m_partred_one(s)?;
    let (f, _, z, xs, span) =
        partred_parts(s.expr).ok_or_else(|| s.no_match("partred-reduce", "a partRed"))?;
    let r = Pattern::Reduce { kind: ReduceKind::Reduce, f: Box::new(f.clone()) };
    Ok(b.pattern(r, vec![z.clone(), xs.clone()], span))
}

fn m_reorder_stride(s: &Site<'_>) -> R {
    match (reduce_parts(s.expr), partred_parts(s.expr)) {
        (Some(_), _) => Ok(()),
        (_, Some(_)) => m_partred_one(s),
        _ => Err(s.no_match("reorder-stride", "`reduce(f, z) $ x` or `partRed(f, z, 1) $ x`")),
    }
}

/// `\i -> i / (len/s) + (i % (len/s)) * s`: element `i` of thread `i % (len/s)`
/// after a later `split(len/s)` is `s` apart from its neighbour's.
pub fn stride_fun(len: &ArithExpr, s: &ArithExpr) -> IndexFun {
    let i = ArithExpr::Var(Var { name: "i".into(), kind: VarKind::Index, range: Range::natural() });
    let chunk = arith::simplify(&ArithExpr::div(len.clone(), s.clone()));
    let body = ArithExpr::add(
        ArithExpr::div(i.clone(), chunk.clone()),
        ArithExpr::mul(ArithExpr::modulo(i, chunk), s.clone()),
    );
    IndexFun { param: "i".into(), body }
}

fn b_reorder_stride(s: &Site<'_>, a: &Args, b: &mut Builder) -> B {
    m_reorder_stride(s)?;
    let (p, z, xs, span) = match (reduce_parts(s.expr), partred_parts(s.expr)) {
        (Some((kind, f, z, xs, span)), _) => (Pattern::Reduce { kind, f: Box::new(f.clone()) }, z, xs, span),
        (_, Some((f, m, z, xs, span))) => {
            (Pattern::PartRed { f: Box::new(f.clone()), m: m.clone() }, z, xs, span)
        }
        _ => return Err(s.no_match("reorder-stride", "a reduction")),
    };
    let st = arg("reorder-stride", a, "s")?;
    let len = s.len(xs).ok_or_else(|| s.no_match("reorder-stride", "a reduction of an array"))?;
    b.divides("reorder-stride", &st, &len)?;
    let g = b.pattern(Pattern::Gather(stride_fun(&len, &st)), vec![xs.clone()], span);
    Ok(b.pattern(p, vec![z.clone(), g], span))
}

/// `map(f) $ x` computed in the order of `reorder-stride`'s gather and
/// written back in place by a scatter of the same index function: after
/// a `split(len/s)` of the middle map, neighbouring chunks hold
/// neighbouring elements (a work-item per chunk then reads and writes
/// coalesced, its elements `s` apart).
fn b_map_stride(s: &Site<'_>, a: &Args, b: &mut Builder) -> B {
    m_map_stride(s)?;
    let (kind, f, xs, span) = map_parts(s.expr).ok_or_else(|| s.no_match("map-stride", "a map"))?;
    let st = arg("map-stride", a, "s")?;
    let len = s.len(xs).ok_or_else(|| s.no_match("map-stride", "a map over an array"))?;
    b.divides("map-stride", &st, &len)?;
    let r = stride_fun(&len, &st);
    let g = b.pattern(Pattern::Gather(r.clone()), vec![xs.clone()], span);
    let m = b.pattern(Pattern::Map { kind, f: Box::new(f.clone()) }, vec![g], span);
    Ok(b.pattern(Pattern::Scatter(r), vec![m], span))
}

fn b_partred_split(s: &Site<'_>, a: &Args, b: &mut Builder) -> B {
    let (f, m, z, xs, span) =
        partred_parts(s.expr).ok_or_else(|| s.no_match("partred-split", "a partRed"))?;
    let n = arg("partred-split", a, "n")?;
    let len = s.len(xs).ok_or_else(|| s.no_match("partred-split", "a partRed of an array"))?;
    b.divides("partred-split", &n, &len)?;
    // Each of the len/n chunks yields m / (len/n) results.
    let chunks = arith::simplify(&ArithExpr::div(len.clone(), n.clone()));
    b.divides("partred-split", &chunks, m)?;
    let m2 = arith::simplify(&ArithExpr::div(m.clone(), chunks));
    let split = b.pattern(Pattern::Split(n), vec![xs.clone()], span);
    let (f, z) = (b.gen.refresh_fun(f), z.clone());
    let body = b.gen.lambda1(span, |g, c| {
        let z = g.refresh_expr(&z);
        g.call_pattern(Pattern::PartRed { f: Box::new(f), m: m2 }, vec![z, c], span)
    });
    let map = b.pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(body) }, vec![split], span);
    Ok(b.pattern(Pattern::Join, vec![map], span))
}

fn b_partred_iterate(s: &Site<'_>, a: &Args, b: &mut Builder) -> B {
    let (f, m, z, xs, span) =
        partred_parts(s.expr).ok_or_else(|| s.no_match("partred-iterate", "a partRed"))?;
    let n = int_arg("partred-iterate", a, "n", 1, 64)?;
    let k = int_arg("partred-iterate", a, "k", 2, 1 << 20)?;
    let len = s.len(xs).ok_or_else(|| s.no_match("partred-iterate", "a partRed of an array"))?;
    let want = ArithExpr::mul(m.clone(), ArithExpr::Cst(k.pow(n as u32)));
    b.equal("partred-iterate", &len, &want, "the length must be m * k^n")?;
    let (f, z) = (f.clone(), z.clone());
    let body = b.gen.lambda1(span, |g, p| {
        let split = g.call_pattern(Pattern::Split(ArithExpr::Cst(k)), vec![p], span);
        let red = g.lambda1(span, |g, c| {
            let z = g.refresh_expr(&z);
            let f = g.refresh_fun(&f);
            g.call_pattern(Pattern::PartRed { f: Box::new(f), m: ArithExpr::Cst(1) }, vec![z, c], span)
        });
        let map = g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(red) }, vec![split], span);
        g.call_pattern(Pattern::Join, vec![map], span)
    });
    Ok(b.pattern(Pattern::Iterate { n: n as u32, f: Box::new(body) }, vec![xs.clone()], span))
}

fn m_split_join_id(s: &Site<'_>) -> R {
    if let Some((View::Split(n), [x], _)) = view(s.expr) {
        if let Some((View::Join, [y], _)) = view(x) {
            if let Some(Type::Array(inner, _)) = s.ty(y) {
                if let Type::Array(_, m) = inner.as_ref() {
                    let d = arith::simplify(&ArithExpr::sub(m.clone(), n.clone()));
                    if d.as_cst() == Some(0) || arith::prove_eq(m, n) {
                        return Ok(());
                    }
                }
            }
        }
    }
    Err(s.no_match("split-join-id", "`split(n) $ join $ x` with rows of length n"))
}

fn b_split_join_id(s: &Site<'_>, _: &Args, _: &mut Builder) -> B {
    m_split_join_id(s)?;
    inner2(s.expr).ok_or_else(|| s.no_match("split-join-id", "two calls"))
}

/// `x` of `p(q(x))`.
fn inner2(e: &Expr) -> Option<Expr> {
    let (_, [x], _) = view(e)? else { return None };
    let (_, [y], _) = view(x)? else { return None };
    Some(y.clone())
}

fn m_join_split_id(s: &Site<'_>) -> R {
    match view(s.expr) {
        Some((View::Join, [x], _)) if matches!(view(x), Some((View::Split(_), [_], _))) => Ok(()),
        _ => Err(s.no_match("join-split-id", "`join $ split(n) $ x`")),
    }
}

fn b_join_split_id(s: &Site<'_>, _: &Args, _: &mut Builder) -> B {
    m_join_split_id(s)?;
    inner2(s.expr).ok_or_else(|| s.no_match("join-split-id", "two calls"))
}

fn m_vec_sca(s: &Site<'_>) -> R {
    if let Some((View::AsVector(n), [x], _)) = view(s.expr) {
        if let Some((View::AsScalar, [y], _)) = view(x) {
            if let Some(Type::Array(e, _)) = s.ty(y) {
                if matches!(e.as_ref(), Type::Vector(_, w) if *w == n) {
                    return Ok(());
                }
            }
        }
    }
    Err(s.no_match("asvector-asscalar-id", "`asVector(n) $ asScalar $ x` with x of n-vectors"))
}

fn b_vec_sca(s: &Site<'_>, _: &Args, _: &mut Builder) -> B {
    m_vec_sca(s)?;
    inner2(s.expr).ok_or_else(|| s.no_match("asvector-asscalar-id", "two calls"))
}

fn m_sca_vec(s: &Site<'_>) -> R {
    match view(s.expr) {
        Some((View::AsScalar, [x], _)) if matches!(view(x), Some((View::AsVector(_), [_], _))) => Ok(()),
        _ => Err(s.no_match("asscalar-asvector-id", "`asScalar $ asVector(n) $ x`")),
    }
}

fn b_sca_vec(s: &Site<'_>, _: &Args, _: &mut Builder) -> B {
    m_sca_vec(s)?;
    inner2(s.expr).ok_or_else(|| s.no_match("asscalar-asvector-id", "two calls"))
}

fn m_map_fusion(s: &Site<'_>) -> R {
    if let Some((k1, _, xs, _)) = map_parts(s.expr) {
        if let Some((k2, ..)) = map_parts(xs) {
            if k1 == k2 {
                return Ok(());
            }
        }
    }
    Err(s.no_match("map-fusion", "`map(f) $ map(g) $ x` with maps of the same kind"))
}

fn b_map_fusion(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    m_map_fusion(s)?;
    let (kind, f, xs, span) = map_parts(s.expr).ok_or_else(|| s.no_match("map-fusion", "a map"))?;
    let (_, g, ys, _) = map_parts(xs).ok_or_else(|| s.no_match("map-fusion", "a map"))?;
    let (f, g) = (f.clone(), g.clone());
    let fg = b.gen.lambda1(span, |gen, p| {
        let inner = apply_fun(gen, &g, vec![p], span);
        apply_fun(gen, &f, vec![inner], span)
    });
    Ok(b.pattern(Pattern::Map { kind, f: Box::new(fg) }, vec![ys.clone()], span))
}

/// `map(\x -> F(a, .., e)) $ xs` where `x` occurs in the last argument
/// `e` only (not in `F`, not in the other arguments) and `e` is more than
/// `x` itself: `(x, F, a.., e, kind, xs, span)`.
type Fission<'a> = (&'a crate::ir::Param, &'a FunDecl, &'a [Expr], &'a Expr, MapKind, &'a Expr, Span);

fn fission_parts<'a>(s: &Site<'a>) -> Result<Fission<'a>, RuleError> {
    let no =
        || s.no_match("map-fission", "`map(\\x -> f(.., g(x))) $ xs` with `x` only in the last argument");
    let (kind, f, xs, span) = map_parts(s.expr).ok_or_else(no)?;
    let crate::ir::FunKind::Lambda(l) = &f.kind else { return Err(no()) };
    let [x] = l.params.as_slice() else { return Err(no()) };
    let crate::ir::ExprKind::Call(outer, args) = &l.body.kind else { return Err(no()) };
    let Some((last, rest)) = args.split_last() else { return Err(no()) };
    let uses = |e: &Expr| crate::ir::visit::count_uses(e, x.id) > 0;
    let is_x = matches!(last.kind, crate::ir::ExprKind::Param(p) if p == x.id);
    if is_x || !uses(last) || rest.iter().any(uses) || crate::ir::visit::fun_uses(outer, x.id) {
        return Err(no());
    }
    Ok((x, outer, rest, last, kind, xs, span))
}

fn m_map_fission(s: &Site<'_>) -> R {
    fission_parts(s).map(|_| ())
}

/// The inverse of `map-fusion`: the inner map computes `g(x)` for every
/// element, the outer applies `f` to each result (the other arguments
/// mention no element, so they are the same for every element).
fn b_map_fission(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    let (x, outer, rest, last, kind, xs, span) = fission_parts(s)?;
    let inner = FunDecl {
        id: FunId::FRESH,
        kind: crate::ir::FunKind::Lambda(crate::ir::Lambda {
            params: vec![x.clone()],
            body: Box::new(last.clone()),
        }),
        span,
    };
    let inner = b.pattern(Pattern::Map { kind, f: Box::new(inner) }, vec![xs.clone()], span);
    let (outer, rest) = (outer.clone(), rest.to_vec());
    let f = b.gen.lambda1(span, |g, y| {
        let mut args = rest;
        args.push(y);
        g.call(outer, args, span)
    });
    Ok(b.pattern(Pattern::Map { kind, f: Box::new(f) }, vec![inner], span))
}

/// Either may be unrolled: the fused reduction keeps the reduction's kind
/// (the map's loop no longer exists).
fn m_reduce_map_fusion(s: &Site<'_>) -> R {
    if let Some((ReduceKind::Seq | ReduceKind::SeqUnroll, _, _, xs, _)) = reduce_parts(s.expr) {
        if let Some((MapKind::Seq | MapKind::SeqUnroll, ..)) = map_parts(xs) {
            return Ok(());
        }
    }
    Err(s.no_match("reduce-map-fusion", "`reduceSeq(f, z) $ mapSeq(g) $ x` (either unrolled)"))
}

fn b_reduce_map_fusion(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    m_reduce_map_fusion(s)?;
    let (kind, f, z, xs, span) =
        reduce_parts(s.expr).ok_or_else(|| s.no_match("reduce-map-fusion", "a reduce"))?;
    let (_, g, ys, _) = map_parts(xs).ok_or_else(|| s.no_match("reduce-map-fusion", "a map"))?;
    let acc = b.gen.synthetic_param(span);
    let x = b.gen.synthetic_param(span);
    let (va, vx) = (b.gen.var(&acc), b.gen.var(&x));
    let gx = apply_fun(&mut b.gen, g, vec![vx], span);
    let body = apply_fun(&mut b.gen, f, vec![va, gx], span);
    let lam = FunDecl {
        id: FunId::FRESH,
        kind: crate::ir::FunKind::Lambda(crate::ir::Lambda { params: vec![acc, x], body: Box::new(body) }),
        span,
    };
    Ok(b.pattern(Pattern::Reduce { kind, f: Box::new(lam) }, vec![z.clone(), ys.clone()], span))
}

fn m_map_id(s: &Site<'_>) -> R {
    // A parameter too: `reduce(f, z) $ xs` gets its map this way.
    let is_data = matches!(s.expr.kind, crate::ir::ExprKind::Call(..) | crate::ir::ExprKind::Param(_));
    match s.ty(s.expr) {
        Some(Type::Array(..)) if is_data => Ok(()),
        _ => Err(s.no_match("map-id", "a call or parameter producing an array")),
    }
}

fn b_map_id(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    m_map_id(s)?;
    let span = s.expr.span;
    let id = b.gen.lambda1(span, |g, x| g.call_pattern(Pattern::Id, vec![x], span));
    Ok(b.pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(id) }, vec![s.expr.clone()], span))
}

fn m_map_join(s: &Site<'_>) -> R {
    match map_parts(s.expr) {
        Some((MapKind::Map, _, xs, _)) if matches!(view(xs), Some((View::Join, [_], _))) => Ok(()),
        _ => Err(s.no_match("map-join", "`map(f) $ join $ x`")),
    }
}

fn b_map_join(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    m_map_join(s)?;
    let (_, f, xs, span) = map_parts(s.expr).ok_or_else(|| s.no_match("map-join", "a map"))?;
    let Some((_, [rows], _)) = view(xs) else { return Err(s.no_match("map-join", "a join")) };
    let f = f.clone();
    let inner = b.gen.lambda1(span, |g, r| {
        g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(f) }, vec![r], span)
    });
    let outer = b.pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(inner) }, vec![rows.clone()], span);
    Ok(b.pattern(Pattern::Join, vec![outer], span))
}

fn m_slide(s: &Site<'_>) -> R {
    match view(s.expr) {
        Some((View::Slide { .. }, [_], _)) => Ok(()),
        _ => Err(s.no_match("slide-tile", "`slide(size, step) $ x`")),
    }
}

/// A `slide(size, step)` by its two parameters.
#[derive(Clone, Copy)]
pub struct Slides<'a> {
    pub size: &'a ArithExpr,
    pub step: &'a ArithExpr,
}

/// Checks the overlapped-tiling constraint (CGO 2018, Section 4) for tiles
/// `slide(u, v)` of windows `slide(size, step)` over `len` elements: the
/// tiles overlap by what neighbouring windows share (`u - v = size -
/// step`), tile starts are window starts (`step | v`), and the tiles cover
/// the input exactly (`v | len - u`).
pub fn check_tiles(
    b: &mut Builder,
    rule: &'static str,
    windows: Slides<'_>,
    tiles: Slides<'_>,
    len: &ArithExpr,
) -> Result<(), RuleError> {
    let Slides { size, step } = windows;
    let Slides { size: u, step: v } = tiles;
    let side = |what: String| RuleError::SideCondition { rule, what };
    let (uc, sc) = (arith::simplify(u).as_cst(), arith::simplify(size).as_cst());
    if let (Some(uc), Some(sc)) = (uc, sc) {
        if uc < sc {
            return Err(side(format!("the tile size u = {uc} is smaller than the window size {sc}")));
        }
    }
    let lhs = ArithExpr::sub(u.clone(), v.clone());
    let rhs = ArithExpr::sub(size.clone(), step.clone());
    if arith::simplify(&ArithExpr::sub(lhs.clone(), rhs.clone())).as_cst() != Some(0) {
        return Err(side(format!(
            "u - v = {} but size - step = {}",
            arith::simplify(&lhs),
            arith::simplify(&rhs)
        )));
    }
    b.divides(rule, step, v)?;
    b.divides(rule, v, &arith::simplify(&ArithExpr::sub(len.clone(), u.clone())))
}

fn b_slide_tile(s: &Site<'_>, a: &Args, b: &mut Builder) -> B {
    let Some((View::Slide { size, step }, [xs], span)) = view(s.expr) else {
        return Err(s.no_match("slide-tile", "`slide(size, step) $ x`"));
    };
    let (u, v) = (arg("slide-tile", a, "u")?, arg("slide-tile", a, "v")?);
    let len = s.len(xs).ok_or_else(|| s.no_match("slide-tile", "a slide over an array"))?;
    check_tiles(b, "slide-tile", Slides { size, step }, Slides { size: &u, step: &v }, &len)?;
    let tiles = b.pattern(Pattern::Slide { size: u, step: v }, vec![xs.clone()], span);
    let win = pat(Pattern::Slide { size: size.clone(), step: step.clone() }, span);
    let inner = b.gen.lambda1(span, |g, t| g.call(win, vec![t], span));
    let map = b.pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(inner) }, vec![tiles], span);
    Ok(b.pattern(Pattern::Join, vec![map], span))
}

/// `(outer reduce parts, lambda param, inner body e, xs)` of
/// `reduce(f, z, join(map(\c -> reduce(f, z, e), xs)))`.
fn flatten_parts<'a>(s: &Site<'a>) -> Option<(&'a Expr, &'a crate::ir::Lambda, &'a Expr, Span)> {
    let (ReduceKind::Reduce, f, z, xs, span) = reduce_parts(s.expr)? else { return None };
    let (View::Join, [m], _) = view(xs)? else { return None };
    let (MapKind::Map, g, rows, _) = map_parts(m)? else { return None };
    let crate::ir::FunKind::Lambda(l) = &g.kind else { return None };
    let (ReduceKind::Reduce, f2, z2, e, _) = reduce_parts(&l.body)? else { return None };
    let same_f = crate::ir::equiv::canonical_fun(s.prog, f) == crate::ir::equiv::canonical_fun(s.prog, f2);
    let same_z = crate::ir::equiv::expr_eq(s.prog, z, z2);
    (l.params.len() == 1 && same_f && same_z).then_some((rows, l, e, span))
}

fn m_reduce_flatten(s: &Site<'_>) -> R {
    flatten_parts(s).map(|_| ()).ok_or_else(|| {
        s.no_match("reduce-flatten", "`reduce(f, z) $ join $ map(\\c -> reduce(f, z) $ e) $ x`")
    })
}

/// A reduction of partial reductions is the reduction of their inputs
/// (`f` associative with neutral `z`).
fn b_reduce_flatten(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    let (rows, l, e, span) =
        flatten_parts(s).ok_or_else(|| s.no_match("reduce-flatten", "a reduce of reduces"))?;
    let Some((View::Reduce { kind, f }, [z, _], _)) = view(s.expr) else {
        return Err(s.no_match("reduce-flatten", "a reduce"));
    };
    let lam = FunDecl {
        id: FunId::FRESH,
        kind: crate::ir::FunKind::Lambda(crate::ir::Lambda {
            params: l.params.clone(),
            body: Box::new(e.clone()),
        }),
        span,
    };
    let m = b.pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(lam) }, vec![rows.clone()], span);
    let j = b.pattern(Pattern::Join, vec![m], span);
    Ok(b.pattern(Pattern::Reduce { kind, f: Box::new(f.clone()) }, vec![z.clone(), j], span))
}
