//! Table 1 code sizes on small inline programs.

use std::path::{Path, PathBuf};

use lift::harness::table1::{
    count_code_lines, lift_def_lines, paper_sizes, table1_markdown, write_table1, Lang, PaperSizes,
    Table1Entry, Table1Error, TABLE1_HEADER,
};

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("table1-tests").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

const KERNEL: &str = r#"// SAXPY: a line comment
/* a block comment
   over three lines
*/
#define TILE 64

kernel void saxpy(global float* x, /* inline */ global float* y, float a) {
  int i = get_global_id(0); // trailing comment
  char q = '"';   /* a quote in a character literal opens no string */
  printf("// not a comment");

  y[i] = a * x[i] + y[i]; /* block
  comment */ }
"#;

#[test]
fn counts_opencl_code_lines() {
    // #define, kernel, int i, char q, printf, y[i] and the line closing the
    // block comment (it holds `}`).
    assert_eq!(count_code_lines(KERNEL, Lang::OpenCl), 7);
    assert_eq!(count_code_lines("", Lang::OpenCl), 0);
    assert_eq!(count_code_lines("\n  \n\t\n", Lang::OpenCl), 0);
    assert_eq!(count_code_lines("/* a */ x /* b */", Lang::OpenCl), 1);
    assert_eq!(count_code_lines("/* a */ /* b */ // c", Lang::OpenCl), 0);
    // An unclosed block comment runs to the end of the file.
    assert_eq!(count_code_lines("x\n/* open\ny\nz", Lang::OpenCl), 1);
    // Windows line ends count like Unix ones.
    assert_eq!(count_code_lines("a\r\n\r\n// c\r\nb\r\n", Lang::OpenCl), 2);
}

#[test]
fn a_quote_opens_a_literal_only_in_c() {
    // In C, `'/*'` is a character literal; in Lift the quote is plain text,
    // so the `/*` opens a comment that hides the next line.
    let text = "q = '/*';\nnext();\n/* */\n";
    assert_eq!(count_code_lines(text, Lang::OpenCl), 2);
    assert_eq!(count_code_lines(text, Lang::Lift), 1);
    // A string hides comment markers in both.
    assert_eq!(count_code_lines("s(\"/*\");\nx\n", Lang::Lift), 2);
    // An escaped quote does not end a string.
    assert_eq!(count_code_lines("s(\"\\\" /*\");\nx\n", Lang::OpenCl), 2);
}

const PROGRAM: &str = "\
// Scaled dot product.
userfun mult(x: float, y: float): float { return x * y; }
userfun add(x: float, y: float): float {
  return x + y;
}
userfun unused(x: float): float { return x; }

def dotHigh(x: [float]N, y: [float]N) =
  reduce(add, 0.0f) o
  map(\\(a, b) -> mult(a, b)) $ zip(x, y)

// The low-level version: one comment line, not counted.
def dot(x: [float]N, y: [float]N) =
  join o mapWrg(0, join o mapLcl(0, toGlobal(mapSeq(id)) o reduceSeq(add, 0.0f)) o split(128)) o
  /* multiplication first */
  split(1024) o mapGlb(0, mult) $ zip(x, y)
def default(x: [float]N) = x
";

#[test]
fn def_lines_include_the_user_functions_named() {
    // dotHigh: 3 own lines + mult (1) + add (3).
    assert_eq!(lift_def_lines(PROGRAM, "dotHigh"), Some(7));
    // dot: 3 code lines + add (3) + mult (1); `id` is no userfun here.
    assert_eq!(lift_def_lines(PROGRAM, "dot"), Some(7));
    // `def default` is its own def, not part of `def` matching for `def`.
    assert_eq!(lift_def_lines(PROGRAM, "default"), Some(1));
    assert_eq!(lift_def_lines(PROGRAM, "missing"), None);
    // A userfun is not a def.
    assert_eq!(lift_def_lines(PROGRAM, "mult"), None);
    // An indented or commented-out `def` is not a top-level one.
    assert_eq!(lift_def_lines("  def a(x: float) = x\n", "a"), None);
    assert_eq!(lift_def_lines("/*\ndef a(x: float) = x\n*/\n", "a"), None);
}

#[test]
fn paper_numbers_are_keyed_by_benchmark() {
    assert_eq!(paper_sizes("nbody-nvidia"), Some(PaperSizes { opencl: 139, high_level: 34, low_level: 49 }));
    assert_eq!(paper_sizes("mm-nvidia"), Some(PaperSizes { opencl: 768, high_level: 17, low_level: 65 }));
    assert_eq!(paper_sizes("mri-q"), Some(PaperSizes { opencl: 41, high_level: 43, low_level: 43 }));
    assert_eq!(paper_sizes("dot"), None);
}

#[test]
fn writes_csv_and_markdown() {
    let dir = scratch("write");
    let cl = dir.join("gemv.cl");
    std::fs::write(&cl, KERNEL).expect("write");
    let helper = dir.join("helper.cl");
    std::fs::write(&helper, "// helper\nfloat twice(float x) { return 2 * x; }\n").expect("write");
    let lift = dir.join("gemv.lift");
    std::fs::write(&lift, PROGRAM).expect("write");
    let entries = vec![
        Table1Entry {
            benchmark: "gemv".into(),
            reference_files: vec![cl.clone(), helper],
            high_level: Some((lift.clone(), "dotHigh".into())),
            low_level: vec![(lift.clone(), "dot".into())],
        },
        Table1Entry {
            benchmark: "dot".into(),
            reference_files: vec![cl],
            high_level: None,
            low_level: vec![],
        },
    ];
    let table = write_table1(&entries, &dir.join("out")).expect("write table 1");
    assert_eq!(table.rows[0].opencl_lines, Some(8));
    assert_eq!(table.rows[0].high_level_lines, Some(7));
    assert_eq!(table.rows[1].low_level_lines, None);

    let csv = std::fs::read_to_string(&table.csv).expect("csv");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], TABLE1_HEADER.join(","));
    assert_eq!(lines[1], "gemv,8,7,7,213,15,32");
    assert_eq!(lines[2], "dot,7,,,,,");
    assert_eq!(lines.len(), 3);

    let md = std::fs::read_to_string(&table.markdown).expect("md");
    assert_eq!(md, table1_markdown(&table.rows));
    assert!(md.contains("| GEMV | 8 | 213 | 7 | 15 | 7 | 32 |"), "{md}");
    assert!(md.contains("| dot | 7 | – | – | – | – | – |"), "{md}");
}

#[test]
fn missing_files_and_defs_are_named() {
    let dir = scratch("errors");
    let lift = dir.join("p.lift");
    std::fs::write(&lift, PROGRAM).expect("write");
    let entry = |low: &str| Table1Entry {
        benchmark: "nn".into(),
        reference_files: vec![],
        high_level: None,
        low_level: vec![(lift.clone(), low.into())],
    };
    let err = write_table1(&[entry("nnLow")], &dir).expect_err("no such def");
    assert!(matches!(err, Table1Error::DefNotFound { .. }));
    assert!(err.to_string().contains("p.lift") && err.to_string().contains("def nnLow"), "{err}");

    let gone = Table1Entry {
        benchmark: "nn".into(),
        reference_files: vec![dir.join("nn.cl")],
        high_level: None,
        low_level: vec![],
    };
    let err = write_table1(&[gone], &dir).expect_err("no such file");
    assert!(err.to_string().contains("nn.cl"), "{err}");
    assert!(!dir.join("table1.csv").exists(), "nothing written on error");
}

/// The committed `reports/table1.csv` is what `lift table1` writes from the
/// committed configs, programs and references (it had drifted once).
#[test]
fn the_committed_table_matches_the_configs() {
    let out = scratch("committed");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_lift"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["table1", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for f in ["table1.csv", "table1.md"] {
        let fresh = std::fs::read_to_string(out.join(f)).unwrap();
        let committed = std::fs::read_to_string(root.join("reports").join(f)).unwrap();
        assert_eq!(fresh, committed, "reports/{f} differs from `lift table1`: run it and commit");
    }
}
