//! `lift explore --shard I/N` and `--merge`: shards split a search's
//! shapes, together they measure what one search measures, and the merge
//! writes a validated best from their logs; bad values are one-line errors.

use lift::explore::{self, shard::Shard, space::SpaceLimits};
use lift::ir::{Program, SourceFile};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn load(path: &str) -> Program {
    let text = std::fs::read_to_string(path).unwrap();
    lift::parse::parse_program(&SourceFile::new(path, text)).unwrap()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lift-shard-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn lift(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lift")).args(args).output().unwrap()
}

/// `lift explore` of scal at a small size, to its end (the budget is far
/// beyond what the space needs), with `extra` arguments.
fn scal(file: &str, out: &Path, depth: &str, extra: &[&str]) -> Output {
    let out = out.to_str().unwrap();
    let mut args = vec![
        "explore", file, "--def", "scalHigh", "--device", "pocl", "--size", "N=65536", "--budget", "10m",
    ];
    args.extend(["--depth", depth, "--runs", "1", "--out", out]);
    args.extend(extra);
    lift(&args)
}

/// The (shape, parameters) of every row of a log.
fn points(path: &Path) -> Vec<(String, String)> {
    let mut rd = csv::Reader::from_path(path).unwrap();
    rd.records().map(|r| r.unwrap()).map(|r| (r[3].to_string(), r[6].to_string())).collect()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// The error line of a failed run (the lines before it say which device).
fn error_line(o: &Output) -> String {
    let e = stderr(o);
    let errors: Vec<&str> = e.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{e}");
    errors[0].to_string()
}

fn pocl_present() -> bool {
    if explore::select_devices("pocl").is_ok() {
        return true;
    }
    println!("skipped: no OpenCL device");
    false
}

#[test]
fn shards_measure_what_one_search_measures_and_merge_writes_a_validated_best() {
    if !pocl_present() {
        return;
    }
    let out = tmp("pocl");
    // Depth 0: every shape has one slot, so a search that runs to its end
    // measures every point whatever the times are, and the sets compare.
    let whole = scal("benchmarks/scal.lift", &out.join("whole"), "0", &[]);
    assert!(whole.status.success(), "{}", stderr(&whole));
    let shared = out.join("shared");
    for s in ["0/2", "1/2"] {
        let o = scal("benchmarks/scal.lift", &shared, "0", &["--shard", s]);
        assert!(o.status.success(), "{s}: {}", stderr(&o));
        assert!(String::from_utf8_lossy(&o.stdout).contains(&format!("shard {s}")));
    }
    assert!(!shared.join("best.lift").exists(), "a shard writes no best");
    let a = points(&shared.join("explore-shard-0-of-2.csv"));
    let b = points(&shared.join("explore-shard-1-of-2.csv"));
    let union: BTreeSet<_> = a.iter().chain(&b).cloned().collect();
    assert_eq!(union.len(), a.len() + b.len(), "each candidate in one shard, once");
    let one: BTreeSet<_> = points(&out.join("whole/explore.csv")).into_iter().collect();
    assert_eq!(union, one);
    let m = scal("benchmarks/scal.lift", &shared, "0", &["--merge"]);
    assert!(m.status.success(), "{}", stderr(&m));
    let best = std::fs::read_to_string(shared.join("best.lift")).unwrap();
    assert!(best.starts_with("// Found by `lift explore`"), "{best}");
    lift::parse::parse_program(&SourceFile::new("best.lift", best)).unwrap();
    // Logs of another size or another program are refused, in one line.
    let e = lift(&[
        "explore",
        "benchmarks/scal.lift",
        "--def",
        "scalHigh",
        "--device",
        "pocl",
        "--size",
        "N=32768",
        "--depth",
        "0",
        "--out",
        shared.to_str().unwrap(),
        "--merge",
    ]);
    assert_eq!(e.status.code(), Some(2));
    let want = "explore-shard-0-of-2.csv:2: logged at sizes `N=65536`, expected `N=32768` (--size)";
    assert!(error_line(&e).ends_with(want), "{}", stderr(&e));
    let other = out.join("other.lift");
    let text = std::fs::read_to_string("benchmarks/scal.lift").unwrap();
    std::fs::write(&other, text.replace("return x * y;", "return x * y + 1.0f;")).unwrap();
    let e = scal(other.to_str().unwrap(), &shared, "0", &["--merge"]);
    assert_eq!(e.status.code(), Some(2), "{}", stderr(&e));
    assert!(error_line(&e).contains("is not a candidate of this search"), "{}", stderr(&e));
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn deeper_shards_split_the_shapes_and_merge() {
    if !pocl_present() {
        return;
    }
    let out = tmp("deeper");
    for s in ["0/3", "1/3", "2/3"] {
        let o = scal("benchmarks/scal.lift", &out, "1", &["--shard", s, "--max-candidates", "12"]);
        assert!(o.status.success(), "{s}: {}", stderr(&o));
    }
    let logs: Vec<Vec<(String, String)>> =
        (0..3).map(|i| points(&out.join(Shard { index: i, count: 3 }.log_name()))).collect();
    let shapes: Vec<BTreeSet<&String>> = logs.iter().map(|l| l.iter().map(|(s, _)| s).collect()).collect();
    for i in 0..3 {
        for j in i + 1..3 {
            assert!(shapes[i].is_disjoint(&shapes[j]), "shards {i} and {j} share a shape");
        }
    }
    let m = scal("benchmarks/scal.lift", &out, "1", &["--merge"]);
    assert!(m.status.success(), "{}", stderr(&m));
    assert!(out.join("best.lift").exists());
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn complete_searches_of_the_shards_are_the_whole_search() {
    // Fake times (a function of the point): no device needed.
    for (file, def, depth) in [("benchmarks/scal.lift", "scalHigh", 1), ("benchmarks/dot.lift", "dotHigh", 1)]
    {
        let prog = load(file);
        let sizes = lift::types::sizes_of(&[("N", 1 << 20)]);
        let limits = SpaceLimits { depth, ..SpaceLimits::default() };
        let Ok(plan) = explore::plan(&prog, def, &sizes, &limits) else { panic!("{file}: no plan") };
        let whole = explore::dry_run(&plan, &sizes, 3, usize::MAX);
        let set: BTreeSet<_> = whole.iter().cloned().collect();
        assert_eq!(set.len(), whole.len(), "{file}: a point twice");
        let mut union = BTreeSet::new();
        let mut total = 0;
        for i in 0..3 {
            let part =
                explore::dry_run_shard(&plan, &sizes, 3, usize::MAX, Some(Shard { index: i, count: 3 }));
            total += part.len();
            union.extend(part);
        }
        assert_eq!(total, whole.len(), "{file}: each point in one shard");
        assert_eq!(union, set, "{file}");
    }
}

#[test]
fn bad_shard_values_are_one_line_errors() {
    for bad in ["2/2", "0/0", "x", "1/5000", "-1/2"] {
        let flag = format!("--shard={bad}");
        let o = lift(&["explore", "benchmarks/scal.lift", "--def", "scalHigh", &flag]);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        let e = stderr(&o);
        assert_eq!(e.trim_end().lines().count(), 1, "{bad}: {e}");
        assert!(e.contains("expected I/N with 0 <= I < N <= 4096"), "{bad}: {e}");
    }
    let o = lift(&["explore", "benchmarks/scal.lift", "--def", "scalHigh", "--shard", "0/2", "--merge"]);
    assert_eq!(o.status.code(), Some(2));
    // A folder without shard logs.
    if pocl_present() {
        let out = tmp("empty");
        std::fs::create_dir_all(&out).unwrap();
        let o = scal("benchmarks/scal.lift", &out, "0", &["--merge"]);
        assert_eq!(o.status.code(), Some(2));
        assert!(error_line(&o).contains("no shard logs"), "{}", stderr(&o));
        std::fs::remove_dir_all(&out).ok();
    }
}
