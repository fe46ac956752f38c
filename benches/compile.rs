//! Compile time of the example programs (issue: under 10 ms each in a
//! release build), and the generated kernel sizes with and without
//! array-access simplification, printed once before timing.

use criterion::{criterion_group, criterion_main, Criterion};
use lift::compile::{compile, CompileOptions};
use lift::ir::{Program, SourceFile};

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

criterion_group!(benches, bench);
criterion_main!(benches);
