//! Products written as a user writes them: `map(\a -> map(\b -> reduce(f,
//! z) ... $ zip(a, b)) $ Y) $ X` gives each result as a one-element array
//! (`reduce` returns `[T]1`), so a row of results is `[[T]1]N`. The tiled
//! matrix-product rule (`tile-mm`) matches the form with a `join` over the
//! inner map (`map(\a -> join o map(\b -> ...) $ Y) $ X`, rows `[T]N`), as
//! the CGO 2017 programs write it. Both forms hold the same values in the
//! same order in memory; the search explores the joined one, whose
//! interpretation is its gold, so every candidate still computes what the
//! user's program computes (the def's result type loses its last `1`).

use crate::ir::build::IdGen;
use crate::ir::{Expr, ExprKind, FunKind, MapKind, Pattern, Program};
use crate::types::{Sizes, Type};

/// The program with `def`'s inner maps of one-element results joined, if
/// its body is such a product, or a map (a batch) whose function's body
/// is one, and the tiled product shapes then apply; `None` otherwise (the
/// program is explored as written).
pub fn joined_products(program: &Program, def: &str, sizes: &Sizes) -> Option<Program> {
    let base = crate::rewrite::prepare(program, def).ok()?;
    let d = base.def(def)?;
    let types = crate::passes::typecheck::typecheck_def(&base, d).ok()?;
    let mut gen = IdGen::for_program(&base);
    let body = match joined(&mut gen, &types, &d.body) {
        Some(b) => b,
        // A batch of products: `map(\(x, y) -> PRODUCT) $ zip(a, b)`.
        None => {
            let lam = map_lambda(&d.body)?;
            let inner = joined(&mut gen, &types, &lam.body)?;
            with_lambda_body(&d.body, inner)?
        }
    };
    let mut out = base.clone();
    let od = out.defs.iter_mut().find(|x| x.name == def)?;
    od.body = body;
    gen.store(&mut out);
    // Only where the tiled shapes apply: elsewhere the program as written
    // keeps its own shapes (rows, reductions).
    let d2 = out.def(def)?;
    crate::passes::typecheck::typecheck_def(&out, d2).ok()?;
    (!super::matmul::matmul_shapes(&out, def, sizes).is_empty()).then_some(out)
}

/// A batch of maps of reductions whose function does not read the batch's
/// element (`map(\p -> map(\c -> reduce(f, z) $ c) o transpose $ p) $ a`:
/// a 3D tensor summed along its middle axis) as one map of reductions over
/// the batch's joined arrays, `<def>_flat = map(\c -> reduce(f, z) $ c) o
/// join o map(\p -> transpose $ p) $ a`: the same results in the same
/// order in memory, so the user's def stays the gold, and the partial
/// shapes (a reduction spread over work-groups, with a derived second
/// stage) apply to it. `None` where the def is not such a batch or the
/// flat def has no partial shapes, or the reductions do not run down
/// columns.
pub fn flat_batch(program: &Program, def: &str) -> Option<(Program, String)> {
    let base = crate::rewrite::prepare(program, def).ok()?;
    let d = base.def(def)?;
    let outer = map_lambda(&d.body)?;
    let [p] = outer.params.as_slice() else { return None };
    let ExprKind::Call(m, args) = &outer.body.kind else { return None };
    let (FunKind::Pattern(Pattern::Map { kind: MapKind::Map, f }), [g]) = (&m.kind, args.as_slice()) else {
        return None;
    };
    super::partials::reduction_under_map(&outer.body)?;
    // Reductions down each element's columns (a batch of rows already has
    // the row shapes, and small windows, a pooling's, their stencil ones).
    let down_columns =
        matches!(&g.kind, ExprKind::Call(t, _) if matches!(t.kind, FunKind::Pattern(Pattern::Transpose)));
    if !down_columns || crate::ir::visit::fun_uses(f, p.id) {
        return None;
    }
    let ExprKind::Call(_, batch) = &d.body.kind else { return None };
    let span = d.body.span;
    let mut gen = IdGen::for_program(&base);
    let arrays = lambda_of(&mut gen, p.clone(), g.clone());
    let per = gen.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(arrays) }, batch.clone(), span);
    let joined = gen.call_pattern(Pattern::Join, vec![per], span);
    let body = gen.call_pattern(Pattern::Map { kind: MapKind::Map, f: f.clone() }, vec![joined], span);
    let name = super::finish::fresh_name(program, &format!("{def}_flat"));
    let flat = crate::ir::Def { name: name.clone(), params: d.params.clone(), body, span: d.span };
    let out = super::epilogue::with_defs(program, vec![flat], &format!("{def} flattened"))?;
    super::finish::derive(&out, &name)?;
    Some((out, name))
}

fn lambda_of(gen: &mut IdGen, p: crate::ir::Param, body: Expr) -> crate::ir::FunDecl {
    let span = body.span;
    gen.fun(FunKind::Lambda(crate::ir::Lambda { params: vec![p], body: Box::new(body) }), span)
}

/// `e = map(\r -> m) $ X` with `m` a map of one-element arrays: `e` with
/// `m` joined.
fn joined(gen: &mut IdGen, types: &crate::passes::typecheck::Types, e: &Expr) -> Option<Expr> {
    let lam = map_lambda(e)?;
    let inner = &lam.body;
    let ExprKind::Call(m, _) = &inner.kind else { return None };
    if !matches!(m.kind, FunKind::Pattern(Pattern::Map { .. })) {
        return None;
    }
    // The inner map's elements are one-element arrays, or the first
    // element of one (`at(0, reduce ...)`: a scalar per result, the same
    // values in the same order in memory as the joined one-element arrays).
    let inner = match types.exprs.get(&inner.id) {
        Some(Type::Array(elem, _)) if is_one_array(elem) => (**inner).clone(),
        _ => {
            let taken = first_of_one(types, &map_lambda(inner)?.body)?;
            with_lambda_body(inner, taken.clone())?
        }
    };
    let j = gen.call_pattern(Pattern::Join, vec![inner.clone()], inner.span);
    with_lambda_body(e, j)
}

/// Whether `t` is an array of one element.
fn is_one_array(t: &Type) -> bool {
    matches!(t, Type::Array(_, one) if crate::arith::simplify(one) == crate::arith::ArithExpr::Cst(1))
}

/// `x` where `e` is `at(0, x)` and `x` a one-element array.
fn first_of_one<'e>(types: &crate::passes::typecheck::Types, e: &'e Expr) -> Option<&'e Expr> {
    let ExprKind::Call(f, args) = &e.kind else { return None };
    let (FunKind::Pattern(Pattern::At(i)), [x]) = (&f.kind, args.as_slice()) else { return None };
    let zero = crate::arith::simplify(i) == crate::arith::ArithExpr::Cst(0);
    (zero && types.exprs.get(&x.id).is_some_and(is_one_array)).then_some(x)
}

/// The lambda of `map(\x -> ...) $ X`.
fn map_lambda(e: &Expr) -> Option<&crate::ir::Lambda> {
    let ExprKind::Call(outer, _) = &e.kind else { return None };
    let FunKind::Pattern(Pattern::Map { f, .. }) = &outer.kind else { return None };
    let FunKind::Lambda(lam) = &f.kind else { return None };
    Some(lam)
}

/// `map(\x -> body) $ X` (the same ids) with another body.
fn with_lambda_body(e: &Expr, body: Expr) -> Option<Expr> {
    let ExprKind::Call(outer, args) = &e.kind else { return None };
    let mut outer2 = (**outer).clone();
    let FunKind::Pattern(Pattern::Map { f, .. }) = &mut outer2.kind else { return None };
    let FunKind::Lambda(lam) = &mut f.kind else { return None };
    *lam.body = body;
    Some(Expr { id: e.id, kind: ExprKind::Call(Box::new(outer2), args.clone()), span: e.span })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::SourceFile;

    const FUNS: &str = "userfun add(x: float, y: float): float { return x + y; }\n\
                        userfun mul(x: float, y: float): float { return x * y; }\n";

    fn parse(src: &str) -> Program {
        crate::parse::parse_program(&SourceFile::new("t.lift", format!("{FUNS}{src}"))).unwrap()
    }

    fn sizes() -> Sizes {
        [("M", 64), ("N", 64), ("K", 64)].into_iter().map(|(k, v)| (k.to_string(), v)).collect()
    }

    #[test]
    fn a_product_without_join_gets_the_tiled_shapes_and_the_same_values() {
        // Each result a one-element array, or its element (`at(0, ...)`).
        for src in [
            "def mm(a: [[float]K]M, b: [[float]N]K) =\n  map(\\r -> map(\\c -> reduce(add, 0.0f) o \
             map(\\(x, y) -> mul(x, y)) $ zip(r, c)) o transpose $ b) $ a\n",
            "def mm(a: [[float]K]M, b: [[float]N]K) =\n  map(\\r -> map(\\c -> at(0, reduce(add, 0.0f) o \
             map(\\(x, y) -> mul(x, y)) $ zip(r, c))) o transpose $ b) $ a\n",
        ] {
            same_values_once_joined(&parse(src));
        }
    }

    fn same_values_once_joined(p: &Program) {
        let s: Sizes = [("M", 3), ("N", 5), ("K", 4)].into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        let j = joined_products(p, "mm", &sizes()).expect("joined");
        use crate::ir::Value;
        let mat = |rows: usize, cols: usize, k: f32| {
            Value::array(
                (0..rows)
                    .map(|i| {
                        Value::array((0..cols).map(|j| Value::Float(k * (i * cols + j) as f32)).collect())
                    })
                    .collect(),
            )
        };
        let args = [("a".to_string(), mat(3, 4, 0.5)), ("b".to_string(), mat(4, 5, 0.25))].into();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        crate::interp::eval_def(p, "mm", &args, &s).unwrap().flatten(&mut a);
        crate::interp::eval_def(&j, "mm", &args, &s).unwrap().flatten(&mut b);
        assert_eq!(a.len(), 15);
        assert_eq!(a, b);
    }

    #[test]
    fn a_batch_of_column_sums_is_one_map_of_reductions() {
        let p = parse(
            "def s(a: [[[float]Z]Y]X) = map(\\p -> map(\\c -> reduce(add, 0.0f) $ c) o transpose $ p) $ a\n",
        );
        let (flat, name) = flat_batch(&p, "s").expect("flattened");
        assert_eq!(name, "s_flat");
        let text = crate::parse::print_program(&flat);
        assert!(text.contains("def s_flat(a: [[[float]Z]Y]X) =\n  map(\\c -> reduce(add, 0.0f, c), join(map(\\p -> transpose(p), a)))"), "{text}");
        use crate::ir::Value;
        let s: Sizes = [("X", 2), ("Y", 3), ("Z", 4)].into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        let mut k = 0.0;
        let mut next = || {
            k += 0.5;
            Value::Float(k)
        };
        let a = Value::array(
            (0..2)
                .map(|_| {
                    Value::array((0..3).map(|_| Value::array((0..4).map(|_| next()).collect())).collect())
                })
                .collect(),
        );
        let args = [("a".to_string(), a)].into();
        let (mut want, mut got) = (Vec::new(), Vec::new());
        crate::interp::eval_def(&flat, "s", &args, &s).unwrap().flatten(&mut want);
        crate::interp::eval_def(&flat, "s_flat", &args, &s).unwrap().flatten(&mut got);
        assert_eq!(want.len(), 8);
        assert_eq!(want, got);
        // A batch whose function reads the element (each matrix with its
        // own vector) is not flattened.
        let q = parse("def g(a: [[[float]N]M]B, x: [[float]N]B) = map(\\(m, v) -> map(\\r -> reduce(add, 0.0f) o map(\\(u, w) -> mul(u, w)) $ zip(r, v)) $ m) $ zip(a, x)\n");
        assert!(flat_batch(&q, "g").is_none());
    }

    #[test]
    fn other_programs_are_left_as_written() {
        // A product already joined, rows of a matrix reduced, a map.
        let p = parse(
            "def mm(a: [[float]K]M, b: [[float]N]K) =\n  map(\\r -> join o map(\\c -> reduce(add, 0.0f) o \
             map(\\(x, y) -> mul(x, y)) $ zip(r, c)) o transpose $ b) $ a\n\
             def rs(a: [[float]N]M) = map(\\r -> reduce(add, 0.0f) $ r) $ a\n\
             def m(a: [[float]N]M) = map(\\r -> map(\\x -> mul(x, x)) $ r) $ a\n",
        );
        for d in ["mm", "rs", "m"] {
            assert!(joined_products(&p, d, &sizes()).is_none(), "{d}");
        }
    }
}
