//! Zips in the operands of `tile-mm`'s steps (`docs/REWRITE.md`, "tile-mm
//! as small steps", step 5). After the fold over `k` has moved outside a
//! tile's results, its element `k` is the matrix of all pairs `(a_k,
//! b_k)`; `tile-mm` reads column `k` of both row groups instead and forms
//! the outer product itself. The IR has no tuple constructor (`zip` makes
//! every pair), so these rules move pairs into the parameters of the
//! lambdas that read them:
//!
//! - `outer-zip`: the matrix of pairs of two columns, as a map over one
//!   column inside a map over the other (the pairs of a row zip a
//!   broadcast value with the other column).
//! - `split-zip`: chunks of a zip are zips of chunks (the chunks of `kc`
//!   steps of both operands).
//! - `zip-map-fusion`: an element-wise map that reads a zip of which one
//!   component is a map applies that map's function itself.
//! - `zip-flatten`: a zip inside a zip is flattened when the pair is read
//!   only through `get`.
//! - `zip-unused`: a component the element-wise map never reads is
//!   dropped.

use super::algorithmic::{map_parts, rule, B, R};
use super::rule::{apply_fun, as_pattern, view, Args, Builder, Rule, Site, View};
use crate::ir::visit::{self, count_uses, Path};
use crate::ir::{Expr, ExprKind, FunDecl, FunId, FunKind, Lambda, MapKind, Param, ParamId, Pattern, Span};

pub static RULES: [Rule; 5] = [
    rule(
        OUTER,
        "transpose $ map(\\a -> transpose $ map(\\b -> zip(a, b)) $ bs) $ as   (bs without a)",
        "map(\\(u, v) -> map(\\x -> zip(map(\\_ -> x) $ v, v)) $ u) $ zip(transpose $ as, transpose $ bs)",
        &[],
        m_outer,
        b_outer,
    ),
    rule(
        SPLIT,
        "split(n) $ zip(x1, .., xk)",
        "map(\\(u1, .., uk) -> zip(u1, .., uk)) $ zip(split(n) $ x1, .., split(n) $ xk)",
        &[],
        m_split,
        b_split,
    ),
    rule(
        FUSION,
        "map(\\(p1, .., pk) -> e) $ zip(x1, .., map(g) $ y, .., xk)   (high-level maps)",
        "map(\\(p1, .., q, .., pk) -> e[pi := g(q)]) $ zip(x1, .., y, .., xk)   (the first such component)",
        &[],
        m_fusion,
        b_fusion,
    ),
    rule(
        FLATTEN,
        "map(\\(p1, .., q, .., pk) -> e) $ zip(x1, .., zip(y1, .., ym), .., xk)   (q only in get(j, q))",
        "map(\\(p1, .., r1, .., rm, .., pk) -> e[get(j, q) := rj]) $ zip(x1, .., y1, .., ym, .., xk)",
        &[],
        m_flatten,
        b_flatten,
    ),
    rule(
        UNUSED,
        "map(\\(p1, .., pk) -> e) $ zip(x1, .., xk)   (pi not in e)",
        "the same without pi and xi (k = 2: map(\\pj -> e) $ xj)",
        &[],
        m_unused,
        b_unused,
    ),
];

const OUTER: &str = "outer-zip";
const SPLIT: &str = "split-zip";
const FUSION: &str = "zip-map-fusion";
const FLATTEN: &str = "zip-flatten";
const UNUSED: &str = "zip-unused";

fn is_param(e: &Expr, p: &Param) -> bool {
    matches!(e.kind, ExprKind::Param(q) if q == p.id)
}

/// `(param, body)` of a lambda of one parameter.
fn lambda1(f: &FunDecl) -> Option<(&Param, &Expr)> {
    match &f.kind {
        FunKind::Lambda(Lambda { params, body }) => match params.as_slice() {
            [p] => Some((p, body)),
            _ => None,
        },
        FunKind::Pattern(_) | FunKind::UserFun(_) => None,
    }
}

/// `(as, bs, span)` of `transpose $ map(\a -> transpose $ map(\b -> zip(a,
/// b)) $ bs) $ as` (high-level maps, `bs` not using `a`).
fn outer_parts(e: &Expr) -> Option<(&Expr, &Expr, Span)> {
    let (View::Transpose, [m], span) = view(e)? else { return None };
    let (MapKind::Map, fa, xs, _) = map_parts(m)? else { return None };
    let (a, body) = lambda1(fa)?;
    let (View::Transpose, [m2], _) = view(body)? else { return None };
    let (MapKind::Map, fb, ys, _) = map_parts(m2)? else { return None };
    let (b, pair) = lambda1(fb)?;
    let (Pattern::Zip(2), [x, y], _) = as_pattern(pair)? else { return None };
    (is_param(x, a) && is_param(y, b) && count_uses(ys, a.id) == 0).then_some((xs, ys, span))
}

fn m_outer(s: &Site<'_>) -> R {
    outer_parts(s.expr).map(|_| ()).ok_or_else(|| {
        s.no_match(
            OUTER,
            "`transpose $ map(\\a -> transpose $ map(\\b -> zip(a, b)) $ bs) $ as`, `bs` without `a`",
        )
    })
}

/// Element `[k][i][j]` of both sides is `(as[i][k], bs[j][k])`: on the
/// right, element `k` of the zip is column `k` of both (`u`, `v`), row
/// `i` pairs `u[i]` (broadcast) with every `v[j]`. The rows of `as` and
/// `bs` have one length (they are zipped on the left).
fn b_outer(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    let (xs, ys, span) = outer_parts(s.expr).ok_or_else(|| s.no_match(OUTER, "an outer zip"))?;
    let g = &mut b.gen;
    let ta = g.call_pattern(Pattern::Transpose, vec![xs.clone()], span);
    let tb = g.call_pattern(Pattern::Transpose, vec![ys.clone()], span);
    let cols = g.call_pattern(Pattern::Zip(2), vec![ta, tb], span);
    let (u, v, x) = (g.synthetic_param(span), g.synthetic_param(span), g.synthetic_param(span));
    let vx = g.var(&x);
    let konst = g.lambda1(span, |_, _| vx);
    let (v1, v2) = (g.var(&v), g.var(&v));
    let bcast = g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(konst) }, vec![v1], span);
    let row = g.call_pattern(Pattern::Zip(2), vec![bcast, v2], span);
    let per_x = g.fun(FunKind::Lambda(Lambda { params: vec![x], body: Box::new(row) }), span);
    let uv = g.var(&u);
    let rows = g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(per_x) }, vec![uv], span);
    let per_k = g.fun(FunKind::Lambda(Lambda { params: vec![u, v], body: Box::new(rows) }), span);
    Ok(g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(per_k) }, vec![cols], span))
}

fn m_split(s: &Site<'_>) -> R {
    match view(s.expr) {
        Some((View::Split(_), [z], _)) if matches!(as_pattern(z), Some((Pattern::Zip(_), ..))) => Ok(()),
        _ => Err(s.no_match(SPLIT, "`split(n) $ zip(x1, .., xk)`")),
    }
}

/// Chunk `i` of the zip pairs the elements `i*n .. i*n + n-1` of every
/// array, which are chunk `i` of each. The arrays have one length, so
/// `n` divides all of them when it divides the zip's.
fn b_split(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    let Some((View::Split(n), [z], span)) = view(s.expr) else { return Err(s.no_match(SPLIT, "a split")) };
    let Some((Pattern::Zip(k), xs, _)) = as_pattern(z) else { return Err(s.no_match(SPLIT, "a zip")) };
    let g = &mut b.gen;
    let chunks: Vec<Expr> =
        xs.iter().map(|x| g.call_pattern(Pattern::Split(n.clone()), vec![x.clone()], span)).collect();
    let outer = g.call_pattern(Pattern::Zip(*k), chunks, span);
    let params: Vec<Param> = (0..*k).map(|_| g.synthetic_param(span)).collect();
    let vars = params.iter().map(|p| g.var(p)).collect();
    let inner = g.call_pattern(Pattern::Zip(*k), vars, span);
    let f = g.fun(FunKind::Lambda(Lambda { params, body: Box::new(inner) }), span);
    Ok(g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(f) }, vec![outer], span))
}

/// `map(\(p1, .., pk) -> e) $ zip(x1, .., xk)` (a high-level map whose
/// lambda takes the zip's components as parameters).
struct ZipMap<'a> {
    params: &'a [Param],
    body: &'a Expr,
    xs: &'a [Expr],
    span: Span,
}

fn zip_map(e: &Expr) -> Option<ZipMap<'_>> {
    let (MapKind::Map, f, z, span) = map_parts(e)? else { return None };
    let FunKind::Lambda(Lambda { params, body }) = &f.kind else { return None };
    let (Pattern::Zip(k), xs, _) = as_pattern(z)? else { return None };
    (params.len() == *k && xs.len() == *k).then_some(ZipMap { params, body, xs, span })
}

/// The map over the zip of `xs` by `\(params) -> body`.
fn rebuild(g: &mut crate::ir::IdGen, params: Vec<Param>, body: Expr, xs: Vec<Expr>, span: Span) -> Expr {
    let data = if xs.len() == 1 { xs } else { vec![g.call_pattern(Pattern::Zip(xs.len()), xs, span)] };
    let f =
        FunDecl { id: FunId::FRESH, kind: FunKind::Lambda(Lambda { params, body: Box::new(body) }), span };
    let f = g.refresh_fun(&f);
    g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(f) }, data, span)
}

/// The first component of the zip that is a high-level map, with its
/// function and array.
fn fusion_parts(e: &Expr) -> Option<(ZipMap<'_>, usize, &FunDecl, &Expr)> {
    let zm = zip_map(e)?;
    let (i, g, y) = zm.xs.iter().enumerate().find_map(|(i, x)| match map_parts(x) {
        Some((MapKind::Map, g, y, _)) => Some((i, g, y)),
        _ => None,
    })?;
    Some((zm, i, g, y))
}

fn m_fusion(s: &Site<'_>) -> R {
    fusion_parts(s.expr).map(|_| ()).ok_or_else(|| {
        s.no_match(FUSION, "`map(\\(p1, .., pk) -> e) $ zip(.., map(g) $ y, ..)` (high-level maps)")
    })
}

/// Element `j` of the map's result is `e` with `pi = g(y[j])` on both
/// sides. `pi` read more than once is bound by a `let` (`(\pi -> e)(g(q))`)
/// so that `g` is not computed twice.
fn b_fusion(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    let (zm, i, gf, y) = fusion_parts(s.expr).ok_or_else(|| s.no_match(FUSION, "a map over a zip"))?;
    let g = &mut b.gen;
    let q = g.synthetic_param(zm.span);
    let vq = g.var(&q);
    let gq = apply_fun(g, gf, vec![vq], zm.span);
    let pi = &zm.params[i];
    let body = if count_uses(zm.body, pi.id) <= 1 {
        visit::substitute(zm.body, &[(pi.id, gq)].into(), g)
    } else {
        let f = g.fun(
            FunKind::Lambda(Lambda { params: vec![pi.clone()], body: Box::new(zm.body.clone()) }),
            zm.span,
        );
        g.call(f, vec![gq], zm.span)
    };
    let mut params = zm.params.to_vec();
    params[i] = q;
    let mut xs = zm.xs.to_vec();
    xs[i] = y.clone();
    Ok(rebuild(g, params, body, xs, zm.span))
}

/// The paths in `body` of `get(j, q)` for `j < m`, when those are the only
/// uses of `q`.
fn get_uses(body: &Expr, q: ParamId, m: usize) -> Option<Vec<Vec<Path>>> {
    let mut found = vec![Vec::new(); m];
    for (path, e) in visit::expr_positions(body) {
        if let Some((Pattern::Get(j), [t], _)) = as_pattern(e) {
            if *j < m && matches!(t.kind, ExprKind::Param(p) if p == q) {
                found[*j].push(path);
            }
        }
    }
    (found.iter().map(Vec::len).sum::<usize>() == count_uses(body, q)).then_some(found)
}

/// The first component that is a zip whose pair the lambda reads only
/// through `get`: its index, the zip's arrays and where each `get(j, q)` is.
type Flatten<'a> = (ZipMap<'a>, usize, &'a [Expr], Vec<Vec<Path>>);

fn flatten_parts(e: &Expr) -> Option<Flatten<'_>> {
    let zm = zip_map(e)?;
    let (i, ys, uses) = zm.xs.iter().enumerate().find_map(|(i, x)| match as_pattern(x) {
        Some((Pattern::Zip(m), ys, _)) => Some((i, ys, get_uses(zm.body, zm.params[i].id, *m)?)),
        _ => None,
    })?;
    Some((zm, i, ys, uses))
}

fn m_flatten(s: &Site<'_>) -> R {
    flatten_parts(s.expr).map(|_| ()).ok_or_else(|| {
        s.no_match(
            FLATTEN,
            "`map(\\(.., q, ..) -> e) $ zip(.., zip(y1, .., ym), ..)` with `q` only in `get(j, q)`",
        )
    })
}

/// Component `i` of element `j` is the tuple `(y1[j], .., ym[j])`, and `e`
/// reads it only as its parts, which the flat zip passes as `r1 .. rm`.
fn b_flatten(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    let (zm, i, ys, uses) = flatten_parts(s.expr).ok_or_else(|| s.no_match(FLATTEN, "a map over a zip"))?;
    let g = &mut b.gen;
    let rs: Vec<Param> = ys.iter().map(|_| g.synthetic_param(zm.span)).collect();
    let mut body = zm.body.clone();
    for (r, paths) in rs.iter().zip(&uses) {
        for path in paths {
            let v = g.var(r);
            body = visit::replace_at(&body, path, v).map_err(|_| s.no_match(FLATTEN, "replaceable uses"))?;
        }
    }
    let mut params = zm.params.to_vec();
    params.splice(i..=i, rs);
    let mut xs = zm.xs.to_vec();
    xs.splice(i..=i, ys.iter().cloned());
    Ok(rebuild(g, params, body, xs, zm.span))
}

/// The first parameter the body does not read.
fn unused_parts(e: &Expr) -> Option<(ZipMap<'_>, usize)> {
    let zm = zip_map(e)?;
    let i = zm.params.iter().position(|p| count_uses(zm.body, p.id) == 0)?;
    (zm.params.len() >= 2).then_some((zm, i))
}

fn m_unused(s: &Site<'_>) -> R {
    unused_parts(s.expr).map(|_| ()).ok_or_else(|| {
        s.no_match(UNUSED, "`map(\\(p1, .., pk) -> e) $ zip(x1, .., xk)` with some `pi` not in `e`")
    })
}

/// The arrays of a zip have one length, so dropping one keeps the length,
/// and element `j` still gets the same values for the parameters it reads.
fn b_unused(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    let (zm, i) = unused_parts(s.expr).ok_or_else(|| s.no_match(UNUSED, "a map over a zip"))?;
    let mut params = zm.params.to_vec();
    params.remove(i);
    let mut xs = zm.xs.to_vec();
    xs.remove(i);
    Ok(rebuild(&mut b.gen, params, zm.body.clone(), xs, zm.span))
}
