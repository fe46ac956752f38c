//! The newer algorithmic rules of the pattern reference (the Lift pattern reference, Section
//! 2.2.1), both of which move a `transpose` through another pattern. The
//! reference lists them as "possibly unimplemented/unverified", and as
//! written there the right-hand sides do not have the type of the
//! left-hand sides; the forms here add the `transpose` that makes them
//! equal (checked by the interpreter in `tests/rewrite_rules.rs`):
//!
//! - `reduce-map-zip`: a reduction of rows whose operator combines the
//!   accumulator row with the next row element by element is a reduction
//!   of each column. The columns are independent, so the reduction becomes
//!   a `map`, which the OpenCL rules can parallelise.
//! - `slide-transpose`: sliding a window over the rows and transposing
//!   each window is sliding along every column of the transposed input.
//!
//! Two more move a `transpose` for the row reductions of
//! `explore::rows` (a reduction whose `m` lanes each reduce every `m`-th
//! element, so that neighbouring work-items read neighbouring elements,
//! with lengths that stay symbolic: `reorder-stride` then `partred-split`
//! would give `len / (len / m)` lanes, which no simplifier may turn into
//! `m`):
//!
//! - `reduce-lanes`: a reduction is the reduction of the reductions of
//!   the `m` columns of its input cut into rows of `m` (`f` associative
//!   and commutative, as `reorder-stride` assumes).
//! - `transpose-map`: transposing commutes with an element-wise map of a
//!   2D array.

use super::algorithmic::{rule, B, R};
use super::rule::{arg, as_pattern, view, Args, Builder, ParamSpec, Rule, Site, View};
use crate::arith::ArithExpr;
use crate::ir::visit::{self, Path};
use crate::ir::{Expr, ExprKind, FunDecl, FunKind, Lambda, MapKind, ParamId, Pattern, ReduceKind};
use crate::types::Type;

pub static RULES: [Rule; 4] = [
    rule(
        "reduce-map-zip",
        "reduce(\\(acc, row) -> map(\\p -> f(get(0, p), get(1, p))) $ zip(acc, row), z) $ xs",
        "transpose $ map(\\e -> reduce(\\(a, x) -> f(a, x), get(0, e)) $ get(1, e)) $ zip(z, transpose $ xs)",
        &[],
        m_reduce_map_zip,
        b_reduce_map_zip,
    ),
    rule(
        "slide-transpose",
        "map(transpose) $ slide(size, step) $ xs",
        "transpose $ map(slide(size, step)) $ transpose $ xs",
        &[],
        m_slide_transpose,
        b_slide_transpose,
    ),
    rule(
        "reduce-lanes",
        "reduce(f, z)   (len % m = 0)",
        "reduce(f, z) o join o map(partRed(f*, z*, 1)) o transpose o split(m)",
        &[ParamSpec { name: "m", what: "number of lanes" }],
        m_reduce_lanes,
        b_reduce_lanes,
    ),
    rule(
        "transpose-map",
        "transpose o map(map(f))",
        "map(map(f)) o transpose",
        &[],
        m_transpose_map,
        b_transpose_map,
    ),
];

/// The paths in `body` of `get(0, p)` and `get(1, p)`, when those are the
/// only uses of `p` (so that the pair can become two parameters).
fn pair_uses(body: &Expr, p: ParamId) -> Option<[Vec<Path>; 2]> {
    let mut found: [Vec<Path>; 2] = [Vec::new(), Vec::new()];
    for (path, e) in visit::expr_positions(body) {
        if let Some((Pattern::Get(i @ (0 | 1)), [t], _)) = as_pattern(e) {
            if matches!(t.kind, ExprKind::Param(q) if q == p) {
                found[*i].push(path);
            }
        }
    }
    (found[0].len() + found[1].len() == visit::count_uses(body, p)).then_some(found)
}

/// `(pair, body, z, xs)` of
/// `reduce(\(acc, row) -> map(\pair -> body) $ zip(acc, row), z) $ xs`,
/// where `body` uses `pair` only as `get(0, pair)` and `get(1, pair)`.
fn reduce_map_zip_parts(e: &Expr) -> Option<(&Lambda, &Expr, &Expr)> {
    let (View::Reduce { kind: ReduceKind::Reduce, f: op }, [z, xs], _) = view(e)? else { return None };
    let FunKind::Lambda(Lambda { params, body }) = &op.kind else { return None };
    let [acc, row] = params.as_slice() else { return None };
    let (View::Map { kind: MapKind::Map, f }, [zipped], _) = view(body)? else { return None };
    let (Pattern::Zip(2), [a, r], _) = as_pattern(zipped)? else { return None };
    let is = |e: &Expr, id| matches!(e.kind, ExprKind::Param(p) if p == id);
    let FunKind::Lambda(pair) = &f.kind else { return None };
    let ok = is(a, acc.id) && is(r, row.id) && pair.params.len() == 1;
    (ok && pair_uses(&pair.body, pair.params[0].id).is_some()).then_some((pair, z, xs))
}

fn m_reduce_map_zip(s: &Site<'_>) -> R {
    reduce_map_zip_parts(s.expr).map(|_| ()).ok_or_else(|| {
        s.no_match(
            "reduce-map-zip",
            "`reduce(\\(acc, row) -> map(\\p -> f(get(0, p), get(1, p))) $ zip(acc, row), z) $ xs`",
        )
    })
}

fn b_reduce_map_zip(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    let (pair, z, xs) =
        reduce_map_zip_parts(s.expr).ok_or_else(|| s.no_match("reduce-map-zip", "a reduce"))?;
    // The accumulator must be a row (an array as long as the rows of xs);
    // a scalar accumulator would make `zip(z, ...)` ill-typed.
    if !matches!(s.ty(z), Some(Type::Array(..))) {
        return Err(s.no_match("reduce-map-zip", "an accumulator that is an array"));
    }
    let span = s.expr.span;
    // The element-wise operator as a binary one: `\(a, x) -> body` with
    // `get(0, pair)` read as `a` and `get(1, pair)` as `x`.
    let uses =
        pair_uses(&pair.body, pair.params[0].id).ok_or_else(|| s.no_match("reduce-map-zip", "a pair"))?;
    let (a, x) = (b.gen.synthetic_param(span), b.gen.synthetic_param(span));
    let mut body = b.gen.refresh_expr(&pair.body);
    for (param, paths) in [(&a, &uses[0]), (&x, &uses[1])] {
        for path in paths {
            let v = b.gen.var(param);
            body = visit::replace_at(&body, path, v)
                .map_err(|_| s.no_match("reduce-map-zip", "a body whose uses can be replaced"))?;
        }
    }
    let op = b.gen.fun(FunKind::Lambda(Lambda { params: vec![a, x], body: Box::new(body) }), span);
    let (z, xs) = (z.clone(), xs.clone());
    let cols = b.pattern(Pattern::Transpose, vec![xs], span);
    let pairs = b.pattern(Pattern::Zip(2), vec![z, cols], span);
    let column = b.gen.lambda1(span, |g, e| {
        let e2 = g.refresh_expr(&e);
        let init = g.call_pattern(Pattern::Get(0), vec![e], span);
        let col = g.call_pattern(Pattern::Get(1), vec![e2], span);
        let op = g.refresh_fun(&op);
        g.call_pattern(Pattern::Reduce { kind: ReduceKind::Reduce, f: Box::new(op) }, vec![init, col], span)
    });
    let sums = b.pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(column) }, vec![pairs], span);
    Ok(b.pattern(Pattern::Transpose, vec![sums], span))
}

/// Whether `f` is `transpose` or `\w -> transpose $ w`.
fn is_transpose(f: &FunDecl) -> bool {
    match &f.kind {
        FunKind::Pattern(Pattern::Transpose) => true,
        FunKind::Lambda(Lambda { params, body }) => {
            matches!(view(body), Some((View::Transpose, [w], _))
                if params.len() == 1 && matches!(w.kind, ExprKind::Param(p) if p == params[0].id))
        }
        FunKind::Pattern(_) | FunKind::UserFun(_) => false,
    }
}

fn slide_transpose_parts(e: &Expr) -> Option<(&Expr, &Expr)> {
    let (View::Map { kind: MapKind::Map, f }, [windows], _) = view(e)? else { return None };
    let (View::Slide { .. }, [xs], _) = view(windows)? else { return None };
    is_transpose(f).then_some((windows, xs))
}

fn m_slide_transpose(s: &Site<'_>) -> R {
    match slide_transpose_parts(s.expr) {
        Some((_, xs)) if matches!(s.ty(xs), Some(Type::Array(e, _)) if matches!(**e, Type::Array(..))) => {
            Ok(())
        }
        _ => Err(s.no_match("slide-transpose", "`map(transpose) $ slide(size, step) $ xs` over a 2D array")),
    }
}

fn b_slide_transpose(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    m_slide_transpose(s)?;
    let (windows, xs) =
        slide_transpose_parts(s.expr).ok_or_else(|| s.no_match("slide-transpose", "a map"))?;
    let Some((View::Slide { size, step }, _, span)) = view(windows) else {
        return Err(s.no_match("slide-transpose", "a slide"));
    };
    let slide = Pattern::Slide { size: size.clone(), step: step.clone() };
    let cols = b.pattern(Pattern::Transpose, vec![xs.clone()], span);
    let per_col = b.gen.lambda1(span, |g, c| g.call_pattern(slide, vec![c], span));
    let slid = b.pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(per_col) }, vec![cols], span);
    Ok(b.pattern(Pattern::Transpose, vec![slid], span))
}

fn m_reduce_lanes(s: &Site<'_>) -> R {
    match view(s.expr) {
        Some((View::Reduce { kind: ReduceKind::Reduce, .. }, [z, xs], _))
            if s.len(xs).is_some() && super::algorithmic::combines_partials(s, z, xs) =>
        {
            Ok(())
        }
        _ => Err(s.no_match(
            "reduce-lanes",
            "a high-level `reduce(f, z) $ xs` over an array of elements of the type of `z`",
        )),
    }
}

fn b_reduce_lanes(s: &Site<'_>, a: &Args, b: &mut Builder) -> B {
    m_reduce_lanes(s)?;
    let Some((View::Reduce { kind, f }, [z, xs], span)) = view(s.expr) else {
        return Err(s.no_match("reduce-lanes", "a reduce"));
    };
    let m = arg("reduce-lanes", a, "m")?;
    let len = s.len(xs).ok_or_else(|| s.no_match("reduce-lanes", "a reduce of an array"))?;
    b.divides("reduce-lanes", &m, &len)?;
    let rows = b.pattern(Pattern::Split(m), vec![xs.clone()], span);
    let cols = b.pattern(Pattern::Transpose, vec![rows], span);
    let (f2, z2) = (f.clone(), z.clone());
    let body = b.gen.lambda1(span, |g, c| {
        let z = g.refresh_expr(&z2);
        let f = g.refresh_fun(&f2);
        g.call_pattern(Pattern::PartRed { f: Box::new(f), m: ArithExpr::Cst(1) }, vec![z, c], span)
    });
    let map = b.pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(body) }, vec![cols], span);
    let lanes = b.pattern(Pattern::Join, vec![map], span);
    Ok(b.pattern(Pattern::Reduce { kind, f: Box::new(f.clone()) }, vec![z.clone(), lanes], span))
}

/// `f` of a function that maps `f` over its argument: `map(f)` or
/// `\r -> map(f) $ r`.
fn inner_map(h: &FunDecl) -> Option<&FunDecl> {
    match &h.kind {
        FunKind::Pattern(Pattern::Map { kind: MapKind::Map, f }) => Some(f),
        FunKind::Lambda(Lambda { params, body }) => match view(body) {
            Some((View::Map { kind: MapKind::Map, f }, [r], _))
                if params.len() == 1 && matches!(r.kind, ExprKind::Param(p) if p == params[0].id) =>
            {
                Some(f)
            }
            _ => None,
        },
        FunKind::Pattern(_) | FunKind::UserFun(_) => None,
    }
}

/// `(f, xs)` of `transpose $ map(map(f)) $ xs`.
fn transpose_map_parts(e: &Expr) -> Option<(&FunDecl, &Expr)> {
    let (View::Transpose, [m], _) = view(e)? else { return None };
    let (View::Map { kind: MapKind::Map, f: h }, [xs], _) = view(m)? else { return None };
    Some((inner_map(h)?, xs))
}

fn m_transpose_map(s: &Site<'_>) -> R {
    transpose_map_parts(s.expr)
        .map(|_| ())
        .ok_or_else(|| s.no_match("transpose-map", "`transpose $ map(map(f)) $ xs`"))
}

fn b_transpose_map(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    m_transpose_map(s)?;
    let (f, xs) = transpose_map_parts(s.expr).ok_or_else(|| s.no_match("transpose-map", "a transpose"))?;
    let span = s.expr.span;
    let cols = b.pattern(Pattern::Transpose, vec![xs.clone()], span);
    let f = f.clone();
    let inner = b.gen.lambda1(span, |g, c| {
        g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(f) }, vec![c], span)
    });
    Ok(b.pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(inner) }, vec![cols], span))
}
