//! Tolerances that catch a dropped term: for every benchmark of `configs/`,
//! a deliberately wrong result (the gold computed on inputs changed so that
//! one term, one tap, one body, one feature or the farther half of MD's
//! neighbours drops out; for stencils, a dropped tap or a grid read one
//! element off) must fail validation with the config's own rtol and atol,
//! at the tiny preset. Correct kernels passing the same
//! tolerances is checked on PoCL by `harness_e2e`.

use std::path::Path;

use lift::harness::config::{load, Config, Gold};
use lift::harness::data::{Arrays, HostArray, Sizes};
use lift::harness::expected::rust_gold_scaled;
use lift::harness::inputs::make_host_arrays;
use lift::validate::compare_scaled;

fn floats<'a>(a: &'a mut Arrays, name: &str) -> &'a mut Vec<f32> {
    match a.get_mut(name) {
        Some(HostArray::F32(v)) => v,
        other => panic!("input {name}: expected floats, got {other:?}"),
    }
}

fn ints<'a>(a: &'a mut Arrays, name: &str) -> &'a mut Vec<i32> {
    match a.get_mut(name) {
        Some(HostArray::I32(v)) => v,
        other => panic!("input {name}: expected ints, got {other:?}"),
    }
}

/// Changes `inputs` so that the gold computes what a kernel with the named
/// fault computes; returns the fault's description.
fn inject_fault(bench: &str, inputs: &mut Arrays, s: &Sizes) -> &'static str {
    let size = |n: &str| s[n] as usize;
    match bench {
        "dot" => {
            floats(inputs, "x").iter_mut().step_by(128).for_each(|v| *v = 0.0);
            "each 128-term sum drops its first product"
        }
        "scal" | "transpose" => {
            *floats(inputs, "x").last_mut().expect("x is not empty") = 0.0;
            "the last element is skipped (read as 0)"
        }
        "gemv" | "atax" | "gesummv" => {
            *floats(inputs, "x").last_mut().expect("x is not empty") = 0.0;
            "each row's dot product drops its last term"
        }
        "mm-amd" | "mm-nvidia" => {
            let (k, m) = (size("K"), size("M"));
            floats(inputs, "At")[(k - 1) * m..].iter_mut().for_each(|v| *v = 0.0);
            "each dot product drops its last term (k = K - 1)"
        }
        "convolution" => {
            floats(inputs, "filter")[16] = 0.0;
            "the last of the 17 taps is dropped"
        }
        "nbody-nvidia" | "nbody-amd" => {
            let n = size("N");
            floats(inputs, "pos")[4 * (n / 2) + 3] = 0.0;
            "one body of N is skipped (its mass read as 0)"
        }
        "md" => {
            let (n, m) = (size("N"), size("M"));
            let pos = floats(inputs, "pos").clone();
            let cutsq = floats(inputs, "cutsq")[0];
            let r2 = |i: usize, k: usize| -> f32 {
                (0..3).map(|c| (pos[4 * i + c] - pos[4 * k + c]).powi(2)).sum()
            };
            let neigh = ints(inputs, "neigh");
            for i in 0..n {
                // A neighbour beyond the cutoff adds nothing, as if skipped.
                let far = (0..n).find(|&k| r2(i, k) >= cutsq).expect("an atom beyond the cutoff");
                for j in m / 2..m {
                    neigh[j * n + i] = far as i32;
                }
            }
            "the farther half of every atom's neighbours is skipped"
        }
        "kmeans" => {
            let (p, c, f) = (size("P"), size("C"), size("F"));
            floats(inputs, "features")[(f - 1) * p..].iter_mut().for_each(|v| *v = 0.0);
            let clusters = floats(inputs, "clusters");
            (0..c).for_each(|k| clusters[k * f + f - 1] = 0.0);
            "the last feature is skipped in every distance"
        }
        "nn" => {
            let lng = floats(inputs, "lng")[0];
            floats(inputs, "locations").iter_mut().skip(1).step_by(2).for_each(|v| *v = lng);
            "the longitude term of the distance is dropped"
        }
        "mri-q" => {
            let k = size("K");
            floats(inputs, "phiR")[k - 1] = 0.0;
            floats(inputs, "phiI")[k - 1] = 0.0;
            "each voxel's sum drops its last k-space sample"
        }
        "gaussian" => {
            floats(inputs, "weights")[7] = 0.0;
            "one of the 25 taps is dropped"
        }
        other => panic!("benchmark `{other}` has no fault in tests/wrong_results.rs: add one"),
    }
}

/// The stencils' fault where no tap can be dropped through the inputs: the
/// first grid read one element off (an indexing bug), which a stencil's
/// tolerance must catch as surely as a dropped tap.
fn shift_first_grid(cfg: &Config, inputs: &mut Arrays) -> &'static str {
    let first = cfg.inputs.iter().find(|a| a.shape.len() >= 2).expect("a stencil has a grid input");
    floats(inputs, &first.name).rotate_left(1);
    "the first grid is read one element off"
}

fn check(cfg: &Config) {
    let Gold::Rust(gold) = &cfg.validation.gold else {
        panic!("{}: these tests use the Rust gold; add a fault for the interpreter", cfg.name)
    };
    let output = cfg.lift.as_ref().map(|l| l.output.clone()).expect("a lift section");
    let (preset, sizes) = &cfg.sizes[0];
    assert_eq!(preset, "tiny", "{}: the first preset is tiny", cfg.name);
    let (mut inputs, _) = make_host_arrays(cfg, sizes).expect("inputs");
    let (right, scale) = rust_gold_scaled(gold, &inputs, sizes, &output).expect("gold");
    let (rtol, atol) = (cfg.validation.rtol, cfg.validation.atol);
    let same = compare_scaled(&right, &right, scale.as_ref(), rtol, atol);
    assert!(same.ok, "{}: the gold does not validate against itself: {}", cfg.name, same.message);
    // The ICFP 2015 suite reuses the CGO 2017 faults where the computation
    // is the same (scal, dot, gemv, md).
    let name = cfg.name.strip_prefix("icfp15-").unwrap_or(&cfg.name);
    let fault = match name {
        "asum" => {
            floats(&mut inputs, "x")[..8192].iter_mut().for_each(|v| *v = 0.0);
            "a chunk of 8192 terms is dropped"
        }
        "blackscholes" => {
            let first = cfg.inputs[0].name.clone();
            floats(&mut inputs, &first).rotate_left(1);
            "each option is priced from its neighbour's inputs"
        }
        _ if cfg.suite == "cgo18" && name != "gaussian" => shift_first_grid(cfg, &mut inputs),
        _ => inject_fault(name, &mut inputs, sizes),
    };
    let (wrong, _) = rust_gold_scaled(gold, &inputs, sizes, &output).expect("faulty gold");
    let c = compare_scaled(&wrong, &right, scale.as_ref(), rtol, atol);
    assert!(!c.ok, "{}: a result where {fault} passes rtol {rtol}, atol {atol}", cfg.name);
    println!("{:<13} {fault}: {}", cfg.name, c.message);
}

#[test]
fn every_benchmark_rejects_a_result_with_a_dropped_term() {
    let mut names = Vec::new();
    for cfg in lift::harness::config::load_dir(Path::new("configs"), Path::new(".")).expect("configs/") {
        let cfg = cfg.expect("config loads");
        check(&cfg);
        names.push(cfg.name);
    }
    assert!(names.len() >= 15, "expected the CGO 2017 benchmarks, got {names:?}");
}

#[test]
fn md_tolerance_measured_against_the_error_scale() {
    // The old tolerance (relative to |force|: rtol 5e-2, atol 1e-2) let the
    // farther half of the neighbours go; the scaled one catches it.
    let cfg = load(Path::new("configs/md.yaml"), Path::new(".")).expect("md config");
    let (_, sizes) = &cfg.sizes[0];
    let (mut inputs, _) = make_host_arrays(&cfg, sizes).expect("inputs");
    let (right, _) = rust_gold_scaled("md", &inputs, sizes, "force").expect("gold");
    inject_fault("md", &mut inputs, sizes);
    let (wrong, _) = rust_gold_scaled("md", &inputs, sizes, "force").expect("faulty gold");
    assert!(compare_scaled(&wrong, &right, None, 5e-2, 1e-2).ok, "the old MD tolerance now catches it");
}
