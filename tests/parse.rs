//! The parser on the reference examples: expected structure, and printing
//! that re-parses to the same print.

use lift::ir::{ExprKind, FunKind, MapKind, Pattern, Program, SourceFile};
use lift::parse::{parse_program, print_program};

fn parse(name: &str, text: &str) -> Program {
    let src = SourceFile::new(name, text);
    match parse_program(&src) {
        Ok(p) => p,
        Err(e) => panic!("{}", e.render(&src)),
    }
}

fn parse_file(path: &str) -> Program {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    parse(path, &text)
}

/// The body of the single def, printed.
fn body(p: &Program) -> String {
    let printed = print_program(p);
    printed.lines().last().unwrap_or("").trim().to_string()
}

fn roundtrip(p: &Program) {
    let printed = print_program(p);
    let again = parse("printed", &printed);
    assert_eq!(print_program(&again), printed);
}

#[test]
fn dot_product_structure() {
    let p = parse_file("examples/dot.lift");
    assert_eq!(p.user_funs.len(), 2);
    assert_eq!(p.user_funs[1].name, "multAndSumUp");
    assert_eq!(p.user_funs[1].body_text, " return acc + x * y; ");
    assert_eq!(p.defs.len(), 1);
    assert_eq!(
        body(&p),
        "(\\_p10 -> join(mapWrg(0, \\_p9 -> join(toGlobal(mapLcl(0, mapSeq(id)), split(1, iterate(6, \
         \\_p4 -> join(mapLcl(0, \\_p3 -> toLocal(mapSeq(id), (\\_p2 -> reduceSeq(add, 0.0f, _p2))(_p3)), \
         split(2, _p4))), join(mapLcl(0, \\_p8 -> toLocal(mapSeq(id), (\\_p7 -> reduceSeq(\\(acc, xy) -> \
         multAndSumUp(acc, get(0, xy), get(1, xy)), 0.0f, _p7))(_p8)), split(2, _p9))))))), \
         split(128, _p10))))(zip(x, y))"
    );
    // The def body is the composition's lambda applied to `zip(x, y)`.
    let ExprKind::Call(f, args) = &p.defs[0].body.kind else { panic!("not a call") };
    assert!(matches!(f.kind, FunKind::Lambda(_)));
    let ExprKind::Call(z, zargs) = &args[0].kind else { panic!("not a call") };
    assert!(matches!(z.kind, FunKind::Pattern(Pattern::Zip(2))));
    assert_eq!(zargs.len(), 2);
    roundtrip(&p);
}

#[test]
fn transpose_structure() {
    let p = parse_file("examples/transpose.lift");
    assert_eq!(p.defs[0].name, "transpose");
    assert_eq!(p.defs[0].params[0].ty.as_ref().map(|t| t.to_string()).as_deref(), Some("[[float]N]M"));
    assert_eq!(
        body(&p),
        "(\\_p1 -> mapWrg(0, mapLcl(0, id), split(M, gather(\\i -> i / M + (i % M) * N, join(_p1)))))(x)"
    );
    roundtrip(&p);
}

#[test]
fn scal_and_jacobi_structure() {
    let p = parse_file("examples/scal.lift");
    assert_eq!(
        body(&p),
        "(\\_p4 -> join(mapWrg(0, \\_p3 -> join(mapLcl(0, mapSeq(\\a -> mult(alpha, a)), split(4, _p3))), \
         split(128, _p4))))(x)"
    );
    roundtrip(&p);
    let p = parse_file("examples/jacobi1d.lift");
    assert_eq!(
        body(&p),
        "(\\_p3 -> mapGlb(0, \\_p2 -> toGlobal(mapSeq(id), (\\_p1 -> reduceSeq(add, 0.0f, _p1))(_p2)), \
         slide(3, 1, pad(1, 1, clamp, _p3))))(a)"
    );
    roundtrip(&p);
}

/// Expression, parameter and function ids of a def, in walk order.
#[derive(Default)]
struct Ids {
    exprs: Vec<u32>,
    params: Vec<u32>,
    funs: Vec<u32>,
}

impl Ids {
    fn expr(&mut self, e: &lift::ir::Expr) {
        self.exprs.push(e.id.0);
        if let ExprKind::Call(f, args) = &e.kind {
            self.fun(f);
            args.iter().for_each(|a| self.expr(a));
        }
    }

    fn fun(&mut self, f: &lift::ir::FunDecl) {
        self.funs.push(f.id.0);
        match &f.kind {
            FunKind::Lambda(l) => {
                self.params.extend(l.params.iter().map(|q| q.id.0));
                self.expr(&l.body);
            }
            FunKind::Pattern(p) => {
                if let Some(g) = p.nested_fun() {
                    self.fun(g);
                }
            }
            FunKind::UserFun(_) => {}
        }
    }
}

fn assert_unique(mut ids: Vec<u32>, next: u32, what: &str) {
    let n = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), n, "duplicate {what} ids");
    assert!(ids.iter().all(|i| *i < next), "{what} id not below the program's counter {next}");
}

#[test]
fn ids_are_unique_and_counted() {
    let dot = parse_file("examples/dot.lift");
    // Two inlined copies of an earlier def that holds an `iterate`: each copy
    // gets fresh ids, functions included (analyses key iterates by them).
    let copies = parse(
        "copies.lift",
        "userfun add(a: float, b: float): float { return a + b; }
def halve(xs: [float]N) = iterate(2, join o mapSeq(reduceSeq(add, 0.0f)) o split(2)) $ xs
def twice(xs: [float]N, ys: [float]N) = zip(halve(xs), halve(ys))",
    );
    for p in [&dot, &copies] {
        let d = p.defs.last().expect("a def");
        let mut ids = Ids { params: d.params.iter().map(|q| q.id.0).collect(), ..Ids::default() };
        ids.expr(&d.body);
        assert!(!ids.funs.is_empty());
        assert_unique(ids.exprs, p.next_expr, "expression");
        assert_unique(ids.params, p.next_param, "parameter");
        assert_unique(ids.funs, p.next_fun, "function");
    }
}

#[test]
fn every_listed_form_parses() {
    let text = r#"
userfun pair(a: float, b: int): (float, int) { Tuple2_float_int t; t._0 = a; t._1 = b; return t; }
userfun maxPair(acc: (float, int), x: (float, int)): (float, int) {
    if (x._0 > acc._0) { return x; } else { return acc; }
}
userfun scale4(v: float4, s: float): float4 { float4 w = v * s; w.x = fmax(w.x, 0.0f); return w; }
userfun neg(x: float): float { return -x; }
userfun loop(n: int): int { int s = 0; for (int i = 0; i < n; i++) { s += i % 3; } return s / 2; }
def forms(xs: [float]N, v: [float4]M, idx: [int]K, alpha: float, m: [[float]N]N) =
  let p = toPrivate(id) $ alpha in
  zip(
    mapGlb(1, mapSeqUnroll(neg)) o split(N) o padConst(1, 1, 0.0f) o pad(1, 1, mirror) o pad(2, 2, wrap) $ xs,
    join(map(reduceSeqUnroll(add2, 0.0f)) $ slide(3, 1, xs)),
    asScalar o mapGlb(mapVec(neg)) o asVector(4) $ filter(xs, idx),
    mapSeq(\x -> pair(x, 1)) $ generate(N, \i -> neg(p)),
    mapSeq(\y -> at(0) $ y) o transpose $ m,
    partRed(add2, 0.0f, 1, xs),
    reduce(maxPair, (-3.4e38f, 0)) o mapSeq(\x -> pair(x, 2)) $ scatter(\i -> N - 1 - i) $ xs,
    iterate(2, \ys -> ys) $ xs
  )
"#;
    let good =
        text.replace("userfun neg", "userfun add2(a: float, b: float): float { return a + b; }\nuserfun neg");
    let p = parse("forms.lift", &good);
    assert_eq!(p.user_funs.len(), 6);
    roundtrip(&p);
    let printed = print_program(&p);
    for needle in [
        "mapGlb(1, mapSeqUnroll(neg), split(N, padConst(",
        "padConst(1, 1, 0.0f,",
        "pad(1, 1, mirror,",
        "pad(2, 2, wrap,",
        "reduceSeqUnroll(add2, 0.0f,",
        "asVector(4,",
        "filter(xs, idx)",
        "generate(N, \\i -> neg(p))",
        "at(0, y)",
        "transpose(",
        "partRed(add2, 0.0f, 1, xs)",
        "reduce(maxPair, (-3.4e38f, 0),",
        "scatter(\\i -> (N - 1) - i, xs)",
        "iterate(2, \\ys -> ys, xs)",
        "(\\p -> zip(",
        "toPrivate(id, alpha)",
    ] {
        assert!(printed.contains(needle), "missing `{needle}` in\n{printed}");
    }
    // The map without dimension is dimension 0.
    assert!(printed.contains("mapGlb(0, mapVec(neg), asVector(4, "));
}

#[test]
fn composition_symbol_and_application_forms_agree() {
    let a = parse("a", "def f(x: [float]N) = join o split(2) $ x");
    let b = parse("b", "def f(x: [float]N) = join ∘ split(2) $ x");
    assert_eq!(print_program(&a), print_program(&b));
    let c = parse("c", "def f(x: [float]N) = join(split(2, x))");
    let d = parse("d", "def f(x: [float]N) = join $ split(2) $ x");
    assert_eq!(print_program(&c), print_program(&d));
    assert_eq!(body(&c), "join(split(2, x))");
}

#[test]
fn later_def_inlines_a_fresh_copy() {
    let p = parse(
        "defs",
        "def g(x: [float]N) = join o split(2) $ x\n\
         def h(y: [float]M) = g(g(y))",
    );
    assert_eq!(body(&p), "(\\(x: [float]N) -> (\\_p1 -> join(split(2, _p1)))(x))((\\(x: [float]N) -> (\\_p1 -> join(split(2, _p1)))(x))(y))");
    // Both copies have their own ids.
    let ExprKind::Call(outer, args) = &p.defs[1].body.kind else { panic!() };
    let ExprKind::Call(inner, _) = &args[0].kind else { panic!() };
    let (FunKind::Lambda(a), FunKind::Lambda(b)) = (&outer.kind, &inner.kind) else { panic!() };
    assert_ne!(a.params[0].id, b.params[0].id);
    assert_ne!(a.body.id, b.body.id);
    assert_ne!(a.params[0].id, p.defs[0].params[0].id);
}

#[test]
fn literals_and_types() {
    let p = parse(
        "lits",
        "userfun f(a: float2, b: int4, c: float16, d: int2, e: float8, g: float3): float { return 1.5e-3f; }\n\
         def k(x: [float](N/128), y: [[int]M]N) = mapSeq(id) $ x",
    );
    assert_eq!(p.user_funs[0].params[4].1.to_string(), "float8");
    assert_eq!(p.defs[0].params[0].ty.as_ref().map(|t| t.to_string()).as_deref(), Some("[float](N / 128)"));
    let q = parse("m", "def m(x: [float]N) = mapSeq(\\a -> a) $ padConst(0, 2, 1.5e-3f, x)");
    assert!(print_program(&q).contains("padConst(0, 2, 0.0015f, x)"));
    assert!(
        matches!(&q.defs[0].body.kind, ExprKind::Call(f, _)
            if matches!(f.kind, FunKind::Pattern(Pattern::Map { kind: MapKind::Seq, .. }))),
        "not a mapSeq call"
    );
}
