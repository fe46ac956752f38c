//! Vectorising user functions of several statements (`vectorize` on a map
//! of a BlackScholes-like function): the vectorised text, its meaning in
//! the interpreter against the scalar program, and each refusal.

use lift::arith::ArithExpr;
use lift::interp::eval_def;
use lift::ir::Value;
use lift::ir::{Path, Program, SourceFile};
use lift::rewrite::{self, Args, RewriteError};
use std::collections::BTreeMap;

const FUNS: &str = "userfun stage(d: float): float {
  float c = 2.0f * d;
  if (d > 1.0f) c = 1.0f - c; else c += 0.5f;
  return c;
}
userfun pair(s: float, k: float): (float, float) {
  const float a = stage(s) * k;
  const float b = sqrt(k);
  return (Tuple2_float_float){a, s - a * b};
}
";

fn parse(src: &str) -> Program {
    let text = format!("{FUNS}{src}");
    lift::parse::parse_program(&SourceFile::new("t.lift", text)).unwrap_or_else(|e| panic!("{e:?}"))
}

fn vectorize(src: &str, n: i64) -> Result<Program, RewriteError> {
    let p = parse(src);
    let def = p.defs.last().unwrap().name.clone();
    let p = rewrite::prepare(&p, &def).unwrap();
    let rule = rewrite::find_rule("vectorize").unwrap();
    let args: Args = [("n".to_string(), ArithExpr::Cst(n))].into_iter().collect();
    rewrite::apply(&p, &def, rule, &"root".parse::<Path>().unwrap(), &args).map(|o| o.program)
}

const PAIRS: &str = "def f(k: float, x: [float]N) = map(\\p -> pair(p, k)) $ x";

#[test]
fn a_tuple_returning_function_of_several_statements_is_vectorised() {
    let p = vectorize(PAIRS, 4).unwrap();
    let d = p.def("f").unwrap();
    assert_eq!(
        lift::parse::print_expr_in(&p, d, &d.body),
        "asScalar(map(\\p -> pair_vec4(p, k), asVector(4, x)))"
    );
    let text = |name: &str| p.user_funs.iter().find(|u| u.name == name).unwrap().body_text.clone();
    assert_eq!(
        text("stage_vec4"),
        "\n  float4 c = (2.0f * d);\n  c = ((d > 1.0f) ? (1.0f - c) : c);\n  c = ((d > 1.0f) ? c : (c + 0.5f));\n  return c;\n"
    );
    assert_eq!(
        text("pair_vec4"),
        "\n  float4 a = (stage_vec4(s) * k);\n  float4 b = sqrt(k);\n  return (Tuple2_float4_float4){a, (s - (a * b))};\n"
    );
    // The printed program reads back: the vectorised bodies parse and
    // type-check as OpenCL C.
    let printed = lift::parse::print_program(&p);
    lift::parse::parse_program(&SourceFile::new("printed.lift", printed)).unwrap_or_else(|e| panic!("{e:?}"));
}

#[test]
fn the_vectorised_program_computes_what_the_scalar_one_does() {
    let scalar = parse(PAIRS);
    let mut state = 7u64;
    let mut xs = Vec::new();
    for _ in 0..24 {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        // Both sides of the branch at 1.0: values in [-2, 2).
        xs.push(Value::Float(((state >> 40) as f32 / (1u64 << 24) as f32) * 4.0 - 2.0));
    }
    let inputs: BTreeMap<String, Value> =
        [("k".to_string(), Value::Float(1.5)), ("x".to_string(), Value::array(xs))].into_iter().collect();
    let sizes: BTreeMap<String, i64> = [("N".to_string(), 24)].into_iter().collect();
    let want = eval_def(&scalar, "f", &inputs, &sizes).unwrap();
    for n in [2, 4, 8] {
        let p = vectorize(PAIRS, n).unwrap();
        let got = eval_def(&p, "f", &inputs, &sizes).unwrap();
        assert_eq!(format!("{got:?}"), format!("{want:?}"), "width {n}");
    }
}

/// The refusal of `vectorize` for a map of `fun` (defined in `funs`).
fn refusal(funs: &str, fun: &str) -> String {
    let src = format!("{funs}def f(x: [float]N) = map(\\p -> {fun}(p, 2.0f)) $ x");
    match vectorize(&src, 4) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("{fun} was vectorised"),
    }
}

#[test]
fn what_has_no_vector_version_is_refused_with_the_reason() {
    let cases = [
        (
            "userfun g(a: float, b: float): float { int n = 2; return a * b; }",
            "declares a local that is not a float",
        ),
        (
            "userfun g(a: float, b: float): float { float s = 0.0f; for (int i = 0; i < 3; i += 1) { s += a; } return s * b; }",
            "has a loop",
        ),
        (
            "userfun g(a: float, b: float): float { float m = a > b; return m; }",
            "a comparison outside a condition",
        ),
        ("userfun g(a: float, b: float): float { float h = 0.5 * a; return h + b; }", "a double"),
        (
            "userfun g(a: float, b: float): float { float c = a; if (a > b) { return a; } return c; }",
            "does more than assign its locals",
        ),
        (
            "userfun g(a: float, b: float): float { float c = a; if (c > b) c = b - c; return c; }",
            "whose condition reads a variable it assigns",
        ),
    ];
    for (fun, why) in cases {
        let e = refusal(&format!("{fun}\n"), "g");
        assert!(e.contains("`vectorize`: side condition violated: user function `g`"), "{e}");
        assert!(e.contains(why) && e.ends_with("so it has no vector version"), "{fun}: {e}");
    }
}
