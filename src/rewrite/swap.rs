//! `map-swap`: two maps over two independent arrays (a cartesian product)
//! in the other order. `map-interchange` swaps `map(map(f))` over the rows
//! of one 2D array; here the inner map's array does not depend on the
//! outer map's element, as the rows of `Y` do not depend on the row of `X`
//! in a matrix product. A step of `tile-mm` (`docs/REWRITE.md`, "tile-mm
//! as small steps"): it puts the map over `Y`'s groups of rows outside the
//! map over the rows of a group of `X`.

use super::algorithmic::{map_parts, rule, B, R};
use super::rule::{Args, Builder, Rule, Site};
use crate::ir::visit::count_uses;
use crate::ir::{Expr, FunKind, Lambda, MapKind, Param, Pattern, Span};

pub static RULES: [Rule; 1] = [rule(
    "map-swap",
    "map(\\a -> map(\\b -> e) $ bs) $ as   (bs without a)",
    "transpose $ map(\\b -> map(\\a -> e) $ as) $ bs",
    &[],
    m_swap,
    b_swap,
)];

const NAME: &str = "map-swap";

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
