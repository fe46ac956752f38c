//! Compile time of the example programs and of every benchmark kernel of
//! `configs/` (at level `all`, with the config's launch sizes and, where it
//! asks for them, its first size preset's static sizes), and the generated
//! kernel sizes of the examples with and without array-access
//! simplification, printed once before timing. `cargo run --release
//! --example dump_kernels` measures every kernel at every level and preset.

// The allocator the `lift` binary uses (src/main.rs), so the times match.
#[global_allocator]
static ALLOC: lift::alloc::MiMalloc = lift::alloc::MiMalloc;

use criterion::{criterion_group, criterion_main, Criterion};
use lift::compile::{compile, CompileOptions};
use lift::harness::config::load_dir;
use lift::harness::variant::kernel_options;
use lift::ir::{Program, SourceFile};
use lift::parse::load_program;
use std::path::Path;

fn load(name: &str) -> (Program, String) {
    let path = format!("tests/programs/{name}.lift");
    let text = std::fs::read_to_string(&path).expect("program");
    let file = SourceFile::new(path, text);
    let program = lift::parse::parse_program(&file).unwrap_or_else(|e| panic!("{}", e.render(&file)));
    let def = program.defs.last().expect("def").name.clone();
    (program, def)
}

fn bench(c: &mut Criterion) {
    let off = CompileOptions { arith_simplify: false, ..Default::default() };
    for name in ["dot", "transpose", "scal", "jacobi1d"] {
        let (program, def) = load(name);
        let on = compile(&program, &def, &CompileOptions::default()).expect("compiles");
        let raw = compile(&program, &def, &off).expect("compiles");
        println!(
            "{name}: kernel {} bytes / {} lines simplified, {} bytes / {} lines unsimplified",
            on.source.len(),
            on.source.lines().count(),
            raw.source.len(),
            raw.source.lines().count()
        );
        c.bench_function(&format!("compile {name}"), |b| {
            b.iter(|| compile(&program, &def, &CompileOptions::default()).expect("compiles"))
        });
    }
}

fn bench_configs(c: &mut Criterion) {
    let configs = load_dir(Path::new("configs"), Path::new(".")).expect("configs directory");
    for cfg in configs {
        let cfg = cfg.expect("config loads");
        let (Some(lift), Some((_, sizes))) = (&cfg.lift, cfg.sizes.first()) else { continue };
        for k in &lift.kernels {
            let (_, program) = load_program(&k.program).expect("program parses");
            let opts = kernel_options(k, "all", sizes).expect("options");
            compile(&program, &k.def, &opts).expect("compiles");
            c.bench_function(&format!("compile {} {}", cfg.name, k.def), |b| {
                b.iter(|| compile(&program, &k.def, &opts).expect("compiles"))
            });
        }
    }
}

criterion_group!(benches, bench, bench_configs);
criterion_main!(benches);
