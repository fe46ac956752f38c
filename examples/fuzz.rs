//! The long fuzz runs of docs/TESTING.md: mutants of the repository's
//! programs through the front end (and the device), and random well-typed
//! programs compared with the interpreter at every optimisation level.
//!
//! `cargo run --release --example fuzz -- [--mutants N] [--exec-every K] [--programs N] [--seed S] [--out DIR] [--verbose]`
//!
//! Each input is written to `DIR/current.lift` before it is tried (a stack
//! overflow aborts the process: that file keeps the input), and each
//! failure to `DIR/<kind>-<n>.lift` with the message in a comment.

#[path = "../tests/support/fuzz/mod.rs"]
mod fuzz;

use std::path::PathBuf;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut mutants = 0usize;
    let mut programs = 0usize;
    let mut seed = 1u64;
    // Every K-th mutant that compiles is also run on the device (0: none).
    let mut exec_every = 1usize;
    let mut out = PathBuf::from("target/fuzz");
    let mut verbose = false;
    let mut i = 0;
    while i < args.len() {
        let v = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--mutants" => mutants = v.parse().expect("--mutants N"),
            "--programs" => programs = v.parse().expect("--programs N"),
            "--seed" => seed = v.parse().expect("--seed S"),
            "--exec-every" => exec_every = v.parse().expect("--exec-every K"),
            "--out" => out = PathBuf::from(v),
            "--verbose" => {
                verbose = true;
                i += 1;
                continue;
            }
            a => {
                eprintln!("error: unknown argument `{a}`; usage: fuzz [--mutants N] [--programs N] [--seed S] [--out DIR]");
                std::process::exit(2);
            }
        }
        i += 2;
    }
    std::fs::create_dir_all(&out).expect("the output folder");
    let current = out.join("current.lift");
    // The device the driver picks (the first GPU, else the first device).
    match lift::runtime::select_device(None) {
        Ok(d) => println!("device: {}", d.name),
        Err(e) => println!("device: none ({e}); front end only"),
    }
    let t0 = Instant::now();
    let (current, out_dir) = (&current, &out);
    let make_log = |what: &'static str| {
        let mut written = 0;
        move |n: usize, text: &str, r: &fuzz::driver::Report| {
            let _ = std::fs::write(current, text);
            // Failures are kept as they come (a long run may be stopped).
            for f in &r.failures[written..] {
                let body = format!("// {}: {}\n{}", f.kind, f.msg.replace('\n', "\n// "), f.input);
                let _ = std::fs::write(out_dir.join(format!("{what}-found-{written}-{}.lift", f.kind)), body);
                written += 1;
            }
            if n.is_multiple_of(250) && n > 0 {
                eprintln!("[{:6.0} s] {}", t0.elapsed().as_secs_f64(), r.summary(&format!("{what} {n}")));
            }
        }
    };
    let mut failed = 0;
    let mut save = |what: &str, r: &fuzz::driver::Report| {
        println!("{} in {:.0} s", r.summary(what), t0.elapsed().as_secs_f64());
        for (k, f) in r.failures.iter().enumerate() {
            let body = format!("// {}: {}\n{}", f.kind, f.msg.replace('\n', "\n// "), f.input);
            let _ = std::fs::write(out.join(format!("{what}-{}-{k}.lift", f.kind)), body);
            println!("  {} {}", f.kind, f.msg.lines().next().unwrap_or(""));
        }
        failed += r.failures.len();
        for (why, (n, input)) in &r.reasons {
            println!("  {n:6} {why}");
            if verbose {
                println!("{input}");
            }
        }
    };
    if mutants > 0 {
        let corpus = fuzz::corpus(std::path::Path::new("."));
        let r = fuzz::driver::mutants(
            &corpus,
            mutants,
            seed,
            exec_every,
            Duration::from_secs(60),
            make_log("mutants"),
        );
        save("mutants", &r);
    }
    if programs > 0 {
        let r = fuzz::driver::programs(programs, seed, Duration::from_secs(60), make_log("programs"));
        save("programs", &r);
    }
    std::process::exit(if failed > 0 { 1 } else { 0 });
}
