//! Overlapped tiling of the stencil defs as written in
//! `benchmarks/cgo18/*.lift` (CGO 2018, Section 4.1):
//!
//! * `overlapped-tiling-2d-rect` tiles a 2D stencil with tiles of their own
//!   size and step per dimension (rows `uy`, `vy`; columns `ux`, `vx`), on
//!   one slid grid or on a `zip` of grids, some slid (tiled with the halo,
//!   slid again inside the tile) and some not (split into the same tiles
//!   without halo, zipped per tile);
//! * `stencil-3d-planes` rewrites a 3D stencil `map_3(f) o slide_3` into a
//!   map over windows of planes of a 2D stencil over columns (z becomes the
//!   innermost dimension of the neighbourhood), the form the 2D rule then
//!   tiles. `f` reads its neighbourhood point by point
//!   (`at(x, at(y, at(z, nbh)))`); the rule swaps the indices of each read
//!   to `at(z, at(x, at(y, nbh)))`, so `f` stays a point-wise function;
//! * `stencil-3d-columns` rewrites a 3D stencil over one grid into a map
//!   over the (y, x) columns of a sequence along z of 2D neighbourhoods,
//!   each slid along z: `map(f) o slide` per column, the form
//!   `slide-seq-plus` turns into a z-walk keeping the window in registers
//!   (the 2.5D technique; `f` is unchanged);
//! * `let-local-copies` binds the tile copies (`toLocal(...)`) in the
//!   data of a call with `let`, before it: the copies of several grids are
//!   then written one after the other behind one barrier, as the
//!   hand-written tiled defs bind them.
//!
//! Both keep the value (`tests/rewrite_rules.rs`, the property test).

use super::algorithmic::{check_tiles, map_parts, Slides};
use super::macros::{map2, map2_parts, slide2_parts, unary_pattern};
use super::rule::{arg, Args, Builder, Family, ParamSpec, Rule, RuleError, Site};
use crate::arith::ArithExpr;
use crate::ir::visit::nested_fun_mut;
use crate::ir::{Expr, ExprKind, FunDecl, FunKind, IdGen, MapKind, ParamId, Pattern, Span};
use crate::types::Type;

type R = Result<(), RuleError>;
type B = Result<Expr, RuleError>;

const RECT: &[ParamSpec] = &[
    ParamSpec { name: "uy", what: "tile rows (inputs)" },
    ParamSpec { name: "vy", what: "tile row step" },
    ParamSpec { name: "ux", what: "tile columns (inputs)" },
    ParamSpec { name: "vx", what: "tile column step" },
];

pub static RULES: [Rule; 4] = [
    Rule {
        name: "overlapped-tiling-2d-rect",
        family: Family::Macro,
        lhs: "map_2(f) o slide_2(size, step)   or   map_2(f) o zip_2(slide_2(size, step) $ x, y, ...)",
        rhs: "map(join) o join o map(transpose) o map_2(\\t -> map_2(f) o slide_2(size, step) $ t) o slide_2(uy, vy; ux, vx)   (zip: each slid grid tiled with its halo, each other grid with tiles of vy/step x vx/step, zipped per tile)",
        params: RECT,
        matches: m_rect,
        build: b_rect,
    },
    Rule {
        name: "stencil-3d-planes",
        family: Family::Macro,
        lhs: "map_3(f) o slide_3(size, step)   or   map_3(f) o zip_3(slide_3(size, step) $ x, y, ...)",
        rhs: "map(\\zp -> map_2(f') o slide_2(size, step) o map(transpose) o transpose $ zp) o slide(size, step)   (zip: of the planes; f' reads at(z, at(x, at(y, nbh))) where f reads at(x, at(y, at(z, nbh))))",
        params: &[],
        matches: m_planes,
        build: b_planes,
    },
    Rule {
        name: "stencil-3d-columns",
        family: Family::Macro,
        lhs: "map_3(f) o slide_3(size, step) $ x",
        rhs: "transpose o map(transpose) o map_2(\\c -> map(f) o slide(size, step) $ c) o map(transpose) o transpose o map(slide_2(size, step)) $ x   (per (y, x) a column along z of 2D neighbourhoods, slid along z)",
        params: &[],
        matches: m_columns,
        build: b_columns,
    },
    Rule {
        name: "let-local-copies",
        family: Family::Macro,
        lhs: "F $ ... toLocal(c0) ... toLocal(c1) ...   (copies in the data of a call, bound outside it)",
        rhs: "let l0 = toLocal(c0) in let l1 = toLocal(c1) in F $ ... l0 ... l1 ...",
        params: &[],
        matches: m_bind,
        build: b_bind,
    },
];

/// `zip(get(0, p), ..., get(n-1, p))` with `p` the given parameter.
fn zip_of_gets(e: &Expr, p: ParamId) -> Option<usize> {
    let ExprKind::Call(f, args) = &e.kind else { return None };
    let FunKind::Pattern(Pattern::Zip(n)) = &f.kind else { return None };
    let ok = args.iter().enumerate().all(|(i, a)| is_get(a, i, p));
    (ok && *n == args.len()).then_some(*n)
}

fn is_get(e: &Expr, i: usize, p: ParamId) -> bool {
    match &e.kind {
        ExprKind::Call(f, args) => match (&f.kind, args.as_slice()) {
            (FunKind::Pattern(Pattern::Get(j)), [Expr { kind: ExprKind::Param(q), .. }]) => {
                *j == i && *q == p
            }
            _ => false,
        },
        ExprKind::Literal(_) | ExprKind::Param(_) => false,
    }
}

/// `i` of `get(i, p)`.
fn get_index(e: &Expr, p: ParamId) -> Option<usize> {
    match super::rule::as_pattern(e)? {
        (Pattern::Get(i), [Expr { kind: ExprKind::Param(q), .. }], _) if *q == p => Some(*i),
        _ => None,
    }
}

/// The body of `\p -> body` and `p`.
fn lambda1_body(f: &FunDecl) -> Option<(ParamId, &Expr)> {
    match &f.kind {
        FunKind::Lambda(l) if l.params.len() == 1 => Some((l.params[0].id, &l.body)),
        FunKind::Lambda(_) | FunKind::UserFun(_) | FunKind::Pattern(_) => None,
    }
}

/// The grids of `zip(xs, ys, ...)`.
fn zip_args(e: &Expr) -> Option<&[Expr]> {
    match &e.kind {
        ExprKind::Call(f, args) => match &f.kind {
            FunKind::Pattern(Pattern::Zip(n)) if *n == args.len() && *n >= 2 => Some(args),
            _ => None,
        },
        ExprKind::Literal(_) | ExprKind::Param(_) => None,
    }
}

/// The grids of `zip_2(xs, ys, ...) = map(\r -> zip(get(0, r), ...)) $ zip(xs, ys, ...)`.
fn zip2_parts(e: &Expr) -> Option<&[Expr]> {
    let (MapKind::Map, g, z, _) = map_parts(e)? else { return None };
    let (r, body) = lambda1_body(g)?;
    let n = zip_of_gets(body, r)?;
    zip_args(z).filter(|a| a.len() == n)
}

/// The grids of `zip_3(xs, ys, ...) = map(\p -> zip_2(get(0, p), ...)) $ zip(xs, ys, ...)`.
fn zip3_parts(e: &Expr) -> Option<&[Expr]> {
    let (MapKind::Map, g, z, _) = map_parts(e)? else { return None };
    let (p, body) = lambda1_body(g)?;
    let inner = zip2_parts(body)?;
    let ok = inner.iter().enumerate().all(|(i, a)| is_get(a, i, p));
    zip_args(z).filter(|a| ok && a.len() == inner.len())
}

/// A grid of a stencil: slid (tiled with its halo) or read one element per
/// output (tiled without halo).
enum Part<'a> {
    Slid(&'a Expr),
    Plain(&'a Expr),
}

/// A 2D stencil: `f`, the window size and step, the grids, whether they
/// are zipped.
struct Stencil2<'a> {
    f: &'a FunDecl,
    size: &'a ArithExpr,
    step: &'a ArithExpr,
    parts: Vec<Part<'a>>,
    zipped: bool,
    span: Span,
}

fn stencil2(e: &Expr) -> Option<Stencil2<'_>> {
    let (f, xs, span) = map2_parts(e)?;
    if let Some((size, step, x)) = slide2_parts(xs) {
        return Some(Stencil2 { f, size, step, parts: vec![Part::Slid(x)], zipped: false, span });
    }
    let grids = zip2_parts(xs)?;
    let mut win: Option<(&ArithExpr, &ArithExpr)> = None;
    let mut parts = Vec::new();
    for g in grids {
        match slide2_parts(g) {
            Some((size, step, x)) => {
                if win.is_some_and(|w| w != (size, step)) {
                    return None;
                }
                win = Some((size, step));
                parts.push(Part::Slid(x));
            }
            None => parts.push(Part::Plain(g)),
        }
    }
    let (size, step) = win?;
    Some(Stencil2 { f, size, step, parts, zipped: true, span })
}

fn m_rect(s: &Site<'_>) -> R {
    stencil2(s.expr).map(|_| ()).ok_or_else(|| {
        s.no_match(
            "overlapped-tiling-2d-rect",
            "`map(map(f)) $ slide_2(size, step) $ x`, or of a zip_2 of such grids and others",
        )
    })
}

fn lens2(s: &Site<'_>, e: &Expr, rule: &'static str) -> Result<(ArithExpr, ArithExpr), RuleError> {
    match s.ty(e) {
        Some(Type::Array(row, n)) => match row.as_ref() {
            Type::Array(_, m) => Ok((n.clone(), m.clone())),
            _ => Err(s.no_match(rule, "a 2D grid")),
        },
        _ => Err(s.no_match(rule, "a 2D grid")),
    }
}

/// `map(transpose) o slide(sy, ty) o map(slide(sx, tx)) $ x`.
fn slide2r(
    g: &mut IdGen,
    y: (&ArithExpr, &ArithExpr),
    x: (&ArithExpr, &ArithExpr),
    e: Expr,
    span: Span,
) -> Expr {
    let (sx, tx) = (x.0.clone(), x.1.clone());
    let inner = g.lambda1(span, |g, r| g.call_pattern(Pattern::Slide { size: sx, step: tx }, vec![r], span));
    let rows = g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(inner) }, vec![e], span);
    let sl = g.call_pattern(Pattern::Slide { size: y.0.clone(), step: y.1.clone() }, vec![rows], span);
    let tr = g.lambda1(span, |g, w| g.call_pattern(Pattern::Transpose, vec![w], span));
    g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(tr) }, vec![sl], span)
}

/// `map(\r -> zip(get(0, r), ...)) $ zip(xs)`.
fn zip2(g: &mut IdGen, xs: Vec<Expr>, span: Span) -> Expr {
    let n = xs.len();
    let z = g.call_pattern(Pattern::Zip(n), xs, span);
    zip_rows(g, z, n, span)
}

/// `map(\r -> zip(get(0, r), ...)) $ z`.
fn zip_rows(g: &mut IdGen, z: Expr, n: usize, span: Span) -> Expr {
    let rz = g.lambda1(span, |g, r| {
        let gets = (0..n).map(|i| get(g, i, &r, span)).collect();
        g.call_pattern(Pattern::Zip(n), gets, span)
    });
    g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(rz) }, vec![z], span)
}

fn get(g: &mut IdGen, i: usize, p: &Expr, span: Span) -> Expr {
    let p = g.refresh_expr(p);
    g.call_pattern(Pattern::Get(i), vec![p], span)
}

fn b_rect(s: &Site<'_>, a: &Args, b: &mut Builder) -> B {
    let rule = "overlapped-tiling-2d-rect";
    m_rect(s)?;
    let st = stencil2(s.expr).ok_or_else(|| s.no_match(rule, "a 2D stencil"))?;
    let [uy, vy, ux, vx] = ["uy", "vy", "ux", "vx"].map(|n| arg(rule, a, n));
    let (uy, vy, ux, vx) = (uy?, vy?, ux?, vx?);
    // Outputs per tile side: the tiles of a grid read without halo.
    let oy = crate::arith::simplify(&ArithExpr::div(vy.clone(), st.step.clone()));
    let ox = crate::arith::simplify(&ArithExpr::div(vx.clone(), st.step.clone()));
    for p in &st.parts {
        match p {
            Part::Slid(x) => {
                let (rows, cols) = lens2(s, x, rule)?;
                let windows = Slides { size: st.size, step: st.step };
                check_tiles(b, rule, windows, Slides { size: &uy, step: &vy }, &rows)?;
                check_tiles(b, rule, windows, Slides { size: &ux, step: &vx }, &cols)?;
            }
            Part::Plain(y) => {
                let (rows, cols) = lens2(s, y, rule)?;
                b.divides(rule, &oy, &rows)?;
                b.divides(rule, &ox, &cols)?;
            }
        }
    }
    let span = st.span;
    let (f, size, step) = (st.f.clone(), st.size.clone(), st.step.clone());
    let g = &mut b.gen;
    let mut tiled = Vec::new();
    for p in &st.parts {
        tiled.push(match p {
            Part::Slid(x) => slide2r(g, (&uy, &vy), (&ux, &vx), (*x).clone(), span),
            Part::Plain(y) => slide2r(g, (&oy, &oy), (&ox, &ox), (*y).clone(), span),
        });
    }
    // The windows of one tile, as the def wrote them for the whole grid.
    let windows = |g: &mut IdGen, t: Expr| -> Expr {
        if !st.zipped {
            return slide2r(g, (&size, &step), (&size, &step), t, span);
        }
        let grids = st
            .parts
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let ti = get(g, i, &t, span);
                match p {
                    Part::Slid(_) => slide2r(g, (&size, &step), (&size, &step), ti, span),
                    Part::Plain(_) => ti,
                }
            })
            .collect();
        zip2(g, grids, span)
    };
    let per_tile = |g: &mut IdGen, t: Expr| -> Expr {
        let w = windows(g, t);
        map2(g, w, span, |g, e| super::rule::apply_fun(g, &f, vec![e], span))
    };
    let computed = if st.zipped {
        // map(\rt -> map(per_tile) $ zip(get(0, rt), ...)) $ zip(tiles...)
        let n = tiled.len();
        let z = g.call_pattern(Pattern::Zip(n), tiled, span);
        let row = g.lambda1(span, |g, rt| {
            let gets = (0..n).map(|i| get(g, i, &rt, span)).collect();
            let zr = g.call_pattern(Pattern::Zip(n), gets, span);
            let pt = g.lambda1(span, per_tile);
            g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(pt) }, vec![zr], span)
        });
        g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(row) }, vec![z], span)
    } else {
        let tiles = tiled.pop().unwrap_or_else(|| unreachable!("one grid"));
        map2(g, tiles, span, per_tile)
    };
    let tr = g.lambda1(span, |g, x| g.call_pattern(Pattern::Transpose, vec![x], span));
    let m = g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(tr) }, vec![computed], span);
    let j = g.call_pattern(Pattern::Join, vec![m], span);
    let jn = g.lambda1(span, |g, x| g.call_pattern(Pattern::Join, vec![x], span));
    Ok(g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(jn) }, vec![j], span))
}

// ---------------------------------------------------------------------------
// 3D: windows of planes.

/// `(f, xs, span)` of `map(\a -> map(\b -> map(f, b), a), xs)`.
fn map3_parts(e: &Expr) -> Option<(&FunDecl, &Expr, Span)> {
    let (MapKind::Map, g, xs, span) = map_parts(e)? else { return None };
    let Pattern::Map { kind: MapKind::Map, f: g2 } = unary_pattern(g)? else { return None };
    match unary_pattern(g2)? {
        Pattern::Map { kind: MapKind::Map, f } => Some((f, xs, span)),
        _ => None,
    }
}

/// `(size, step, x)` of `slide_3(size, step) $ x =
/// map(map(transpose) o transpose) o slide(size, step) o map(slide_2(size, step)) $ x`.
fn slide3_parts(e: &Expr) -> Option<(&ArithExpr, &ArithExpr, &Expr)> {
    let (MapKind::Map, g, x1, _) = map_parts(e)? else { return None };
    let (p, body) = lambda1_body(g)?;
    let (MapKind::Map, t, tp, _) = map_parts(body)? else { return None };
    if !matches!(unary_pattern(t)?, Pattern::Transpose) {
        return None;
    }
    let (Pattern::Transpose, [Expr { kind: ExprKind::Param(q), .. }], _) = super::rule::as_pattern(tp)?
    else {
        return None;
    };
    if *q != p {
        return None;
    }
    let (Pattern::Slide { size, step }, [x2], _) = super::rule::as_pattern(x1)? else { return None };
    let (MapKind::Map, pl, x, _) = map_parts(x2)? else { return None };
    let (pp, plane) = lambda1_body(pl)?;
    let (s2, t2, inner) = slide2_parts(plane)?;
    let own = matches!(inner.kind, ExprKind::Param(q) if q == pp);
    (own && s2 == size && t2 == step).then_some((size, step, x))
}

/// A 3D stencil: `f`, the window, the grids (exactly one slid), zipped or not.
struct Stencil3<'a> {
    f: &'a FunDecl,
    size: &'a ArithExpr,
    step: &'a ArithExpr,
    /// The slid grid's index among the zipped ones (`None`: not zipped).
    slid: Option<usize>,
    grids: Vec<&'a Expr>,
    span: Span,
}

fn stencil3(e: &Expr) -> Option<Stencil3<'_>> {
    let (f, xs, span) = map3_parts(e)?;
    let st = if let Some((size, step, x)) = slide3_parts(xs) {
        Stencil3 { f, size, step, slid: None, grids: vec![x], span }
    } else {
        let grids = zip3_parts(xs)?;
        let slid: Vec<usize> = (0..grids.len()).filter(|&i| slide3_parts(&grids[i]).is_some()).collect();
        let [i] = slid.as_slice() else { return None };
        let (size, step, x) = slide3_parts(&grids[*i])?;
        let grids = grids.iter().enumerate().map(|(j, g)| if j == *i { x } else { g }).collect();
        Stencil3 { f, size, step, slid: Some(*i), grids, span }
    };
    // f must read the slid neighbourhood only point by point.
    let mut probe = st.f.clone();
    reorder_reads(&mut probe, st.slid).then_some(st)
}

/// Rewrites, in `\q -> body`, every read `at(a, at(b, at(c, N)))` of the
/// neighbourhood `N` (`q`, or `get(i, q)` when zipped) into
/// `at(c, at(a, at(b, N)))`; false if `N` is used otherwise.
fn reorder_reads(f: &mut FunDecl, slid: Option<usize>) -> bool {
    let FunKind::Lambda(l) = &mut f.kind else { return false };
    let [q] = l.params.as_slice() else { return false };
    let q = q.id;
    let (mut reads, mut others) = (0, 0);
    walk_reads(&mut l.body, q, slid, &mut reads, &mut others);
    reads > 0 && crate::ir::visit::count_uses(&l.body, q) == reads + others
}

/// The index of `at(i, e)` and `e`.
fn at_parts(e: &Expr) -> Option<(&ArithExpr, &Expr)> {
    match super::rule::as_pattern(e)? {
        (Pattern::At(i), [x], _) => Some((i, x)),
        _ => None,
    }
}

/// Whether `e` is the neighbourhood (`q` or `get(i, q)`).
fn is_nbh(e: &Expr, q: ParamId, slid: Option<usize>) -> bool {
    match slid {
        None => matches!(e.kind, ExprKind::Param(p) if p == q),
        Some(i) => is_get(e, i, q),
    }
}

fn walk_reads(e: &mut Expr, q: ParamId, slid: Option<usize>, reads: &mut usize, others: &mut usize) {
    let chain = at_parts(e)
        .and_then(|(_, e1)| at_parts(e1))
        .and_then(|(_, e2)| at_parts(e2))
        .is_some_and(|(_, n)| is_nbh(n, q, slid));
    if chain {
        *reads += 1;
        // (a, b, c) -> (c, a, b), in place.
        let ExprKind::Call(f0, a0) = &mut e.kind else { return };
        let ExprKind::Call(f1, a1) = &mut a0[0].kind else { return };
        let ExprKind::Call(f2, _) = &mut a1[0].kind else { return };
        if let (
            FunKind::Pattern(Pattern::At(x)),
            FunKind::Pattern(Pattern::At(y)),
            FunKind::Pattern(Pattern::At(z)),
        ) = (&mut f0.kind, &mut f1.kind, &mut f2.kind)
        {
            let (a, b, c) = (x.clone(), y.clone(), z.clone());
            (*x, *y, *z) = (c, a, b);
        }
        return;
    }
    if let Some(i) = slid {
        // Another grid of the zip, read as it is.
        if get_index(e, q).is_some_and(|j| j != i) {
            *others += 1;
            return;
        }
    }
    let ExprKind::Call(f, args) = &mut e.kind else { return };
    walk_fun(f, q, slid, reads, others);
    for a in args {
        walk_reads(a, q, slid, reads, others);
    }
}

fn walk_fun(f: &mut FunDecl, q: ParamId, slid: Option<usize>, reads: &mut usize, others: &mut usize) {
    match &mut f.kind {
        FunKind::Lambda(l) => walk_reads(&mut l.body, q, slid, reads, others),
        FunKind::Pattern(p) => {
            if let Some(g) = nested_fun_mut(p) {
                walk_fun(g, q, slid, reads, others);
            }
        }
        FunKind::UserFun(_) => {}
    }
}

fn m_planes(s: &Site<'_>) -> R {
    stencil3(s.expr).map(|_| ()).ok_or_else(|| {
        s.no_match(
            "stencil-3d-planes",
            "`map(map(map(f))) $ slide_3(size, step) $ x` (or of a zip_3 with one slid grid), f reading at(x, at(y, at(z, nbh)))",
        )
    })
}

fn b_planes(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    let rule = "stencil-3d-planes";
    let st = stencil3(s.expr).ok_or_else(|| s.no_match(rule, "a 3D stencil"))?;
    let span = st.span;
    let g = &mut b.gen;
    let mut f = g.refresh_fun(st.f);
    reorder_reads(&mut f, st.slid);
    let (size, step) = (st.size.clone(), st.step.clone());
    // The planes z-1..z+1 of a window, as columns: map(transpose) o transpose.
    let columns = |g: &mut IdGen, zp: Expr| -> Expr {
        let t = g.call_pattern(Pattern::Transpose, vec![zp], span);
        let tr = g.lambda1(span, |g, w| g.call_pattern(Pattern::Transpose, vec![w], span));
        let c = g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(tr) }, vec![t], span);
        slide2r(g, (&size, &step), (&size, &step), c, span)
    };
    let per_plane = g.lambda1(span, |g, zp| {
        let data = match st.slid {
            None => columns(g, zp),
            Some(i) => {
                let grids = (0..st.grids.len())
                    .map(|j| {
                        let gj = get(g, j, &zp, span);
                        if j == i {
                            columns(g, gj)
                        } else {
                            gj
                        }
                    })
                    .collect();
                zip2(g, grids, span)
            }
        };
        map2(g, data, span, |g, e| super::rule::apply_fun(g, &f, vec![e], span))
    });
    let planes = |g: &mut IdGen, x: &Expr| {
        g.call_pattern(Pattern::Slide { size: st.size.clone(), step: st.step.clone() }, vec![x.clone()], span)
    };
    let input = match st.slid {
        None => planes(g, st.grids[0]),
        Some(i) => {
            let grids = st
                .grids
                .iter()
                .enumerate()
                .map(|(j, x)| if j == i { planes(g, x) } else { (*x).clone() })
                .collect();
            g.call_pattern(Pattern::Zip(st.grids.len()), grids, span)
        }
    };
    Ok(g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(per_plane) }, vec![input], span))
}

// ---------------------------------------------------------------------------
// 3D: columns along z, for the z-walk of `slide-seq-plus`.

/// `(f, size, step, x, span)` of `map_3(f) o slide_3(size, step) $ x`.
fn columns_parts(e: &Expr) -> Option<(&FunDecl, &ArithExpr, &ArithExpr, &Expr, Span)> {
    let (f, xs, span) = map3_parts(e)?;
    let (size, step, x) = slide3_parts(xs)?;
    Some((f, size, step, x, span))
}

fn m_columns(s: &Site<'_>) -> R {
    columns_parts(s.expr)
        .map(|_| ())
        .ok_or_else(|| s.no_match("stencil-3d-columns", "`map(map(map(f))) $ slide_3(size, step) $ x`"))
}

fn b_columns(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    let (f, size, step, x, span) =
        columns_parts(s.expr).ok_or_else(|| s.no_match("stencil-3d-columns", "a 3D stencil"))?;
    let (size, step) = (size.clone(), step.clone());
    let g = &mut b.gen;
    // Each plane's 2D neighbourhoods: [z][y][x][sy][sx].
    let per_plane = g.lambda1(span, |g, p| slide2r(g, (&size, &step), (&size, &step), p, span));
    let planes =
        g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(per_plane) }, vec![x.clone()], span);
    // As columns along z: [y][x][z][sy][sx].
    let t = g.call_pattern(Pattern::Transpose, vec![planes], span);
    let tr = g.lambda1(span, |g, w| g.call_pattern(Pattern::Transpose, vec![w], span));
    let cols = g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(tr) }, vec![t], span);
    // Windows along z are [sz][sy][sx], the neighbourhood f reads.
    let f = g.refresh_fun(f);
    let computed = map2(g, cols, span, |g, c| {
        let w = g.call_pattern(Pattern::Slide { size: size.clone(), step: step.clone() }, vec![c], span);
        g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(f) }, vec![w], span)
    });
    // [y][x][z] back to [z][y][x].
    let tr = g.lambda1(span, |g, w| g.call_pattern(Pattern::Transpose, vec![w], span));
    let m = g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(tr) }, vec![computed], span);
    Ok(g.call_pattern(Pattern::Transpose, vec![m], span))
}

// ---------------------------------------------------------------------------
// Binding the tile copies.

/// The `toLocal(...)` calls among the arguments of the call `e` (not
/// inside one another) whose parameters are all bound outside `e`.
fn local_copies(e: &Expr) -> Vec<&Expr> {
    let ExprKind::Call(_, args) = &e.kind else { return Vec::new() };
    let mut inner = Vec::new();
    crate::ir::visit::walk_params(e, &mut |p| inner.push(p.id));
    fn go<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
        let ExprKind::Call(f, args) = &e.kind else { return };
        if matches!(f.kind, FunKind::Pattern(Pattern::ToLocal(_))) {
            out.push(e);
            return;
        }
        args.iter().for_each(|a| go(a, out));
    }
    let mut out = Vec::new();
    args.iter().for_each(|a| go(a, &mut out));
    out.retain(|c| {
        let mut own = Vec::new();
        crate::ir::visit::walk_params(c, &mut |p| own.push(p.id));
        inner.iter().filter(|p| !own.contains(p)).all(|&p| crate::ir::visit::count_uses(c, p) == 0)
    });
    out
}

fn m_bind(s: &Site<'_>) -> R {
    if local_copies(s.expr).is_empty() {
        return Err(s.no_match("let-local-copies", "a call whose data holds `toLocal(...)` copies"));
    }
    Ok(())
}

/// `F $ ...toLocal(c0)...toLocal(c1)...` ->
/// `let l0 = toLocal(c0) in let l1 = toLocal(c1) in F $ ...l0...l1...`.
fn b_bind(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    m_bind(s)?;
    let copies: Vec<Expr> = local_copies(s.expr).into_iter().cloned().collect();
    let span = s.expr.span;
    let g = &mut b.gen;
    let params: Vec<crate::ir::Param> =
        (0..copies.len()).map(|i| g.param(&format!("l{i}"), None, span)).collect();
    let by: Vec<(crate::ir::ExprId, Expr)> =
        copies.iter().zip(&params).map(|(c, p)| (c.id, g.var(p))).collect();
    let mut body = replace_ids(s.expr, &by);
    for (c, p) in copies.into_iter().zip(params).rev() {
        let f = g.fun(FunKind::Lambda(crate::ir::Lambda { params: vec![p], body: Box::new(body) }), span);
        body = g.call(f, vec![c], span);
    }
    Ok(body)
}

/// `e` with the sub-expressions of the given ids replaced.
fn replace_ids(e: &Expr, by: &[(crate::ir::ExprId, Expr)]) -> Expr {
    if let Some((_, r)) = by.iter().find(|(id, _)| *id == e.id) {
        return r.clone();
    }
    match &e.kind {
        ExprKind::Literal(_) | ExprKind::Param(_) => e.clone(),
        ExprKind::Call(f, args) => Expr {
            id: e.id,
            kind: ExprKind::Call(f.clone(), args.iter().map(|a| replace_ids(a, by)).collect()),
            span: e.span,
        },
    }
}
