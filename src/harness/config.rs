//! Benchmark configs (`configs/*.yaml`, schema in `docs/CONFIG.md`): loading,
//! strict key checking, and parsing of every size expression up front so a
//! bad config is reported before anything runs.

pub use super::arrays::{ArraySpec, ElemType, Init};
use super::variant_name::Level;
use crate::arith::{parse_arith, ArithExpr};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use super::blas_spec::{BlasCall, BlasScalar, BlasSpec, BlasSpec as ClBlastSpec};
pub use super::config_problem::ConfigProblem;
use super::config_problem::{ConfigProblem as P, SpecError, INPUT_OR_BUFFER};

/// A config problem, naming the file and the key. Clone: `lift run` gives
/// a broken config's error again when its benchmark is asked for.
#[derive(Clone, Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{file}: cannot read: {source}")]
    Read { file: String, source: Arc<std::io::Error> },
    #[error("{file}: {source}")]
    Syntax { file: String, source: Arc<serde_yaml::Error> },
    /// The problem is boxed: some carry a parse error or a load error,
    /// and every config result would otherwise be that large.
    #[error("{file}: key `{key}`: {problem}")]
    Key { file: String, key: String, problem: Box<ConfigProblem> },
    /// Not UTF-8 text (the message has the position).
    #[error("{0}")]
    Text(crate::ir::ReadError),
    /// A key whose line was found (names and paths of issue 23).
    #[error("{file}:{line}: key `{key}`: {problem}")]
    At { file: String, line: usize, key: String, problem: Box<ConfigProblem> },
}

pub use super::confine::Trust;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRandom {
    min: f64,
    max: f64,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEmpty {}

/// `init:` as written: a map with exactly one of these keys.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawInit {
    #[serde(default)]
    random: Option<RawRandom>,
    #[serde(default, rename = "const")]
    constant: Option<f64>,
    #[serde(default)]
    iota: Option<RawEmpty>,
    #[serde(default)]
    generator: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawArray {
    name: String,
    #[serde(rename = "type")]
    ty: ElemType,
    shape: Vec<String>,
    #[serde(default)]
    init: Option<RawInit>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRefKernel {
    name: String,
    args: Vec<String>,
    global: Vec<String>,
    #[serde(default)]
    local: Option<Vec<String>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReference {
    sources: Vec<String>,
    #[serde(default)]
    build_options: String,
    kernels: Vec<RawRefKernel>,
    output: String,
    #[serde(default)]
    params: BTreeMap<String, i64>,
    #[serde(default)]
    per_device: Vec<RawPerDevice>,
}

/// Tuning parameters of the reference for devices whose name contains `device`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPerDevice {
    device: String,
    params: BTreeMap<String, i64>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLiftKernel {
    program: String,
    def: String,
    #[serde(default)]
    args: BTreeMap<String, String>,
    output: String,
    #[serde(default)]
    global: Option<Vec<String>>,
    #[serde(default)]
    local: Option<Vec<String>>,
    #[serde(default)]
    static_sizes: bool,
    /// A derivation (docs/REWRITE.md) that turns `def` into the kernel.
    #[serde(default)]
    derivation: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProgramRef {
    program: String,
    def: String,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLift {
    #[serde(default)]
    kernels: Vec<RawLiftKernel>,
    output: String,
    #[serde(default)]
    high_level: Option<RawProgramRef>,
    /// Named variants (`lift-naive`, `lift-tiled`, ...), each compiled at level `all`.
    #[serde(default)]
    variants: Vec<RawNamedVariant>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNamedVariant {
    name: String,
    kernels: Vec<RawLiftKernel>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawValidation {
    gold: String,
    #[serde(default)]
    max_interp_size: Option<String>,
    rtol: f64,
    atol: f64,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMetrics {
    flops: String,
    bytes: String,
    /// Output elements updated per run, for GElements/s.
    #[serde(default)]
    elements: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    name: String,
    #[serde(default)]
    suite: Option<String>,
    #[serde(default)]
    description: String,
    #[serde(default)]
    origin: String,
    sizes: serde_yaml::Mapping,
    inputs: Vec<RawArray>,
    #[serde(default)]
    seed: u64,
    #[serde(default)]
    buffers: Vec<RawArray>,
    reference: Option<RawReference>,
    lift: Option<RawLift>,
    #[serde(default)]
    clblast: Option<super::blas_spec::RawBlas>,
    #[serde(default)]
    cublas: Option<super::blas_spec::RawBlas>,
    #[serde(default)]
    explored: Option<super::explored_spec::RawExplored>,
    #[serde(default)]
    halide: Option<super::halide_spec::RawHalide>,
    #[serde(default)]
    variants: Option<Vec<String>>,
    validation: RawValidation,
    #[serde(default)]
    metrics: Option<RawMetrics>,
}

/// A reference kernel argument.
#[derive(Clone, Debug)]
pub enum RefArg {
    /// An input or buffer (scalar inputs are passed by value).
    Array(String),
    Int(i64),
    Float(f64),
    /// An integer expression of the sizes.
    Expr(ArithExpr),
}

#[derive(Clone, Debug)]
pub struct RefKernel {
    pub name: String,
    pub args: Vec<RefArg>,
    pub global: Vec<ArithExpr>,
    pub local: Option<Vec<ArithExpr>>,
}

#[derive(Clone, Debug)]
pub struct Reference {
    pub sources: Vec<PathBuf>,
    /// With `{expr}` placeholders of the sizes (`buildopts::expand`).
    pub build_options: String,
    pub kernels: Vec<RefKernel>,
    pub output: String,
    /// Tuning parameters (`-D` definitions, usable in the expressions).
    pub params: BTreeMap<String, i64>,
    /// Overrides of `params` for devices whose name contains the key.
    pub per_device: Vec<(String, BTreeMap<String, i64>)>,
}

impl Reference {
    /// The tuning parameters for the named device.
    pub fn params_for(&self, device: &str) -> BTreeMap<String, i64> {
        super::buildopts::params_for(&self.params, &self.per_device, device)
    }
}

#[derive(Clone, Debug)]
pub struct LiftKernel {
    pub program: PathBuf,
    pub def: String,
    pub args: BTreeMap<String, String>,
    pub output: String,
    pub global: Option<Vec<ArithExpr>>,
    pub local: Option<Vec<ArithExpr>>,
    /// Pass the preset's sizes to the compiler as constants.
    pub static_sizes: bool,
    /// Replayed on `def` before compiling (a high-level def plus a derivation).
    pub derivation: Option<PathBuf>,
}

#[derive(Clone, Debug)]
pub struct Lift {
    /// The program built at the four optimisation levels (may be empty
    /// when only named variants are given).
    pub kernels: Vec<LiftKernel>,
    pub output: String,
    pub high_level: Option<(PathBuf, String)>,
    /// Named variants in config order, each compiled at level `all`.
    pub named: Vec<(String, Vec<LiftKernel>)>,
}

impl Lift {
    /// The kernels of a variant: a level's are `kernels`, a named one's its own.
    pub fn kernels_of(&self, variant: &str) -> Option<&[LiftKernel]> {
        if LIFT_LEVELS.contains(&variant) {
            return Some(&self.kernels);
        }
        self.named.iter().find(|(n, _)| n == variant).map(|(_, k)| k.as_slice())
    }

    /// The first kernel of the benchmark (its `args` bind the high-level
    /// program's parameters for the interpreter).
    pub fn first_kernel(&self) -> Option<&LiftKernel> {
        self.kernels.first().or_else(|| self.named.first().and_then(|(_, k)| k.first()))
    }
}

/// Where the expected output comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum Gold {
    Interpreter,
    Reference,
    Rust(String),
}

#[derive(Clone, Debug)]
pub struct Validation {
    pub gold: Gold,
    /// Index into `Config::sizes` of the largest preset the interpreter runs.
    pub max_interp_size: Option<usize>,
    pub rtol: f64,
    pub atol: f64,
}

/// A loaded, checked config.
#[derive(Clone, Debug)]
pub struct Config {
    pub file: PathBuf,
    pub name: String,
    /// The paper this benchmark belongs to (`cgo17` unless the config says).
    pub suite: String,
    pub description: String,
    pub origin: String,
    /// Presets in file order (smallest first).
    pub sizes: Vec<(String, BTreeMap<String, i64>)>,
    pub inputs: Vec<ArraySpec>,
    pub seed: u64,
    pub buffers: Vec<ArraySpec>,
    pub reference: Option<Reference>,
    pub lift: Option<Lift>,
    /// The CLBlast baseline, when the benchmark has one.
    pub clblast: Option<ClBlastSpec>,
    /// The cuBLAS baseline (NVIDIA devices), when the benchmark has one.
    pub cublas: Option<BlasSpec>,
    /// The device's own derived program (`benchmarks/explored/<device>/`).
    pub explored: Option<super::explored_spec::ExploredSpec>,
    /// The automatic peer run as an external executable, when the benchmark has one.
    pub halide: Option<super::halide_spec::HalideSpec>,
    pub variants: Vec<String>,
    pub validation: Validation,
    pub flops: Option<ArithExpr>,
    pub bytes: Option<ArithExpr>,
    pub elements: Option<ArithExpr>,
}

/// The Lift optimisation levels, in chart order.
pub const LIFT_LEVELS: [&str; 4] =
    [Level::None.as_str(), Level::Barrier.as_str(), Level::BarrierCf.as_str(), Level::All.as_str()];

/// The suite of a config without `suite:`.
pub const DEFAULT_SUITE: &str = "cgo17";

/// Whether `v` may name a named Lift variant: `lift-` and a lowercase name.
pub use super::variant_name::is_named as is_named_variant;

impl Config {
    pub fn preset(&self, name: &str) -> Option<(usize, &BTreeMap<String, i64>)> {
        self.sizes.iter().position(|(n, _)| n == name).map(|i| (i, &self.sizes[i].1))
    }
    pub fn array(&self, name: &str) -> Option<&ArraySpec> {
        self.inputs.iter().chain(&self.buffers).find(|a| a.name == name)
    }
}

struct Ctx<'a> {
    file: &'a str,
    /// The config's text, to find the line of a value.
    text: &'a str,
    trust: Trust,
}

impl Ctx<'_> {
    fn err(&self, key: impl Into<String>, problem: ConfigProblem) -> ConfigError {
        ConfigError::Key { file: self.file.to_string(), key: key.into(), problem: Box::new(problem) }
    }
    /// The 1-based line where `value` is written for the key whose last
    /// part is `leaf` (`name`, `program`), else the first line holding it.
    fn line_of(&self, leaf: &str, value: &str) -> Option<usize> {
        let has = |l: &str| !value.is_empty() && l.contains(value);
        let lines = || self.text.lines().enumerate();
        lines()
            .find(|(_, l)| has(l) && l.contains(&format!("{leaf}:")))
            .or_else(|| lines().find(|(_, l)| has(l)))
            .map(|(i, _)| i + 1)
    }
    /// An error at the line of `value` (see `line_of`).
    fn err_at(&self, key: String, value: &str, problem: ConfigProblem) -> ConfigError {
        let leaf = key.rsplit('.').next().unwrap_or(&key);
        let leaf = leaf.split('[').next().unwrap_or(leaf);
        self.err_on(self.line_of(leaf, value), key, problem)
    }
    /// A section parser's problem, at its value's line where it gave one.
    fn spec(&self, e: SpecError) -> ConfigError {
        match e.value {
            Some(value) => self.err_at(e.key, &value, *e.problem),
            None => self.err(e.key, *e.problem),
        }
    }
    /// A name that becomes part of a file name (`confine::check_name`).
    fn name(&self, key: String, name: &str) -> Result<(), ConfigError> {
        super::confine::check_name(name).map_err(|e| self.err_at(key, name, P::Confine(e)))
    }
    /// [`Ctx::err`] at the first line from the one naming array `name`
    /// that contains `word` (1-based), where there is one.
    fn err_near(&self, name: &str, word: &str, key: String, problem: ConfigProblem) -> ConfigError {
        let lines: Vec<&str> = self.text.lines().collect();
        let named =
            |l: &&str| l.contains(&format!("name: {name}")) || l.contains(&format!("name: \"{name}\""));
        let line = lines
            .iter()
            .position(named)
            .and_then(|s| lines[s..].iter().position(|l| l.contains(word)).map(|i| s + i + 1));
        self.err_on(line, key, problem)
    }
    /// An error at `line` where there is one, else at the key alone.
    fn err_on(&self, line: Option<usize>, key: String, problem: ConfigProblem) -> ConfigError {
        match line {
            Some(line) => {
                ConfigError::At { file: self.file.to_string(), line, key, problem: Box::new(problem) }
            }
            None => self.err(key, problem),
        }
    }
    fn expr(&self, key: String, text: &str) -> Result<ArithExpr, ConfigError> {
        parse_arith(text).map_err(|error| self.err(key, P::BadExpression { error }))
    }
    fn exprs(&self, key: &str, texts: &[String]) -> Result<Vec<ArithExpr>, ConfigError> {
        texts.iter().enumerate().map(|(i, t)| self.expr(format!("{key}[{i}]"), t)).collect()
    }
    fn file_exists(&self, root: &Path, key: String, rel: &str) -> Result<PathBuf, ConfigError> {
        super::confine::check_inside(root, rel).map_err(|e| self.err_at(key.clone(), rel, P::Confine(e)))?;
        // Keep paths short in messages when running from the repository root.
        let p = if root == Path::new(".") { PathBuf::from(rel) } else { root.join(rel) };
        if p.is_file() {
            Ok(p)
        } else {
            Err(self.err(key, P::FileNotFound { path: rel.to_string() }))
        }
    }
}

/// Loads every `*.yaml` in `dir`, sorted by file name. Each result is one
/// file's config or its error, so one broken file does not hide the others.
pub fn load_dir(dir: &Path, root: &Path) -> Result<Vec<Result<Config, ConfigError>>, ConfigError> {
    load_dir_trusting(dir, root, Trust::default())
}

/// [`load_dir`] with what the user allows configs beyond the defaults.
pub fn load_dir_trusting(
    dir: &Path,
    root: &Path,
    trust: Trust,
) -> Result<Vec<Result<Config, ConfigError>>, ConfigError> {
    let rd = std::fs::read_dir(dir)
        .map_err(|e| ConfigError::Read { file: dir.display().to_string(), source: e.into() })?;
    let mut files: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    let mut results: Vec<_> = files.iter().map(|f| load_trusting(f, root, trust)).collect();
    refuse_taken_names(&mut results);
    Ok(results)
}

/// Makes a config whose `name` an earlier file (by file name) already has
/// its error, so that `lift run NAME` never picks one of two silently.
fn refuse_taken_names(results: &mut [Result<Config, ConfigError>]) {
    let mut seen: BTreeMap<String, PathBuf> = BTreeMap::new();
    for r in results.iter_mut() {
        let Ok(c) = r else { continue };
        let Some(first) = seen.get(&c.name) else {
            seen.insert(c.name.clone(), c.file.clone());
            continue;
        };
        let (file, key) = (c.file.display().to_string(), "name".to_string());
        let problem = Box::new(P::NameTaken { name: c.name.clone(), first: first.display().to_string() });
        // The top-level `name:` key starts its line.
        let line = std::fs::read_to_string(&c.file)
            .ok()
            .and_then(|t| t.lines().position(|l| l.starts_with("name:")).map(|i| i + 1));
        *r = Err(match line {
            Some(line) => ConfigError::At { file, line, key, problem },
            None => ConfigError::Key { file, key, problem },
        });
    }
}

/// Loads and checks one config; file paths in it are relative to `root`
/// and must stay inside it (`confine`).
pub fn load(path: &Path, root: &Path) -> Result<Config, ConfigError> {
    load_trusting(path, root, Trust::default())
}

/// [`load`] with what the user allows configs beyond the defaults.
pub fn load_trusting(path: &Path, root: &Path, trust: Trust) -> Result<Config, ConfigError> {
    let file = path.display().to_string();
    let text = crate::ir::read_text(path).map_err(|e| match e {
        crate::ir::ReadError::Io { source, .. } => ConfigError::Read { file: file.clone(), source },
        utf8 => ConfigError::Text(utf8),
    })?;
    let raw: RawConfig = serde_yaml::from_str(&text)
        .map_err(|e| ConfigError::Syntax { file: file.clone(), source: e.into() })?;
    let cx = Ctx { file: &file, text: &text, trust };
    cx.name("name".into(), &raw.name)?;
    check(raw, &cx, path, root)
}

/// Generator bounds and constants are finite numbers that the element
/// type holds (a NaN bound made every input NaN and every row `ok`; an
/// int range beyond 32 bits overflowed the generator's span), and a
/// range's min is at most its max.
fn check_init(cx: &Ctx, k: &str, a: &RawArray, init: &Init) -> Result<(), ConfigError> {
    let (lo, hi, what) = if a.ty.is_float() {
        (-(f32::MAX as f64), f32::MAX as f64, "float")
    } else {
        (i32::MIN as f64, i32::MAX as f64, "int")
    };
    let in_range = |v: f64| v.is_finite() && (lo..=hi).contains(&v);
    match *init {
        Init::Random { min, max } => {
            let key = format!("{k}.init.random");
            if let Some(v) = [min, max].into_iter().find(|v| !in_range(*v)) {
                let problem = P::BoundOutOfRange { value: v, ty: what, lo, hi };
                return Err(cx.err_near(&a.name, "random", key, problem));
            }
            if min > max {
                return Err(cx.err(key, P::MinAboveMax));
            }
        }
        Init::Const(c) if !in_range(c) => {
            let problem = P::ConstOutOfRange { value: c, ty: what, lo, hi };
            return Err(cx.err_near(&a.name, "const", format!("{k}.init.const"), problem));
        }
        Init::Const(_) | Init::Iota | Init::Generator(_) => {}
    }
    Ok(())
}

fn parse_arrays(
    cx: &Ctx,
    key: &str,
    raw: &[RawArray],
    default_init: Option<Init>,
) -> Result<Vec<ArraySpec>, ConfigError> {
    let mut out = Vec::new();
    for (i, a) in raw.iter().enumerate() {
        let k = format!("{key}[{i}]");
        // Input names become file names (the Halide peer's `.npy` files).
        cx.name(format!("{k}.name"), &a.name)?;
        let init = match (&a.init, &default_init) {
            (Some(raw), _) => {
                let mut found = Vec::new();
                if let Some(r) = &raw.random {
                    found.push(Init::Random { min: r.min, max: r.max });
                }
                if let Some(c) = raw.constant {
                    found.push(Init::Const(c));
                }
                if raw.iota.is_some() {
                    found.push(Init::Iota);
                }
                if let Some(g) = &raw.generator {
                    found.push(Init::Generator(g.clone()));
                }
                if found.len() != 1 {
                    return Err(cx.err(format!("{k}.init"), P::InitNotOne));
                }
                found.remove(0)
            }
            (None, Some(d)) => d.clone(),
            (None, None) => return Err(cx.err(format!("{k}.init"), P::InitMissing)),
        };
        check_init(cx, &k, a, &init)?;
        out.push(ArraySpec {
            name: a.name.clone(),
            ty: a.ty,
            shape: cx.exprs(&format!("{k}.shape"), &a.shape)?,
            init,
        });
    }
    Ok(out)
}

/// A size preset: its name and the sizes it binds.
type Preset = (String, BTreeMap<String, i64>);

fn check(raw: RawConfig, cx: &Ctx, path: &Path, root: &Path) -> Result<Config, ConfigError> {
    let sizes = check_sizes(&raw, cx)?;
    let inputs = parse_arrays(cx, "inputs", &raw.inputs, None)?;
    let buffers = parse_arrays(cx, "buffers", &raw.buffers, Some(Init::Const(0.0)))?;
    let mut names = std::collections::BTreeSet::new();
    for a in inputs.iter().chain(&buffers) {
        if !names.insert(a.name.clone()) {
            return Err(cx.err("buffers", P::DeclaredTwice { name: a.name.clone() }));
        }
    }
    let is_array = |n: &str| names.contains(n);

    let reference =
        raw.reference.as_ref().map(|r| check_reference(cx, root, r, &sizes, &is_array)).transpose()?;
    let has_explored = raw.explored.is_some();
    let lift = raw.lift.as_ref().map(|l| check_lift(cx, root, l, has_explored, &is_array)).transpose()?;
    let variants = check_variants(cx, raw.variants, lift.as_ref())?;
    let validation = check_validation(cx, &raw.validation, &sizes, reference.is_some())?;
    let (flops, bytes, elements) = match &raw.metrics {
        None => (None, None, None),
        Some(m) => (
            Some(cx.expr("metrics.flops".into(), &m.flops)?),
            Some(cx.expr("metrics.bytes".into(), &m.bytes)?),
            m.elements.as_ref().map(|e| cx.expr("metrics.elements".into(), e)).transpose()?,
        ),
    };
    let halide = match &raw.halide {
        None => None,
        Some(h) => Some(
            super::halide_spec::parse_spec(h, &raw.name, root, cx.trust, &|n| {
                inputs.iter().chain(&buffers).any(|a| a.name == n)
            })
            .map_err(|e| cx.spec(e))?,
        ),
    };
    let suite = check_suite(cx, raw.suite)?;
    let blas = |section: &str, raw: &Option<super::blas_spec::RawBlas>| match raw {
        None => Ok(None),
        Some(c) => {
            super::blas_spec::parse_blas(section, c, &inputs, &buffers).map(Some).map_err(|e| cx.spec(e))
        }
    };
    let clblast = blas("clblast", &raw.clblast)?;
    let cublas = blas("cublas", &raw.cublas)?;
    let explored = raw
        .explored
        .as_ref()
        .map(|e| {
            let settled = Settled { name: &raw.name, sizes: &sizes, validation: &validation };
            check_explored(cx, root, e, &settled, &is_array)
        })
        .transpose()?;
    let cfg = Config {
        file: path.to_path_buf(),
        name: raw.name,
        suite,
        description: raw.description,
        origin: raw.origin,
        sizes,
        inputs,
        seed: raw.seed,
        buffers,
        reference,
        lift,
        clblast,
        cublas,
        explored,
        halide,
        variants,
        validation,
        flops,
        bytes,
        elements,
    };
    check_sizes_bound(&cfg, cx)?;
    Ok(cfg)
}

/// The size presets, in file order; each binds sizes of at least 1.
fn check_sizes(raw: &RawConfig, cx: &Ctx) -> Result<Vec<Preset>, ConfigError> {
    let mut sizes = Vec::new();
    for (k, v) in &raw.sizes {
        let name = k.as_str().ok_or_else(|| cx.err("sizes", P::PresetNameNotString))?.to_string();
        let binds: BTreeMap<String, i64> = serde_yaml::from_value(v.clone())
            .map_err(|e| cx.err(format!("sizes.{name}"), P::NotSizeMap { error: e.into() }))?;
        if let Some((n, v)) = binds.iter().find(|(_, v)| **v < 1) {
            return Err(cx.err(format!("sizes.{name}.{n}"), P::SizeBelowOne { value: *v }));
        }
        sizes.push((name, binds));
    }
    if sizes.is_empty() {
        return Err(cx.err("sizes", P::Needed { what: "size preset" }));
    }
    Ok(sizes)
}

/// `reference:`: its sources exist, its kernels' arguments name arrays,
/// its tuning parameters are no size names.
fn check_reference(
    cx: &Ctx,
    root: &Path,
    r: &RawReference,
    sizes: &[Preset],
    is_array: &dyn Fn(&str) -> bool,
) -> Result<Reference, ConfigError> {
    let sources = r
        .sources
        .iter()
        .enumerate()
        .map(|(i, s)| cx.file_exists(root, format!("reference.sources[{i}]"), s))
        .collect::<Result<Vec<_>, _>>()?;
    let mut kernels = Vec::new();
    for (i, k) in r.kernels.iter().enumerate() {
        let key = format!("reference.kernels[{i}]");
        let mut args = Vec::new();
        for (j, a) in k.args.iter().enumerate() {
            args.push(parse_ref_arg(cx, &format!("{key}.args[{j}]"), a, &is_array)?);
        }
        let global = cx.exprs(&format!("{key}.global"), &k.global)?;
        let local = k.local.as_ref().map(|l| cx.exprs(&format!("{key}.local"), l)).transpose()?;
        check_ndrange(cx, &key, &global, local.as_deref())?;
        kernels.push(RefKernel { name: k.name.clone(), args, global, local });
    }
    if kernels.is_empty() {
        return Err(cx.err("reference.kernels", P::Needed { what: "kernel" }));
    }
    if !is_array(&r.output) {
        return Err(cx.err("reference.output", P::Not { found: r.output.clone(), what: INPUT_OR_BUFFER }));
    }
    super::buildopts::placeholders(&r.build_options)
        .map_err(|e| cx.err("reference.build_options", P::BuildOptions(e)))?;
    let per_device: Vec<_> = r.per_device.iter().map(|p| (p.device.clone(), p.params.clone())).collect();
    let size_names: Vec<&String> = sizes.iter().flat_map(|(_, b)| b.keys()).collect();
    for (i, set) in std::iter::once(&r.params).chain(per_device.iter().map(|(_, p)| p)).enumerate() {
        if let Some(k) = set.keys().find(|k| size_names.contains(k)) {
            let key =
                if i == 0 { "reference.params".into() } else { format!("reference.per_device[{}]", i - 1) };
            return Err(cx.err(key, P::SizeNameAsParam { name: k.clone() }));
        }
    }
    Ok(Reference {
        sources,
        build_options: r.build_options.clone(),
        kernels,
        output: r.output.clone(),
        params: r.params.clone(),
        per_device,
    })
}

/// `lift:`: its kernels and named variants (`lift-<name>`, each once).
/// `has_explored`: a benchmark written only at high level needs no kernel.
fn check_lift(
    cx: &Ctx,
    root: &Path,
    l: &RawLift,
    has_explored: bool,
    is_array: &dyn Fn(&str) -> bool,
) -> Result<Lift, ConfigError> {
    let kernels = parse_lift_kernels(cx, root, "lift.kernels", &l.kernels, &is_array)?;
    let mut named: Vec<(String, Vec<LiftKernel>)> = Vec::new();
    for (i, v) in l.variants.iter().enumerate() {
        let key = format!("lift.variants[{i}]");
        if !is_named_variant(&v.name) {
            let what = "`lift-` and a lowercase name (lift-naive, lift-tiled)";
            return Err(cx.err(format!("{key}.name"), P::Expected { found: v.name.clone(), what }));
        }
        if named.iter().any(|(n, _)| *n == v.name) {
            return Err(cx.err(format!("{key}.name"), P::DeclaredTwice { name: v.name.clone() }));
        }
        let ks = parse_lift_kernels(cx, root, &format!("{key}.kernels"), &v.kernels, &is_array)?;
        if ks.is_empty() {
            return Err(cx.err(format!("{key}.kernels"), P::Needed { what: "kernel" }));
        }
        named.push((v.name.clone(), ks));
    }
    // A benchmark written only at high level (ICFP 2015) runs its
    // device's derived program (`explored:`) instead.
    if kernels.is_empty() && named.is_empty() && !has_explored {
        let what = "kernel (or a named variant, or an `explored:` section)";
        return Err(cx.err("lift.kernels", P::Needed { what }));
    }
    if !is_array(&l.output) {
        return Err(cx.err("lift.output", P::Not { found: l.output.clone(), what: INPUT_OR_BUFFER }));
    }
    let high_level = match &l.high_level {
        None => None,
        Some(h) => Some((cx.file_exists(root, "lift.high_level.program".into(), &h.program)?, h.def.clone())),
    };
    Ok(Lift { kernels, output: l.output.clone(), high_level, named })
}

/// The Lift variants to run: the config's `variants:` (each a level of
/// `lift.kernels` or a named variant), by default every level and named variant.
fn check_variants(
    cx: &Ctx,
    raw: Option<Vec<String>>,
    lift: Option<&Lift>,
) -> Result<Vec<String>, ConfigError> {
    // Levels build `lift.kernels`; named variants their own kernels.
    let has_levels = lift.is_some_and(|l| !l.kernels.is_empty());
    let named: Vec<String> =
        lift.map(|l| l.named.iter().map(|(n, _)| n.clone()).collect()).unwrap_or_default();
    Ok(match raw {
        None if has_levels => LIFT_LEVELS.iter().map(|s| s.to_string()).chain(named).collect(),
        None => named,
        Some(vs) => {
            for (i, v) in vs.iter().enumerate() {
                let level = LIFT_LEVELS.contains(&v.as_str());
                if !(named.contains(v) || level && has_levels) {
                    let allowed = LIFT_LEVELS
                        .iter()
                        .filter(|_| has_levels)
                        .map(|s| s.to_string())
                        .chain(named.iter().cloned())
                        .collect();
                    return Err(cx.err(format!("variants[{i}]"), P::NotOneOf { found: v.clone(), allowed }));
                }
            }
            vs
        }
    })
}

/// `validation:`: where the gold comes from and the tolerances.
fn check_validation(
    cx: &Ctx,
    v: &RawValidation,
    sizes: &[Preset],
    has_reference: bool,
) -> Result<Validation, ConfigError> {
    let gold = match v.gold.as_str() {
        "interpreter" => Gold::Interpreter,
        "reference" => Gold::Reference,
        g => match g.strip_prefix("rust:") {
            Some(n) if !n.is_empty() => Gold::Rust(n.to_string()),
            _ => {
                let what = "interpreter, reference or rust:<name>";
                return Err(cx.err("validation.gold", P::Not { found: g.to_string(), what }));
            }
        },
    };
    if gold == Gold::Reference && !has_reference {
        return Err(cx.err("validation.gold", P::GoldWithoutReference));
    }
    let max_interp_size = match &v.max_interp_size {
        None => None,
        Some(s) => Some(sizes.iter().position(|(n, _)| n == s).ok_or_else(|| {
            cx.err("validation.max_interp_size", P::Not { found: s.clone(), what: "a preset of `sizes`" })
        })?),
    };
    if !(v.rtol >= 0.0 && v.atol >= 0.0 && v.rtol.is_finite() && v.atol.is_finite()) {
        return Err(cx.err("validation", P::BadTolerance));
    }
    Ok(Validation { gold, max_interp_size, rtol: v.rtol, atol: v.atol })
}

/// `suite:`, by default CGO 2017's.
fn check_suite(cx: &Ctx, raw: Option<String>) -> Result<String, ConfigError> {
    match raw {
        None => Ok(DEFAULT_SUITE.to_string()),
        Some(s) if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric()) => Ok(s),
        Some(s) => {
            let what = "a name of letters and digits (cgo17, cgo18)";
            Err(cx.err("suite", P::Expected { found: s, what }))
        }
    }
}

/// What the rest of the config settled before `explored:` is checked
/// against it.
struct Settled<'a> {
    name: &'a str,
    sizes: &'a [Preset],
    validation: &'a Validation,
}

/// `explored:` and its `explore:` block; its programs stay inside `root`.
fn check_explored(
    cx: &Ctx,
    root: &Path,
    e: &super::explored_spec::RawExplored,
    settled: &Settled,
    is_array: &dyn Fn(&str) -> bool,
) -> Result<super::explored_spec::ExploredSpec, ConfigError> {
    let Settled { name, sizes, validation } = *settled;
    for (key, rel) in super::explored_spec::program_paths(e) {
        super::confine::check_inside(root, &rel).map_err(|e| cx.err_at(key, &rel, P::Confine(e)))?;
    }
    let mut spec = super::explored_spec::parse_spec(e, name, root, &is_array).map_err(|e| cx.spec(e))?;
    if let Some(s) = &e.explore {
        let presets: Vec<&str> = sizes.iter().map(|(n, _)| n.as_str()).collect();
        let rust_gold = matches!(validation.gold, Gold::Rust(_));
        spec.search =
            Some(super::search_spec::parse_spec(s, root, &presets, rust_gold).map_err(|e| cx.spec(e))?);
    }
    Ok(spec)
}

/// The `kernels:` list of the Lift program or of a named variant.
fn parse_lift_kernels(
    cx: &Ctx,
    root: &Path,
    base: &str,
    raw: &[RawLiftKernel],
    is_array: &dyn Fn(&str) -> bool,
) -> Result<Vec<LiftKernel>, ConfigError> {
    let mut kernels = Vec::new();
    for (i, k) in raw.iter().enumerate() {
        let key = format!("{base}[{i}]");
        let program = cx.file_exists(root, format!("{key}.program"), &k.program)?;
        for (p, a) in &k.args {
            if !is_array(a) {
                return Err(
                    cx.err(format!("{key}.args.{p}"), P::Not { found: a.clone(), what: INPUT_OR_BUFFER })
                );
            }
        }
        if !is_array(&k.output) {
            return Err(cx.err(format!("{key}.output"), P::Not { found: k.output.clone(), what: "a buffer" }));
        }
        let global = k.global.as_ref().map(|g| cx.exprs(&format!("{key}.global"), g)).transpose()?;
        let local = k.local.as_ref().map(|g| cx.exprs(&format!("{key}.local"), g)).transpose()?;
        if let Some(g) = &global {
            check_ndrange(cx, &key, g, local.as_deref())?;
        }
        kernels.push(LiftKernel {
            program,
            def: k.def.clone(),
            args: k.args.clone(),
            output: k.output.clone(),
            global,
            local,
            static_sizes: k.static_sizes,
            derivation: k
                .derivation
                .as_ref()
                .map(|d| cx.file_exists(root, format!("{key}.derivation"), d))
                .transpose()?,
        });
    }
    Ok(kernels)
}

fn parse_ref_arg(
    cx: &Ctx,
    key: &str,
    a: &str,
    is_array: &dyn Fn(&str) -> bool,
) -> Result<RefArg, ConfigError> {
    let a = a.trim();
    if is_array(a) {
        return Ok(RefArg::Array(a.to_string()));
    }
    if let Some(v) = a.strip_prefix("int:") {
        return v
            .trim()
            .parse()
            .map(RefArg::Int)
            .map_err(|_| cx.err(key, P::Expected { found: a.to_string(), what: "int:<integer>" }));
    }
    if let Some(v) = a.strip_prefix("float:") {
        return v
            .trim()
            .parse()
            .map(RefArg::Float)
            .map_err(|_| cx.err(key, P::Expected { found: a.to_string(), what: "float:<number>" }));
    }
    parse_arith(a)
        .map(RefArg::Expr)
        .map_err(|error| cx.err(key, P::NotRefArg { found: a.to_string(), error }))
}

fn check_ndrange(
    cx: &Ctx,
    key: &str,
    global: &[ArithExpr],
    local: Option<&[ArithExpr]>,
) -> Result<(), ConfigError> {
    if global.is_empty() || global.len() > 3 {
        return Err(cx.err(format!("{key}.global"), P::GlobalArity));
    }
    if local.is_some_and(|l| l.len() != global.len()) {
        return Err(cx.err(format!("{key}.local"), P::LocalArity));
    }
    Ok(())
}

/// Every expression must evaluate under every preset: catches a size name
/// that a preset forgets to bind, before any run.
fn check_sizes_bound(cfg: &Config, cx: &Ctx) -> Result<(), ConfigError> {
    let mut exprs: Vec<(String, &ArithExpr)> = Vec::new();
    for (i, a) in cfg.inputs.iter().enumerate() {
        exprs.extend(a.shape.iter().map(|e| (format!("inputs[{i}].shape"), e)));
    }
    for (i, a) in cfg.buffers.iter().enumerate() {
        exprs.extend(a.shape.iter().map(|e| (format!("buffers[{i}].shape"), e)));
    }
    // The reference's expressions may also use its tuning parameters.
    let mut ref_exprs: Vec<(String, ArithExpr)> = Vec::new();
    if let Some(r) = &cfg.reference {
        for (i, k) in r.kernels.iter().enumerate() {
            let key = format!("reference.kernels[{i}]");
            ref_exprs.extend(k.global.iter().map(|e| (format!("{key}.global"), e.clone())));
            ref_exprs.extend(k.local.iter().flatten().map(|e| (format!("{key}.local"), e.clone())));
            for (j, a) in k.args.iter().enumerate() {
                if let RefArg::Expr(e) = a {
                    ref_exprs.push((format!("{key}.args[{j}]"), e.clone()));
                }
            }
        }
        let opts = super::buildopts::placeholders(&r.build_options).unwrap_or_default();
        ref_exprs.extend(opts.into_iter().map(|e| ("reference.build_options".to_string(), e)));
        let sets = std::iter::once(r.params.clone())
            .chain(r.per_device.iter().map(|(d, _)| r.params_for(d)))
            .collect::<Vec<_>>();
        for (preset, binds) in &cfg.sizes {
            for params in &sets {
                for (key, e) in &ref_exprs {
                    if let Err(error) = e.eval_with(&|n| binds.get(n).or(params.get(n)).copied()) {
                        return Err(cx.err(key.clone(), unevaluable(e, preset, error)));
                    }
                }
            }
        }
    }
    if let Some(l) = &cfg.lift {
        let lists = std::iter::once(("lift.kernels".to_string(), &l.kernels)).chain(
            l.named.iter().enumerate().map(|(i, (_, ks))| (format!("lift.variants[{i}].kernels"), ks)),
        );
        for (base, ks) in lists {
            for (i, k) in ks.iter().enumerate() {
                let key = format!("{base}[{i}]");
                exprs.extend(k.global.iter().flatten().map(|e| (format!("{key}.global"), e)));
                exprs.extend(k.local.iter().flatten().map(|e| (format!("{key}.local"), e)));
            }
        }
    }
    exprs.extend(cfg.elements.iter().map(|e| ("metrics.elements".to_string(), e)));
    exprs.extend(cfg.flops.iter().map(|e| ("metrics.flops".to_string(), e)));
    exprs.extend(cfg.bytes.iter().map(|e| ("metrics.bytes".to_string(), e)));
    for (preset, binds) in &cfg.sizes {
        for (key, e) in &exprs {
            if let Err(error) = e.eval_with(&|n| binds.get(n).copied()) {
                return Err(cx.err(key.clone(), unevaluable(e, preset, error)));
            }
        }
    }
    Ok(())
}

fn unevaluable(e: &ArithExpr, preset: &str, error: crate::arith::EvalError) -> ConfigProblem {
    P::Unevaluable { expr: e.clone(), preset: preset.to_string(), error }
}

/// Evaluates an expression with a preset's sizes.
pub fn eval(e: &ArithExpr, sizes: &BTreeMap<String, i64>) -> Result<i64, crate::arith::EvalError> {
    e.eval_with(&|n| sizes.get(n).copied())
}
