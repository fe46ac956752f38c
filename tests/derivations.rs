//! The committed derivations (`benchmarks/derivations/`): each replays, its
//! result keeps the interpreter's value of the high-level def, it equals
//! the hand-written program where the note says so, and the derived kernel
//! runs on PoCL (`lift exec --derivation --check`) with the interpreter's
//! result.

use lift::interp::eval_def;
use lift::ir::Value;
use lift::ir::{Program, SourceFile};
use lift::rewrite;
use lift::types::Type;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
#[path = "support/npy.rs"]
mod npy;

struct Case {
    file: &'static str,
    def: &'static str,
    derivation: &'static str,
    /// Sizes for the interpreter and PoCL.
    sizes: &'static [(&'static str, i64)],
    /// The hand-written def the result must equal, if any.
    equals: Option<&'static str>,
    /// Whether the derivation ends with `extract` (the kernel computes
    /// partial sums whose sum is the high-level value).
    partial_sums: bool,
    /// Whether the result is low-level (compiled and run on PoCL).
    runs: bool,
}

const CASES: &[Case] = &[
    Case {
        file: "benchmarks/derivations/asum.lift",
        def: "asum",
        derivation: "benchmarks/derivations/asum-fig8.txt",
        sizes: &[("N", 6144)],
        equals: None,
        partial_sums: false,
        runs: false,
    },
    Case {
        file: "benchmarks/derivations/asum.lift",
        def: "asum",
        derivation: "benchmarks/derivations/asum-nvidia.txt",
        sizes: &[("N", 524288)],
        equals: None,
        partial_sums: true,
        runs: true,
    },
    Case {
        file: "benchmarks/scal.lift",
        def: "scalHigh",
        derivation: "benchmarks/derivations/scal.txt",
        sizes: &[("N", 3072)],
        equals: Some("scal"),
        partial_sums: false,
        runs: true,
    },
    Case {
        file: "benchmarks/dot.lift",
        def: "dotHigh",
        derivation: "benchmarks/derivations/dot.txt",
        sizes: &[("N", 1920)],
        equals: None,
        partial_sums: false,
        runs: true,
    },
    Case {
        file: "benchmarks/gemv.lift",
        def: "gemvHigh",
        derivation: "benchmarks/derivations/gemv.txt",
        sizes: &[("M", 37), ("N", 100)],
        equals: None,
        partial_sums: false,
        runs: true,
    },
    // The row shape the search found on the H100 (a work-group per row,
    // float4 lanes, a tree in local memory): faster there than the
    // hand-written `gemv`, which no rule sequence reaches.
    Case {
        file: "benchmarks/gemv.lift",
        def: "gemvHigh",
        derivation: "benchmarks/derivations/gemv-rows.txt",
        sizes: &[("M", 37), ("N", 2048)],
        equals: None,
        partial_sums: false,
        runs: true,
    },
    // Overlapped tiling (CGO 2018, Section 4.1) of every CGO 2018 stencil,
    // derived from its high-level def (`tiled` below lists them).
    Case {
        file: "benchmarks/cgo18/acoustic.lift",
        def: "acousticHigh",
        derivation: "benchmarks/derivations/acoustic-tiled.txt",
        sizes: &[("W", 32), ("H", 8), ("D", 3)],
        equals: None,
        partial_sums: false,
        runs: true,
    },
    Case {
        file: "benchmarks/cgo18/gaussian.lift",
        def: "gaussianHigh",
        derivation: "benchmarks/derivations/gaussian-tiled.txt",
        sizes: &[("W", 64), ("H", 16)],
        equals: None,
        partial_sums: false,
        runs: true,
    },
    Case {
        file: "benchmarks/cgo18/gradient.lift",
        def: "gradientHigh",
        derivation: "benchmarks/derivations/gradient-tiled.txt",
        sizes: &[("W", 64), ("H", 24)],
        equals: None,
        partial_sums: false,
        runs: true,
    },
    Case {
        file: "benchmarks/cgo18/heat.lift",
        def: "heatHigh",
        derivation: "benchmarks/derivations/heat-tiled.txt",
        sizes: &[("W", 64), ("H", 4), ("D", 5)],
        equals: None,
        partial_sums: false,
        runs: true,
    },
    Case {
        file: "benchmarks/cgo18/hotspot2d.lift",
        def: "hotspot2dHigh",
        derivation: "benchmarks/derivations/hotspot2d-tiled.txt",
        sizes: &[("W", 32), ("H", 24)],
        equals: None,
        partial_sums: false,
        runs: true,
    },
    Case {
        file: "benchmarks/cgo18/hotspot3d.lift",
        def: "hotspot3dHigh",
        derivation: "benchmarks/derivations/hotspot3d-tiled.txt",
        sizes: &[("W", 32), ("H", 12), ("D", 3)],
        equals: None,
        partial_sums: false,
        runs: true,
    },
    Case {
        file: "benchmarks/cgo18/jacobi2d-5pt.lift",
        def: "jacobi2d5High",
        derivation: "benchmarks/derivations/jacobi2d-5pt-tiled.txt",
        sizes: &[("W", 96), ("H", 8)],
        equals: None,
        partial_sums: false,
        runs: true,
    },
    Case {
        file: "benchmarks/cgo18/jacobi2d-9pt.lift",
        def: "jacobi2d9High",
        derivation: "benchmarks/derivations/jacobi2d-9pt-tiled.txt",
        sizes: &[("W", 32), ("H", 16)],
        equals: None,
        partial_sums: false,
        runs: true,
    },
    Case {
        file: "benchmarks/cgo18/jacobi3d-13pt.lift",
        def: "jacobi3d13High",
        derivation: "benchmarks/derivations/jacobi3d-13pt-tiled.txt",
        sizes: &[("W", 32), ("H", 8), ("D", 6)],
        equals: None,
        partial_sums: false,
        runs: true,
    },
    Case {
        file: "benchmarks/cgo18/jacobi3d-7pt.lift",
        def: "jacobi3d7High",
        derivation: "benchmarks/derivations/jacobi3d-7pt-tiled.txt",
        sizes: &[("W", 32), ("H", 8), ("D", 3)],
        equals: None,
        partial_sums: false,
        runs: true,
    },
    Case {
        file: "benchmarks/cgo18/poisson.lift",
        def: "poissonHigh",
        derivation: "benchmarks/derivations/poisson-tiled.txt",
        sizes: &[("W", 32), ("H", 4), ("D", 3)],
        equals: None,
        partial_sums: false,
        runs: true,
    },
    Case {
        file: "benchmarks/cgo18/srad1.lift",
        def: "srad1High",
        derivation: "benchmarks/derivations/srad1-tiled.txt",
        sizes: &[("W", 112), ("H", 6)],
        equals: None,
        partial_sums: false,
        runs: true,
    },
    Case {
        file: "benchmarks/cgo18/srad2.lift",
        def: "srad2High",
        derivation: "benchmarks/derivations/srad2-tiled.txt",
        sizes: &[("W", 56), ("H", 10)],
        equals: None,
        partial_sums: false,
        runs: true,
    },
    Case {
        file: "benchmarks/cgo18/stencil2d.lift",
        def: "stencil2dHigh",
        derivation: "benchmarks/derivations/stencil2d-tiled.txt",
        sizes: &[("W", 66), ("H", 18)],
        equals: None,
        partial_sums: false,
        runs: true,
    },
    // Matrix multiplication tiled by `tile-mm` (the `mm-tiled` shape of
    // `lift explore` at 128 x 128 x 16, 8 x 8 per work-item, scalars or B
    // as float4): the hand-written mmTiled and mmTiled4, and the same steps
    // on mm-nvidia's high-level def.
    Case {
        file: "benchmarks/mm-tiled.lift",
        def: "mmTiledHigh",
        derivation: "benchmarks/derivations/mm-tiled.txt",
        sizes: &[("M", 128), ("N", 384), ("K", 48)],
        equals: Some("mmTiled"),
        partial_sums: false,
        runs: true,
    },
    Case {
        file: "benchmarks/mm-tiled.lift",
        def: "mmTiledHigh",
        derivation: "benchmarks/derivations/mm-tiled-vec.txt",
        sizes: &[("M", 128), ("N", 384), ("K", 32)],
        equals: Some("mmTiled4"),
        partial_sums: false,
        runs: true,
    },
    Case {
        file: "benchmarks/mm-nvidia.lift",
        def: "mmNvidiaHigh",
        derivation: "benchmarks/derivations/mm-tiled-vec.txt",
        sizes: &[("M", 384), ("N", 128), ("K", 16)],
        equals: None,
        partial_sums: false,
        runs: true,
    }, // The MM (NVIDIA) program the H100 runs: 128 x 64 tiles, float4
    // copies (`vectorize` of the copies' `id`), the chunk unrolled.
    Case {
        file: "benchmarks/mm-nvidia.lift",
        def: "mmNvidiaHigh",
        derivation: "benchmarks/derivations/mm-nvidia-tiled.txt",
        sizes: &[("M", 384), ("N", 320), ("K", 48)],
        equals: Some("mmNvidiaTiled"),
        partial_sums: false,
        runs: true,
    },
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn load(file: &str) -> Program {
    let text = std::fs::read_to_string(root().join(file)).unwrap();
    lift::parse::parse_program(&SourceFile::new(file, text)).unwrap()
}

/// Integer-valued floats in [-8, 8], so sums in any order are exact.
fn random_value(ty: &Type, sizes: &BTreeMap<String, i64>, seed: &mut u64) -> Value {
    match ty {
        Type::Array(e, n) => {
            let n = n.eval_with(&|k| sizes.get(k).copied()).unwrap();
            Value::Array((0..n).map(|_| random_value(e, sizes, seed)).collect())
        }
        _ => {
            *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let k = ((*seed >> 33) % 17) as i32;
            if *ty == Type::INT {
                Value::Int(k % 7)
            } else {
                Value::Float(k as f32 - 8.0)
            }
        }
    }
}

fn sum(v: &Value) -> f64 {
    let mut out = Vec::new();
    v.flatten(&mut out);
    out.iter().sum()
}

#[test]
fn derivations_replay_and_keep_the_value() {
    for c in CASES {
        let prog = load(c.file);
        let derived = rewrite::derive_file(&prog, c.def, &root().join(c.derivation))
            .unwrap_or_else(|e| panic!("{}: {e}", c.derivation));
        // The printed result parses again.
        let text = lift::parse::print_program(&derived);
        lift::parse::parse_program(&SourceFile::new("derived.lift", text.clone()))
            .unwrap_or_else(|e| panic!("{text}\n{e:?}"));
        let sizes: BTreeMap<String, i64> = c.sizes.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        let d = prog.def(c.def).unwrap();
        let mut seed = 0x5eed_u64;
        let mut args = BTreeMap::new();
        for p in &d.params {
            let v = match p.ty.as_ref().unwrap() {
                t @ Type::Array(..) => random_value(t, &sizes, &mut seed),
                _ => Value::Float(3.0),
            };
            args.insert(p.name.clone(), v);
        }
        let want = eval_def(&prog, c.def, &args, &sizes).unwrap();
        let got =
            eval_def(&derived, c.def, &args, &sizes).unwrap_or_else(|e| panic!("{}: {e}", c.derivation));
        if c.partial_sums {
            assert_eq!(sum(&got), sum(&want), "{}", c.derivation);
            assert!(matches!(&got, Value::Array(v) if v.len() > 1), "{}: partial sums", c.derivation);
        } else {
            // As printed, so that a NaN (srad divides by a pixel that may be
            // 0) equals a NaN.
            assert_eq!(format!("{got:?}"), format!("{want:?}"), "{}", c.derivation);
        }
        if let Some(hand) = c.equals {
            let a = lift::ir::equiv::canonical_def(&derived, derived.def(c.def).unwrap());
            let h = rewrite::prepare(&prog, hand).unwrap();
            let h = rewrite::release(&h, hand);
            let b = lift::ir::equiv::canonical_def(&h, h.def(hand).unwrap());
            assert_eq!(a, b, "{} should give `{hand}`", c.derivation);
        }
    }
}

fn lift_cmd() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lift"));
    c.current_dir(root());
    c
}

fn has_device() -> bool {
    lift_cmd().arg("devices").output().map(|o| o.status.success()).unwrap_or(false)
}

fn elem(ty: &Type) -> &Type {
    match ty {
        Type::Array(e, _) => elem(e),
        t => t,
    }
}

#[test]
fn derived_kernels_run_on_pocl() {
    if !has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    let dir = std::env::temp_dir().join(format!("lift-derivations-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut seed = 0x5eed_u64;
    for c in CASES.iter().filter(|c| c.runs) {
        exec_check(&dir, c.file, c.def, Path::new(c.derivation), c.sizes, &mut seed);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `lift exec FILE --def DEF --derivation D --check` on random inputs of
/// the given sizes: the derived kernel must agree with the interpreter.
fn exec_check(dir: &Path, file: &str, def: &str, derivation: &Path, sizes: &[(&str, i64)], seed: &mut u64) {
    let prog = load(file);
    let d = prog.def(def).unwrap();
    let sizes: BTreeMap<String, i64> = sizes.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let mut cmd = lift_cmd();
    cmd.arg("exec").arg(file).args(["--def", def, "--check", "--output"]);
    cmd.arg(dir.join("out.npy")).arg("--derivation").arg(derivation);
    for p in &d.params {
        let ty = p.ty.as_ref().unwrap();
        if let Type::Array(..) = ty {
            let shape: Vec<u64> = ty
                .lengths()
                .iter()
                .map(|l| l.eval_with(&|n| sizes.get(n).copied()).unwrap() as u64)
                .collect();
            let n: u64 = shape.iter().product();
            let data: Vec<i64> = (0..n)
                .map(|_| {
                    *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    ((*seed >> 33) % 17) as i64
                })
                .collect();
            let path = dir.join(format!("{}.npy", p.name));
            let out = if elem(ty) == &Type::INT {
                npy::npy_bytes(&shape, data.iter().map(|k| (k % 7) as i32))
            } else {
                npy::npy_bytes(&shape, data.iter().map(|k| *k as f32 - 8.0))
            };
            std::fs::write(&path, out).unwrap();
            cmd.args(["--input", &format!("{}={}", p.name, path.display())]);
        } else {
            cmd.args(["--input", &format!("{}=1.5", p.name)]);
        }
    }
    let o = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && stdout.contains("check: ok"),
        "{}:\n{stdout}\n{}",
        derivation.display(),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn derivation_errors_are_positioned() {
    let prog = load("benchmarks/derivations/asum.lift");
    let dir = std::env::temp_dir().join(format!("lift-derivation-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        ("reduce-seq @ 2\n", "d.txt:1:1: error: `reduce-seq` does not match here: expected `reduce(f, z) $ x`, found `map(absVal, _param0)`"),
        ("# c\nsplitjoin @ 2 n=2\n", "d.txt:2:1: error: expected a rule name (see `lift rewrite --rules`), found `splitjoin`"),
        ("split-join @ 2.7 n=2\n", "d.txt:1:14: error: position 2.7 does not exist (step 2 of a call has no child 7)"),
        ("split-join @ 2 n=3\n", ""),
        ("map-lcl @ 2 d=0\n", "d.txt:1:1: error: `map-lcl`: side condition violated: mapLcl must be nested in a mapWrg"),
        ("split-join 2\n", "d.txt:1:1: error: expected `RULE @ POSITION [name=value ...]`, found `split-join 2`"),
    ];
    for (text, want) in cases {
        let path = dir.join("d.txt");
        std::fs::write(&path, text).unwrap();
        let r = rewrite::derive_file(&prog, "asum", &path)
            .map_err(|e| e.to_string().replace(&path.display().to_string(), "d.txt"));
        match r {
            Ok(_) => assert!(want.is_empty(), "{text}: expected an error"),
            Err(e) => assert_eq!(e, want, "{text}"),
        }
    }
    // The command line: one line, exit code 2.
    let path = dir.join("d.txt");
    std::fs::write(&path, "reduce-seq @ 2\n").unwrap();
    let o = lift_cmd()
        .args(["rewrite", "benchmarks/derivations/asum.lift", "--def", "asum", "--apply"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&o.stderr).lines().count(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn lift_rewrite_lists_applicable_rules() {
    let o =
        lift_cmd().args(["rewrite", "benchmarks/derivations/asum.lift", "--def", "asum"]).output().unwrap();
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("reduce-partred @ root m=?"), "{out}");
    assert!(out.contains("split-join @ 2 n=?"), "{out}");
    assert!(out.contains("at: map(absVal, x)"), "{out}");
}

#[test]
fn scal_derived_kernel_is_the_hand_written_one() {
    let run = |args: &[&str]| {
        let o = lift_cmd().args(["compile", "benchmarks/scal.lift"]).args(args).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        // Only the kernel's name (from the def's name) may differ.
        String::from_utf8_lossy(&o.stdout).replace("scalHigh", "scal")
    };
    let hand = run(&["--def", "scal"]);
    let derived = run(&["--def", "scalHigh", "--derivation", "benchmarks/derivations/scal.txt"]);
    assert_eq!(hand, derived);
}

#[test]
fn configs_accept_a_derivation() {
    let text = std::fs::read_to_string(root().join("configs/scal.yaml")).unwrap();
    let text = text.replace(
        "      def: scal\n",
        "      def: scalHigh\n      derivation: benchmarks/derivations/scal.txt\n",
    );
    assert!(text.contains("derivation:"));
    let dir = std::env::temp_dir().join(format!("lift-derivation-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("scal.yaml");
    std::fs::write(&path, &text).unwrap();
    let cfg = lift::harness::config::load(&path, root()).unwrap();
    let k = &cfg.lift.as_ref().unwrap().kernels[0];
    assert_eq!(k.derivation.as_deref(), Some(root().join("benchmarks/derivations/scal.txt").as_path()));
    std::fs::write(&path, text.replace("derivations/scal.txt", "derivations/nope.txt")).unwrap();
    let e = lift::harness::config::load(&path, root()).unwrap_err().to_string();
    assert!(e.contains("lift.kernels[0].derivation") && e.contains("not found"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The configs' `lift-tiled` kernels are the derived ones: each derivation
/// gives the kernel of the hand-written tiled def, but for its name (srad2's
/// binds its two tile copies with `let-local-copies`, so they share one
/// barrier as in `srad2Tiled`).
#[test]
fn derived_tiled_kernels_are_the_hand_written_ones() {
    let compile = |file: &str, args: &[&str]| {
        let o = lift_cmd().args(["compile", file]).args(args).output().unwrap();
        assert!(o.status.success(), "{file} {args:?}: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    for (bench, high, hand) in [
        ("acoustic", "acousticHigh", "acousticTiled"),
        ("gaussian", "gaussianHigh", "gaussianTiled"),
        ("gradient", "gradientHigh", "gradientTiled"),
        ("heat", "heatHigh", "heatTiled"),
        ("hotspot2d", "hotspot2dHigh", "hotspot2dTiled"),
        ("hotspot3d", "hotspot3dHigh", "hotspot3dTiled"),
        ("jacobi2d-5pt", "jacobi2d5High", "jacobi2d5Tiled"),
        ("jacobi2d-9pt", "jacobi2d9High", "jacobi2d9Tiled"),
        ("jacobi3d-13pt", "jacobi3d13High", "jacobi3d13Tiled"),
        ("jacobi3d-7pt", "jacobi3d7High", "jacobi3d7Tiled"),
        ("poisson", "poissonHigh", "poissonTiled"),
        ("srad1", "srad1High", "srad1Tiled"),
        ("stencil2d", "stencil2dHigh", "stencil2dTiled"),
        ("srad2", "srad2High", "srad2Tiled"),
    ] {
        let file = format!("benchmarks/cgo18/{bench}.lift");
        let derivation = format!("benchmarks/derivations/{bench}-tiled.txt");
        let derived = compile(&file, &["--def", high, "--derivation", &derivation]).replace(high, hand);
        let want = compile(&file, &["--def", hand]);
        assert_eq!(derived, want, "{bench}");
        // The config's lift-tiled variant is this derivation.
        let cfg = std::fs::read_to_string(root().join(format!("configs/{bench}.yaml"))).unwrap();
        assert!(cfg.contains(&format!("def: {high}, derivation: {derivation},")), "{bench}");
    }
}

/// The matrix-product shapes of `lift explore` (`explore::matmul`) at small
/// slot values and sizes of odd tile counts (3 x 5 work-groups, K of 5 or
/// 3 chunks): the derived kernels agree with the interpreter on PoCL.
#[test]
fn matmul_shapes_validate_on_pocl() {
    if !has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    let (file, def) = ("benchmarks/mm-nvidia.lift", "mmNvidiaHigh");
    let base = rewrite::prepare(&load(file), def).unwrap();
    let sizes = [("M", 48), ("N", 160), ("K", 20)];
    let at: BTreeMap<String, i64> = sizes.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let shapes = lift::explore::matmul::matmul_shapes(&base, def, &at);
    assert_eq!(shapes.len(), 4);
    let dir = std::env::temp_dir().join(format!("lift-mm-shapes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut seed = 0x3a7_u64;
    // (mt, nt, kc, rm, rn, wx, wy[, cv]): work-groups of 8 x 8 and of
    // 4 x 16, scalars and float4 of At, float4 and float2 of B; the last
    // two shapes copy the chunk tiles as float4 and float2.
    let points: [&[i64]; 4] = [
        &[16, 32, 4, 2, 4, 1, 4],
        &[16, 32, 4, 4, 2, 4, 2],
        &[16, 32, 4, 2, 4, 1, 4, 4],
        &[16, 32, 4, 4, 2, 4, 2, 2],
    ];
    for (shape, values) in shapes.iter().zip(points) {
        let inst = shape.instantiate(&base, def, values).unwrap();
        assert!(lift::explore::space::constraints_hold(&inst.constraints, &at), "{:?}", inst.constraints);
        let path = dir.join("shape.txt");
        std::fs::write(&path, inst.derivation.join("\n")).unwrap();
        exec_check(&dir, file, def, &path, &sizes, &mut seed);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
