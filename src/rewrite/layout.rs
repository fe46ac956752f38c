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
//! - `transpose-pair`: the inverse, a 2D array is its transpose
//!   transposed. A map of reductions split into chunks leaves its
//!   partial results as rows, one per reduction; under the pair the first
//!   transpose is the kernel's output (`extract`), so each chunk's results
//!   are written as a row of its own, coalesced when the reductions are
//!   columns, and the second stage reads them down the columns
//!   (`explore::partials`).
//! - `join-map-one-row`: a map over a one-row array, joined, is the
//!   function of its row (`reduce-seq-block` maps its inverse layout over
//!   the fold's one-row result; `tile-mm` applies `untile` to the joined
//!   result).
//! - `map-id-elim`, `split-generate`, `transpose-generate`,
//!   `map-generate`: the start of `tile-mm`'s blocked accumulator.
//!   `reduce-seq-block` starts from `V` (the blocking) of `map(id)` of
//!   generated values; without the copies (`map-id-elim`, the inverse of
//!   `map-id`) a split, a transpose or a map of generated constants is
//!   itself generated, and `map-id-nd-call` makes `tile-mm`'s `map_4(id)
//!   $ generate_4`.
//! - `block-untile-id`: `reduce-seq-block`'s blocking `V` of `untile`
//!   (`U`) of blocks is the blocks (`U` is `V`'s inverse both ways for
//!   `wx = 1`): a fold inside the step of a blocked fold, blocked in turn,
//!   keeps the blocks from step to step.
//! - `block-outer`: `V` of an outer product updating `U(c)` (a chunk
//!   step of `tile-mm` on the whole tile) is the outer products of the
//!   blocks of `c` with their strips of both operands (`tile-mm`'s step
//!   per block).
//! - `split-map`: a split of a map is a map of the split's chunks (the
//!   mirror of `map-join`): with `transpose-map` it moves a copy of a
//!   column into its strips.

use super::algorithmic::{map_parts, rule, B, R};
use super::rule::{apply_fun, as_pattern, view, Args, Builder, Rule, Site, View};
use crate::arith::{self, ArithExpr};
use crate::ir::visit::count_uses;
use crate::ir::{Expr, FunKind, IdGen, Lambda, MapKind, Param, Pattern, Span};

pub static RULES: [Rule; 13] = [
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
    rule(PAIR, "x   (a 2D array: a call or a parameter)", "transpose $ transpose $ x", &[], m_pair, b_pair),
    rule(
        MAP_ONE_ROW,
        "join $ map(f) $ r   (r of one row; a high-level map)",
        "f(join $ r)",
        &[],
        m_map_one_row,
        b_map_one_row,
    ),
    rule(ID_ELIM, "map(id) $ x   (a high-level map)", "x", &[], m_id_elim, b_id_elim),
    rule(
        SPLIT_GEN,
        "split(n) $ generate(m, \\i -> e)   (e without i, n | m)",
        "generate(m/n, \\_ -> generate(n, \\_ -> e))",
        &[],
        m_split_gen,
        b_split_gen,
    ),
    rule(
        TRANSPOSE_GEN,
        "transpose $ generate(m, \\i -> generate(n, \\j -> e))   (e without i, j)",
        "generate(n, \\_ -> generate(m, \\_ -> e))",
        &[],
        m_transpose_gen,
        b_transpose_gen,
    ),
    rule(
        MAP_GEN,
        "map(f) $ generate(n, \\i -> e)   (a high-level map)",
        "generate(n, \\i -> f(e))",
        &[],
        m_map_gen,
        b_map_gen,
    ),
    rule(
        BLOCK_ID,
        "V(U(x))   (V: reduce-seq-block's blocking, U: untile; x of [mi][ni][rm][rn], V splitting by mi, ni)",
        "x",
        &[],
        m_block_id,
        b_block_id,
    ),
    rule(
        BLOCK_OUTER,
        "V(map(\\(r, x) -> map(\\(v, y) -> e) $ zip(r, ys)) $ zip(U(c), xs))   (V, U as for block-untile-id; ys without r, x)",
        "map(\\(ci, xi) -> map(\\(cij, yj) -> map(\\(r, x) -> map(\\(v, y) -> e) $ zip(r, yj)) $ zip(cij, xi)) \
         $ zip(ci, transpose $ split(ni, ys))) $ zip(c, transpose $ split(mi, xs))",
        &[],
        m_block_outer,
        b_block_outer,
    ),
    rule(SPLIT_MAP, "split(n) $ map(f) $ x   (a high-level map)", "map(map(f)) $ split(n) $ x", &[], m_split_map, b_split_map),
];

const NAME: &str = "map-swap";
const JOIN_JOIN: &str = "join-join";
const ONE_ROW: &str = "transpose-one-row";
const TT: &str = "transpose-transpose-id";
const PAIR: &str = "transpose-pair";
const MAP_ONE_ROW: &str = "join-map-one-row";
const ID_ELIM: &str = "map-id-elim";
const SPLIT_GEN: &str = "split-generate";
const TRANSPOSE_GEN: &str = "transpose-generate";
const MAP_GEN: &str = "map-generate";
const BLOCK_ID: &str = "block-untile-id";
const BLOCK_OUTER: &str = "block-outer";
const SPLIT_MAP: &str = "split-map";

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

fn m_pair(s: &Site<'_>) -> R {
    let is_data = matches!(s.expr.kind, crate::ir::ExprKind::Call(..) | crate::ir::ExprKind::Param(_));
    match s.ty(s.expr) {
        Some(crate::types::Type::Array(row, _))
            if is_data && matches!(**row, crate::types::Type::Array(..)) =>
        {
            Ok(())
        }
        _ => Err(s.no_match(PAIR, "a call or parameter producing a 2D array")),
    }
}

/// `transpose-transpose-id` read backwards: element `[i][j]` of the pair
/// is element `[j][i]` of `transpose $ x`, which is `x[i][j]`.
fn b_pair(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    m_pair(s)?;
    let span = s.expr.span;
    let t = b.pattern(Pattern::Transpose, vec![s.expr.clone()], span);
    Ok(b.pattern(Pattern::Transpose, vec![t], span))
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

/// `x` of `map(id) $ x` (a high-level map).
fn id_elim_parts(e: &Expr) -> Option<&Expr> {
    let (MapKind::Map, f, x, _) = map_parts(e)? else { return None };
    matches!(super::macros::unary_pattern(f), Some(Pattern::Id)).then_some(x)
}

fn m_id_elim(s: &Site<'_>) -> R {
    id_elim_parts(s.expr).map(|_| ()).ok_or_else(|| s.no_match(ID_ELIM, "`map(id) $ x` (a high-level map)"))
}

/// A copy of every element of `x` is `x`.
fn b_id_elim(s: &Site<'_>, _: &Args, _: &mut Builder) -> B {
    id_elim_parts(s.expr).cloned().ok_or_else(|| s.no_match(ID_ELIM, "a map of id"))
}

/// `(len, i, e, span)` of `generate(len, \i -> e)`.
fn generate_parts(e: &Expr) -> Option<(&ArithExpr, &Param, &Expr, Span)> {
    let (Pattern::Generate { len, f }, [], span) = as_pattern(e)? else { return None };
    let FunKind::Lambda(Lambda { params, body }) = &f.kind else { return None };
    let [i] = params.as_slice() else { return None };
    Some((len, i, body, span))
}

/// `(len, e)` of `generate(len, \i -> e)` with `e` not reading `i`.
fn const_generate(e: &Expr) -> Option<(&ArithExpr, &Expr)> {
    let (len, i, body, _) = generate_parts(e)?;
    (count_uses(body, i.id) == 0).then_some((len, body))
}

/// `generate(len, \_ -> e)` (`e` refreshed).
fn generate(g: &mut IdGen, len: &ArithExpr, e: &Expr, span: Span) -> Expr {
    let e = g.refresh_expr(e);
    let f = g.lambda1(span, |_, _| e);
    g.call_pattern(Pattern::Generate { len: arith::simplify(len), f: Box::new(f) }, vec![], span)
}

/// `(n, m, e, span)` of `split(n) $ generate(m, \i -> e)`, `e` without `i`.
fn split_gen_parts(e: &Expr) -> Option<(&ArithExpr, &ArithExpr, &Expr, Span)> {
    let (View::Split(n), [x], span) = view(e)? else { return None };
    let (m, body) = const_generate(x)?;
    Some((n, m, body, span))
}

fn m_split_gen(s: &Site<'_>) -> R {
    split_gen_parts(s.expr)
        .map(|_| ())
        .ok_or_else(|| s.no_match(SPLIT_GEN, "`split(n) $ generate(m, \\i -> e)` with `e` without `i`"))
}

/// Both are `m/n` rows of `n` copies of `e` (`n` must divide `m`).
fn b_split_gen(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    let (n, m, e, span) = split_gen_parts(s.expr).ok_or_else(|| s.no_match(SPLIT_GEN, "a split"))?;
    b.divides(SPLIT_GEN, n, m)?;
    let g = &mut b.gen;
    let row = generate(g, n, e, span);
    Ok(generate(g, &ArithExpr::div(m.clone(), n.clone()), &row, span))
}

/// `(m, n, e, span)` of `transpose $ generate(m, \i -> generate(n, \j ->
/// e))`, `e` without `i` and `j`.
fn transpose_gen_parts(e: &Expr) -> Option<(&ArithExpr, &ArithExpr, &Expr, Span)> {
    let (View::Transpose, [x], span) = view(e)? else { return None };
    let (m, row) = const_generate(x)?;
    let (n, body) = const_generate(row)?;
    Some((m, n, body, span))
}

fn m_transpose_gen(s: &Site<'_>) -> R {
    transpose_gen_parts(s.expr).map(|_| ()).ok_or_else(|| {
        s.no_match(
            TRANSPOSE_GEN,
            "`transpose $ generate(m, \\i -> generate(n, \\j -> e))` with `e` without `i` and `j`",
        )
    })
}

/// Every element of both is `e`; the transpose has `n` rows of `m`.
fn b_transpose_gen(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    let (m, n, e, span) =
        transpose_gen_parts(s.expr).ok_or_else(|| s.no_match(TRANSPOSE_GEN, "a transpose"))?;
    let g = &mut b.gen;
    let row = generate(g, m, e, span);
    Ok(generate(g, n, &row, span))
}

/// `(f, len, i, e, span)` of `map(f) $ generate(len, \i -> e)` (a
/// high-level map).
fn map_gen_parts(x: &Expr) -> Option<(&crate::ir::FunDecl, &ArithExpr, &Param, &Expr, Span)> {
    let (MapKind::Map, f, xs, span) = map_parts(x)? else { return None };
    let (len, i, e, _) = generate_parts(xs)?;
    Some((f, len, i, e, span))
}

fn m_map_gen(s: &Site<'_>) -> R {
    map_gen_parts(s.expr)
        .map(|_| ())
        .ok_or_else(|| s.no_match(MAP_GEN, "`map(f) $ generate(n, \\i -> e)` (a high-level map)"))
}

/// Element `i` of both is `f(e)` with that `i` (`f` is outside the
/// generate's function, so it does not read `i`).
fn b_map_gen(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    let (f, len, i, e, span) = map_gen_parts(s.expr).ok_or_else(|| s.no_match(MAP_GEN, "a map"))?;
    let g = &mut b.gen;
    let body = apply_fun(g, f, vec![e.clone()], span);
    let per_i = g.fun(FunKind::Lambda(Lambda { params: vec![i.clone()], body: Box::new(body) }), span);
    let per_i = g.refresh_fun(&per_i);
    Ok(g.call_pattern(Pattern::Generate { len: len.clone(), f: Box::new(per_i) }, vec![], span))
}

/// `(mi, ni, t, span)` of `V(t)`: `map(\\r -> transpose $ map(\\s ->
/// transpose $ split(ni, s)) $ r) $ transpose $ split(mi, t)`
/// (`reduce-seq-block`'s blocking; checked by building it and comparing
/// up to parameter names).
fn v_parts<'a>(s: &Site<'a>) -> Option<(&'a ArithExpr, &'a ArithExpr, &'a Expr, Span)> {
    let (MapKind::Map, f, rows, _) = map_parts(s.expr)? else { return None };
    let FunKind::Lambda(Lambda { params, body }) = &f.kind else { return None };
    let [_] = params.as_slice() else { return None };
    let (View::Transpose, [m], _) = view(body)? else { return None };
    let (MapKind::Map, g, _, _) = map_parts(m)? else { return None };
    let FunKind::Lambda(Lambda { body: gb, .. }) = &g.kind else { return None };
    let (View::Transpose, [sp], _) = view(gb)? else { return None };
    let (View::Split(ni), [_], _) = view(sp)? else { return None };
    let (View::Transpose, [sp], _) = view(rows)? else { return None };
    let (View::Split(mi), [t], span) = view(sp)? else { return None };
    let g = &mut IdGen::for_program(s.prog);
    let v = super::relayout::blocks(g, t.clone(), mi, ni, span);
    crate::ir::equiv::expr_eq(s.prog, s.expr, &v).then_some((mi, ni, t, span))
}

/// `x` of `U(x)` (`untile`: `join $ map(join) $ transpose $ map(\\b ->
/// split(1) $ map(join) $ map(transpose) $ transpose $ b) $ x`) when `x` is
/// `[mi][ni][..]` (the blocks `V` splits by `mi`, `ni` make).
fn u_parts<'a>(s: &Site<'a>, t: &'a Expr, mi: &ArithExpr, ni: &ArithExpr) -> Option<&'a Expr> {
    let (View::Join, [j], span) = view(t)? else { return None };
    let (MapKind::Map, _, tr, _) = map_parts(j)? else { return None };
    let (View::Transpose, [m], _) = view(tr)? else { return None };
    let (MapKind::Map, _, x, _) = map_parts(m)? else { return None };
    let Some(crate::types::Type::Array(row, mi2)) = s.ty(x) else { return None };
    let crate::types::Type::Array(_, ni2) = row.as_ref() else { return None };
    let same = |a: &ArithExpr, b: &ArithExpr| arith::simplify(a) == arith::simplify(b);
    if !(same(mi, mi2) && same(ni, ni2)) {
        return None;
    }
    let g = &mut IdGen::for_program(s.prog);
    let u = super::matmul::untile(g, x.clone(), 1, false, span);
    crate::ir::equiv::expr_eq(s.prog, t, &u).then_some(x)
}

/// `x` of `V(U(x))`.
fn block_id_parts<'a>(s: &Site<'a>) -> Option<&'a Expr> {
    let (mi, ni, t, _) = v_parts(s)?;
    u_parts(s, t, mi, ni)
}

fn m_block_id(s: &Site<'_>) -> R {
    block_id_parts(s).map(|_| ()).ok_or_else(|| {
        s.no_match(BLOCK_ID, "`V(U(x))`: reduce-seq-block's blocking of untile of `x: [mi][ni][rm][rn]`")
    })
}

/// Element `[i][j][r][c]` of `V(t)` is `t[r*mi + i][c*ni + j]`, where
/// `U(x)` puts `x[i][j][r][c]`.
fn b_block_id(s: &Site<'_>, _: &Args, _: &mut Builder) -> B {
    block_id_parts(s).cloned().ok_or_else(|| s.no_match(BLOCK_ID, "a blocking of untile"))
}

/// What `block-outer` reads of `V(map(\\(r, x) -> map(\\(v, y) -> e) $
/// zip(r, ys)) $ zip(U(c), xs))`.
struct Outer<'a> {
    mi: &'a ArithExpr,
    ni: &'a ArithExpr,
    /// `\\(r, x) -> ...`, its parameters and the inner map's function.
    r: &'a Param,
    x: &'a Param,
    inner: &'a crate::ir::FunDecl,
    ys: &'a Expr,
    c: &'a Expr,
    xs: &'a Expr,
    span: Span,
}

fn outer_parts<'a>(s: &Site<'a>) -> Option<Outer<'a>> {
    let (mi, ni, t, span) = v_parts(s)?;
    let (MapKind::Map, f, zipped, _) = map_parts(t)? else { return None };
    let (Pattern::Zip(2), [uc, xs], _) = as_pattern(zipped)? else { return None };
    let c = u_parts(s, uc, mi, ni)?;
    let FunKind::Lambda(Lambda { params, body }) = &f.kind else { return None };
    let [r, x] = params.as_slice() else { return None };
    let (MapKind::Map, inner, z, _) = map_parts(body)? else { return None };
    let (Pattern::Zip(2), [rv, ys], _) = as_pattern(z)? else { return None };
    let is_r = matches!(rv.kind, crate::ir::ExprKind::Param(q) if q == r.id);
    let FunKind::Lambda(Lambda { params: vy, .. }) = &inner.kind else { return None };
    let ok = is_r
        && vy.len() == 2
        && count_uses(ys, r.id) == 0
        && count_uses(ys, x.id) == 0
        && !crate::ir::visit::fun_uses(inner, r.id);
    ok.then_some(Outer { mi, ni, r, x, inner, ys, c, xs, span })
}

fn m_block_outer(s: &Site<'_>) -> R {
    outer_parts(s).map(|_| ()).ok_or_else(|| {
        s.no_match(
            BLOCK_OUTER,
            "`V(map(\\(r, x) -> map(\\(v, y) -> e) $ zip(r, ys)) $ zip(U(c), xs))` with `ys` without `r`, `x`",
        )
    })
}

/// `transpose $ split(n, v)`: the strips of a column, strip `i` holding
/// `v[i], v[i + n], ...`.
fn strip(g: &mut IdGen, v: Expr, n: &ArithExpr, span: Span) -> Expr {
    let sp = g.call_pattern(Pattern::Split(n.clone()), vec![v], span);
    g.call_pattern(Pattern::Transpose, vec![sp], span)
}

/// Element `[i][j][a][b]` of the left-hand side is element `[a*mi +
/// i][b*ni + j]` of the outer product: `e` with `v = U(c)[a*mi + i][b*ni +
/// j] = c[i][j][a][b]`, `x = xs[a*mi + i]`, `y = ys[b*ni + j]`; on the
/// right `x` is `strip(mi, xs)[i][a]` and `y` is `strip(ni, ys)[j][b]`,
/// the same values.
fn b_block_outer(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    let o = outer_parts(s).ok_or_else(|| s.no_match(BLOCK_OUTER, "a blocked outer product"))?;
    let (span, g) = (o.span, &mut b.gen);
    let (ci, xi, cij, yj) =
        (g.synthetic_param(span), g.synthetic_param(span), g.synthetic_param(span), g.synthetic_param(span));
    // `\\(r, x) -> map(inner) $ zip(r, yj)`.
    let (rv, yv) = (g.var(o.r), g.var(&yj));
    let z = g.call_pattern(Pattern::Zip(2), vec![rv, yv], span);
    let body =
        g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(o.inner.clone()) }, vec![z], span);
    let per_row =
        g.fun(FunKind::Lambda(Lambda { params: vec![o.r.clone(), o.x.clone()], body: Box::new(body) }), span);
    let per_row = g.refresh_fun(&per_row);
    let (cv, xv) = (g.var(&cij), g.var(&xi));
    let z = g.call_pattern(Pattern::Zip(2), vec![cv, xv], span);
    let body = g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(per_row) }, vec![z], span);
    let per_block = g.fun(FunKind::Lambda(Lambda { params: vec![cij, yj], body: Box::new(body) }), span);
    let ys = g.refresh_expr(o.ys);
    let ys = strip(g, ys, o.ni, span);
    let civ = g.var(&ci);
    let z = g.call_pattern(Pattern::Zip(2), vec![civ, ys], span);
    let body = g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(per_block) }, vec![z], span);
    let per_group = g.fun(FunKind::Lambda(Lambda { params: vec![ci, xi], body: Box::new(body) }), span);
    let xs = g.refresh_expr(o.xs);
    let xs = strip(g, xs, o.mi, span);
    let c = g.refresh_expr(o.c);
    let z = g.call_pattern(Pattern::Zip(2), vec![c, xs], span);
    Ok(g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(per_group) }, vec![z], span))
}

/// `(n, f, x, span)` of `split(n) $ map(f) $ x` (a high-level map).
fn split_map_parts(e: &Expr) -> Option<(&ArithExpr, &crate::ir::FunDecl, &Expr, Span)> {
    let (View::Split(n), [m], span) = view(e)? else { return None };
    let (MapKind::Map, f, x, _) = map_parts(m)? else { return None };
    Some((n, f, x, span))
}

fn m_split_map(s: &Site<'_>) -> R {
    split_map_parts(s.expr)
        .map(|_| ())
        .ok_or_else(|| s.no_match(SPLIT_MAP, "`split(n) $ map(f) $ x` (a high-level map)"))
}

/// Chunk `i` of both is `f` of `x[i*n], ..., x[i*n + n - 1]`.
fn b_split_map(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    let (n, f, x, span) = split_map_parts(s.expr).ok_or_else(|| s.no_match(SPLIT_MAP, "a split"))?;
    let g = &mut b.gen;
    let sp = g.call_pattern(Pattern::Split(n.clone()), vec![x.clone()], span);
    let f = f.clone();
    let per_chunk = g.lambda1(span, |g, r| {
        g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(f) }, vec![r], span)
    });
    let per_chunk = g.refresh_fun(&per_chunk);
    Ok(g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(per_chunk) }, vec![sp], span))
}
