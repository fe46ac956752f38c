//! The rewrite rules: one test per rule showing both sides as text
//! (`check_rule`), the typed errors, and a property test that every rule,
//! wherever it applies in a corpus of programs, keeps the interpreter's
//! value on random inputs (exactly: inputs are integer-valued floats, so
//! reassociated sums are exact too).

use lift::arith::ArithExpr;
use lift::interp::eval_def;
use lift::ir::Value;
use lift::ir::{ExprKind, FunKind, Path, Pattern, Program, SourceFile};
use lift::rewrite::{self, Args, RewriteError, RuleError};
use lift::types::Type;
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

const FUNS: &str = "userfun absVal(x: float): float { return fabs(x); }
userfun add(x: float, y: float): float { return x + y; }
userfun mult(x: float, y: float): float { return x * y; }
userfun sq(x: float): float { return x * x; }
userfun pos(x: float): float { if (x > 0.0f) { return x; } return 0.0f; }
";

fn parse(src: &str) -> Program {
    let text = format!("{FUNS}{src}");
    lift::parse::parse_program(&SourceFile::new("t.lift", text)).unwrap_or_else(|e| panic!("{e:?}"))
}

fn body(p: &Program, def: &str) -> String {
    let d = p.def(def).unwrap();
    lift::parse::print_expr_in(p, d, &d.body)
}

fn args(list: &[(&str, i64)]) -> Args {
    list.iter().map(|(k, v)| (k.to_string(), ArithExpr::Cst(*v))).collect()
}

/// Applies `rule` at `path` of the program's last def and checks the body
/// before and after (normal form) as text; returns the program after.
fn check_rule(src: &str, rule: &str, path: &str, a: &[(&str, i64)], before: &str, after: &str) -> Program {
    let p = parse(src);
    let def = p.defs.last().unwrap().name.clone();
    let p = rewrite::prepare(&p, &def).unwrap();
    assert_eq!(body(&p, &def), before, "before {rule}");
    let r = rewrite::find_rule(rule).unwrap_or_else(|| panic!("no rule {rule}"));
    let out = rewrite::apply(&p, &def, r, &path.parse::<Path>().unwrap(), &args(a))
        .unwrap_or_else(|e| panic!("{rule}: {e}"));
    assert_eq!(body(&out.program, &def), after, "after {rule}");
    out.program
}

fn apply_err(src: &str, rule: &str, path: &str, a: &[(&str, i64)]) -> RewriteError {
    let p = parse(src);
    let def = p.defs.last().unwrap().name.clone();
    let p = rewrite::prepare(&p, &def).unwrap();
    let r = rewrite::find_rule(rule).unwrap();
    rewrite::apply(&p, &def, r, &path.parse::<Path>().unwrap(), &args(a)).unwrap_err()
}

const ASUM: &str = "def asum(x: [float]N) = reduce(add, 0.0f) o map(absVal) $ x";
const MAP: &str = "def f(x: [float]N) = map(absVal) $ x";
const MAP2: &str = "def f(a: [[float]M]N) = map(map(absVal)) $ a";

#[test]
fn iterate_decompose() {
    check_rule(
        "def f(x: [float]N) = iterate(3, join o map(reduce(add, 0.0f)) o split(2)) $ x",
        "iterate-decompose",
        "root",
        &[("m", 1)],
        "iterate(3, \\_p2 -> join(map(\\_p1 -> reduce(add, 0.0f, _p1), split(2, _p2))), x)",
        "iterate(1, \\_p2 -> join(map(\\_p1 -> reduce(add, 0.0f, _p1), split(2, _p2))), iterate(2, \\_p3 -> join(map(\\_p4 -> reduce(add, 0.0f, _p4), split(2, _p3))), x))",
    );
}

#[test]
fn reorder_commutes_with_map() {
    let g = "def f(x: [float]N) = map(absVal) o gather(\\i -> N - 1 - i) $ x";
    check_rule(
        g,
        "map-reorder",
        "root",
        &[],
        "map(absVal, gather(\\i -> (N - 1) - i, x))",
        "gather(\\i -> (N - 1) - i, map(absVal, x))",
    );
    let g = "def f(x: [float]N) = gather(\\i -> N - 1 - i) o map(absVal) $ x";
    check_rule(
        g,
        "reorder-map",
        "root",
        &[],
        "gather(\\i -> (N - 1) - i, map(absVal, x))",
        "map(absVal, gather(\\i -> (N - 1) - i, x))",
    );
}

#[test]
fn split_join() {
    check_rule(
        MAP,
        "split-join",
        "root",
        &[("n", 4)],
        "map(absVal, x)",
        "join(map(\\_p1 -> map(absVal, _p1), split(4, x)))",
    );
}

#[test]
fn reductions() {
    check_rule(
        ASUM,
        "reduce-partred",
        "root",
        &[("m", 4)],
        "reduce(add, 0.0f, map(absVal, x))",
        "reduce(add, 0.0f, partRed(add, 0.0f, 4, map(absVal, x)))",
    );
    check_rule(
        ASUM,
        "reduce-to-partred",
        "root",
        &[],
        "reduce(add, 0.0f, map(absVal, x))",
        "partRed(add, 0.0f, 1, map(absVal, x))",
    );
    let pr = "def f(x: [float]N) = partRed(add, 0.0f, 1) $ x";
    check_rule(pr, "partred-reduce", "root", &[], "partRed(add, 0.0f, 1, x)", "reduce(add, 0.0f, x)");
    check_rule(
        ASUM,
        "reorder-stride",
        "root",
        &[("s", 4)],
        "reduce(add, 0.0f, map(absVal, x))",
        "reduce(add, 0.0f, gather(\\i -> i / (N / 4) + (i % (N / 4)) * 4, map(absVal, x)))",
    );
    let pr4 = "def f(x: [float]16) = partRed(add, 0.0f, 4) $ x";
    check_rule(
        pr4,
        "partred-split",
        "root",
        &[("n", 8)],
        "partRed(add, 0.0f, 4, x)",
        "join(map(\\_p1 -> partRed(add, 0.0f, 2, _p1), split(8, x)))",
    );
    check_rule(
        pr4,
        "partred-iterate",
        "root",
        &[("n", 2), ("k", 2)],
        "partRed(add, 0.0f, 4, x)",
        "iterate(2, \\_p1 -> join(map(\\_p2 -> partRed(add, 0.0f, 1, _p2), split(2, _p1))), x)",
    );
}

#[test]
fn simplifications() {
    check_rule(
        "def f(a: [[float]4]N) = split(4) o join $ a",
        "split-join-id",
        "root",
        &[],
        "split(4, join(a))",
        "a",
    );
    check_rule(
        "def f(x: [float]N) = join o split(4) $ x",
        "join-split-id",
        "root",
        &[],
        "join(split(4, x))",
        "x",
    );
    check_rule(
        "def f(x: [float4]N) = asVector(4) o asScalar $ x",
        "asvector-asscalar-id",
        "root",
        &[],
        "asVector(4, asScalar(x))",
        "x",
    );
    check_rule(
        "def f(x: [float]N) = asScalar o asVector(4) $ x",
        "asscalar-asvector-id",
        "root",
        &[],
        "asScalar(asVector(4, x))",
        "x",
    );
}

#[test]
fn fusions() {
    check_rule(
        "def f(x: [float]N) = map(sq) o map(absVal) $ x",
        "map-fusion",
        "root",
        &[],
        "map(sq, map(absVal, x))",
        "map(\\_p2 -> sq(absVal(_p2)), x)",
    );
    check_rule(
        "def f(x: [float]N) = reduceSeq(add, 0.0f) o mapSeq(absVal) $ x",
        "reduce-map-fusion",
        "root",
        &[],
        "reduceSeq(add, 0.0f, mapSeq(absVal, x))",
        "reduceSeq(\\(_p3, _p4) -> add(_p3, absVal(_p4)), 0.0f, x)",
    );
    // Unrolled loops fuse too; the result is unrolled as the reduction was.
    check_rule(
        "def f(x: [float]9) = reduceSeqUnroll(add, 0.0f) o mapSeqUnroll(absVal) $ x",
        "reduce-map-fusion",
        "root",
        &[],
        "reduceSeqUnroll(add, 0.0f, mapSeqUnroll(absVal, x))",
        "reduceSeqUnroll(\\(_p3, _p4) -> add(_p3, absVal(_p4)), 0.0f, x)",
    );
}

#[test]
fn map_stride() {
    // Computed in the strided order, written back in place.
    check_rule(
        MAP,
        "map-stride",
        "root",
        &[("s", 4)],
        "map(absVal, x)",
        "scatter(\\i -> i / (N / 4) + (i % (N / 4)) * 4, map(absVal, gather(\\i -> i / (N / 4) + (i % (N / 4)) * 4, x)))",
    );
    // Refused where there is no high-level map, naming itself.
    let e = apply_err(ASUM, "map-stride", "root", &[("s", 4)]).to_string();
    assert!(e.contains("`map-stride` does not match"), "{e}");
}

#[test]
fn fission() {
    // The inverse of map-fusion: `x` only in the last argument.
    check_rule(
        "def f(a: [[float]M]N) = map(\\r -> reduce(add, 0.0f) o map(absVal) $ r) $ a",
        "map-fission",
        "root",
        &[],
        "map(\\r -> reduce(add, 0.0f, map(absVal, r)), a)",
        "map(\\_p4 -> reduce(add, 0.0f, _p4), map(\\r -> map(absVal, r), a))",
    );
    // Not where the element is the whole argument, nor where it also
    // occurs elsewhere.
    for src in [
        "def f(a: [[float]M]N) = map(\\r -> reduce(add, 0.0f) $ r) $ a",
        "def f(x: [float]N) = map(\\v -> add(v, absVal(v))) $ x",
    ] {
        assert!(matches!(apply_err(src, "map-fission", "root", &[]), RewriteError::Rule(_)), "{src}");
    }
}

#[test]
fn reduce_flatten() {
    check_rule(
        "def f(x: [float]N) = reduce(add, 0.0f) o join o map(reduce(add, 0.0f) o map(absVal)) o split(4) $ x",
        "reduce-flatten",
        "root",
        &[],
        "reduce(add, 0.0f, join(map(\\_p3 -> reduce(add, 0.0f, map(absVal, _p3)), split(4, x))))",
        "reduce(add, 0.0f, join(map(\\_p3 -> map(absVal, _p3), split(4, x))))",
    );
}

#[test]
fn copies_and_joins() {
    check_rule(MAP, "map-id", "root", &[], "map(absVal, x)", "map(\\_p1 -> id(_p1), map(absVal, x))");
    check_rule(
        "def f(a: [[float]M]N) = map(absVal) o join $ a",
        "map-join",
        "root",
        &[],
        "map(absVal, join(a))",
        "join(map(\\_p2 -> map(absVal, _p2), a))",
    );
    check_rule(
        "def f(x: [float]N) = slide(3, 1) $ x",
        "slide-tile",
        "root",
        &[("u", 5), ("v", 3)],
        "slide(3, 1, x)",
        "join(map(\\_p1 -> slide(3, 1, _p1), slide(5, 3, x)))",
    );
}

#[test]
fn opencl_maps() {
    let wrg = check_rule(
        MAP2,
        "map-wrg",
        "root",
        &[("d", 0)],
        "map(\\_p1 -> map(absVal, _p1), a)",
        "mapWrg(0, \\_p1 -> map(absVal, _p1), a)",
    );
    let r = rewrite::find_rule("map-lcl").unwrap();
    let out = rewrite::apply(&wrg, "f", r, &"0.0.0".parse().unwrap(), &args(&[("d", 0)])).unwrap();
    assert_eq!(body(&out.program, "f"), "mapWrg(0, \\_p1 -> mapLcl(0, absVal, _p1), a)");
    check_rule(MAP, "map-glb", "root", &[("d", 0)], "map(absVal, x)", "mapGlb(0, absVal, x)");
    check_rule(MAP, "map-seq", "root", &[], "map(absVal, x)", "mapSeq(absVal, x)");
    let seq = "def f(x: [float]8) = mapSeq(absVal) $ x";
    check_rule(seq, "map-seq-unroll", "root", &[], "mapSeq(absVal, x)", "mapSeqUnroll(absVal, x)");
    check_rule(
        ASUM,
        "reduce-seq",
        "root",
        &[],
        "reduce(add, 0.0f, map(absVal, x))",
        "reduceSeq(add, 0.0f, map(absVal, x))",
    );
    check_rule(
        "def f(x: [float]8) = reduceSeq(add, 0.0f) $ x",
        "reduce-seq-unroll",
        "root",
        &[],
        "reduceSeq(add, 0.0f, x)",
        "reduceSeqUnroll(add, 0.0f, x)",
    );
    check_rule(
        "def f(x: [float]N) = gather(\\i -> i) $ x",
        "gather-id",
        "root",
        &[],
        "gather(\\i -> i, x)",
        "x",
    );
    for (rule, mem) in [("to-global", "toGlobal"), ("to-local", "toLocal"), ("to-private", "toPrivate")] {
        check_rule(seq, rule, "root", &[], "mapSeq(absVal, x)", &format!("{mem}(mapSeq(absVal), x)"));
    }
    check_rule(
        "def f(x: [float]1) = reduce(add, 0.0f) $ x",
        "reduce-one",
        "root",
        &[],
        "reduce(add, 0.0f, x)",
        "x",
    );
}

#[test]
fn vectorisation() {
    check_rule(
        MAP,
        "vectorize",
        "root",
        &[("n", 4)],
        "map(absVal, x)",
        "asScalar(map(\\_p1 -> mapVec(absVal, _p1), asVector(4, x)))",
    );
    let scal = "def f(alpha: float, x: [float]N) = map(\\a -> mult(alpha, a)) $ x";
    let p = check_rule(
        scal,
        "vectorize",
        "root",
        &[("n", 4)],
        "map(\\a -> mult(alpha, a), x)",
        "asScalar(map(\\a -> mult_vec4(alpha, a), asVector(4, x)))",
    );
    let v = p.user_funs.iter().find(|u| u.name == "mult_vec4").unwrap();
    assert_eq!(v.params[1].1, Type::Vector(lift::types::ScalarType::Float, 4));
    // Over a zip, each zipped array is viewed as vectors.
    check_rule(
        "def f(x: [float]N, y: [float]N) = map(\\(a, b) -> add(a, b)) $ zip(x, y)",
        "vectorize",
        "root",
        &[("n", 4)],
        "map(\\(a, b) -> add(a, b), zip(x, y))",
        "asScalar(map(\\(a, b) -> add_vec4(a, b), zip(asVector(4, x), asVector(4, y))))",
    );
    check_rule(
        "def f(x: [float]N) = asVector(4) o map(absVal) $ x",
        "asvector-map",
        "root",
        &[],
        "asVector(4, map(absVal, x))",
        "map(\\_p2 -> mapVec(absVal, _p2), asVector(4, x))",
    );
    check_rule(
        ASUM,
        "vectorize-reduce",
        "root",
        &[("n", 4)],
        "reduce(add, 0.0f, map(absVal, x))",
        "reduce(add, 0.0f, asScalar(reduce(add_vec4, splat_float4(0.0f), asVector(4, map(absVal, x)))))",
    );
}

#[test]
fn macro_rules() {
    let st = "def f(x: [float]N) = map(reduce(add, 0.0f)) o slide(3, 1) $ x";
    let tiled = check_rule(
        st,
        "overlapped-tiling",
        "root",
        &[("u", 5), ("v", 3)],
        "map(\\_p1 -> reduce(add, 0.0f, _p1), slide(3, 1, x))",
        "join(map(\\_p3 -> map(\\_p1 -> reduce(add, 0.0f, _p1), slide(3, 1, _p3)), slide(5, 3, x)))",
    );
    // The macro is slide-tile, map-join, map-fusion.
    let mut p = rewrite::prepare(&parse(st), "f").unwrap();
    for (rule, path, a) in [
        ("slide-tile", "1", args(&[("u", 5), ("v", 3)])),
        ("map-join", "root", Args::new()),
        ("map-fusion", "1", Args::new()),
    ] {
        let r = rewrite::find_rule(rule).unwrap();
        p = rewrite::apply(&p, "f", r, &path.parse().unwrap(), &a)
            .unwrap_or_else(|e| panic!("{rule}: {e}"))
            .program;
    }
    let canon = |p: &Program| lift::ir::equiv::canonical_def(p, p.def("f").unwrap());
    assert_eq!(canon(&p), canon(&tiled));
    check_rule(
        MAP2,
        "map-interchange",
        "root",
        &[],
        "map(\\_p1 -> map(absVal, _p1), a)",
        "transpose(map(\\_p3 -> map(\\_p2 -> absVal(_p2), _p3), transpose(a)))",
    );
    check_rule(MAP2, "register-blocking", "root", &[("n", 2)], "map(\\_p1 -> map(absVal, _p1), a)",
        "join(map(\\_p2 -> transpose(map(\\_p4 -> map(\\_p3 -> absVal(_p3), _p4), transpose(_p2))), split(2, a)))");
    let tiled2 = check_rule(MAP2, "tile-2d", "root", &[("n", 2), ("m", 3)], "map(\\_p1 -> map(absVal, _p1), a)",
        "join(map(\\_p8 -> map(\\_p9 -> join(_p9), transpose(_p8)), map(\\_p7 -> map(\\_p4 -> map(\\_p6 -> map(\\_p5 -> absVal(_p5), _p6), _p4), _p7), map(\\_p2 -> transpose(map(\\_p3 -> split(3, _p3), _p2)), split(2, a)))))");
    assert!(tiled2.def("f").is_some());
    let st2 = "def f(a: [[float]M]N) = map(map(\\w -> reduce(add, 0.0f) o join $ w)) o map(transpose) o slide(3, 1) o map(slide(3, 1)) $ a";
    let p = parse(st2);
    let p = rewrite::prepare(&p, "f").unwrap();
    let r = rewrite::find_rule("overlapped-tiling-2d").unwrap();
    let out = rewrite::apply(&p, "f", r, &Path::root(), &args(&[("u", 6), ("v", 4)])).unwrap();
    assert!(body(&out.program, "f").starts_with("map(\\_p"), "{}", body(&out.program, "f"));
}

const ZIP2: &str = "def f(a: [[float]M]N, b: [[float]M]N) = map(map(\\q -> add(at(0, at(1, get(0, q))), get(1, q)))) o map(\\r -> zip(get(0, r), get(1, r))) $ zip(map(transpose) o slide(3, 1) o map(slide(3, 1)) o map(pad(1, 1, clamp)) o pad(1, 1, clamp) $ a, b)";
const PAD3: &str = "map(map(pad(1, 1, clamp)) o pad(1, 1, clamp)) o pad(1, 1, clamp)";
const SLIDE3: &str =
    "map(map(transpose) o transpose) o slide(3, 1) o map(map(transpose) o slide(3, 1) o map(slide(3, 1)))";

#[test]
fn stencil_tiling_rules() {
    // Rows and columns tiled apart: 4 x 6 inputs give 2 x 4 outputs.
    check_rule(
        "def f(a: [[float]M]N) = map(map(\\w -> reduce(add, 0.0f) o join $ w)) o map(transpose) o slide(3, 1) o map(slide(3, 1)) $ a",
        "overlapped-tiling-2d-rect",
        "root",
        &[("uy", 4), ("vy", 2), ("ux", 6), ("vx", 4)],
        "map(\\_p5 -> map(\\w -> reduce(add, 0.0f, join(w)), _p5), map(\\_p6 -> transpose(_p6), slide(3, 1, map(\\_p7 -> slide(3, 1, _p7), a))))",
        "map(\\_p18 -> join(_p18), join(map(\\_p17 -> transpose(_p17), map(\\_p16 -> map(\\_p10 -> map(\\_p15 -> map(\\_p13 -> reduce(add, 0.0f, join(_p13)), _p15), map(\\_p12 -> transpose(_p12), slide(3, 1, map(\\_p11 -> slide(3, 1, _p11), _p10)))), _p16), map(\\_p9 -> transpose(_p9), slide(4, 2, map(\\_p8 -> slide(6, 4, _p8), a)))))))",
    );
    // A slid grid zipped with another: the other is tiled without halo.
    check_rule(
        ZIP2,
        "overlapped-tiling-2d-rect",
        "root",
        &[("uy", 4), ("vy", 2), ("ux", 6), ("vx", 4)],
        "map(\\_p6 -> map(\\q -> add(at(0, at(1, get(0, q))), get(1, q)), _p6), map(\\r -> zip(get(0, r), get(1, r)), zip(map(\\_p7 -> transpose(_p7), slide(3, 1, map(\\_p8 -> slide(3, 1, _p8), map(\\_p9 -> pad(1, 1, clamp, _p9), pad(1, 1, clamp, a))))), b)))",
        "map(\\_p23 -> join(_p23), join(map(\\_p22 -> transpose(_p22), map(\\_p14 -> map(\\_p15 -> map(\\_p21 -> map(\\_p19 -> add(at(0, at(1, get(0, _p19))), get(1, _p19)), _p21), map(\\_p18 -> zip(get(0, _p18), get(1, _p18)), zip(map(\\_p17 -> transpose(_p17), slide(3, 1, map(\\_p16 -> slide(3, 1, _p16), get(0, _p15)))), get(1, _p15)))), zip(get(0, _p14), get(1, _p14))), zip(map(\\_p11 -> transpose(_p11), slide(4, 2, map(\\_p10 -> slide(6, 4, _p10), map(\\_p9 -> pad(1, 1, clamp, _p9), pad(1, 1, clamp, a))))), map(\\_p13 -> transpose(_p13), slide(2, 2, map(\\_p12 -> slide(4, 4, _p12), b))))))))",
    );
    // 3D: windows of planes, f's reads at(x, at(y, at(z, q))) become at(z, at(x, at(y, q))).
    check_rule(
        &format!("def f(a: [[[float]M]M]N) = map(map(map(\\q -> add(at(0, at(1, at(2, q))), at(2, at(0, at(1, q))))))) o {SLIDE3} $ a"),
        "stencil-3d-planes",
        "root",
        &[],
        "map(\\_p6 -> map(\\_p5 -> map(\\q -> add(at(0, at(1, at(2, q))), at(2, at(0, at(1, q)))), _p5), _p6), map(\\_p2 -> map(\\_p7 -> transpose(_p7), transpose(_p2)), slide(3, 1, map(\\_p3 -> map(\\_p8 -> transpose(_p8), slide(3, 1, map(\\_p9 -> slide(3, 1, _p9), _p3))), a))))",
        "map(\\_p11 -> map(\\_p17 -> map(\\_p15 -> add(at(2, at(0, at(1, _p15))), at(1, at(2, at(0, _p15)))), _p17), map(\\_p14 -> transpose(_p14), slide(3, 1, map(\\_p13 -> slide(3, 1, _p13), map(\\_p12 -> transpose(_p12), transpose(_p11)))))), slide(3, 1, a))",
    );
    check_rule(
        &format!("def f(a: [[[float]M]M]N, b: [[[float]M]M]N) = map(map(map(\\q -> add(at(0, at(1, at(2, get(0, q)))), get(1, q))))) o map(\\p -> map(\\r -> zip(get(0, r), get(1, r))) $ zip(get(0, p), get(1, p))) $ zip({SLIDE3} o {PAD3} $ a, b)"),
        "stencil-3d-planes",
        "root",
        &[],
        "map(\\_p11 -> map(\\_p10 -> map(\\q -> add(at(0, at(1, at(2, get(0, q)))), get(1, q)), _p10), _p11), map(\\p -> map(\\r -> zip(get(0, r), get(1, r)), zip(get(0, p), get(1, p))), zip(map(\\_p6 -> map(\\_p12 -> transpose(_p12), transpose(_p6)), slide(3, 1, map(\\_p7 -> map(\\_p13 -> transpose(_p13), slide(3, 1, map(\\_p14 -> slide(3, 1, _p14), _p7))), map(\\_p8 -> map(\\_p15 -> pad(1, 1, clamp, _p15), pad(1, 1, clamp, _p8)), pad(1, 1, clamp, a))))), b)))",
        "map(\\_p17 -> map(\\_p24 -> map(\\_p22 -> add(at(2, at(0, at(1, get(0, _p22)))), get(1, _p22)), _p24), map(\\_p21 -> zip(get(0, _p21), get(1, _p21)), zip(map(\\_p20 -> transpose(_p20), slide(3, 1, map(\\_p19 -> slide(3, 1, _p19), map(\\_p18 -> transpose(_p18), transpose(get(0, _p17)))))), get(1, _p17)))), zip(slide(3, 1, map(\\_p8 -> map(\\_p15 -> pad(1, 1, clamp, _p15), pad(1, 1, clamp, _p8)), pad(1, 1, clamp, a))), b))",
    );
    // 3D as columns along z, each slid (for slide-seq-plus); f unchanged.
    check_rule(
        &format!("def f(a: [[[float]M]M]N) = map(map(map(\\q -> add(at(0, at(1, at(2, q))), at(2, at(0, at(1, q))))))) o {SLIDE3} $ a"),
        "stencil-3d-columns",
        "root",
        &[],
        "map(\\_p6 -> map(\\_p5 -> map(\\q -> add(at(0, at(1, at(2, q))), at(2, at(0, at(1, q)))), _p5), _p6), map(\\_p2 -> map(\\_p7 -> transpose(_p7), transpose(_p2)), slide(3, 1, map(\\_p3 -> map(\\_p8 -> transpose(_p8), slide(3, 1, map(\\_p9 -> slide(3, 1, _p9), _p3))), a))))",
        "transpose(map(\\_p17 -> transpose(_p17), map(\\_p16 -> map(\\_p15 -> map(\\q -> add(at(0, at(1, at(2, q))), at(2, at(0, at(1, q)))), slide(3, 1, _p15)), _p16), map(\\_p13 -> transpose(_p13), transpose(map(\\_p10 -> map(\\_p12 -> transpose(_p12), slide(3, 1, map(\\_p11 -> slide(3, 1, _p11), _p10))), a))))))",
    );
    let e = apply_err(
        &format!("def f(a: [[[float]M]M]N, b: [[[float]M]M]N) = map(map(map(\\q -> add(at(0, at(1, at(2, get(0, q)))), get(1, q))))) o map(\\p -> map(\\r -> zip(get(0, r), get(1, r))) $ zip(get(0, p), get(1, p))) $ zip({SLIDE3} o {PAD3} $ a, b)"),
        "stencil-3d-columns",
        "root",
        &[],
    );
    assert!(
        e.to_string().starts_with(
            "`stencil-3d-columns` does not match here: expected `map(map(map(f))) $ slide_3(size, step) $ x`"
        ),
        "{e}"
    );
    // Two tile copies in the data of a map, bound with let before it.
    check_rule(
        "def f(a: [[float]M]N, b: [[float]M]N) = mapWrg(0, \\t -> map(\\p -> add(get(0, p), get(1, p))) $ zip(toLocal(mapLcl(0, id)) $ get(0, t), toLocal(mapLcl(0, id)) $ get(1, t))) $ zip(a, b)",
        "let-local-copies",
        "0.0.0",
        &[],
        "mapWrg(0, \\t -> map(\\p -> add(get(0, p), get(1, p)), zip(toLocal(mapLcl(0, \\_p4 -> id(_p4)), get(0, t)), toLocal(mapLcl(0, \\_p5 -> id(_p5)), get(1, t)))), zip(a, b))",
        "mapWrg(0, \\t -> (\\l0 -> (\\l1 -> map(\\p -> add(get(0, p), get(1, p)), zip(l0, l1)))(toLocal(mapLcl(0, \\_p5 -> id(_p5)), get(1, t))))(toLocal(mapLcl(0, \\_p4 -> id(_p4)), get(0, t))), zip(a, b))",
    );
    let e = apply_err(MAP, "let-local-copies", "root", &[]);
    assert_eq!(
        e.to_string(),
        "`let-local-copies` does not match here: expected a call whose data holds `toLocal(...)` copies, found `map(absVal, _param0)`"
    );
    // map-id-nd copies one grid of a tile of zipped grids.
    check_rule(
        "def f(a: [[float]M]N, b: [[float]M]N) = map(\\t -> map(map(\\p -> add(get(0, p), get(1, p)))) o map(\\r -> zip(get(0, r), get(1, r))) $ zip(get(0, t), get(1, t))) $ zip(split(2, a), split(2, b))",
        "map-id-nd",
        "0.0.0.1.1.1",
        &[],
        "map(\\t -> map(\\_p6 -> map(\\p -> add(get(0, p), get(1, p)), _p6), map(\\r -> zip(get(0, r), get(1, r)), zip(get(0, t), get(1, t)))), zip(split(2, a), split(2, b)))",
        "map(\\t -> map(\\_p6 -> map(\\p -> add(get(0, p), get(1, p)), _p6), map(\\r -> zip(get(0, r), get(1, r)), zip(map(\\_p8 -> map(\\_p7 -> id(_p7), _p8), get(0, t)), get(1, t)))), zip(split(2, a), split(2, b)))",
    );
    // f reading its neighbourhood whole: the reads cannot be reordered.
    let e = apply_err(
        &format!("def f(a: [[[float]M]M]N) = map(map(map(\\q -> reduce(add, 0.0f) o join o join $ q))) o {SLIDE3} $ a"),
        "stencil-3d-planes",
        "root",
        &[],
    );
    assert!(
        e.to_string()
            .starts_with("`stencil-3d-planes` does not match here: expected `map(map(map(f))) $ slide_3"),
        "{e}"
    );
    let e =
        apply_err(ZIP2, "overlapped-tiling-2d-rect", "root", &[("uy", 4), ("vy", 2), ("ux", 6), ("vx", 3)]);
    assert_eq!(
        e.to_string(),
        "`overlapped-tiling-2d-rect`: side condition violated: u - v = 3 but size - step = 2"
    );
}

#[test]
fn errors_say_why() {
    let e = apply_err(MAP, "reduce-seq", "root", &[]);
    assert_eq!(
        e.to_string(),
        "`reduce-seq` does not match here: expected `reduce(f, z) $ x`, found `map(absVal, _param0)`"
    );
    let e = apply_err("def f(x: [float]10) = map(absVal) $ x", "split-join", "root", &[("n", 4)]);
    assert_eq!(e.to_string(), "`split-join`: side condition violated: 4 does not divide the length 10");
    let e = apply_err(MAP, "split-join", "root", &[]);
    assert_eq!(e.to_string(), "`split-join` needs the parameter `n` (chunk size)");
    let e = apply_err(MAP, "map-seq", "root", &[("n", 2)]);
    assert_eq!(e.to_string(), "`map-seq` takes no parameter `n` (it takes: none)");
    let e = apply_err(MAP, "map-lcl", "root", &[("d", 0)]);
    assert_eq!(e.to_string(), "`map-lcl`: side condition violated: mapLcl must be nested in a mapWrg");
    let e = apply_err(MAP, "map-seq", "3", &[]);
    assert_eq!(e.to_string(), "position 3 does not exist (step 1 of a call has no child 3)");
    let e = apply_err("def f(x: [float]N) = slide(3, 1) $ x", "slide-tile", "root", &[("u", 5), ("v", 2)]);
    assert_eq!(e.to_string(), "`slide-tile`: side condition violated: u - v = 3 but size - step = 2");
    let e = apply_err("def f(x: [float]N) = map(pos) $ x", "vectorize", "root", &[("n", 4)]);
    assert!(matches!(e, RewriteError::Rule(RuleError::NoVectorVersion { .. })), "{e}");
    assert!(e.to_string().contains("no vector version"), "{e}");
}

#[test]
fn seed_004_rules() {
    // Column sums: a reduction of rows by an element-wise operator is a
    // map of column reductions.
    check_rule(
        "def f(a: [[float]M]N, z: [float]M) = reduce(\\(acc, row) -> map(\\p -> add(get(0, p), get(1, p))) $ zip(acc, row), z) $ a",
        "reduce-map-zip",
        "root",
        &[],
        "reduce(\\(acc, row) -> map(\\p -> add(get(0, p), get(1, p)), zip(acc, row)), z, a)",
        "transpose(map(\\_p7 -> reduce(\\(_p8, _p9) -> add(_p8, _p9), get(0, _p7), get(1, _p7)), zip(z, transpose(a))))",
    );
    check_rule(
        "def f(a: [[float]M]N) = map(transpose) o slide(3, 1) $ a",
        "slide-transpose",
        "root",
        &[],
        "map(\\_p2 -> transpose(_p2), slide(3, 1, a))",
        "transpose(map(\\_p3 -> slide(3, 1, _p3), transpose(a)))",
    );
    // A sequential map over windows becomes one loop over a private window.
    check_rule(
        "def f(x: [float]N) = mapSeq(\\w -> add(at(0, w), at(2, w))) o slide(3, 2) $ x",
        "slide-seq-plus",
        "root",
        &[],
        "mapSeq(\\w -> add(at(0, w), at(2, w)), slide(3, 2, x))",
        "slideSeqPlus(3, 2, \\w -> add(at(0, w), at(2, w)), x)",
    );
    let e = apply_err(
        "def f(x: [float]N) = mapGlb(0, reduceSeq(add, 0.0f)) o slide(3, 1) $ x",
        "slide-seq-plus",
        "root",
        &[],
    );
    assert!(matches!(e, RewriteError::Rule(RuleError::NoMatch { .. })), "{e}");
    let e = apply_err(
        "def f(x: [float]N) = mapSeq(mapGlb(0, sq)) o slide(3, 1) $ x",
        "slide-seq-plus",
        "root",
        &[],
    );
    assert_eq!(
        e.to_string(),
        "`slide-seq-plus`: side condition violated: the function contains a parallel map, but the window is private to one thread"
    );
}

#[test]
fn row_reduction_rules() {
    // Lane t of 4 reduces elements t, t + 4, ...: the columns of the rows of 4.
    check_rule(
        "def f(x: [float]N) = reduce(add, 0.0f) $ x",
        "reduce-lanes",
        "root",
        &[("m", 4)],
        "reduce(add, 0.0f, x)",
        "reduce(add, 0.0f, join(map(\\_p1 -> partRed(add, 0.0f, 1, _p1), transpose(split(4, x)))))",
    );
    check_rule(
        "def f(a: [[float]M]N) = transpose o map(map(absVal)) $ a",
        "transpose-map",
        "root",
        &[],
        "transpose(map(\\_p2 -> map(absVal, _p2), a))",
        "map(\\_p3 -> map(absVal, _p3), transpose(a))",
    );
    let e = apply_err("def f(x: [float]10) = reduce(add, 0.0f) $ x", "reduce-lanes", "root", &[("m", 4)]);
    assert_eq!(e.to_string(), "`reduce-lanes`: side condition violated: 4 does not divide the length 10");
}

/// `reduce-pad`: the reduced array padded with the neutral element, or,
/// behind a map, with a value the map takes to it (0 for `absVal`, 1 for a
/// product of `absVal`s); a map that reads a def's scalar is not padded.
#[test]
fn padding_rule() {
    check_rule(
        ASUM,
        "reduce-pad",
        "root",
        &[("p", 3)],
        "reduce(add, 0.0f, map(absVal, x))",
        "reduce(add, 0.0f, map(absVal, padConst(0, 3, 0.0f, x)))",
    );
    check_rule(
        "def f(x: [float]N) = reduce(mult, 1.0f) o map(absVal) $ x",
        "reduce-pad",
        "root",
        &[("p", 2)],
        "reduce(mult, 1.0f, map(absVal, x))",
        "reduce(mult, 1.0f, map(absVal, padConst(0, 2, 1.0f, x)))",
    );
    check_rule(
        "def f(x: [float]N, y: [float]N) = reduce(add, 0.0f) o map(\\(u, v) -> mult(u, v)) $ zip(x, y)",
        "reduce-pad",
        "root",
        &[("p", 5)],
        "reduce(add, 0.0f, map(\\(u, v) -> mult(u, v), zip(x, y)))",
        "reduce(add, 0.0f, map(\\(u, v) -> mult(u, v), zip(padConst(0, 5, 0.0f, x), padConst(0, 5, 0.0f, y))))",
    );
    let e = apply_err(
        "def f(a: float, x: [float]N) = reduce(add, 0.0f) o map(\\v -> mult(a, v)) $ x",
        "reduce-pad",
        "root",
        &[("p", 3)],
    );
    assert!(e.to_string().starts_with("`reduce-pad` does not match here"), "{e}");
    // A negative pad would drop elements.
    let e = apply_err(ASUM, "reduce-pad", "root", &[("p", -1)]);
    assert_eq!(e.to_string(), "`reduce-pad`: side condition violated: -1 must not be negative");
    // A fold of ints into a float is not padded with the float.
    let e = apply_err(
        "userfun addi(a: float, x: int): float { return a + (float)x; }\ndef f(x: [int]N) = reduce(addi, 0.0f) $ x",
        "reduce-pad",
        "root",
        &[("p", 3)],
    );
    assert!(e.to_string().starts_with("`reduce-pad` does not match here"), "{e}");
}

/// `reduce-pad-mask`: behind a map that reads a def's scalar (no constant
/// is known to give 0 for every `a`), each element is zipped with a mask
/// and `pick_float` keeps the map's value or gives `z`; a zip gets the mask
/// as one more component. The value is the same: the property test below
/// checks it on random inputs.
#[test]
fn masked_padding_rule() {
    let scaled = "def f(a: float, x: [float]N) = reduce(add, 0.0f) o map(\\v -> mult(a, v)) $ x";
    let out = check_rule(
        scaled,
        "reduce-pad-mask",
        "root",
        &[("p", 3)],
        "reduce(add, 0.0f, map(\\v -> mult(a, v), x))",
        "reduce(add, 0.0f, map(\\_p6 -> pick_float(get(1, _p6), mult(a, get(0, _p6)), 0.0f), zip(padConst(0, 3, 0.0f, x), padConst(0, 3, 0, generate(N, \\_p5 -> 1)))))",
    );
    assert!(out.user_funs.iter().any(|u| u.name == "pick_float"));
    check_rule(
        "def f(x: [float]N, y: [float]N) = reduce(add, 0.0f) o map(\\(u, v) -> mult(u, v)) $ zip(x, y)",
        "reduce-pad-mask",
        "root",
        &[("p", 2)],
        "reduce(add, 0.0f, map(\\(u, v) -> mult(u, v), zip(x, y)))",
        "reduce(add, 0.0f, map(\\_p7 -> pick_float(get(2, _p7), mult(get(0, _p7), get(1, _p7)), 0.0f), zip(padConst(0, 2, 0.0f, x), padConst(0, 2, 0.0f, y), padConst(0, 2, 0, generate(N, \\_p6 -> 1)))))",
    );
    // A function of the zip's tuple as one parameter: the padded zip is
    // zipped with the mask, and the function gets the tuple.
    check_rule(
        "def f(x: [float]N, y: [float]N) = reduce(add, 0.0f) o map(\\t -> mult(get(0, t), get(1, t))) $ zip(x, y)",
        "reduce-pad-mask",
        "root",
        &[("p", 2)],
        "reduce(add, 0.0f, map(\\t -> mult(get(0, t), get(1, t)), zip(x, y)))",
        "reduce(add, 0.0f, map(\\_p6 -> pick_float(get(1, _p6), (\\t -> mult(get(0, t), get(1, t)))(get(0, _p6)), 0.0f), zip(zip(padConst(0, 2, 0.0f, x), padConst(0, 2, 0.0f, y)), padConst(0, 2, 0, generate(N, \\_p5 -> 1)))))",
    );
    // A fold of ints into a float: `pick` would mix the two types.
    let e = apply_err(
        "userfun inc(x: int): int { return x + 1; }\nuserfun addi(a: float, x: int): float { return a + (float)x; }\ndef f(x: [int]N) = reduce(addi, 0.0f) o map(inc) $ x",
        "reduce-pad-mask",
        "root",
        &[("p", 3)],
    );
    assert!(e.to_string().starts_with("`reduce-pad-mask` does not match here"), "{e}");
    assert!(apply_err(scaled, "reduce-pad-mask", "root", &[("p", -2)])
        .to_string()
        .contains("must not be negative"));
    // A reduction with no map in front is `reduce-pad`'s.
    let e = apply_err("def f(x: [float]N) = reduce(add, 0.0f) $ x", "reduce-pad-mask", "root", &[("p", 3)]);
    assert!(e.to_string().starts_with("`reduce-pad-mask` does not match here"), "{e}");
}

/// A product with a map after its reduction (`0.5 A Bᵀ`, `relu(A Bᵀ)`):
/// `tile-mm` applies `h` in the copy out, vectorised with the
/// accumulators, and every result is `h` of the same fold.
#[test]
fn matmul_tiling_keeps_the_map_after_the_reduction() {
    let src = |h: &str| {
        format!("def mm(a: [[float]K]M, b: [[float]K]N, s: float) = map(\\r -> join o map(\\c -> map({h}) o reduce(add, 0.0f) o map(\\(x, y) -> mult(x, y)) $ zip(r, c)) $ b) $ a")
    };
    let sizes: BTreeMap<String, i64> =
        [("M", 8), ("N", 12), ("K", 6)].map(|(k, v)| (k.to_string(), v)).into();
    for (h, wy, part) in
        [("pos", 1, "mapSeq"), ("pos", 2, "mapVec(pos"), ("\\v -> mult(v, s)", 4, "mult_vec4(")]
    {
        let p = rewrite::prepare(&parse(&src(h)), "mm").unwrap();
        let r = rewrite::find_rule("tile-mm").unwrap();
        let a = [("mt", 4), ("nt", 4), ("kc", 2), ("rm", 2), ("rn", 4), ("wx", 1), ("wy", wy)];
        let out = rewrite::apply(&p, "mm", r, &Path::root(), &args(&a)).unwrap().program;
        let text = body(&out, "mm");
        let part = if part == "mapSeq" { "-> pos(" } else { part };
        assert!(text.contains(part), "{part} in {text}");
        let mut seed = 5;
        let inputs = random_inputs(p.def("mm").unwrap(), &sizes, &mut seed);
        let want = eval_def(&p, "mm", &inputs, &sizes).unwrap();
        assert_eq!(eval_def(&out, "mm", &inputs, &sizes).unwrap(), want, "{h}, wy = {wy}");
    }
    // `h` reading a row of `a` cannot leave the row's scope.
    let reads = src("\\v -> mult(v, at(0, r))");
    let e = apply_err(
        &reads,
        "tile-mm",
        "root",
        &[("mt", 4), ("nt", 4), ("kc", 2), ("rm", 2), ("rn", 2), ("wx", 1), ("wy", 1)],
    );
    assert!(matches!(e, RewriteError::Rule(RuleError::NoMatch { .. })), "{e}");
}

/// A dot product per row of `b`, from a non-neutral initial value and
/// with an operator that is not associative (`acc / 2 + x * y`): the steps
/// of `tile-mm` keep the order of every fold.
const DOTS: &str = "def f(a: [float]8, b: [[float]8]N) = map(\\r -> reduceSeq(\\(acc, p) -> add(mult(acc, 0.5f), mult(get(0, p), get(1, p))), 1.0f) $ zip(a, r)) $ b";

const DOTS_BODY: &str = "map(\\r -> reduceSeq(\\(acc, p) -> add(mult(acc, 0.5f), mult(get(0, p), get(1, p))), 1.0f, zip(a, r)), b)";

/// The two rules that move and cut sequential folds (`src/rewrite/fold.rs`):
/// the first folds column `k` of the rows' inputs into a row of
/// accumulators at step `k`, the second folds chunk after chunk (`join`
/// or `at(0)` takes the element of the inner fold's one-element result).
#[test]
fn fold_order_rules() {
    check_rule(
        DOTS,
        "map-reduce-interchange",
        "root",
        &[],
        DOTS_BODY,
        "transpose(reduceSeq(\\(_p7, _p8) -> map(\\(_p9, _p10) -> add(mult(_p9, 0.5f), mult(get(0, _p10), get(1, _p10))), zip(_p7, _p8)), map(\\r -> 1.0f, b), transpose(map(\\r -> zip(a, r), b))))",
    );
    check_rule(
        DOTS,
        "reduce-seq-split",
        "0.0.0",
        &[("n", 4)],
        DOTS_BODY,
        "map(\\r -> reduceSeq(\\(_p5, _p6) -> at(0, reduceSeq(\\(acc, p) -> add(mult(acc, 0.5f), mult(get(0, p), get(1, p))), _p5, _p6)), 1.0f, split(4, zip(a, r))), b)",
    );
    check_rule(
        "def f(a: [[float]M]8, z: [float]M) = reduceSeq(\\(acc, r) -> map(\\(x, y) -> add(mult(x, 0.5f), y)) $ zip(acc, r), z) $ a",
        "reduce-seq-split",
        "root",
        &[("n", 2)],
        "reduceSeq(\\(acc, r) -> map(\\(x, y) -> add(mult(x, 0.5f), y), zip(acc, r)), z, a)",
        "reduceSeq(\\(_p6, _p7) -> join(reduceSeq(\\(acc, r) -> map(\\(x, y) -> add(mult(x, 0.5f), y), zip(acc, r)), _p6, _p7)), z, split(2, a))",
    );
    let e = apply_err(DOTS, "reduce-seq-split", "0.0.0", &[("n", 3)]);
    assert_eq!(e.to_string(), "`reduce-seq-split`: side condition violated: 3 does not divide the length 8");
    // The operator reads the map's element: it cannot leave the map.
    let reads = "def f(b: [[float]8]N) = map(\\r -> reduceSeq(\\(acc, x) -> add(acc, mult(x, at(0, r))), 0.0f) $ r) $ b";
    let e = apply_err(reads, "map-reduce-interchange", "root", &[]);
    let want = "the operator of the reduction uses the map's element `r`";
    assert_eq!(e.to_string(), format!("`map-reduce-interchange`: side condition violated: {want}"));
    // Not a fold (a high-level reduce), not a map of reductions.
    for (src, rule, a) in [(ASUM, "reduce-seq-split", &[("n", 2)][..]), (MAP, "map-reduce-interchange", &[])]
    {
        let e = apply_err(src, rule, "root", a);
        assert!(matches!(e, RewriteError::Rule(RuleError::NoMatch { .. })), "{rule}: {e}");
    }
}

const MM: &str = "def mm(a: [[float]M]K, b: [[float]N]K) = map(\\aRow -> join o map(\\bCol -> reduce(add, 0.0f) o map(\\(x, y) -> mult(x, y)) $ zip(aRow, bCol)) o transpose $ b) o transpose $ a";

#[test]
fn matmul_tiling_rule() {
    // Tiles of 4 x 2 results, K in chunks of 2, blocks of 2 x 1: block
    // (i, j) of a tile holds rows i, i + 2 and column j.
    check_rule(
        MM,
        "tile-mm",
        "root",
        &[("mt", 4), ("nt", 2), ("kc", 2), ("rm", 2), ("rn", 1), ("wx", 1), ("wy", 1)],
        "map(\\aRow -> join(map(\\bCol -> reduce(add, 0.0f, map(\\(x, y) -> mult(x, y), zip(aRow, bCol))), transpose(b))), transpose(a))",
        "join(map(\\_p17 -> map(\\_p52 -> join(_p52), transpose(map(\\_p18 -> join(map(\\_p51 -> join(_p51), transpose(map(\\_p48 -> split(1, map(\\_p50 -> join(_p50), map(\\_p49 -> transpose(_p49), transpose(_p48)))), map(\\_p47 -> map(\\_p46 -> map(\\_p45 -> map(\\_p44 -> id(_p44), _p45), _p46), _p47), join(reduceSeq(\\(_p27, _p28) -> (\\aLoc -> (\\bLoc -> map(\\(_p31, _p32) -> map(\\(_p33, _p34) -> join(reduceSeq(\\(_p35, _p36) -> (\\aP -> map(\\(_p39, _p10) -> map(\\(_p40, _p41) -> add(_p40, mult(_p10, _p41)), zip(_p39, get(1, _p36))), zip(_p35, aP)))(map(\\_p37 -> id(_p37), get(0, _p36))), _p33, zip(_p32, _p34))), zip(_p31, transpose(map(\\_p42 -> transpose(split(2, _p42)), bLoc)))), zip(_p27, transpose(map(\\_p43 -> transpose(split(2, _p43)), aLoc)))))(get(1, _p28)))(get(0, _p28)), map(\\_p26 -> map(\\_p25 -> map(\\_p24 -> map(\\_p23 -> id(_p23), _p24), _p25), _p26), generate(2, \\_p22 -> generate(2, \\_p21 -> generate(2, \\_p20 -> generate(1, \\_p19 -> 0.0f))))), zip(_p17, _p18)))))))), map(\\_p16 -> split(2, transpose(_p16)), split(2, transpose(b)))))), map(\\_p15 -> split(2, transpose(_p15)), split(4, transpose(a)))))",
    );
    // wx = wy = 2: the rows of both chunk tiles as float2s, a block's
    // values of a as scalars again (`asScalar`), the accumulators float2
    // (splat from z), updated by vectorised user functions; the result
    // back to scalars.
    let p = parse(MM);
    let p = rewrite::prepare(&p, "mm").unwrap();
    let r = rewrite::find_rule("tile-mm").unwrap();
    let wide = [("mt", 4), ("nt", 4), ("kc", 2), ("rm", 2), ("rn", 2), ("wx", 2), ("wy", 2)];
    let out = rewrite::apply(&p, "mm", r, &"root".parse::<Path>().unwrap(), &args(&wide)).unwrap();
    let text = body(&out.program, "mm");
    for part in ["map(\\_p", "asVector(2, _p", "add_vec2(", "mult_vec2(", "splat_float2(", "asScalar("] {
        assert!(text.contains(part), "{part} in {text}");
    }
    let funs: Vec<&str> = out.program.user_funs.iter().map(|u| u.name.as_str()).collect();
    assert!(funs.ends_with(&["mult_vec2", "add_vec2", "splat_float2"]), "{funs:?}");
    let e = apply_err(
        MM,
        "tile-mm",
        "root",
        &[("mt", 4), ("nt", 2), ("kc", 2), ("rm", 3), ("rn", 1), ("wx", 1), ("wy", 1)],
    );
    assert_eq!(e.to_string(), "`tile-mm`: side condition violated: 3 does not divide the length 4");
    let e = apply_err(
        MM,
        "tile-mm",
        "root",
        &[("mt", 4), ("nt", 4), ("kc", 2), ("rm", 2), ("rn", 4), ("wx", 1), ("wy", 3)],
    );
    assert_eq!(e.to_string(), "`tile-mm`: side condition violated: `wy` must be 1, 2, 4, 8 or 16, found 3");
    let e = apply_err(
        MM,
        "tile-mm",
        "1",
        &[("mt", 4), ("nt", 2), ("kc", 2), ("rm", 2), ("rn", 1), ("wx", 1), ("wy", 1)],
    );
    assert!(e.to_string().starts_with("`tile-mm` does not match here: expected `map(\\a -> join o map(\\b -> [map(h) o] reduce(f, z) o map(g) $ zip(a, b)) $ Y) $ X`"), "{e}");
    // The macro is its small steps (docs/REWRITE.md, "tile-mm as small
    // steps"): ninety steps of small rules from the same product give
    // `tile-mm`'s result for mt = nt = 4, kc = 2, rm = rn = 2, wx = wy = 1
    // (up to ids and parameter names; `tile_mm_small_steps_further`
    // checks the values).
    let p = rewrite::prepare(&parse(MM_8), "mm").unwrap();
    let steps = format!("{MM_STEPS_1_3}\n{MM_STEPS_FURTHER}\n{MM_STEPS_BLOCKS}");
    let d = rewrite::parse_derivation(&steps).unwrap();
    let small = rewrite::replay(&p, "mm", &d).unwrap().pop().unwrap().program;
    let tiled = [("mt", 4), ("nt", 4), ("kc", 2), ("rm", 2), ("rn", 2), ("wx", 1), ("wy", 1)];
    let r = rewrite::find_rule("tile-mm").unwrap();
    let macro_step = rewrite::apply(&p, "mm", r, &Path::root(), &args(&tiled)).unwrap().program;
    assert_eq!(canon_mm(&small), canon_mm(&macro_step));
}

// ---------------------------------------------------------------------------
// Property test: every rule preserves the interpreter's value.

const CORPUS: &[&str] = &[
    "def p0(x: [float]N) = reduce(add, 0.0f) o map(absVal) $ x",
    "def p1(alpha: float, x: [float]N) = map(\\a -> mult(alpha, a)) $ x",
    "def p2(x: [float]N, y: [float]N) = join o map(reduce(add, 0.0f) o map(\\xy -> mult(get(0, xy), get(1, xy)))) o split(4) $ zip(x, y)",
    "def p3(a: [[float]M]N) = map(map(absVal)) $ a",
    "def p4(x: [float]N) = map(reduce(add, 0.0f)) o slide(3, 1) o pad(1, 1, clamp) $ x",
    "def p5(a: [[float]M]N) = map(map(\\w -> reduce(add, 0.0f) o join $ w)) o map(transpose) o slide(3, 1) o map(slide(3, 1)) $ a",
    "def p6(x: [float]N) = iterate(3, join o map(reduce(add, 0.0f)) o split(2)) $ x",
    "def p7(x: [float]N) = map(absVal) o gather(\\i -> N - 1 - i) o map(sq) $ x",
    "def p8(a: [[float]4]N) = map(absVal) o join o split(4) o join $ a",
    "def p9(x: [float]N) = asScalar o asVector(4) o join o split(4) $ x",
    "def p10(x: [float]N) = reduceSeq(add, 0.0f) o mapSeq(absVal) $ x",
    "def p11(x: [float]N) = partRed(add, 0.0f, 2) $ x",
    "def p12(a: [[float]M]N) = mapWrg(0, map(absVal)) $ a",
    "def p13(x: [float]N) = map(reduce(add, 0.0f)) o slide(3, 1) $ x",
    "def p14(x: [float]8) = reduceSeq(add, 0.0f) o mapSeq(absVal) o mapSeq(sq) $ x",
    "def p15(x: [float4]N) = map(absVal) o asScalar o asVector(4) o asScalar $ x",
    "def p16(a: [[float]M]N) = map(absVal) o join $ a",
    "def p17(x: [float]N) = gather(\\i -> i) $ x",
    "def p18(x: [float]N) = reduce(add, 0.0f) o reduce(add, 0.0f) $ x",
    "def p20(x: [float]N) = reduce(add, 0.0f) o join o map(reduce(add, 0.0f) o map(absVal)) o split(4) $ x",
    // The initial row is neutral (zeros), as `reduce` promises.
    "def p21(a: [[float]M]N, z: [float]M) = reduce(\\(acc, row) -> map(\\p -> add(get(0, p), get(1, p))) $ zip(acc, row), map(\\v -> mult(0.0f, v)) $ z) $ a",
    "def p22(a: [[float]M]N) = map(map(reduce(add, 0.0f))) o map(transpose) o slide(3, 1) $ a",
    "def p28(x: [float]N) = mapSeq(\\w -> add(mult(0.5f, at(0, w)), at(2, w))) o slide(3, 2) o pad(1, 1, clamp) $ x",
    "def p29(a: [[float]M]N) = mapSeq(\\w -> reduceSeq(add, 0.0f) o join $ w) o slide(3, 1) $ a",
    // A tile copy in the data of a map (`let-local-copies`).
    "def p30(a: [[float]M]N) = mapWrg(0, \\r -> map(absVal) $ toLocal(mapLcl(0, id)) $ r) $ a",
    // Row reductions (explore::rows; `reduce-lanes` applies to p0): a
    // map moved through a transpose.
    "def p27(a: [[float]M]N) = transpose o map(map(absVal)) $ a",
    "def p19(x: [float]N) = partRed(add, 0.0f, 1) o asScalar o asVector(4) o map(absVal) $ x",
    // Padded reductions (`reduce-pad`): a zip padded with zeros, and a
    // minimum padded with its neutral element (|0| and |1| are not it).
    "def p58(x: [float]N, y: [float]N) = reduce(add, 0.0f) o map(\\(u, v) -> mult(u, v)) $ zip(x, y)",
    "userfun mn(x: float, y: float): float { return fmin(x, y); }\ndef p59(x: [float]N) = reduce(mn, 3.0e38f) o map(absVal) $ x",
    // Masked padding (`reduce-pad-mask`): a map reading a def's scalar,
    // and a maximum of a zip.
    "def p60(a: float, x: [float]N) = reduce(add, 0.0f) o map(\\v -> add(mult(a, v), 1.0f)) $ x",
    "userfun mx(x: float, y: float): float { return fmax(x, y); }\ndef p61(x: [float]N, y: [float]N) = reduce(mx, -3.0e38f) o map(\\(u, v) -> mult(u, v)) $ zip(x, y)",
    // ... and a function of a zip's tuple as one parameter.
    "def p62(x: [float]N, y: [float]N) = reduce(add, 0.0f) o map(\\t -> add(mult(get(0, t), get(1, t)), 1.0f)) $ zip(x, y)",
    // Stencils as the CGO 2018 defs write them: a slid grid zipped with
    // another (2D), 3D alone (reads that tell the dimensions apart) and
    // zipped.
    "def p23(a: [[float]M]N, b: [[float]M]N) = map(map(\\q -> add(at(0, at(1, get(0, q))), mult(at(2, at(0, get(0, q))), get(1, q))))) o map(\\r -> zip(get(0, r), get(1, r))) $ zip(map(transpose) o slide(3, 1) o map(slide(3, 1)) o map(pad(1, 1, clamp)) o pad(1, 1, clamp) $ a, b)",
    "def p24(a: [[[float]4]3]5) = map(map(map(\\q -> add(at(0, at(1, at(2, q))), mult(at(2, at(0, at(1, q))), at(1, at(2, at(0, q)))))))) o map(map(transpose) o transpose) o slide(3, 1) o map(map(transpose) o slide(3, 1) o map(slide(3, 1))) o map(map(pad(1, 1, clamp)) o pad(1, 1, clamp)) o pad(1, 1, clamp) $ a",
    // Matrix products (`tile-mm`), the second with a lambda as `f`.
    "def p30(a: [[float]M]N, b: [[float]M]N) = map(\\aRow -> join o map(\\bCol -> reduce(add, 0.0f) o map(\\(x, y) -> mult(x, y)) $ zip(aRow, bCol)) o transpose $ b) o transpose $ a",
    "def p31(a: [[float]N]M, b: [[float]N]M) = map(\\r -> join o map(\\c -> reduce(\\(acc, v) -> add(acc, v), 0.0f) o map(\\(u, v) -> mult(u, add(v, 1.0f))) $ zip(r, c)) $ b) $ a",
    // Products with a map after the reduction (`tile-mm`'s epilogue): a
    // user function, and a lambda reading a scalar of the def.
    "def p55(a: [[float]N]M, b: [[float]N]M) = map(\\r -> join o map(\\c -> map(absVal) o reduce(add, 0.0f) o map(\\(u, v) -> mult(u, v)) $ zip(r, c)) $ b) $ a",
    "def p56(a: [[float]N]M, b: [[float]N]M, s: float) = map(\\r -> join o map(\\c -> map(\\v -> mult(v, s)) o reduce(add, 0.0f) o map(\\(u, v) -> mult(u, v)) $ zip(r, c)) $ b) $ a",
    // A work-group's row read twice (`row-to-local`).
    "def p57(a: [[float]M]N) = mapWrg(0, \\r -> map(\\x -> add(x, at(0, reduceSeq(add, 0.0f) $ r))) $ r) $ a",
    // Sequential folds (`map-reduce-interchange`, `reduce-seq-split`):
    // scalar and row accumulators. `FOLDS` has the same with operators
    // that are not associative.
    "def p32(a: [float]N, b: [[float]N]M) = map(\\r -> reduceSeq(\\(acc, p) -> add(acc, mult(get(0, p), get(1, p))), 0.0f) $ zip(a, r)) $ b",
    "def p33(a: [[float]M]N, z: [float]M) = reduceSeq(\\(acc, r) -> map(\\(x, y) -> add(x, y)) $ zip(acc, r), map(\\v -> mult(0.0f, v)) $ z) $ a",
    // Maps over two independent arrays (`map-swap`), a join of joins.
    "def p35(a: [[[float]M]4]N) = map(absVal) o join o join $ a",
    // One-row arrays transposed (`transpose-one-row`).
    "def p36(a: [[float]N]1) = map(absVal) o join o transpose $ a",
    "def p37(a: [[[float]M]N]1) = map(join) o transpose $ a",
    "def p34(a: [float]N, b: [float]M) = map(\\x -> map(\\y -> add(x, mult(y, y))) $ b) $ a",
    // The steps of `tile-mm` after the fold (docs/REWRITE.md, "tile-mm as
    // small steps"): an outer zip, chunks of a zip, maps, zips and unread
    // components in the zip a map reads (`src/rewrite/zips.rs`), a fold
    // with a tile as accumulator (`reduce-seq-block`,
    // `reduce-seq-map-zip`), two transposes, a `let` in an argument, a
    // map of a constant (`let-bind` and `map-id-nd-call` apply everywhere).
    "def p38(a: [[float]4]N, b: [[float]4]M) = map(map(map(\\p -> mult(get(0, p), get(1, p))))) o transpose o map(\\r -> transpose o map(\\c -> zip(r, c)) $ b) $ a",
    "def p39(x: [float]N, y: [float]N) = map(map(\\(u, v) -> add(u, v))) o split(4) $ zip(x, y)",
    "def p40(x: [float]N, y: [float]N, z: [float]N) = map(\\(u, q) -> add(mult(u, u), get(0, q))) $ zip(map(absVal) $ x, zip(y, z))",
    "def p41(x: [float]N, y: [float]N) = map(\\(u, v) -> sq(v)) $ zip(x, map(absVal) $ y)",
    "def p42(a: [[[float]4]4]N, z: [[float]4]4) = reduceSeq(\\(acc, m) -> map(\\(r, s) -> map(\\(u, v) -> add(u, v)) $ zip(r, s)) $ zip(acc, m), z) $ a",
    "def p43(a: [[float]M]N) = map(map(absVal)) o transpose o transpose $ a",
    "def p44(x: [float]N) = map(absVal, let v = map(sq) $ x in map(sq) $ v)",
    "def p45(x: [float]N) = map(\\v -> 2.0f) $ x",
    "def p47(r: [[[float]M]N]1) = map(map(absVal)) o join o map(transpose) $ r",
    "def p46(x: [float]N, y: [float]M) = map(\\a -> let v = map(sq) $ y in add(a, at(0, v))) $ x",
    // The start of `tile-mm`'s blocked accumulator: a copy dropped,
    // splits, transposes and maps of generated values.
    "def p48(x: [float]N) = map(id) o map(absVal) $ generate(8, \\i -> 3.0f)",
    "def p49(x: [float]N) = join o split(2) $ generate(8, \\i -> 3.0f)",
    "def p50(x: [float]N) = join o transpose $ generate(4, \\i -> generate(2, \\j -> 3.0f))",
    // `reduce-seq-block`'s blocking of `untile` (`block-untile-id`).
    "def p51(x: [[[[float]2]2]2]2) = map(\\r -> transpose(map(\\s -> transpose(split(2, s)), r)), transpose(split(2, join(map(\\q -> join(q), transpose(map(\\b -> split(1, map(\\t -> join(t), map(\\u -> transpose(u), transpose(b)))), x)))))))",
    // The blocks' outer products and folds of `tile-mm` (`block-outer`,
    // `split-map`, `reduce-seq-map-zip-get`).
    "def p52(c: [[[[float]2]2]2]2, xs: [float]4, ys: [float]4) = map(\\r -> transpose(map(\\s -> transpose(split(2, s)), r)), transpose(split(2, map(\\(p, x) -> map(\\(v, y) -> add(v, mult(x, y)), zip(p, ys)), zip(join(map(\\q -> join(q), transpose(map(\\b -> split(1, map(\\t -> join(t), map(\\u -> transpose(u), transpose(b)))), c)))), xs)))))",
    "def p53(x: [float]N) = map(map(absVal)) o split(4) o map(sq) $ x",
    // (A sum: the reduction rules that reorder may apply.)
    "def p54(a: [[float]4]8, b: [float]8, z: [float]4) = join o reduceSeq(\\(c, k) -> map(\\(ci, xi) -> add(ci, mult(get(1, k), xi))) $ zip(c, map(sq) $ get(0, k)), z) $ zip(a, b)",
    "def p25(a: [[[float]4]3]5, b: [[[float]4]3]5) = map(map(map(\\q -> add(at(0, at(1, at(2, get(0, q)))), mult(at(1, at(2, at(0, get(0, q)))), get(1, q)))))) o map(\\p -> map(\\r -> zip(get(0, r), get(1, r))) $ zip(get(0, p), get(1, p))) $ zip(map(map(transpose) o transpose) o slide(3, 1) o map(map(transpose) o slide(3, 1) o map(slide(3, 1))) o map(map(pad(1, 1, clamp)) o pad(1, 1, clamp)) o pad(1, 1, clamp) $ a, b)",
];

/// Parameter values tried for each rule.
fn param_sets(rule: &str) -> Vec<Args> {
    let one = |k: &str, vs: &[i64]| vs.iter().map(|v| args(&[(k, *v)])).collect::<Vec<_>>();
    match rule {
        "iterate-decompose" => one("m", &[1, 2]),
        "split-join" => one("n", &[2, 4]),
        "partred-split" => {
            let n = ArithExpr::size("N");
            let mut v = one("n", &[2, 4]);
            v.push([("n".to_string(), n.clone())].into());
            v.push([("n".to_string(), ArithExpr::div(n, ArithExpr::Cst(2)))].into());
            v
        }
        "reduce-partred" => one("m", &[1, 2, 4]),
        "reduce-lanes" => one("m", &[2, 4]),
        "reduce-pad" | "reduce-pad-mask" => one("p", &[0, 3]),
        "reorder-stride" | "map-stride" => one("s", &[2, 4]),
        "partred-iterate" => {
            vec![args(&[("n", 1), ("k", 2)]), args(&[("n", 2), ("k", 2)]), args(&[("n", 3), ("k", 2)])]
        }
        "slide-tile" | "overlapped-tiling" | "overlapped-tiling-2d" => {
            vec![args(&[("u", 5), ("v", 3)]), args(&[("u", 4), ("v", 2)]), args(&[("u", 6), ("v", 4)])]
        }
        "overlapped-tiling-2d-rect" => [(4, 2, 4, 2), (4, 2, 6, 4), (6, 4, 4, 2), (10, 8, 3, 1)]
            .iter()
            .map(|&(uy, vy, ux, vx)| args(&[("uy", uy), ("vy", vy), ("ux", ux), ("vx", vx)]))
            .collect(),
        "map-glb" | "map-wrg" | "map-lcl" => one("d", &[0, 1]),
        "vectorize" | "vectorize-reduce" => one("n", &[2, 4]),
        "tile-2d" => vec![args(&[("n", 2), ("m", 2)]), args(&[("n", 4), ("m", 2)])],
        "register-blocking" => one("n", &[2, 4]),
        "reduce-seq-split" => one("n", &[2, 4]),
        "reduce-seq-block" => {
            vec![args(&[("rm", 2), ("rn", 2)]), args(&[("rm", 1), ("rn", 2)]), args(&[("rm", 4), ("rn", 1)])]
        }
        "tile-mm" => {
            [[2, 2, 2, 1, 1, 1, 1], [4, 2, 4, 2, 2, 2, 2], [2, 4, 8, 2, 2, 1, 2], [4, 4, 2, 4, 4, 4, 1]]
                .iter()
                .map(|v| {
                    let names = ["mt", "nt", "kc", "rm", "rn", "wx", "wy"];
                    args(&names.iter().zip(v).map(|(k, x)| (*k, *x)).collect::<Vec<_>>())
                })
                .collect()
        }
        _ => vec![Args::new()],
    }
}

fn random_value(ty: &Type, sizes: &BTreeMap<String, i64>, seed: &mut u64) -> Value {
    match ty {
        Type::Array(e, n) => {
            let n = n.eval_with(&|k| sizes.get(k).copied()).unwrap();
            Value::Array((0..n).map(|_| random_value(e, sizes, seed)).collect())
        }
        Type::Vector(_, w) => {
            Value::Vector((0..*w).map(|_| random_value(&Type::FLOAT, sizes, seed)).collect())
        }
        _ => {
            *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            Value::Float(((*seed >> 33) % 17) as f32 - 8.0)
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4, ..ProptestConfig::default() })]
    #[test]
    fn every_rule_keeps_the_value(seed in any::<u64>()) {
        let mut used = BTreeSet::new();
        let mut seed = seed;
        // Sizes with many divisors, and one (24) that is not a power of two.
        for (n, m) in [(8i64, 4i64), (16, 12), (24, 8)] {
        let sizes: BTreeMap<String, i64> = [("N".to_string(), n), ("M".to_string(), m)].into();
        for src in CORPUS {
            let p = parse(src);
            let def = p.defs.last().unwrap().name.clone();
            let p = rewrite::prepare(&p, &def).unwrap();
            let d = p.def(&def).unwrap();
            let mut inputs = BTreeMap::new();
            for param in &d.params {
                inputs.insert(param.name.clone(), random_value(param.ty.as_ref().unwrap(), &sizes, &mut seed));
            }
            let want = eval_def(&p, &def, &inputs, &sizes).unwrap();
            for c in rewrite::applicable(&p, &def).unwrap() {
                for a in param_sets(c.rule.name) {
                    let Ok(out) = rewrite::apply(&p, &def, c.rule, &c.path, &a) else { continue };
                    // Constraints the rule could not prove must hold for these sizes.
                    let holds = out.constraints.iter().all(|k| k.expr.eval_with(&|v| sizes.get(v).copied()) == Ok(0));
                    if !holds {
                        continue;
                    }
                    let got = eval_def(&out.program, &def, &inputs, &sizes)
                        .unwrap_or_else(|e| panic!("{} @ {} {a:?} on {src}: {e}", c.rule.name, c.path));
                    prop_assert_eq!(&got, &want, "{} @ {} {:?} on {}", c.rule.name, c.path, a, src);
                    // The printed program parses again.
                    let printed = lift::parse::print_program(&rewrite::release(&out.program, &def));
                    lift::parse::parse_program(&SourceFile::new("re.lift", printed.clone()))
                        .unwrap_or_else(|e| panic!("{printed}\n{e:?}"));
                    used.insert(c.rule.name);
                }
            }
        }
        }
        let all: BTreeSet<&str> = rewrite::all_rules().iter().map(|r| r.name).collect();
        let missing: Vec<_> = all.difference(&used).collect();
        prop_assert!(missing.is_empty(), "rules never exercised: {:?}", missing);
    }
}

/// A cartesian product in the other order (`b`'s map outside, the result
/// transposed back), and a join of joins as a join of joined rows.
#[test]
fn layout_rules() {
    check_rule(
        "def f(x: [[[float]2]3]N) = join o join $ x",
        "join-join",
        "root",
        &[],
        "join(join(x))",
        "join(map(\\_p2 -> join(_p2), x))",
    );
    check_rule(
        "def f(a: [float]N, b: [float]M) = map(\\x -> map(\\y -> add(x, mult(y, y))) $ b) $ a",
        "map-swap",
        "root",
        &[],
        "map(\\x -> map(\\y -> add(x, mult(y, y)), b), a)",
        "transpose(map(\\y -> map(\\x -> add(x, mult(y, y)), a), b))",
    );
    // A one-row array transposed and joined, or with its rows joined.
    check_rule(
        "def f(r: [[float]N]1) = join o transpose $ r",
        "transpose-one-row",
        "root",
        &[],
        "join(transpose(r))",
        "join(r)",
    );
    check_rule(
        "def f(r: [[[float]M]N]1) = map(join) o transpose $ r",
        "transpose-one-row",
        "root",
        &[],
        "map(\\_p2 -> join(_p2), transpose(r))",
        "join(r)",
    );
    let e = apply_err("def f(r: [[float]N]2) = join o transpose $ r", "transpose-one-row", "root", &[]);
    assert!(e.to_string().starts_with("`transpose-one-row` does not match here"), "{e}");
    // The inner map's array is the outer map's element (`map-interchange`'s case).
    let e = apply_err(MAP2, "map-swap", "root", &[]);
    assert!(e.to_string().starts_with("`map-swap` does not match here"), "{e}");
}

/// Folds whose operators are not associative (`acc / 2 + x`) and whose
/// initial values are not neutral (one per row in q0): the rules that keep
/// the order of every fold (`src/rewrite/fold.rs`) keep the value bit for
/// bit here too, also applied one after the other. (The other reduction
/// rules assume what `reduce` promises and are not tried here.)
const FOLDS: &[&str] = &[
    "def q0(a: [float]8, b: [[float]8]4, c: [float]4) = map(\\bc -> reduceSeq(\\(acc, p) -> add(mult(acc, 0.5f), mult(get(0, p), get(1, p))), get(1, bc)) $ zip(a, get(0, bc))) $ zip(b, c)",
    "def q1(a: [[float]4]8, z: [float]4) = reduceSeq(\\(acc, r) -> map(\\(x, y) -> add(mult(x, 0.5f), y)) $ zip(acc, r), z) $ a",
    "def q3(a: [[[float]4]4]6, z: [[float]4]4) = reduceSeq(\\(acc, m) -> map(\\(r, s) -> map(\\(u, v) -> add(mult(u, 0.5f), v)) $ zip(r, s)) $ zip(acc, m), z) $ a",
    "def q2(a: [[float]8]4, b: [[float]8]6) = map(\\r -> join o map(\\c -> reduceSeq(\\(acc, p) -> add(mult(acc, 0.5f), mult(get(0, p), get(1, p))), 1.0f) $ zip(r, c)) $ b) $ a",
];

const FOLD_RULES: [&str; 4] =
    ["map-reduce-interchange", "reduce-seq-split", "reduce-seq-map-zip", "reduce-seq-block"];

/// Every program one fold rule makes of `p`, with the rule's name.
fn fold_steps(p: &Program, def: &str) -> Vec<(&'static str, Program)> {
    let mut out = Vec::new();
    for c in rewrite::applicable(p, def).unwrap() {
        if !FOLD_RULES.contains(&c.rule.name) {
            continue;
        }
        for a in param_sets(c.rule.name) {
            if let Ok(step) = rewrite::apply(p, def, c.rule, &c.path, &a) {
                assert!(step.constraints.is_empty(), "{} @ {}: constant sizes", c.rule.name, c.path);
                out.push((c.rule.name, step.program));
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4, ..ProptestConfig::default() })]
    #[test]
    fn fold_rules_keep_the_order(seed in any::<u64>()) {
        let mut seed = seed;
        let mut used = BTreeSet::new();
        let sizes = BTreeMap::new();
        for src in FOLDS {
            let p = parse(src);
            let def = p.defs.last().unwrap().name.clone();
            let p = rewrite::prepare(&p, &def).unwrap();
            let d = p.def(&def).unwrap();
            let inputs = random_inputs(d, &sizes, &mut seed);
            let want = eval_def(&p, &def, &inputs, &sizes).unwrap();
            for (first, once) in fold_steps(&p, &def) {
                let got = eval_def(&once, &def, &inputs, &sizes).unwrap();
                prop_assert_eq!(&got, &want, "{} on {}", first, src);
                used.insert(first);
                for (second, twice) in fold_steps(&once, &def) {
                    let got = eval_def(&twice, &def, &inputs, &sizes).unwrap();
                    prop_assert_eq!(&got, &want, "{} then {} on {}", first, second, src);
                }
            }
        }
        prop_assert_eq!(used.len(), FOLD_RULES.len());
    }
}

/// An 8 x 8 x 8 product whose operator is not associative (`acc / 2 + x * y`).
const MM_8: &str = "def mm(a: [[float]8]8, b: [[float]8]8) = map(\\aRow -> join o map(\\bCol -> reduce(\\(acc, v) -> add(mult(acc, 0.5f), v), 1.0f) o map(\\(x, y) -> mult(x, y)) $ zip(aRow, bCol)) $ b) $ a";

/// Steps 1 to 3 of "tile-mm as small steps" on [`MM_8`]: the fold, tiles of
/// 4 x 4, the fold outside a tile's results. Positions inside a tile:
/// below 1.0.0.0.1.1.0.0.0 (join, map over X's groups, map(join) o
/// transpose, map over Y's groups).
const MM_STEPS_1_3: &str = "map-seq @ 0.0.0.1.0.0.0.2
        reduce-seq @ 0.0.0.1.0.0.0
        reduce-map-fusion @ 0.0.0.1.0.0.0
        split-join @ root n=4
        split-join @ 1.0.0.0.0.0.0.1 n=4
        join-join @ 1.0.0.0.0.0.0
        map-fusion @ 1.0.0.0.0.0.0.1
        map-fission @ 1.0.0.0
        map-swap @ 1.0.0.0.1
        map-reduce-interchange @ 1.0.0.0.1.1.0.0.0.0.0.0.1
        map-fission @ 1.0.0.0.1.1.0.0.0
        map-fission @ 1.0.0.0.1.1.0.0.0.1
        map-reduce-interchange @ 1.0.0.0.1.1.0.0.0.1.1";

/// Steps 1 to 4 of "tile-mm as small steps" (docs/REWRITE.md) on an
/// 8 x 8 x 8 product: the dot product fused into a fold; tiles of 4 x 4
/// results (`split-join` twice, `join-join`, `map-fusion`, `map-fission`,
/// `map-swap`: `tile-mm`'s outer part); in each tile the fold moved
/// outside both maps (`map-fission` takes the `join` and the `transpose`
/// off the outer map in between) and cut into chunks of 2, the transposes
/// of its one-row result dropped (`map-fusion`, `transpose-one-row`
/// twice). The result has `tile-mm`'s tiles and `join` of its chunk loop,
/// with the whole tile as the loop's accumulator, still
/// folding every result from `z` over `k` in order: with an operator that
/// is not associative (`acc / 2 + x * y`) every step from the fold on
/// gives the fold's value bit for bit, and so does `tile-mm`.
#[test]
fn tile_mm_small_steps_so_far() {
    let steps = format!(
        "{MM_STEPS_1_3}
        reduce-seq-split @ 1.0.0.0.1.1.0.0.0.1.1.1 n=2
        map-fusion @ 1.0.0.0.1.1.0.0.0
        transpose-one-row @ 1.0.0.0.1.1.0.0.0.0.0.0
        transpose-one-row @ 1.0.0.0.1.1.0.0.0"
    );
    let p = rewrite::prepare(&parse(MM_8), "mm").unwrap();
    let d = rewrite::parse_derivation(&steps).unwrap();
    let all = rewrite::replay(&p, "mm", &d).unwrap();
    let done = &all[all.len() - 1].program;
    assert_eq!(
        body(done, "mm"),
        "join(map(\\_p17 -> map(\\_p26 -> join(_p26), transpose(map(\\_p27 -> join(reduceSeq(\\(_p54, _p55) -> join(reduceSeq(\\(_p56, _p57) -> map(\\(_p58, _p59) -> map(\\(_p60, _p61) -> add(mult(_p60, 0.5f), mult(get(0, _p61), get(1, _p61))), zip(_p58, _p59)), zip(_p56, _p57)), _p54, _p55)), map(\\aRow -> map(\\bCol -> 1.0f, _p27), _p17), split(2, transpose(map(\\aRow -> transpose(map(\\bCol -> zip(aRow, bCol), _p27)), _p17))))), split(4, b)))), split(4, a)))"
    );
    let tile_mm = tile_mm_4422(&p);
    // The high-level `reduce` may add pairwise (the interpreter does):
    // the order is fixed from the fused fold on.
    let (want, first) = same_value_from_the_fold(&p, &all, &tile_mm);
    assert_ne!(first, want, "the operator is not associative");
}

/// `tile-mm` on `p`'s `mm` with 4 x 4 tiles, chunks of 2, 2 x 2 blocks.
fn tile_mm_4422(p: &Program) -> Program {
    let tiled =
        ["mt", "nt", "kc", "rm", "rn", "wx", "wy"].into_iter().zip([4, 4, 2, 2, 2, 1, 1]).collect::<Vec<_>>();
    let r = rewrite::find_rule("tile-mm").unwrap();
    rewrite::apply(p, "mm", r, &Path::root(), &args(&tiled)).unwrap().program
}

/// Checks that every step from the fold on (step 3, `all[2]`) and
/// `tile_mm` give the fold's value on random 8 x 8 inputs, bit for bit;
/// returns that value and the value of `p` itself.
fn same_value_from_the_fold(p: &Program, all: &[rewrite::Replayed], tile_mm: &Program) -> (Value, Value) {
    let sizes = BTreeMap::new();
    let mut seed = 7;
    let grid =
        Type::Array(Box::new(Type::Array(Box::new(Type::FLOAT), ArithExpr::Cst(8))), ArithExpr::Cst(8));
    let inputs: BTreeMap<_, _> =
        ["a", "b"].map(|n| (n.to_string(), random_value(&grid, &sizes, &mut seed))).into();
    let want = eval_def(&all[2].program, "mm", &inputs, &sizes).unwrap();
    for (i, step) in all.iter().enumerate().skip(2) {
        assert_eq!(eval_def(&step.program, "mm", &inputs, &sizes).unwrap(), want, "after step {}", i + 1);
    }
    assert_eq!(eval_def(tile_mm, "mm", &inputs, &sizes).unwrap(), want);
    (want, eval_def(p, "mm", &inputs, &sizes).unwrap())
}

/// The canonical text of `mm` (up to ids and parameter names).
fn canon_mm(p: &Program) -> String {
    lift::ir::equiv::canonical_def(p, p.def("mm").unwrap())
}

/// The canonical text of the function of the last reduction in pre-order
/// (in a derived `tile-mm`, the fold over a chunk's steps).
fn last_fold(p: &Program, def: &str) -> String {
    let d = p.def(def).unwrap();
    let mut last = None;
    for (_, e) in lift::ir::visit::expr_positions(&d.body) {
        if let ExprKind::Call(f, _) = &e.kind {
            if let FunKind::Pattern(Pattern::Reduce { f, .. }) = &f.kind {
                last = Some(lift::ir::equiv::canonical_fun(p, f));
            }
        }
    }
    last.unwrap()
}

/// The canonical text of the def's body with its first reduction in
/// pre-order (in a derived `tile-mm`, the loop over chunks) replaced by
/// the reduction's input: all but the loop's step and initial value.
fn without_first_fold(p: &Program, def: &str) -> String {
    let d = p.def(def).unwrap();
    let (path, input) = lift::ir::visit::expr_positions(&d.body)
        .into_iter()
        .find_map(|(path, e)| match &e.kind {
            ExprKind::Call(f, args) => match &f.kind {
                FunKind::Pattern(Pattern::Reduce { .. }) => Some((path, args[1].clone())),
                FunKind::Pattern(_) | FunKind::Lambda(_) | FunKind::UserFun(_) => None,
            },
            ExprKind::Literal(_) | ExprKind::Param(_) => None,
        })
        .unwrap();
    let body = lift::ir::visit::replace_at(&d.body, &path, input).unwrap();
    lift::ir::equiv::canonical_expr(p, &body)
}

/// Steps 5, 4, 7 and part of 6 after [`MM_STEPS_1_3`] (see
/// [`tile_mm_small_steps_further`]).
const MM_STEPS_FURTHER: &str = "        outer-zip @ 1.0.0.0.1.1.0.0.0.1.1.1.2
        map-seq @ 1.0.0.0.1.1.0.0.0.1.1.1.2
        reduce-map-fusion @ 1.0.0.0.1.1.0.0.0.1.1.1
        let-float @ 1.0.0.0.1.1.0.0.0.1.1.1.0.0.0.1
        let-float @ 1.0.0.0.1.1.0.0.0.1.1.1.0.0.0
        zip-map-fusion @ 1.0.0.0.1.1.0.0.0.1.1.1.0.0.0.0.0
        zip-flatten @ 1.0.0.0.1.1.0.0.0.1.1.1.0.0.0.0.0.0.0.0
        zip-map-fusion @ 1.0.0.0.1.1.0.0.0.1.1.1.0.0.0.0.0.0.0.0
        zip-unused @ 1.0.0.0.1.1.0.0.0.1.1.1.0.0.0.0.0.0.0.0
        reduce-seq-split @ 1.0.0.0.1.1.0.0.0.1.1.1 n=2
        split-zip @ 1.0.0.0.1.1.0.0.0.1.1.1.2
        map-seq @ 1.0.0.0.1.1.0.0.0.1.1.1.2
        reduce-map-fusion @ 1.0.0.0.1.1.0.0.0.1.1.1
        map-fusion @ 1.0.0.0.1.1.0.0.0
        transpose-one-row @ 1.0.0.0.1.1.0.0.0.0.0.0
        transpose-one-row @ 1.0.0.0.1.1.0.0.0
        map-const-generate @ 1.0.0.0.1.1.0.0.0.1.1.0.0.0
        map-const-generate @ 1.0.0.0.1.1.0.0.0.1.1
        map-fission @ 1.0.0.0.1.1
        map-fission @ 1.0.0.0.1.1.1
        map-fission @ 1.0.0.0.1.1.1.1
        map-fusion @ 1.0.0.0.1.1.1
        map-fusion @ 1.0.0.0.1.1
        let-bind @ 1.0.0.0.1.1.0.0.0.1.2.1
        let-float @ 1.0.0.0.1.1.0.0.0.1.2
        let-float @ 1.0.0.0.1.1.0.0.0.1
        let-float @ 1.0.0.0.1.1.0.0.0
        let-hoist @ 1.0.0.0.1.1
        let-float @ 1.0.0.0.1
        let-float @ 1.0.0.0
        map-fission @ 1
        let-inline @ 1.0.0.0
        let-bind @ 1.0.0.0.1.1.0.0.0.1.0.0.0.1.2.1
        let-float @ 1.0.0.0.1.1.0.0.0.1.0.0.0.1.2
        let-float @ 1.0.0.0.1.1.0.0.0.1.0.0.0.1
        let-float @ 1.0.0.0.1.1.0.0.0.1.0.0.0
        let-bind @ 1.0.0.0.1.1.0.0.0.1.0.0.0.0.0.1.2.2
        let-float @ 1.0.0.0.1.1.0.0.0.1.0.0.0.0.0.1.2
        let-float @ 1.0.0.0.1.1.0.0.0.1.0.0.0.0.0.1
        let-float @ 1.0.0.0.1.1.0.0.0.1.0.0.0.0.0
        map-id @ 1.0.0.0.1.1.0.0.0.1.0.0.0.0.0.0.0.1.0.0.0.1.2
        let-bind @ 1.0.0.0.1.1.0.0.0.1.0.0.0.0.0.0.0.1.0.0.0.1.2
        let-float @ 1.0.0.0.1.1.0.0.0.1.0.0.0.0.0.0.0.1.0.0.0.1
        let-float @ 1.0.0.0.1.1.0.0.0.1.0.0.0.0.0.0.0.1.0.0.0
        reduce-seq-block @ 1.0.0.0.1.1.0.0.0.1 rm=2 rn=2
        join-map-one-row @ 1.0.0.0.1.1.0.0.0
        let-float @ 1.0.0.0.1.1.0.0.0.1.1.1.1.1.0.0.0.1.1
        let-float @ 1.0.0.0.1.1.0.0.0.1.1.1.1.1.0.0.0.1
        let-float @ 1.0.0.0.1.1.0.0.0.1.1.1.1.1.0.0.0
        let-float @ 1.0.0.0.1.1.0.0.0.1.1.1.1.1.0.0.0.0.0.1.1
        let-float @ 1.0.0.0.1.1.0.0.0.1.1.1.1.1.0.0.0.0.0.1
        let-float @ 1.0.0.0.1.1.0.0.0.1.1.1.1.1.0.0.0.0.0
        map-id-nd-call @ 1.0.0.0.1.1.0.0.0.1.1.1.1";

/// The rest of step 6 after [`MM_STEPS_FURTHER`]: the accumulator's
/// start generated in blocks (the copies dropped by `map-id-elim`, the
/// blocking of generated values generated by `split-generate`,
/// `transpose-generate`, `map-generate`, the copy `map_4(id)` by
/// `map-id-nd-call`); the fold over a chunk's steps blocked too
/// (`reduce-seq-block`, `join-map-one-row`), the blocking of its unblocked
/// result and start cancelled (`block-untile-id`, twice); the copy of a
/// step's values of `X` inlined (`let-inline`), the blocking of the
/// step's outer product the blocks' outer products (`block-outer`), the
/// copy moved into the strips (`split-map`, `transpose-map`) and fused
/// into the map over them (`zip-map-fusion`); the fold one fold per block
/// (`reduce-seq-map-zip-get`, for `X`'s strips, then `Y`'s) and the copy
/// bound by `let` at the step's top (`let-bind`, `let-float` twice).
const MM_STEPS_BLOCKS: &str = "map-id-elim @ 1.0.0.0.1.1.0.0.0.1.1.1.1.1.1.1.1.1.1.1.0.0.0
        map-id-elim @ 1.0.0.0.1.1.0.0.0.1.1.1.1.1.1.1.1.1.1
        split-generate @ 1.0.0.0.1.1.0.0.0.1.1.1.1.1.1.1.1.1
        transpose-generate @ 1.0.0.0.1.1.0.0.0.1.1.1.1.1.1.1.1
        map-generate @ 1.0.0.0.1.1.0.0.0.1.1.1.1.1.1.1
        map-generate @ 1.0.0.0.1.1.0.0.0.1.1.1.1.1.1.1.0.0.0.1
        split-generate @ 1.0.0.0.1.1.0.0.0.1.1.1.1.1.1.1.0.0.0.1.0.0.0.1
        transpose-generate @ 1.0.0.0.1.1.0.0.0.1.1.1.1.1.1.1.0.0.0.1.0.0.0
        transpose-generate @ 1.0.0.0.1.1.0.0.0.1.1.1.1.1.1.1.0.0.0
        map-id-nd-call @ 1.0.0.0.1.1.0.0.0.1.1.1.1.1.1.1
        reduce-seq-block @ 1.0.0.0.1.1.0.0.0.1.1.1.1.1.1.0.0.0.0.0.0.0.1.1.1.1 rm=2 rn=2
        join-map-one-row @ 1.0.0.0.1.1.0.0.0.1.1.1.1.1.1.0.0.0.0.0.0.0.1.1.1
        block-untile-id @ 1.0.0.0.1.1.0.0.0.1.1.1.1.1.1.0.0.0.0.0.0.0
        block-untile-id @ 1.0.0.0.1.1.0.0.0.1.1.1.1.1.1.0.0.0.0.0.0.0.1.1
        let-inline @ 1.0.0.0.1.1.0.0.0.1.1.1.1.1.1.0.0.0.0.0.0.0.1.0.0.0.1.1.1
        block-outer @ 1.0.0.0.1.1.0.0.0.1.1.1.1.1.1.0.0.0.0.0.0.0.1.0.0.0
        split-map @ 1.0.0.0.1.1.0.0.0.1.1.1.1.1.1.0.0.0.0.0.0.0.1.0.0.0.1.2.1
        transpose-map @ 1.0.0.0.1.1.0.0.0.1.1.1.1.1.1.0.0.0.0.0.0.0.1.0.0.0.1.2
        zip-map-fusion @ 1.0.0.0.1.1.0.0.0.1.1.1.1.1.1.0.0.0.0.0.0.0.1.0.0.0
        reduce-seq-map-zip-get @ 1.0.0.0.1.1.0.0.0.1.1.1.1.1.1.0.0.0.0.0.0.0
        reduce-seq-map-zip-get @ 1.0.0.0.1.1.0.0.0.1.1.1.1.1.1.0.0.0.0.0.0.0.0.0.0
        let-bind @ 1.0.0.0.1.1.0.0.0.1.1.1.1.1.1.0.0.0.0.0.0.0.0.0.0.0.0.0.1.0.0.0.1.2
        let-float @ 1.0.0.0.1.1.0.0.0.1.1.1.1.1.1.0.0.0.0.0.0.0.0.0.0.0.0.0.1.0.0.0.1
        let-float @ 1.0.0.0.1.1.0.0.0.1.1.1.1.1.1.0.0.0.0.0.0.0.0.0.0.0.0.0.1.0.0.0";

/// Steps 5, 4, 7 and part of 6 of "tile-mm as small steps" after steps 1
/// to 3 on the same product (fifty-three more steps): the pairs of the
/// fold's operands moved into lambda parameters (`outer-zip`, the map of
/// pairs fused into the fold, `let-float`, `zip-map-fusion`,
/// `zip-flatten`, `zip-map-fusion`, `zip-unused`), the fold cut into
/// chunks of 2 over `zip` of the split columns (`reduce-seq-split`,
/// `split-zip`, the map of zips fused into the fold), the transposes of
/// its one-row result dropped, the accumulator's start generated
/// (`map-const-generate` twice), both groups of rows transposed and split
/// outside the map over a tile's results (`map-fission` and `map-fusion`
/// for `Y`'s; for `X`'s bound by `let-bind`, moved out by `let-float` and
/// `let-hoist`, mapped over by `map-fission`, inlined by `let-inline`),
/// the chunk tiles and a step's values of `X` bound by `let` (`map-id`
/// makes the copy of the latter), and the chunk loop's accumulator in
/// `tile-mm`'s register blocks of 2 x 2 (`reduce-seq-block`,
/// `join-map-one-row` for `untile` of the joined loop, `let-float` (six)
/// for the `let`s around the blocking `V` of a step, `map-id-nd-call` for
/// the copy `map_4(id)`): after these sixty-six steps the result is
/// `tile-mm`'s right-hand side (`mt = nt = 4`, `kc = 2`, `rm = rn = 2`,
/// `wx = wy = 1`, compared with `ir::equiv`) outside the chunk loop's step
/// and start, the step `V` of the fold of the whole tile from `U` of the
/// blocks and the start `V` of the generated tile. Then the rest of step
/// 6 ([`MM_STEPS_BLOCKS`], twenty-four steps) generates the start in
/// blocks and makes the step a map over the blocks, each folding its
/// strips: the result of all ninety steps is `tile-mm`'s right-hand side
/// (equal canonical defs). Every step from the fold on gives the fold's
/// value bit for bit.
#[test]
fn tile_mm_small_steps_further() {
    let steps = format!("{MM_STEPS_1_3}\n{MM_STEPS_FURTHER}\n{MM_STEPS_BLOCKS}");
    let p = rewrite::prepare(&parse(MM_8), "mm").unwrap();
    let d = rewrite::parse_derivation(&steps).unwrap();
    let all = rewrite::replay(&p, "mm", &d).unwrap();
    assert_eq!(all.len(), 90);
    // After step 66 (the end of `MM_STEPS_FURTHER`): the chunk loop's
    // accumulator blocked, its step `V` of the fold over the whole tile
    // and its start `V` of the generated tile.
    let (mid, done) = (&all[65].program, &all[all.len() - 1].program);
    assert_eq!(
        body(mid, "mm"),
        "join(map(\\_p155 -> map(\\_p26 -> join(_p26), transpose(map(\\_p139 -> join(map(\\_p188 -> join(_p188), transpose(map(\\_p189 -> split(1, map(\\_p190 -> join(_p190), map(\\_p191 -> transpose(_p191), transpose(_p189)))), map(\\_p195 -> map(\\_p194 -> map(\\_p193 -> map(\\_p192 -> id(_p192), _p193), _p194), _p195), join(reduceSeq(\\(_p160, _p161) -> (\\v156 -> (\\v157 -> map(\\_p178 -> transpose(map(\\_p179 -> transpose(split(2, _p179)), _p178)), transpose(split(2, join(reduceSeq(\\(_p170, _p171) -> (\\v159 -> map(\\(_p173, _p174) -> map(\\(_p175, _p176) -> add(mult(_p175, 0.5f), mult(_p174, _p176)), zip(_p173, get(1, _p171))), zip(_p170, v159)))(map(\\_p177 -> id(_p177), get(0, _p171))), join(map(\\_p165 -> join(_p165), transpose(map(\\_p162 -> split(1, map(\\_p164 -> join(_p164), map(\\_p163 -> transpose(_p163), transpose(_p162)))), _p160)))), zip(v156, v157)))))))(get(1, _p161)))(get(0, _p161)), map(\\_p180 -> transpose(map(\\_p181 -> transpose(split(2, _p181)), _p180)), transpose(split(2, map(\\_p149 -> id(_p149), generate(4, \\_p150 -> map(\\_p151 -> id(_p151), generate(4, \\_p152 -> 1.0f))))))), zip(_p155, _p139)))))))), map(\\_p27 -> split(2, transpose(_p27)), split(4, b))))), map(\\_p17 -> split(2, transpose(_p17)), split(4, a))))"
    );
    let tile_mm = tile_mm_4422(&p);
    // Then all but the chunk loop's step and start were `tile-mm`'s, and
    // so was the function of the fold over a chunk's steps.
    assert_eq!(without_first_fold(mid, "mm"), without_first_fold(&tile_mm, "mm"));
    assert_eq!(last_fold(mid, "mm"), last_fold(&tile_mm, "mm"));
    assert_ne!(canon_mm(mid), canon_mm(&tile_mm));
    // After all ninety steps: `tile-mm`'s right-hand side.
    assert_eq!(canon_mm(done), canon_mm(&tile_mm));
    same_value_from_the_fold(&p, &all, &tile_mm);
}

/// Checks `rule` as [`check_rule`] does, and that the interpreter gives the
/// def the same value before and after (random inputs, `N = 8`, `M = 4`).
fn check_rule_value(src: &str, rule: &str, path: &str, a: &[(&str, i64)], before: &str, after: &str) {
    let out = check_rule(src, rule, path, a, before, after);
    let p = parse(src);
    let def = p.defs.last().unwrap().name.clone();
    let sizes: BTreeMap<String, i64> = [("N".to_string(), 8), ("M".to_string(), 4)].into();
    let mut seed = 11;
    let d = p.def(&def).unwrap();
    let inputs = random_inputs(d, &sizes, &mut seed);
    let want = eval_def(&p, &def, &inputs, &sizes).unwrap();
    assert_eq!(eval_def(&out, &def, &inputs, &sizes).unwrap(), want, "{rule} on {src}");
}

/// A random value for each parameter of `d` at `sizes`.
fn random_inputs(
    d: &lift::ir::Def,
    sizes: &BTreeMap<String, i64>,
    seed: &mut u64,
) -> BTreeMap<String, Value> {
    d.params.iter().map(|q| (q.name.clone(), random_value(q.ty.as_ref().unwrap(), sizes, seed))).collect()
}

/// The first words of the error `rule` gives at `path`.
fn fails_with(src: &str, rule: &str, path: &str, a: &[(&str, i64)], start: &str) {
    let e = apply_err(src, rule, path, a).to_string();
    assert!(e.starts_with(start), "{rule}: {e}");
}

/// The pairs of `tile-mm`'s operands moved into lambda parameters
/// (`src/rewrite/zips.rs`): the matrix of pairs of two columns as a map
/// inside a map, chunks of a zip, and a map, a zip or an unread component
/// inside the zip an element-wise map reads.
#[test]
fn zip_rules() {
    check_rule_value(
        "def f(a: [[float]4]N, b: [[float]4]M) = map(map(map(\\p -> mult(get(0, p), get(1, p))))) o transpose o map(\\r -> transpose o map(\\c -> zip(r, c)) $ b) $ a",
        "outer-zip",
        "1",
        &[],
        "map(\\_p8 -> map(\\_p7 -> map(\\p -> mult(get(0, p), get(1, p)), _p7), _p8), transpose(map(\\r -> transpose(map(\\c -> zip(r, c), b)), a)))", "map(\\_p8 -> map(\\_p7 -> map(\\p -> mult(get(0, p), get(1, p)), _p7), _p8), map(\\(_p9, _p10) -> map(\\_p11 -> zip(map(\\_p12 -> _p11, _p10), _p10), _p9), zip(transpose(a), transpose(b))))",
    );
    fails_with(
        "def f(a: [[float]4]N, b: [[float]4]M) = transpose o map(\\r -> transpose o map(\\c -> zip(c, r)) $ b) $ a",
        "outer-zip",
        "root",
        &[],
        "`outer-zip` does not match here",
    );
    check_rule_value(
        "def f(x: [float]N, y: [float]N) = map(map(\\(u, v) -> add(u, v))) o split(4) $ zip(x, y)",
        "split-zip",
        "1",
        &[],
        "map(\\_p5 -> map(\\(u, v) -> add(u, v), _p5), split(4, zip(x, y)))", "map(\\_p5 -> map(\\(u, v) -> add(u, v), _p5), map(\\(_p6, _p7) -> zip(_p6, _p7), zip(split(4, x), split(4, y))))",
    );
    fails_with(
        "def f(x: [float]N) = split(4) $ x",
        "split-zip",
        "root",
        &[],
        "`split-zip` does not match here",
    );
    // `u` read twice: bound by a `let`, `sq` is computed once.
    check_rule_value(
        "def f(x: [float]N, y: [float]N) = map(\\(u, v) -> add(u, mult(u, v))) $ zip(map(sq) $ x, y)",
        "zip-map-fusion",
        "root",
        &[],
        "map(\\(u, v) -> add(u, mult(u, v)), zip(map(sq, x), y))",
        "map(\\(_p5, v) -> (\\u -> add(u, mult(u, v)))(sq(_p5)), zip(x, y))",
    );
    check_rule_value(
        "def f(x: [float]N, y: [float]N) = map(\\(u, v) -> add(u, v)) $ zip(x, map(sq) $ y)",
        "zip-map-fusion",
        "root",
        &[],
        "map(\\(u, v) -> add(u, v), zip(x, map(sq, y)))",
        "map(\\(u, _p6) -> add(u, sq(_p6)), zip(x, y))",
    );
    let zip2 = "def f(x: [float]N, y: [float]N) = map(\\(u, v) -> add(u, v)) $ zip(x, y)";
    fails_with(zip2, "zip-map-fusion", "root", &[], "`zip-map-fusion` does not match here");
    check_rule_value(
        "def f(x: [float]N, y: [float]N, z: [float]N) = map(\\(u, q) -> add(u, mult(get(0, q), get(1, q)))) $ zip(x, zip(y, z))",
        "zip-flatten",
        "root",
        &[],
        "map(\\(u, q) -> add(u, mult(get(0, q), get(1, q))), zip(x, zip(y, z)))", "map(\\(u, _p8, _p9) -> add(u, mult(_p8, _p9)), zip(x, y, z))",
    );
    fails_with(zip2, "zip-flatten", "root", &[], "`zip-flatten` does not match here");
    check_rule_value(
        "def f(x: [float]N, y: [float]N) = map(\\(u, v) -> sq(v)) $ zip(x, y)",
        "zip-unused",
        "root",
        &[],
        "map(\\(u, v) -> sq(v), zip(x, y))",
        "map(\\v -> sq(v), y)",
    );
    fails_with(zip2, "zip-unused", "root", &[], "`zip-unused` does not match here");
}

/// The fold rules of `tile-mm`'s register blocks: a fold of an
/// element-wise step as a map of folds (one per column), and a fold whose
/// accumulator is kept in `tile-mm`'s blocks (`V`), unblocked (`U`,
/// `untile`) around each step and at the end.
#[test]
fn fold_layout_rules() {
    check_rule_value(
        "def f(a: [[float]4]8, z: [float]4) = reduceSeq(\\(acc, r) -> map(\\(x, y) -> add(mult(x, 0.5f), y)) $ zip(acc, r), z) $ a",
        "reduce-seq-map-zip",
        "root",
        &[],
        "reduceSeq(\\(acc, r) -> map(\\(x, y) -> add(mult(x, 0.5f), y), zip(acc, r)), z, a)", "transpose(map(\\(_p6, _p7) -> reduceSeq(\\(x, y) -> add(mult(x, 0.5f), y), _p6, _p7), zip(z, transpose(a))))",
    );
    fails_with(
        "def f(a: [[float]4]8, z: [float]4) = reduceSeq(\\(acc, r) -> map(\\(x, y) -> add(x, at(0, acc))) $ zip(acc, r), z) $ a",
        "reduce-seq-map-zip",
        "root",
        &[],
        "`reduce-seq-map-zip` does not match here",
    );
    let blocks = "def f(a: [[[float]4]4]N, z: [[float]4]4) = reduceSeq(\\(acc, m) -> map(\\(r, s) -> map(\\(u, v) -> add(mult(u, 0.5f), v)) $ zip(r, s)) $ zip(acc, m), z) $ a";
    check_rule_value(blocks, "reduce-seq-block", "root", &[("rm", 2), ("rn", 2)], "reduceSeq(\\(acc, m) -> map(\\(r, s) -> map(\\(u, v) -> add(mult(u, 0.5f), v), zip(r, s)), zip(acc, m)), z, a)", "map(\\_p24 -> join(map(\\_p28 -> join(_p28), transpose(map(\\_p25 -> split(1, map(\\_p27 -> join(_p27), map(\\_p26 -> transpose(_p26), transpose(_p25)))), _p24)))), reduceSeq(\\(_p8, _p9) -> map(\\_p20 -> transpose(map(\\_p21 -> transpose(split(2, _p21)), _p20)), transpose(split(2, map(\\(r, s) -> map(\\(u, v) -> add(mult(u, 0.5f), v), zip(r, s)), zip(join(map(\\_p13 -> join(_p13), transpose(map(\\_p10 -> split(1, map(\\_p12 -> join(_p12), map(\\_p11 -> transpose(_p11), transpose(_p10)))), _p8)))), _p9))))), map(\\_p22 -> transpose(map(\\_p23 -> transpose(split(2, _p23)), _p22)), transpose(split(2, z))), a))");
    let e = apply_err(blocks, "reduce-seq-block", "root", &[("rm", 3), ("rn", 2)]);
    assert_eq!(e.to_string(), "`reduce-seq-block`: side condition violated: 3 does not divide the length 4");
    let e = apply_err(DOTS, "reduce-seq-block", "0.0.0", &[("rm", 1), ("rn", 1)]);
    assert_eq!(
        e.to_string(),
        "`reduce-seq-block`: side condition violated: the accumulator must be a two-dimensional array, found float"
    );
    check_rule_value(
        "def f(a: [[float]M]N) = map(map(absVal)) o transpose o transpose $ a",
        "transpose-transpose-id",
        "1",
        &[],
        "map(\\_p2 -> map(absVal, _p2), transpose(transpose(a)))",
        "map(\\_p2 -> map(absVal, _p2), a)",
    );
    fails_with(MAP2, "transpose-transpose-id", "root", &[], "`transpose-transpose-id` does not match here");
    check_rule_value(
        "def f(a: [[float]M]N) = map(map(absVal)) $ a",
        "transpose-pair",
        "root",
        &[],
        "map(\\_p1 -> map(absVal, _p1), a)",
        "transpose(transpose(map(\\_p1 -> map(absVal, _p1), a)))",
    );
    fails_with(
        "def f(a: [float]N) = map(absVal) $ a",
        "transpose-pair",
        "root",
        &[],
        "`transpose-pair` does not match here",
    );
    check_rule_value(
        "def f(r: [[[float]4]2]1) = join o map(transpose) $ r",
        "join-map-one-row",
        "root",
        &[],
        "join(map(\\_p2 -> transpose(_p2), r))",
        "transpose(join(r))",
    );
    fails_with(
        "def f(r: [[[float]4]2]2) = join o map(transpose) $ r",
        "join-map-one-row",
        "root",
        &[],
        "`join-map-one-row` does not match here",
    );
}

/// Bindings and copies (`src/rewrite/bind.rs`): an array bound to a named
/// `let` and the `let` moved out of a call's argument, a map of a constant
/// as a copy of generated values, and an n-dimensional copy of a call.
#[test]
fn binding_rules() {
    let two = "def f(x: [float]N) = map(absVal) o map(sq) $ x";
    check_rule_value(
        two,
        "let-bind",
        "1",
        &[],
        "map(absVal, map(sq, x))",
        "map(absVal, (\\v2 -> v2)(map(sq, x)))",
    );
    fails_with(two, "let-bind", "1.1", &[], "`let-bind` does not match here");
    check_rule_value(
        "def f(x: [float]N) = map(absVal, let v = map(sq) $ x in map(sq) $ v)",
        "let-float",
        "root",
        &[],
        "map(absVal, (\\v -> map(sq, v))(map(sq, x)))",
        "(\\v -> map(absVal, map(sq, v)))(map(sq, x))",
    );
    fails_with(two, "let-float", "root", &[], "`let-float` does not match here");
    let hoist = "def f(x: [float]N, y: [float]M) = map(\\a -> let v = map(sq) $ y in add(a, at(0, v))) $ x";
    check_rule_value(
        hoist,
        "let-hoist",
        "root",
        &[],
        "map(\\a -> (\\v -> add(a, at(0, v)))(map(sq, y)), x)",
        "(\\v -> map(\\a -> add(a, at(0, v)), x))(map(sq, y))",
    );
    fails_with(
        "def f(x: [float]N) = map(\\a -> let v = mult(a, a) in add(v, v)) $ x",
        "let-hoist",
        "root",
        &[],
        "`let-hoist` does not match here",
    );
    check_rule_value(
        "def f(x: [float]N) = let v = map(sq) $ x in map(absVal) $ v",
        "let-inline",
        "root",
        &[],
        "(\\v -> map(absVal, v))(map(sq, x))",
        "map(absVal, map(sq, x))",
    );
    let e = apply_err(
        "def f(x: [float]N) = let v = map(sq) $ x in map(\\(p, q) -> add(p, q)) $ zip(v, v)",
        "let-inline",
        "root",
        &[],
    );
    assert_eq!(
        e.to_string(),
        "`let-inline`: side condition violated: `v` is read 2 times and its value is not a variable"
    );
    check_rule_value(
        "def f(x: [float]N) = map(\\v -> 2.0f) $ x",
        "map-const-generate",
        "root",
        &[],
        "map(\\v -> 2.0f, x)",
        "map(\\_p3 -> id(_p3), generate(N, \\_p2 -> 2.0f))",
    );
    fails_with(MAP, "map-const-generate", "root", &[], "`map-const-generate` does not match here");
    check_rule_value(
        "def f(a: [[float]M]N) = map(map(absVal)) o transpose $ a",
        "map-id-nd-call",
        "1",
        &[],
        "map(\\_p2 -> map(absVal, _p2), transpose(a))",
        "map(\\_p2 -> map(absVal, _p2), map(\\_p4 -> map(\\_p3 -> id(_p3), _p4), transpose(a)))",
    );
    fails_with(MAP, "map-id-nd-call", "root", &[], "`map-id-nd-call` does not match here");
}

/// Generated values (`src/rewrite/layout.rs`): a copy dropped, and a
/// split, a transpose or a map of generated values generated (the start
/// of `tile-mm`'s blocked accumulator).
#[test]
fn generate_rules() {
    check_rule_value(
        "def f(x: [float]N) = map(absVal) o map(id) $ x",
        "map-id-elim",
        "1",
        &[],
        "map(absVal, map(\\_p2 -> id(_p2), x))",
        "map(absVal, x)",
    );
    fails_with(MAP, "map-id-elim", "root", &[], "`map-id-elim` does not match here");
    check_rule_value(
        "def f(x: [float]N) = map(map(absVal)) o split(2) $ generate(8, \\i -> 3.0f)",
        "split-generate",
        "1",
        &[],
        "map(\\_p3 -> map(absVal, _p3), split(2, generate(8, \\i -> 3.0f)))",
        "map(\\_p3 -> map(absVal, _p3), generate(4, \\_p6 -> generate(2, \\_p5 -> 3.0f)))",
    );
    fails_with(
        "def f(x: [float]N) = split(2) $ x",
        "split-generate",
        "root",
        &[],
        "`split-generate` does not match here",
    );
    check_rule_value(
        "def f(x: [float]N) = map(map(absVal)) o transpose $ generate(4, \\i -> generate(2, \\j -> 3.0f))",
        "transpose-generate",
        "1",
        &[],
        "map(\\_p4 -> map(absVal, _p4), transpose(generate(4, \\i -> generate(2, \\j -> 3.0f))))",
        "map(\\_p4 -> map(absVal, _p4), generate(2, \\_p7 -> generate(4, \\_p6 -> 3.0f)))",
    );
    fails_with(
        "def f(a: [[float]M]N) = transpose $ a",
        "transpose-generate",
        "root",
        &[],
        "`transpose-generate` does not match here",
    );
    check_rule_value(
        "def f(x: [float]N) = map(\\r -> reduce(add, 0.0f) $ r) $ generate(4, \\i -> generate(2, \\j -> 3.0f))",
        "map-generate",
        "root",
        &[],
        "map(\\r -> reduce(add, 0.0f, r), generate(4, \\i -> generate(2, \\j -> 3.0f)))",
        "generate(4, \\i -> reduce(add, 0.0f, generate(2, \\j -> 3.0f)))",
    );
    fails_with(MAP, "map-generate", "root", &[], "`map-generate` does not match here");
    // `V(U(x))` for blocks of 2 x 2 in 2 x 2 blocks; with the columns
    // split by 4 it is not the identity.
    let vu = "def f(x: [[[[float]2]2]2]2) = map(\\r -> transpose(map(\\s -> transpose(split(2, s)), r)), transpose(split(2, join(map(\\q -> join(q), transpose(map(\\b -> split(1, map(\\t -> join(t), map(\\u -> transpose(u), transpose(b)))), x)))))))";
    check_rule_value(vu, "block-untile-id", "root", &[], &vu[vu.find("= ").unwrap() + 2..], "x");
    fails_with(
        &vu.replacen("split(2, s)", "split(4, s)", 1),
        "block-untile-id",
        "root",
        &[],
        "`block-untile-id` does not match here",
    );
}

/// `tile-mm`'s register blocks inside a chunk (`src/rewrite/layout.rs`,
/// `src/rewrite/fold.rs`): the blocking of an outer product updating the
/// unblocked tile is the blocks' outer products with their strips, a split
/// of a copy is the copies of the chunks, and a fold whose step maps over
/// the accumulator zipped with the strips of one component of its input
/// is a fold per strip.
#[test]
fn block_rules() {
    let outer = "def f(c: [[[[float]2]2]2]2, xs: [float]4, ys: [float]4) = map(\\r -> transpose(map(\\s -> transpose(split(2, s)), r)), transpose(split(2, map(\\(p, x) -> map(\\(v, y) -> add(v, mult(x, y)), zip(p, ys)), zip(join(map(\\q -> join(q), transpose(map(\\b -> split(1, map(\\t -> join(t), map(\\u -> transpose(u), transpose(b)))), c)))), xs)))))";
    check_rule_value(
        outer,
        "block-outer",
        "root",
        &[],
        &outer[outer.find("= ").unwrap() + 2..],
        "map(\\(_p13, _p14) -> map(\\(_p15, _p16) -> map(\\(p, x) -> map(\\(v, y) -> add(v, mult(x, y)), zip(p, _p16)), zip(_p15, _p14)), zip(_p13, transpose(split(2, ys)))), zip(c, transpose(split(2, xs))))",
    );
    fails_with(
        &outer.replace("zip(p, ys)", "zip(p, p)"),
        "block-outer",
        "root",
        &[],
        "`block-outer` does not match here",
    );
    check_rule_value(
        "def f(x: [float]N) = map(map(absVal)) o split(4) o map(sq) $ x",
        "split-map",
        "1",
        &[],
        "map(\\_p2 -> map(absVal, _p2), split(4, map(sq, x)))",
        "map(\\_p2 -> map(absVal, _p2), map(\\_p4 -> map(sq, _p4), split(4, x)))",
    );
    fails_with(
        "def f(x: [float]N) = split(4) $ x",
        "split-map",
        "root",
        &[],
        "`split-map` does not match here",
    );
    let get = "def f(a: [[float]4]8, b: [float]8, z: [float]4) = join o reduceSeq(\\(c, k) -> map(\\(ci, xi) -> add(mult(ci, get(1, k)), xi)) $ zip(c, map(sq) $ get(0, k)), z) $ zip(a, b)";
    check_rule_value(
        get,
        "reduce-seq-map-zip-get",
        "root",
        &[],
        "join(reduceSeq(\\(c, k) -> map(\\(ci, xi) -> add(mult(ci, get(1, k)), xi), zip(c, map(sq, get(0, k)))), z, zip(a, b)))",
        "map(\\(_p13, _p14) -> at(0, reduceSeq(\\(ci, k) -> add(mult(ci, get(1, k)), get(0, k)), _p13, zip(_p14, b))), zip(z, transpose(map(\\_p10 -> map(sq, _p10), a))))",
    );
    fails_with(
        &get.replace("mult(ci, get(1, k))", "mult(ci, at(0, get(0, k)))"),
        "reduce-seq-map-zip-get",
        "root",
        &[],
        "`reduce-seq-map-zip-get` does not match here",
    );
}

/// A work-group's row read more than once is copied to local memory first;
/// read once, the copy would only add a pass.
#[test]
fn row_to_local() {
    check_rule_value(
        "def f(a: [[float]M]N) = mapWrg(0, \\r -> map(\\x -> add(x, at(0, reduceSeq(add, 0.0f) $ r))) $ r) $ a",
        "row-to-local",
        "root",
        &[],
        "mapWrg(0, \\r -> map(\\x -> add(x, at(0, reduceSeq(add, 0.0f, r))), r), a)",
        "mapWrg(0, \\r -> (\\rLoc3 -> map(\\x -> add(x, at(0, reduceSeq(add, 0.0f, rLoc3))), rLoc3))(toLocal(mapLcl(0, \\_p4 -> id(_p4)), r)), a)",
    );
    let e = apply_err(
        "def f(a: [[float]M]N) = mapWrg(0, \\r -> map(absVal) $ r) $ a",
        "row-to-local",
        "root",
        &[],
    );
    assert_eq!(
        e.to_string(),
        "`row-to-local`: side condition violated: `r` is read 1 time(s): a copy would only add a pass"
    );
}
