//! Macro rules: one step that stands for a sequence of smaller rules.
//!
//! * `overlapped-tiling` (CGO 2018, Section 4.1) is `slide-tile`, then
//!   `map-join`, then `map-fusion`; the test suite checks it gives the
//!   same program as those three steps.
//! * `tile-mm` (`src/rewrite/matmul.rs`) is, for scalar operands, a
//!   sequence of ninety small steps; the test suite checks it gives the
//!   same program on an 8 x 8 x 8 product (`docs/REWRITE.md`, "tile-mm as
//!   small steps").
//! * `overlapped-tiling-2d` is the two-dimensional rule of CGO 2018 on
//!   `map_2(f) o slide_2(size, step)`, where
//!   `slide_2(s, t) = map(transpose) o slide(s, t) o map(slide(s, t))`.
//! * `map-interchange`, `tile-2d` and `register-blocking` rearrange nested
//!   maps through `transpose` and `split`/`join`.
//! * `map-id-nd` copies an n-dimensional array that a lambda receives
//!   (a tile) element by element: the copy `to-local` then moves to local
//!   memory (CGO 2018, Section 4.2; `map-id` only wraps calls).

use super::algorithmic::{check_tiles, map_parts, Slides};
use super::rule::{arg, view, Args, Builder, Family, ParamSpec, Rule, RuleError, Site, View};
use crate::arith::ArithExpr;
use crate::ir::visit::takes_one_datum;
use crate::ir::{Expr, ExprKind, FunDecl, FunKind, MapKind, Pattern, Span};

type R = Result<(), RuleError>;
type B = Result<Expr, RuleError>;

const fn rule(
    name: &'static str,
    lhs: &'static str,
    rhs: &'static str,
    params: &'static [ParamSpec],
    matches: fn(&Site<'_>) -> R,
    build: fn(&Site<'_>, &Args, &mut Builder) -> B,
) -> Rule {
    Rule { name, family: Family::Macro, lhs, rhs, params, matches, build }
}

const UV: &[ParamSpec] =
    &[ParamSpec { name: "u", what: "tile size" }, ParamSpec { name: "v", what: "tile step" }];

pub static RULES: [Rule; 6] = [
    rule("overlapped-tiling", "map(f) o slide(size, step)   (u - v = size - step)",
        "join o map(\\t -> map(f) o slide(size, step) $ t) o slide(u, v)", UV, m_tiling, b_tiling),
    rule("overlapped-tiling-2d", "map(map(f)) o slide_2(size, step)   (u - v = size - step)",
        "map(join) o join o map(transpose) o map_2(\\t -> map_2(f) o slide_2(size, step) $ t) o slide_2(u, v)", UV,
        m_tiling_2d, b_tiling_2d),
    rule("map-interchange", "map(map(f))", "transpose o map(map(f)) o transpose", &[], m_map2, b_interchange),
    rule("tile-2d", "map(map(f))", "untile o map(map(map(map(f)))) o tile(n, m)",
        &[ParamSpec { name: "n", what: "tile rows" }, ParamSpec { name: "m", what: "tile columns" }], m_map2, b_tile_2d),
    rule("register-blocking", "map(map(f))", "join o map(transpose o map(map(f)) o transpose) o split(n)",
        &[ParamSpec { name: "n", what: "rows per block" }], m_map2, b_register_blocking),
    rule("map-id-nd", "p or get(i, p)   (p a lambda's parameter; an n-dimensional array, n >= 2)", "map(...map(id)...) $ p",
        &[], m_map_id_nd, b_map_id_nd),
];

/// The pattern `P` of `\p -> P(p)`, or of a bare `P`.
pub(super) fn unary_pattern(f: &FunDecl) -> Option<&Pattern> {
    match &f.kind {
        FunKind::Pattern(p) if takes_one_datum(p) => Some(p),
        FunKind::Lambda(l) => match (l.params.as_slice(), &l.body.kind) {
            ([p], ExprKind::Call(g, args)) => match (&g.kind, args.as_slice()) {
                (FunKind::Pattern(pat), [Expr { kind: ExprKind::Param(q), .. }])
                    if *q == p.id && takes_one_datum(pat) =>
                {
                    Some(pat)
                }
                _ => None,
            },
            _ => None,
        },
        FunKind::UserFun(_) | FunKind::Pattern(_) => None,
    }
}

/// `(f, xs, span)` of `map(\r -> map(f, r), xs)` (both high-level maps).
pub(super) fn map2_parts(e: &Expr) -> Option<(&FunDecl, &Expr, Span)> {
    let (MapKind::Map, g, xs, span) = map_parts(e)? else { return None };
    match unary_pattern(g)? {
        Pattern::Map { kind: MapKind::Map, f } => Some((f, xs, span)),
        _ => None,
    }
}

fn map_fun(b: &mut Builder, span: Span, body: impl FnOnce(&mut crate::ir::IdGen, Expr) -> Expr) -> Pattern {
    Pattern::Map { kind: MapKind::Map, f: Box::new(b.gen.lambda1(span, body)) }
}

fn m_tiling(s: &Site<'_>) -> R {
    match map_parts(s.expr) {
        Some((MapKind::Map, _, xs, _)) if matches!(view(xs), Some((View::Slide { .. }, [_], _))) => Ok(()),
        _ => Err(s.no_match("overlapped-tiling", "`map(f) $ slide(size, step) $ x`")),
    }
}

fn b_tiling(s: &Site<'_>, a: &Args, b: &mut Builder) -> B {
    m_tiling(s)?;
    let (_, f, xs, span) = map_parts(s.expr).ok_or_else(|| s.no_match("overlapped-tiling", "a map"))?;
    let Some((View::Slide { size, step }, [input], _)) = view(xs) else {
        return Err(s.no_match("overlapped-tiling", "a slide"));
    };
    let (u, v) = (arg("overlapped-tiling", a, "u")?, arg("overlapped-tiling", a, "v")?);
    let len = s.len(input).ok_or_else(|| s.no_match("overlapped-tiling", "a slide over an array"))?;
    check_tiles(b, "overlapped-tiling", Slides { size, step }, Slides { size: &u, step: &v }, &len)?;
    let tiles = b.pattern(Pattern::Slide { size: u, step: v }, vec![input.clone()], span);
    let (f, size, step) = (f.clone(), size.clone(), step.clone());
    let per_tile = map_fun(b, span, |g, t| {
        let w = g.call_pattern(Pattern::Slide { size, step }, vec![t], span);
        g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(f) }, vec![w], span)
    });
    let m = b.pattern(per_tile, vec![tiles], span);
    Ok(b.pattern(Pattern::Join, vec![m], span))
}

/// `(size, step, xs)` of `slide_2(size, step) $ xs`.
pub(super) fn slide2_parts(e: &Expr) -> Option<(&ArithExpr, &ArithExpr, &Expr)> {
    let (MapKind::Map, t, x1, _) = map_parts(e)? else { return None };
    if !matches!(unary_pattern(t)?, Pattern::Transpose) {
        return None;
    }
    let (View::Slide { size, step }, [x2], _) = view(x1)? else { return None };
    let (MapKind::Map, sl, xs, _) = map_parts(x2)? else { return None };
    match unary_pattern(sl)? {
        Pattern::Slide { size: s2, step: t2 } if s2 == size && t2 == step => Some((size, step, xs)),
        _ => None,
    }
}

/// `map(transpose) o slide(size, step) o map(slide(size, step)) $ x`.
fn slide2(g: &mut crate::ir::IdGen, size: &ArithExpr, step: &ArithExpr, x: Expr, span: Span) -> Expr {
    let (sz, st) = (size.clone(), step.clone());
    let inner = g.lambda1(span, |g, r| g.call_pattern(Pattern::Slide { size: sz, step: st }, vec![r], span));
    let rows = g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(inner) }, vec![x], span);
    let sl = g.call_pattern(Pattern::Slide { size: size.clone(), step: step.clone() }, vec![rows], span);
    let tr = g.lambda1(span, |g, w| g.call_pattern(Pattern::Transpose, vec![w], span));
    g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(tr) }, vec![sl], span)
}

/// `map(\r -> map(f, r), x)` with `f` built by `body`.
pub(super) fn map2(
    g: &mut crate::ir::IdGen,
    x: Expr,
    span: Span,
    body: impl FnOnce(&mut crate::ir::IdGen, Expr) -> Expr,
) -> Expr {
    let inner = g.lambda1(span, body);
    let outer = g.lambda1(span, |g, r| {
        g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(inner) }, vec![r], span)
    });
    g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(outer) }, vec![x], span)
}

fn m_tiling_2d(s: &Site<'_>) -> R {
    match map2_parts(s.expr) {
        Some((_, xs, _)) if slide2_parts(xs).is_some() => Ok(()),
        _ => Err(s.no_match("overlapped-tiling-2d", "`map(map(f)) $ slide_2(size, step) $ x`")),
    }
}

fn b_tiling_2d(s: &Site<'_>, a: &Args, b: &mut Builder) -> B {
    m_tiling_2d(s)?;
    let (f, xs, span) = map2_parts(s.expr).ok_or_else(|| s.no_match("overlapped-tiling-2d", "map_2"))?;
    let (size, step, input) =
        slide2_parts(xs).ok_or_else(|| s.no_match("overlapped-tiling-2d", "slide_2"))?;
    let (u, v) = (arg("overlapped-tiling-2d", a, "u")?, arg("overlapped-tiling-2d", a, "v")?);
    let rule = "overlapped-tiling-2d";
    let Some(crate::types::Type::Array(row, rows)) = s.ty(input) else {
        return Err(s.no_match(rule, "a 2D array"));
    };
    let crate::types::Type::Array(_, cols) = row.as_ref() else { return Err(s.no_match(rule, "a 2D array")) };
    let (windows, tile) = (Slides { size, step }, Slides { size: &u, step: &v });
    check_tiles(b, rule, windows, tile, rows)?;
    check_tiles(b, rule, windows, tile, cols)?;
    let g = &mut b.gen;
    let tiles = slide2(g, &u, &v, input.clone(), span);
    let (f, size, step) = (f.clone(), size.clone(), step.clone());
    let per_tile = map2(g, tiles, span, |g, t| {
        let w = slide2(g, &size, &step, t, span);
        map2(g, w, span, |g, e| super::rule::apply_fun(g, &f, vec![e], span))
    });
    let tr = g.lambda1(span, |g, x| g.call_pattern(Pattern::Transpose, vec![x], span));
    let m = g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(tr) }, vec![per_tile], span);
    let j = g.call_pattern(Pattern::Join, vec![m], span);
    let jn = g.lambda1(span, |g, x| g.call_pattern(Pattern::Join, vec![x], span));
    Ok(g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(jn) }, vec![j], span))
}

fn m_map2(s: &Site<'_>) -> R {
    map2_parts(s.expr).map(|_| ()).ok_or_else(|| s.no_match("map-interchange", "`map(\\r -> map(f, r)) $ x`"))
}

fn b_interchange(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    let (f, xs, span) = map2_parts(s.expr).ok_or_else(|| s.no_match("map-interchange", "map_2"))?;
    let g = &mut b.gen;
    let t = g.call_pattern(Pattern::Transpose, vec![xs.clone()], span);
    let m = map2(g, t, span, |g, e| super::rule::apply_fun(g, f, vec![e], span));
    Ok(g.call_pattern(Pattern::Transpose, vec![m], span))
}

fn lens2(s: &Site<'_>, xs: &Expr, rule: &'static str) -> Result<(ArithExpr, ArithExpr), RuleError> {
    match s.ty(xs) {
        Some(crate::types::Type::Array(row, n)) => match row.as_ref() {
            crate::types::Type::Array(_, m) => Ok((n.clone(), m.clone())),
            _ => Err(s.no_match(rule, "a map over a 2D array")),
        },
        _ => Err(s.no_match(rule, "a map over a 2D array")),
    }
}

/// Tiles of `n` rows by `m` columns:
/// `map(\b -> transpose(map(split(m), b))) o split(n)` gives a
/// `[(rows/n) x (cols/m)]` grid of `n x m` tiles, `map(\b -> map(join,
/// transpose(b))) o ...` and `join` undo it.
fn b_tile_2d(s: &Site<'_>, a: &Args, b: &mut Builder) -> B {
    let rule = "tile-2d";
    let (f, xs, span) = map2_parts(s.expr).ok_or_else(|| s.no_match(rule, "map_2"))?;
    let (n, m) = (arg(rule, a, "n")?, arg(rule, a, "m")?);
    let (rows, cols) = lens2(s, xs, rule)?;
    b.divides(rule, &n, &rows)?;
    b.divides(rule, &m, &cols)?;
    let g = &mut b.gen;
    let blocks = g.call_pattern(Pattern::Split(n), vec![xs.clone()], span);
    let tile = g.lambda1(span, |g, blk| {
        let sp = g.lambda1(span, |g, r| g.call_pattern(Pattern::Split(m), vec![r], span));
        let rows = g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(sp) }, vec![blk], span);
        g.call_pattern(Pattern::Transpose, vec![rows], span)
    });
    let tiles = g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(tile) }, vec![blocks], span);
    // map(map(map(map(f)))) over the tile grid.
    let f = f.clone();
    let computed =
        map2(g, tiles, span, |g, t| map2(g, t, span, |g, e| super::rule::apply_fun(g, &f, vec![e], span)));
    let untile = g.lambda1(span, |g, blk| {
        let tr = g.call_pattern(Pattern::Transpose, vec![blk], span);
        let jn = g.lambda1(span, |g, r| g.call_pattern(Pattern::Join, vec![r], span));
        g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(jn) }, vec![tr], span)
    });
    let rows = g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(untile) }, vec![computed], span);
    Ok(g.call_pattern(Pattern::Join, vec![rows], span))
}

/// A block of `n` rows is processed column by column, so one thread can
/// keep the `n` values of a column in registers.
fn b_register_blocking(s: &Site<'_>, a: &Args, b: &mut Builder) -> B {
    let rule = "register-blocking";
    let (f, xs, span) = map2_parts(s.expr).ok_or_else(|| s.no_match(rule, "map_2"))?;
    let n = arg(rule, a, "n")?;
    let (rows, _) = lens2(s, xs, rule)?;
    b.divides(rule, &n, &rows)?;
    let g = &mut b.gen;
    let blocks = g.call_pattern(Pattern::Split(n), vec![xs.clone()], span);
    let f = f.clone();
    let per_block = g.lambda1(span, |g, blk| {
        let t = g.call_pattern(Pattern::Transpose, vec![blk], span);
        let m = map2(g, t, span, |g, e| super::rule::apply_fun(g, &f, vec![e], span));
        g.call_pattern(Pattern::Transpose, vec![m], span)
    });
    let m = g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(per_block) }, vec![blocks], span);
    Ok(g.call_pattern(Pattern::Join, vec![m], span))
}

/// Array dimensions of a parameter that `map-id-nd` copies.
fn copy_dims(s: &Site<'_>) -> Option<usize> {
    // `p`, or `get(i, p)`: one grid of a tile of zipped grids.
    let p = match &s.expr.kind {
        ExprKind::Param(p) => p,
        ExprKind::Call(f, args) => match (&f.kind, args.as_slice()) {
            (FunKind::Pattern(Pattern::Get(_)), [Expr { kind: ExprKind::Param(p), .. }]) => p,
            _ => return None,
        },
        ExprKind::Literal(_) => return None,
    };
    // A lambda's parameter only: the def's own inputs are not tiles.
    let bound_here = s.above.iter().any(|n| match n {
        crate::ir::visit::Node::Fun(FunDecl { kind: FunKind::Lambda(l), .. }) => {
            l.params.iter().any(|q| q.id == *p)
        }
        _ => false,
    });
    let mut t = s.ty(s.expr)?;
    let mut dims = 0;
    while let crate::types::Type::Array(e, _) = t {
        dims += 1;
        t = e.as_ref();
    }
    (bound_here && dims >= 2).then_some(dims)
}

fn m_map_id_nd(s: &Site<'_>) -> R {
    copy_dims(s).map(|_| ()).ok_or_else(|| {
        s.no_match(
            "map-id-nd",
            "a lambda's parameter (or `get(i, p)` of one) holding an array of 2 or more dimensions",
        )
    })
}

fn b_map_id_nd(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    let dims = copy_dims(s).ok_or_else(|| s.no_match("map-id-nd", "an n-dimensional array parameter"))?;
    let span = s.expr.span;
    let g = &mut b.gen;
    let mut f = g.lambda1(span, |g, x| g.call_pattern(Pattern::Id, vec![x], span));
    for _ in 1..dims {
        let inner = f;
        f = g.lambda1(span, |g, r| {
            g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(inner) }, vec![r], span)
        });
    }
    Ok(g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(f) }, vec![s.expr.clone()], span))
}
