//! Config loading: the shipped configs load, and broken ones are reported
//! with the file and the key.

use lift::harness::config::{load, load_dir, Gold};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn shipped_configs_load() {
    let all = load_dir(&repo().join("configs"), &repo()).unwrap();
    assert!(all.len() >= 3);
    for c in &all {
        let c = c.as_ref().unwrap_or_else(|e| panic!("{e}"));
        assert!(c.preset("tiny").is_some(), "{} has a tiny preset", c.name);
    }
    let dot = load(&repo().join("configs/dot.yaml"), &repo()).unwrap();
    assert_eq!(dot.validation.gold, Gold::Rust("dot".into()));
    assert_eq!(dot.variants, ["none", "barrier", "barrier+cf", "all", "lift-derived"]);
}

fn broken(name: &str, from: &str, to: &str) -> String {
    let dir = std::env::temp_dir().join(format!("lift-cfg-{name}-{}", std::process::id()));
    let text = std::fs::read_to_string(repo().join("configs/dot.yaml")).unwrap();
    assert!(text.contains(from), "test setup: `{from}` in dot.yaml");
    let p = write(&dir, &format!("{name}.yaml"), &text.replacen(from, to, 1));
    let err = load(&p, &repo()).unwrap_err().to_string();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(err.contains(&format!("{name}.yaml")), "names the file: {err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    err
}

#[test]
fn errors_name_file_and_key() {
    let e = broken("unknown", "seed: 42", "seed: 42\ncolour: blue");
    assert!(e.contains("colour"), "{e}");
    let e = broken("badexpr", "global: [N/2]\n      local", "global: [N/+]\n      local");
    assert!(e.contains("lift.kernels[0].global[0]") && e.contains("bad expression"), "{e}");
    let e = broken("unbound", "shape: [N/128]", "shape: [K/128]");
    assert!(e.contains("buffers[0].shape") && e.contains('K'), "{e}");
    let e = broken("nofile", "references/dot/dot.cl", "references/dot/gone.cl");
    assert!(e.contains("reference.sources[0]") && e.contains("gone.cl"), "{e}");
    let e = broken("badgold", "gold: rust:dot", "gold: oracle");
    assert!(e.contains("validation.gold"), "{e}");
    let e = broken("badvariant", "validation:", "variants: [none, turbo]\nvalidation:");
    assert!(e.contains("variants[1]") && e.contains("turbo"), "{e}");
    let e = broken("twoinits", "init: { random: { min: -1.0, max: 1.0 } }", "init: { const: 1, iota: {} }");
    assert!(e.contains("inputs[0].init"), "{e}");
}

#[test]
fn infinite_tolerance_is_refused() {
    let text = std::fs::read_to_string(repo().join("configs/dot.yaml")).unwrap();
    let line =
        text.lines().find(|l| l.trim_start().starts_with("rtol:")).expect("dot.yaml has an rtol").to_string();
    let indent = &line[..line.len() - line.trim_start().len()];
    let e = broken("infrtol", &line, &format!("{indent}rtol: .inf"));
    assert!(e.contains("validation") && e.contains("finite non-negative"), "{e}");
}

#[test]
fn missing_config_file() {
    let err = load(Path::new("/nonexistent/x.yaml"), &repo()).unwrap_err().to_string();
    assert!(err.starts_with("/nonexistent/x.yaml: cannot read"), "{err}");
}

#[test]
fn reference_build_options_and_tuning_parameter_errors() {
    let e = broken("badopt", "build_options: \"\"", "build_options: \"-DSTATIC_N={N+}\"");
    assert!(e.contains("reference.build_options") && e.contains("bad expression"), "{e}");
    let e = broken("unboundopt", "build_options: \"\"", "build_options: \"-DSTATIC_N={Q}\"");
    assert!(e.contains("reference.build_options") && e.contains('Q'), "{e}");
    let e = broken("paramsize", "output: partial\nlift", "output: partial\n  params: { N: 3 }\nlift");
    assert!(e.contains("reference.params") && e.contains("size name"), "{e}");
    // Parameters may size the launch; a device entry overrides them.
    let dir = std::env::temp_dir().join(format!("lift-cfg-params-{}", std::process::id()));
    let text = std::fs::read_to_string(repo().join("configs/dot.yaml")).unwrap().replacen(
        "global: [N/2], local: [64] }\n  output: partial",
        "global: [N/2], local: [WG] }\n  output: partial\n  params: { WG: 64 }\n  per_device: [{ device: nvidia, params: { WG: 128 } }]",
        1,
    );
    let cfg = load(&write(&dir, "params.yaml", &text), &repo()).expect("params load");
    let _ = std::fs::remove_dir_all(&dir);
    let r = cfg.reference.expect("reference");
    assert_eq!((r.params_for("NVIDIA H100")["WG"], r.params_for("pthread-cpu")["WG"]), (128, 64));
}

/// The work-group size each reference kernel declares with
/// `reqd_work_group_size`, resolved to numbers: a macro takes the value of
/// `params` (what the harness passes with -D) or of a plain `#define`.
fn declared_local(
    source: &str,
    kernel: &str,
    params: &std::collections::BTreeMap<String, i64>,
) -> Option<Vec<i64>> {
    let at = source.find(&format!("void {kernel}("))?;
    let before = &source[..at];
    let attr = before.rfind("reqd_work_group_size(")?;
    // The attribute belongs to this kernel only if no function body or
    // declaration sits between.
    if before[attr..].contains(['{', ';']) {
        return None;
    }
    let args = &before[attr + "reqd_work_group_size(".len()..];
    let args = &args[..args.find(')')?];
    let value = |a: &str| -> Option<i64> {
        let a = a.trim();
        a.parse().ok().or_else(|| params.get(a).copied()).or_else(|| {
            let def = source.lines().find_map(|l| l.trim().strip_prefix(&format!("#define {a} ")))?;
            def.trim().parse().ok()
        })
    };
    args.split(',').map(value).collect()
}

#[test]
fn reference_kernels_declare_their_launched_work_group_size() {
    let mut checked = 0;
    for c in load_dir(&repo().join("configs"), &repo()).unwrap() {
        let c = c.unwrap_or_else(|e| panic!("{e}"));
        let Some(r) = &c.reference else { continue };
        let text: String =
            r.sources.iter().map(|p| std::fs::read_to_string(repo().join(p)).unwrap()).collect();
        // The defaults and every device's tuned parameters.
        let mut sets = vec![r.params.clone()];
        sets.extend(r.per_device.iter().map(|(d, _)| r.params_for(d)));
        for k in &r.kernels {
            let Some(local) = &k.local else { continue };
            for params in &sets {
                let mut want: Vec<i64> =
                    local.iter().map(|e| lift::harness::config::eval(e, params).unwrap()).collect();
                want.resize(3, 1);
                let got = declared_local(&text, &k.name, params);
                assert_eq!(got, Some(want), "{}: kernel {} with {params:?}", c.name, k.name);
                checked += 1;
            }
        }
    }
    assert!(checked >= 30, "only {checked} kernels checked");
}

#[test]
fn two_configs_of_one_name_are_refused_after_the_first() {
    let dir = std::env::temp_dir().join(format!("lift-cfg-twice-{}", std::process::id()));
    let text = std::fs::read_to_string(repo().join("configs/dot.yaml")).unwrap();
    write(&dir, "a.yaml", &text);
    write(&dir, "b.yaml", &text);
    let all = load_dir(&dir, &repo()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(all[0].is_ok(), "the first keeps its name");
    let err = all[1].as_ref().expect_err("the second is refused").to_string();
    let line = text.lines().position(|l| l.starts_with("name:")).unwrap() + 1;
    assert!(err.contains(&format!("b.yaml:{line}: key `name`: `dot` is also the name of ")), "{err}");
    assert!(err.ends_with("a.yaml: one config per benchmark"), "{err}");
}
