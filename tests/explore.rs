//! `lift explore`: the search on PoCL within a tight budget, resuming and
//! the cache, and the determinism of the candidate sequence.

use lift::explore::{self, space::SpaceLimits, ExploreOptions};
use lift::ir::{Program, SourceFile};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
#[path = "support/npy.rs"]
mod npy;

fn load(path: &str) -> Program {
    let text = std::fs::read_to_string(path).unwrap();
    lift::parse::parse_program(&SourceFile::new(path, text)).unwrap()
}

fn sizes(n: i64) -> BTreeMap<String, i64> {
    BTreeMap::from([("N".to_string(), n)])
}

fn opts(out: &Path, budget: u64, max: Option<usize>, resume: bool, depth: usize) -> ExploreOptions {
    ExploreOptions {
        def: "scalHigh".into(),
        sizes: sizes(1 << 20),
        budget: Duration::from_secs(budget),
        seed: 5,
        out: out.to_path_buf(),
        resume,
        limits: SpaceLimits { depth, ..SpaceLimits::default() },
        max_candidates: max,
        warmup: 1,
        runs: 3,
        progress: false,
        then: Vec::new(),
        reference: None,
        specialise: false,
    }
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lift-explore-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// PoCL, or `None` (the test then says it skipped).
fn pocl() -> Option<Vec<lift::runtime::DeviceInfo>> {
    explore::select_devices("pocl").ok()
}

fn csv_rows(path: &Path) -> Vec<Vec<String>> {
    let mut rd = csv::Reader::from_path(path).unwrap();
    rd.records().map(|r| r.unwrap().iter().map(str::to_string).collect()).collect()
}

#[test]
fn explores_scal_on_pocl_and_beats_the_naive_lowering() {
    let Some(devs) = pocl() else {
        println!("skipped: no OpenCL device");
        return;
    };
    let out = tmp("scal");
    let prog = load("benchmarks/scal.lift");
    let report = explore::explore(&prog, &devs, &opts(&out, 20, None, false, 1)).unwrap();
    let d = &report.devices[0];
    let best = d.best.as_ref().expect("a validated candidate");
    let naive = d.naive_ms.expect("the naive lowering was measured");
    // Within the tie the choice allows: of candidates within 2% of the
    // fastest the first in the space's order is written, which on a CPU
    // whose lowerings all run about as fast may be one 0.4% slower than
    // the naive one (seen in a run of the whole suite).
    let tie = 1.0 + lift::explore::choice::TIE;
    assert!(best.median_ms <= naive * tie, "best {} ms, naive {naive} ms", best.median_ms);
    // The time line's phases were measured, within the measuring time.
    let s = &d.shares[0];
    let p = &s.phases;
    assert!(p.build_s > 0.0 && p.gold_s > 0.0 && p.run_s > 0.0 && p.derive_s > 0.0, "{p:?}");
    assert!(p.total() <= s.busy_s + 1e-6, "{p:?} against {} s", s.busy_s);
    // The best row validated.
    let rows = csv_rows(&report.csv);
    let row = rows.iter().find(|r| r[0] == best.candidate.to_string()).unwrap();
    assert_eq!(row[4], "ok", "{row:?}");
    assert!(rows.len() >= 2 && rows.iter().all(|r| r[1] == devs[0].name));
    // best.lift parses again, and replaying best.derivation on the original
    // gives the same kernel.
    let text = std::fs::read_to_string(out.join("best.lift")).unwrap();
    let reparsed = lift::parse::parse_program(&SourceFile::new("best.lift", text)).unwrap();
    let der = std::fs::read_to_string(out.join("best.derivation")).unwrap();
    let der = lift::rewrite::parse_derivation(&der).unwrap();
    let base = lift::rewrite::prepare(&prog, "scalHigh").unwrap();
    let replayed = lift::rewrite::replay(&base, "scalHigh", &der).unwrap();
    let last = replayed.last().map_or(base.clone(), |r| r.program.clone());
    let o = lift::compile::CompileOptions { local: best.local, ..Default::default() };
    let a = lift::compile::compile(&reparsed, "scalHigh", &o).unwrap();
    let b = lift::compile::compile(&last, "scalHigh", &o).unwrap();
    assert_eq!(a.source, b.source);
    // The search ran on the user's program: no search.lift.
    assert!(!out.join("search.lift").exists());
    std::fs::remove_dir_all(&out).ok();
}

/// The search's fastest candidates are measured again compiled for the
/// timed sizes (`explore::specialise`): each is logged as a row of its own
/// that validated, and a faster one is written with a note saying so.
#[test]
fn the_fastest_are_measured_again_compiled_for_the_timed_sizes() {
    let Some(devs) = pocl() else {
        println!("skipped: no OpenCL device");
        return;
    };
    let out = tmp("specialise");
    let prog = load("benchmarks/generality/mm_nn.lift");
    let mut o = opts(&out, 30, Some(8), false, 0);
    o.def = "mm_nn".into();
    o.sizes = BTreeMap::from([("M".to_string(), 96), ("N".to_string(), 64), ("K".to_string(), 48)]);
    o.specialise = true;
    let report = explore::explore(&prog, &devs, &o).unwrap();
    let d = &report.devices[0];
    let best = d.best.as_ref().expect("a validated candidate");
    let rows = csv_rows(&report.csv);
    let mark = lift::explore::specialise::MARK;
    let again: Vec<_> = rows.iter().filter(|r| r[6].ends_with(mark)).collect();
    assert!(!again.is_empty() && again.len() <= lift::explore::specialise::LEADERS, "{rows:?}");
    for r in &again {
        assert_eq!(r[4], "ok", "{r:?}");
        // Each is a measured candidate of the search, compiled for its sizes.
        let generic = r[6].trim_end_matches(mark).trim_end();
        assert!(rows.iter().any(|g| g[6] == generic && g[7] == r[7] && g[4] == "ok"), "{r:?}");
    }
    let text = std::fs::read_to_string(out.join("best.lift")).unwrap();
    assert_eq!(best.static_sizes, best.params.ends_with(mark), "{}", best.params);
    assert_eq!(best.static_sizes, text.contains("compiled for these sizes"), "{text}");
    std::fs::remove_dir_all(&out).ok();
}

/// The near-fastest candidates are timed again side by side
/// (`explore::runoff`) where the search measured two or more within the
/// tie band: the one written keeps its time from the search, and its
/// rounds' median is within the rounds' band of the fastest's.
#[test]
fn the_near_fastest_are_timed_again_side_by_side() {
    let Some(devs) = pocl() else {
        println!("skipped: no OpenCL device");
        return;
    };
    let out = tmp("runoff");
    // Small enough that launch overhead dominates: many near-equal times.
    let mut o = opts(&out, 20, Some(40), false, 2);
    o.sizes = sizes(1 << 24);
    let report = explore::explore(&load("benchmarks/scal.lift"), &devs, &o).unwrap();
    let d = &report.devices[0];
    let best = d.best.as_ref().expect("a validated candidate");
    let rows = csv_rows(&report.csv);
    let times: Vec<f64> = rows.iter().filter(|r| r[4] == "ok").filter_map(|r| r[5].parse().ok()).collect();
    let fastest = times.iter().copied().fold(f64::INFINITY, f64::min);
    let near = times.iter().filter(|&&t| lift::explore::choice::within(t, fastest)).count();
    match &d.runoff {
        None => {
            println!("no runoff: {near} within the tie band of {} measured", times.len());
            assert!(near < 2, "{near} candidates within the tie band and no runoff: {rows:?}")
        }
        Some(r) => {
            println!("{} timed again, band {:.4}", r.times.len(), r.band);
            assert!(r.times.len() >= 2 && r.times.len() <= lift::explore::runoff::MOST, "{r:?}");
            assert!(r.rounds >= 1 && r.rounds <= lift::explore::runoff::ROUNDS, "{r:?}");
            assert!(r.band >= lift::explore::runoff::FLOOR && r.band <= lift::explore::choice::TIE, "{r:?}");
            let again = r.times.iter().find(|t| t.0 == best.candidate).expect("the best was timed again");
            // Its time is the search's (its log row's); its rounds tie it.
            assert_eq!(again.1, best.median_ms);
            let quickest = r.times.iter().map(|t| t.2).fold(f64::INFINITY, f64::min);
            assert!(again.2 <= quickest * (1.0 + r.band), "{r:?}");
        }
    }
    std::fs::remove_dir_all(&out).ok();
}

/// A product the search joins first (`flatten::joined_products`): its
/// derivation replays on `search.lift`, written beside it, to best.lift's
/// kernel (it does not match the user's file).
#[test]
fn a_prepared_search_writes_the_program_its_derivation_replays_on() {
    let Some(devs) = pocl() else {
        println!("skipped: no OpenCL device");
        return;
    };
    let out = tmp("search-lift");
    let prog = load("benchmarks/generality/mm_nn.lift");
    let mut o = opts(&out, 20, Some(3), false, 0);
    o.def = "mm_nn".into();
    o.sizes = BTreeMap::from([("M".to_string(), 64), ("N".to_string(), 64), ("K".to_string(), 32)]);
    let report = explore::explore(&prog, &devs, &o).unwrap();
    let best = report.devices[0].best.as_ref().expect("a validated candidate");
    let read = |f: &str| std::fs::read_to_string(out.join(f)).unwrap();
    let der_text = read("best.derivation");
    assert!(der_text.contains("# replays on search.lift beside it"), "{der_text}");
    let searched = lift::parse::parse_program(&SourceFile::new("search.lift", read("search.lift"))).unwrap();
    let der = lift::rewrite::parse_derivation(&der_text).unwrap();
    let base = lift::rewrite::prepare(&searched, "mm_nn").unwrap();
    let last = lift::rewrite::replay(&base, "mm_nn", &der).unwrap().pop().map_or(base.clone(), |r| r.program);
    let reparsed = lift::parse::parse_program(&SourceFile::new("best.lift", read("best.lift"))).unwrap();
    let c = lift::compile::CompileOptions { local: best.local, ..Default::default() };
    let a = lift::compile::compile(&reparsed, "mm_nn", &c).unwrap();
    let b = lift::compile::compile(&last, "mm_nn", &c).unwrap();
    assert_eq!(a.source, b.source);
    std::fs::remove_dir_all(&out).ok();
}

/// The reduction shapes reach a partial-results kernel for `asum` and `dot`
/// that validates (with the fixed second stage `sumPartials`) and beats
/// the naive single-work-item lowering measured in the same run.
#[test]
fn explores_asum_and_dot_with_partial_reductions_on_pocl() {
    let Some(devs) = pocl() else {
        println!("skipped: no OpenCL device");
        return;
    };
    for name in ["asum", "dot"] {
        let out = tmp(name);
        let prog = load(&format!("benchmarks/icfp15/{name}.lift"));
        let mut o = opts(&out, 40, Some(24), false, 0);
        o.def = name.into();
        o.sizes = sizes(1 << 20);
        o.then = vec!["sumPartialsTree".into(), "sumPartials".into()];
        o.limits.reductions = true;
        let report = explore::explore(&prog, &devs, &o).unwrap();
        // Each valid candidate that leaves partial results ran the first
        // second stage that fits them (the tree for multiples of 256, the
        // wg-tree shapes here); the naive lowering computes the whole
        // result and runs none.
        let rows = csv_rows(&report.csv);
        let ok: Vec<_> = rows.iter().filter(|r| r[4] == "ok").collect();
        assert!(ok.iter().any(|r| r[10] == "then sumPartialsTree"), "{name}: no tree stage: {ok:?}");
        for r in &ok {
            let partial = r[7].contains("extract @");
            assert_eq!(partial, r[10].contains("then sumPartials"), "{name}: {r:?}");
        }
        let d = &report.devices[0];
        let best = d.best.as_ref().expect("a validated candidate");
        let naive = d.naive_ms.expect("the naive lowering was measured");
        assert!(best.median_ms < naive, "{name}: best {} ms, naive {naive} ms", best.median_ms);
        // The best is a partial reduction: its derivation extracts a kernel.
        assert!(best.derivation.iter().any(|l| l.starts_with("extract @")), "{:?}", best.derivation);
        let rows = csv_rows(&report.csv);
        let row = rows.iter().find(|r| r[0] == best.candidate.to_string()).unwrap();
        assert_eq!(row[4], "ok", "{row:?}");
        // best.derivation replays (its arithmetic parameters included).
        let der = std::fs::read_to_string(out.join("best.derivation")).unwrap();
        let der = lift::rewrite::parse_derivation(&der).unwrap();
        let base = lift::rewrite::prepare(&prog, name).unwrap();
        lift::rewrite::replay(&base, name, &der).unwrap();
        std::fs::remove_dir_all(&out).ok();
    }
}

#[test]
fn resume_continues_and_the_cache_measures_nothing_twice() {
    let Some(devs) = pocl() else {
        println!("skipped: no OpenCL device");
        return;
    };
    let out = tmp("resume");
    let prog = load("benchmarks/scal.lift");
    let first = explore::explore(&prog, &devs, &opts(&out, 60, Some(3), false, 1)).unwrap();
    assert_eq!(first.devices[0].measured, 3);
    let rows1 = csv_rows(&first.csv);
    assert_eq!(rows1.len(), 3);
    // A killed run leaves a torn line; resuming drops it.
    let mut text = std::fs::read_to_string(&first.csv).unwrap();
    text.push_str("3,torn");
    std::fs::write(&first.csv, text).unwrap();
    // The same candidates again: all from the cache, no new rows.
    let again = explore::explore(&prog, &devs, &opts(&out, 60, Some(3), true, 1)).unwrap();
    assert_eq!(again.devices[0].measured, 0);
    assert_eq!(csv_rows(&again.csv), rows1);
    // Going further measures only new candidates.
    let more = explore::explore(&prog, &devs, &opts(&out, 60, Some(5), true, 1)).unwrap();
    assert_eq!(more.devices[0].measured, 2);
    let rows = csv_rows(&more.csv);
    assert_eq!(rows.len(), 5);
    assert_eq!(&rows[..3], &rows1[..]);
    let ids: std::collections::HashSet<(String, String)> =
        rows.iter().map(|r| (r[6].clone(), r[7].clone())).collect();
    assert_eq!(ids.len(), 5, "no candidate logged twice");
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn the_candidate_sequence_depends_only_on_the_seed() {
    let prog = load("benchmarks/dot.lift");
    let s = sizes(1 << 20);
    let limits = SpaceLimits::default();
    let p1 = explore::plan(&prog, "dotHigh", &s, &limits).unwrap();
    let p2 = explore::plan(&prog, "dotHigh", &s, &limits).unwrap();
    assert!(p1.shapes.len() > 4, "{} shapes", p1.shapes.len());
    let a = explore::dry_run(&p1, &s, 11, 40);
    assert_eq!(a, explore::dry_run(&p2, &s, 11, 40));
    assert_eq!(a.len(), 40);
    // The naive lowering comes first.
    assert!(a[0].starts_with("0 "), "{}", a[0]);
    // Missing sizes are a clear error.
    let e = explore::plan(&prog, "dotHigh", &BTreeMap::new(), &limits).err().unwrap();
    assert_eq!(e.to_string(), "size `N` of the def is not given (pass --size N=VALUE)");
    let e = explore::plan(&prog, "nope", &s, &limits).err().unwrap();
    assert_eq!(e.to_string(), "no `def nope` in the program");
}

#[test]
fn then_names_a_def_of_the_file() {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_lift"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "explore",
            "benchmarks/icfp15/asum.lift",
            "--def",
            "asum",
            "--then",
            "nope",
            "--size",
            "N=4096",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("benchmarks/icfp15/asum.lift: --then nope: no `def nope` in the program"), "{err}");
}

/// `asvector-map` over `zip(x, y)` vectorises both arrays and keeps the
/// value (the `vec-chunks` shape of `dot` relies on it).
#[test]
fn asvector_map_over_zip_keeps_the_value() {
    use lift::validate::{gold, make_inputs};
    let prog = load("benchmarks/icfp15/dot.lift");
    let base = lift::rewrite::prepare(&prog, "dot").unwrap();
    let der = lift::rewrite::parse_derivation("vectorize-reduce @ root n=4\nasvector-map @ 2.1.2\n").unwrap();
    let last = lift::rewrite::replay(&base, "dot", &der).unwrap().pop().unwrap().program;
    let text = lift::parse::print_program(&lift::rewrite::release(&last, "dot"));
    assert!(text.contains("zip(asVector(4, x), asVector(4, y))"), "{text}");
    let s = sizes(1004);
    let inputs = make_inputs(&prog, "dot", &s, 3).unwrap();
    let (a, b) = (gold(&prog, "dot", &inputs, &s).unwrap(), gold(&last, "dot", &inputs, &s).unwrap());
    let c = lift::validate::compare(&b, &a, 1e-5, 1e-6);
    assert!(c.ok, "{}", c.message);
}

#[test]
fn row_shapes_compile_and_validate_on_pocl_at_odd_sizes() {
    if pocl().is_none() {
        println!("skipped: no OpenCL device");
        return;
    }
    // 37 rows (row-wg needs nothing of M), rows of 384 = 3 * 128.
    let (m, n) = (37u64, 384u64);
    let dir = tmp("rows-exec");
    std::fs::create_dir_all(&dir).unwrap();
    let mut seed = 7u64;
    let mut rnd = move || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((seed >> 40) % 1000) as f32 / 1000.0
    };
    for (name, len) in [("A", m * n), ("x", n), ("y", m)] {
        let shape = if name == "A" { vec![m, n] } else { vec![len] };
        let data: Vec<f32> = (0..len).map(|_| rnd()).collect();
        std::fs::write(dir.join(format!("{name}.npy")), npy::npy_bytes(&shape, data.into_iter())).unwrap();
    }
    let sizes = BTreeMap::from([("M".to_string(), m as i64), ("N".to_string(), n as i64)]);
    for (file, def) in [("benchmarks/icfp15/gemv.lift", "gemv"), ("benchmarks/gemv.lift", "gemvHigh")] {
        let base = lift::rewrite::prepare(&load(file), def).unwrap();
        let shapes = explore::rows::row_shapes(&base, def, &sizes);
        assert_eq!(shapes.len(), 2, "{def}");
        for (k, s) in shapes.iter().enumerate() {
            // The -vec shape (1) has 96 float4s per row.
            let ls: &[i64] = if k < 1 { &[32, 128] } else { &[32] };
            for &l in ls {
                let inst = s.instantiate(&base, def, &[l]).unwrap();
                let der = dir.join(format!("{def}-{k}-{l}.derivation"));
                std::fs::write(&der, inst.derivation.join("\n")).unwrap();
                let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_lift"));
                cmd.arg("exec").arg(file).args(["--def", def, "--device", "pocl", "--check", "--derivation"]);
                // No --local or --global: the launch inference gives l lanes
                // per row.
                cmd.arg(&der);
                for p in ["A", "x", "y"] {
                    cmd.args(["--input", &format!("{p}={}", dir.join(format!("{p}.npy")).display())]);
                }
                cmd.args(["--input", "alpha=1.5", "--input", "beta=-0.5", "--output"])
                    .arg(dir.join("out.npy"));
                let o = cmd.output().unwrap();
                let text =
                    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
                assert!(o.status.success() && text.contains("check: ok"), "{def} shape {k} l={l}: {text}");
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A softmax over rows of a prime length (67): the row shapes pad both
/// reductions, the sum of `exp(x - m)` with a mask (`reduce-pad-mask`: no
/// constant gives 0 for every `m`), and the kernel computes what the
/// interpreter does.
#[test]
fn softmax_rows_of_a_prime_length_are_padded_and_validate_on_pocl() {
    if pocl().is_none() {
        println!("skipped: no OpenCL device");
        return;
    }
    let (m, n) = (7u64, 67u64);
    let dir = tmp("softmax-prime");
    std::fs::create_dir_all(&dir).unwrap();
    let data: Vec<f32> = (0..m * n).map(|i| ((i * 37) % 101) as f32 / 25.0 - 2.0).collect();
    std::fs::write(dir.join("a.npy"), npy::npy_bytes(&[m, n], data.into_iter())).unwrap();
    let sizes = BTreeMap::from([("M".to_string(), m as i64), ("N".to_string(), n as i64)]);
    let file = "benchmarks/generality/softmax.lift";
    let base = lift::rewrite::prepare(&load(file), "softmax").unwrap();
    let shapes = explore::rows::row_shapes(&base, "softmax", &sizes);
    let rule = |s: &explore::space::Shape, name: &str| {
        s.steps.iter().filter(|s| s.rule.is_some_and(|r| r.name == name)).count()
    };
    let shape = shapes
        .iter()
        .find(|s| rule(s, "reduce-pad") == 1 && rule(s, "reduce-pad-mask") == 1)
        .expect("both padded");
    let low = &explore::space::lowerings(&base, "softmax", shape, 4)[0];
    // Padded to 80, a multiple of 16: the lane counts that divide it.
    assert_eq!(low.slots[0].domain, [16]);
    for &l in &low.slots[0].domain {
        let mut values = low.defaults();
        values[0] = l;
        let inst = low.instantiate(&base, "softmax", &values).unwrap();
        let der = dir.join(format!("softmax-{l}.derivation"));
        std::fs::write(&der, inst.derivation.join("\n")).unwrap();
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_lift"))
            .arg("exec")
            .arg(file)
            .args(["--def", "softmax", "--device", "pocl", "--check", "--derivation"])
            .arg(&der)
            .args(["--input", &format!("a={}", dir.join("a.npy").display()), "--output"])
            .arg(dir.join("out.npy"))
            .output()
            .unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        assert!(o.status.success() && text.contains("check: ok"), "l={l}: {text}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn explores_gemv_with_row_shapes_on_pocl() {
    let Some(devs) = pocl() else {
        println!("skipped: no OpenCL device");
        return;
    };
    let out = tmp("gemv-rows");
    let prog = load("benchmarks/icfp15/gemv.lift");
    let mut o = opts(&out, 60, Some(14), false, 0);
    o.def = "gemv".into();
    o.sizes = BTreeMap::from([("M".to_string(), 64), ("N".to_string(), 256)]);
    let report = explore::explore(&prog, &devs, &o).unwrap();
    assert!(report.devices[0].best.is_some());
    let rows = csv_rows(&report.csv);
    // Both row shapes validated against the interpreter: `ok`, or `slow`
    // (validated, then not timed because its first run, under the load of
    // the parallel suite, predicted a hopeless time).
    let ok: Vec<_> =
        rows.iter().filter(|r| r[7].contains("reduce-lanes @") && (r[4] == "ok" || r[4] == "slow")).collect();
    for vec4 in [false, true] {
        let iterate = |r: &Vec<String>| -> Option<String> {
            if r[7].starts_with("vectorize-reduce @") != vec4 {
                return None;
            }
            r[7].split(" ; ").find(|s| s.starts_with("partred-iterate")).map(str::to_string)
        };
        // The tree halves (k = 2).
        assert!(ok.iter().filter_map(|r| iterate(r)).any(|s| s.contains("k=2")), "{rows:?}");
    }
    std::fs::remove_dir_all(&out).ok();
}

/// A full reduction explored as a new user would, with no `--then`: the
/// second stages are derived from the def's own `reduce` (a tree of one
/// work-group for multiples of 256 partials, one work-item otherwise),
/// also for a `reduce` with no map in front, at a size that is not a power
/// of two.
#[test]
fn column_reductions_leave_partials_per_chunk_on_pocl() {
    let Some(devs) = pocl() else {
        println!("skipped: no OpenCL device");
        return;
    };
    let src = "userfun mx(x: float, y: float): float { return fmax(x, y); }\n\
               userfun add(x: float, y: float): float { return x + y; }\n\
               userfun mul(x: float, y: float): float { return x * y; }\n\
               def colmax(a: [[float]N]M) = map(\\c -> reduce(mx, -3.0e38f) $ c) o transpose $ a\n\
               def gemvt(a: [[float]N]M, x: [float]M) = map(\\c -> reduce(add, 0.0f) o map(\\(p, q) -> mul(p, q)) $ zip(c, x)) o transpose $ a\n\
               def colmean(inv: float, a: [[float]N]M) = map(\\c -> map(\\s -> mul(s, inv)) o reduce(add, 0.0f) $ c) o transpose $ a\n\
               def gemvtb(a: [[float]N]M, x: [float]M, b: [float]N) = map(\\(c, bj) -> add(bj, at(0, reduce(add, 0.0f) o map(\\(p, q) -> mul(p, q)) $ zip(c, x)))) $ zip(transpose(a), b)\n";
    let prog = lift::parse::parse_program(&SourceFile::new("user.lift", src.to_string())).unwrap();
    // colmean: a map after each reduction, reading a scalar of the def,
    // applied by the derived stage; gemvtb: a bias per column read after
    // each reduction (the search runs on the reductions alone, `columns`).
    for name in ["colmax", "gemvt", "colmean", "gemvtb"] {
        let out = tmp(&format!("partials-{name}"));
        let mut o = opts(&out, 60, Some(16), false, 0);
        o.def = name.into();
        // Not powers of two: 3 * 256 rows, 100 columns.
        o.sizes = BTreeMap::from([("M".to_string(), 768), ("N".to_string(), 100)]);
        let report = explore::explore(&prog, &devs, &o).unwrap();
        let rows = csv_rows(&report.csv);
        // Kernels leaving partial results per chunk of each column, added
        // up by the derived rows stage, validated against the interpreter.
        let partial = |r: &&Vec<String>| r[4] == "ok" && r[7].contains("map-fission @ root ; extract @ 1");
        assert!(rows.iter().filter(partial).count() >= 2, "{name}: {rows:?}");
        let text = std::fs::read_to_string(out.join("best.lift")).unwrap();
        let again = lift::parse::parse_program(&SourceFile::new("best.lift", text)).unwrap();
        assert!(again.def(&format!("{name}_then_rows")).is_some());
        std::fs::remove_dir_all(&out).ok();
    }
}

#[test]
fn full_reductions_need_no_then_on_pocl() {
    let Some(devs) = pocl() else {
        println!("skipped: no OpenCL device");
        return;
    };
    let src = "userfun mx(x: float, y: float): float { return fmax(x, y); }\n\
               userfun add(x: float, y: float): float { return x + y; }\n\
               userfun sq(x: float): float { return x * x; }\n\
               def maxall(x: [float]N) = reduce(mx, -3.0e38f) $ x\n\
               def sumsq(x: [float]N) = reduce(add, 0.0f) o map(sq) $ x\n";
    let prog = lift::parse::parse_program(&SourceFile::new("user.lift", src.to_string())).unwrap();
    let mut used = std::collections::BTreeSet::new();
    for name in ["maxall", "sumsq"] {
        let out = tmp(&format!("derived-{name}"));
        let mut o = opts(&out, 60, Some(24), false, 0);
        o.def = name.into();
        // 3 * 2^15: partial counts of multiples of 256 and of others.
        o.sizes = sizes(3 << 15);
        let report = explore::explore(&prog, &devs, &o).unwrap();
        let rows = csv_rows(&report.csv);
        let ok: Vec<_> = rows.iter().filter(|r| r[4] == "ok").collect();
        // Every valid candidate that leaves partial results ran a derived
        // second stage; the naive lowering computes the one value itself.
        let prefix = format!("then {name}_then_");
        let stage = |r: &Vec<String>| r[10].split(&prefix).nth(1).map(str::to_string);
        let partial = |r: &Vec<String>| r[7].contains("extract @");
        assert!(!ok.is_empty() && ok.iter().all(|r| stage(r).is_some() == partial(r)), "{name}: {ok:?}");
        used.extend(ok.iter().filter_map(|r| stage(r)));
        let d = &report.devices[0];
        assert!(d.best.is_some() && d.naive_ms.is_some(), "{name}: a best and the naive lowering");
        // Parallel partial kernels (an `extract` of the partial reduction)
        // validated. Which one is fastest is not asserted: on PoCL at this
        // size the one-work-item loop may win under the suite's load, and
        // speed is measured by the harness, not by unit tests.
        let parallel = |r: &&&Vec<String>| r[7].contains("extract @");
        assert!(ok.iter().filter(parallel).count() >= 2, "{name}: {ok:?}");
        // best.lift holds the derived stages and parses again.
        let text = std::fs::read_to_string(out.join("best.lift")).unwrap();
        let again = lift::parse::parse_program(&SourceFile::new("best.lift", text)).unwrap();
        assert!(
            again.def(&format!("{name}_then_tree")).is_some()
                && again.def(&format!("{name}_then_seq")).is_some()
        );
        std::fs::remove_dir_all(&out).ok();
    }
    // The tree pads the partials with the reduction's initial value to
    // whole lanes, so it takes every count (at these sizes and their
    // validation sizes, counts of multiples of 256 and of others): the
    // sequential stage, next in order, is not needed.
    assert_eq!(used.into_iter().collect::<Vec<_>>(), ["tree"]);
}

/// Products with a map after the reduction, as a user writes them (`0.5 A
/// B`, and `relu(A Bᵀ)` whose activation has an `if`): the tiled shapes
/// apply the map as they store each result, scalars and vectors, and
/// validate against the interpreter at sizes that are not powers of two.
#[test]
fn products_with_a_map_after_the_reduction_are_tiled_on_pocl() {
    let Some(devs) = pocl() else {
        println!("skipped: no OpenCL device");
        return;
    };
    let src = "userfun add(x: float, y: float): float { return x + y; }\n\
               userfun mul(x: float, y: float): float { return x * y; }\n\
               userfun relu(x: float): float { if (x > 0.0f) { return x; } return 0.0f; }\n\
               def mm_half(s: float, a: [[float]K]M, b: [[float]N]K) = map(\\r -> map(\\c -> map(\\v -> mul(v, s)) o reduce(add, 0.0f) o map(\\(p, q) -> mul(p, q)) $ zip(r, c)) o transpose $ b) $ a\n\
               def mm_relu(a: [[float]K]M, b: [[float]K]N) = map(\\r -> map(\\c -> map(relu) o reduce(add, 0.0f) o map(\\(p, q) -> mul(p, q)) $ zip(r, c)) $ b) $ a\n\
               def lin(x: [[float]K]M, w: [[float]K]N, bias: [float]N) = map(\\r -> map(\\(c, bj) -> relu(add(bj, at(0, reduce(add, 0.0f) o map(\\(p, q) -> mul(p, q)) $ zip(r, c))))) $ zip(w, bias)) $ x\n";
    let prog = lift::parse::parse_program(&SourceFile::new("user.lift", src.to_string())).unwrap();
    // `lin` (a linear layer: a bias per column, then relu) is searched as
    // the product alone and a second stage, validated against `lin`.
    for name in ["mm_half", "mm_relu", "lin"] {
        let out = tmp(&format!("epilogue-{name}"));
        let mut o = opts(&out, 60, Some(6), false, 0);
        o.def = name.into();
        o.sizes = [("M", 192), ("N", 384), ("K", 48)].map(|(k, v)| (k.to_string(), v)).into();
        let report = explore::explore(&prog, &devs, &o).unwrap();
        let rows = csv_rows(&report.csv);
        // The tiled shapes come first (accumulators as float4s: `relu`
        // applied per component); every one validated.
        let tiled: Vec<_> = rows.iter().filter(|r| r[7].starts_with("tile-mm @")).collect();
        assert!(tiled.len() >= 4, "{name}: {rows:?}");
        assert!(tiled.iter().all(|r| r[4] == "ok" || r[4] == "slow"), "{name}: {rows:?}");
        let best = std::fs::read_to_string(out.join("best.lift")).unwrap();
        assert_eq!(
            best.contains("def lin_then_epilogue(p: [[float]N]M, bias: [float]N)"),
            name == "lin",
            "{best}"
        );
        std::fs::remove_dir_all(&out).ok();
    }
}

/// A separable filter (a row pass, then a column pass over its transpose)
/// is explored as its row pass with the column pass as a second stage:
/// before, each work-item computed the whole row pass and no candidate
/// was ever timed. A square image's stage gets sizes of its own.
#[test]
fn a_pass_read_transposed_is_a_kernel_of_its_own_on_pocl() {
    let Some(devs) = pocl() else {
        println!("skipped: no OpenCL device");
        return;
    };
    let row = "map(map(\\w -> g3(at(0, w), at(1, w), at(2, w))) o slide(3, 1) o pad(1, 1, mirror))";
    let src = format!(
        "userfun g3(a: float, b: float, c: float): float {{ return 0.25f * a + 0.5f * b + 0.25f * c; }}\n\
         def sep(img: [[float]W]H) = transpose o {row} o transpose o {row} $ img\n\
         def sq(img: [[float]N]N) = transpose o {row} o transpose o {row} $ img\n"
    );
    let prog = lift::parse::parse_program(&SourceFile::new("user.lift", src)).unwrap();
    for (name, sz) in [("sep", vec![("H", 67), ("W", 45)]), ("sq", vec![("N", 53)])] {
        let out = tmp(&format!("passes-{name}"));
        let mut o = opts(&out, 60, Some(4), false, 0);
        o.def = name.into();
        o.sizes = sz.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        let report = explore::explore(&prog, &devs, &o).unwrap();
        let rows = csv_rows(&report.csv);
        assert!(!rows.is_empty(), "{name}");
        assert!(rows.iter().all(|r| r[4] == "ok"), "{name}: {rows:?}");
        let best = std::fs::read_to_string(out.join("best.lift")).unwrap();
        assert!(best.contains(&format!("followed by the first of {name}_then_rest")), "{best}");
        std::fs::remove_dir_all(&out).ok();
    }
}

/// A def of views alone (`transpose $ a`) has no map to write its result:
/// the search copies it with a map of `id` at every level, and the copy
/// validates against the def.
#[test]
fn a_def_of_views_alone_is_copied_on_pocl() {
    let Some(devs) = pocl() else {
        println!("skipped: no OpenCL device");
        return;
    };
    let src = "def tr(a: [[float]N]M) = transpose $ a\n";
    let prog = lift::parse::parse_program(&SourceFile::new("user.lift", src.to_string())).unwrap();
    let out = tmp("copy-tr");
    let mut o = opts(&out, 60, Some(3), false, 0);
    o.def = "tr".into();
    o.sizes = [("M", 37), ("N", 29)].map(|(k, v)| (k.to_string(), v)).into();
    let report = explore::explore(&prog, &devs, &o).unwrap();
    let rows = csv_rows(&report.csv);
    assert!(rows.iter().any(|r| r[4] == "ok"), "{rows:?}");
    let best = std::fs::read_to_string(out.join("best.lift")).unwrap();
    assert!(best.contains("def tr_copy(a: [[float]N]M)"), "{best}");
    std::fs::remove_dir_all(&out).ok();
}

/// A `--then` def must take the partial results as its first array.
#[test]
fn then_needs_an_array_for_the_partial_results() {
    if pocl().is_none() {
        println!("skipped: no OpenCL device");
        return;
    }
    let dir = tmp("then-no-array");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("k.lift");
    std::fs::write(
        &file,
        "userfun add(x: float, y: float): float { return x + y; }\n\
         def s(x: [float]N) = reduce(add, 0.0f) $ x\n\
         def k(a: float) = mapGlb(0, \\i -> add(i, a)) $ generate(4, \\i -> 1.0f)\n",
    )
    .unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_lift"))
        .args(["explore", file.to_str().unwrap(), "--def", "s", "--then", "k", "--size", "N=4096"])
        .args(["--device", "pocl", "--budget", "3s", "--out", dir.join("out").to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{err}");
    let want = "--then k: expected a def whose first parameter is an array (`[T]P`, the partial results), found none";
    assert!(err.contains(want), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A batch of column reductions (a 3D tensor summed along its middle
/// axis) is searched as one map of reductions over the joined batch, so
/// the partial shapes apply, and validated against the user's def.
#[test]
fn a_batch_of_column_reductions_gets_partials_on_pocl() {
    let Some(devs) = pocl() else {
        println!("skipped: no OpenCL device");
        return;
    };
    let src = "userfun add(x: float, y: float): float { return x + y; }\n\
               def sum_mid(a: [[[float]Z]Y]X) = map(\\p -> map(\\c -> reduce(add, 0.0f) $ c) o transpose $ p) $ a\n";
    let prog = lift::parse::parse_program(&SourceFile::new("user.lift", src.to_string())).unwrap();
    let out = tmp("batch-columns");
    let mut o = opts(&out, 60, Some(12), false, 0);
    o.def = "sum_mid".into();
    o.sizes = [("X", 6), ("Y", 768), ("Z", 40)].map(|(k, v)| (k.to_string(), v)).into();
    let report = explore::explore(&prog, &devs, &o).unwrap();
    let rows = csv_rows(&report.csv);
    let partial = |r: &&Vec<String>| r[4] == "ok" && r[7].contains("map-fission @ root ; extract @ 1");
    assert!(rows.iter().filter(partial).count() >= 2, "{rows:?}");
    let best = std::fs::read_to_string(out.join("best.lift")).unwrap();
    assert!(best.contains("def sum_mid_flat_then_rows("), "{best}");
    std::fs::remove_dir_all(&out).ok();
}

/// A square product written with one size has a million points at the
/// default validation size of a one-size def, each reducing a thousand
/// values: more than the interpreter holds. The validation size comes
/// down until the interpreter's own estimate fits its budget, and the
/// candidates validate.
#[test]
fn a_square_product_with_one_size_validates_on_pocl() {
    let Some(devs) = pocl() else {
        println!("skipped: no OpenCL device");
        return;
    };
    let src = "userfun add(x: float, y: float): float { return x + y; }\n\
               userfun mul(x: float, y: float): float { return x * y; }\n\
               def sq(a: [[float]N]N, b: [[float]N]N) = map(\\r -> map(\\c -> reduce(add, 0.0f) o map(\\(p, q) -> mul(p, q)) $ zip(r, c)) o transpose $ b) $ a\n";
    let prog = lift::parse::parse_program(&SourceFile::new("user.lift", src.to_string())).unwrap();
    let out = tmp("square-one-size");
    let mut o = opts(&out, 60, Some(3), false, 0);
    o.def = "sq".into();
    o.sizes = [("N".to_string(), 512)].into();
    let report = explore::explore(&prog, &devs, &o).unwrap();
    let rows = csv_rows(&report.csv);
    assert!(rows.iter().all(|r| r[4] == "ok" || r[4] == "slow"), "{rows:?}");
    let n: i64 = rows[0][9].trim_start_matches("N=").parse().unwrap();
    assert!((17..512).contains(&n), "validated at {}", rows[0][9]);
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn staged_rows_compile_and_validate_on_pocl_at_odd_sizes() {
    if pocl().is_none() {
        println!("skipped: no OpenCL device");
        return;
    }
    // A softmax reads its row three times: its row shapes come also with
    // the row staged in local memory (`row-to-local`), whose length the
    // launch gives (rows of 384 floats, 37 rows).
    let (m, n) = (37u64, 384u64);
    let dir = tmp("rows-staged");
    std::fs::create_dir_all(&dir).unwrap();
    let mut seed = 11u64;
    let data: Vec<f32> = (0..m * n)
        .map(|_| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 40) % 1000) as f32 / 250.0 - 2.0
        })
        .collect();
    std::fs::write(dir.join("a.npy"), npy::npy_bytes(&[m, n], data.into_iter())).unwrap();
    let (file, def) = ("benchmarks/generality/softmax.lift", "softmax");
    let sizes = BTreeMap::from([("M".to_string(), m as i64), ("N".to_string(), n as i64)]);
    let base = lift::rewrite::prepare(&load(file), def).unwrap();
    let shapes = explore::rows::row_shapes(&base, def, &sizes);
    let mut staged = 0;
    for (k, s) in shapes.iter().enumerate() {
        let low = &explore::space::lowerings(&base, def, s, 4)[0];
        let inst = low.instantiate(&base, def, &[32]).unwrap();
        if !inst.derivation.iter().any(|l| l.starts_with("row-to-local")) {
            continue;
        }
        staged += 1;
        let der = dir.join(format!("{k}.derivation"));
        std::fs::write(&der, inst.derivation.join("\n")).unwrap();
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_lift"))
            .arg("exec")
            .arg(file)
            .args(["--def", def, "--device", "pocl", "--check", "--derivation"])
            .arg(&der)
            .arg("--input")
            .arg(format!("a={}", dir.join("a.npy").display()))
            .arg("--output")
            .arg(dir.join("out.npy"))
            .output()
            .unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        assert!(o.status.success() && text.contains("check: ok"), "shape {k}: {text}");
    }
    assert_eq!(staged, 4);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_working_device_passes_the_liveness_probe() {
    let Some(devs) = pocl() else {
        println!("skipped: no OpenCL device");
        return;
    };
    // The probe a search runs after a failed run (a fault that would make
    // every later candidate fail stops the search instead).
    let rt = lift::runtime::Runtime::new(devs[0].clone()).unwrap();
    assert!(explore::measure::device_alive(&rt));
}

/// Buffers filled by the device read back as filled: zeros (every
/// output buffer of a launch), a float (the limit line's copy), an odd
/// count and the one-element buffer of an empty array.
#[test]
fn device_filled_buffers_read_back() {
    let Some(devs) = pocl() else {
        println!("skipped: no OpenCL device");
        return;
    };
    let rt = lift::runtime::Runtime::new(devs[0].clone()).unwrap();
    let f = rt.filled_f32("f", 2.5, 1001).unwrap();
    assert_eq!(rt.download(&f).unwrap(), lift::types::HostArray::F32(vec![2.5; 1001]));
    let z = rt.zeroed("z", lift::runtime::ElemKind::I32, 4 * 37).unwrap();
    assert_eq!(rt.download(&z).unwrap(), lift::types::HostArray::I32(vec![0; 37]));
    let e = rt.zeroed("e", lift::runtime::ElemKind::F32, 0).unwrap();
    assert_eq!(rt.download(&e).unwrap(), lift::types::HostArray::F32(vec![]));
}

/// Rows whose length has few factors two (300 = 4 x 75) get lanes with an
/// odd tail (a halving tree over the twos, then one work-item adding the
/// odd part's partials), and those candidates validate against the
/// interpreter on PoCL (the search checks each at sizes that are not
/// powers of two before it times it).
#[test]
fn rows_of_few_factors_two_validate_with_an_odd_tail() {
    let Some(devs) = pocl() else {
        println!("skipped: no OpenCL device");
        return;
    };
    let out = tmp("oddrows");
    let prog = load("benchmarks/holdout/rowmean.lift");
    let mut o = opts(&out, 30, Some(12), false, 1);
    o.def = "rowmean".into();
    o.sizes = BTreeMap::from([("M".to_string(), 100), ("N".to_string(), 300)]);
    let report = explore::explore(&prog, &devs, &o).unwrap();
    let rows = csv_rows(&report.csv);
    let lanes: Vec<&Vec<String>> = rows.iter().filter(|r| r[6].starts_with("row-lanes=")).collect();
    assert!(!lanes.is_empty(), "no row-lanes candidate among {} rows", rows.len());
    // `slow`: validated, then predicted too slow to time.
    assert!(lanes.iter().all(|r| r[4] == "ok" || r[4] == "slow"), "{lanes:?}");
    assert!(lanes.iter().any(|r| r[7].contains("reduce-partred @ ")), "{lanes:?}");
    std::fs::remove_dir_all(&out).ok();
}

/// A kernel whose count makes whole work-groups only at large sizes (a
/// dot product's chunks of 128 pairs, one per work-item, in work-groups of
/// 1024: from 2^17 pairs up) is compiled to round its count up to whole
/// work-groups and validated at a small size, not at 2^17 (the
/// interpreter's gold there took most of a search's time).
#[test]
fn a_large_work_group_does_not_make_the_validation_size_large() {
    let Some(devs) = pocl() else {
        println!("skipped: no OpenCL device");
        return;
    };
    let funs = "userfun add(x: float, y: float): float { return x + y; }\n\
                userfun mult(x: float, y: float): float { return x * y; }\n\
                userfun multAndSumUp(acc: float, x: float, y: float): float { return acc + x * y; }\n";
    let high = format!(
        "{funs}def d(x: [float]N, y: [float]N) =\n  join o map(reduce(add, 0.0f) o map(\\xy -> mult(get(0, xy), get(1, xy)))) o split(128) $ zip(x, y)\n"
    );
    let low = format!(
        "{funs}def d(x: [float]N, y: [float]N) =\n  join o mapGlb(0, toGlobal(mapSeq(id)) o reduceSeq(\\(acc, xy) -> multAndSumUp(acc, get(0, xy), get(1, xy)), 0.0f)) o split(128) $ zip(x, y)\n"
    );
    let parse = |t: String| lift::parse::parse_program(&SourceFile::new("d.lift", t)).unwrap();
    let (original, found) = (parse(high), parse(low));
    let sizes = sizes(1 << 20);
    let job = explore::replay::Replay {
        original: &original,
        def: "d",
        found: &found,
        then_order: Vec::new(),
        local: Some([1024, 1, 1]),
        static_sizes: false,
        sizes: &sizes,
        seed: 3,
        warmup: 0,
        runs: 1,
    };
    let out = explore::replay::replay(&job, devs[0].clone()).unwrap();
    assert_eq!(out.status, explore::measure::Status::Ok, "{}", out.message);
    let n = out.valid_sizes["N"];
    assert!(n < 128 * 1024, "validated at N = {n}");
}

/// The search of `scalHigh` at 2^20 as `lift explore` builds it from
/// these arguments (the worker process plans from them).
fn scal_worker(depth: usize) -> explore::remote::WorkerCommand {
    let args = ["explore", "benchmarks/scal.lift", "--def", "scalHigh", "--size", "N=1048576", "--seed", "5"];
    let mut args: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
    for a in ["--runs", "3", "--budget", "20s", "--depth", &depth.to_string()] {
        args.push(a.into());
    }
    explore::remote::WorkerCommand { program: env!("CARGO_BIN_EXE_lift").into(), args }
}

/// `scalHigh` at depth 1 explored on PoCL listed twice, the second device
/// served by a worker process that plans at `worker_depth`; `None` without
/// PoCL.
fn scal_on_pocl_twice(
    name: &str,
    max: Option<usize>,
    worker_depth: usize,
) -> Option<(explore::Report, PathBuf)> {
    let devs = pocl()?;
    let out = tmp(name);
    let two = [devs[0].clone(), devs[0].clone()];
    let o = opts(&out, 20, max, false, 1);
    let prog = load("benchmarks/scal.lift");
    Some((explore::explore_in_processes(&prog, &two, &o, None, &scal_worker(worker_depth)).unwrap(), out))
}

/// Two devices of one model share a search, the second measured by a
/// worker process (`explore::remote`): here PoCL twice, the worker the
/// `lift` binary serving it. Both measure candidates, each logged once.
#[test]
fn a_worker_process_measures_a_share_of_the_search() {
    let Some((report, out)) = scal_on_pocl_twice("remote", Some(30), 1) else {
        println!("skipped: no OpenCL device");
        return;
    };
    assert!(report.notes.is_empty(), "{:?}", report.notes);
    let d = &report.devices[0];
    assert_eq!(d.shares.len(), 2);
    assert!(d.shares.iter().all(|s| s.measured > 0), "{:?}", d.shares);
    // The worker's phases came back with its answers.
    assert!(d.shares[1].phases.build_s > 0.0 && d.shares[1].phases.run_s > 0.0, "{:?}", d.shares[1]);
    assert!(d.best.is_some());
    let rows = csv_rows(&report.csv);
    let hashes: std::collections::HashSet<_> = rows.iter().map(|r| (&r[2], &r[6])).collect();
    assert_eq!(hashes.len(), rows.len(), "a point logged twice");
    std::fs::remove_dir_all(&out).ok();
}

/// A worker process that plans another search (here another depth) is
/// refused before it measures anything: the leader searches alone and
/// says so.
#[test]
fn a_worker_process_of_another_search_is_refused() {
    let Some((report, out)) = scal_on_pocl_twice("remote-other", Some(6), 0) else {
        println!("skipped: no OpenCL device");
        return;
    };
    let d = &report.devices[0];
    let note = d.notes.iter().chain(&report.notes).find(|n| n.contains("planned another search"));
    assert!(note.is_some(), "{:?} {:?}", report.notes, d.notes);
    assert!(d.best.is_some());
    std::fs::remove_dir_all(&out).ok();
}

/// Several short rows per work-group under a batch's map (a 3D tensor
/// summed along its last axis): each grouped row shape, replayed as the
/// search measures it, validates against the interpreter on PoCL at an odd
/// batch count.
#[test]
fn grouped_rows_of_a_batch_validate_on_pocl() {
    let Some(devs) = pocl() else {
        println!("skipped: no OpenCL device");
        return;
    };
    let src = "userfun add(x: float, y: float): float { return x + y; }\n\
               def s(a: [[[float]Z]Y]X) = map(\\p -> map(\\r -> reduce(add, 0.0f) $ r) $ p) $ a\n";
    let original = lift::parse::parse_program(&SourceFile::new("s.lift", src.to_string())).unwrap();
    let base = lift::rewrite::prepare(&original, "s").unwrap();
    let sizes: BTreeMap<String, i64> = [("X".into(), 3), ("Y".into(), 40), ("Z".into(), 96)].into();
    let shapes: Vec<_> = explore::rows::row_shapes(&base, "s", &sizes)
        .into_iter()
        .filter(|s| s.slots.iter().any(|x| x.name == "row-group"))
        .collect();
    assert!(shapes.len() >= 2);
    for s in &shapes {
        let found = s.instantiate(&base, "s", &[8, 4]).unwrap().program;
        let job = explore::replay::Replay {
            original: &original,
            def: "s",
            found: &found,
            then_order: Vec::new(),
            local: Some([8, 4, 1]),
            static_sizes: false,
            sizes: &sizes,
            seed: 11,
            warmup: 0,
            runs: 1,
        };
        let out = explore::replay::replay(&job, devs[0].clone()).unwrap();
        assert_eq!(out.status, explore::measure::Status::Ok, "{}", out.message);
    }
}
