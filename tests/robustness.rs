//! Issue 12, part 2, tried through the `lift` binary as a careless user
//! would: programs that used to compile to wrong kernels, sizes that do not
//! fit the program, inputs that exhausted the stack or memory, and bad
//! command-line values. Each case either computes what the interpreter
//! computes or is refused with one line and exit code 2, never a signal.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
#[path = "support/fs.rs"]
mod fs;
#[path = "support/npy.rs"]
mod npy;

fn lift(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lift"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .unwrap()
}

fn has_device() -> bool {
    lift(&["devices"]).status.success()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into()
}

/// A scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lift-robust-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn npy<T: npyz::Serialize + npyz::AutoSerialize + Copy>(
    dir: &Path,
    name: &str,
    shape: &[u64],
    data: &[T],
) -> String {
    let p = dir.join(name);
    std::fs::write(&p, npy::npy_bytes(shape, data.iter().copied())).unwrap();
    p.display().to_string()
}

/// Values that are not a simple pattern, not powers of two.
fn data(n: usize) -> Vec<f32> {
    (0..n).map(|i| ((i * 37 % 101) as f32) * 0.25 - 7.0).collect()
}

/// Exit code 2 and a first line naming `what`.
fn refused(o: &Output, what: &str) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "exit 2 expected:\n{e}");
    let first = e.lines().find(|l| l.starts_with("error: ")).unwrap_or("");
    assert!(first.contains(what), "want `{what}` in:\n{e}");
}

#[test]
fn float3_results_have_opencl_layout() {
    if !has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    let d = scratch("float3");
    let out = d.join("o.npy").display().to_string();
    // A float3 occupies 16 bytes in a buffer: results and inputs are padded.
    let prog = write(
        &d,
        "f3.lift",
        "userfun f(x: float): float3 { return (float3)(x, x * 2.0f, x + 1.0f); }\n\
         userfun g(v: float3): float3 { return v * 2.0f; }\n\
         def out3(x: [float]N) = mapGlb(0, f) $ x\n\
         def in3(x: [float3]N) = mapGlb(0, g) $ x\n\
         def scalars3(x: [float3]N) = mapGlb(0, id) o asScalar $ x\n",
    );
    let x = npy(&d, "x.npy", &[1000], &data(1000));
    let o =
        lift(&["exec", &prog, "--def", "out3", "--input", &format!("x={x}"), "--output", &out, "--check"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = npy(&d, "v.npy", &[333, 3], &data(999));
    let o = lift(&["exec", &prog, "--def", "in3", "--input", &format!("x={v}"), "--output", &out, "--check"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // asScalar reads component c of float3 i at scalar 4 * i + c.
    let o = lift(&[
        "exec",
        &prog,
        "--def",
        "scalars3",
        "--input",
        &format!("x={v}"),
        "--output",
        &out,
        "--check",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn identical_nan_and_infinity_pass_the_check() {
    if !has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    let d = scratch("nan");
    let prog = write(
        &d,
        "nan.lift",
        "userfun f(x: float): float { return x > 0.0f ? sqrt(-1.0f - x * x) : -1.0f / 0.0f; }\n\
         def k(x: [float]N) = mapGlb(0, f) $ x\n\
         def same(x: [float]N) = mapGlb(0, id) $ x\n",
    );
    let x = npy(&d, "x.npy", &[77], &data(77));
    let out = d.join("o.npy").display().to_string();
    let o = lift(&["exec", &prog, "--input", &format!("x={x}"), "--output", &out, "--check"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("check: ok"));
    // Issue 23: NaN inputs make a gold of NaNs only, which validates
    // nothing (a kernel that ignored its input would pass): the check fails.
    let nan = npy(&d, "nan.npy", &[77], &[f32::NAN; 77]);
    let o =
        lift(&["exec", &prog, "--def", "same", "--input", &format!("x={nan}"), "--output", &out, "--check"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("the gold result is NaN at all 77 elements"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn sizes_that_do_not_fit_are_refused_before_launch() {
    if !has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    let d = scratch("sizes");
    let prog = write(
        &d,
        "s.lift",
        "def sp(x: [float]N) = join o mapGlb(0, mapSeq(id)) o split(128) $ x\n\
         def vec(x: [float]N) = asScalar o mapGlb(0, id) o asVector(4) $ x\n\
         userfun wide(j: int): float16 { return (float16)(j); }\n\
         def huge(x: [float]N) = mapGlb(0, wide) $ generate(2147483647, \\j -> j)\n\
         def over(x: [float]N) = mapGlb(0, wide) $ generate(N * 4194304, \\j -> j)\n",
    );
    let out = d.join("o.npy").display().to_string();
    let x1000 = format!("x={}", npy(&d, "x1000.npy", &[1000], &data(1000)));
    let x1001 = format!("x={}", npy(&d, "x1001.npy", &[1001], &data(1001)));
    let run = |def: &str, x: &str, extra: &[&str]| {
        let mut a = vec!["exec", prog.as_str(), "--def", def, "--input", x, "--output", out.as_str()];
        a.extend_from_slice(extra);
        lift(&a)
    };
    refused(
        &run("sp", &x1000, &[]),
        "s.lift:1:54: error: the sizes do not fit the program (N = 1000): split: length 1000 is not divisible by 128",
    );
    refused(
        &run("vec", &x1001, &[]),
        "the sizes do not fit the program (N = 1001): asVector(4): length 1001 is not a multiple of 4",
    );
    refused(&run("vec", &x1000, &["--size", "M=3"]), "--size `M`: `def vec` of");
    // A local size that does not divide the count launches whole
    // work-groups (250 vectors in 16 x 16 work-groups: 256 x 16).
    let o = run("vec", &x1000, &["--local", "16,16"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    refused(
        &run("vec", &x1000, &["--global", "250", "--local", "3"]),
        "local size 3 does not divide global size 250",
    );
    refused(
        &run("vec", &x1000, &["--global", "100000", "--local", "100000"]),
        "CL_DEVICE_MAX_WORK_GROUP_SIZE",
    );
    refused(&run("vec", &x1000, &["--local", "0"]), "--local `0`");
    refused(&run("vec", &x1000, &["--size", "N=2147483648"]), "2147483648");
    // 2^31 - 1 vectors of 64 bytes: more than a device allocates at once.
    refused(&run("huge", &x1000, &[]), "the output needs 137438953408 bytes");
    // N * 2^22 elements: beyond what 32-bit indices reach.
    refused(&run("over", &x1000, &[]), "more than 32-bit indices reach");
    // The right sizes still run and check.
    let x1024 = format!("x={}", npy(&d, "x1024.npy", &[1024], &data(1024)));
    assert!(run("sp", &x1024, &["--check"]).status.success());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn wide_npy_inputs_are_narrowed_only_when_exact() {
    if !has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    let d = scratch("npy64");
    let prog = write(
        &d,
        "id.lift",
        "def k(x: [float]N) = mapGlb(0, id) $ x\ndef ki(x: [int]N) = mapGlb(0, id) $ x\n",
    );
    let out = d.join("o.npy").display().to_string();
    let lossy_i = npy(&d, "i.npy", &[3], &[(1i64 << 40) + 5, 1, 2]);
    refused(
        &lift(&["exec", &prog, "--def", "ki", "--input", &format!("x={lossy_i}"), "--output", &out]),
        "value 1099511627781 at flat index 0 would change in int32",
    );
    let lossy_f = npy(&d, "f.npy", &[2], &[1.0f64, 0.1]);
    refused(
        &lift(&["exec", &prog, "--input", &format!("x={lossy_f}"), "--output", &out]),
        "value 0.1 at flat index 1 would change in float32",
    );
    let big_int = npy(&d, "bi.npy", &[2], &[16777217i32, 1]);
    refused(
        &lift(&["exec", &prog, "--input", &format!("x={big_int}"), "--output", &out]),
        "int32 value 16777217 at flat index 0 has no exact float",
    );
    let exact = npy(&d, "e.npy", &[3], &[1.5f64, -2.0, 1e10]);
    let o = lift(&["exec", &prog, "--input", &format!("x={exact}"), "--output", &out, "--check"]);
    assert!(
        o.status.success() && stderr(&o).contains("warning: input `x`: float64 data narrowed"),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// Programs that overflowed the stack or took gigabytes are refused at
/// once with a position (no device needed: `lift compile`).
#[test]
fn hostile_programs_exhaust_nothing() {
    let d = scratch("exhaust");
    let chain = format!("def k(x: [float]N) = mapGlb(0, {}) $ x\n", vec!["id"; 15_000].join(" o "));
    let product = format!("def k(x: [float]({})) = mapGlb(0, id) $ x\n", vec!["1"; 15_000].join("*"));
    let cexpr = format!(
        "userfun f(x: float): float {{ return {}; }}\ndef k(x: [float]N) = mapGlb(0, f) $ x\n",
        vec!["x"; 200_000].join("+")
    );
    let nested = format!("def k(x: {}float{}) = x\n", "[".repeat(20_000), "]N".repeat(20_000));
    let mut doubling = String::from("def d0(x: [float]N) = mapGlb(0, id) $ x\n");
    for i in 1..=20 {
        doubling.push_str(&format!("def d{i}(x: [float]N) = d{}(d{}(x))\n", i - 1, i - 1));
    }
    let unroll = "userfun add(x: float, y: float): float { return x + y; }\n\
                  def k(x: [float]N) = join o mapGlb(0, toGlobal(mapSeq(id)) o reduceSeqUnroll(add, 0.0f)) o split(1000000) $ x\n";
    let layout =
        format!("def k(x: [float]N) = {} o mapGlb(0, id) $ x\n", vec!["join o split(1)"; 40].join(" o "));
    let cases = [
        ("chain", chain.as_str(), "chained terms"),
        ("product", product.as_str(), "chained terms"),
        ("cexpr", cexpr.as_str(), "chained terms"),
        ("nested", nested.as_str(), "levels of nested expressions"),
        ("doubling", doubling.as_str(), "at most 100000 expressions"),
        ("unroll", unroll, "a kernel unrolls at most 65536"),
        ("layout", layout.as_str(), "too many layout patterns"),
    ];
    for (name, text, what) in cases {
        let p = write(&d, &format!("{name}.lift"), text);
        let start = std::time::Instant::now();
        let o = lift(&["compile", &p, "--def", if name == "doubling" { "d20" } else { "k" }]);
        refused(&o, what);
        assert!(start.elapsed().as_secs() < 20, "{name} took {:?}", start.elapsed());
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn zero_runs_is_refused() {
    let o = lift(&["run", "dot", "--runs", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("expected a positive integer, at most 10000"), "{}", stderr(&o));
}

#[test]
fn unwritable_outputs_and_unknown_sizes_are_bad_input() {
    refused(
        &lift(&["compile", "benchmarks/dot.lift", "--def", "dot", "-o", "/nonexistent-dir/x.cl"]),
        "-o /nonexistent-dir/x.cl",
    );
    refused(
        &lift(&["compile", "benchmarks/dot.lift", "--def", "dot", "--size", "Q=4"]),
        "has no size `Q` (its sizes: N)",
    );
    refused(
        &lift(&[
            "exec",
            "benchmarks/scal.lift",
            "--def",
            "scal",
            "--input",
            "alpha=2",
            "--input",
            "x=x.npy",
            "--output",
            "/nonexistent-dir/o.npy",
        ]),
        "--output /nonexistent-dir/o.npy",
    );
    if !has_device() {
        println!("skipped the run part: no OpenCL device");
        return;
    }
    refused(
        &lift(&["run", "dot", "--size", "tinyy"]),
        "--size tinyy: no selected benchmark defines this preset (they define: tiny, small, large)",
    );
    refused(
        &lift(&["run", "dot", "--size", "tiny", "--out", "/proc/lift-cannot-write"]),
        "--out: cannot write in",
    );
}

/// Runs benchmark `bench` with its config's `from` replaced by `to`, and
/// returns the rows of the results file.
fn run_edited_config(bench: &str, from: &str, to: &str) -> Vec<csv::StringRecord> {
    let d = scratch(&format!("cfg-{bench}"));
    let file = format!("configs/{bench}.yaml");
    let cfg = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(&file)).unwrap();
    assert!(cfg.contains(from), "{file} no longer contains `{from}`");
    let cfgs = d.join("configs");
    std::fs::create_dir_all(&cfgs).unwrap();
    write(&cfgs, &format!("{bench}.yaml"), &cfg.replace(from, to));
    let out = d.join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_lift"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["run", bench, "--size", "tiny", "--runs", "1", "--variants", "all", "--configs"])
        .arg(&cfgs)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "a failed row fails the run: {}", stderr(&o));
    let dev = std::fs::read_dir(&out).unwrap().next().unwrap().unwrap().path();
    let rows =
        csv::Reader::from_path(dev.join("results.csv")).unwrap().records().map(|r| r.unwrap()).collect();
    let _ = std::fs::remove_dir_all(&d);
    rows
}

#[test]
fn config_sizes_that_do_not_fit_are_refused_before_launch() {
    if !has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    // The dot product splits its input into chunks of 128: a size that is
    // not a multiple gives an error row naming the split; nothing launches.
    let rows = run_edited_config("dot", "tiny:  { N: 8064 }", "tiny:  { N: 8000 }");
    assert_eq!(rows.len(), 1);
    assert_eq!(&rows[0][3], "error");
    assert_eq!(
        &rows[0][25],
        "benchmarks/dot.lift:11:7: error: the sizes do not fit the program (N = 8000): \
         split: length 8000 is not divisible by 128"
    );
    // A size with a few digits too many is refused before the host
    // allocates 400 GB (which used to abort the whole run).
    let rows = run_edited_config("scal", "tiny:  { N: 7168 }", "tiny:  { N: 99999999999 }");
    assert_eq!(rows.len(), 1);
    assert_eq!(&rows[0][3], "error");
    assert_eq!(
        &rows[0][25],
        "inputs: `x` has 99999999999 elements, more than kernels index with 32-bit ints (2147483647)"
    );
}

/// Issue 23: a config must not reach outside its run. A scratch repository
/// root with the scal benchmark; each case edits its config and `lift list`
/// must refuse it with one line naming the file, the line and what was
/// expected (exit 2), before anything runs.
#[test]
fn configs_name_nothing_outside_the_repository() {
    let root = scratch("confine");
    for d in ["configs", "references/scal", "benchmarks/derivations", "peers/halide/bin"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    for f in ["references/scal/scal.cl", "benchmarks/scal.lift", "benchmarks/derivations/scal.txt"] {
        std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join(f), root.join(f)).unwrap();
    }
    let scal =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/scal.yaml")).unwrap();
    // A directory that a name of `x/../../<victim>` used to delete.
    let victim = scratch("confine-victim");
    std::fs::write(victim.join("keep.txt"), "keep").unwrap();
    let outside = victim.join("outside.lift");
    std::fs::write(&outside, "secret first line\n").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&outside, root.join("benchmarks/link.lift")).unwrap();
    let halide = |exe: &str| format!("{scal}halide:\n  inputs: [x]\n  output: out\n  executable: {exe}\n");
    let cases: Vec<(&str, String, &str, &str)> = vec![
        (
            "name",
            scal.replacen("name: scal", &format!("name: x/../../{}", victim.display()), 1),
            "name",
            "expected a plain name",
        ),
        ("input", scal.replacen("name: x,", "name: ../x,", 1), "inputs[1].name", "expected a plain name"),
        (
            "absolute",
            scal.replacen("program: benchmarks/scal.lift", &format!("program: {}", outside.display()), 1),
            "lift.kernels[0].program",
            "found an absolute path",
        ),
        (
            "dotdot",
            scal.replacen("program: benchmarks/scal.lift", "program: ../../x.lift", 1),
            "lift.kernels[0].program",
            "`..` leads out of it",
        ),
        (
            "derivation",
            scal.replacen("derivation: benchmarks/derivations/scal.txt", "derivation: /etc/hostname", 1),
            "lift.variants[0].kernels[0].derivation",
            "found an absolute path",
        ),
        ("exe", halide("/bin/sh"), "halide.executable", "--allow-config-executables"),
        (
            "exe-dotdot",
            halide("peers/../benchmarks/scal.lift"),
            "halide.executable",
            "under the repository's peers/",
        ),
    ];
    let mut cases = cases;
    if cfg!(unix) {
        cases.push((
            "link",
            scal.replacen("program: benchmarks/scal.lift", "program: benchmarks/link.lift", 1),
            "lift.kernels[0].program",
            "resolves outside it",
        ));
    }
    for (name, text, key, what) in &cases {
        let dir = root.join(format!("configs-{name}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("c.yaml"), text).unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_lift"))
            .args(["list", "--configs"])
            .arg(&dir)
            .arg("--root")
            .arg(&root)
            .output()
            .unwrap();
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{name}: exit 2 expected:\n{e}");
        let first = e.lines().next().unwrap_or("");
        // The line of the key's value in the file.
        let value_line = |needle: &str| text.lines().position(|l| l.contains(needle)).map(|i| i + 1);
        let line = match *name {
            "name" => value_line("name: x/"),
            "input" => value_line("name: ../x"),
            "exe" | "exe-dotdot" => value_line("executable:"),
            "derivation" => value_line("derivation: /etc"),
            _ => value_line("program: "),
        }
        .unwrap();
        assert!(
            first.contains(&format!("c.yaml:{line}: key `{key}`")) && first.contains(what),
            "{name}: want `c.yaml:{line}: key `{key}`` and `{what}` in:\n{e}"
        );
        assert!(!e.contains("secret first line"), "{name}: a file outside the root was read:\n{e}");
    }
    // The trust flag lets a config name an executable anywhere.
    let dir = root.join("configs-exe");
    let o = Command::new(env!("CARGO_BIN_EXE_lift"))
        .args(["list", "--allow-config-executables", "--configs"])
        .arg(&dir)
        .arg("--root")
        .arg(&root)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("halide"), "the halide variant is listed");
    assert_eq!(std::fs::read_to_string(victim.join("keep.txt")).unwrap(), "keep");
    let _ = std::fs::remove_dir_all(&root);
    let _ = std::fs::remove_dir_all(&victim);
}

/// A v1 `.npy` file with this header text and data.
fn npy_v1(header: &str, data: &[u8]) -> Vec<u8> {
    let mut h = header.as_bytes().to_vec();
    h.push(b'\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(h.len() as u16).to_le_bytes());
    out.extend_from_slice(&h);
    out.extend_from_slice(data);
    out
}

/// Issue 23: hostile `.npy` headers are refused in one line, at once
/// (no device needed: the inputs are read before one is chosen).
#[test]
fn hostile_npy_headers_are_refused_quickly() {
    let d = scratch("npyhdr");
    let prog = write(&d, "id.lift", "def k(x: [float]N) = mapGlb(0, id) $ x\n");
    let out = d.join("o.npy").display().to_string();
    let nested =
        format!("{{'descr': {}{}, 'fortran_order': False, 'shape': (4,), }}", "[".repeat(30), "]".repeat(30));
    let mut huge_header = b"\x93NUMPY\x02\x00".to_vec();
    huge_header.extend_from_slice(&u32::MAX.to_le_bytes());
    huge_header.extend_from_slice(b"{'descr'");
    let cases: [(&str, Vec<u8>, &str); 4] = [
        ("nested", npy_v1(&nested, &[0; 16]), "the header nests brackets more than 8 deep"),
        ("hlen", huge_header, "the header is 4294967295 bytes long, more than 10000"),
        (
            "shape",
            npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (1073741824,), }", &[]),
            "the header's shape [1073741824] needs 4294967296 bytes of data, but the file has 0 after its header",
        ),
        ("magic", b"PK\x03\x04 not numpy".to_vec(), "not a .npy file"),
    ];
    for (name, bytes, what) in cases {
        let p = d.join(format!("{name}.npy"));
        std::fs::write(&p, bytes).unwrap();
        let start = std::time::Instant::now();
        let o = lift(&["exec", &prog, "--input", &format!("x={}", p.display()), "--output", &out]);
        refused(&o, &format!("{}: {what}", p.display()));
        assert_eq!(stderr(&o).lines().count(), 1, "one line: {}", stderr(&o));
        assert!(start.elapsed().as_secs() < 10, "{name} took {:?}", start.elapsed());
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// Issue 23: counts, budgets and sizes on the command line are bounded,
/// and the message names the bound (exit 2, no panic or abort).
#[test]
fn cli_numbers_are_bounded() {
    let cases: [(&[&str], &str); 8] = [
        (&["run", "dot", "--runs", "18446744073709551615"], "expected a positive integer, at most 10000"),
        (&["run", "dot", "--runs", "1000000000"], "expected a positive integer, at most 10000"),
        (&["run", "dot", "--warmup", "99999999999"], "expected an integer from 0 to 10000"),
        (
            &["explore", "benchmarks/dot.lift", "--def", "dot", "--budget", "99999999999999999h"],
            "--budget `99999999999999999h`: at most a week (604800s, 10080m or 168h)",
        ),
        (
            &["explore", "benchmarks/dot.lift", "--def", "dot", "--runs", "18446744073709551615"],
            "expected a positive integer, at most 10000",
        ),
        (
            &["explore", "benchmarks/dot.lift", "--def", "dot", "--size", "N=1099511627776"],
            "--size `N=1099511627776`: at most 2147483647 (kernels index with 32-bit ints)",
        ),
        (
            &["compile", "benchmarks/dot.lift", "--size", "N=1099511627776"],
            "--size `N=1099511627776`: at most 2147483647",
        ),
        (
            &["exec", "benchmarks/dot.lift", "--output", "o.npy", "--rtol", "nan"],
            "`nan`: expected a finite number of at least 0",
        ),
    ];
    for (args, what) in cases {
        let o = lift(args);
        assert!(o.status.code() == Some(2) && stderr(&o).contains(what), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{args:?}: {}", stderr(&o));
    }
}

/// Issue 23: a command-line error is one line with exit 2 (clap's usage
/// block and `--help` hint left out), and names what was expected.
#[test]
fn command_line_errors_are_one_line() {
    let cases: [(&[&str], &str); 3] = [
        (&["explore", "benchmarks/dot.lift"], "--def <DEF>"),
        (&["run", "dot", "--runs", "many"], "invalid value 'many' for '--runs <RUNS>'"),
        (&["frobnicate"], "unrecognized subcommand 'frobnicate'"),
    ];
    for (args, what) in cases {
        let o = lift(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("error: ") && err.contains(what), "{args:?}: {err}");
    }
    // --help still prints its text and succeeds.
    let o = lift(&["explore", "--help"]);
    assert_eq!(o.status.code(), Some(0));
}

/// Issue 23: text that is not UTF-8 and a missing `def` are one
/// positioned line (no device needed).
#[test]
fn unreadable_programs_and_missing_defs_are_positioned() {
    let d = scratch("positions");
    let bin = d.join("bin.lift");
    std::fs::write(&bin, b"def k(x: [float]N) = mapGlb(0, id) $ x\n// caf\xe9\n").unwrap();
    let bin = bin.display().to_string();
    let empty = write(&d, "empty.lift", "// no defs\n\n");
    let one = write(&d, "one.lift", "def k(x: [float]N) = mapGlb(0, id) $ x\n");
    let out = d.join("o.npy").display().to_string();
    let cases: [(Vec<&str>, String); 6] = [
        (vec!["compile", &bin], format!("{bin}:2:7: error: not UTF-8 text (byte 0xe9 at byte offset 45)")),
        (vec!["rewrite", &bin], format!("{bin}:2:7: error: not UTF-8 text")),
        (vec!["compile", &empty], format!("{empty}:3:1: error: no `def` in the file")),
        (vec!["exec", &empty, "--output", &out], format!("{empty}:3:1: error: no `def` in the file")),
        (
            vec!["compile", &one, "--def", "nope"],
            format!("{one}:1:1: error: no `def nope` in the file (its defs: k)"),
        ),
        (
            vec!["explore", &one, "--def", "nope", "--out", &out],
            format!("{one}:1:1: error: no `def nope` in the file (its defs: k)"),
        ),
    ];
    for (args, want) in cases {
        let o = lift(&args);
        refused(&o, &want);
        assert_eq!(stderr(&o).lines().count(), 1, "{args:?}: {}", stderr(&o));
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// Issue 23: an OpenCL build error is one line: the driver's first error,
/// positioned in the source built (not the driver's temporary file), and
/// where the whole log was kept.
#[test]
fn build_errors_are_one_line_with_the_kept_log() {
    if !has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    let d = scratch("buildlog");
    // A reference kernel with a C error, run through a config.
    let cfgs = d.join("configs");
    std::fs::create_dir_all(&cfgs).unwrap();
    // Config paths stay inside the root: a scratch root with the
    // repository's programs and the bad kernel among its references.
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    for dir in ["benchmarks", "references"] {
        fs::copy_tree(&repo.join(dir), &d.join(dir));
    }
    let cl = write(
        &d.join("references"),
        "bad.cl",
        "kernel void scal(global float* x) { x[0] = undefined_name; }\n",
    );
    let scal = std::fs::read_to_string(repo.join("configs/scal.yaml")).unwrap();
    assert!(scal.contains("references/scal/scal.cl"));
    write(&cfgs, "scal.yaml", &scal.replace("references/scal/scal.cl", "references/bad.cl"));
    let outdir = d.join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_lift"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["run", "scal", "--size", "tiny", "--runs", "1", "--variants", "reference", "--root"])
        .arg(&d)
        .arg("--configs")
        .arg(&cfgs)
        .arg("--out")
        .arg(&outdir)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // The driver's own summary (PoCL's clang prints `1 error generated.` on
    // descriptor 2) is filtered out: the row's one line says it all.
    assert!(!stderr(&o).contains(" generated."), "{}", stderr(&o));
    let dev = std::fs::read_dir(&outdir).unwrap().next().unwrap().unwrap().path();
    let rows: Vec<csv::StringRecord> =
        csv::Reader::from_path(dev.join("results.csv")).unwrap().records().map(|r| r.unwrap()).collect();
    let msg = &rows[0][25];
    assert!(msg.starts_with(&format!("building {cl}")), "{msg}");
    assert!(msg.contains("undefined_name") && !msg.contains('\n'), "{msg}");
    assert!(!msg.contains("tempfile"), "the driver's temporary file: {msg}");
    let kept = msg.split("(full build log and source: ").nth(1).map(|s| s.trim_end_matches(')'));
    let kept = kept.expect("where the log was kept");
    assert!(std::fs::read_to_string(kept).unwrap().contains("undefined_name"));
    let _ = std::fs::remove_file(kept);
    let _ = std::fs::remove_dir_all(&d);
}

/// Issue 23: sizes past the device, the host or the interpreter are refused
/// before anything is allocated or launched, with an `error` row or exit 2.
#[test]
fn oversized_launches_and_checks_are_refused_before_running() {
    if !has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    // A launch of 8e9 work-items (the Lift row's global, evaluated as a reference's is): an error row, not a crash.
    let rows = run_edited_config("dot", "      global: [N/2]\n", "      global: [8000000000]\n");
    assert_eq!(rows.len(), 1);
    assert_eq!(&rows[0][3], "error");
    assert!(
        rows[0][25].contains("global size `8000000000` is 8000000000, expected 1 to 2147483647"),
        "{:?}",
        &rows[0]
    );
    // --check of 2^28 elements: refused before the kernel runs.
    let d = scratch("interp-budget");
    let prog = write(
        &d,
        "g.lift",
        "userfun f(j: int): float { return (float)(j); }\n\
         def h(x: [float]N) = mapGlb(0, f) $ generate(268435456, \\j -> j)\n",
    );
    let x = npy(&d, "x.npy", &[4], &data(4));
    let out = d.join("o.npy");
    let o = lift(&[
        "exec",
        &prog,
        "--input",
        &format!("x={x}"),
        "--output",
        &out.display().to_string(),
        "--check",
    ]);
    refused(&o, "--check: the output has 268435456 elements, more than the interpreter's budget of 67108864");
    assert!(!out.exists(), "the kernel ran");
    let _ = std::fs::remove_dir_all(&d);
}
