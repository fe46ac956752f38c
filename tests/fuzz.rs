//! Fuzzing the front end (issue 12): mutants of the repository's `.lift`
//! programs go through the parser, the type checker and the compiler at
//! every optimisation level on a worker thread with the CLI's stack and a
//! time bound; a panic, a hang, a stack overflow (the process aborts) or a
//! refusal without a position fails. Mutants that compile are run on the
//! OpenCL device at small sizes and compared with the interpreter. A
//! bounded run with a fixed seed; `cargo run --release --example fuzz --
//! --mutants N` runs many more (docs/TESTING.md). Inputs that once failed
//! are kept in `tests/fuzz/` and checked first.

mod support;

use std::path::Path;
use std::time::Duration;
use support::fuzz::{self, driver};

fn report(r: &driver::Report, what: &str) {
    println!("{}", r.summary(what));
    for f in &r.failures {
        println!("--- {}: {}\n{}", f.kind, f.msg, f.input);
    }
    assert!(r.failures.is_empty(), "{}", r.summary(what));
}

#[test]
fn mutated_programs_never_crash_the_front_end() {
    let corpus = fuzz::corpus(Path::new(env!("CARGO_MANIFEST_DIR")));
    assert!(corpus.len() >= 30, "the corpus: {} files", corpus.len());
    // Device runs only where a device exists; the front end always.
    let exec = if driver::has_device() { 1 } else { 0 };
    if exec == 0 {
        println!("skipped: no OpenCL device (front end only)");
    }
    let r = driver::mutants(&corpus, 1500, 12, exec * 15, Duration::from_secs(30), |_, _, _| {});
    report(&r, "mutants");
    assert!(r.parsed > 200 && r.compiled > 200, "{}", r.summary("mutants"));
}

#[test]
fn regressions_found_by_fuzzing() {
    // Each file is an input that once crashed, hung or miscompiled; its
    // first comment says what it did.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "lift")).collect()
        })
        .unwrap_or_default();
    files.sort();
    assert!(files.len() >= 4, "tests/fuzz/ holds the regressions");
    let mut run = Vec::new();
    for p in &files {
        let text = std::fs::read_to_string(p).unwrap();
        // A refusal is checked to the letter; the others must compile and
        // compute the interpreter's result.
        match text.lines().find_map(|l| l.strip_prefix("// expect-error: ")) {
            Some(want) => {
                let (_, front) = fuzz::check::front_end("fuzz.lift", &text);
                let file = lift::ir::SourceFile::new("fuzz.lift", text.clone());
                let got: Vec<String> = match lift::parse::parse_program(&file) {
                    Err(e) => vec![e.render(&file)],
                    Ok(_) => front
                        .defs
                        .iter()
                        .flat_map(|(_, ks)| ks.iter().filter_map(|k| k.as_ref().err()))
                        .map(|e| match e.span() {
                            Some(s) => format!("{}: error: {e}", file.location(s.start)),
                            None => e.to_string(),
                        })
                        .collect(),
                };
                assert!(got.iter().any(|g| g == want), "{}: want `{want}`, got {got:?}", p.display());
            }
            None => run.push((text, driver::has_device())),
        }
    }
    let r = driver::run_inputs(run, Duration::from_secs(30));
    report(&r, "regressions");
}
