//! Dependencies between the compiler's modules point one way (see
//! `docs/ARCHITECTURE.md`): each module may name only the modules listed
//! for it here. A module not listed may use anything but `cli`.

use std::collections::BTreeSet;
use std::path::Path;

/// Module -> the modules it may use.
const ALLOWED: [(&str, &[&str]); 17] = [
    ("arith", &[]),
    ("types", &["arith"]),
    ("ir", &["arith", "types"]),
    ("parse", &["arith", "types", "ir"]),
    ("interp", &["arith", "types", "ir"]),
    ("passes", &["arith", "types", "ir"]),
    ("view", &["arith", "types", "ir", "passes"]),
    ("codegen", &["arith", "types", "ir", "passes", "view"]),
    ("compile", &["arith", "types", "ir", "passes", "view", "codegen"]),
    ("runtime", &["types"]),
    // Files written under `--out`, never through links: plain `std`.
    ("outfile", &[]),
    // Launching a compiled kernel and validating its output sit below both
    // the search and the harness, and know neither.
    ("launch", &["arith", "types", "passes", "compile", "runtime"]),
    ("validate", &["arith", "types", "ir", "interp", "passes"]),
    // Rules are checked with the type checker and print through the parser's printer.
    // `interp`: a side condition evaluates a map's function (`reduce-pad`).
    ("rewrite", &["arith", "types", "ir", "parse", "interp", "passes"]),
    // The search builds, launches and validates candidates through the
    // layers below it, never through the harness (which may call it).
    (
        "explore",
        &[
            "arith", "types", "ir", "parse", "interp", "passes", "view", "codegen", "compile", "runtime",
            "outfile", "launch", "validate", "rewrite",
        ],
    ),
    (
        "harness",
        &[
            "arith", "types", "ir", "parse", "interp", "passes", "view", "codegen", "compile", "runtime",
            "outfile", "launch", "validate", "rewrite", "explore",
        ],
    ),
    (
        "cli",
        &[
            "arith", "types", "ir", "parse", "interp", "passes", "view", "codegen", "compile", "runtime",
            "outfile", "launch", "validate", "rewrite", "explore", "harness",
        ],
    ),
];

/// The modules `module` may use, as [`ALLOWED`] lists them.
fn allowed(module: &str) -> &'static [&'static str] {
    ALLOWED
        .iter()
        .find(|(m, _)| *m == module)
        .map(|(_, a)| *a)
        .unwrap_or_else(|| panic!("{module} not listed"))
}

/// The modules named as `crate::NAME` in the code (comments skipped).
fn used_modules(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable source directory").flatten() {
        let p = entry.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn modules_depend_only_on_lower_layers() {
    let src = Path::new("src");
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut violations = Vec::new();
    let mut checked = 0;
    for f in &files {
        let rel = f.strip_prefix(src).expect("under src");
        let module = rel.iter().next().and_then(|c| c.to_str()).unwrap_or("").trim_end_matches(".rs");
        if module == "lib" || module == "main" {
            continue;
        }
        let text = std::fs::read_to_string(f).expect("readable source file");
        let allowed = ALLOWED.iter().find(|(m, _)| *m == module).map(|(_, a)| *a);
        for used in used_modules(&text) {
            let ok = used == module
                || match allowed {
                    Some(a) => a.contains(&used.as_str()),
                    None => used != "cli",
                };
            if !ok {
                violations.push(format!("{}: {module} uses crate::{used}", f.display()));
            }
            checked += 1;
        }
    }
    assert!(checked > 50, "found only {checked} module references under src/");
    assert!(violations.is_empty(), "dependencies against the layering:\n{}", violations.join("\n"));
}

/// The order of issue 22: `cli -> harness -> explore -> (launch, validate)
/// -> compile`. The search imports nothing from the harness, so that the
/// harness can call it; launching and validation know neither.
#[test]
fn the_search_is_below_the_harness_and_launching_below_both() {
    assert!(!allowed("explore").contains(&"harness"));
    assert!(allowed("harness").contains(&"explore"));
    for m in ["launch", "validate"] {
        assert!(allowed("explore").contains(&m) && allowed("harness").contains(&m), "{m}");
        for above in ["explore", "harness", "cli"] {
            assert!(!allowed(m).contains(&above), "{m} may not use {above}");
        }
    }
    assert!(allowed("launch").contains(&"compile"));
}

#[test]
fn the_scanner_sees_uses_and_skips_comments() {
    let found = used_modules(
        "use crate::ir::{Expr, Span};\n// crate::harness in a comment\nlet x = crate::arith::simplify(&e);",
    );
    assert_eq!(found.into_iter().collect::<Vec<_>>(), ["arith", "ir"]);
}

/// The harness modules a file of `src/harness` names (`super::X` from a
/// file directly in it or a folder's `mod.rs`, `super::super::X` deeper,
/// `crate::harness::X` anywhere), comments and tests skipped.
fn harness_uses(rel: &Path, text: &str) -> BTreeSet<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    let top = rel.components().count() == 1 || rel.file_name().is_some_and(|f| f == "mod.rs");
    let mut out = BTreeSet::new();
    for line in code.lines() {
        let line = line.split("//").next().unwrap_or("");
        for (prefix, ok) in [("crate::harness::", true), ("super::super::", !top), ("super::", top)] {
            let mut rest = line;
            while let Some(i) = rest.find(prefix) {
                let before = &rest[..i];
                rest = &rest[i + prefix.len()..];
                // `super::` inside `super::super::` is the deeper form.
                if !ok || (prefix == "super::" && before.ends_with("super::")) || rest.starts_with("super::")
                {
                    continue;
                }
                let name: String =
                    rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                out.insert(name);
            }
        }
    }
    out
}

/// Issue 22: the harness's modules import one another without a circle
/// (configs parse into specs that know nothing of the runners; the runner
/// asks the registry, whose runners never import the runner back).
#[test]
fn harness_modules_form_no_import_circle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/harness");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut graph: std::collections::BTreeMap<String, BTreeSet<String>> = Default::default();
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap();
        let first = rel.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "mod" {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        graph.entry(module).or_default().extend(harness_uses(rel, &text));
    }
    let names: BTreeSet<String> = graph.keys().cloned().collect();
    for deps in graph.values_mut() {
        deps.retain(|d| names.contains(d));
    }
    // Depth-first search for a back edge; the path is the circle.
    fn visit(
        m: &str,
        g: &std::collections::BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == m) {
            let mut circle = path[i..].to_vec();
            circle.push(m.to_string());
            return Some(circle);
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.to_string());
        for d in g.get(m).into_iter().flatten().filter(|d| d.as_str() != m) {
            if let Some(c) = visit(d, g, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(m.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for m in graph.keys() {
        if let Some(c) = visit(m, &graph, &mut Vec::new(), &mut done) {
            panic!("import circle inside harness: {}", c.join(" -> "));
        }
    }
    // The scanner itself: a config importing a runner would be found.
    let uses = harness_uses(Path::new("config.rs"), "use super::explored::X;\n// super::halide\n");
    assert_eq!(uses, BTreeSet::from(["explored".to_string()]));
    let deep =
        harness_uses(Path::new("runners/reference.rs"), "use super::super::runner::Y;\nuse super::Bench;\n");
    assert_eq!(deep, BTreeSet::from(["runner".to_string()]));
}
