//! Snapshot tests of the generated OpenCL (file-driven: every program in
//! `tests/programs` is compiled with all optimisations and with none).

use lift::compile::{compile, CompileOptions};
use lift::ir::SourceFile;
use std::path::Path;

fn compile_file(path: &Path, opts: &CompileOptions) -> String {
    let text = std::fs::read_to_string(path).expect("test program exists");
    let file = SourceFile::new(path.display().to_string(), text);
    let program = lift::parse::parse_program(&file).unwrap_or_else(|e| panic!("{}", e.render(&file)));
    let def = program.defs.last().expect("a def").name.clone();
    match compile(&program, &def, opts) {
        Ok(k) => k.source,
        Err(e) => panic!("{}: {e}", path.display()),
    }
}

fn none() -> CompileOptions {
    CompileOptions { arith_simplify: false, barrier_elim: false, cf_simplify: false, ..Default::default() }
}

#[test]
fn generated_kernels() {
    let mut files: Vec<_> = std::fs::read_dir("tests/programs")
        .expect("tests/programs")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "lift"))
        .collect();
    files.sort();
    assert!(files.len() >= 4);
    for f in files {
        let stem = f.file_stem().unwrap().to_string_lossy().to_string();
        insta::assert_snapshot!(format!("{stem}_all"), compile_file(&f, &CompileOptions::default()));
        insta::assert_snapshot!(format!("{stem}_none"), compile_file(&f, &none()));
    }
}

#[test]
fn dot_has_figure7_structure() {
    let k = compile_file(Path::new("tests/programs/dot.lift"), &CompileOptions::default());
    // Simplified indices as in Figure 7, line 13.
    assert!(k.contains("x[i_0 + 2 * l_id_0 + 128 * wg_id_0]"), "{k}");
    // Local buffers of 64 and 32 floats and the double-buffered iterate.
    assert!(k.contains("local float loc_0[64] __attribute__((aligned(16)));"), "{k}");
    assert!(k.contains("[32] __attribute__((aligned(16)));"), "{k}");
    assert!(k.contains("for (int iter_0 = 0; iter_0 < 6; iter_0 += 1)"), "{k}");
    // The mapLcl that runs once has no loop; the one that runs at most once is an if.
    assert!(k.contains("int l_id_0 = get_local_id(0);"), "{k}");
    assert!(!k.contains("for (int l_id_0"), "{k}");
    assert!(k.contains("if (get_local_id(0) < 1)"), "{k}");
}

#[test]
fn transpose_without_simplification_keeps_div_and_mod() {
    let simplified = compile_file(Path::new("tests/programs/transpose.lift"), &CompileOptions::default());
    let raw = compile_file(
        Path::new("tests/programs/transpose.lift"),
        &CompileOptions { arith_simplify: false, ..Default::default() },
    );
    let index_line = |k: &str| k.lines().find(|l| l.contains("out[")).unwrap_or("").to_string();
    let (s, r) = (index_line(&simplified), index_line(&raw));
    assert!(r.contains('/') && r.contains('%'), "unsimplified: {r}");
    assert!(!s.contains('/') && !s.contains('%'), "simplified: {s}");
}

#[test]
fn each_switch_changes_the_kernel() {
    let base = compile_file(Path::new("tests/programs/dot.lift"), &CompileOptions::default());
    for opts in [
        CompileOptions { arith_simplify: false, ..Default::default() },
        CompileOptions { barrier_elim: false, ..Default::default() },
        CompileOptions { cf_simplify: false, ..Default::default() },
    ] {
        let k = compile_file(Path::new("tests/programs/dot.lift"), &opts);
        assert_ne!(k, base, "switch {opts:?} did not change the dot kernel");
    }
}

#[test]
fn output_is_deterministic() {
    let a = compile_file(Path::new("tests/programs/dot.lift"), &CompileOptions::default());
    let b = compile_file(Path::new("tests/programs/dot.lift"), &CompileOptions::default());
    assert_eq!(a, b);
}

#[test]
fn tile_reloaded_in_a_loop_keeps_both_barriers() {
    // The mapLcl accumulating into private memory reads the local tile; the
    // barrier after it protects the tile from the next iteration's copy.
    for opts in [CompileOptions::default(), none()] {
        let k = compile_file(Path::new("tests/programs/tiled.lift"), &opts);
        let loop_body: String =
            k.lines().skip_while(|l| !l.contains("for (int i_0")).collect::<Vec<_>>().join("\n");
        assert!(loop_body.matches("barrier(").count() >= 2, "{k}");
    }
}

#[test]
fn consecutive_local_copies_share_one_barrier() {
    let k = compile_file(Path::new("tests/programs/tiles2.lift"), &CompileOptions::default());
    // Copies of x and y, then one barrier; the copy reading x's tile, then
    // a barrier before the final map reads the tiles.
    let local_barriers = k.lines().filter(|l| l.contains("barrier(CLK_LOCAL_MEM_FENCE)")).count();
    assert_eq!(local_barriers, 2, "{k}");
    let copy_y = k.find("= y[").expect("copy of y");
    let first_barrier = k.find("barrier(").expect("a barrier");
    assert!(copy_y < first_barrier, "the copy of y runs before the first barrier:\n{k}");
}

#[test]
fn private_memory_is_per_thread_only_when_each_thread_runs_once() {
    let path = Path::new("tests/programs/private2d.lift");
    // Launched with one work-item per element of the 32 x 8 tile: each
    // work-item keeps one value.
    let exact = CompileOptions { local: Some([32, 8, 1]), global: Some([32, 72, 1]), ..Default::default() };
    let k = compile_file(path, &exact);
    assert!(k.contains("float priv_0;"), "{k}");
    // So with the inferred launch (dimension 1, named only by the
    // `mapLcl(1)`s, is one work-group of 8).
    let k = compile_file(path, &CompileOptions::default());
    assert!(k.contains("float priv_0;") && k.contains("reqd_work_group_size(32, 8, 1)"), "{k}");
    // Launched 32 x 1, a work-item handles 8 rows: they need their own
    // locations.
    let k = compile_file(path, &CompileOptions { local: Some([32, 1, 1]), ..Default::default() });
    assert!(k.contains("float priv_0[256];"), "{k}");
}

#[test]
fn padconst_guards_that_the_ranges_decide_are_left_out() {
    let k = compile_file(Path::new("tests/programs/padconst_box.lift"), &CompileOptions::default());
    // Nine reads, each guarded by up to four comparisons before: only the
    // six that can fail at the image's edges remain, each once per read
    // that can cross that edge (three reads per edge).
    assert_eq!(k.matches(" >= 0)").count(), 6, "{k}");
    assert_eq!(k.matches(" < W)").count() + k.matches(" < H)").count(), 6, "{k}");
    assert!(k.contains("priv_0 = add(priv_0, a[W * gl_id_0 + gl_id_1]);"), "{k}");
    // Without array-access simplification every guard stays.
    let none = compile_file(Path::new("tests/programs/padconst_box.lift"), &none());
    assert_eq!(none.matches(" >= 0)").count(), 18, "{none}");
}

#[test]
fn rows_of_one_work_group_get_a_second_local_dimension_and_keep_the_tree_barriers() {
    // `mapLcl(1)` over a group's 4 rows with no `mapWrg(1)`: dimension 1 is
    // one work-group of 4, so the map runs once per work-item and the
    // halving tree inside it keeps a barrier per step.
    let path = Path::new("tests/programs/rows_per_group.lift");
    let file = SourceFile::new(path.display().to_string(), std::fs::read_to_string(path).unwrap());
    let program = lift::parse::parse_program(&file).unwrap();
    let k = compile(&program, "rowsGrouped", &CompileOptions::default()).unwrap();
    let sizes = |a: &[lift::arith::ArithExpr; 3]| {
        let at = |v: &str| [("M", 12), ("N", 48)].iter().find(|(n, _)| *n == v).map(|p| p.1);
        a.iter().map(|e| e.eval_with(&at).unwrap()).collect::<Vec<i64>>()
    };
    assert_eq!(sizes(k.local.as_ref().expect("a local size")), [16, 4, 1]);
    assert_eq!(sizes(&k.global), [48, 4, 1]);
    let tree: String =
        k.source.lines().skip_while(|l| !l.contains("for (int iter_0")).collect::<Vec<_>>().join("\n");
    assert!(tree.contains("barrier(CLK_LOCAL_MEM_FENCE)"), "{}", k.source);
    assert!(!k.source.contains("get_local_size(1)"), "the rows map runs once: {}", k.source);
    // A local size given for it is its global size too: one work-group.
    let given = CompileOptions { local: Some([16, 4, 1]), ..Default::default() };
    assert_eq!(sizes(&compile(&program, "rowsGrouped", &given).unwrap().global), [48, 4, 1]);
    // Two work-items for four rows would run the rows loop twice each: the
    // tree's barriers cannot be placed in such a loop, so it is refused.
    let two = CompileOptions { local: Some([16, 2, 1]), ..Default::default() };
    let err = compile(&program, "rowsGrouped", &two).unwrap_err().to_string();
    assert!(err.contains("no barrier can join them"), "{err}");
}
