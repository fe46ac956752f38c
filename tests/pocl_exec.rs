//! Differential tests: every program in `tests/programs` is compiled at each
//! optimisation level, run on the OpenCL device (PoCL in CI) through
//! `lift exec --check`, and compared with the interpreter on random inputs.
//! Sizes come from each file's `// test-sizes:` line and are not powers of
//! two where the program allows.

use lift::ir::SourceFile;
use lift::types::Type;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
#[path = "support/npy.rs"]
mod npy;

fn lift() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lift"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn has_device() -> bool {
    lift().arg("devices").output().map(|o| o.status.success()).unwrap_or(false)
}

fn test_sizes(text: &str) -> BTreeMap<String, i64> {
    let line = text.lines().find_map(|l| l.strip_prefix("// test-sizes:")).expect("a `// test-sizes:` line");
    line.split(',')
        .map(|kv| {
            let (k, v) = kv.trim().split_once('=').expect("NAME=VALUE");
            (k.trim().to_string(), v.trim().parse().expect("integer size"))
        })
        .collect()
}

/// A deterministic pseudo-random float in [-1, 1).
fn rand(state: &mut u64) -> f32 {
    *state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    ((*state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
}

fn write_npy(path: &Path, shape: &[u64], data: &[f32]) {
    std::fs::write(path, npy::npy_bytes(shape, data.iter().copied())).unwrap();
}

#[test]
fn generated_kernels_match_the_interpreter() {
    if !has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    let dir = std::env::temp_dir().join(format!("lift-pocl-exec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files: Vec<PathBuf> = std::fs::read_dir("tests/programs")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "lift"))
        .collect();
    files.sort();
    let mut seed = 0x5eed_u64;
    let mut checked = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let sizes = test_sizes(&text);
        let program = lift::parse::parse_program(&SourceFile::new(f.display().to_string(), text)).unwrap();
        let def = program.defs.last().unwrap();
        let mut inputs = Vec::new();
        for p in &def.params {
            let ty = p.ty.as_ref().unwrap();
            match ty {
                Type::Array(..) => {
                    let shape: Vec<u64> = ty
                        .lengths()
                        .iter()
                        .map(|l| l.eval_with(&|n| sizes.get(n).copied()).unwrap() as u64)
                        .collect();
                    let n: u64 = shape.iter().product();
                    let data: Vec<f32> = (0..n).map(|_| rand(&mut seed)).collect();
                    let path = dir.join(format!("{}_{}.npy", def.name, p.name));
                    write_npy(&path, &shape, &data);
                    inputs.push(format!("{}={}", p.name, path.display()));
                }
                _ => inputs.push(format!("{}=1.75", p.name)),
            }
        }
        for level in [
            &["--no-arith-simplify", "--no-barrier-elim", "--no-cf-simplify"][..],
            &["--no-arith-simplify", "--no-cf-simplify"],
            &["--no-arith-simplify"],
            &[],
        ] {
            let mut cmd = lift();
            cmd.arg("exec").arg(f).args(["--def", &def.name, "--check", "--output"]).arg(dir.join("out.npy"));
            for i in &inputs {
                cmd.args(["--input", i]);
            }
            cmd.args(level);
            let o = cmd.output().unwrap();
            let stdout = String::from_utf8_lossy(&o.stdout);
            assert!(
                o.status.success() && stdout.contains("check: ok"),
                "{} {level:?}:\n{stdout}\n{}",
                f.display(),
                String::from_utf8_lossy(&o.stderr)
            );
            checked += 1;
        }
    }
    assert_eq!(checked, files.len() * 4);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `lift exec --runs N` times the kernel after writing its output: the
/// line names the runs and the clock, and the time is positive.
#[test]
fn exec_times_the_kernel_on_request() {
    if !has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    let dir = std::env::temp_dir().join(format!("lift-exec-runs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let x = dir.join("x.npy");
    let mut seed = 7_u64;
    // scal takes whole chunks of 1024.
    let data: Vec<f32> = (0..3072).map(|_| rand(&mut seed)).collect();
    write_npy(&x, &[3072], &data);
    let o = lift()
        .args(["exec", "benchmarks/scal.lift", "--def", "scal", "--runs", "3", "--input", "alpha=2.0"])
        .arg("--input")
        .arg(format!("x={}", x.display()))
        .arg("--output")
        .arg(dir.join("out.npy"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&o.stderr));
    let line = stdout.lines().find(|l| l.starts_with("kernel: median ")).expect("a timing line");
    assert!(line.ends_with("ms of 3 runs (OpenCL profiling events)"), "{line}");
    let ms: f64 = line["kernel: median ".len()..].split(' ').next().unwrap().parse().unwrap();
    assert!(ms > 0.0, "{line}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `lift exec --local L` where L does not divide the work-item count at
/// the run's sizes (1001 elements, 37 x 29 rows and columns) launches the
/// count rounded up to whole work-groups, the extra work-items checking
/// their bounds, and computes what the interpreter computes (before, the
/// launch was refused: OpenCL 1.2 runs only whole work-groups).
#[test]
fn a_local_size_that_does_not_divide_launches_whole_work_groups() {
    if !has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    let dir = std::env::temp_dir().join(format!("lift-pocl-whole-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let funs =
        "userfun fmac(a: float, b: float, c: float): float { return fmin(fmax(a * b + c, -1.0f), 1.0f); }\n\
                userfun sq(x: float): float { return x * x; }\n";
    let cases = [
        ("def f(a: [float]N, b: [float]N, c: [float]N) = mapGlb(0, \\(p, q, s) -> fmac(p, q, s), zip(a, b, c))\n",
         vec![("a", vec![1001]), ("b", vec![1001]), ("c", vec![1001])], "64"),
        ("def f(a: [[float]W]H) = mapGlb(1, mapGlb(0, sq), a)\n", vec![("a", vec![37, 29])], "16,8"),
    ];
    let mut seed = 0xab_u64;
    for (def, inputs, local) in cases {
        let file = dir.join("whole.lift");
        std::fs::write(&file, format!("{funs}{def}")).unwrap();
        let mut cmd = lift();
        cmd.arg("exec").arg(&file).args(["--def", "f", "--local", local, "--check", "--output"]);
        cmd.arg(dir.join("out.npy"));
        for (name, shape) in inputs {
            let n: u64 = shape.iter().product();
            let data: Vec<f32> = (0..n).map(|_| 1.5 * rand(&mut seed)).collect();
            let path = dir.join(format!("{name}.npy"));
            write_npy(&path, &shape, &data);
            cmd.args(["--input", &format!("{name}={}", path.display())]);
        }
        let o = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success() && stdout.contains("check: ok"),
            "{def}:\n{stdout}\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
