//! Where a benchmark's expected output comes from: a Rust gold function, the
//! interpreter running the Lift program, or the validated reference output.

use super::config::{Config, Gold};
use super::data::{Arrays, HostArray, Sizes};
use super::gold;
use super::inputs::{make_host_arrays, InputError};
use super::run_error::RunError;
use super::variant::load_program_for_row;
use crate::interp::{self, InterpError};
use crate::ir::Value;
use crate::validate::ReferenceError;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Why a benchmark has no expected output at a size (its rows say
/// `no gold result: ...`), or its config cannot be the search's oracle.
#[derive(Debug, thiserror::Error)]
pub enum ExpectedError {
    #[error(
        "--config {0}: its gold is not a Rust function (`gold: rust:NAME`); \
         without --config the search validates against the interpreter"
    )]
    NotRust(String),
    #[error("{benchmark}: inputs: {source}")]
    Inputs { benchmark: String, source: Box<InputError> },
    #[error("no Rust gold function `{0}` (src/harness/gold)")]
    NoGold(String),
    #[error("gold `{name}`: {source}")]
    Gold { name: String, source: Box<gold::GoldError> },
    #[error("gold `{name}` returned no array `{output}`")]
    NoOutput { name: String, output: String },
    #[error("the interpreter gold needs a `lift:` section")]
    NoLift,
    #[error("no Lift kernel")]
    NoKernel,
    /// The program did not load (rendered for a row, without source text).
    #[error(transparent)]
    Load(#[from] RunError),
    #[error("{}: no `def {def}`", path.display())]
    NoDef { path: PathBuf, def: String },
    #[error("no input for parameter `{param}` of `{def}`")]
    NoInput { param: String, def: String },
    #[error("parameter `{param}` of `{def}` has no type")]
    Untyped { param: String, def: String },
    #[error("input `{input}`: {source}")]
    Value { input: String, source: InterpError },
    #[error("interpreter: {0}")]
    Interpreter(InterpError),
}

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
    pub fn new(cfg: Config) -> Result<ConfigReference, ExpectedError> {
        match &cfg.validation.gold {
            Gold::Rust(gold) => Ok(ConfigReference { gold: gold.clone(), cfg }),
            Gold::Interpreter | Gold::Reference => Err(ExpectedError::NotRust(cfg.name)),
        }
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }
}

impl crate::validate::Reference for ConfigReference {
    fn inputs(&self, sizes: &Sizes) -> Result<Arrays, ReferenceError> {
        let made = make_host_arrays(&self.cfg, sizes).map(|(inputs, _)| inputs);
        Ok(made.map_err(|source| ExpectedError::Inputs {
            benchmark: self.cfg.name.clone(),
            source: Box::new(source),
        })?)
    }

    fn expected(
        &self,
        inputs: &Arrays,
        sizes: &Sizes,
    ) -> Result<(HostArray, Option<HostArray>), ReferenceError> {
        let output = self.cfg.explored.as_ref().map_or("", |e| e.output.as_str());
        Ok(rust_gold_scaled(&self.gold, inputs, sizes, output)?)
    }

    fn tolerances(&self) -> (f64, f64) {
        (self.cfg.validation.rtol, self.cfg.validation.atol)
    }
}

/// Runs Rust gold `name` and picks the array named `output` (or the only one).
pub fn rust_gold(
    name: &str,
    inputs: &Arrays,
    sizes: &Sizes,
    output: &str,
) -> Result<HostArray, ExpectedError> {
    rust_gold_scaled(name, inputs, sizes, output).map(|(g, _)| g)
}

/// [`rust_gold`] and the per-element error scale the gold function gives
/// for `output` (`<output>.scale`, see `validate::compare_scaled`), if any.
pub fn rust_gold_scaled(
    name: &str,
    inputs: &Arrays,
    sizes: &Sizes,
    output: &str,
) -> Result<(HostArray, Option<HostArray>), ExpectedError> {
    let mut result = gold::gold(name, inputs, sizes)
        .ok_or_else(|| ExpectedError::NoGold(name.into()))?
        .map_err(|source| ExpectedError::Gold { name: name.into(), source: Box::new(source) })?;
    let scale = result.remove(&format!("{output}.scale"));
    let values = pick(result, output)
        .ok_or_else(|| ExpectedError::NoOutput { name: name.into(), output: output.into() })?;
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
pub fn interpreter_gold(cfg: &Config, inputs: &Arrays, sizes: &Sizes) -> Result<HostArray, ExpectedError> {
    let lift = cfg.lift.as_ref().ok_or(ExpectedError::NoLift)?;
    let first = lift.first_kernel().ok_or(ExpectedError::NoKernel)?;
    let (path, def_name) = match &lift.high_level {
        Some((p, d)) => (p.clone(), d.clone()),
        None => (first.program.clone(), first.def.clone()),
    };
    let (_, program) = load_program_for_row(&path)?;
    let def = program
        .def(&def_name)
        .ok_or_else(|| ExpectedError::NoDef { path: path.clone(), def: def_name.clone() })?;
    let mut args: BTreeMap<String, Value> = BTreeMap::new();
    for p in &def.params {
        // A def parameter takes the input the first Lift kernel binds it
        // to, else the input of the same name.
        let src = first.args.get(&p.name).unwrap_or(&p.name);
        let host = inputs
            .get(src)
            .ok_or_else(|| ExpectedError::NoInput { param: p.name.clone(), def: def_name.clone() })?;
        let ty =
            p.ty.as_ref()
                .ok_or_else(|| ExpectedError::Untyped { param: p.name.clone(), def: def_name.clone() })?;
        let v = interp::value_from_flat(ty, host, sizes)
            .map_err(|source| ExpectedError::Value { input: src.clone(), source })?;
        args.insert(p.name.clone(), v);
    }
    let v = interp::eval_def(&program, &def_name, &args, sizes).map_err(ExpectedError::Interpreter)?;
    Ok(interp::value_to_flat(&v))
}
