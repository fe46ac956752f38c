//! The stencil suite (CGO 2018): every stencil at `tiny` on the OpenCL
//! device (PoCL here) for the reference and every Lift variant, validated
//! against the Rust gold; the high-level programs against the gold in the
//! interpreter; the Halide peer's contract through stand-in executables;
//! config errors of the new keys; the stencil tuning space of `lift explore`.

use lift::harness::config::{load, load_dir, Config};
use lift::harness::expected::{interpreter_gold, rust_gold};
use lift::harness::inputs::make_host_arrays;
use lift::validate::compare;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn lift() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lift"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn has_device() -> bool {
    lift().arg("devices").output().map(|o| o.status.success()).unwrap_or(false)
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lift-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn stencil_configs() -> Vec<Config> {
    load_dir(&repo().join("configs"), &repo())
        .unwrap()
        .into_iter()
        .map(|c| c.unwrap_or_else(|e| panic!("{e}")))
        .filter(|c| c.suite == "cgo18")
        .collect()
}

const STENCILS: [&str; 14] = [
    "stencil2d",
    "srad1",
    "srad2",
    "hotspot2d",
    "hotspot3d",
    "acoustic",
    "gaussian",
    "gradient",
    "jacobi2d-5pt",
    "jacobi2d-9pt",
    "jacobi3d-7pt",
    "jacobi3d-13pt",
    "poisson",
    "heat",
];

#[test]
fn the_fourteen_programs_have_configs() {
    let cfgs = stencil_configs();
    let mut names: Vec<&str> = cfgs.iter().map(|c| c.name.as_str()).collect();
    names.sort();
    let mut want = STENCILS.to_vec();
    want.sort();
    assert_eq!(names, want);
    for c in &cfgs {
        // jacobi3d-7pt, poisson and heat also walk z with slideSeqPlus.
        let extra: &[&str] = if ["jacobi3d-7pt", "poisson", "heat"].contains(&c.name.as_str()) {
            &["lift-slideseq"]
        } else {
            &[]
        };
        assert_eq!(c.variants, [&["lift-naive", "lift-tiled"][..], extra].concat(), "{}", c.name);
        assert!(c.halide.is_some() && c.elements.is_some(), "{}", c.name);
        let has_ref =
            ["stencil2d", "srad1", "srad2", "hotspot2d", "hotspot3d", "acoustic"].contains(&c.name.as_str());
        assert_eq!(c.reference.is_some(), has_ref, "{}", c.name);
    }
}

/// The high-level program (pad, slide, map, reduce, zip only) computes the
/// gold result: the interpreter against the f64 Rust gold at `tiny`.
#[test]
fn high_level_programs_match_the_gold_in_the_interpreter() {
    for c in stencil_configs() {
        let (_, sizes) = c.preset("tiny").unwrap();
        let (inputs, _) = make_host_arrays(&c, sizes).unwrap();
        let interp = interpreter_gold(&c, &inputs, sizes).unwrap_or_else(|e| panic!("{}: {e}", c.name));
        let gold = rust_gold(&c.name, &inputs, sizes, "out").unwrap();
        let check = compare(&interp, &gold, c.validation.rtol, c.validation.atol);
        assert!(check.ok, "{}: {}", c.name, check.message);
    }
}

#[test]
fn every_stencil_validates_at_tiny() {
    if !has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    let out = scratch("stencils");
    let o = lift()
        .args(["all", "--suite", "cgo18", "--size", "tiny", "--runs", "2", "--no-roofline", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    let dir = std::fs::read_dir(&out).unwrap().next().unwrap().unwrap().path();
    let csv = dir.join("results-cgo18.csv");
    let mut rd = csv::Reader::from_path(&csv).unwrap_or_else(|e| panic!("{e}\n{stdout}"));
    assert_eq!(rd.headers().unwrap().len(), 28);
    let rows: Vec<csv::StringRecord> = rd.records().map(|r| r.unwrap()).collect();
    assert!(!dir.join("results.csv").exists(), "the CGO 2017 file is not written by --suite cgo18");
    for c in stencil_configs() {
        let mut variants: Vec<&str> = c.variants.iter().map(String::as_str).collect();
        if c.reference.is_some() {
            variants.push("reference");
        }
        for v in variants.clone() {
            let r = rows
                .iter()
                .find(|r| &r[0] == c.name.as_str() && &r[2] == v)
                .unwrap_or_else(|| panic!("no row {} {v}\n{stdout}", c.name));
            assert_eq!(&r[3], "ok", "{} {v}: {}", c.name, &r[25]);
            let gelems: f64 = r[26].parse().expect("gelems recorded");
            assert!(gelems > 0.0);
        }
        // lift-tuned: the committed program for this device validates; where
        // none is committed the row is skipped and names the missing file.
        let t =
            rows.iter().find(|r| &r[0] == c.name.as_str() && &r[2] == "lift-tuned").expect("lift-tuned row");
        match &t[3] {
            "ok" => assert!(
                t[25].ends_with("; tiled") || t[25].ends_with("; not tiled"),
                "{}: {}",
                c.name,
                &t[25]
            ),
            "skipped" => {
                let file = t[25].rsplit(' ').next().unwrap();
                assert!(file.ends_with(&format!("cgo18-{}.lift", c.name)), "{}", &t[25]);
                assert!(!repo().join(file).exists(), "{} is committed but skipped", file);
            }
            s => panic!("{} lift-tuned: {s}: {}", c.name, &t[25]),
        }
        let h = rows.iter().find(|r| &r[0] == c.name.as_str() && &r[2] == "halide").expect("halide row");
        assert!(["ok", "skipped"].contains(&&h[3]), "{} halide: {}", c.name, &h[25]);
        // A host-timed Halide (its CPU build on a CPU device) is compared
        // with the Lift rows' host-timed twins; a device-timed one names
        // its clock and keeps the host figure in its message.
        let twin = |v: &str| rows.iter().find(|r| &r[0] == c.name.as_str() && r[2] == *format!("{v}@host"));
        match (&h[3], &h[18]) {
            ("ok", "host") => {
                for v in &variants {
                    let t =
                        twin(v).unwrap_or_else(|| panic!("{} {v}@host beside a host-timed Halide", c.name));
                    assert_eq!((&t[3], &t[18]), ("ok", "host"), "{} {v}@host: {}", c.name, &t[25]);
                }
            }
            ("ok", clock) => {
                assert!(["profiling", "cuda-events"].contains(&clock), "{} halide timing {clock}", c.name);
                assert!(h[25].contains("host-timed median"), "{}", &h[25]);
                assert!(twin("lift-naive").is_none(), "{}: no twins beside a device-timed peer", c.name);
            }
            _ => assert!(twin("lift-naive").is_none(), "{}: no twins without a peer", c.name),
        }
    }
    for f in ["cgo18-figure7.svg", "cgo18-figure7.pdf", "cgo18-figure8.svg", "cgo18-figure8.pdf"] {
        assert!(dir.join(f).exists(), "{f} written");
    }
    let svg = std::fs::read_to_string(dir.join("cgo18-figure7.svg")).unwrap();
    assert!(svg.contains("jacobi3d-13pt") && svg.contains("lift-tiled"), "figure 7 shows the rows");
    assert!(o.status.success(), "{stdout}");
    let _ = std::fs::remove_dir_all(&out);
}

/// Every other device's committed `lift-tuned` program (the H100's) also
/// validates at `tiny` here: a change of a preset or a rule cannot leave a
/// committed program that only fails on the GPU run.
#[test]
fn other_devices_tuned_stencils_validate_at_tiny() {
    if !has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    let out = scratch("stencils-other");
    let o = lift()
        .args(["run"])
        .args(STENCILS)
        .args(["--size", "tiny", "--runs", "1", "--variants", "explored-other", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}{}", String::from_utf8_lossy(&o.stderr));
    let dir = std::fs::read_dir(&out).unwrap().next().unwrap().unwrap().path();
    let mut rd = csv::Reader::from_path(dir.join("results-cgo18.csv")).unwrap();
    let rows: Vec<csv::StringRecord> = rd.records().map(|r| r.unwrap()).collect();
    let slugs: Vec<String> = std::fs::read_dir(repo().join("benchmarks/explored"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|s| !dir.ends_with(s))
        .collect();
    assert!(!slugs.is_empty());
    for name in STENCILS {
        for slug in &slugs {
            if !repo().join(format!("benchmarks/explored/{slug}/cgo18-{name}.lift")).exists() {
                continue;
            }
            let v = format!("lift-tuned@{slug}");
            let r = rows
                .iter()
                .find(|r| &r[0] == name && r[2] == *v)
                .unwrap_or_else(|| panic!("no row {name} {v}\n{stdout}"));
            assert_eq!(&r[3], "ok", "{name} {v}: {}", &r[25]);
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}
/// A config of jacobi2d-5pt whose Halide executable is `exe`.
fn with_peer(dir: &Path, exe: &Path) -> PathBuf {
    let text = std::fs::read_to_string(repo().join("configs/jacobi2d-5pt.yaml")).unwrap();
    let text = text.replace("halide:\n", &format!("halide:\n  executable: {}\n", exe.display()));
    let cfgs = dir.join("configs");
    std::fs::create_dir_all(&cfgs).unwrap();
    std::fs::write(cfgs.join("jacobi2d-5pt.yaml"), text).unwrap();
    cfgs
}

fn script(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The contract: the harness passes the inputs and the output path and a
/// repetition count, reads `median_ms=`, and validates the output. A
/// stand-in that copies its input gives a wrong result (FAILED, with the
/// time recorded); one that prints no median is an error.
#[test]
fn halide_contract_through_stand_in_executables() {
    if !has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    let dir = scratch("halide-peer");
    let device = "echo median_ms=0.25 schedule=s device_ms=0.2 clock=profiling";
    for (name, body, status, timing) in [
        ("copy", "cp \"$1\" \"$2\"; [ \"$3\" = 2 ] && echo median_ms=0.25", "FAILED", "host"),
        ("device", &*format!("cp \"$1\" \"$2\"; {device}"), "FAILED", "profiling"),
        ("silent", "cp \"$1\" \"$2\"", "error", "host"),
    ] {
        let exe = dir.join(name);
        script(&exe, body);
        let cfgs = with_peer(&dir.join(name).with_extension("d"), &exe);
        let out = dir.join(format!("{name}-out"));
        let o = lift()
            .args([
                "run",
                "jacobi2d-5pt",
                "--size",
                "tiny",
                "--runs",
                "2",
                "--variants",
                "halide",
                // The stand-ins live outside the repository's peers/.
                "--allow-config-executables",
                "--configs",
            ])
            .arg(&cfgs)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&o.stdout);
        let dev = std::fs::read_dir(&out).unwrap().next().unwrap().unwrap().path();
        let rows: Vec<csv::StringRecord> = csv::Reader::from_path(dev.join("results-cgo18.csv"))
            .unwrap()
            .records()
            .map(|r| r.unwrap())
            .collect();
        assert_eq!(rows.len(), 1, "{stdout}");
        assert_eq!(&rows[0][3], status, "{name}: {}", &rows[0][25]);
        assert_eq!(&rows[0][18], timing, "{name}");
        if name == "device" {
            // The device figure is the row's time; the host one is in its message.
            assert_eq!(&rows[0][4], "0.2");
            assert!(rows[0][25].contains("host-timed median 0.250000"), "{}", &rows[0][25]);
        } else if status == "FAILED" {
            assert_eq!(&rows[0][4], "0.25");
            assert!(rows[0][25].contains("differ"), "{}", &rows[0][25]);
        } else {
            assert!(rows[0][25].contains("median_ms"), "{}", &rows[0][25]);
        }
        assert!(!o.status.success());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn config_errors_of_the_new_keys() {
    let dir = scratch("stencil-config-errors");
    let base = std::fs::read_to_string(repo().join("configs/jacobi2d-5pt.yaml")).unwrap();
    let cases = [
        ("suite: cgo18", "suite: cgo-18", "key `suite`"),
        ("- name: lift-naive", "- name: naive", "key `lift.variants[0].name`"),
        ("- name: lift-tiled", "- name: lift-naive", "declared twice"),
        ("  inputs: [a]\n  output: out", "  inputs: [b]\n  output: out", "key `halide.inputs[0]`"),
        ("  elements: W * H", "  elements: W * Q", "key `metrics.elements`"),
        ("halide:", "variants: [all]\nhalide:", "key `variants[0]`"),
    ];
    for (i, (from, to, want)) in cases.iter().enumerate() {
        assert!(base.contains(from), "{from}");
        let p = dir.join(format!("c{i}.yaml"));
        std::fs::write(&p, base.replacen(from, to, 1)).unwrap();
        let e = load(&p, &repo()).expect_err(want).to_string();
        assert!(e.contains(want) && e.contains(&format!("c{i}.yaml")), "{e}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Result files written before the `gelems` column (26 columns) still chart.
#[test]
fn legacy_results_without_gelems_are_read() {
    use lift::harness::chart::{read_results, RESULTS_HEADER};
    let dir = scratch("legacy-csv");
    let p = dir.join("results.csv");
    let header = RESULTS_HEADER[..26].join(",");
    let row =
        "dot,tiny,all,ok,1.5,1.5,1.5,,,3,1e-7,2.0,10,100,,,,,profiling,,dev,1,OpenCL 3.0,abc,2024-01-01,";
    std::fs::write(&p, format!("{header}\n{row}\n")).unwrap();
    let rows = read_results(&p).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].gelems, None);
    // A 27-column row under the 26-column header is an error naming the line.
    std::fs::write(&p, format!("{header}\n{row},2.5\n")).unwrap();
    let e = read_results(&p).unwrap_err().to_string();
    assert!(e.contains(":2") && e.contains("27 fields, expected 26"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn compile_def(file: &str, def: &str, local: [i64; 3]) -> String {
    use lift::compile::{compile, CompileOptions};
    let path = repo().join("benchmarks/cgo18").join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let src = lift::ir::SourceFile::new(format!("benchmarks/cgo18/{file}"), text);
    let program = lift::parse::parse_program(&src).unwrap_or_else(|e| panic!("{}", e.render(&src)));
    let opts = CompileOptions { local: Some(local), ..CompileOptions::default() };
    compile(&program, def, &opts).unwrap_or_else(|e| panic!("{file} {def}: {e}")).source
}

/// The generated code of the two variants of one 2D and one 3D stencil: the
/// naive kernel reads clamped global memory directly; the tiled one copies
/// its tile (with the halo) to local memory once, behind one barrier.
#[test]
fn generated_stencil_kernels() {
    for (file, def, local) in [
        ("jacobi2d-5pt.lift", "jacobi2d5Naive", [32, 8, 1]),
        ("jacobi2d-5pt.lift", "jacobi2d5Tiled", [32, 8, 1]),
        ("hotspot3d.lift", "hotspot3dNaive", [32, 4, 1]),
        ("hotspot3d.lift", "hotspot3dTiled", [32, 4, 1]),
    ] {
        let k = compile_def(file, def, local);
        let tiled = def.ends_with("Tiled");
        assert_eq!(k.contains("local float"), tiled, "{def}:\n{k}");
        assert_eq!(k.matches("barrier(CLK_LOCAL_MEM_FENCE)").count(), usize::from(tiled), "{def}:\n{k}");
        assert!(k.contains("min(") && k.contains("max("), "clamped borders in {def}");
        insta::assert_snapshot!(format!("stencil_{def}"), k);
    }
}

fn load_program(path: &str) -> lift::ir::Program {
    let text = std::fs::read_to_string(repo().join(path)).unwrap();
    lift::parse::parse_program(&lift::ir::SourceFile::new(path, text)).unwrap()
}

use lift::types::sizes_of as sizes;

/// The stencil space (`src/explore/stencil.rs`): one output per work-item,
/// k outputs per work-item, overlapped tiling by the rule (rows and
/// columns apart, zipped grids too, 3D after `stencil-3d-planes`), in 2D
/// over one grid strips of columns walked by `slide-seq-plus`, and in 3D
/// over one grid the z-walk, each with its slots.
#[test]
fn the_stencil_space_has_its_shapes() {
    let limits = lift::explore::space::SpaceLimits::default();
    // (file, def, sizes, the slots of each shape)
    type Case<'a> = (&'a str, &'a str, &'a [(&'a str, i64)], &'a [&'a str]);
    let cases: [Case; 4] = [
        (
            "benchmarks/cgo18/jacobi2d-5pt.lift",
            "jacobi2d5High",
            &[("W", 512), ("H", 256)],
            &["tx ty", "k tx ty", "vy vx", "s tx ty"],
        ),
        (
            "benchmarks/cgo18/hotspot2d.lift",
            "hotspot2dHigh",
            &[("W", 512), ("H", 256)],
            &["tx ty", "k tx ty", "vy vx"],
        ),
        (
            "benchmarks/cgo18/heat.lift",
            "heatHigh",
            &[("W", 64), ("H", 64), ("D", 32)],
            &["tx ty", "k tx ty", "k tx ty", "vy vx", "tx ty"],
        ),
        (
            "benchmarks/cgo18/heat.lift",
            "heatHighZ",
            &[("W", 64), ("H", 64), ("D", 32)],
            &["tx ty", "k tx ty", "vy vx"],
        ),
    ];
    for (file, def, sz, want) in cases {
        let plan = lift::explore::plan(&load_program(file), def, &sizes(sz), &limits).unwrap();
        assert!(lift::explore::stencil::stencil_dims(&plan.base, def).is_some());
        let got: Vec<String> = plan
            .shapes
            .iter()
            .map(|s| s.slots.iter().map(|x| x.name.as_str()).collect::<Vec<_>>().join(" "))
            .collect();
        assert_eq!(got, want, "{def}");
        for s in &plan.shapes {
            let inst = s.instantiate(&plan.base, def, &s.defaults()).unwrap();
            let text = inst.derivation.join(" ; ");
            let tiles = text.contains("overlapped-tiling-2d");
            assert_eq!(tiles, text.contains("to-local"), "a tile goes to local memory: {text}");
            lift::compile::compile(&inst.program, def, &lift::compile::CompileOptions::default())
                .unwrap_or_else(|e| panic!("{def}: {text}: {e}"));
        }
        // The last 3D shape of heatHigh walks z.
        if def == "heatHigh" {
            let last = plan.shapes.last().unwrap();
            let inst = last.instantiate(&plan.base, def, &last.defaults()).unwrap();
            assert!(inst.derivation.iter().any(|l| l.starts_with("slide-seq-plus")), "{:?}", inst.derivation);
        }
    }
}

/// Every one of the 14 stencils is tiled (zipped grids and 3D included)
/// and the single-grid 3D ones walk z (2D ones may walk strips); with the other presets as
/// `--valid-at`, every pair of tile steps in the slots' domains satisfies
/// the tiling's constraints at every preset, and a tile's work-group (a
/// work-item per input of the tile) stays within 1024 work-items.
#[test]
fn tile_domains_hold_at_every_preset() {
    let mut limits = lift::explore::space::SpaceLimits::default();
    for c in stencil_configs() {
        let (file, def) = c.lift.as_ref().and_then(|l| l.high_level.clone()).unwrap();
        let presets: Vec<_> = c.sizes.iter().map(|(_, s)| s.clone()).collect();
        let (timed, others) = presets.split_last().unwrap();
        limits.valid_at = others.to_vec();
        let prog = load_program(file.to_str().unwrap());
        let plan = lift::explore::plan(&prog, &def, timed, &limits).unwrap();
        let derivation = |s: &lift::explore::space::Shape| {
            s.instantiate(&plan.base, &def, &s.defaults()).unwrap().derivation.join(" ; ")
        };
        let tiled: Vec<_> = plan.shapes.iter().filter(|s| derivation(s).contains("tiling-2d-rect")).collect();
        assert_eq!(tiled.len(), 1, "{}", c.name);
        let t = tiled[0];
        let names: Vec<&str> = t.slots.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["vy", "vx"], "{}", c.name);
        for &vy in &t.slots[0].domain {
            for &vx in &t.slots[1].domain {
                let inst = t.instantiate(&plan.base, &def, &[vy, vx]).unwrap();
                for p in &presets {
                    assert!(
                        lift::explore::space::constraints_hold(&inst.constraints, p),
                        "{} vy={vy} vx={vx} at {p:?}",
                        c.name
                    );
                }
                // A work-item per input of the tile: (vx + halo) x (vy + halo).
                let k = lift::compile::compile(&inst.program, &def, &Default::default()).unwrap();
                let wg: i64 = k.local.unwrap().iter().map(|l| l.eval_with(&|_| None).unwrap()).product();
                assert!(wg <= 1024, "{} vy={vy} vx={vx}: {wg} work-items", c.name);
            }
        }
        // The z-walk in 3D over one grid; in 2D the walked strips (slot
        // `s`) wherever the def slides one grid as `map(transpose) o slide
        // o map(slide)`.
        let walks = plan
            .shapes
            .iter()
            .any(|s| derivation(s).contains("slide-seq-plus") && s.slots.iter().all(|slot| slot.name != "s"));
        let single_3d = ["heat", "jacobi3d-7pt", "jacobi3d-13pt", "poisson"].contains(&c.name.as_str());
        assert_eq!(walks, single_3d, "{}", c.name);
        for s in plan.shapes.iter().filter(|s| s.slots.iter().any(|slot| slot.name == "s")) {
            assert!(derivation(s).contains("slide-seq-plus"), "{}", c.name);
            let mut point = s.defaults();
            for &v in &s.slots[0].domain {
                point[0] = v;
                let inst = s.instantiate(&plan.base, &def, &point).unwrap();
                for p in &presets {
                    assert!(
                        lift::explore::space::constraints_hold(&inst.constraints, p),
                        "{} s={v} at {p:?}",
                        c.name
                    );
                }
            }
        }
    }
}

/// `lift explore` on `file`'s `def` with at most `n` candidates: the rows
/// of its explore.csv and its out folder.
fn explore_rows(
    file: &str,
    def: &str,
    size: &str,
    valid_at: &str,
    n: usize,
) -> (Vec<csv::StringRecord>, PathBuf) {
    let out = scratch(&format!("explore-{def}"));
    let o = lift()
        .args(["explore", file, "--def", def, "--device", "0:0", "--size", size, "--valid-at", valid_at])
        .args(["--budget", "120s", "--max-candidates", &n.to_string(), "--runs", "1", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let mut rd = csv::Reader::from_path(out.join("explore.csv")).unwrap();
    (rd.records().map(|r| r.unwrap()).collect(), out)
}

/// The first candidate of each shape in `want` (shape index, a rule its
/// derivation uses) validated against the interpreter: `ok`, or `slow`
/// (validated, then skipped as hopeless).
fn assert_shapes_validate(rows: &[csv::StringRecord], want: &[(&str, &str)], what: &str) {
    for (shape, rule) in want {
        let r =
            rows.iter().find(|r| &r[3] == *shape).unwrap_or_else(|| panic!("{what}: shape {shape} tried"));
        assert!(["ok", "slow"].contains(&&r[4]), "{what}: shape {shape}: {} {}", &r[4], &r[10]);
        assert!(r[7].contains(rule), "{what}: shape {shape} uses {rule}: {}", &r[7]);
    }
}

/// `lift explore` on stencils: every shape's first candidate validates on
/// PoCL against the interpreter (2D over one grid and over zipped grids,
/// 3D tiled and walking z), and the best program runs in the harness with
/// the local size of its header.
#[test]
fn exploring_a_stencil_validates_every_shape() {
    if !has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    let (rows, out) =
        explore_rows("benchmarks/cgo18/jacobi2d-5pt.lift", "jacobi2d5High", "W=256,H=128", "W=96,H=40", 3);
    assert_shapes_validate(
        &rows,
        &[("0", "map-glb"), ("1", "register-blocking"), ("2", "tiling-2d-rect")],
        "jacobi2d5High",
    );
    let best = std::fs::read_to_string(out.join("best.lift")).unwrap();
    assert!(best.lines().next().unwrap().starts_with("// Found by `lift explore`"));
    assert_eq!(
        lift::harness::explored::header_local(
            "// Launch it with local size 32,4 (`lift compile --local 32,4`)."
        ),
        Some(vec![32, 4])
    );
    let _ = std::fs::remove_dir_all(&out);
    // At tiny: the zipped grids of hotspot2d tiled (only the slid one is
    // copied), jacobi3d-7pt tiled after stencil-3d-planes and walking z.
    let (rows, out) =
        explore_rows("benchmarks/cgo18/hotspot2d.lift", "hotspot2dHigh", "W=96,H=40", "W=8192,H=4096", 3);
    assert_shapes_validate(
        &rows,
        &[("0", "map-glb"), ("1", "register-blocking"), ("2", "tiling-2d-rect")],
        "hotspot2dHigh",
    );
    let _ = std::fs::remove_dir_all(&out);
    let (rows, out) = explore_rows(
        "benchmarks/cgo18/jacobi3d-7pt.lift",
        "jacobi3d7High",
        "W=96,H=12,D=5",
        "W=512,H=512,D=512",
        4,
    );
    assert_shapes_validate(
        &rows,
        &[("0", "map-glb"), ("1", "register-blocking"), ("2", "stencil-3d-planes"), ("3", "slide-seq-plus")],
        "jacobi3d7High",
    );
    let _ = std::fs::remove_dir_all(&out);
}

/// The explored shapes reach the hand-written kernels: `tiled` at the tile
/// steps of `benchmarks/derivations/<name>-tiled.txt` compiles to
/// `<name>Tiled`'s kernel (but for the name and a block of gaussian's
/// copy-out; srad2's two copies bound by `let-local-copies`),
/// and `slideseq` at `tx=32 ty=4` to `<name>SlideSeq`'s.
#[test]
fn explored_shapes_give_the_hand_written_kernels() {
    use lift::compile::{compile, CompileOptions};
    let limits = lift::explore::space::SpaceLimits::default();
    for c in stencil_configs() {
        let (file, high) = c.lift.as_ref().and_then(|l| l.high_level.clone()).unwrap();
        let prog = load_program(file.to_str().unwrap());
        let (_, large) = c.preset("large").unwrap();
        let plan = lift::explore::plan(&prog, &high, large, &limits).unwrap();
        let stem = high.trim_end_matches("High");
        let kernel = |def: &str, local: Option<[i64; 3]>| {
            let opts = CompileOptions { local, ..CompileOptions::default() };
            compile(&prog, def, &opts).unwrap_or_else(|e| panic!("{def}: {e}")).source
        };
        let derived = |rule: &str, values: &[i64], local: Option<[i64; 3]>| {
            let s = plan
                .shapes
                .iter()
                .find(|s| {
                    let d = s.instantiate(&plan.base, &high, &s.defaults()).unwrap().derivation.join(" ");
                    d.contains(rule)
                })
                .unwrap_or_else(|| panic!("{}: no shape with {rule}", c.name));
            let inst = s.instantiate(&plan.base, &high, values).unwrap();
            let opts = CompileOptions { local, ..CompileOptions::default() };
            compile(&inst.program, &high, &opts).unwrap().source
        };
        // The tile steps of the committed derivation.
        let der =
            std::fs::read_to_string(repo().join(format!("benchmarks/derivations/{}-tiled.txt", c.name)))
                .unwrap();
        let line = der.lines().find(|l| l.starts_with("overlapped-tiling-2d-rect")).unwrap();
        let arg = |k: &str| -> i64 {
            line.split_whitespace().find_map(|w| w.strip_prefix(&format!("{k}="))).unwrap().parse().unwrap()
        };
        let tiled =
            derived("tiling-2d-rect", &[arg("vy"), arg("vx")], None).replace(&high, &format!("{stem}Tiled"));
        let want = kernel(&format!("{stem}Tiled"), None);
        if c.name == "gaussian" {
            // The hand-written def copies its sum out with a `mapSeq(id)`
            // of one element: a block more around the same store.
            let statements = |k: &str| -> Vec<String> {
                k.lines().map(str::trim).filter(|l| !["{", "}"].contains(l)).map(String::from).collect()
            };
            assert_eq!(statements(&tiled), statements(&want), "{}", c.name);
        } else {
            assert_eq!(tiled, want, "{}", c.name);
        }
        if c.variants.iter().any(|v| v == "lift-slideseq") {
            let local = Some([32, 4, 1]);
            let walk = derived("slide-seq-plus", &[32, 4], local).replace(&high, &format!("{stem}SlideSeq"));
            assert_eq!(walk, kernel(&format!("{stem}SlideSeq"), local), "{}", c.name);
        }
    }
}

#[test]
fn results_files_of_27_columns_are_read_and_rows_record_their_sizes() {
    use lift::harness::chart::{read_results, RESULTS_HEADER};
    let dir = scratch("sizes-csv");
    let p = dir.join("results.csv");
    let row =
        "dot,tiny,all,ok,1.5,1.5,1.5,,,3,1e-7,2.0,10,100,,,,,profiling,,dev,1,OpenCL 3.0,abc,2024-01-01,,";
    std::fs::write(&p, format!("{}\n{row}\n", RESULTS_HEADER[..27].join(","))).unwrap();
    assert_eq!(read_results(&p).unwrap()[0].sizes, "");
    std::fs::write(&p, format!("{}\n{row},N=1280\n", RESULTS_HEADER.join(","))).unwrap();
    assert_eq!(read_results(&p).unwrap()[0].sizes, "N=1280");
    let _ = std::fs::remove_dir_all(&dir);
}
