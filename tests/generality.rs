//! The generality suite (`lift generality`, `harness::generality`): its
//! manifest, every program's def and byte count, a short run on PoCL with
//! resuming, and the manifest's errors.

use lift::harness::generality::{self, manifest, Options};
use lift::ir::SourceFile;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lift-generality-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn opts(out: &Path, only: &[&str]) -> Options {
    Options {
        root: root(),
        suite: root().join(manifest::SUITE_DIR),
        out_dir: out.to_path_buf(),
        budget: Duration::from_secs(4),
        only: only.iter().map(|s| s.to_string()).collect(),
        resume: false,
        python: None,
        peer_runs: 3,
        commit: "c0ffee".into(),
        date: "2026-11-25T00:00:00Z".into(),
        progress: false,
        ported_from: None,
        isolation: None,
    }
}

/// At least 30 programs, each a `def` of its own name that type-checks,
/// with a byte count at both size sets, and every class the issue names.
#[test]
fn every_program_of_the_suite_parses_and_has_a_byte_count() {
    let entries = manifest::load(&root().join(manifest::SUITE_DIR), &[]).unwrap();
    assert!(entries.len() >= 30, "{} programs", entries.len());
    for e in &entries {
        let text = std::fs::read_to_string(&e.file).unwrap();
        let p = lift::parse::parse_program(&SourceFile::new(e.file.display().to_string(), text))
            .unwrap_or_else(|err| panic!("{}: {err:?}", e.name));
        for gpu in [true, false] {
            let bytes = lift::harness::roofline::min_traffic(&p, &e.name, e.sizes(gpu)).unwrap();
            assert!(bytes > 0, "{}", e.name);
        }
    }
    let classes: std::collections::BTreeSet<&str> = entries.iter().map(|e| e.class.as_str()).collect();
    for c in
        ["elementwise", "full reduction", "row reduction", "column reduction", "matrix product", "stencil"]
    {
        assert!(classes.contains(c), "no {c} program");
    }
}

/// The holdout suite (`lift generality --suite benchmarks/holdout`): every
/// program a `def` of its own name with a byte count, and none of them in
/// the generality suite (it checks programs the search was not tuned on).
#[test]
fn the_holdout_suite_parses_and_is_disjoint_from_the_generality_suite() {
    let holdout = manifest::load(&root().join("benchmarks/holdout"), &[]).unwrap();
    let suite = manifest::load(&root().join(manifest::SUITE_DIR), &[]).unwrap();
    assert!(holdout.len() >= 5, "{} programs", holdout.len());
    for e in &holdout {
        assert!(suite.iter().all(|s| s.name != e.name), "{} is in both suites", e.name);
        let text = std::fs::read_to_string(&e.file).unwrap();
        let p = lift::parse::parse_program(&SourceFile::new(e.file.display().to_string(), text))
            .unwrap_or_else(|err| panic!("{}: {err:?}", e.name));
        for gpu in [true, false] {
            assert!(
                lift::harness::roofline::min_traffic(&p, &e.name, e.sizes(gpu)).unwrap() > 0,
                "{}",
                e.name
            );
        }
    }
}

/// Two programs explored on PoCL: validated rows with their fraction of
/// the copy bandwidth; `--resume` at the same commit runs nothing again,
/// at another commit it is refused.
#[test]
fn runs_and_resumes_on_pocl() {
    let Ok(device) = lift::runtime::select_device(Some("pocl")) else {
        println!("skipped: no OpenCL device");
        return;
    };
    let out = tmp("run");
    let o = opts(&out, &["sum", "transpose"]);
    let rows = generality::run(&o, &device).unwrap();
    assert_eq!(rows.len(), 2);
    for r in &rows {
        assert_eq!(r.status, generality::Outcome::Ok, "{r:?}");
        assert!(r.valid > 0 && r.lift_ms.is_some_and(|t| t > 0.0), "{r:?}");
        assert!(r.pct_copy.is_some_and(|p| p > 0.0), "{r:?}");
        // The copy of its own bytes, measured after its search.
        assert!(r.own_copy_gbps.is_some_and(|g| g > 0.0) && r.pct_own_copy.is_some(), "{r:?}");
        assert!(r.message.starts_with("no PyTorch time"), "{r:?}");
        assert!(out.join("generality").join(&r.program).join("best.lift").is_file());
    }
    let written = generality::row::read(&generality::results_path(&out)).unwrap();
    assert_eq!(written, rows);
    let again = generality::run(&Options { resume: true, ..o.clone() }, &device).unwrap();
    assert!(again.is_empty(), "{again:?}");
    let err = generality::run(&Options { resume: true, commit: "beef".into(), ..o }, &device).unwrap_err();
    assert!(err.to_string().contains("come from commit c0ffee, this run is beef"), "{err}");
    std::fs::remove_dir_all(&out).ok();
}

/// Each program searched in a child process (`lift generality`'s
/// default): the row is the child's search with the parent's peer and
/// limits; a child that ends without a result fails its row only, saying
/// how it ended.
#[test]
fn runs_each_program_in_a_child_process() {
    let Ok(device) = lift::runtime::select_device(Some("pocl")) else {
        println!("skipped: no OpenCL device");
        return;
    };
    let out = tmp("isolated");
    let iso = generality::isolate::Isolation {
        exe: PathBuf::from(env!("CARGO_BIN_EXE_lift")),
        device: Some("pocl".into()),
    };
    let o = Options { isolation: Some(iso), ..opts(&out, &["sum"]) };
    let rows = generality::run(&o, &device).unwrap();
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!(r.status, generality::Outcome::Ok, "{r:?}");
    assert!(r.valid > 0 && r.lift_ms.is_some_and(|t| t > 0.0), "{r:?}");
    assert!(r.pct_copy.is_some_and(|p| p > 0.0), "{r:?}");
    assert!(r.pct_own_copy.is_some_and(|p| p > 0.0), "{r:?}");
    assert!(r.message.starts_with("no PyTorch time"), "{r:?}");
    assert!(out.join("generality/sum/best.lift").is_file());
    assert!(!out.join("generality/sum.child.csv").exists());
    // A child that exits without writing its result.
    let dead = generality::isolate::Isolation { exe: PathBuf::from("/bin/false"), device: None };
    let o = Options { isolation: Some(dead), ..opts(&tmp("dead"), &["sum", "transpose"]) };
    let rows = generality::run(&o, &device).unwrap();
    assert_eq!(rows.len(), 2);
    for r in &rows {
        assert_eq!(r.status, generality::Outcome::Failed, "{r:?}");
        assert!(r.message.starts_with("the search process ended without a result (exit status: 1;"), "{r:?}");
    }
    // A child is for one program.
    let e = generality::run_child(&opts(&out, &["sum", "dot"]), &device, &out.join("r.csv")).unwrap_err();
    assert_eq!(e.to_string(), "a child process searches one program, and --only names 2");
    std::fs::remove_dir_all(&out).ok();
    std::fs::remove_dir_all(&o.out_dir).ok();
}

fn manifest_error(yaml: &str, only: &[&str]) -> String {
    let dir = tmp("manifest");
    std::fs::create_dir_all(dir.join(manifest::SUITE_DIR)).unwrap();
    std::fs::write(dir.join(manifest::SUITE_DIR).join(manifest::MANIFEST), yaml).unwrap();
    let only: Vec<String> = only.iter().map(|s| s.to_string()).collect();
    let e = manifest::load(&dir.join(manifest::SUITE_DIR), &only).unwrap_err().to_string();
    std::fs::remove_dir_all(&dir).ok();
    e
}

#[test]
fn manifest_errors_name_the_file_and_the_program() {
    let one = |name: &str, n: i64| {
        format!("  - {{ name: {name}, class: c, sizes: {{ N: {n} }}, cpu: {{ N: 8 }} }}\n")
    };
    let cases = [
        (format!("programs:\n{}", one("../x", 8)), vec![], "program `../x`: `../x`: expected a plain name"),
        (format!("programs:\n{}{}", one("a", 8), one("a", 8)), vec![], "program `a`: declared twice"),
        (format!("programs:\n{}", one("a", 0)), vec![], "size N = 0: expected 1 to 2147483647"),
        (format!("programs:\n{}", one("a", 8)), vec!["b"], "no program named `b` (the suite has: a)"),
        ("programs:\n  - { name: a, klass: c }\n".to_string(), vec![], "unknown field `klass`"),
    ];
    for (yaml, only, want) in cases {
        let e = manifest_error(&yaml, &only);
        assert!(e.contains("suite.yaml") && e.contains(want), "{e}");
    }
}

/// Programs found elsewhere (`--programs-from`), measured as candidates:
/// a found saxpy (compiled for its sizes, as its header says) and a found
/// sum with its second stage validate and are
/// timed into the ported results file (not the device's own); a found
/// program whose split does not divide this device's sizes is refused
/// with the constraint named.
#[test]
fn ported_programs_are_measured_as_candidates_on_pocl() {
    let Ok(device) = lift::runtime::select_device(Some("pocl")) else {
        println!("skipped: no OpenCL device");
        return;
    };
    let out = tmp("ported");
    let found = out.join("found");
    let put = |name: &str, text: &str| {
        std::fs::create_dir_all(found.join(name)).unwrap();
        std::fs::write(found.join(name).join("best.lift"), text).unwrap();
    };
    put(
        "saxpy",
        "// Found by `lift explore` on elsewhere: candidate 1 (x), median 1 ms.\n\
         // Launch it with local size 64 (`lift compile --local 64`).\n\
         // The time is its kernel's compiled for these sizes (`lift compile --size N=4096`); compiled for every size it took longer.\n\
         userfun axpy(a: float, x: float, y: float): float { return a * x + y; }\n\
         def saxpy(a: float, x: [float]N, y: [float]N) = join o mapWrg(0, mapLcl(0, \\(xi, yi) -> axpy(a, xi, yi))) o split(64) $ zip(x, y)\n",
    );
    put(
        "sum",
        "// Found by `lift explore` on elsewhere: candidate 2 (y), median 1 ms.\n\
         // Its output is followed by the first of sum_then_seq whose size constraints hold for it.\n\
         userfun add(x: float, y: float): float { return x + y; }\n\
         def sum(x: [float]N) = join o mapGlb(0, toGlobal(mapSeq(id)) o reduceSeq(add, 0.0f)) o split(1024) $ x\n\
         def sum_then_seq(p: [float]P) = toGlobal(mapSeq(id)) o reduceSeq(add, 0.0f) $ p\n",
    );
    put(
        "transpose",
        "userfun id1(x: float): float { return x; }\n\
         def transpose(a: [[float]N]M) = mapGlb(1, mapGlb(0, id1)) o split(3000000) o join o transpose $ a\n",
    );
    let o = Options { ported_from: Some(found.clone()), ..opts(&out, &["saxpy", "sum", "transpose"]) };
    let rows = generality::run(&o, &device).unwrap();
    let by = |n: &str| rows.iter().find(|r| r.program == n).unwrap();
    for n in ["saxpy", "sum"] {
        let r = by(n);
        assert_eq!(r.status, generality::Outcome::Ok, "{r:?}");
        assert!(r.lift_ms.is_some_and(|t| t > 0.0) && r.valid == 1 && r.tried == 1, "{r:?}");
        assert!(r.params.starts_with("ported from "), "{r:?}");
    }
    let t = by("transpose");
    assert_eq!(t.status, generality::Outcome::Failed, "{t:?}");
    assert!(t.message.contains("refused: the found program needs"), "{t:?}");
    let written = generality::row::read(&generality::results_path_for(&o)).unwrap();
    assert_eq!(written, rows);
    assert!(!generality::results_path(&out).exists(), "the device's own results file is not written");
    std::fs::remove_dir_all(&out).ok();
}
