//! The ICFP 2015 suite end to end on whatever OpenCL device exists (PoCL
//! here): every benchmark at the tiny size in every variant, validated;
//! the explored program of the device (explored in the run, briefly,
//! where none is committed for it); CLBlast where it loads; cuBLAS skipped off NVIDIA; Figures
//! 10 and 11. Then the config errors of the new sections, one message each.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
#[path = "support/fs.rs"]
mod fs;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn lift() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lift"));
    c.current_dir(repo());
    c
}

fn has_device() -> bool {
    lift().arg("devices").output().map(|o| o.status.success()).unwrap_or(false)
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lift-icfp15-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn text(o: &Output) -> String {
    format!("{}\n{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn rows(csv: &Path) -> Vec<csv::StringRecord> {
    let mut rd = csv::Reader::from_path(csv).expect("results file readable");
    rd.records().map(|r| r.unwrap()).collect()
}

const BENCHMARKS: [&str; 6] = ["scal", "asum", "dot", "gemv", "blackscholes", "md"];
const BLAS: [&str; 4] = ["scal", "asum", "dot", "gemv"];

#[test]
fn tiny_suite_runs_and_validates_every_variant() {
    if !has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    let out = scratch("all");
    let o = lift()
        // A device with no committed program (a PoCL that names itself
        // otherwise than the committed `pthread-haswell-...`) gets one
        // explored in this run: a short budget keeps the suite's time.
        .args([
            "all",
            "--suite",
            "icfp15",
            "--size",
            "tiny",
            "--runs",
            "2",
            "--no-roofline",
            "--explore-budget",
            "4s",
        ])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let log = text(&o);
    let dirs: Vec<PathBuf> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(dirs.len(), 1, "one device directory\n{log}");
    let slug = dirs[0].file_name().unwrap().to_string_lossy().to_string();
    let rows = rows(&dirs[0].join("results-icfp15.csv"));
    let has_program =
        |b: &str| repo().join("benchmarks/explored").join(&slug).join(format!("{b}.lift")).is_file();
    for b in BENCHMARKS {
        let name = format!("icfp15-{b}");
        let row = |v: &str| {
            rows.iter()
                .find(|r| r[0] == *name && &r[1] == "tiny" && &r[2] == v)
                .unwrap_or_else(|| panic!("no row {name} {v}\n{log}"))
                .clone()
        };
        let ok = |r: &csv::StringRecord| {
            assert_eq!(&r[3], "ok", "{name} {}: {}", &r[2], &r[25]);
            assert!(r[4].parse::<f64>().unwrap() > 0.0, "{name} {} has a median", &r[2]);
            assert!(r[10].parse::<f64>().is_ok(), "{name} {} was validated: {}", &r[2], &r[25]);
        };
        ok(&row("reference"));
        let explored = row("explored");
        ok(&explored);
        if !has_program(b) {
            assert!(explored[25].contains("explored in this run"), "{name}: {}", &explored[25]);
        }
        if BLAS.contains(&b) {
            let blas = row("clblast");
            assert_eq!(&blas[18], "host", "{name}: CLBlast is host-timed");
            if blas[25].contains("CLBlast not found") {
                assert_eq!(&blas[3], "skipped");
            } else {
                ok(&blas);
                // Beside it, the reference and the explored program on the
                // host clock too (from the same runs).
                let twin = row("reference@host");
                ok(&twin);
                assert_eq!(&twin[18], "host");
                if &explored[3] == "ok" {
                    assert_eq!(&row("explored@host")[18], "host");
                }
            }
            let cu = row("cublas");
            assert!(["ok", "skipped"].contains(&&cu[3]), "{name} cublas: {} {}", &cu[3], &cu[25]);
            if &cu[3] == "skipped" {
                assert!(
                    cu[25].contains("NVIDIA devices only") || cu[25].contains("not found"),
                    "a skipped cublas row says why: {}",
                    &cu[25]
                );
            }
        } else {
            assert!(!rows.iter().any(|r| r[0] == *name && (&r[2] == "clblast" || &r[2] == "cublas")));
        }
    }
    let twins = rows.iter().filter(|r| r[2].ends_with("@host")).count();
    assert_eq!(
        rows.len(),
        BENCHMARKS.len() * 2 + BLAS.len() * 2 + twins,
        "one row per benchmark and variant, and the host-timed twins beside CLBlast\n{log}"
    );
    for fig in ["icfp15-figure10", "icfp15-figure11"] {
        let svg = dirs[0].join(format!("{fig}.svg"));
        assert!(svg.is_file() && dirs[0].join(format!("{fig}.pdf")).is_file(), "{fig} written\n{log}");
        let s = std::fs::read_to_string(&svg).unwrap();
        assert!(s.contains("dot tiny") && s.contains("gemv tiny"), "{fig} shows the BLAS routines");
        assert_eq!(s.contains("md tiny"), fig.ends_with("10"), "MD only in Figure 10");
    }
    assert!(o.status.success(), "every row ok or skipped: exit 0\n{log}");
    let _ = std::fs::remove_dir_all(&out);
}

/// A scratch root: the repository's benchmarks and references, and one
/// config written by `edit` from `configs/icfp15-scal.yaml`.
fn root_with(name: &str, edit: &dyn Fn(String) -> String) -> PathBuf {
    root_editing("scal", name, edit)
}

/// [`root_with`] for the config of `bench` (`configs/icfp15-<bench>.yaml`).
fn root_editing(bench: &str, name: &str, edit: &dyn Fn(String) -> String) -> PathBuf {
    let root = scratch(name);
    std::fs::create_dir_all(root.join("configs")).unwrap();
    let file = format!("configs/icfp15-{bench}.yaml");
    let cfg = std::fs::read_to_string(repo().join(&file)).unwrap();
    std::fs::write(root.join(&file), edit(cfg)).unwrap();
    root
}

fn list(root: &Path) -> Output {
    lift().args(["list", "--root"]).arg(repo()).arg("--configs").arg(root.join("configs")).output().unwrap()
}

#[test]
fn explored_is_skipped_where_no_program_is_committed_and_cublas_off_nvidia() {
    if !has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    let root = root_with("skip", &|c| c.replace("file: scal.lift", "file: not-committed.lift"));
    let o = lift()
        .args(["run", "icfp15-scal", "--size", "tiny", "--runs", "1", "--variants", "explored,cublas"])
        .args(["--explore-budget", "off", "--cublas-lib", "/nonexistent/cuda/lib", "--root"])
        .arg(repo())
        .arg("--configs")
        .arg(root.join("configs"))
        .arg("--out")
        .arg(root.join("reports"))
        .output()
        .unwrap();
    let log = text(&o);
    assert!(o.status.success(), "skipped rows are not failures\n{log}");
    let dir = std::fs::read_dir(root.join("reports")).unwrap().next().unwrap().unwrap().path();
    let rows = rows(&dir.join("results-icfp15.csv"));
    assert_eq!(rows.len(), 2, "{log}");
    let explored = rows.iter().find(|r| &r[2] == "explored").unwrap();
    assert_eq!(&explored[3], "skipped");
    assert!(
        explored[25].contains("not-committed.lift")
            && explored[25].contains("lift explore")
            && explored[25].contains("exploring is off"),
        "{}",
        &explored[25]
    );
    let cu = rows.iter().find(|r| &r[2] == "cublas").unwrap();
    assert_eq!(&cu[3], "skipped");
    assert_eq!(&cu[18], "cuda-events", "the timing the cublas rows would have");
    let device = &cu[20];
    if device.to_ascii_lowercase().contains("nvidia") {
        assert!(cu[25].contains("not found"), "{}", &cu[25]);
    } else {
        assert!(cu[25].contains("NVIDIA devices only"), "{}", &cu[25]);
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// A case: its name, the edit of the config, the message expected.
type Case<'a> = (&'a str, &'a dyn Fn(String) -> String, &'a str);

#[test]
fn errors_of_the_new_config_sections() {
    let cases: [Case; 6] = [
        (
            "defs",
            &|c| c.replace("- { def: scal,", "- { def: [],"),
            "key `explored.kernels[0].def`: expected a def name or a non-empty list of them",
        ),
        (
            "file",
            &|c| c.replace("file: scal.lift", "file: sub/scal.lift"),
            "key `explored.file`: `sub/scal.lift`: expected a file name ending in .lift",
        ),
        (
            "arg",
            &|c| {
                c.replace(
                    "args: { alpha: alpha, x: x }, output: out",
                    "args: { alpha: alpha, x: z }, output: out",
                )
            },
            "key `explored.kernels[0].args.x`: `z` is not an input, buffer or earlier kernel's output",
        ),
        (
            "fixed",
            &|c| c.replace("- { def: scal,", "- { program: benchmarks/icfp15/scal.lift, def: scal,"),
            "key `explored.kernels`: no kernel comes from the device's file (omit `program:`)",
        ),
        (
            "routine",
            &|c| c.replacen("routine: scal", "routine: saxpy", 1),
            "key `clblast.calls[0].routine`: `saxpy`: expected gemv, gemm, scal, asum or dot",
        ),
        (
            "result",
            &|c| {
                c.replace("- { routine: scal, n: N, alpha: alpha, x: out, init_from: x }\n  output: out\nvalidation", "- { routine: asum, n: N, x: x }\n  output: out\nvalidation")
            },
            "key `cublas.calls[0].result`: missing",
        ),
    ];
    for (name, edit, want) in cases {
        let root = root_with(name, edit);
        let o = list(&root);
        let log = text(&o);
        assert_eq!(o.status.code(), Some(2), "{name}: exit 2\n{log}");
        assert!(log.contains(want), "{name}: expected `{want}` in\n{log}");
        assert!(log.contains("icfp15-scal.yaml"), "{name}: names the file\n{log}");
        let _ = std::fs::remove_dir_all(&root);
    }
}

/// `explored-other` runs every other device's committed program on this
/// device as `explored@<slug>` rows and writes the portability table.
#[test]
fn explored_other_runs_other_devices_programs_and_writes_the_portability_table() {
    if !has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    let out = scratch("portability");
    let o = lift()
        .args(["run", "icfp15-scal", "--size", "tiny", "--runs", "1", "--no-roofline"])
        .args(["--variants", "explored,explored-other", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let log = text(&o);
    assert!(o.status.success(), "{log}");
    let dir = std::fs::read_dir(&out).unwrap().next().unwrap().unwrap().path();
    let own = dir.file_name().unwrap().to_string_lossy().to_string();
    let others: Vec<String> = std::fs::read_dir(repo().join("benchmarks/explored"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|s| *s != own && repo().join("benchmarks/explored").join(s).join("scal.lift").is_file())
        .collect();
    let rows = rows(&dir.join("results-icfp15.csv"));
    for s in &others {
        let r = rows.iter().find(|r| r[2] == *format!("explored@{s}")).unwrap_or_else(|| panic!("{log}"));
        assert_eq!(&r[3], "ok", "{}", &r[25]);
        assert!(r[25].contains(&format!("benchmarks/explored/{s}/scal.lift")), "{}", &r[25]);
    }
    let table = std::fs::read_to_string(dir.join("portability.csv")).unwrap_or_default();
    let mut rd = csv::Reader::from_reader(table.as_bytes());
    let recs: Vec<csv::StringRecord> = rd.records().map(|r| r.unwrap()).collect();
    let own_ok = rows.iter().any(|r| &r[2] == "explored" && &r[3] == "ok");
    if own_ok {
        assert_eq!(recs.len(), others.len(), "{table}");
        for r in &recs {
            assert_eq!(&r[0], "icfp15-scal");
            assert!(r[6].parse::<f64>().unwrap() > 0.0, "own_speedup: {table}");
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// `lift explore --config`: the search validates with the config's input
/// generators, Rust gold (its error scale) and tolerances. MD's candidates
/// validate so (against the interpreter on random positions, nearly
/// coincident atoms failed many); a config without the def's inputs, or
/// without a Rust gold, is refused.
#[test]
fn explore_validates_as_the_config_does() {
    let base = [
        "explore",
        "benchmarks/icfp15/md.lift",
        "--def",
        "md",
        "--size",
        "M=128,N=3008",
        "--budget",
        "60s",
        "--max-candidates",
        "6",
        "--runs",
        "1",
    ];
    let dir = scratch("explore-config");
    let wrong =
        lift().args(base).args(["--config", "configs/icfp15-scal.yaml", "--out"]).arg(&dir).output().unwrap();
    assert_eq!(wrong.status.code(), Some(2), "{}", text(&wrong));
    assert!(
        text(&wrong)
            .contains("--config configs/icfp15-scal.yaml: it has no input `pos` for `def md`'s parameter"),
        "{}",
        text(&wrong)
    );
    let interp = dir.join("md-interp.yaml");
    let yaml = std::fs::read_to_string(repo().join("configs/icfp15-md.yaml")).unwrap();
    // (Its `explored.explore` block validates as the config does, which
    // needs the Rust gold: the interpreter's oracle there.)
    let yaml =
        yaml.replace("gold: rust:md", "gold: interpreter").replace("oracle: config", "oracle: interpreter");
    std::fs::write(&interp, yaml).unwrap();
    if !has_device() {
        println!("skipped the search: no OpenCL device");
        return;
    }
    let o = lift().args(base).arg("--config").arg(&interp).arg("--out").arg(dir.join("i")).output().unwrap();
    assert!(!o.status.success());
    assert!(text(&o).contains("its gold is not a Rust function (`gold: rust:NAME`)"), "{}", text(&o));
    let out = dir.join("ok");
    let o =
        lift().args(base).args(["--config", "configs/icfp15-md.yaml", "--out"]).arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    // How far from the limit: the best's bytes against a copy's bandwidth.
    assert!(text(&o).contains("MB moved at least: ") && text(&o).contains("% of a copy's "), "{}", text(&o));
    // And against a copy of its own bytes (fewer than the large copy's).
    assert!(text(&o).contains("% of a copy of the same bytes ("), "{}", text(&o));
    let rows = rows(&out.join("explore.csv"));
    assert!(rows.len() >= 2, "{}", text(&o));
    // Column 4 is the status: every candidate that keeps MD's sequential
    // fold validated. (A row shape splits the fold into lanes, which is
    // right only for an associative `f`; MD's force update is not, and
    // validation refuses it: column 7 is the derivation.)
    let splits = |r: &csv::StringRecord| r[7].contains("reduce-lanes") || r[7].contains("reduce-partred");
    assert!(
        rows.iter().all(|r| &r[4] != "invalid" || splits(r)),
        "{:?}",
        rows.iter().map(|r| r[10].to_string()).collect::<Vec<_>>()
    );
    assert!(rows.iter().any(|r| &r[4] == "ok"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A device with no committed program runs another device's (the one
/// whose slug starts with the same word, here the only one), validated,
/// and its row says whose program ran.
#[test]
fn a_device_without_its_own_program_runs_another_devices() {
    if !has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    let root = root_with("stand-in", &|c| c);
    fs::copy_tree(&repo().join("benchmarks/icfp15"), &root.join("benchmarks/icfp15"));
    fs::copy_tree(&repo().join("references/icfp15"), &root.join("references/icfp15"));
    // The committed programs of one device, under a name no device has.
    let from = std::fs::read_dir(repo().join("benchmarks/explored"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("scal.lift").is_file())
        .unwrap();
    let other = root.join("benchmarks/explored/zz-some-other-device");
    std::fs::create_dir_all(&other).unwrap();
    for f in ["scal.lift", "scal.derivation"] {
        std::fs::copy(from.join(f), other.join(f)).unwrap();
    }
    let o = lift()
        .args(["run", "icfp15-scal", "--size", "tiny", "--runs", "1", "--variants", "explored"])
        .args(["--explore-budget", "0", "--root"])
        .arg(&root)
        .arg("--configs")
        .arg(root.join("configs"))
        .arg("--out")
        .arg(root.join("reports"))
        .output()
        .unwrap();
    let log = text(&o);
    assert!(o.status.success(), "{log}");
    let dir = std::fs::read_dir(root.join("reports")).unwrap().next().unwrap().unwrap().path();
    let rows = rows(&dir.join("results-icfp15.csv"));
    let explored = rows.iter().find(|r| &r[2] == "explored").unwrap_or_else(|| panic!("{log}"));
    assert_eq!(&explored[3], "ok", "{}", &explored[25]);
    assert!(explored[10].parse::<f64>().is_ok(), "validated: {}", &explored[25]);
    assert!(
        explored[25].contains("device `zz-some-other-device`'s program")
            && explored[25].contains("exploring is off")
            && explored[25].contains("lift explore"),
        "{}",
        &explored[25]
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// Runs `lift run icfp15-asum` at the tiny size on the explored variant
/// with the configs of `root`, results in `out`; returns the explored row
/// and the log.
fn run_explored(root: &Path, out: &Path, budget: &str) -> (csv::StringRecord, String) {
    let o = lift()
        .args(["run", "icfp15-asum", "--size", "tiny", "--runs", "1", "--variants", "explored"])
        .args(["--explore-budget", budget, "--root"])
        .arg(repo())
        .arg("--configs")
        .arg(root.join("configs"))
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    let log = text(&o);
    assert!(o.status.success(), "{log}");
    let dir = std::fs::read_dir(out).unwrap().next().unwrap().unwrap().path();
    let rows = rows(&dir.join("results-icfp15.csv"));
    assert_eq!(rows.len(), 1, "{log}");
    (rows[0].clone(), log)
}

/// A device with no committed program explores one within the budget
/// (asum: the explored kernel and a second stage chosen among
/// alternatives, at its tiny size 3 * 2^18), validated like a committed
/// one and cached under the output folder; a second run, and one with
/// exploring off, reuse the cache without searching (the log is unchanged);
/// so does a run after a search that found nothing (`none.txt`).
#[test]
fn a_device_without_a_program_explores_one_and_a_second_run_reuses_it() {
    if !has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    // No device has `not-committed.lift`, so nothing stands in; timed at
    // tiny to keep the search short.
    let root = root_editing("asum", "search", &|c| {
        c.replace("file: asum.lift", "file: not-committed.lift")
            .replace("at: small, valid_at: [tiny]", "at: tiny")
    });
    let out = root.join("reports");
    let (row, log) = run_explored(&root, &out, "6s");
    assert_eq!(&row[3], "ok", "{}\n{log}", &row[25]);
    assert!(row[10].parse::<f64>().is_ok(), "validated: {}", &row[25]);
    assert!(row[25].contains("explored in this run"), "{}", &row[25]);
    let cache = std::fs::read_dir(&out).unwrap().next().unwrap().unwrap().path().join("explored/icfp15-asum");
    assert!(row[25].contains(&cache.join("best.lift").display().to_string()), "{}", &row[25]);
    let log_csv = std::fs::read(cache.join("explore.csv")).unwrap();
    assert!(rows(&cache.join("explore.csv")).iter().any(|r| &r[4] == "ok"), "a candidate validated");
    for budget in ["6s", "off"] {
        let (again, log) = run_explored(&root, &out, budget);
        assert_eq!(&again[3], "ok", "{budget}: {}\n{log}", &again[25]);
        assert!(again[10].parse::<f64>().is_ok(), "validated: {}", &again[25]);
        assert!(again[25].contains("by an earlier run"), "{budget}: {}", &again[25]);
        assert_eq!(std::fs::read(cache.join("explore.csv")).unwrap(), log_csv, "{budget}: no new search");
    }
    // A search that found nothing is not run again either: the row says
    // why there is no program (nothing stands in for `not-committed.lift`).
    std::fs::remove_file(cache.join("best.lift")).unwrap();
    std::fs::write(cache.join("none.txt"), "a search found no valid program (as written by the test)\n")
        .unwrap();
    let (none, log) = run_explored(&root, &out, "6s");
    assert_eq!(&none[3], "skipped", "{}\n{log}", &none[25]);
    assert!(
        none[25].contains("as written by the test") && none[25].contains("to explore again"),
        "{}",
        &none[25]
    );
    assert_eq!(std::fs::read(cache.join("explore.csv")).unwrap(), log_csv, "no new search");
    let _ = std::fs::remove_dir_all(&root);
}

/// Errors of `explored.explore:` name the file, the line and what was
/// expected.
#[test]
fn explore_block_errors_name_the_line() {
    let block = "explore: { program: benchmarks/icfp15/scal.lift, def: scal, at: small, valid_at: [tiny], oracle: config }";
    let cases: [(&str, &str, &str); 5] = [
        (
            "at: small",
            "at: smal",
            "key `explored.explore.at`: `smal`: expected a size preset of this config (tiny, small, large)",
        ),
        (
            "valid_at: [tiny]",
            "valid_at: [tiny, huge]",
            "key `explored.explore.valid_at[1]`: `huge`: expected a size preset",
        ),
        (
            "def: scal,",
            "def: scale,",
            "key `explored.explore.def`: expected a def of benchmarks/icfp15/scal.lift",
        ),
        (
            "oracle: config",
            "oracle: gold",
            "key `explored.explore.oracle`: `gold`: expected `config` or `interpreter`",
        ),
        (
            "program: benchmarks/icfp15/scal.lift",
            "program: ../scal.lift",
            "key `explored.explore.program`: `../scal.lift`: expected a path inside the repository root",
        ),
    ];
    for (from, to, want) in cases {
        let root = root_with("explore-block", &|c| {
            assert!(c.contains(block), "the scal config explores so");
            c.replace(block, &block.replace(from, to))
        });
        let cfg = std::fs::read_to_string(root.join("configs/icfp15-scal.yaml")).unwrap();
        let line = cfg.lines().position(|l| l.contains("explore: {")).unwrap() + 1;
        let o = list(&root);
        let log = text(&o);
        assert_eq!(o.status.code(), Some(2), "{to}: exit 2\n{log}");
        assert!(
            log.contains(&format!("icfp15-scal.yaml:{line}: {want}")),
            "{to}: expected line {line}: `{want}` in\n{log}"
        );
        let _ = std::fs::remove_dir_all(&root);
    }
}

/// `lift explore --from CONFIG` explores as the config's
/// `explored.explore:` block says (what .ci/explore-icfp15.sh runs); a
/// config without the block, or a file beside it, is bad input.
#[test]
fn explore_from_a_config_uses_its_block() {
    let dir = scratch("from");
    let o = lift().args(["explore", "--from", "configs/transpose.yaml", "--out"]).arg(&dir).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o)
            .contains("--from configs/transpose.yaml: expected a config with an `explored.explore:` block"),
        "{}",
        text(&o)
    );
    let o = lift()
        .args(["explore", "benchmarks/icfp15/scal.lift", "--from", "configs/icfp15-scal.yaml"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    if !has_device() {
        println!("skipped the search: no OpenCL device");
        return;
    }
    let out = dir.join("scal");
    let o = lift()
        .args(["explore", "--from", "configs/icfp15-scal.yaml", "--budget", "30s", "--max-candidates", "2"])
        .args(["--runs", "1", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let log = rows(&out.join("explore.csv"));
    assert!(log.iter().any(|r| &r[4] == "ok"), "{}", text(&o));
    // Timed at the config's `at: small` (column 8: the sizes timed).
    assert!(log.iter().all(|r| &r[8] == "N=16777216"), "{}", text(&o));
    assert!(out.join("best.lift").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}
