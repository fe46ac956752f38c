//! Where a benchmark's expected output comes from: a Rust gold function, the
//! interpreter running the Lift program, or the validated reference output.

use super::config::{Config, Gold};
use super::data::{Arrays, HostArray, Sizes};
use super::gold;
use super::inputs::make_host_arrays;
use super::variant::load_program_for_row;
use crate::interp;
use crate::ir::Value;
use std::collections::BTreeMap;

/// A benchmark config as the search's validation oracle (`lift explore
/// --config`): its input generators, its Rust gold with its error scale,
/// and its tolerances.
#[derive(Debug)]
pub struct ConfigReference {
    cfg: Config,
    gold: String,
}

impl ConfigReference {
    /// The config must have a Rust gold.
    pub fn new(cfg: Config) -> Result<ConfigReference, String> {
        match &cfg.validation.gold {
            Gold::Rust(gold) => Ok(ConfigReference { gold: gold.clone(), cfg }),
            Gold::Interpreter | Gold::Reference => Err(format!(
                "--config {}: its gold is not a Rust function (`gold: rust:NAME`); \
                 without --config the search validates against the interpreter",
                cfg.name
            )),
        }
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }
}

impl crate::validate::Reference for ConfigReference {
    fn inputs(&self, sizes: &Sizes) -> Result<Arrays, String> {
        make_host_arrays(&self.cfg, sizes)
            .map(|(inputs, _)| inputs)
            .map_err(|e| format!("{}: inputs: {e}", self.cfg.name))
    }

    fn expected(&self, inputs: &Arrays, sizes: &Sizes) -> Result<(HostArray, Option<HostArray>), String> {
        let output = self.cfg.explored.as_ref().map_or("", |e| e.output.as_str());
        rust_gold_scaled(&self.gold, inputs, sizes, output)
    }

    fn tolerances(&self) -> (f64, f64) {
        (self.cfg.validation.rtol, self.cfg.validation.atol)
    }
}

/// Runs Rust gold `name` and picks the array named `output` (or the only one).
pub fn rust_gold(name: &str, inputs: &Arrays, sizes: &Sizes, output: &str) -> Result<HostArray, String> {
    rust_gold_scaled(name, inputs, sizes, output).map(|(g, _)| g)
}

/// [`rust_gold`] and the per-element error scale the gold function gives
/// for `output` (`<output>.scale`, see `validate::compare_scaled`), if any.
pub fn rust_gold_scaled(
    name: &str,
    inputs: &Arrays,
    sizes: &Sizes,
    output: &str,
) -> Result<(HostArray, Option<HostArray>), String> {
    let mut result = gold::gold(name, inputs, sizes)
        .ok_or_else(|| format!("no Rust gold function `{name}` (src/harness/gold)"))?
        .map_err(|e| format!("gold `{name}`: {e}"))?;
    let scale = result.remove(&format!("{output}.scale"));
    let values = pick(result, output).ok_or_else(|| format!("gold `{name}` returned no array `{output}`"))?;
    Ok((values, scale))
}

fn pick(mut arrays: Arrays, output: &str) -> Option<HostArray> {
    if let Some(a) = arrays.remove(output) {
        return Some(a);
    }
    if arrays.len() == 1 {
        return arrays.into_values().next();
    }
    None
}

/// Evaluates the benchmark's high-level program (or else its first Lift
/// kernel's program) with the interpreter.
pub fn interpreter_gold(cfg: &Config, inputs: &Arrays, sizes: &Sizes) -> Result<HostArray, String> {
    let lift = cfg.lift.as_ref().ok_or("the interpreter gold needs a `lift:` section")?;
    let first = lift.first_kernel().ok_or("no Lift kernel")?;
    let (path, def_name) = match &lift.high_level {
        Some((p, d)) => (p.clone(), d.clone()),
        None => (first.program.clone(), first.def.clone()),
    };
    let (_, program) = load_program_for_row(&path)?;
    let def = program.def(&def_name).ok_or_else(|| format!("{}: no `def {def_name}`", path.display()))?;
    let mut args: BTreeMap<String, Value> = BTreeMap::new();
    for p in &def.params {
        // A def parameter takes the input the first Lift kernel binds it
        // to, else the input of the same name.
        let src = first.args.get(&p.name).unwrap_or(&p.name);
        let host =
            inputs.get(src).ok_or_else(|| format!("no input for parameter `{}` of `{def_name}`", p.name))?;
        let ty =
            p.ty.as_ref().ok_or_else(|| format!("parameter `{}` of `{def_name}` has no type", p.name))?;
        let v = interp::value_from_flat(ty, host, sizes).map_err(|e| format!("input `{src}`: {e}"))?;
        args.insert(p.name.clone(), v);
    }
    let v = interp::eval_def(&program, &def_name, &args, sizes).map_err(|e| format!("interpreter: {e}"))?;
    Ok(interp::value_to_flat(&v))
}
