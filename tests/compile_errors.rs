//! Each compiler error message once: type errors and programs the code
//! generator rejects, with the position they point at.

use lift::compile::{compile, CompileOptions};
use lift::ir::SourceFile;

/// Compiles the last `def` of `src` and checks the rendered error.
fn check(src: &str, expected: &str) {
    let file = SourceFile::new("t.lift", src);
    let program = lift::parse::parse_program(&file).unwrap_or_else(|e| panic!("{}", e.render(&file)));
    let def = program.defs.last().expect("a def").name.clone();
    let err = compile(&program, &def, &CompileOptions::default()).expect_err("must not compile");
    let rendered = match err.span() {
        Some(s) => format!("{}: {err}", file.location(s.start)),
        None => err.to_string(),
    };
    assert_eq!(rendered, expected);
}

const ADD: &str = "userfun add(x: float, y: float): float { return x + y; }\n";

#[test]
fn zip_lengths_differ() {
    check(
        &format!(
            "{ADD}def f(x: [float]N, y: [float]M) = mapGlb(0, \\p -> add(get(0, p), get(1, p))) $ zip(x, y)"
        ),
        "t.lift:2:80: zip: lengths N and M differ",
    );
}

#[test]
fn map_over_a_scalar() {
    check(
        &format!("{ADD}def f(a: float) = mapGlb(0, id) $ a"),
        "t.lift:2:19: mapGlb: expected an array, found float",
    );
}

#[test]
fn user_function_argument_type() {
    check(
        &format!("{ADD}def f(x: [float4]N) = mapGlb(0, \\v -> add(v, v)) $ x"),
        "t.lift:2:39: add: parameter `x` expects float, found float4",
    );
}

#[test]
fn split_not_dividing() {
    check(
        "def f(x: [float]10) = mapGlb(0, mapSeq(id)) o split(4) $ x",
        "t.lift:1:47: split: length 10 is not divisible by 4",
    );
}

#[test]
fn reduce_function_type() {
    check(
        "userfun g(a: float, b: float): int { return 0; }\ndef f(x: [float]N) = mapGlb(0, mapSeq(id) o reduceSeq(g, 0.0f)) o split(2) $ x",
        "t.lift:2:45: reduceSeq: the function returns int but the accumulator has type float",
    );
}

#[test]
fn high_level_map_that_computes() {
    check(&format!("{ADD}def f(x: [float]N) = map(\\a -> add(a, a)) $ x"), "t.lift:2:22: cannot compile: a high-level `map` whose function computes must be lowered to mapGlb, mapWrg, mapLcl or mapSeq first");
}

#[test]
fn high_level_reduce() {
    check(
        &format!("{ADD}def f(x: [float]N) = reduce(add, 0.0f) $ x"),
        "t.lift:2:22: cannot compile: the high-level `reduce`/`partRed` must be lowered to reduceSeq (inside maps) first",
    );
}

#[test]
fn scatter_on_the_input_side() {
    check(
        "def f(x: [float]N) = mapGlb(0, id) o scatter(\\i -> N - 1 - i) $ x",
        "t.lift:1:38: cannot compile: scatter only reorders where results are written; use gather to reorder reads",
    );
}

#[test]
fn local_memory_of_unknown_size() {
    check(
        "def f(x: [float]N) = join o mapWrg(0, mapLcl(0, id) o toLocal(mapLcl(0, id))) o split(N) $ x",
        "t.lift:1:55: cannot compile: local memory of type [float]N needs a length known at compile time, found N (give the sizes with --size)",
    );
}

#[test]
fn no_such_def() {
    let file = SourceFile::new("t.lift", "def f(x: [float]N) = mapGlb(0, id) $ x");
    let program = lift::parse::parse_program(&file).unwrap();
    let err = compile(&program, "g", &CompileOptions::default()).unwrap_err();
    assert_eq!(err.to_string(), "no `def g` in the program");
}

#[test]
fn cli_type_error_exits_2_with_position() {
    let dir = std::env::temp_dir().join(format!("lift-compile-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("bad.lift");
    std::fs::write(
        &p,
        format!(
            "{ADD}def f(x: [float]N, y: [float]M) = mapGlb(0, \\p -> add(get(0, p), get(1, p))) $ zip(x, y)"
        ),
    )
    .unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_lift")).arg("compile").arg(&p).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    let first = err.lines().next().unwrap_or("");
    assert!(first.contains("bad.lift:2:80") && first.contains("zip: lengths N and M differ"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn vector_over_clamped_padding() {
    // The four elements of a vector at the left border all read x[0]: a
    // vector load would read x[0..4] instead.
    check(
        "def f(x: [float]N) = mapGlb(0, id) o asVector(4) o pad(4, 4, clamp) $ x",
        "t.lift:1:22: cannot compile: asVector(4) over data whose 4 consecutive elements are not consecutive \
         in memory (a pad, gather, transpose or overlapping slide below it): copy the data first, e.g. with \
         toLocal(mapLcl(id)), and vectorise the copy",
    );
}

#[test]
fn vector_not_aligned() {
    check(
        "def f(x: [float]N) = mapGlb(0, id) o asVector(4) o at(1) o slide(8, 6) $ x",
        "t.lift:1:22: cannot compile: asVector(4) over data that starts 2 scalars past a multiple of 4 in \
         memory (a slide or pad offset): vectors must be aligned to their width",
    );
}
