//! `lift builds`: a `--dump-builds` folder measured and joined with the
//! run's results (sizes and times by build order), and its bad input.

use lift::harness::builds::{builds_csv, measure_builds, BUILDS_HEADER};
use lift::harness::results::Row;
use lift::harness::variant_name::Variant;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A PTX listing with `ints` integer adds and one global load.
fn ptx(ints: usize) -> String {
    let mut t = String::from(".version 9.0\n.target sm_90\n.entry k(\n)\n{\n");
    for _ in 0..ints {
        t += "\tadd.s32 \t%r1, %r1, 1;\n";
    }
    t += "\tld.global.f32 \t%f1, [%rd1];\n\tret;\n}\n";
    t
}

/// A dump of two sizes of `mm-amd`: reference and level none each.
fn make_dump(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lift-builds-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let labels = ["references-mm-amd-mm-amd-cl", "benchmarks-mm-amd-lift-def-mmamd-generated-at-level-none"];
    for (n, (label, ints)) in labels.iter().cycle().zip([3, 9, 4, 10]).enumerate() {
        let stem = dir.join(format!("{n:03}-{label}"));
        std::fs::write(stem.with_extension("cl"), "x".repeat(10 * (n + 1))).unwrap();
        std::fs::write(stem.with_extension("bin"), ptx(ints)).unwrap();
        std::fs::write(stem.with_extension("log"), "options: \n").unwrap();
    }
    dir
}

fn row(benchmark: &str, size: &str, variant: &str, ms: f64) -> Row {
    Row { median_ms: Some(ms), ..Row::new(benchmark, size, Variant::parse(variant).unwrap()) }
}

#[test]
fn builds_take_size_and_time_in_order() {
    let dir = make_dump("join");
    let results = [
        row("mm-amd", "small", "reference", 1.0),
        row("mm-amd", "small", "none", 2.0),
        row("mm-amd", "large", "reference", 3.0),
        row("mm-amd", "large", "none", 4.0),
    ];
    let known = vec!["mm".to_string(), "mm-amd".to_string()];
    let rows = measure_builds(&dir, &known, &results).unwrap();
    let got: Vec<_> = rows
        .iter()
        .map(|r| {
            (r.benchmark.as_str(), r.size.as_str(), r.variant.as_str(), r.median_ms, r.ptx.unwrap().int_arith)
        })
        .collect();
    assert_eq!(
        got,
        [
            ("mm-amd", "small", "reference", Some(1.0), 3),
            ("mm-amd", "small", "none", Some(2.0), 9),
            ("mm-amd", "large", "reference", Some(3.0), 4),
            ("mm-amd", "large", "none", Some(4.0), 10),
        ]
    );
    assert_eq!(rows[1].program, "mmamd");
    assert_eq!(rows[3].cl_bytes, 40);
    let csv = builds_csv(&rows);
    assert_eq!(csv.lines().next().unwrap(), BUILDS_HEADER.join(","));
    assert_eq!(csv.lines().count(), 5);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_binary_that_is_not_ptx_has_empty_counts() {
    let dir = make_dump("notptx");
    std::fs::write(dir.join("000-references-mm-amd-mm-amd-cl.bin"), b"\x7fELF").unwrap();
    let rows = measure_builds(&dir, &["mm-amd".to_string()], &[]).unwrap();
    assert_eq!(rows[0].ptx, None);
    assert_eq!(rows[0].size, "");
    let first = builds_csv(&rows).lines().nth(1).unwrap().to_string();
    assert_eq!(first, "0,mm-amd,,reference,mm-amd-cl,10,4,,,,,,,,,,");
    std::fs::remove_dir_all(&dir).unwrap();
}

fn lift(args: &[&str], root: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_lift")).args(args).current_dir(root).output().unwrap()
}

#[test]
fn cli_writes_the_csv_and_refuses_a_folder_without_builds() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = make_dump("cli");
    let out = dir.join("builds.csv");
    let o = lift(&["builds", dir.to_str().unwrap(), "-o", out.to_str().unwrap()], &root);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.lines().nth(2).unwrap().starts_with("1,mm-amd,,none,mmamd,20,"), "{text}");

    // A chart goes beside the CSV; without -o there is nowhere to put it.
    let o = lift(&["builds", dir.to_str().unwrap(), "--chart", "large"], &root);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("-o"));

    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let o = lift(&["builds", empty.to_str().unwrap()], &root);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("empty") && err.contains("--dump-builds"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
