//! Products whose results pass through more than a map of their own: a
//! linear layer `relu(bias[j] + sum_k x[i][k] w[j][k])` reads a value per
//! column after the reduction, which `tile-mm`'s epilogue (a function of
//! the result alone) cannot take. The search then runs on the product
//! alone and a second stage applies the rest:
//!
//! ```text
//! map(\r -> map(\(c, e) -> E[at(0, reduce(f, z) $ R(r, c))]) $ zip(Y, V)) $ X
//! ```
//!
//! becomes the product `<def>_product = map(\r -> join o map(\c ->
//! reduce(f, z) $ R(r, c)) $ Y) $ X`, explored with every product shape,
//! and the stage `<def>_then_epilogue(p, V, ...) = mapGlb(1, \row ->
//! mapGlb(0, \(v, e) -> E[v]) $ zip(row, V)) $ p`, one work-item per
//! result (coalesced along a row of `p`). The rows' side is the same
//! (`zip(X, U)`, values per row). Candidates are validated against the
//! user's def, not the product: the pipeline computes the same values (the
//! reduction as before, then `E` of it), and a derivation that did not
//! would not validate.
//!
//! Only where the tiled product shapes apply (`tile-mm`): elsewhere one
//! kernel that does both keeps the result in registers, and the def is
//! explored as written.

use crate::arith::ArithExpr;
use crate::ir::visit::{count_uses, expr_positions, replace_at};
use crate::ir::{Def, Expr, ExprKind, FunDecl, FunKind, IdGen, Lambda, MapKind, Param, Pattern, Program};
use crate::ir::{ReduceKind, SourceFile};
use crate::types::{Sizes, Type};

/// The program with the product and the stage added, and their names.
pub struct Split {
    pub program: Program,
    pub product: String,
    /// The second stages, in the order they are tried.
    pub stages: Vec<String>,
}

/// One side of the product (`X` and its rows' lambda, or `Y` and its
/// columns'): the parameters the reduction reads, the array they come
/// from, and the other components (extras: values per row or column).
pub(super) struct Side<'a> {
    pub kept: Vec<&'a Param>,
    pub array: Expr,
    pub extras: Vec<(&'a Param, Expr)>,
}

/// The split of `def`, if its body has that form and the tiled product
/// shapes apply to the product at `sizes`.
pub fn split(program: &Program, def: &str, sizes: &Sizes) -> Option<Split> {
    let base = crate::rewrite::prepare(program, def).ok()?;
    let d = base.def(def)?;
    let types = crate::passes::typecheck::typecheck_def(&base, d).ok()?;
    let (lo, xs) = map_lambda(&d.body)?;
    let (li, ys) = map_lambda(&lo.body)?;
    if lo.params.iter().any(|p| count_uses(ys, p.id) > 0) {
        return None;
    }
    let (path, red) = reduction_in(&li.body)?;
    let rows = side(&lo.params, xs, red)?;
    let cols = side(&li.params, ys, red)?;
    let mut gen = IdGen::for_program(&base);
    let span = d.span;
    let kept: Vec<&Param> = rows.kept.iter().chain(&cols.kept).copied().collect();
    let (v, epi) = rest_after(&mut gen, d, (&li.body, &path), &kept)?;
    let elem = result_elem(&types, red)?;
    let (m, n) = (length(&types, xs)?, length(&types, ys)?);
    let product = super::finish::fresh_name(program, &format!("{def}_product"));
    let stage = super::finish::fresh_name(program, &format!("{def}_then_epilogue"));
    let prod_def = product_def(&mut gen, d, &rows, &cols, red, &product)?;
    let p = gen.param(&fresh_param(d), Some(Type::Array(Box::new(Type::Array(Box::new(elem), n)), m)), span);
    let stage_def = stage_def(&mut gen, d, (&rows, &cols), (v, epi), p, &stage);
    let out = with_defs(program, vec![prod_def, stage_def], &format!("product and epilogue of {def}"))?;
    let joined = super::flatten::joined_products(&out, &product, sizes).unwrap_or_else(|| out.clone());
    if super::matmul::matmul_shapes(&joined, &product, sizes).is_empty() {
        return None;
    }
    Some(Split { program: out, product, stages: vec![stage] })
}

/// `body` with the reduction at `path` a new variable `v`: `(v, rest)`,
/// if the rest reads none of `kept` (the reduction's own parameters: the
/// rest moves out of their scope) and of the def's parameters only
/// scalars (they travel to a stage by name).
pub(super) fn rest_after(
    gen: &mut IdGen,
    d: &Def,
    (body, path): (&Expr, &crate::ir::visit::Path),
    kept: &[&Param],
) -> Option<(Param, Expr)> {
    let v = gen.param("v", None, d.span);
    let vv = gen.var(&v);
    let rest = replace_at(body, path, vv).ok()?;
    let reads = |p: &Param| count_uses(&rest, p.id) > 0;
    if kept.iter().any(|p| reads(p)) {
        return None;
    }
    if d.params.iter().any(|p| reads(p) && !matches!(p.ty, Some(Type::Scalar(_)))) {
        return None;
    }
    Some((v, rest))
}

/// The element type of a reduction's one-element result.
pub(super) fn result_elem(types: &crate::passes::typecheck::Types, red: &Expr) -> Option<Type> {
    match types.exprs.get(&red.id)? {
        Type::Array(t, _) => Some((**t).clone()),
        _ => None,
    }
}

/// `program` with `defs` added, printed and parsed again: `best.lift`
/// holds them and reads back (`what` names the text in errors).
pub(super) fn with_defs(program: &Program, defs: Vec<Def>, what: &str) -> Option<Program> {
    let mut out = program.clone();
    out.defs.extend(defs);
    let text = crate::parse::print_program(&out);
    crate::parse::parse_program(&SourceFile::new(format!("<{what}>"), text)).ok()
}

/// `(\x -> body, xs)` of `map(\x -> body) $ xs` (a high-level map).
pub(super) fn map_lambda(e: &Expr) -> Option<(&Lambda, &Expr)> {
    let ExprKind::Call(m, args) = &e.kind else { return None };
    let FunKind::Pattern(Pattern::Map { kind: MapKind::Map, f }) = &m.kind else { return None };
    let (FunKind::Lambda(l), [xs]) = (&f.kind, args.as_slice()) else { return None };
    Some((l, xs))
}

/// The one `at(0, reduce(f, z) $ ...)` in `body` (not `body` itself: then
/// there is nothing after the reduction), its path and the reduction.
pub(super) fn reduction_in(body: &Expr) -> Option<(crate::ir::visit::Path, &Expr)> {
    let mut found = expr_positions(body).into_iter().filter_map(|(p, e)| at0_of_reduce(e).map(|r| (p, r)));
    let (path, red) = found.next()?;
    (found.next().is_none() && path != crate::ir::visit::Path::root()).then_some((path, red))
}

/// `r` of `at(0, r)` where `r` is a high-level reduction.
fn at0_of_reduce(e: &Expr) -> Option<&Expr> {
    let ExprKind::Call(f, args) = &e.kind else { return None };
    let (FunKind::Pattern(Pattern::At(i)), [r]) = (&f.kind, args.as_slice()) else { return None };
    if crate::arith::simplify(i) != ArithExpr::Cst(0) {
        return None;
    }
    let ExprKind::Call(g, _) = &r.kind else { return None };
    matches!(g.kind, FunKind::Pattern(Pattern::Reduce { kind: ReduceKind::Reduce, .. })).then_some(r)
}

/// The components of `xs` the reduction reads, and the others. A lambda
/// of one parameter keeps its whole array; one of several (a zip's
/// tuple) must have a zip of as many arrays.
pub(super) fn side<'a>(params: &'a [Param], xs: &Expr, red: &Expr) -> Option<Side<'a>> {
    let used = |p: &Param| count_uses(red, p.id) > 0;
    if let [p] = params {
        return used(p).then(|| Side { kept: vec![p], array: xs.clone(), extras: Vec::new() });
    }
    let ExprKind::Call(z, arrays) = &xs.kind else { return None };
    if !matches!(z.kind, FunKind::Pattern(Pattern::Zip(k)) if k == params.len()) {
        return None;
    }
    let (mut kept, mut kept_arrays, mut extras) = (Vec::new(), Vec::new(), Vec::new());
    for (p, a) in params.iter().zip(arrays) {
        if used(p) {
            kept.push(p);
            kept_arrays.push(a.clone());
        } else {
            extras.push((p, a.clone()));
        }
    }
    let array = match kept_arrays.len() {
        0 => return None,
        1 => kept_arrays.pop()?,
        _ => Expr { kind: ExprKind::Call(z.clone(), kept_arrays), ..xs.clone() },
    };
    Some(Side { kept, array, extras })
}

/// The length of an array expression, a size variable.
pub(super) fn length(types: &crate::passes::typecheck::Types, e: &Expr) -> Option<ArithExpr> {
    match types.exprs.get(&e.id)? {
        Type::Array(_, n) => {
            let n = crate::arith::simplify(n);
            matches!(n, ArithExpr::Var(_)).then_some(n)
        }
        _ => None,
    }
}

/// A lambda over `params` (a tuple's components where several).
pub(super) fn lambda(gen: &mut IdGen, params: Vec<Param>, body: Expr) -> FunDecl {
    let span = body.span;
    gen.fun(FunKind::Lambda(Lambda { params, body: Box::new(body) }), span)
}

pub(super) fn map_call(gen: &mut IdGen, kind: MapKind, f: FunDecl, xs: Expr) -> Expr {
    let span = xs.span;
    gen.call_pattern(Pattern::Map { kind, f: Box::new(f) }, vec![xs], span)
}

/// `zip(first, rest...)`, or `first` alone.
pub(super) fn zip_with(gen: &mut IdGen, first: Expr, rest: &[(&Param, Expr)]) -> Expr {
    if rest.is_empty() {
        return first;
    }
    let span = first.span;
    let args = std::iter::once(first).chain(rest.iter().map(|(_, a)| a.clone())).collect();
    gen.call_pattern(Pattern::Zip(rest.len() + 1), args, span)
}

/// The def's parameters that `es` read, in the def's order.
pub(super) fn params_read(d: &Def, es: &[&Expr]) -> Vec<Param> {
    d.params.iter().filter(|p| es.iter().any(|e| count_uses(e, p.id) > 0)).cloned().collect()
}

/// `map(\r -> join o map(\c -> reduce(...)) $ Y) $ X`, over the def's
/// parameters it reads.
fn product_def(gen: &mut IdGen, d: &Def, rows: &Side, cols: &Side, red: &Expr, name: &str) -> Option<Def> {
    let inner = lambda(gen, cols.kept.iter().map(|p| (*p).clone()).collect(), red.clone());
    let per_col = map_call(gen, MapKind::Map, inner, cols.array.clone());
    let joined = gen.call_pattern(Pattern::Join, vec![per_col], red.span);
    let outer = lambda(gen, rows.kept.iter().map(|p| (*p).clone()).collect(), joined);
    let body = map_call(gen, MapKind::Map, outer, rows.array.clone());
    let params = params_read(d, &[&body]);
    Some(Def { name: name.to_string(), params, body, span: d.span })
}

/// `mapGlb(1, \(row, u..) -> mapGlb(0, \(v, e..) -> E) $ zip(row, V..)) $
/// zip(p, U..)`, over `p` and the def's parameters the rest reads.
fn stage_def(
    gen: &mut IdGen,
    d: &Def,
    sides: (&Side, &Side),
    (v, epi): (Param, Expr),
    p: Param,
    name: &str,
) -> Def {
    let (rows, cols) = sides;
    let span = d.span;
    let row = gen.param("row", None, span);
    let row_v = gen.var(&row);
    let col_params = std::iter::once(v).chain(cols.extras.iter().map(|(q, _)| (*q).clone())).collect();
    let inner = lambda(gen, col_params, epi);
    let col_arg = zip_with(gen, row_v, &cols.extras);
    let per_row = map_call(gen, MapKind::Glb(0), inner, col_arg);
    let row_params = std::iter::once(row).chain(rows.extras.iter().map(|(q, _)| (*q).clone())).collect();
    let outer = lambda(gen, row_params, per_row);
    let p_v = gen.var(&p);
    let row_arg = zip_with(gen, p_v, &rows.extras);
    let body = map_call(gen, MapKind::Glb(1), outer, row_arg);
    let mut params = vec![p];
    params.extend(params_read(d, &[&body]));
    Def { name: name.to_string(), params, body, span }
}

/// A name for the stage's first parameter that no def parameter has.
pub(super) fn fresh_param(d: &Def) -> String {
    first_free("p", |n| d.params.iter().any(|p| p.name == n))
}

/// `stem`, or `stem2`, `stem3`, ...: the first name `taken` refuses.
pub(super) fn first_free(stem: &str, taken: impl Fn(&str) -> bool) -> String {
    std::iter::once(stem.to_string())
        .chain((2..).map(|i| format!("{stem}{i}")))
        .find(|n| !taken(n))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::sizes_of;

    fn parse(src: &str) -> Program {
        crate::parse::parse_program(&SourceFile::new("t.lift", src.to_string())).unwrap()
    }

    const FUNS: &str = "userfun add(x: float, y: float): float { return x + y; }\n\
                        userfun mul(x: float, y: float): float { return x * y; }\n\
                        userfun relu(x: float): float { return fmax(x, 0.0f); }\n";

    #[test]
    fn a_linear_layer_is_a_product_then_its_bias_and_activation() {
        let src = format!(
            "{FUNS}def lin(x: [[float]K]M, w: [[float]K]N, bias: [float]N) =\n  \
             map(\\r -> map(\\(c, bj) -> relu(add(bj, at(0, reduce(add, 0.0f) o map(\\(p, q) -> mul(p, q)) $ zip(r, c))))) $ zip(w, bias)) $ x\n"
        );
        let sizes = sizes_of(&[("M", 256), ("N", 128), ("K", 64)]);
        let s = split(&parse(&src), "lin", &sizes).expect("split");
        assert_eq!(
            (s.product.as_str(), s.stages.as_slice()),
            ("lin_product", &["lin_then_epilogue".to_string()][..])
        );
        let text = crate::parse::print_program(&s.program);
        assert!(
            text.contains(
                "def lin_product(x: [[float]K]M, w: [[float]K]N) =\n  map(\\r -> join(map(\\c -> reduce("
            ),
            "{text}"
        );
        assert!(text.contains("def lin_then_epilogue(p: [[float]N]M, bias: [float]N) =\n  mapGlb(1, \\row -> mapGlb(0, \\(v, bj) -> relu(add(bj, v)), zip(row, bias)), p)"), "{text}");
        // The stage compiles on its own; the pipeline's values are the def's.
        crate::compile::compile(&s.program, &s.stages[0], &Default::default()).unwrap();
        let sz: std::collections::BTreeMap<String, i64> =
            [("M", 5), ("N", 3), ("K", 4)].map(|(k, v)| (k.to_string(), v)).into();
        let mut seed = 3u64;
        let mut rnd = |n: usize| -> crate::ir::Value {
            crate::ir::Value::array(
                (0..n)
                    .map(|_| {
                        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        crate::ir::Value::Float(((seed >> 33) % 17) as f32 - 8.0)
                    })
                    .collect(),
            )
        };
        let rows = |n: usize, k: usize, rnd: &mut dyn FnMut(usize) -> crate::ir::Value| {
            crate::ir::Value::array((0..n).map(|_| rnd(k)).collect())
        };
        let (x, w, b) = (rows(5, 4, &mut rnd), rows(3, 4, &mut rnd), rnd(3));
        let inputs =
            [("x", x.clone()), ("w", w.clone()), ("bias", b.clone())].map(|(k, v)| (k.to_string(), v)).into();
        let want = crate::interp::eval_def(&s.program, "lin", &inputs, &sz).unwrap();
        let pin = [("x", x), ("w", w)].map(|(k, v)| (k.to_string(), v)).into();
        let prod = crate::interp::eval_def(&s.program, "lin_product", &pin, &sz).unwrap();
        let sin = [("p", prod), ("bias", b)].map(|(k, v)| (k.to_string(), v)).into();
        assert_eq!(crate::interp::eval_def(&s.program, "lin_then_epilogue", &sin, &sz).unwrap(), want);
    }

    #[test]
    fn other_defs_are_not_split() {
        let sizes = sizes_of(&[("M", 256), ("N", 128), ("K", 64)]);
        for body in [
            // Nothing after the reduction (the product itself); a map of
            // the result alone (`tile-mm`'s epilogue takes it).
            "map(\\r -> map(\\c -> at(0, reduce(add, 0.0f) o map(\\(p, q) -> mul(p, q)) $ zip(r, c))) $ w) $ x",
            "map(\\r -> join o map(\\c -> map(relu) o reduce(add, 0.0f) o map(\\(p, q) -> mul(p, q)) $ zip(r, c)) $ w) $ x",
            // The rest reads the row of `x` the reduction reads.
            "map(\\r -> map(\\c -> add(at(0, r), at(0, reduce(add, 0.0f) o map(\\(p, q) -> mul(p, q)) $ zip(r, c)))) $ w) $ x",
        ] {
            let src = format!("{FUNS}def f(x: [[float]K]M, w: [[float]K]N) = {body}\n");
            assert!(split(&parse(&src), "f", &sizes).is_none(), "{body}");
        }
    }
}
