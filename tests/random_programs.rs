//! The compiler's Csmith (issue 12): random well-typed low-level programs
//! (`tests/support/fuzz/gen.rs`), compiled at every optimisation level, run
//! on the OpenCL device and compared with the interpreter. A bounded run
//! with a fixed seed; `cargo run --release --example fuzz -- --programs N`
//! runs many more (docs/TESTING.md).

mod support;

use std::time::Duration;
use support::fuzz::driver;

#[test]
fn random_programs_compute_what_the_interpreter_computes() {
    if !driver::has_device() {
        println!("skipped: no OpenCL device");
        return;
    }
    let r = driver::programs(16, 12, Duration::from_secs(60), |_, _, _| {});
    println!("{}", r.summary("random programs"));
    for f in &r.failures {
        println!("--- {}: {}\n{}", f.kind, f.msg, f.input);
    }
    assert!(r.failures.is_empty(), "{}", r.summary("random programs"));
    // The generator's programs are meant to compile: most must, and run.
    assert!(r.compiled * 10 >= r.tried * 7, "too many refused: {}", r.summary("random programs"));
    assert!(r.executed * 10 >= r.compiled * 8, "too few run: {}", r.summary("random programs"));
}
