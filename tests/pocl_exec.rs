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
