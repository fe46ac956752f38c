//! Rules that move or cut a reduction and keep every value folded in the
//! same order: each result is still `h` applied from its initial value
//! over the same elements one after the other, so the value is the same
//! bit for bit without assuming `h` associative or `z` neutral. They are
//! the small steps of `tile-mm` (`docs/REWRITE.md`, "tile-mm as small
//! steps"):
//!
//! - `map-reduce-interchange`: a map of reductions of equally long arrays
//!   is one reduction whose accumulator is the array of the map's results
//!   (each step folds the next element of every array into its own
//!   accumulator): for a matrix product, the reduction over `k` outside
//!   the results of a tile, each step an outer product.
//! - `reduce-seq-split`: a sequential reduction is a sequential reduction
//!   over chunks, each chunk folded into the running accumulator (the
//!   chunks of `kc` steps of `tile-mm`).
//! - `reduce-seq-map-zip`: the reverse of `map-reduce-interchange` for a
//!   fold: a fold whose step is element-wise over the accumulator row is a
//!   map of folds, one per column (`reduce-map-zip` is that for `reduce`,
//!   whose neutral `z` a running row is not): the maps over a tile's
//!   blocks outside a chunk's fold.
//! - `reduce-seq-map-zip-get`: the same when the operand zipped with the
//!   accumulator is computed from one component of the fold's zipped
//!   input (`tile-mm`'s strips of a chunk's column of `X`, or of `Y`): one
//!   fold per block over the zip of its strips and the other component.
//! - `reduce-seq-block` (`src/rewrite/relayout.rs`): the accumulator of a
//!   fold in another layout, `tile-mm`'s register blocks.

use super::algorithmic::{map_parts, rule, B, R};
use super::rule::{apply_fun, arg, view, Args, Builder, ParamSpec, Rule, RuleError, Site, View};
use crate::ir::visit::fun_uses;
use crate::ir::{Expr, ExprKind, FunDecl, FunKind, Lambda, Pattern, ReduceKind, Span};
use crate::types::Type;

pub static RULES: [Rule; 5] = [
    rule(
        "map-reduce-interchange",
        "map(\\b -> reduce(h, z) $ e) $ bs   (h without b; any reduce kind)",
        "transpose $ reduce(\\(accs, es) -> map(\\(acc, x) -> h(acc, x)) $ zip(accs, es), map(\\b -> z) $ bs) \
         $ transpose $ map(\\b -> e) $ bs",
        &[],
        m_map_reduce,
        b_map_reduce,
    ),
    rule(
        "reduce-seq-split",
        "reduceSeq(h, z) $ xs   (n | len)",
        "reduceSeq(\\(acc, c) -> J(reduceSeq(h*, acc) $ c), z) $ split(n, xs)   (J: join for an array accumulator, at(0) else)",
        &[ParamSpec { name: "n", what: "elements per chunk" }],
        m_split,
        b_split,
    ),
    rule(
        COLUMNS,
        "reduceSeq(\\(accs, es) -> map(\\(acc, x) -> e) $ zip(accs, es), z) $ xs   (e without accs, es)",
        "transpose $ map(\\(z0, col) -> reduceSeq(\\(acc, x) -> e, z0) $ col) $ zip(z, transpose $ xs)",
        &[],
        m_columns,
        b_columns,
    ),
    rule(
        BLOCK,
        "reduceSeq(h, z) $ xs   (z: [[t]N]M, rm | M, rn | N)",
        "map(U) $ reduceSeq(\\(acc, x) -> V(h(U(acc), x)), V(z)) $ xs   (V: the [M/rm][N/rn][rm][rn] strided blocks of tile-mm, U: its untile)",
        &[ParamSpec { name: "rm", what: "rows of a block" }, ParamSpec { name: "rn", what: "columns of a block" }],
        super::relayout::m_block,
        super::relayout::b_block,
    ),
    rule(
        GET_COLUMNS,
        "join $ reduceSeq(\\(c, k) -> map(\\(ci, xi) -> e) $ zip(c, X), z) $ zip(A0, A1)   \
         (X reads k only as get(i, k), e only as get(1-i, k); neither reads c)",
        "map(\\(zi, col) -> J(reduceSeq(\\(ci, k) -> e[xi := get(i, k)], zi) $ zip(A0, A1)[Ai := col])) \
         $ zip(z, transpose $ map(\\a -> X[get(i, k) := a]) $ Ai)   (J: join for array rows, at(0) else)",
        &[],
        m_get_columns,
        b_get_columns,
    ),
];

const INTERCHANGE: &str = "map-reduce-interchange";
const SPLIT: &str = "reduce-seq-split";
const COLUMNS: &str = "reduce-seq-map-zip";
const BLOCK: &str = "reduce-seq-block";
const GET_COLUMNS: &str = "reduce-seq-map-zip-get";

/// What `map-reduce-interchange` reads: the map's lambda (one parameter
/// `b`), the reduction's kind, operator, initial value and input (`z` and
/// `e` may use `b`), and the mapped array.
struct MapReduce<'a> {
    lam: &'a Lambda,
    kind: ReduceKind,
    h: &'a FunDecl,
    z: &'a Expr,
    e: &'a Expr,
    bs: &'a Expr,
    span: Span,
}

fn map_reduce_parts(e: &Expr) -> Option<MapReduce<'_>> {
    let (crate::ir::MapKind::Map, f, bs, span) = map_parts(e)? else { return None };
    let FunKind::Lambda(lam) = &f.kind else { return None };
    if lam.params.len() != 1 {
        return None;
    }
    let (View::Reduce { kind, f: h }, [z, e], _) = view(&lam.body)? else { return None };
    Some(MapReduce { lam, kind, h, z, e, bs, span })
}

fn m_map_reduce(s: &Site<'_>) -> R {
    map_reduce_parts(s.expr)
        .map(|_| ())
        .ok_or_else(|| s.no_match(INTERCHANGE, "`map(\\b -> reduce(h, z) $ e) $ bs` (a high-level map)"))
}

/// Correct because component `j` of the accumulator is folded exactly as
/// the `j`-th reduction was: from `z[b := bs[j]]`, by `h`, over `e[b :=
/// bs[j]]` in order (the `k`-th step reads column `k` of the transposed
/// inputs, which is element `k` of each). All `e` have one length (the
/// rows of one array). `h` must not use `b`: it leaves `b`'s scope. For a
/// high-level `reduce` the element-wise operator is again associative and
/// commutative with the neutral row `map(\b -> z)`, so the kind is kept.
fn b_map_reduce(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    let p = map_reduce_parts(s.expr).ok_or_else(|| s.no_match(INTERCHANGE, "a map of reductions"))?;
    let param = &p.lam.params[0];
    if fun_uses(p.h, param.id) {
        return Err(RuleError::SideCondition {
            rule: INTERCHANGE,
            what: format!("the operator of the reduction uses the map's element `{}`", param.name),
        });
    }
    let span = p.span;
    let g = &mut b.gen;
    // `\b -> x` with `b` the map's own parameter, refreshed.
    let mut per_b = |x: &Expr| {
        let f = FunDecl {
            id: crate::ir::FunId::FRESH,
            kind: FunKind::Lambda(Lambda { params: vec![param.clone()], body: Box::new(x.clone()) }),
            span,
        };
        let f = g.refresh_fun(&f);
        let bs = g.refresh_expr(p.bs);
        g.call_pattern(Pattern::Map { kind: crate::ir::MapKind::Map, f: Box::new(f) }, vec![bs], span)
    };
    let init = per_b(p.z);
    let inputs = per_b(p.e);
    let cols = g.call_pattern(Pattern::Transpose, vec![inputs], span);
    let (accs, es) = (g.synthetic_param(span), g.synthetic_param(span));
    let (va, ve) = (g.var(&accs), g.var(&es));
    let (acc, x) = (g.synthetic_param(span), g.synthetic_param(span));
    let (vacc, vx) = (g.var(&acc), g.var(&x));
    let one = apply_fun(g, p.h, vec![vacc, vx], span);
    let one = g.fun(FunKind::Lambda(Lambda { params: vec![acc, x], body: Box::new(one) }), span);
    let zipped = g.call_pattern(Pattern::Zip(2), vec![va, ve], span);
    let each =
        g.call_pattern(Pattern::Map { kind: crate::ir::MapKind::Map, f: Box::new(one) }, vec![zipped], span);
    let step = g.fun(FunKind::Lambda(Lambda { params: vec![accs, es], body: Box::new(each) }), span);
    let red = g.call_pattern(Pattern::Reduce { kind: p.kind, f: Box::new(step) }, vec![init, cols], span);
    Ok(g.call_pattern(Pattern::Transpose, vec![red], span))
}

/// `(kind, h, z, xs, span)` of a sequential reduction.
pub(super) fn seq_parts(e: &Expr) -> Option<(ReduceKind, &FunDecl, &Expr, &Expr, Span)> {
    match view(e)? {
        (View::Reduce { kind: kind @ (ReduceKind::Seq | ReduceKind::SeqUnroll), f }, [z, xs], span) => {
            Some((kind, f, z, xs, span))
        }
        _ => None,
    }
}

fn m_split(s: &Site<'_>) -> R {
    seq_parts(s.expr).map(|_| ()).ok_or_else(|| s.no_match(SPLIT, "`reduceSeq(h, z) $ xs` (either unrolled)"))
}

/// Correct because folding chunk after chunk, each from the accumulator
/// the previous chunks left, applies `h` to the same elements in the same
/// order as one fold over `xs`; no associativity is needed (so it holds
/// for `reduceSeq` only: a high-level `reduce` started from a running
/// accumulator would break its neutral-element promise). The inner fold
/// gives a one-element array: `join` takes its element when the
/// accumulator is an array (as `tile-mm` writes it), `at(0)` otherwise.
fn b_split(s: &Site<'_>, a: &Args, b: &mut Builder) -> B {
    let (kind, h, z, xs, span) = seq_parts(s.expr).ok_or_else(|| s.no_match(SPLIT, "a reduceSeq"))?;
    let n = arg(SPLIT, a, "n")?;
    let len = s.len(xs).ok_or_else(|| s.no_match(SPLIT, "a reduction of an array"))?;
    b.divides(SPLIT, &n, &len)?;
    let array_acc = matches!(s.ty(z), Some(Type::Array(..)));
    let g = &mut b.gen;
    let chunks = g.call_pattern(Pattern::Split(n), vec![xs.clone()], span);
    let (acc, c) = (g.synthetic_param(span), g.synthetic_param(span));
    let (va, vc) = (g.var(&acc), g.var(&c));
    let h = g.refresh_fun(h);
    let inner = g.call_pattern(Pattern::Reduce { kind, f: Box::new(h) }, vec![va, vc], span);
    let one = if array_acc {
        g.call_pattern(Pattern::Join, vec![inner], span)
    } else {
        g.call_pattern(Pattern::At(crate::arith::ArithExpr::Cst(0)), vec![inner], span)
    };
    let step = g.fun(FunKind::Lambda(Lambda { params: vec![acc, c], body: Box::new(one) }), span);
    Ok(g.call_pattern(Pattern::Reduce { kind, f: Box::new(step) }, vec![z.clone(), chunks], span))
}

/// `(kind, e's lambda, z, xs, span)` of `reduceSeq(\(accs, es) ->
/// map(\(acc, x) -> e) $ zip(accs, es), z) $ xs` (high-level map, `e`
/// reading neither `accs` nor `es`).
fn columns_parts(e: &Expr) -> Option<(ReduceKind, &FunDecl, &Expr, &Expr, Span)> {
    let (kind, h, z, xs, span) = seq_parts(e)?;
    let FunKind::Lambda(Lambda { params, body }) = &h.kind else { return None };
    let [accs, es] = params.as_slice() else { return None };
    let (crate::ir::MapKind::Map, f, zipped, _) = map_parts(body)? else { return None };
    let FunKind::Lambda(each) = &f.kind else { return None };
    let (Pattern::Zip(2), [a, x], _) = super::rule::as_pattern(zipped)? else { return None };
    let is = |e: &Expr, p: &crate::ir::Param| matches!(e.kind, crate::ir::ExprKind::Param(q) if q == p.id);
    let own = !fun_uses(f, accs.id) && !fun_uses(f, es.id);
    (is(a, accs) && is(x, es) && each.params.len() == 2 && own).then_some((kind, f, z, xs, span))
}

fn m_columns(s: &Site<'_>) -> R {
    columns_parts(s.expr).map(|_| ()).ok_or_else(|| {
        s.no_match(COLUMNS, "`reduceSeq(\\(accs, es) -> map(\\(acc, x) -> e) $ zip(accs, es), z) $ xs`, `e` without `accs`, `es`")
    })
}

/// Correct because component `j` of the accumulator is folded on its own:
/// step `k` sets it to `e` of its old value and `xs[k][j]`, reading no
/// other component, so it is the fold of column `j` of `xs` from `z[j]`
/// in order. Each column's fold gives a one-element array: the map gives
/// `[n][1]`, transposed the fold's `[1][n]`.
fn b_columns(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    let (kind, f, z, xs, span) = columns_parts(s.expr).ok_or_else(|| s.no_match(COLUMNS, "a fold"))?;
    let g = &mut b.gen;
    let cols = g.call_pattern(Pattern::Transpose, vec![xs.clone()], span);
    let pairs = g.call_pattern(Pattern::Zip(2), vec![z.clone(), cols], span);
    let (z0, col) = (g.synthetic_param(span), g.synthetic_param(span));
    let (vz, vc) = (g.var(&z0), g.var(&col));
    let f = g.refresh_fun(f);
    let fold = g.call_pattern(Pattern::Reduce { kind, f: Box::new(f) }, vec![vz, vc], span);
    let per = g.fun(FunKind::Lambda(Lambda { params: vec![z0, col], body: Box::new(fold) }), span);
    let m =
        g.call_pattern(Pattern::Map { kind: crate::ir::MapKind::Map, f: Box::new(per) }, vec![pairs], span);
    Ok(g.call_pattern(Pattern::Transpose, vec![m], span))
}

/// The paths in `e` of the calls `get(i, k)`, and whether `k` occurs
/// nowhere else in `e`.
fn get_paths(e: &Expr, k: crate::ir::ParamId, i: usize) -> (Vec<crate::ir::Path>, bool) {
    let paths: Vec<_> = crate::ir::visit::expr_positions(e)
        .into_iter()
        .filter(|(_, x)| match super::rule::as_pattern(x) {
            Some((Pattern::Get(j), [a], _)) => *j == i && matches!(a.kind, ExprKind::Param(q) if q == k),
            Some(_) | None => false,
        })
        .map(|(p, _)| p)
        .collect();
    let only = paths.len() == crate::ir::visit::count_uses(e, k);
    (paths, only)
}

/// What `reduce-seq-map-zip-get` reads.
struct GetColumns<'a> {
    kind: ReduceKind,
    k: &'a crate::ir::Param,
    ci: &'a crate::ir::Param,
    xi: &'a crate::ir::Param,
    e: &'a Expr,
    x: &'a Expr,
    z: &'a Expr,
    inputs: [&'a Expr; 2],
    /// The component of the input `X` reads.
    i: usize,
    span: Span,
}

fn get_columns_parts(x: &Expr) -> Option<GetColumns<'_>> {
    use crate::ir::visit::count_uses;
    let (View::Join, [r], span) = view(x)? else { return None };
    let (kind, h, z, xs, _) = seq_parts(r)?;
    let (Pattern::Zip(2), [a0, a1], _) = super::rule::as_pattern(xs)? else { return None };
    let FunKind::Lambda(Lambda { params, body }) = &h.kind else { return None };
    let [c, k] = params.as_slice() else { return None };
    let (crate::ir::MapKind::Map, f, zipped, _) = map_parts(body)? else { return None };
    let (Pattern::Zip(2), [cv, xe], _) = super::rule::as_pattern(zipped)? else { return None };
    if !matches!(cv.kind, ExprKind::Param(q) if q == c.id) {
        return None;
    }
    let FunKind::Lambda(Lambda { params: fp, body: e }) = &f.kind else { return None };
    let [ci, xi] = fp.as_slice() else { return None };
    let i = (0..2).find(|&i| {
        let (px, ox) = get_paths(xe, k.id, i);
        let (_, oe) = get_paths(e, k.id, 1 - i);
        !px.is_empty() && ox && oe
    })?;
    if count_uses(xe, c.id) != 0 || count_uses(e, c.id) != 0 {
        return None;
    }
    Some(GetColumns { kind, k, ci, xi, e, x: xe, z, inputs: [a0, a1], i, span })
}

fn m_get_columns(s: &Site<'_>) -> R {
    get_columns_parts(s.expr).map(|_| ()).ok_or_else(|| {
        s.no_match(
            GET_COLUMNS,
            "`join $ reduceSeq(\\(c, k) -> map(\\(ci, xi) -> e) $ zip(c, X), z) $ zip(A0, A1)`, X reading k only as get(i, k), e only as get(1-i, k)",
        )
    })
}

/// Each step maps over the rows of the accumulator, row `r` updated from
/// itself, `X(k)[r]` and the other component of `k` alone: so row `r` is
/// folded by itself, from `z[r]`, over the pairs of `X(k)[r]` (column `r`
/// of `transpose $ map(X) $ Ai`, as `X` reads only `Ai[k]`) and the other
/// component, in the same order. `join` of the one-row result is row by
/// row the one-row results joined. (An empty input leaves `z` on both
/// sides.)
fn b_get_columns(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    let p = get_columns_parts(s.expr).ok_or_else(|| s.no_match(GET_COLUMNS, "a joined fold"))?;
    let array_rows =
        matches!(s.ty(p.z), Some(Type::Array(row, _)) if matches!(row.as_ref(), Type::Array(..)));
    let span = p.span;
    let g = &mut b.gen;
    // `\\a -> X[get(i, k) := a]`.
    let a = g.synthetic_param(span);
    let (paths, _) = get_paths(p.x, p.k.id, p.i);
    let mut xa = p.x.clone();
    for path in &paths {
        let av = g.var(&a);
        xa = crate::ir::visit::replace_at(&xa, path, av).unwrap_or_else(|_| unreachable!("a path of X"));
    }
    let per_a = g.fun(FunKind::Lambda(Lambda { params: vec![a], body: Box::new(xa) }), span);
    let per_a = g.refresh_fun(&per_a);
    let ai = g.refresh_expr(p.inputs[p.i]);
    let m =
        g.call_pattern(Pattern::Map { kind: crate::ir::MapKind::Map, f: Box::new(per_a) }, vec![ai], span);
    let cols = g.call_pattern(Pattern::Transpose, vec![m], span);
    // `\\(ci, k) -> e[xi := get(i, k)]`.
    let kv = g.var(p.k);
    let gx = g.call_pattern(Pattern::Get(p.i), vec![kv], span);
    let by = [(p.xi.id, gx)].into_iter().collect();
    let e = crate::ir::visit::substitute(p.e, &by, g);
    let step =
        g.fun(FunKind::Lambda(Lambda { params: vec![p.ci.clone(), p.k.clone()], body: Box::new(e) }), span);
    let step = g.refresh_fun(&step);
    let (zi, col) = (g.synthetic_param(span), g.synthetic_param(span));
    let other = g.refresh_expr(p.inputs[1 - p.i]);
    let colv = g.var(&col);
    let pair = if p.i == 0 { vec![colv, other] } else { vec![other, colv] };
    let input = g.call_pattern(Pattern::Zip(2), pair, span);
    let ziv = g.var(&zi);
    let red = g.call_pattern(Pattern::Reduce { kind: p.kind, f: Box::new(step) }, vec![ziv, input], span);
    // `join` of a row's one-row result, `at(0)` for scalar rows.
    let body = if array_rows {
        g.call_pattern(Pattern::Join, vec![red], span)
    } else {
        g.call_pattern(Pattern::At(crate::arith::ArithExpr::Cst(0)), vec![red], span)
    };
    let per_row = g.fun(FunKind::Lambda(Lambda { params: vec![zi, col], body: Box::new(body) }), span);
    let z = g.refresh_expr(p.z);
    let zz = g.call_pattern(Pattern::Zip(2), vec![z, cols], span);
    Ok(g.call_pattern(Pattern::Map { kind: crate::ir::MapKind::Map, f: Box::new(per_row) }, vec![zz], span))
}
