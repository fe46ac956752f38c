//! The reference interpreter: one test per pattern against hand-computed
//! results, user-function bodies, size inference, flat conversions, and the
//! example programs against plain Rust on random inputs.

use lift::arith::EvalError;
use lift::harness::data::HostArray;
use lift::interp::{
    eval_def, eval_def_threads, eval_def_within, infer_sizes, value_from_flat, value_to_flat, InterpError,
    RuntimeProblem,
};
use lift::ir::{Program, SourceFile, Value};
use lift::parse::parse_program;
use lift::types::Type;
use std::collections::BTreeMap;

fn parse(text: &str) -> Program {
    let src = SourceFile::new("t.lift", text);
    parse_program(&src).unwrap_or_else(|e| panic!("{}", e.render(&src)))
}

fn fs(xs: &[f32]) -> Value {
    Value::Array(xs.iter().map(|x| Value::Float(*x)).collect())
}
fn is(xs: &[i32]) -> Value {
    Value::Array(xs.iter().map(|x| Value::Int(*x)).collect())
}
fn arr(vs: Vec<Value>) -> Value {
    Value::array(vs)
}

const UFS: &str = "userfun add(x: float, y: float): float { return x + y; }\n\
                   userfun neg(x: float): float { return -x; }\n\
                   userfun addi(x: int, y: int): int { return x + y; }\n";

/// Evaluates `def f(<params>) = <body>` on the arguments.
fn run(params: &str, body: &str, args: Vec<(&str, Value)>) -> Result<Value, InterpError> {
    let p = parse(&format!("{UFS}def f({params}) = {body}"));
    let args: BTreeMap<String, Value> = args.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    eval_def(&p, "f", &args, &BTreeMap::new())
}

fn ok(params: &str, body: &str, args: Vec<(&str, Value)>) -> Value {
    run(params, body, args).unwrap_or_else(|e| panic!("{body}: {e}"))
}

#[test]
fn map_variants_are_maps() {
    for m in ["map", "mapSeq", "mapSeqUnroll", "mapGlb", "mapGlb(1,", "mapWrg", "mapLcl(2,"] {
        let call = if m.ends_with(',') { format!("{m} neg)") } else { format!("{m}(neg)") };
        let v = ok("x: [float]N", &format!("{call} $ x"), vec![("x", fs(&[1.0, -2.0, 3.0]))]);
        assert_eq!(v, fs(&[-1.0, 2.0, -3.0]), "{m}");
    }
}

#[test]
fn map_vec_applies_per_component() {
    let v = ok(
        "x: [float]N",
        "asScalar o mapSeq(mapVec(neg)) o asVector(2) $ x",
        vec![("x", fs(&[1.0, 2.0, 3.0, 4.0]))],
    );
    assert_eq!(v, fs(&[-1.0, -2.0, -3.0, -4.0]));
}

#[test]
fn reductions_fold_from_init_into_one_element() {
    for r in ["reduce", "reduceSeq", "reduceSeqUnroll"] {
        let v = ok("x: [float]N", &format!("{r}(add, 10.0f) $ x"), vec![("x", fs(&[1.0, 2.0, 3.0]))]);
        assert_eq!(v, fs(&[16.0]), "{r}");
    }
    // A left fold: ((0 - 1) - 2) - 3 with a non-commutative function.
    let p =
        parse("userfun sub(a: int, b: int): int { return a - b; }\ndef f(x: [int]N) = reduceSeq(sub, 0) $ x");
    let args = BTreeMap::from([("x".to_string(), is(&[1, 2, 3]))]);
    assert_eq!(eval_def(&p, "f", &args, &BTreeMap::new()), Ok(is(&[-6])));
}

/// The high-level `reduce` adds pairwise (its function is associative), so
/// a long float sum stays near the exact one; `reduceSeq` keeps the left
/// fold's order, and its drift.
#[test]
fn high_level_reduce_adds_pairwise() {
    let n = 1 << 20;
    let x = fs(&vec![0.1f32; n]);
    let exact = n as f64 * f64::from(0.1f32);
    let left_fold = (0..n).fold(0.0f32, |a, _| a + 0.1f32);
    let got = |r: &str| match ok("x: [float]N", &format!("{r}(add, 0.0f) $ x"), vec![("x", x.clone())]) {
        Value::Array(v) => match v[..] {
            [Value::Float(s)] => s,
            _ => panic!("{r}: one float expected"),
        },
        other => panic!("{r}: {other:?}"),
    };
    let pairwise = got("reduce");
    assert!(((f64::from(pairwise) - exact) / exact).abs() < 1e-6, "reduce: {pairwise} against {exact}");
    assert_eq!(got("reduceSeq"), left_fold);
    assert!(((f64::from(left_fold) - exact) / exact).abs() > 1e-3, "the left fold drifts: {left_fold}");
}

#[test]
fn part_red_reduces_consecutive_chunks() {
    let v = ok("x: [int]N", "partRed(addi, 0, 2) $ x", vec![("x", is(&[1, 2, 3, 4, 5, 6]))]);
    assert_eq!(v, is(&[6, 15]));
}

#[test]
fn iterate_applies_n_times() {
    let v = ok(
        "x: [int]N",
        "iterate(2, join o mapSeq(reduceSeq(addi, 0)) o split(2)) $ x",
        vec![("x", is(&[1, 2, 3, 4, 5, 6, 7, 8]))],
    );
    assert_eq!(v, is(&[10, 26]));
    let v = ok("x: [int]N", "iterate(0, join o split(2)) $ x", vec![("x", is(&[1, 2]))]);
    assert_eq!(v, is(&[1, 2]));
}

#[test]
fn split_and_join() {
    let v = ok("x: [int]N", "split(2) $ x", vec![("x", is(&[1, 2, 3, 4, 5, 6]))]);
    assert_eq!(v, arr(vec![is(&[1, 2]), is(&[3, 4]), is(&[5, 6])]));
    let v = ok("x: [int]N", "join o split(3) $ x", vec![("x", is(&[1, 2, 3, 4, 5, 6]))]);
    assert_eq!(v, is(&[1, 2, 3, 4, 5, 6]));
    let e = run("x: [int]N", "split(4) $ x", vec![("x", is(&[1, 2, 3, 4, 5, 6]))]);
    assert!(matches!(e, Err(InterpError::Runtime { .. })), "{e:?}");
}

#[test]
fn gather_and_scatter() {
    let v = ok("x: [int]N", "gather(\\i -> N - 1 - i) $ x", vec![("x", is(&[1, 2, 3, 4]))]);
    assert_eq!(v, is(&[4, 3, 2, 1]));
    // scatter(i -> (i * 2) % 5) sends x[i] to position 2i mod 5.
    let v = ok("x: [int]N", "scatter(\\i -> (i * 2) % N) $ x", vec![("x", is(&[10, 11, 12, 13, 14]))]);
    assert_eq!(v, is(&[10, 13, 11, 14, 12]));
    let e = run("x: [int]N", "gather(\\i -> i + 1) $ x", vec![("x", is(&[1, 2]))]);
    assert!(matches!(e, Err(InterpError::Runtime { .. })), "{e:?}");
    let e = run("x: [int]N", "gather(\\i -> i / (i - i)) $ x", vec![("x", is(&[1, 2]))]);
    assert!(
        matches!(e, Err(InterpError::Runtime { ref problem, .. })
            if matches!(**problem, RuntimeProblem::Arith(EvalError::DivByZero(_)))),
        "{e:?}"
    );
}

#[test]
fn transpose_swaps_dimensions() {
    let x = arr(vec![is(&[1, 2, 3]), is(&[4, 5, 6])]);
    let v = ok("x: [[int]M]N", "transpose $ x", vec![("x", x)]);
    assert_eq!(v, arr(vec![is(&[1, 4]), is(&[2, 5]), is(&[3, 6])]));
}

#[test]
fn zip_get_and_at() {
    let v = ok("x: [int]N, y: [float]N", "zip(x, y)", vec![("x", is(&[1, 2])), ("y", fs(&[0.5, 1.5]))]);
    assert_eq!(
        v,
        arr(vec![
            Value::Tuple(vec![Value::Int(1), Value::Float(0.5)]),
            Value::Tuple(vec![Value::Int(2), Value::Float(1.5)])
        ])
    );
    let v = ok(
        "x: [int]N, y: [float]N",
        "mapSeq(get(1)) $ zip(x, y)",
        vec![("x", is(&[1, 2])), ("y", fs(&[0.5, 1.5]))],
    );
    assert_eq!(v, fs(&[0.5, 1.5]));
    let v = ok("x: [int]N", "at(2) $ x", vec![("x", is(&[7, 8, 9]))]);
    assert_eq!(v, Value::Int(9));
    let v = ok("x: [int]N", "zip(x, x, x)", vec![("x", is(&[7]))]);
    assert_eq!(v, arr(vec![Value::Tuple(vec![Value::Int(7); 3])]));
    let e = run("x: [int]N, y: [int]M", "zip(x, y)", vec![("x", is(&[1])), ("y", is(&[1, 2]))]);
    assert!(matches!(e, Err(InterpError::Runtime { .. })), "{e:?}");
}

#[test]
fn as_vector_and_as_scalar() {
    let v = ok("x: [int]N", "asVector(2) $ x", vec![("x", is(&[1, 2, 3, 4]))]);
    assert_eq!(
        v,
        arr(vec![
            Value::Vector(vec![Value::Int(1), Value::Int(2)]),
            Value::Vector(vec![Value::Int(3), Value::Int(4)])
        ])
    );
    let v = ok("x: [int]N", "asScalar o asVector(4) $ x", vec![("x", is(&[1, 2, 3, 4]))]);
    assert_eq!(v, is(&[1, 2, 3, 4]));
}

/// `asScalar` of tuples of vectors: tuple `i * n + j` holds component `j`
/// of every field of tuple `i`; the user function returning a tuple of
/// vectors is evaluated as written.
#[test]
fn as_scalar_of_tuples_of_vectors() {
    let p = parse(
        "userfun two(a: float2): (float2, float2) { return (Tuple2_float2_float2){a * 2.0f, a + 1.0f}; }\n\
         def f(x: [float]N) = asScalar o mapSeq(two) o asVector(2) $ x",
    );
    let args = BTreeMap::from([("x".to_string(), fs(&[1.0, 2.0, 3.0, 4.0]))]);
    let d = p.def("f").unwrap();
    let types = lift::passes::typecheck::typecheck_def(&p, d).unwrap();
    assert_eq!(types.of(&d.body).to_string(), "[(float, float)]N");
    let v = eval_def(&p, "f", &args, &BTreeMap::new()).unwrap();
    let pair = |a: f32, b: f32| Value::Tuple(vec![Value::Float(a), Value::Float(b)]);
    assert_eq!(v, arr(vec![pair(2.0, 2.0), pair(4.0, 3.0), pair(6.0, 4.0), pair(8.0, 5.0)]));
    // A tuple of vectors of different widths is no input of asScalar.
    let wide = Value::Tuple(vec![
        Value::Vector(vec![Value::Int(1), Value::Int(2)]),
        Value::Vector(vec![Value::Int(3), Value::Int(4), Value::Int(5)]),
    ]);
    let p = parse("def f(x: [(int2, int3)]N) = asScalar $ x");
    let args = BTreeMap::from([("x".to_string(), arr(vec![wide]))]);
    let e = eval_def(&p, "f", &args, &BTreeMap::new()).unwrap_err().to_string();
    assert!(e.contains("asScalar of a tuple of vectors of different widths"), "{e}");
}

#[test]
fn address_space_wrappers_and_id_are_identities() {
    for w in ["toGlobal(mapSeq(id))", "toLocal(mapLcl(id))", "toPrivate(mapSeq(id))", "id"] {
        let v = ok("x: [float]N", &format!("{w} $ x"), vec![("x", fs(&[1.0, 2.0]))]);
        assert_eq!(v, fs(&[1.0, 2.0]), "{w}");
    }
}

#[test]
fn slide_builds_overlapping_windows() {
    let v = ok("x: [int]N", "slide(3, 2) $ x", vec![("x", is(&[0, 1, 2, 3, 4, 5, 6]))]);
    assert_eq!(v, arr(vec![is(&[0, 1, 2]), is(&[2, 3, 4]), is(&[4, 5, 6])]));
}

#[test]
fn pad_modes() {
    let x = || is(&[1, 2, 3]);
    assert_eq!(ok("x: [int]N", "pad(2, 2, clamp) $ x", vec![("x", x())]), is(&[1, 1, 1, 2, 3, 3, 3]));
    assert_eq!(ok("x: [int]N", "pad(2, 2, mirror) $ x", vec![("x", x())]), is(&[2, 1, 1, 2, 3, 3, 2]));
    assert_eq!(ok("x: [int]N", "pad(2, 2, wrap) $ x", vec![("x", x())]), is(&[2, 3, 1, 2, 3, 1, 2]));
    assert_eq!(ok("x: [int]N", "padConst(1, 2, 0) $ x", vec![("x", x())]), is(&[0, 1, 2, 3, 0, 0]));
}

#[test]
fn generate_and_filter() {
    let p = parse("userfun sq(i: int): int { return i * i; }\ndef f(x: [int]N) = generate(N, sq)");
    let args = BTreeMap::from([("x".to_string(), is(&[0, 0, 0, 0]))]);
    assert_eq!(eval_def(&p, "f", &args, &BTreeMap::new()), Ok(is(&[0, 1, 4, 9])));
    let v = ok(
        "x: [float]N, idx: [int]M",
        "filter(x, idx)",
        vec![("x", fs(&[5.0, 6.0, 7.0])), ("idx", is(&[2, 0, 2]))],
    );
    assert_eq!(v, fs(&[7.0, 5.0, 7.0]));
    let e = run("x: [float]N, idx: [int]M", "filter(x, idx)", vec![("x", fs(&[5.0])), ("idx", is(&[3]))]);
    assert!(
        matches!(e, Err(InterpError::Runtime { ref problem, .. })
            if **problem == RuntimeProblem::IndexOutOfBounds { what: "filter", i: 3, len: 1 }),
        "{e:?}"
    );
    assert_eq!(e.unwrap_err().to_string(), "filter: index 3 out of bounds for an array of 1");
}

#[test]
fn let_binds_and_scalar_params_are_visible() {
    let p = parse(
        "userfun mult(a: float, b: float): float { return a * b; }\n\
         def scal(alpha: float, x: [float]N) = let a2 = toPrivate(id) $ alpha in mapSeq(\\v -> mult(a2, v)) $ x",
    );
    let args = BTreeMap::from([("alpha".to_string(), Value::Float(2.0)), ("x".to_string(), fs(&[1.0, 3.0]))]);
    assert_eq!(eval_def(&p, "scal", &args, &BTreeMap::new()), Ok(fs(&[2.0, 6.0])));
}

#[test]
fn user_function_bodies_follow_c() {
    let p = parse(
        r#"
userfun cdiv(a: int, b: int): int { return a / b + a % b; }
userfun cmp(a: float, b: float): int { return (a < b) + (a == b) * 10; }
userfun vec(v: float4, s: float): float4 { float4 w = v * s + 1.0f; w.y = 0.0f; return w; }
userfun swz(v: float4): float2 { return v.wz + v.s01; }
userfun tup(a: float, b: int): (float, int) { Tuple2_float_int t = (Tuple2_float_int){a * 2.0f, b}; t._1 += 1; return t; }
userfun loops(n: int): float { float s = 0; for (int i = 0; i < n; i++) { if (i % 2 == 0) { s += i; } else s -= 1; } return s; }
userfun built(x: float): float { return sqrt(x) + fmax(x, 2.0f) + mad(x, 2.0f, 1.0f) + clamp(x, 0.0f, 1.0f) + dot((float2)(x, 1.0f), (float2)(2.0f)) + select(1.0f, 5.0f, x > 3.0f); }
userfun casts(x: float): int { return (int)x + (int)(x * 2.0f); }
userfun calls(x: float): float { return built(x) - built(x); }
def f(x: [float]N) = x
"#,
    );
    let call = |name: &str, args: Vec<Value>| {
        let id = p.user_funs.iter().position(|u| u.name == name).unwrap();
        lift::interp::call_user_fun(&p, lift::ir::UserFunId(id as u32), args, Default::default())
    };
    assert_eq!(call("cdiv", vec![Value::Int(-7), Value::Int(2)]), Ok(Value::Int(-3 + -1)));
    assert!(matches!(call("cdiv", vec![Value::Int(1), Value::Int(0)]), Err(InterpError::UserFun { .. })));
    assert_eq!(call("cmp", vec![Value::Float(1.0), Value::Float(2.0)]), Ok(Value::Int(1)));
    assert_eq!(call("cmp", vec![Value::Float(2.0), Value::Float(2.0)]), Ok(Value::Int(10)));
    let v4 = Value::Vector(vec![Value::Float(1.0), Value::Float(2.0), Value::Float(3.0), Value::Float(4.0)]);
    assert_eq!(
        call("vec", vec![v4.clone(), Value::Float(2.0)]),
        Ok(Value::Vector(vec![Value::Float(3.0), Value::Float(0.0), Value::Float(7.0), Value::Float(9.0)]))
    );
    assert_eq!(call("swz", vec![v4]), Ok(Value::Vector(vec![Value::Float(5.0), Value::Float(5.0)])));
    assert_eq!(
        call("tup", vec![Value::Float(1.5), Value::Int(4)]),
        Ok(Value::Tuple(vec![Value::Float(3.0), Value::Int(5)]))
    );
    // 0 - 1 + 2 - 1 + 4 = 4
    assert_eq!(call("loops", vec![Value::Int(5)]), Ok(Value::Float(4.0)));
    // x = 4: 2 + 4 + 9 + 1 + (8 + 2) + 5 = 31
    assert_eq!(call("built", vec![Value::Float(4.0)]), Ok(Value::Float(31.0)));
    assert_eq!(call("casts", vec![Value::Float(2.7)]), Ok(Value::Int(2 + 5)));
    assert_eq!(call("calls", vec![Value::Float(4.0)]), Ok(Value::Float(0.0)));
}

#[test]
fn size_inference_and_argument_errors() {
    let p = parse("def f(x: [[float]M]N, y: [float](N/2)) = x");
    let d = p.def("f").unwrap();
    let x = arr(vec![fs(&[1.0, 2.0, 3.0]); 4]);
    let args = BTreeMap::from([("x".to_string(), x.clone()), ("y".to_string(), fs(&[0.0, 0.0]))]);
    let sizes = infer_sizes(d, &args).unwrap();
    assert_eq!(sizes, BTreeMap::from([("M".to_string(), 3), ("N".to_string(), 4)]));
    let bad = BTreeMap::from([("x".to_string(), x), ("y".to_string(), fs(&[0.0; 3]))]);
    let e = infer_sizes(d, &bad).unwrap_err();
    assert_eq!(e.to_string(), "argument y: expected [float](N / 2) with N = 4, found an array of 3");
    let p = parse("def g(x: [float]N, y: [float]N) = x");
    let args = BTreeMap::from([("x".to_string(), fs(&[0.0; 100])), ("y".to_string(), fs(&[0.0; 99]))]);
    let e = eval_def(&p, "g", &args, &BTreeMap::new()).unwrap_err();
    assert_eq!(e.to_string(), "argument y: expected [float]N with N = 100, found an array of 99");
    let e = eval_def(&p, "g", &BTreeMap::new(), &BTreeMap::new()).unwrap_err();
    assert_eq!(e.to_string(), "argument x: missing");
    assert_eq!(eval_def(&p, "h", &args, &BTreeMap::new()).unwrap_err(), InterpError::NoSuchDef("h".into()));
    // Given sizes win and are checked.
    let args = BTreeMap::from([("x".to_string(), fs(&[0.0; 2])), ("y".to_string(), fs(&[0.0; 2]))]);
    let e = eval_def(&p, "g", &args, &BTreeMap::from([("N".to_string(), 3)])).unwrap_err();
    assert_eq!(e.to_string(), "argument x: expected [float]N with N = 3, found an array of 2");
}

#[test]
fn flat_conversions_round_trip() {
    let ty = Type::array(
        Type::array(Type::Vector(lift::types::ScalarType::Float, 2), lift::arith::ArithExpr::size("M")),
        lift::arith::ArithExpr::size("N"),
    );
    let sizes = BTreeMap::from([("M".to_string(), 2), ("N".to_string(), 3)]);
    let data = HostArray::F32((0..12).map(|i| i as f32).collect());
    let v = value_from_flat(&ty, &data, &sizes).unwrap();
    let Value::Array(rows) = &v else { panic!() };
    assert_eq!(rows.len(), 3);
    assert_eq!(
        rows[1],
        arr(vec![
            Value::Vector(vec![Value::Float(4.0), Value::Float(5.0)]),
            Value::Vector(vec![Value::Float(6.0), Value::Float(7.0)])
        ])
    );
    assert_eq!(value_to_flat(&v), data);
    assert!(value_from_flat(&ty, &HostArray::F32(vec![0.0; 11]), &sizes).is_err());
    let ints = value_to_flat(&is(&[1, 2]));
    assert_eq!(ints, HostArray::I32(vec![1, 2]));
    let tup = Type::array(Type::Tuple(vec![Type::FLOAT, Type::INT]), lift::arith::ArithExpr::size("N"));
    let v = value_from_flat(
        &tup,
        &HostArray::F32(vec![0.5, 1.0, 1.5, 2.0]),
        &BTreeMap::from([("N".to_string(), 2)]),
    )
    .unwrap();
    assert_eq!(
        v,
        arr(vec![
            Value::Tuple(vec![Value::Float(0.5), Value::Int(1)]),
            Value::Tuple(vec![Value::Float(1.5), Value::Int(2)])
        ])
    );
}

/// A small deterministic generator (xorshift) so the tests need no crate.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
}

#[test]
fn dot_product_matches_rust() {
    let text = std::fs::read_to_string("examples/dot.lift").unwrap();
    let p = parse(&text);
    let mut rng = Rng(0x9e3779b97f4a7c15);
    for n in [128usize, 384, 1152] {
        let x: Vec<f32> = (0..n).map(|_| rng.next()).collect();
        let y: Vec<f32> = (0..n).map(|_| rng.next()).collect();
        let args = BTreeMap::from([("x".to_string(), fs(&x)), ("y".to_string(), fs(&y))]);
        let Value::Array(parts) = eval_def(&p, "dot", &args, &BTreeMap::new()).unwrap() else { panic!() };
        // One partial sum per work-group of 128 elements.
        assert_eq!(parts.len(), n / 128);
        for (g, part) in parts.iter().enumerate() {
            let want: f32 = (g * 128..(g + 1) * 128).map(|i| x[i] * y[i]).sum();
            let Value::Float(got) = part else { panic!() };
            assert!((got - want).abs() < 1e-4, "group {g}: {got} vs {want}");
        }
    }
}

#[test]
fn transpose_matches_rust() {
    let text = std::fs::read_to_string("examples/transpose.lift").unwrap();
    let p = parse(&text);
    let mut rng = Rng(42);
    for (m, n) in [(3usize, 5usize), (7, 2), (1, 9)] {
        let x: Vec<Vec<f32>> = (0..m).map(|_| (0..n).map(|_| rng.next()).collect()).collect();
        let args = BTreeMap::from([("x".to_string(), arr(x.iter().map(|r| fs(r)).collect()))]);
        let got = eval_def(&p, "transpose", &args, &BTreeMap::new()).unwrap();
        let want = arr((0..n).map(|j| fs(&(0..m).map(|i| x[i][j]).collect::<Vec<_>>())).collect());
        assert_eq!(got, want, "M = {m}, N = {n}");
    }
}

#[test]
fn scal_and_jacobi_match_rust() {
    let p = parse(&std::fs::read_to_string("examples/scal.lift").unwrap());
    let x: Vec<f32> = (0..256).map(|i| i as f32 * 0.25).collect();
    let args = BTreeMap::from([("alpha".to_string(), Value::Float(3.0)), ("x".to_string(), fs(&x))]);
    let want: Vec<f32> = x.iter().map(|v| v * 3.0).collect();
    assert_eq!(eval_def(&p, "scal", &args, &BTreeMap::new()), Ok(fs(&want)));
    let p = parse(&std::fs::read_to_string("examples/jacobi1d.lift").unwrap());
    let a: Vec<f32> = (0..37).map(|i| ((i * 7) % 11) as f32).collect();
    let args = BTreeMap::from([("a".to_string(), fs(&a))]);
    let n = a.len() as i64;
    let at = |i: i64| a[i.clamp(0, n - 1) as usize];
    let want: Vec<Value> = (0..n).map(|i| fs(&[at(i - 1) + at(i) + at(i + 1)])).collect();
    assert_eq!(eval_def(&p, "jacobi1d", &args, &BTreeMap::new()), Ok(arr(want)));
}

#[test]
fn deepest_accepted_nesting_parses_prints_and_evaluates() {
    let text = format!("def f(x: [float]N) = {}x{}", "id(".repeat(98), ")".repeat(98));
    let p = parse(&text);
    assert!(lift::parse::print_program(&p).contains("id(id("));
    let args = BTreeMap::from([("x".to_string(), fs(&[1.0]))]);
    assert_eq!(eval_def(&p, "f", &args, &BTreeMap::new()), Ok(fs(&[1.0])));
}

#[test]
fn built_in_arguments_convert_to_the_overload_opencl_picks() {
    // pown(float, int) truncates 2.5f to 2; clamp(float4, int, int) is
    // clamp(float4, float, float); min and abs of ints stay ints; step
    // (float, float4) broadcasts the edge.
    let p = parse(
        r#"
userfun pn(x: float): float { return pown(x, 2.5f); }
userfun cl(v: float4): float4 { return clamp(v, 0, 1); }
userfun mi(a: int, b: int): int { return min(a, b) + abs(a - 10); }
userfun st(e: float, v: float4): float4 { return step(e, v); }
def f(x: [float]N) = x
"#,
    );
    let call = |name: &str, args: Vec<Value>| {
        let id = p.user_funs.iter().position(|u| u.name == name).unwrap();
        lift::interp::call_user_fun(&p, lift::ir::UserFunId(id as u32), args, Default::default())
    };
    let v4 = |xs: [f32; 4]| Value::Vector(xs.iter().map(|x| Value::Float(*x)).collect());
    assert_eq!(call("pn", vec![Value::Float(3.0)]), Ok(Value::Float(9.0)));
    assert_eq!(call("cl", vec![v4([-1.0, 0.5, 2.0, 1.0])]), Ok(v4([0.0, 0.5, 1.0, 1.0])));
    assert_eq!(call("mi", vec![Value::Int(3), Value::Int(5)]), Ok(Value::Int(10)));
    assert_eq!(call("st", vec![Value::Float(1.5), v4([1.0, 2.0, 3.0, 4.0])]), Ok(v4([0.0, 1.0, 1.0, 1.0])));
}

/// Issue 23: an evaluation past the interpreter's budget of array elements
/// (`lift::interp::MAX_WORK`) is refused with a position instead of
/// exhausting memory; the same program at a smaller size runs.
#[test]
fn evaluations_past_the_budget_are_refused() {
    // Every element of x against every element of x: N^2 elements in all.
    let body = "map(\\a -> reduceSeq(add, 0.0f) o map(\\b -> add(a, b)) $ x) $ x";
    let start = std::time::Instant::now();
    let p = parse(&format!("{UFS}def f(x: [float]N) = {body}"));
    let args = BTreeMap::from([("x".to_string(), fs(&vec![1.0; 1024]))]);
    match eval_def_within(&p, "f", &args, &BTreeMap::new(), 1 << 16) {
        Err(e @ InterpError::TooLarge { .. }) => {
            assert!(e.to_string().contains("budget of 65536 array elements"), "{e}")
        }
        other => panic!("expected the budget error, got {:?}", other.map(|_| ())),
    }
    assert!(start.elapsed().as_secs() < 30, "took {:?}", start.elapsed());
    let small = ok("x: [float]N", body, vec![("x", fs(&[1.0, 2.0]))]);
    assert_eq!(small, arr(vec![fs(&[5.0]), fs(&[7.0])]));
}

/// Issue 23: `int` arithmetic wraps at 32 bits (as the devices compute it);
/// what C leaves undefined and devices answer differently is an error:
/// an out-of-range float-to-int conversion and `INT_MIN / -1`.
#[test]
fn int_overflow_wraps_and_undefined_conversions_are_errors() {
    let src = "userfun sq(x: int): int { return x * x + 2147483647; }\n\
               userfun toint(x: float): int { return (int)x; }\n\
               userfun quot(x: int): int { return x / -1; }\n\
               def w(x: [int]N) = mapSeq(sq) $ x\n\
               def c(x: [float]N) = mapSeq(toint) $ x\n\
               def q(x: [int]N) = mapSeq(quot) $ x";
    let p = parse(src);
    let eval = |d: &str, v: Value| eval_def(&p, d, &BTreeMap::from([("x".to_string(), v)]), &BTreeMap::new());
    assert_eq!(eval("w", is(&[65536, 3])).unwrap(), is(&[2147483647, -2147483640]));
    assert_eq!(eval("c", fs(&[-2.9, 2147483520.0])).unwrap(), is(&[-2, 2147483520]));
    for bad in [3e9f32, -3e9, f32::NAN] {
        let e = eval("c", fs(&[bad])).unwrap_err().to_string();
        assert!(e.contains("outside the int range"), "{e}");
    }
    let e = eval("q", is(&[i32::MIN])).unwrap_err().to_string();
    assert!(e.contains("integer division overflow"), "{e}");
}

/// The interpreter's own estimate of the elements it makes
/// (`validate::interp_elements`), which the search keeps within its budget
/// when it chooses validation sizes: cubic for a product (the zipped pairs
/// and products of every result), linear for a map.
#[test]
fn the_element_estimate_grows_with_the_work() {
    let src = "userfun add(x: float, y: float): float { return x + y; }\n\
               userfun mul(x: float, y: float): float { return x * y; }\n\
               def g(a: [[float]K]M) = map(\\r -> map(\\s -> reduce(add, 0.0f) o map(\\(p, q) -> mul(p, q)) $ zip(r, s)) $ a) $ a\n\
               def m(x: [float]N) = map(\\v -> mul(v, v)) $ x\n";
    let p = lift::parse::parse_program(&lift::ir::SourceFile::new("t.lift", src.to_string())).unwrap();
    let at = |m: i64| -> lift::types::Sizes { [("M".to_string(), m), ("K".to_string(), m)].into() };
    let small = lift::validate::interp_elements(&p, "g", &at(10)).unwrap();
    let large = lift::validate::interp_elements(&p, "g", &at(20)).unwrap();
    assert!(small >= 2.0 * 1000.0, "{small}");
    assert!((large / small - 8.0).abs() < 1.0, "{small} {large}");
    let n: lift::types::Sizes = [("N".to_string(), 1000)].into();
    let m = lift::validate::interp_elements(&p, "m", &n).unwrap();
    assert!((1000.0..=3000.0).contains(&m), "{m}");
}

/// A map spread over threads (`interp::patterns::apply_spread`) gives the
/// serial value, and both refuse a budget one element below their work.
#[test]
fn a_map_spread_over_threads_gives_the_serial_result_and_refusal() {
    let p = parse(&format!(
        "{UFS}def f(x: [float]N) = map(\\a -> reduceSeq(add, 0.0f) o map(\\b -> add(a, b)) $ x) $ x"
    ));
    // 37 elements: chunks of 10, 10, 10 and 7 on 4 threads.
    let xs: Vec<f32> = (0..37).map(|i| i as f32 * 0.5).collect();
    let args = BTreeMap::from([("x".to_string(), fs(&xs))]);
    let run = |budget, threads| eval_def_threads(&p, "f", &args, &BTreeMap::new(), (budget, threads));
    let serial = run(1 << 20, 1).unwrap();
    assert_eq!(run(1 << 20, 4).unwrap(), serial);
    // The serial evaluation's work: the smallest budget it runs within.
    let (mut lo, mut hi) = (0u64, 1u64 << 20);
    while lo + 1 < hi {
        let mid = (lo + hi) / 2;
        if run(mid, 1).is_ok() {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let work = hi;
    assert!(work > 37 * 37, "{work}");
    assert_eq!(run(work, 4).unwrap(), serial);
    assert_eq!(run(work, 1).unwrap(), serial);
    for threads in [1, 4] {
        assert!(matches!(run(work - 1, threads), Err(InterpError::TooLarge { .. })), "{threads} threads");
    }
}

/// A reduction's pairwise levels spread over threads add the same pairs:
/// the same float, to the bit.
#[test]
fn a_reduction_spread_over_threads_adds_the_same_pairs() {
    let p = parse(&format!("{UFS}def f(x: [float]N) = reduce(add, 0.0f) $ x"));
    // 1001 values of mixed magnitude: an odd length at several levels.
    let xs: Vec<f32> =
        (0..1001).map(|i| ((i * 7919 % 1000) as f32 - 500.0) * 1.001f32.powi(i % 97)).collect();
    let args = BTreeMap::from([("x".to_string(), fs(&xs))]);
    let run = |threads| eval_def_threads(&p, "f", &args, &BTreeMap::new(), (1 << 20, threads)).unwrap();
    let serial = run(1);
    for threads in [2, 3, 8] {
        assert_eq!(run(threads), serial, "{threads} threads");
    }
}

/// The interpreter's tolerance: 1e-4 up to about 176,000 terms, then
/// growing as the square root of the longest sum (the drift of its float
/// left fold); the longest reduction read from the typed def at the sizes.
#[test]
fn long_sums_get_the_tolerance_their_gold_needs() {
    use lift::validate::{interpreter_rtol, longest_reduction};
    assert_eq!(interpreter_rtol(0), 1e-4);
    assert_eq!(interpreter_rtol(100_000), 1e-4);
    let at_2m = interpreter_rtol(2_082_816);
    assert!((3.4e-4..3.5e-4).contains(&at_2m), "{at_2m}");
    let p = parse(
        "userfun add(x: float, y: float): float { return x + y; }\n\
         def full(a: [[float]W]H) = reduce(add, 0.0f) o join $ a\n\
         def rows(a: [[float]W]H) = map(\\r -> reduce(add, 0.0f) $ r) $ a\n\
         def none(a: [[float]W]H) = a\n",
    );
    let sizes: BTreeMap<String, i64> = [("H".to_string(), 1017), ("W".to_string(), 2048)].into();
    assert_eq!(longest_reduction(&p, "full", &sizes), 1017 * 2048);
    assert_eq!(longest_reduction(&p, "rows", &sizes), 2048);
    assert_eq!(longest_reduction(&p, "none", &sizes), 0);
}
