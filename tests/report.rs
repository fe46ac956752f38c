//! `lift report`: the committed README tables and
//! `reports/paper-vs-reproduced.md` are what the committed CSVs give, and
//! the generation itself on a tiny results file.

use std::path::{Path, PathBuf};
use std::process::Command;

use lift::harness::report::{drift_message, generate, write, PAPER_VS_REPRODUCED};

#[path = "support/fs.rs"]
mod fs;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-tests").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The first line where two texts differ, for a readable failure.
fn first_difference(a: &str, b: &str) -> String {
    for (i, (x, y)) in a.lines().zip(b.lines()).enumerate() {
        if x != y {
            return format!("line {}:\n  committed: {x}\n  generated: {y}", i + 1);
        }
    }
    format!("lengths differ: {} against {} lines", a.lines().count(), b.lines().count())
}

#[test]
fn committed_tables_are_what_the_committed_csvs_give() {
    let outputs = generate(repo()).unwrap_or_else(|e| panic!("lift report failed: {e}"));
    assert_eq!(outputs.len(), 2);
    for o in &outputs {
        assert!(
            o.committed == o.generated,
            "{} differs from what `lift report` generates ({:?}; run `lift report`): {}",
            o.path.display(),
            o.drifted,
            first_difference(&o.committed, &o.generated)
        );
    }
    assert_eq!(drift_message(&outputs), None);
    // The README has blocks at all, and the paper table a row per claim.
    let readme = &outputs[0].generated;
    assert!(
        readme.matches("<!-- lift report: ").count() >= 16,
        "the README's result tables lost their markers"
    );
    assert!(outputs[1].generated.contains("| CGO 2018 | Figure 8 |"));
}

/// A repository root holding the committed README, claims and CSVs.
fn copy_of_repo(name: &str) -> PathBuf {
    let root = scratch(name);
    std::fs::copy(repo().join("README.md"), root.join("README.md")).unwrap();
    fs::copy_tree(&repo().join("reports"), &root.join("reports"));
    root
}

#[test]
fn check_names_the_table_that_drifted_and_report_rewrites_it() {
    let root = copy_of_repo("drift");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let begin = "<!-- lift report: cgo17 reports/nvidia-h100-80gb-hbm3/results.csv begin -->";
    let at = readme.find(begin).expect("the CGO 2017 block");
    // Change MD's row inside the block, as a hand edit of a number would.
    let row = at + readme[at..].find("| MD | ").unwrap();
    let end = row + readme[row..].find('\n').unwrap();
    let edited = format!("{}| MD | 9.99 | 9.99 | – | – |{}", &readme[..row], &readme[end..]);
    assert_ne!(edited, readme);
    std::fs::write(root.join("README.md"), &edited).unwrap();

    let lift = env!("CARGO_BIN_EXE_lift");
    let out = Command::new(lift).args(["report", "--check", "--root"]).arg(&root).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("README.md: the table `cgo17 reports/nvidia-h100-80gb-hbm3/results.csv` differs"),
        "{stderr}"
    );

    let out = Command::new(lift).args(["report", "--root"]).arg(&root).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_to_string(root.join("README.md")).unwrap(), readme);
    let out = Command::new(lift).args(["report", "--check", "--root"]).arg(&root).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    // A hand edit of the generated paper table is caught too.
    let paper = root.join(PAPER_VS_REPRODUCED);
    let text = std::fs::read_to_string(&paper).unwrap();
    let edited = text.replacen("| CGO 2017 | Figure 8 (section 7.3) |", "| CGO 2017 | Figure 8 |", 1);
    assert_ne!(edited, text);
    std::fs::write(&paper, edited).unwrap();
    let out = Command::new(lift).args(["report", "--check", "--root"]).arg(&root).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("reports/paper-vs-reproduced.md differs"), "{stderr}");
}

const HEADER: &str = "benchmark,size,variant,status,median_ms,min_ms,max_ms,ci_low_ms,ci_high_ms,runs,\
max_rel_error,compile_ms,kernel_lines,kernel_bytes,gbps,gflops,frac_bandwidth,frac_flops,timing,\
build_options,device,driver,opencl_version,git_commit,date,message,gelems";

/// A results row with only the columns the report reads.
fn row(bench: &str, size: &str, variant: &str, status: &str, ms: f64, timing: &str) -> String {
    format!(
        "{bench},{size},{variant},{status},{ms},,,,,5,,,,1000,,,,,{timing},,Tiny GPU,1.0,OpenCL 3.0,abc1234,\
         2026-01-02T03:04:05Z,,"
    )
}

const CLAIMS: &str = r#"
intro: The tiny papers.
claims:
  - paper: CGO 2017
    figure: Figure 8
    claim: Within 5% on average.
    ours:
      - csv: reports/tiny/results.csv
        quantity: speedup
        of: [all]
        over: [reference]
        stat: geomean
    reason: A tiny GPU.
table1:
  csv: reports/table1.csv
  note: Lines of code.
"#;

/// `reports/tiny/results.csv` holding `rows` under the header.
fn write_rows(root: &Path, rows: &[String]) {
    std::fs::write(root.join("reports/tiny/results.csv"), format!("{HEADER}\n{}\n", rows.join("\n")))
        .unwrap();
}

/// A root with a README holding one block, a tiny results file, claims and
/// a Table 1.
fn tiny_root(name: &str, readme: &str) -> PathBuf {
    let root = scratch(name);
    std::fs::create_dir_all(root.join("reports/tiny")).unwrap();
    let rows = [
        row("md", "small", "reference", "ok", 2.0, "profiling"),
        row("md", "small", "all", "ok", 1.0, "profiling"),
        row("gemv", "small", "reference", "ok", 1.0, "profiling"),
        row("gemv", "small", "all", "ok", 2.0, "profiling"),
        row("gemv", "small", "clblast", "FAILED", 0.5, "host"),
    ];
    write_rows(&root, &rows);
    std::fs::write(root.join("reports/paper-claims.yaml"), CLAIMS).unwrap();
    std::fs::write(
        root.join("reports/table1.csv"),
        "benchmark,opencl_lines,high_level_lines,low_level_lines,paper_opencl_lines,paper_high_level_lines,\
         paper_low_level_lines\nmd,34,21,25,50,34,34\ndot,34,4,7,,,\n",
    )
    .unwrap();
    std::fs::write(root.join("README.md"), readme).unwrap();
    root
}

#[test]
fn renders_the_tables_of_a_tiny_results_file() {
    let readme =
        "# Tiny\n\nHand-written 0.5.\n\n<!-- lift report: cgo17 reports/tiny/results.csv begin -->\n\
                  stale\n<!-- lift report: cgo17 reports/tiny/results.csv end -->\nAfter.\n";
    let root = tiny_root("tiny", readme);
    let outputs = generate(&root).unwrap();
    let want = "# Tiny\n\nHand-written 0.5.\n\n<!-- lift report: cgo17 reports/tiny/results.csv begin -->\n\n\
From `reports/tiny/results.csv` (5 rows, 4 ok; commit `abc1234`, Tiny GPU): the reference's median time over \
the Lift kernel's with every optimisation (`all`) and over CLBlast's, per size (Figure 8).\n\n\
| benchmark | all: small | CLBlast: small |\n\
| --- | --- | --- |\n\
| MD | 2.00 | – |\n\
| GEMV | 0.50 | FAILED |\n\n\
Geometric means of `all` over the reference, every size: 2.00 (lowest 2.00, MD small) for N-Body (NVIDIA) to \
MRI-Q; 0.50 (lowest 0.50, GEMV small) for Convolution to MM (NVIDIA).\n\
Each level over the reference, geometric mean over the twelve of Table 1 and every size: `none` –, `barrier` –, \
`barrier+cf` –, `all` 1.00. Largest kernel without array-access simplification: –.\n\
Clocks (`timing`): reference, all: OpenCL profiling events; clblast: host clock.\n\n\
<!-- lift report: cgo17 reports/tiny/results.csv end -->\nAfter.\n";
    assert_eq!(outputs[0].generated, want, "{}", first_difference(&outputs[0].generated, want));
    assert_eq!(outputs[0].drifted, vec!["cgo17 reports/tiny/results.csv".to_string()]);

    let paper = &outputs[1].generated;
    assert!(
        paper.contains(
            "| CGO 2017 | Figure 8 | Within 5% on average. | 1.00x (geometric mean of 2; 0.50x to 2.00x) | \
             commit `abc1234`, Tiny GPU | A tiny GPU. |"
        ),
        "{paper}"
    );
    // Table 1 lists the paper's benchmarks only, the paper's numbers beside ours.
    assert!(paper.contains("| MD | 50 | 34 | 34 | 21 | 34 | 25 |\n"), "{paper}");
    assert!(!paper.contains("| dot |"), "{paper}");

    // Writing makes the committed text the generated one; a second
    // generation then finds nothing to change.
    write(&root, &outputs).unwrap();
    let again = generate(&root).unwrap();
    assert!(again.iter().all(|o| o.committed == o.generated && o.drifted.is_empty()));
    assert_eq!(drift_message(&again), None);
}

#[test]
fn refuses_unknown_blocks_and_claims_without_rows() {
    let readme = "<!-- lift report: nonsense reports/tiny/results.csv begin -->\n\
                  <!-- lift report: nonsense reports/tiny/results.csv end -->\n";
    let root = tiny_root("unknown-kind", readme);
    let e = generate(&root).unwrap_err().to_string();
    assert!(e.contains("README.md:1: block `nonsense reports/tiny/results.csv`: unknown kind"), "{e}");

    let root = tiny_root("no-rows", "no blocks\n");
    let claims = CLAIMS.replace("of: [all]", "of: [barrier]");
    std::fs::write(root.join("reports/paper-claims.yaml"), claims).unwrap();
    let e = generate(&root).unwrap_err().to_string();
    assert!(e.contains("claim 1 (CGO 2017, Figure 8)") && e.contains("no validated rows"), "{e}");

    let root = tiny_root("bad-claims", "no blocks\n");
    std::fs::write(root.join("reports/paper-claims.yaml"), CLAIMS.replace("stat: geomean", "stat: median"))
        .unwrap();
    let e = generate(&root).unwrap_err().to_string();
    assert!(e.contains("paper-claims.yaml") && e.contains("median"), "{e}");
}

/// A host-timed peer is divided by the host-timed twin of the row beside
/// it; without a twin the ratio is marked as one of two clocks.
#[test]
fn a_host_timed_peer_is_compared_on_the_host_clock() {
    let readme = "<!-- lift report: cgo17 reports/tiny/results.csv begin -->\n\
                  <!-- lift report: cgo17 reports/tiny/results.csv end -->\n";
    let root = tiny_root("clocks", readme);
    let rows = [
        row("gemv", "small", "reference", "ok", 1.0, "profiling"),
        row("gemv", "small", "all", "ok", 0.5, "profiling"),
        row("gemv", "small", "clblast", "ok", 2.0, "host"),
        row("gemv", "small", "reference@host", "ok", 3.0, "host"),
        row("atax", "small", "reference", "ok", 1.0, "profiling"),
        row("atax", "small", "all", "ok", 0.5, "profiling"),
        row("atax", "small", "clblast", "ok", 2.0, "host"),
    ];
    write_rows(&root, &rows);
    let text = generate(&root).unwrap()[0].generated.clone();
    // GEMV: the host-timed reference (3.0) over CLBlast (2.0); ATAX: the
    // profiling-timed reference, marked.
    assert!(text.contains("| GEMV | 2.00 | 1.50 |\n"), "{text}");
    assert!(text.contains("| ATAX | 2.00 | 0.50† |\n"), "{text}");
    assert!(text.contains("† compares a host-timed peer with profiling events"), "{text}");
}
