//! Compiles one benchmark kernel N times, for instruction counts: run it
//! under `valgrind --tool=cachegrind` with N and with 0 and subtract, which
//! leaves the cost of N compiles without the loading.
//!
//! `cargo run --release --example compile_n -- CONFIG PRESET LEVEL N [CONFIG_DIR]`

use lift::compile::compile;
use lift::harness::config::load_dir;
use lift::harness::variant::kernel_options;
use lift::parse::load_program;
use std::path::Path;

// The allocator the `lift` binary uses (src/main.rs), so the counts match.
#[global_allocator]
static ALLOC: lift::alloc::MiMalloc = lift::alloc::MiMalloc;

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: compile_n CONFIG PRESET LEVEL N [CONFIG_DIR]";
    let [name, preset, level, n] = [1, 2, 3, 4].map(|i| args.get(i).ok_or(usage));
    let (name, preset, level) = (name?, preset?, level?);
    let n: usize = n?.parse().map_err(|_| usage)?;
    let configs = args.get(5).map(String::as_str).unwrap_or("configs");
    let mut bytes = 0;
    for cfg in load_dir(Path::new(configs), Path::new(".")).map_err(|e| e.to_string())? {
        let cfg = cfg.map_err(|e| e.to_string())?;
        let Some(lift) = &cfg.lift else { continue };
        if cfg.name != *name {
            continue;
        }
        let sizes = &cfg.sizes.iter().find(|(p, _)| p == preset).ok_or("no such preset")?.1;
        for k in &lift.kernels {
            let (_, program) = load_program(&k.program).map_err(|e| e.to_string())?;
            let opts = kernel_options(k, level, sizes).map_err(|e| e.to_string())?;
            for _ in 0..n {
                bytes += compile(&program, &k.def, &opts).map_err(|e| e.to_string())?.source.len();
            }
        }
    }
    println!("{bytes} bytes of kernel source");
    Ok(())
}
