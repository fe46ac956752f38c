//! Three layout steps of `tile-mm`'s output tiling (`docs/REWRITE.md`,
//! "tile-mm as small steps"):
//!
//! - `map-swap`: two maps over two independent arrays (a cartesian
//!   product) in the other order. `map-interchange` swaps `map(map(f))`
//!   over the rows of one 2D array; here the inner map's array does not
//!   depend on the outer map's element, as the rows of `Y` do not depend
//!   on the row of `X` in a matrix product. It puts the map over `Y`'s
//!   groups of rows outside the map over the rows of a group of `X`.
//! - `join-join`: `join $ join $ x` is `join $ map(join) $ x`, which
//!   `map-fusion` then moves into the map that made `x` (a row of the
//!   product, split twice, becomes a join of joined groups).
//! - `transpose-one-row`: a one-row array transposed and joined (or its
//!   rows joined) is the array joined: `map-reduce-interchange` returns
//!   the transpose of a fold's one-row result, and this gives `tile-mm`'s
//!   `join` of the fold.
//! - `transpose-transpose-id`: transposing twice is the identity (with
//!   `split-join-id` and `join-split-id`, what cancels the register
//!   blocking of `reduce-seq-block` against its inverse).
//! - `join-map-one-row`: a map over a one-row array, joined, is the
//!   function of its row (`reduce-seq-block` maps its inverse layout over
//!   the fold's one-row result; `tile-mm` applies `untile` to the joined
//!   result).

use super::algorithmic::{map_parts, rule, B, R};
use super::rule::{apply_fun, view, Args, Builder, Rule, Site, View};
use crate::ir::visit::count_uses;
use crate::ir::{Expr, FunKind, Lambda, MapKind, Param, Pattern, Span};

pub static RULES: [Rule; 5] = [
    rule(
        "map-swap",
        "map(\\a -> map(\\b -> e) $ bs) $ as   (bs without a)",
        "transpose $ map(\\b -> map(\\a -> e) $ as) $ bs",
        &[],
        m_swap,
        b_swap,
    ),
    rule("join-join", "join $ join $ x", "join $ map(join) $ x", &[], m_join_join, b_join_join),
    rule(
        "transpose-one-row",
        "join $ transpose $ r  or  map(join) $ transpose $ r   (r of one row)",
        "join $ r",
        &[],
        m_one_row,
        b_one_row,
    ),
    rule("transpose-transpose-id", "transpose $ transpose $ x", "x", &[], m_tt, b_tt),
    rule(
        MAP_ONE_ROW,
        "join $ map(f) $ r   (r of one row; a high-level map)",
        "f(join $ r)",
        &[],
        m_map_one_row,
        b_map_one_row,
    ),
];

const NAME: &str = "map-swap";
const JOIN_JOIN: &str = "join-join";
const ONE_ROW: &str = "transpose-one-row";
const TT: &str = "transpose-transpose-id";
const MAP_ONE_ROW: &str = "join-map-one-row";

/// `(a, b, e, bs, as, span)` of `map(\a -> map(\b -> e) $ bs) $ as`
/// (high-level maps; `bs` may still use `a`).
fn swap_parts(x: &Expr) -> Option<(&Param, &Param, &Expr, &Expr, &Expr, Span)> {
    let (MapKind::Map, outer, xs, span) = map_parts(x)? else { return None };
    let FunKind::Lambda(Lambda { params: pa, body }) = &outer.kind else { return None };
    let (MapKind::Map, inner, ys, _) = map_parts(body)? else { return None };
    let FunKind::Lambda(Lambda { params: pb, body: e }) = &inner.kind else { return None };
    match (pa.as_slice(), pb.as_slice()) {
        ([a], [b]) => Some((a, b, e, ys, xs, span)),
        _ => None,
    }
}

fn m_swap(s: &Site<'_>) -> R {
    match swap_parts(s.expr) {
        Some((a, _, _, ys, _, _)) if count_uses(ys, a.id) == 0 => Ok(()),
        _ => Err(s.no_match(NAME, "`map(\\a -> map(\\b -> e) $ bs) $ as` with `bs` not using `a`")),
    }
}

/// Element `[i][j]` of both sides is `e` with `a = as[i]` and `b = bs[j]`:
/// the right-hand side computes it at `[j][i]` and transposes. `bs` must
/// not use `a` (it leaves `a`'s scope); `as` enters `b`'s scope, where
/// `b` is fresh, so nothing is captured. An empty `as` or `bs` gives an
/// empty result on both sides.
fn b_swap(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    m_swap(s)?;
    let (pa, pb, e, ys, xs, span) = swap_parts(s.expr).ok_or_else(|| s.no_match(NAME, "a map of maps"))?;
    let g = &mut b.gen;
    // Built with the old parameters, then refreshed: `a` and `b` get
    // fresh ids.
    let per_a = g.fun(FunKind::Lambda(Lambda { params: vec![pa.clone()], body: Box::new(e.clone()) }), span);
    let inner =
        g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(per_a) }, vec![xs.clone()], span);
    let per_b = g.fun(FunKind::Lambda(Lambda { params: vec![pb.clone()], body: Box::new(inner) }), span);
    let per_b = g.refresh_fun(&per_b);
    let ys = g.refresh_expr(ys);
    let m = b.pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(per_b) }, vec![ys], span);
    Ok(b.pattern(Pattern::Transpose, vec![m], span))
}

/// `(inner, span)` of `join $ join $ inner`.
fn join_join_parts(x: &Expr) -> Option<(&Expr, Span)> {
    let (View::Join, [j], span) = view(x)? else { return None };
    let (View::Join, [inner], _) = view(j)? else { return None };
    Some((inner, span))
}

fn m_join_join(s: &Site<'_>) -> R {
    join_join_parts(s.expr).map(|_| ()).ok_or_else(|| s.no_match(JOIN_JOIN, "`join $ join $ x`"))
}

/// Both sides list the innermost rows of `x: [[[t]a]b]c` in row-major
/// order: `join $ join` flattens the outer two levels first, `join $
/// map(join)` the inner two first.
fn b_join_join(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    let (inner, span) = join_join_parts(s.expr).ok_or_else(|| s.no_match(JOIN_JOIN, "a join of a join"))?;
    let g = &mut b.gen;
    let per_row = g.lambda1(span, |g, r| g.call_pattern(Pattern::Join, vec![r], span));
    let rows =
        g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(per_row) }, vec![inner.clone()], span);
    Ok(g.call_pattern(Pattern::Join, vec![rows], span))
}

/// `r` of `join $ transpose $ r` or `map(join) $ transpose $ r`, where
/// `r` has one row.
fn one_row_parts<'a>(s: &Site<'a>) -> Option<(&'a Expr, Span)> {
    let (outer, [t], span) = view(s.expr)? else { return None };
    let joins = matches!(outer, View::Join)
        || matches!(outer, View::Map { kind: MapKind::Map, f }
            if matches!(super::macros::unary_pattern(f), Some(Pattern::Join)));
    let (View::Transpose, [r], _) = view(t)? else { return None };
    (joins && s.len(r)?.as_cst() == Some(1)).then_some((r, span))
}

fn m_one_row(s: &Site<'_>) -> R {
    one_row_parts(s).map(|_| ()).ok_or_else(|| {
        s.no_match(ONE_ROW, "`join $ transpose $ r` or `map(join) $ transpose $ r` with `r` of one row")
    })
}

/// For `r: [[x]n]1`, `transpose $ r` is `[[x]1]n`: row `i` holds only
/// `r[0][i]`. Joined it is `[x]n`, and with each row joined (`x` an
/// array) it is also `r[0][0], ..., r[0][n-1]`: both are `join $ r`.
fn b_one_row(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    let (r, span) = one_row_parts(s).ok_or_else(|| s.no_match(ONE_ROW, "a transposed row"))?;
    Ok(b.pattern(Pattern::Join, vec![r.clone()], span))
}

/// `x` of `transpose $ transpose $ x`.
fn tt_parts(e: &Expr) -> Option<&Expr> {
    let (View::Transpose, [t], _) = view(e)? else { return None };
    let (View::Transpose, [x], _) = view(t)? else { return None };
    Some(x)
}

fn m_tt(s: &Site<'_>) -> R {
    tt_parts(s.expr).map(|_| ()).ok_or_else(|| s.no_match(TT, "`transpose $ transpose $ x`"))
}

/// Element `[i][j]` of `transpose $ transpose $ x` is element `[j][i]` of
/// `transpose $ x`, which is `x[i][j]`.
fn b_tt(s: &Site<'_>, _: &Args, _: &mut Builder) -> B {
    tt_parts(s.expr).cloned().ok_or_else(|| s.no_match(TT, "a transpose of a transpose"))
}

/// `(f, r, span)` of `join $ map(f) $ r` with `r` of one row.
fn map_one_row_parts<'a>(s: &Site<'a>) -> Option<(&'a crate::ir::FunDecl, &'a Expr, Span)> {
    let (View::Join, [m], span) = view(s.expr)? else { return None };
    let (MapKind::Map, f, r, _) = map_parts(m)? else { return None };
    (s.len(r)?.as_cst() == Some(1)).then_some((f, r, span))
}

fn m_map_one_row(s: &Site<'_>) -> R {
    map_one_row_parts(s)
        .map(|_| ())
        .ok_or_else(|| s.no_match(MAP_ONE_ROW, "`join $ map(f) $ r` with `r` of one row"))
}

/// For `r = [r0]`, `map(f) $ r` is `[f(r0)]`, joined `f(r0)`; `join $ r`
/// is `r0`.
fn b_map_one_row(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    let (f, r, span) = map_one_row_parts(s).ok_or_else(|| s.no_match(MAP_ONE_ROW, "a joined map"))?;
    let row = b.pattern(Pattern::Join, vec![r.clone()], span);
    Ok(apply_fun(&mut b.gen, f, vec![row], span))
}
