//! Compiles every Lift kernel of every benchmark config at every size preset
//! and level, writes the kernels to a directory and prints the compile time
//! of each (the fastest of several compiles). Whether a compiler change
//! altered any generated kernel is checked by `tests/all_kernels.rs`.
//!
//! `cargo run --release --example dump_kernels -- OUT_DIR [CONFIG_DIR [BENCHMARK]]`

use lift::compile::compile;
use lift::harness::config::load_dir;
use lift::harness::variant::kernel_options;
use lift::parse::load_program;
use std::path::Path;
use std::time::Instant;

// The allocator the `lift` binary uses (src/main.rs), so the times match.
#[global_allocator]
static ALLOC: lift::alloc::MiMalloc = lift::alloc::MiMalloc;

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let out = Path::new(args.get(1).ok_or("usage: dump_kernels OUT_DIR [CONFIG_DIR]")?);
    let configs = args.get(2).map(String::as_str).unwrap_or("configs");
    let only = args.get(3);
    std::fs::create_dir_all(out).map_err(|e| e.to_string())?;
    let mut slowest = (0.0f64, String::new());
    for cfg in load_dir(Path::new(configs), Path::new(".")).map_err(|e| e.to_string())? {
        let cfg = cfg.map_err(|e| e.to_string())?;
        let Some(lift) = &cfg.lift else { continue };
        if only.is_some_and(|o| *o != cfg.name) {
            continue;
        }
        for (size, sizes) in &cfg.sizes {
            for level in ["none", "barrier", "barrier+cf", "all"] {
                for (i, k) in lift.kernels.iter().enumerate() {
                    let (_, program) = load_program(&k.program).map_err(|e| e.to_string())?;
                    let opts = kernel_options(k, level, sizes).map_err(|e| e.to_string())?;
                    let mut best = f64::INFINITY;
                    let mut source = String::new();
                    for _ in 0..5 {
                        let t0 = Instant::now();
                        let kernel = compile(&program, &k.def, &opts).map_err(|e| e.to_string())?;
                        best = best.min(t0.elapsed().as_secs_f64() * 1e3);
                        source = kernel.source;
                    }
                    let name = format!("{}-{size}-{level}-{i}-{}", cfg.name, k.def);
                    println!("{name:50} {best:8.3} ms");
                    if best > slowest.0 {
                        slowest = (best, name.clone());
                    }
                    std::fs::write(out.join(format!("{name}.cl")), source).map_err(|e| e.to_string())?;
                }
            }
        }
    }
    println!("slowest: {} {:.3} ms", slowest.1, slowest.0);
    Ok(())
}
