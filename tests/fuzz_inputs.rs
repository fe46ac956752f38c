//! Issue 23: fuzzing of the inputs besides programs — `.npy` files,
//! benchmark configs and command-line values. Each input must give a value
//! or a one-line error quickly: never a panic, an abort or a hang.
//!
//! The suite runs a smoke portion (a few seconds, fixed seed);
//! `LIFT_FUZZ_INPUTS=N` (and `LIFT_FUZZ_SEED=S`) runs N inputs of each kind
//! (docs/TESTING.md).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "support/fuzz/mod.rs"]
mod fuzz;
use fuzz::Rng;

fn count(smoke: usize) -> usize {
    std::env::var("LIFT_FUZZ_INPUTS").ok().and_then(|v| v.parse().ok()).unwrap_or(smoke)
}

fn seed() -> u64 {
    std::env::var("LIFT_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(23)
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lift-fuzz-inputs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `f` on `input`, failing on a panic or on taking over 5 s; returns
/// the error text, if any.
fn checked<T>(what: &str, input: &str, f: impl FnOnce() -> Result<T, String>) -> Option<String> {
    let start = Instant::now();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    assert!(start.elapsed() < Duration::from_secs(5), "{what} took {:?} on {input}", start.elapsed());
    match r {
        Ok(Ok(_)) => None,
        Ok(Err(e)) => {
            assert!(!e.is_empty() && !e.contains('\n'), "{what}: not one line on {input}: {e}");
            Some(e)
        }
        Err(_) => panic!("{what} panicked on {input}"),
    }
}

/// A `.npy` header around `dict`, v1 or v2, with or without its data.
fn npy_bytes(r: &mut Rng, dict: &str) -> Vec<u8> {
    let mut h = dict.as_bytes().to_vec();
    h.push(b'\n');
    let v2 = r.chance(30);
    let mut out = if v2 { b"\x93NUMPY\x02\x00".to_vec() } else { b"\x93NUMPY\x01\x00".to_vec() };
    let mut len = h.len() as u64;
    if r.chance(5) {
        len = *r.pick(&[0, 1, 0xffff, 0xffff_ffff, len + 1, len.saturating_sub(1)]);
    }
    if v2 {
        out.extend_from_slice(&(len as u32).to_le_bytes());
    } else {
        out.extend_from_slice(&(len as u16).to_le_bytes());
    }
    out.extend_from_slice(&h);
    let data = r.below(64);
    out.extend((0..data).map(|_| r.next_u64() as u8));
    out
}

fn npy_dict(r: &mut Rng) -> String {
    let descr = match r.below(6) {
        0 => {
            let n = r.below(40);
            format!("{}'<f4'{}", "[".repeat(n), "]".repeat(n))
        }
        1 => "[('a', '<f4'), ('b', '<i4')]".to_string(),
        _ => format!("'{}'", r.pick(&["<f4", "<f8", "<i4", "<i8", ">f4", "|u1", "<c8", "O", "<f", ""])),
    };
    let dims: Vec<String> = (0..r.below(4))
        .map(|_| match r.below(5) {
            0 => r.pick(&["0", "-1", "4294967296", "18446744073709551615", "1e3", "x"]).to_string(),
            _ => r.range(0, 9).to_string(),
        })
        .collect();
    let order = r.pick(&["False", "True", "0", "'no'"]);
    let mut d = format!("{{'descr': {descr}, 'fortran_order': {order}, 'shape': ({},), }}", dims.join(", "));
    for _ in 0..r.below(3) {
        let i = r.below(d.len() + 1);
        if d.is_char_boundary(i) {
            d.insert(i, *r.pick(&['(', ')', '[', ']', '{', '\'', '"', ',', ':', '\\']));
        }
    }
    d
}

#[test]
fn npy_files_give_arrays_or_one_line_errors() {
    let d = scratch("npy");
    let mut r = Rng::new(seed());
    let (mut ok, mut refused) = (0, 0);
    for i in 0..count(1500) {
        let dict = npy_dict(&mut r);
        let bytes = npy_bytes(&mut r, &dict);
        let p = d.join(format!("{}.npy", i % 8));
        std::fs::write(&p, &bytes).unwrap();
        match checked("read_npy", &dict, || lift::harness::npy::read_npy(&p).map_err(|e| e.to_string())) {
            None => ok += 1,
            Some(_) => refused += 1,
        }
    }
    println!("npy: {ok} read, {refused} refused");
    assert!(refused > 0);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn configs_load_or_give_one_line_errors() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let seeds: Vec<String> = ["scal", "dot", "gemv", "acoustic"]
        .iter()
        .map(|n| std::fs::read_to_string(root.join(format!("configs/{n}.yaml"))).unwrap())
        .collect();
    let values = [
        ".nan",
        ".inf",
        "-.inf",
        "1e39",
        "-1e39",
        "99999999999",
        "2147483648",
        "-1",
        "0",
        "1.5",
        "\"x\"",
        "[]",
        "{}",
        "null",
        "~",
        "'../x'",
        "N * N * N * N",
        "2^40",
    ];
    let d = scratch("cfg");
    let mut r = Rng::new(seed());
    let mut refused = 0;
    for i in 0..count(400) {
        let mut text = r.pick(&seeds).clone();
        for _ in 0..1 + r.below(3) {
            // Replace a number or a word after `: ` with a hostile value.
            let starts: Vec<usize> = text.match_indices(": ").map(|(i, _)| i + 2).collect();
            if starts.is_empty() {
                break;
            }
            let s = *r.pick(&starts);
            let end = text[s..].find([',', '}', '\n', ']']).map_or(text.len(), |e| s + e);
            let v = r.pick(&values[..]).to_string();
            text.replace_range(s..end, &v);
        }
        if r.chance(5) {
            let cut = r.below(text.len());
            if text.is_char_boundary(cut) {
                text.truncate(cut);
            }
        }
        let p = d.join(format!("c{}.yaml", i % 4));
        std::fs::write(&p, &text).unwrap();
        let got = checked("config::load", &p.display().to_string(), || {
            lift::harness::config::load(&p, &root).map_err(|e| e.to_string())
        });
        refused += usize::from(got.is_some());
    }
    assert!(refused > 0);
    let _ = std::fs::remove_dir_all(&d);
}

fn lift(args: &[String]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_lift"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .unwrap()
}

/// Command-line values through the binary, on commands that stop before
/// running anything long (an unknown benchmark, a missing file, `compile`).
#[test]
fn cli_values_give_results_or_exit_2() {
    let mut r = Rng::new(seed());
    let nums = [
        "0",
        "1",
        "-1",
        "18446744073709551615",
        "18446744073709551616",
        "1000000000",
        "1e8",
        "nan",
        "inf",
        "2147483647",
        "2147483648",
        "1099511627776",
        "",
        " ",
        "0x10",
        "99999999999999999h",
        "5m",
        "0s",
        "1h",
    ];
    let missing = Path::new("no-such-dir").join("x.lift").display().to_string();
    for _ in 0..count(40) {
        let v = r.pick(&nums).to_string();
        let args: Vec<String> = match r.below(5) {
            0 => vec!["run".into(), "no-such-bench".into(), "--runs".into(), v.clone(), "--warmup".into(), v],
            1 => vec!["compile".into(), "benchmarks/dot.lift".into(), "--size".into(), format!("N={v}")],
            2 => vec!["explore".into(), missing.clone(), "--def".into(), "k".into(), "--runs".into(), v],
            3 => vec!["explore".into(), missing.clone(), "--def".into(), "k".into(), "--depth".into(), v],
            _ => vec![
                "compile".into(),
                "benchmarks/dot.lift".into(),
                "--local".into(),
                v.clone(),
                "--global".into(),
                v,
            ],
        };
        let start = Instant::now();
        let o = lift(&args);
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(matches!(o.status.code(), Some(0) | Some(2)), "{args:?}: {:?} {e}", o.status);
        assert!(!e.contains("panicked"), "{args:?}: {e}");
        assert!(start.elapsed() < Duration::from_secs(20), "{args:?} took {:?}", start.elapsed());
    }
}
