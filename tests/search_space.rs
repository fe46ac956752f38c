//! Snapshots of the search space `lift explore` plans for every program of
//! the generality and holdout suites at their GPU sizes. Each macro or
//! stencil shape is a line: its label, its slots' domains and a hash of its
//! derivation at the slots' defaults (rules, positions and arguments); the
//! generic shapes (every lowering of every stage-1 program, thousands) are
//! one count and one hash per program. A change to how shapes are built (a
//! family rewritten as strategies, a new site rule) shows here as a diff,
//! and one that means to change nothing must leave these files as they are.
//! (The whole derivations are 5 MB; `LIFT_SPACE_FULL=1` prints them.)

use lift::explore::log::fnv_hex;
use lift::explore::space::SpaceLimits;
use lift::explore::{self, ExploreOptions};
use lift::harness::generality::manifest;
use std::fmt::Write;
use std::path::Path;
use std::time::Duration;

fn options(def: &str, sizes: &std::collections::BTreeMap<String, i64>) -> ExploreOptions {
    ExploreOptions {
        def: def.into(),
        sizes: sizes.clone(),
        budget: Duration::from_secs(1),
        seed: 1,
        out: std::env::temp_dir(),
        resume: false,
        limits: SpaceLimits::default(),
        max_candidates: None,
        warmup: 0,
        runs: 1,
        progress: false,
        then: Vec::new(),
        reference: None,
        specialise: false,
    }
}

/// One program's plan as text: what is searched, then a line per shape.
fn plan_text(file: &Path, name: &str, sizes: &std::collections::BTreeMap<String, i64>) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    let program = lift::parse::parse_program(&lift::ir::SourceFile::new(file.display().to_string(), text))
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let mut out = String::new();
    let (plan, opts) = match explore::searched_plan(&program, &options(name, sizes)) {
        Ok(p) => p,
        Err(e) => return format!("== {name}: no plan: {e}\n"),
    };
    let sz: Vec<String> = sizes.iter().map(|(k, v)| format!("{k}={v}")).collect();
    writeln!(out, "== {name} at {}: searched as {}, then [{}]", sz.join(","), opts.def, opts.then.join(", "))
        .unwrap();
    let full = std::env::var_os("LIFT_SPACE_FULL").is_some();
    // The generic shapes' lines, each ended by a newline, hashed together.
    let (mut generic, mut generic_lines) = (0, String::new());
    for (i, shape) in plan.shapes.iter().enumerate() {
        let kind = if plan.macros.contains(&i) {
            "macro"
        } else if plan.stencil {
            "stencil"
        } else {
            "generic"
        };
        let derivation = match shape.instantiate(&plan.base, &plan.def, &shape.defaults()) {
            Ok(inst) => inst.derivation.join(" ; "),
            Err(e) => format!("does not replay at its defaults: {e}"),
        };
        let slots: Vec<String> = shape.slots.iter().map(|s| format!("{}{:?}", s.name, s.domain)).collect();
        let line = format!("{} | {} | {derivation}", shape.label(), slots.join(" "));
        if full {
            println!("{name} [{i}] {kind}: {line}");
        }
        if kind == "generic" {
            generic += 1;
            writeln!(generic_lines, "{line}").unwrap();
            continue;
        }
        let hash = fnv_hex(&format!("{derivation}\n"));
        writeln!(out, "[{i}] {kind}: {} | {} | {hash}", shape.label(), slots.join(" ")).unwrap();
    }
    writeln!(out, "generic shapes: {generic}, {}", fnv_hex(&generic_lines)).unwrap();
    out
}

fn suite_text(dir: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let entries = manifest::load(&root.join(dir), &[]).unwrap();
    assert!(!entries.is_empty(), "{dir}: no programs");
    entries.iter().map(|e| plan_text(&root.join(&e.file), &e.name, &e.gpu_sizes)).collect()
}

#[test]
fn generality_search_spaces() {
    insta::assert_snapshot!(suite_text("benchmarks/generality"));
}

#[test]
fn holdout_search_spaces() {
    insta::assert_snapshot!(suite_text("benchmarks/holdout"));
}
