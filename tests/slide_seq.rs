//! `slideSeqPlus` on the OpenCL device (PoCL here) against the interpreter:
//! windows that overlap by more than one element, that do not overlap, that
//! skip elements (step > size), of tuples, with sizes known at compile time
//! or not, at sizes that are not powers of two. The programs of
//! `tests/programs/slideseq_*.lift` are checked by `tests/pocl_exec.rs`.

use std::path::Path;
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

/// Deterministic pseudo-random floats in [-1, 1).
fn data(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

fn write_npy(path: &Path, shape: &[u64], values: &[f32]) {
    std::fs::write(path, npy::npy_bytes(shape, values.iter().copied())).unwrap();
}

const FUNS: &str = "userfun acc(s: float, x: float): float { return 0.75f * s + x; }
userfun acc2(s: float, x: float, y: float): float { return 0.75f * s + x - 0.5f * y; }
";

/// Runs the last def of `src` on inputs `names` (each `[[float]N]M`) at
/// every optimisation level, with and without compile-time sizes, and
/// checks it against the interpreter.
fn check(tag: &str, src: &str, names: &[&str], n: u64, m: u64) {
    let dir = std::env::temp_dir().join(format!("lift-slideseq-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("p.lift");
    std::fs::write(&file, format!("{FUNS}{src}")).unwrap();
    let mut inputs = Vec::new();
    for (k, name) in names.iter().enumerate() {
        let path = dir.join(format!("{name}.npy"));
        write_npy(&path, &[m, n], &data((n * m) as usize, 17 + k as u64));
        inputs.push(format!("{name}={}", path.display()));
    }
    // The sizes the program has (a row length may be a constant).
    let sizes: Vec<String> = [("N", n), ("M", m)]
        .iter()
        .filter(|(k, _)| src.contains(&format!("]{k}")))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    for level in [&["--no-arith-simplify", "--no-barrier-elim", "--no-cf-simplify"][..], &[]] {
        for known in [false, true] {
            let mut cmd = lift();
            cmd.arg("exec").arg(&file).args(["--check", "--output"]).arg(dir.join("out.npy")).args(level);
            for i in &inputs {
                cmd.args(["--input", i]);
            }
            if known {
                for s in &sizes {
                    cmd.args(["--size", s]);
                }
            }
            let o = cmd.output().unwrap();
            let stdout = String::from_utf8_lossy(&o.stdout);
            assert!(
                o.status.success() && stdout.contains("check: ok"),
                "{tag} {level:?} known sizes {known}:\n{stdout}\n{}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// One thread per row walks it with `slideSeqPlus(size, step)` over the
/// row padded by 2 on each side, an order-sensitive sum of each window.
fn rows(size: i64, step: i64) -> String {
    format!(
        "def rows(a: [[float]N]M) = mapGlb(0, slideSeqPlus({size}, {step}, toGlobal(mapSeq(id)) o reduceSeq(acc, 0.0f)) o pad(2, 2, clamp)) $ a"
    )
}

#[test]
fn windows_of_every_overlap_match_the_interpreter() {
    if !has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    // (size, step): keeps 2 of 3, 3 of 5, none of 4 (step = size), none
    // and skips one (step > size), a window of one element.
    for (size, step) in [(3, 1), (5, 2), (4, 4), (2, 3), (1, 1)] {
        check(&format!("rows-{size}-{step}"), &rows(size, step), &["a"], 41, 7);
    }
}

#[test]
fn unpadded_windows_and_a_private_result_match_the_interpreter() {
    if !has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    // N - 2 windows: not provably any, so the prologue is guarded.
    check(
        "unpadded",
        "def rows(a: [[float]N]M) = mapGlb(0, slideSeqPlus(3, 1, toGlobal(mapSeq(id)) o reduceSeq(acc, 0.0f))) $ a",
        &["a"],
        19,
        5,
    );
    // The windows' results kept in private memory, then copied out.
    check(
        "private",
        "def rows(a: [[float]17]M) = mapGlb(0, \\r -> toGlobal(mapSeq(id)) o join o toPrivate(slideSeqPlus(4, 3, mapSeq(id) o reduceSeq(acc, 0.0f))) $ r) $ a",
        &["a"],
        17,
        9,
    );
}

#[test]
fn windows_of_tuples_and_of_row_neighbourhoods_match_the_interpreter() {
    if !has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    // A window of (a, b) pairs.
    check(
        "tuples",
        "def pairs(a: [[float]N]M, b: [[float]N]M) = mapGlb(0, \\p -> slideSeqPlus(3, 2, toGlobal(mapSeq(id)) o reduceSeq(\\(s, t) -> acc2(s, get(0, t), get(1, t)), 0.0f)) $ zip(get(0, p), get(1, p))) $ zip(a, b)",
        &["a", "b"],
        23,
        6,
    );
    // Columns walked downwards over 3x2 neighbourhoods: [[float]2]3 windows
    // sliding by 2 rows (1 kept), one thread per column pair.
    check(
        "cols",
        "def cols(a: [[float]N]M) = transpose o mapGlb(0, slideSeqPlus(3, 2, toGlobal(mapSeq(id)) o reduceSeq(acc, 0.0f) o join)) o transpose o map(slide(2, 1)) o pad(1, 1, mirror) $ a",
        &["a"],
        13,
        18,
    );
}
