//! Each compiler error message once: type errors and programs the code
//! generator rejects, with the position they point at.

use lift::compile::{compile, CompileOptions};
use lift::ir::SourceFile;

/// Compiles the last `def` of `src` and checks the rendered error.
fn check(src: &str, expected: &str) {
    check_with(src, &CompileOptions::default(), expected)
}

/// [`check`] with options (known sizes).
fn check_with(src: &str, opts: &CompileOptions, expected: &str) {
    let file = SourceFile::new("t.lift", src);
    let program = lift::parse::parse_program(&file).unwrap_or_else(|e| panic!("{}", e.render(&file)));
    let def = program.defs.last().expect("a def").name.clone();
    let err = compile(&program, &def, opts).expect_err("must not compile");
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
fn as_scalar_of_vectors_of_different_widths() {
    check(
        "def f(x: [float4]N, y: [float2]N) = mapGlb(0, id) o asScalar $ zip(x, y)",
        "t.lift:1:53: asScalar: expected an array of vectors or of tuples of vectors of one width, found [(float4, float2)]N",
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
        "def f(x: [float]20) = mapGlb(0, id) o asVector(4) o at(1) o slide(8, 6) $ x",
        "t.lift:1:23: cannot compile: asVector(4) over data that starts 2 scalars past a multiple of 4 in \
         memory (a slide or pad offset): vectors must be aligned to their width",
    );
}

// Well-formedness over the OpenCL thread hierarchy (passes::wellformed).

#[test]
fn same_dimension_nested_twice() {
    check(
        "def f(x: [[float]N]M) = mapWrg(0, mapWrg(0, id)) $ x",
        "t.lift:1:35: cannot compile: mapWrg(0) inside mapWrg(0): each dimension of a thread level is used once per nest",
    );
}

#[test]
fn local_threads_inside_global_threads() {
    check(
        "def f(x: [[float]N]M) = mapGlb(0, mapLcl(0, id)) $ x",
        "t.lift:1:35: cannot compile: mapLcl(0) inside mapGlb(0): local threads belong to work-groups (use mapWrg outside)",
    );
}

#[test]
fn global_threads_inside_work_groups() {
    check(
        "def f(x: [[float]N]M) = mapWrg(0, mapGlb(1, id)) $ x",
        "t.lift:1:35: cannot compile: mapGlb(1) inside mapWrg(0): global threads and work-groups are the outermost level (mapGlb does not mix with mapWrg/mapLcl)",
    );
}

#[test]
fn local_threads_outside_work_groups() {
    check(
        "def f(x: [float]N) = mapLcl(0, id) $ x",
        "t.lift:1:22: cannot compile: mapLcl(0) outside any mapWrg: local threads belong to work-groups",
    );
}

#[test]
fn two_outermost_parallel_maps() {
    check(
        "def f(x: [float]N) = mapGlb(0, id) o gather(\\i -> N - 1 - i) o mapGlb(0, id) $ x",
        "t.lift:1:22: cannot compile: a second outermost parallel map (mapGlb(0) after mapGlb(0)): OpenCL has no barrier across work-groups, so it could read results not yet written (nest it in the first, or write two defs)",
    );
}

/// A grid map nested in another and read again inside it: each
/// work-group holds only its share of the inner result.
#[test]
fn nested_grid_map_read_again() {
    check(
        "def f(x: [[float]N]M) = mapGlb(1, \\r -> mapGlb(0, id) o gather(\\i -> N - 1 - i) o mapGlb(0, id) $ r) $ x",
        "t.lift:1:83: cannot compile: mapGlb(0) inside mapGlb(1) is read again there: each work-group computes only its share and no barrier joins work-groups (let it be the function's result, or use mapLcl/mapSeq)",
    );
}

#[test]
fn outermost_parallel_map_repeated_by_iterate() {
    check(
        "def f(x: [float]N) = iterate(3, mapGlb(0, id)) $ x",
        "t.lift:1:33: cannot compile: mapGlb(0) inside a reduction or iterate outside every parallel map: each step would need a barrier across work-groups, which OpenCL lacks (write one def per step)",
    );
}

#[test]
fn private_array_read_at_another_threads_index() {
    // The toLocal form of the same program is right (tests/pocl_exec.rs).
    check(
        "def f(x: [float]N) = join o mapWrg(0, \\t -> toGlobal(mapLcl(0, id)) o gather(\\i -> 63 - i) o toPrivate(mapLcl(0, id)) $ t) o split(64) $ x",
        "t.lift:1:45: cannot compile: private memory written by a parallel map holds only each thread's own element, but it is read here at index 63 - l_id_1, which another thread holds (a gather, transpose or other reordering): write it to local memory (toLocal) instead",
    );
}

#[test]
fn unrolled_copy_reads_another_threads_private_element() {
    // Refused with the index symbolic, the unrolled body is lowered copy
    // by copy, and copy 0 is refused (found by fuzzing).
    check(
        &format!(
            "{ADD}def f(x: [[float]28]N) = mapWrg(0, join o mapLcl(0, toLocal(mapSeq(id)) o mapSeqUnroll(\\v -> add(v, v))) o split(4) o mapLcl(0, id) o toPrivate(mapLcl(0, id))) $ x"
        ),
        "t.lift:2:94: cannot compile: private memory written by a parallel map holds only each thread's own element, but it is read here at index l_id_2 * 4 + 0, which another thread holds (a gather, transpose or other reordering): write it to local memory (toLocal) instead",
    );
}

#[test]
fn split_by_zero() {
    check(
        "def f(x: [float]N) = join o mapGlb(0, mapSeq(id)) o split(0) $ x",
        "t.lift:1:53: split: the chunk size must be positive, found 0",
    );
}

#[test]
fn pad_by_a_negative_amount() {
    // A negative amount would crop the array (a global size of -1 for 5
    // cropped from 4 elements) rather than pad it.
    check(
        "def f(x: [float]4) = mapGlb(0, id) o pad(-5, 0, clamp) $ x",
        "t.lift:1:38: pad: the left amount must be at least 0, found -5",
    );
}

#[test]
fn slide_with_zero_step() {
    check(
        "def f(x: [float]N) = mapGlb(0, mapSeq(id)) o slide(3, 0) $ x",
        "t.lift:1:46: slide: the window step must be positive, found 0",
    );
}

#[test]
fn unrolling_beyond_the_kernel_budget() {
    check(
        &format!("{ADD}def f(x: [float]N) = join o mapGlb(0, toGlobal(mapSeq(id)) o reduceSeqUnroll(add, 0.0f)) o split(1000000) $ x"),
        "t.lift:2:62: cannot compile: cannot unroll 1000000 iterations here: a kernel unrolls at most 65536 in all (use mapSeq or reduceSeq)",
    );
}

#[test]
fn index_grown_by_stacked_layout_patterns() {
    let pairs = vec!["join o split(1)"; 16].join(" o ");
    let src = format!("def f(x: [float]N) = {pairs} o mapGlb(0, id) $ x");
    let file = SourceFile::new("t.lift", src.as_str());
    let program = lift::parse::parse_program(&file).unwrap();
    let err = compile(&program, "f", &CompileOptions::default()).expect_err("must not compile").to_string();
    assert_eq!(
        err,
        "cannot compile: the index of a join has more than 20000 terms: too many layout patterns (split, join, gather, ...) are stacked on this array"
    );
}

#[test]
fn slide_seq_plus_window_of_unknown_size() {
    check(
        &format!("{ADD}def f(a: [[float]N]M) = slideSeqPlus(3, 1, toGlobal(mapSeq(id)) o reduceSeq(add, 0.0f) o join) $ a"),
        "t.lift:2:25: cannot compile: slideSeqPlus keeps its window of type [[float]N]3 in private memory: its elements need a size known at compile time, found 3 * N values (give the sizes with --size)",
    );
}

#[test]
fn parallel_map_inside_slide_seq_plus() {
    check(
        &format!("{ADD}def f(a: [[float]N]M) = mapGlb(0, slideSeqPlus(3, 1, mapGlb(1, \\x -> add(x, x)))) $ a"),
        "t.lift:2:54: cannot compile: mapGlb(1) inside slideSeqPlus: its window is in one thread's private memory, so its function runs in that thread (use mapSeq)",
    );
}

/// Issue 23: user index arithmetic stays inside its buffer, or the program is refused.
#[test]
fn index_function_outside_its_array() {
    check(
        "def f(x: [float]N) = scatter(\\i -> i - 1000000) o mapGlb(id) $ x",
        "t.lift:1:22: cannot compile: the index function `\\i -> i - 1000000` of `scatter` gives -1000000 at i = 0, outside the N elements of its array",
    );
}

/// Issue 23: a scatter whose index function maps two indices to one
/// element (two work-items writing one element) is refused: constant,
/// halving and digit maps that collide, at a symbolic and a known length.
#[test]
fn scatter_that_is_no_permutation() {
    check(
        "def f(x: [float]N) = scatter(\\i -> 7 % N) o mapGlb(id) $ x",
        "t.lift:1:22: cannot compile: cannot prove that the index function `\\i -> 7 % N` of `scatter` is a permutation of its N elements (two work-items could write one element): use one such as `\\i -> N - 1 - i`, `(i + c) % N` or `(i % a) * b + i / a` with a * b = N",
    );
    check(
        "def f(x: [float]16) = scatter(\\i -> (i % 4) * 2 + i / 8) o mapGlb(id) $ x",
        "t.lift:1:23: cannot compile: cannot prove that the index function `\\i -> (i % 4) * 2 + i / 8` of `scatter` is a permutation of its 16 elements (two work-items could write one element): use one such as `\\i -> 16 - 1 - i`, `(i + c) % 16` or `(i % a) * b + i / a` with a * b = 16",
    );
    let opts = CompileOptions { sizes: [("N".to_string(), 16)].into(), ..Default::default() };
    check_with(
        "def f(x: [float]N) = scatter(\\i -> i / 2) o mapGlb(id) $ x",
        &opts,
        "t.lift:1:22: cannot compile: cannot prove that the index function `\\i -> i / 2` of `scatter` is a permutation of its 16 elements (two work-items could write one element): use one such as `\\i -> 16 - 1 - i`, `(i + c) % 16` or `(i % a) * b + i / a` with a * b = 16",
    );
}

/// The permutations the check proves compile (with a symbolic length and
/// with constant ones).
#[test]
fn scatter_permutations_compile() {
    for src in [
        "def f(x: [float]N) = scatter(\\i -> N - 1 - i) o mapGlb(id) $ x",
        "def f(x: [float]N) = scatter(\\i -> (i + 1) % N) o mapGlb(id) $ x",
        "def f(x: [float]16) = scatter(\\i -> (i % 4) * 4 + i / 4) o mapGlb(id) $ x",
        "def f(x: [float]128) = scatter(\\i -> ((i % 8) / 4) * 64 + (i / 8) * 4 + i % 4) o mapGlb(id) $ x",
    ] {
        let file = SourceFile::new("t.lift", src);
        let program = lift::parse::parse_program(&file).unwrap_or_else(|e| panic!("{}", e.render(&file)));
        if let Err(e) = compile(&program, "f", &CompileOptions::default()) {
            panic!("{src}: {e}");
        }
    }
}

#[test]
fn index_function_range_not_proven() {
    check(
        "def f(x: [float]N) = mapGlb(id) o gather(\\i -> i / 2) $ x",
        "t.lift:1:35: cannot compile: cannot prove that the index `i / 2` of `gather` stays inside the N elements of its array (kernels do not check bounds): bound it (`% N`) or give the sizes (--size)",
    );
}

#[test]
fn index_function_overflowing_an_int() {
    check(
        "def f(x: [float]N) = mapGlb(id) o gather(\\i -> (i * 1000000007) % N) $ x",
        "t.lift:1:35: cannot compile: cannot prove that `1000000007 * i` in the index of `gather` fits a 32-bit int (within ±N): kernels compute indices in `int`",
    );
}

#[test]
fn index_function_dividing_by_zero() {
    check(
        "def f(x: [float]N) = mapGlb(id) o gather(\\i -> (0 / i) % N) $ x",
        "t.lift:1:35: cannot compile: cannot prove that the divisor `i` in the index of `gather` is never 0",
    );
}

#[test]
fn at_outside_its_array() {
    check(
        "def f(x: [[float]N]M) = mapGlb(\\row -> toGlobal(id) $ at(N + 5, row)) $ x",
        "t.lift:1:55: cannot compile: at(N + 5) is outside the N elements of its array",
    );
}

/// Issue 23: known sizes are checked as `lift exec` checks them (an `int`
/// index constant of 2^40 was emitted).
#[test]
fn known_size_beyond_an_int() {
    let opts = CompileOptions { sizes: [("N".to_string(), 1 << 40)].into(), ..Default::default() };
    check_with(
        "def f(x: [float]N) = mapGlb(id) $ x",
        &opts,
        "t.lift:1:1: size N = 1099511627776 exceeds 2147483647: kernels index with 32-bit ints",
    );
}

/// Issue 23: 65,536 private floats overflowed PoCL's thread stack.
#[test]
fn private_array_too_large() {
    check(
        "userfun inc(x: float): float { return x + 1.0f; }\n\
         def f(x: [[float]65536]N) = mapGlb(toGlobal(mapSeq(id)) o toPrivate(mapSeq(inc))) $ x",
        "t.lift:2:59: cannot compile: a private array of 65536 float is more than 4096 scalars (a thread's stack on CPU devices; registers on GPUs): use toLocal or toGlobal",
    );
}

#[test]
fn a_read_after_a_local_map_in_a_loop_work_items_run_unequally() {
    // As below, but what reads the lanes' sums is a sequential copy every
    // work-item runs: it too would need the barrier that cannot be placed.
    let src = format!(
        "{ADD}def f(a: [[float]32]M) = join o mapWrg(0, mapLcl(1, \\row ->\n\
         toGlobal(mapSeq(id)) o join o mapLcl(0, toLocal(mapSeq(id)) o reduceSeq(add, 0.0f)) o split(2) $ row)) o split(4) $ a"
    );
    check_with(
        &src,
        &CompileOptions { local: Some([16, 3, 1]), ..Default::default() },
        "t.lift:3:31: cannot compile: what this mapLcl writes may be read after it inside the loop of mapLcl(1) over 4, \
         which work-items run different numbers of times, so no barrier can order the writes before the reads: launch \
         as many work-items in dimension 1 as it has elements (--local), or split it so that each runs it once",
    );
}

#[test]
fn two_local_maps_in_a_loop_work_items_run_unequally() {
    // A group's 4 rows over 3 work-items of dimension 1: some run the rows
    // loop twice, some once, so the barrier the tree needs after the
    // lanes' sums cannot be placed.
    let src = format!(
        "{ADD}def f(a: [[float]32]M) = join o mapWrg(0, mapLcl(1, \\row ->\n\
         iterate(4, join o mapLcl(0, toLocal(mapSeq(id)) o reduceSeq(add, 0.0f)) o split(2)) o\n\
         join o mapLcl(0, toLocal(mapSeq(id)) o reduceSeq(add, 0.0f)) o split(2) $ row)) o split(4) $ a"
    );
    check_with(
        &src,
        &CompileOptions { local: Some([16, 3, 1]), ..Default::default() },
        "t.lift:3:19: cannot compile: this mapLcl may read what the mapLcl before it wrote, but both sit in the loop \
         of mapLcl(1) over 4, which work-items run different numbers of times, so no barrier can join them: launch \
         as many work-items in dimension 1 as it has elements (--local), or split it so that each runs it once",
    );
}
