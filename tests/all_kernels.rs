//! Every kernel the harness compiles, compared with committed snapshots
//! (`tests/snapshots/all_kernels__<config>.snap`): for each config of
//! `configs/`, its Lift kernels at every size preset and optimisation level,
//! its named variants (derivations replayed) at every preset, its high-level
//! def, and every committed explored program (`benchmarks/explored/<device>/`)
//! at every preset. A compiler change that alters any generated kernel fails
//! here; `INSTA_UPDATE=always cargo test --release --test all_kernels`
//! rewrites the snapshots for review with `git diff`.
//!
//! Each snapshot lists one entry per kernel (which program, def and
//! derivation), and under it each distinct text with the `size/level`
//! pairs that produce it, so a kernel the sizes do not change is written once.

use lift::compile::{compile, CompileOptions, Kernel};
use lift::harness::config::{eval, load_dir, Config, LiftKernel, LIFT_LEVELS};
use lift::harness::data::Sizes;
use lift::harness::explored::{header_local, ExploredKernel, EXPLORED_DIR};
use lift::harness::variant::{kernel_options, level_options};
use lift::ir::Program;
use lift::parse::load_program;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A kernel text and the `size/level` pairs that give it.
type Text = (String, Vec<String>);

/// The kernels of one config: entry label -> distinct texts in order of
/// first appearance.
#[derive(Default)]
struct Snapshot {
    entries: Vec<(String, Vec<Text>)>,
}

impl Snapshot {
    fn add(&mut self, entry: &str, at: String, text: String) {
        let i = match self.entries.iter().position(|(e, _)| e == entry) {
            Some(i) => i,
            None => {
                self.entries.push((entry.to_string(), Vec::new()));
                self.entries.len() - 1
            }
        };
        let texts = &mut self.entries[i].1;
        match texts.iter_mut().find(|(t, _)| *t == text) {
            Some((_, ats)) => ats.push(at),
            None => texts.push((text, vec![at])),
        }
    }

    fn render(&self) -> String {
        let mut out = String::new();
        for (entry, texts) in &self.entries {
            for (text, ats) in texts {
                out.push_str(&format!("===== {entry}\n===== at {}\n{text}\n", ats.join(" ")));
            }
        }
        out
    }
}

/// Parsed programs and replayed derivations, each loaded once.
#[derive(Default)]
struct Programs {
    cache: BTreeMap<(PathBuf, String, Option<PathBuf>), Program>,
}

impl Programs {
    fn get(&mut self, path: &Path, def: &str, derivation: Option<&Path>) -> &Program {
        let key = (path.to_path_buf(), def.to_string(), derivation.map(Path::to_path_buf));
        self.cache.entry(key).or_insert_with(|| {
            let (_, program) = load_program(path).unwrap_or_else(|e| panic!("{e}"));
            match derivation {
                Some(d) => lift::rewrite::derive_file(&program, def, d).unwrap_or_else(|e| panic!("{e}")),
                None => program,
            }
        })
    }
}

/// The kernel text, or the compile error (a high-level def has no kernel).
fn kernel_text(program: &Program, def: &str, opts: &CompileOptions) -> String {
    match compile(program, def, opts) {
        Ok(k) => k.source,
        Err(e) => format!("no kernel: {e}\n"),
    }
}

fn lift_kernels(snap: &mut Snapshot, progs: &mut Programs, cfg: &Config) {
    let Some(lift) = &cfg.lift else { return };
    let levels = LIFT_LEVELS.iter().map(|l| (l.to_string(), &lift.kernels, *l));
    let named = lift.named.iter().map(|(n, ks)| (n.clone(), ks, "all"));
    for (variant, kernels, level) in levels.chain(named) {
        for (i, k) in kernels.iter().enumerate() {
            let entry = lift_entry(&variant, i, k);
            let program = progs.get(&k.program, &k.def, k.derivation.as_deref());
            for (size, sizes) in &cfg.sizes {
                let opts = kernel_options(k, level, sizes).unwrap_or_else(|e| panic!("{entry}: {e}"));
                snap.add(&entry, format!("{size}/{variant}"), kernel_text(program, &k.def, &opts));
            }
        }
    }
    if let Some((path, def)) = &lift.high_level {
        let program = progs.get(path, def, None);
        let text = kernel_text(program, def, &level_options("all").expect("level all"));
        snap.add(&format!("high_level {} def {def}", path.display()), "any/all".into(), text);
    }
}

fn lift_entry(variant: &str, i: usize, k: &LiftKernel) -> String {
    // The four levels share one list of kernels: one entry for all of them.
    let section =
        if LIFT_LEVELS.contains(&variant) { "lift.kernels".to_string() } else { variant.to_string() };
    let derivation = k.derivation.as_ref().map(|d| format!(" + {}", d.display())).unwrap_or_default();
    format!("{section}[{i}] {} def {}{derivation}", k.program.display(), k.def)
}

/// The options the harness compiles an explored kernel with (level `all`,
/// the config's launch sizes, static sizes where asked).
fn explored_options(k: &ExploredKernel, sizes: &Sizes) -> CompileOptions {
    let mut opts = level_options("all").expect("level all");
    if k.static_sizes {
        opts.sizes = sizes.clone();
    }
    let dims = |es: &Option<Vec<lift::arith::ArithExpr>>| {
        es.as_ref()
            .map(|es| pad3(&es.iter().map(|e| eval(e, sizes).expect("launch size")).collect::<Vec<_>>()))
    };
    opts.global = dims(&k.global);
    opts.local = dims(&k.local);
    opts
}

fn pad3(v: &[i64]) -> [i64; 3] {
    let mut out = [1; 3];
    out[..v.len()].copy_from_slice(v);
    out
}

/// The tuned local size of a program's header where the harness uses it:
/// no local size from the config or the compiler, and one that divides the
/// compiler's global size at these sizes (trailing 1s dropped).
fn tuned_local(
    header: Option<&Vec<i64>>,
    kernel: &Kernel,
    opts: &CompileOptions,
    sizes: &Sizes,
) -> Option<[i64; 3]> {
    if opts.local.is_some() || kernel.local.is_some() {
        return None;
    }
    let mut global: Vec<i64> = match opts.global {
        Some(g) => g.to_vec(),
        None => kernel.global.iter().map(|e| eval(e, sizes).ok()).collect::<Option<_>>()?,
    };
    while global.len() > 1 && global.last() == Some(&1) {
        global.pop();
    }
    let local: Vec<i64> =
        header?.iter().map(|&x| x.max(1)).chain(std::iter::repeat(1)).take(global.len()).collect();
    global.iter().zip(&local).all(|(g, l)| g % l == 0).then(|| pad3(&local))
}

/// One explored kernel (every alternative def) at every preset.
fn explored_kernel(
    snap: &mut Snapshot,
    progs: &mut Programs,
    cfg: &Config,
    entry: &str,
    path: &Path,
    k: &ExploredKernel,
) {
    let text = k.program.is_none().then(|| std::fs::read_to_string(path).expect("explored program"));
    let header = text.as_deref().and_then(header_local);
    // Compiled for its sizes where `lift explore` timed it so, as the harness does.
    let sized = text.as_deref().is_some_and(lift::explore::replay::header_static_sizes);
    for def in &k.defs {
        let program = progs.get(path, def, None);
        for (size, sizes) in &cfg.sizes {
            let mut opts = explored_options(k, sizes);
            if sized {
                opts.sizes = sizes.clone();
            }
            let mut text = kernel_text(program, def, &opts);
            if let Ok(kernel) = compile(program, def, &opts) {
                if let Some(local) = tuned_local(header.as_ref(), &kernel, &opts, sizes) {
                    opts.local = Some(local);
                    text = kernel_text(program, def, &opts);
                }
            }
            snap.add(&format!("{entry} {} def {def}", path.display()), format!("{size}/all"), text);
        }
    }
}

/// The config's explored kernels for every device with a committed
/// program; returns the programs compiled.
fn explored(snap: &mut Snapshot, progs: &mut Programs, cfg: &Config) -> Vec<PathBuf> {
    let Some(spec) = &cfg.explored else { return Vec::new() };
    let mut seen = Vec::new();
    for slug in spec.committed_slugs() {
        let device_file = spec.program_for(&slug);
        for (i, k) in spec.kernels.iter().enumerate() {
            let path = k.program.clone().unwrap_or_else(|| device_file.clone());
            explored_kernel(snap, progs, cfg, &format!("explored {slug} kernels[{i}]"), &path, k);
        }
        seen.push(device_file);
    }
    seen
}

/// An explored program the harness does not load (`cgo-gemv.lift`,
/// `mm-nvidia.lift`): its config is the file's name without `cgo-`, its
/// def the one `lift explore` was given (`--def` in the header).
fn unloaded_explored(path: &Path) -> (String, ExploredKernel) {
    let text = std::fs::read_to_string(path).expect("explored program");
    let def = text
        .lines()
        .take_while(|l| l.starts_with("//"))
        .find_map(|l| l.split(" --def ").nth(1))
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("{}: no `--def` in the header", path.display()));
    let stem = path.file_stem().expect("file name").to_string_lossy();
    let k = ExploredKernel {
        program: None,
        defs: vec![def.to_string()],
        args: BTreeMap::new(),
        output: String::new(),
        static_sizes: false,
        global: None,
        local: None,
    };
    (stem.strip_prefix("cgo-").unwrap_or(&stem).to_string(), k)
}

fn committed_explored() -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    for device in std::fs::read_dir(EXPLORED_DIR).expect("benchmarks/explored") {
        for f in std::fs::read_dir(device.expect("entry").path()).expect("device folder") {
            let f = f.expect("entry").path();
            if f.extension().is_some_and(|e| e == "lift") {
                out.insert(f);
            }
        }
    }
    out
}

#[test]
fn every_kernel_matches_its_snapshot() {
    let configs: Vec<Config> = load_dir(Path::new("configs"), Path::new("."))
        .expect("configs")
        .into_iter()
        .map(|c| c.unwrap_or_else(|e| panic!("{e}")))
        .collect();
    assert!(configs.len() >= 30, "{} configs", configs.len());
    let mut unloaded = committed_explored();
    let mut snaps: BTreeMap<String, Snapshot> = BTreeMap::new();
    let mut progs = Programs::default();
    for cfg in &configs {
        let snap = snaps.entry(cfg.name.clone()).or_default();
        lift_kernels(snap, &mut progs, cfg);
        for seen in explored(snap, &mut progs, cfg) {
            unloaded.remove(&seen);
        }
    }
    for path in &unloaded {
        let (name, k) = unloaded_explored(path);
        let cfg = configs
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("{}: no config `{name}` for this explored program", path.display()));
        let slug = path.parent().and_then(Path::file_name).expect("device folder").to_string_lossy();
        let snap = snaps.get_mut(&name).expect("config's snapshot");
        explored_kernel(
            snap,
            &mut progs,
            cfg,
            &format!("explored {slug} (not loaded by the harness)"),
            path,
            &k,
        );
    }
    for (name, snap) in &snaps {
        if !snap.entries.is_empty() {
            insta::assert_snapshot!(name.as_str(), snap.render());
        }
    }
}
