//! `validate::userfun_ops`: the operations a def's user functions apply,
//! which `lift explore` holds the best candidate's time against the FP32
//! rate with.

use lift::ir::SourceFile;
use lift::types::Sizes;

fn ops(src: &str, def: &str, sizes: &[(&str, i64)]) -> Option<f64> {
    let p = lift::parse::parse_program(&SourceFile::new("t.lift", src.to_string())).expect("parses");
    let s: Sizes = sizes.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    lift::validate::userfun_ops(&p, def, &s)
}

#[test]
fn a_product_does_two_operations_per_step_and_a_map_one_per_element() {
    let mm = "userfun add(x: float, y: float): float { return x + y; }
userfun mul(x: float, y: float): float { return x * y; }
def mm(a: [[float]K]M, b: [[float]N]K) =
  map(\\r -> map(\\c -> reduce(add, 0.0f) o map(\\(p, q) -> mul(p, q)) $ zip(r, c)) o transpose $ b) $ a";
    assert_eq!(ops(mm, "mm", &[("M", 5), ("N", 7), ("K", 3)]), Some(2.0 * 5.0 * 7.0 * 3.0));
    let s7 = "userfun f(a: float, b: float, c: float): float { return 0.25f * (a + 2.0f * b + c); }
def blur(x: [float]N) = map(\\w -> f(at(0, w), at(1, w), at(2, w))) o slide(3, 1) o pad(1, 1, clamp) $ x";
    assert_eq!(ops(s7, "blur", &[("N", 10)]), Some(4.0 * 10.0));
    let it = "userfun twice(x: float): float { return x + x; }
def t(x: [float]N) = iterate(3, map(twice)) $ x";
    assert_eq!(ops(it, "t", &[("N", 10)]), Some(3.0 * 10.0));
    // Point-free nesting: the inner map runs once per element of a row.
    let nested = "userfun twice(x: float): float { return x + x; }
def n(x: [[float]M]N) = map(map(twice)) $ x";
    assert_eq!(ops(nested, "n", &[("N", 10), ("M", 6)]), Some(60.0));
    // A user function with a loop is not counted.
    let looped =
        "userfun s(x: float): float { float a = 0.0f; for (int i = 0; i < 4; i += 1) { a += x; } return a; }
def l(x: [float]N) = map(s) $ x";
    assert_eq!(ops(looped, "l", &[("N", 10)]), None);
}
