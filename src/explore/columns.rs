//! Reductions down the columns of a matrix whose results pass through more
//! than a map of their own (`Aᵀ x + b`: a bias per column read after each
//! reduction, `map(\(c, bj) -> add(bj, at(0, reduce(f, z) $ e(c)))) $
//! zip(transpose(a), b)`). The partial shapes that spread a column's
//! reduction over work-groups (`partials`) take a plain map of reductions;
//! a work-item per column walks its whole column (a few thousand
//! work-items, each thousands of loads long). The search then runs on the
//! map of reductions alone, `<def>_reductions = map(\c -> reduce(f, z) $
//! e(c)) $ transpose(a)`, and every candidate is followed by a derived
//! stage that adds each column's partial results up and applies the rest:
//! `<def>_then_rows(p: [[acc]P]N, b) = mapGlb(0, \(r, bj) -> E[v :=
//! at(0, reduceSeq(f, z) $ r)]) $ zip(p, b)`. Candidates are validated
//! against the user's def.
//!
//! Only down columns (the map's array is a transpose): a reduction along
//! rows keeps the def as written, whose row shapes do it all in one kernel
//! with the rest applied by the row's work-group.

use super::epilogue::{self, lambda, map_call, params_read, reduction_in, side, zip_with, Split};
use crate::arith::ArithExpr;
use crate::ir::visit::{count_uses, fun_uses};
use crate::ir::{Def, Expr, ExprKind, FunKind, IdGen, MapKind, Pattern, Program, ReduceKind};
use crate::types::{Sizes, Type};

/// The split of `def`, if its body has that form and the partial shapes
/// apply to its reductions at `sizes`.
pub fn split(program: &Program, def: &str, sizes: &Sizes) -> Option<Split> {
    let base = crate::rewrite::prepare(program, def).ok()?;
    let d = base.def(def)?;
    let types = crate::passes::typecheck::typecheck_def(&base, d).ok()?;
    let (l, xs) = epilogue::map_lambda(&d.body)?;
    let (path, red) = reduction_in(&l.body)?;
    let cols = side(&l.params, xs, red)?;
    if !is_transpose(&cols.array) {
        return None;
    }
    // The stage adds partials with the reduction's own `f` and `z`: both
    // stand alone.
    let ExprKind::Call(rf, rargs) = &red.kind else { return None };
    let (FunKind::Pattern(Pattern::Reduce { kind: ReduceKind::Reduce, f }), [z, _]) =
        (&rf.kind, rargs.as_slice())
    else {
        return None;
    };
    let closed = |p: &crate::ir::Param| !fun_uses(f, p.id) && count_uses(z, p.id) == 0;
    if !matches!(z.kind, ExprKind::Literal(_)) || !d.params.iter().chain(&l.params).all(closed) {
        return None;
    }
    let mut gen = IdGen::for_program(&base);
    let span = d.span;
    let (v, epi) = epilogue::rest_after(&mut gen, d, (&l.body, &path), &cols.kept)?;
    let acc = epilogue::result_elem(&types, red)?;
    let n = epilogue::length(&types, xs)?;
    let reductions = super::finish::fresh_name(program, &format!("{def}_reductions"));
    let stage = super::finish::fresh_name(program, &format!("{def}_then_rows"));
    let c = lambda(&mut gen, cols.kept.iter().map(|p| (*p).clone()).collect(), red.clone());
    let body = map_call(&mut gen, MapKind::Map, c, cols.array.clone());
    let red_def = Def { name: reductions.clone(), params: params_read(d, &[&body]), body, span };
    let parts = ArithExpr::size(&fresh_size(d));
    let p_ty = Type::Array(Box::new(Type::Array(Box::new(acc.clone()), parts.clone())), n.clone());
    let p = gen.param(&epilogue::fresh_param(d), Some(p_ty), span);
    // `\(r, e..) -> (\v -> E)(at(0, reduceSeq(f, z) $ r))` over `zip(p, E..)`.
    let r = gen.param("r", None, span);
    let rv = gen.var(&r);
    let sum =
        gen.call_pattern(Pattern::Reduce { kind: ReduceKind::Seq, f: f.clone() }, vec![z.clone(), rv], span);
    let first = gen.call_pattern(Pattern::At(ArithExpr::Cst(0)), vec![sum], span);
    let apply = lambda(&mut gen, vec![v], epi);
    let value = gen.call(apply, vec![first], span);
    let row_params = std::iter::once(r).chain(cols.extras.iter().map(|(q, _)| (*q).clone())).collect();
    let per_row = lambda(&mut gen, row_params, value);
    // The same per column of partial results, where the kernel wrote them
    // transposed (`partials`: a row per chunk).
    let per_col = gen.refresh_fun(&per_row);
    let pv = gen.var(&p);
    let arg = zip_with(&mut gen, pv, &cols.extras);
    let body = map_call(&mut gen, MapKind::Glb(0), per_row, arg);
    let mut params = vec![p];
    params.extend(params_read(d, &[&body]));
    let stage_def = Def { name: stage.clone(), params, body, span };
    let t_ty = Type::Array(Box::new(Type::Array(Box::new(acc), n)), parts);
    let pt = gen.param(&epilogue::fresh_param(d), Some(t_ty), span);
    let pv = gen.var(&pt);
    let cols_of = gen.call_pattern(Pattern::Transpose, vec![pv], span);
    let arg = zip_with(&mut gen, cols_of, &cols.extras);
    let body = map_call(&mut gen, MapKind::Glb(0), per_col, arg);
    let mut params = vec![pt];
    params.extend(params_read(d, &[&body]));
    let col_stage = super::finish::fresh_name(program, &format!("{def}_then_cols"));
    let col_def = Def { name: col_stage.clone(), params, body, span };
    let out = epilogue::with_defs(
        program,
        vec![red_def, stage_def, col_def],
        &format!("reductions and second stage of {def}"),
    )?;
    let prepared = crate::rewrite::prepare(&out, &reductions).ok()?;
    if super::partials::partial_shapes(&prepared, &reductions, sizes).is_empty() {
        return None;
    }
    Some(Split { program: out, product: reductions, stages: vec![stage, col_stage] })
}

/// Whether `e` is `transpose(x)` (its elements are columns).
fn is_transpose(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Call(f, _) if matches!(f.kind, FunKind::Pattern(Pattern::Transpose)))
}

/// A size name for the partial results' count that no parameter of `d`
/// mentions.
fn fresh_size(d: &Def) -> String {
    let taken: Vec<String> = d
        .params
        .iter()
        .filter_map(|p| p.ty.as_ref())
        .flat_map(|t| t.lengths())
        .flat_map(|l| l.vars())
        .map(|v| v.name.clone())
        .collect();
    epilogue::first_free("P", |n| taken.iter().any(|t| t == n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::SourceFile;
    use crate::types::sizes_of;

    fn parse(src: &str) -> Program {
        crate::parse::parse_program(&SourceFile::new("t.lift", src.to_string())).unwrap()
    }

    const FUNS: &str = "userfun add(x: float, y: float): float { return x + y; }\n\
                        userfun mul(x: float, y: float): float { return x * y; }\n\
                        userfun root(x: float): float { return sqrt(x); }\n";

    #[test]
    fn a_column_reduction_with_a_bias_is_its_reductions_then_a_stage() {
        let src = format!(
            "{FUNS}def g(a: [[float]N]M, x: [float]M, b: [float]N) =\n  \
             map(\\(c, bj) -> add(bj, at(0, reduce(add, 0.0f) o map(\\(p, q) -> mul(p, q)) $ zip(c, x)))) $ zip(transpose(a), b)\n"
        );
        let sizes = sizes_of(&[("M", 768), ("N", 100)]);
        let s = split(&parse(&src), "g", &sizes).expect("split");
        assert_eq!(s.product, "g_reductions");
        assert_eq!(s.stages, ["g_then_rows", "g_then_cols"]);
        let text = crate::parse::print_program(&s.program);
        assert!(text.contains("def g_then_rows(p: [[float]P]N, b: [float]N) =\n  mapGlb(0, \\(r, bj) -> (\\v -> add(bj, v))(at(0, reduceSeq(add, 0.0f, r))), zip(p, b))"), "{text}");
        assert!(text.contains("def g_then_cols(p: [[float]N]P, b: [float]N) =\n  mapGlb(0, \\(r, bj) -> (\\v -> add(bj, v))(at(0, reduceSeq(add, 0.0f, r))), zip(transpose(p), b))"), "{text}");
        for stage in &s.stages {
            crate::compile::compile(&s.program, stage, &Default::default()).unwrap();
        }
        // A scalar after the reduction too (a column's norm); along rows, no.
        let norm = format!("{FUNS}def h(a: [[float]N]M) = map(\\c -> root(at(0, reduce(add, 0.0f) o map(\\q -> mul(q, q)) $ c))) o transpose $ a\n");
        assert!(split(&parse(&norm), "h", &sizes).is_some());
        let rows = format!("{FUNS}def h(a: [[float]N]M) = map(\\c -> root(at(0, reduce(add, 0.0f) o map(\\q -> mul(q, q)) $ c))) $ a\n");
        assert!(split(&parse(&rows), "h", &sizes).is_none());
    }
}
