//! Benchmark configs (`configs/*.yaml`, schema in `docs/CONFIG.md`): loading,
//! strict key checking, and parsing of every size expression up front so a
//! bad config is reported before anything runs.

use crate::arith::{parse_arith, ArithExpr};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A config problem, naming the file and the key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{file}: cannot read: {msg}")]
    Read { file: String, msg: String },
    #[error("{file}: {msg}")]
    Syntax { file: String, msg: String },
    #[error("{file}: key `{key}`: {msg}")]
    Key { file: String, key: String, msg: String },
}

/// Element types of inputs and buffers; vectors are stored flat.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum ElemType {
    #[serde(rename = "float")]
    Float,
    #[serde(rename = "int")]
    Int,
    #[serde(rename = "float2")]
    Float2,
    #[serde(rename = "float4")]
    Float4,
    #[serde(rename = "int2")]
    Int2,
    #[serde(rename = "int4")]
    Int4,
}

impl ElemType {
    pub fn is_float(self) -> bool {
        matches!(self, ElemType::Float | ElemType::Float2 | ElemType::Float4)
    }
    pub fn components(self) -> usize {
        match self {
            ElemType::Float | ElemType::Int => 1,
            ElemType::Float2 | ElemType::Int2 => 2,
            ElemType::Float4 | ElemType::Int4 => 4,
        }
    }
}

/// How an input is filled.
#[derive(Clone, Debug, PartialEq)]
pub enum Init {
    Random { min: f64, max: f64 },
    Const(f64),
    Iota,
    Generator(String),
}

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
    kernels: Vec<RawLiftKernel>,
    output: String,
    #[serde(default)]
    high_level: Option<RawProgramRef>,
}

/// One CLBlast call as written (`routine: gemv` or `gemm`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBlasCall {
    routine: String,
    #[serde(default)]
    trans_a: bool,
    #[serde(default)]
    trans_b: bool,
    m: String,
    n: String,
    #[serde(default)]
    k: Option<String>,
    alpha: String,
    a: String,
    #[serde(default)]
    x: Option<String>,
    #[serde(default)]
    b: Option<String>,
    beta: String,
    #[serde(default)]
    y: Option<String>,
    #[serde(default)]
    c: Option<String>,
    #[serde(default)]
    init_from: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawClBlast {
    calls: Vec<RawBlasCall>,
    output: String,
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
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    name: String,
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
    clblast: Option<RawClBlast>,
    #[serde(default)]
    variants: Option<Vec<String>>,
    validation: RawValidation,
    #[serde(default)]
    metrics: Option<RawMetrics>,
}

/// An input or buffer with its shape parsed.
#[derive(Clone, Debug)]
pub struct ArraySpec {
    pub name: String,
    pub ty: ElemType,
    pub shape: Vec<ArithExpr>,
    pub init: Init,
}

impl ArraySpec {
    pub fn is_scalar(&self) -> bool {
        self.shape.is_empty()
    }
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
    pub build_options: String,
    pub kernels: Vec<RefKernel>,
    pub output: String,
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
}

#[derive(Clone, Debug)]
pub struct Lift {
    pub kernels: Vec<LiftKernel>,
    pub output: String,
    pub high_level: Option<(PathBuf, String)>,
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
    pub variants: Vec<String>,
    pub validation: Validation,
    pub flops: Option<ArithExpr>,
    pub bytes: Option<ArithExpr>,
}

/// The Lift optimisation levels, in chart order.
pub const LIFT_LEVELS: [&str; 4] = ["none", "barrier", "barrier+cf", "all"];

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
}

impl Ctx<'_> {
    fn err(&self, key: impl Into<String>, msg: impl Into<String>) -> ConfigError {
        ConfigError::Key { file: self.file.to_string(), key: key.into(), msg: msg.into() }
    }
    fn expr(&self, key: String, text: &str) -> Result<ArithExpr, ConfigError> {
        parse_arith(text).map_err(|e| self.err(key, format!("bad expression: {e}")))
    }
    fn exprs(&self, key: &str, texts: &[String]) -> Result<Vec<ArithExpr>, ConfigError> {
        texts.iter().enumerate().map(|(i, t)| self.expr(format!("{key}[{i}]"), t)).collect()
    }
    fn file_exists(&self, root: &Path, key: String, rel: &str) -> Result<PathBuf, ConfigError> {
        // Keep paths short in messages when running from the repository root.
        let p = if root == Path::new(".") { PathBuf::from(rel) } else { root.join(rel) };
        if p.is_file() {
            Ok(p)
        } else {
            Err(self.err(key, format!("file `{rel}` not found (paths are relative to the repository root)")))
        }
    }
}

/// Loads every `*.yaml` in `dir`, sorted by file name. Each result is one
/// file's config or its error, so one broken file does not hide the others.
pub fn load_dir(dir: &Path, root: &Path) -> Result<Vec<Result<Config, ConfigError>>, ConfigError> {
    let rd = std::fs::read_dir(dir)
        .map_err(|e| ConfigError::Read { file: dir.display().to_string(), msg: e.to_string() })?;
    let mut files: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    Ok(files.iter().map(|f| load(f, root)).collect())
}

/// Loads and checks one config; file paths in it are relative to `root`.
pub fn load(path: &Path, root: &Path) -> Result<Config, ConfigError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError::Read { file: file.clone(), msg: e.to_string() })?;
    let raw: RawConfig = serde_yaml::from_str(&text)
        .map_err(|e| ConfigError::Syntax { file: file.clone(), msg: e.to_string() })?;
    let cx = Ctx { file: &file };
    check(raw, &cx, path, root)
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
                    return Err(
                        cx.err(format!("{k}.init"), "expected exactly one of random, const, iota, generator")
                    );
                }
                found.remove(0)
            }
            (None, Some(d)) => d.clone(),
            (None, None) => {
                return Err(cx.err(format!("{k}.init"), "missing: random, const, iota or generator"))
            }
        };
        if let Init::Random { min, max } = init {
            if min > max {
                return Err(cx.err(format!("{k}.init.random"), "min is larger than max"));
            }
        }
        out.push(ArraySpec {
            name: a.name.clone(),
            ty: a.ty,
            shape: cx.exprs(&format!("{k}.shape"), &a.shape)?,
            init,
        });
    }
    Ok(out)
}

fn check(raw: RawConfig, cx: &Ctx, path: &Path, root: &Path) -> Result<Config, ConfigError> {
    let mut sizes = Vec::new();
    for (k, v) in &raw.sizes {
        let name = k.as_str().ok_or_else(|| cx.err("sizes", "preset names must be strings"))?.to_string();
        let binds: BTreeMap<String, i64> = serde_yaml::from_value(v.clone()).map_err(|e| {
            cx.err(format!("sizes.{name}"), format!("expected a map of size names to integers: {e}"))
        })?;
        if let Some((n, v)) = binds.iter().find(|(_, v)| **v < 1) {
            return Err(cx.err(format!("sizes.{name}.{n}"), format!("sizes must be >= 1, got {v}")));
        }
        sizes.push((name, binds));
    }
    if sizes.is_empty() {
        return Err(cx.err("sizes", "at least one size preset is needed"));
    }
    let inputs = parse_arrays(cx, "inputs", &raw.inputs, None)?;
    let buffers = parse_arrays(cx, "buffers", &raw.buffers, Some(Init::Const(0.0)))?;
    let mut names = std::collections::BTreeSet::new();
    for a in inputs.iter().chain(&buffers) {
        if !names.insert(a.name.clone()) {
            return Err(cx.err("buffers", format!("`{}` is declared twice", a.name)));
        }
    }
    let is_array = |n: &str| names.contains(n);

    let reference = match &raw.reference {
        None => None,
        Some(r) => {
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
                return Err(cx.err("reference.kernels", "at least one kernel is needed"));
            }
            if !is_array(&r.output) {
                return Err(cx.err("reference.output", format!("`{}` is not an input or buffer", r.output)));
            }
            Some(Reference {
                sources,
                build_options: r.build_options.clone(),
                kernels,
                output: r.output.clone(),
            })
        }
    };

    let lift = match &raw.lift {
        None => None,
        Some(l) => {
            let mut kernels = Vec::new();
            for (i, k) in l.kernels.iter().enumerate() {
                let key = format!("lift.kernels[{i}]");
                let program = cx.file_exists(root, format!("{key}.program"), &k.program)?;
                for (p, a) in &k.args {
                    if !is_array(a) {
                        return Err(
                            cx.err(format!("{key}.args.{p}"), format!("`{a}` is not an input or buffer"))
                        );
                    }
                }
                if !is_array(&k.output) {
                    return Err(cx.err(format!("{key}.output"), format!("`{}` is not a buffer", k.output)));
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
                });
            }
            if kernels.is_empty() {
                return Err(cx.err("lift.kernels", "at least one kernel is needed"));
            }
            if !is_array(&l.output) {
                return Err(cx.err("lift.output", format!("`{}` is not an input or buffer", l.output)));
            }
            let high_level = match &l.high_level {
                None => None,
                Some(h) => {
                    Some((cx.file_exists(root, "lift.high_level.program".into(), &h.program)?, h.def.clone()))
                }
            };
            Some(Lift { kernels, output: l.output.clone(), high_level })
        }
    };

    let variants = match raw.variants {
        None => LIFT_LEVELS.iter().map(|s| s.to_string()).collect(),
        Some(vs) => {
            for (i, v) in vs.iter().enumerate() {
                if !LIFT_LEVELS.contains(&v.as_str()) {
                    return Err(cx.err(
                        format!("variants[{i}]"),
                        format!("`{v}` is not one of {}", LIFT_LEVELS.join(", ")),
                    ));
                }
            }
            vs
        }
    };

    let v = &raw.validation;
    let gold = match v.gold.as_str() {
        "interpreter" => Gold::Interpreter,
        "reference" => Gold::Reference,
        g => match g.strip_prefix("rust:") {
            Some(n) if !n.is_empty() => Gold::Rust(n.to_string()),
            _ => {
                return Err(
                    cx.err("validation.gold", format!("`{g}` is not interpreter, reference or rust:<name>"))
                )
            }
        },
    };
    if gold == Gold::Reference && reference.is_none() {
        return Err(cx.err("validation.gold", "`reference` needs a `reference:` section"));
    }
    let max_interp_size = match &v.max_interp_size {
        None => None,
        Some(s) => Some(sizes.iter().position(|(n, _)| n == s).ok_or_else(|| {
            cx.err("validation.max_interp_size", format!("`{s}` is not a preset of `sizes`"))
        })?),
    };
    if !(v.rtol >= 0.0 && v.atol >= 0.0 && v.rtol.is_finite() && v.atol.is_finite()) {
        return Err(cx.err("validation", "rtol and atol must be finite non-negative numbers"));
    }
    let (flops, bytes) = match &raw.metrics {
        None => (None, None),
        Some(m) => (
            Some(cx.expr("metrics.flops".into(), &m.flops)?),
            Some(cx.expr("metrics.bytes".into(), &m.bytes)?),
        ),
    };
    let clblast = match &raw.clblast {
        None => None,
        Some(c) => Some(parse_clblast(cx, c, &inputs, &buffers)?),
    };
    let cfg = Config {
        file: path.to_path_buf(),
        name: raw.name,
        description: raw.description,
        origin: raw.origin,
        sizes,
        inputs,
        seed: raw.seed,
        buffers,
        reference,
        lift,
        clblast,
        variants,
        validation: Validation { gold, max_interp_size, rtol: v.rtol, atol: v.atol },
        flops,
        bytes,
    };
    check_sizes_bound(&cfg, cx)?;
    Ok(cfg)
}

/// A scalar of a CLBlast call: a number or a scalar input.
#[derive(Clone, Debug, PartialEq)]
pub enum BlasScalar {
    Value(f32),
    Input(String),
}

/// One CLBlast call (single precision, row-major). `init_from` names an
/// array copied into the output before the call, for routines that update
/// their output in place (`y = alpha A x + beta y`).
#[derive(Clone, Debug)]
pub enum BlasCall {
    Gemv {
        trans_a: bool,
        m: ArithExpr,
        n: ArithExpr,
        alpha: BlasScalar,
        a: String,
        x: String,
        beta: BlasScalar,
        y: String,
        init_from: Option<String>,
    },
    Gemm {
        trans_a: bool,
        trans_b: bool,
        m: ArithExpr,
        n: ArithExpr,
        k: ArithExpr,
        alpha: BlasScalar,
        a: String,
        b: String,
        beta: BlasScalar,
        c: String,
        init_from: Option<String>,
    },
}

/// The `clblast:` section: calls run in order, then `output` is validated.
#[derive(Clone, Debug)]
pub struct ClBlastSpec {
    pub calls: Vec<BlasCall>,
    pub output: String,
}

fn parse_clblast(
    cx: &Ctx,
    raw: &RawClBlast,
    inputs: &[ArraySpec],
    buffers: &[ArraySpec],
) -> Result<ClBlastSpec, ConfigError> {
    let all = || inputs.iter().chain(buffers);
    let array = |key: String, name: &Option<String>| -> Result<String, ConfigError> {
        let name = name.clone().ok_or_else(|| cx.err(key.clone(), "missing"))?;
        match all().find(|a| a.name == name) {
            Some(a) if !a.is_scalar() => Ok(name),
            _ => Err(cx.err(key, format!("`{name}` is not an input or buffer array"))),
        }
    };
    let scalar = |key: String, text: &str| -> Result<BlasScalar, ConfigError> {
        if let Ok(v) = text.trim().parse::<f32>() {
            return Ok(BlasScalar::Value(v));
        }
        match inputs.iter().find(|a| a.name == text.trim()) {
            Some(a) if a.is_scalar() => Ok(BlasScalar::Input(a.name.clone())),
            _ => Err(cx.err(key, format!("`{text}` is neither a number nor a scalar input"))),
        }
    };
    let mut calls = Vec::new();
    for (i, c) in raw.calls.iter().enumerate() {
        let k = format!("clblast.calls[{i}]");
        let init_from = match &c.init_from {
            None => None,
            Some(_) => Some(array(format!("{k}.init_from"), &c.init_from)?),
        };
        calls.push(match c.routine.as_str() {
            "gemv" => BlasCall::Gemv {
                trans_a: c.trans_a,
                m: cx.expr(format!("{k}.m"), &c.m)?,
                n: cx.expr(format!("{k}.n"), &c.n)?,
                alpha: scalar(format!("{k}.alpha"), &c.alpha)?,
                a: array(format!("{k}.a"), &Some(c.a.clone()))?,
                x: array(format!("{k}.x"), &c.x)?,
                beta: scalar(format!("{k}.beta"), &c.beta)?,
                y: array(format!("{k}.y"), &c.y)?,
                init_from,
            },
            "gemm" => BlasCall::Gemm {
                trans_a: c.trans_a,
                trans_b: c.trans_b,
                m: cx.expr(format!("{k}.m"), &c.m)?,
                n: cx.expr(format!("{k}.n"), &c.n)?,
                k: cx.expr(
                    format!("{k}.k"),
                    c.k.as_deref().ok_or_else(|| cx.err(format!("{k}.k"), "missing"))?,
                )?,
                alpha: scalar(format!("{k}.alpha"), &c.alpha)?,
                a: array(format!("{k}.a"), &Some(c.a.clone()))?,
                b: array(format!("{k}.b"), &c.b)?,
                beta: scalar(format!("{k}.beta"), &c.beta)?,
                c: array(format!("{k}.c"), &c.c)?,
                init_from,
            },
            other => return Err(cx.err(format!("{k}.routine"), format!("`{other}`: expected gemv or gemm"))),
        });
    }
    let output = array("clblast.output".into(), &Some(raw.output.clone()))?;
    Ok(ClBlastSpec { calls, output })
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
            .map_err(|_| cx.err(key, format!("`{a}`: expected int:<integer>")));
    }
    if let Some(v) = a.strip_prefix("float:") {
        return v
            .trim()
            .parse()
            .map(RefArg::Float)
            .map_err(|_| cx.err(key, format!("`{a}`: expected float:<number>")));
    }
    parse_arith(a)
        .map(RefArg::Expr)
        .map_err(|e| cx.err(key, format!("`{a}` is not an input, buffer, number or size expression ({e})")))
}

fn check_ndrange(
    cx: &Ctx,
    key: &str,
    global: &[ArithExpr],
    local: Option<&[ArithExpr]>,
) -> Result<(), ConfigError> {
    if global.is_empty() || global.len() > 3 {
        return Err(cx.err(format!("{key}.global"), "expected 1 to 3 expressions"));
    }
    if local.is_some_and(|l| l.len() != global.len()) {
        return Err(cx.err(format!("{key}.local"), "must have as many entries as `global`"));
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
    if let Some(r) = &cfg.reference {
        for (i, k) in r.kernels.iter().enumerate() {
            let key = format!("reference.kernels[{i}]");
            exprs.extend(k.global.iter().map(|e| (format!("{key}.global"), e)));
            exprs.extend(k.local.iter().flatten().map(|e| (format!("{key}.local"), e)));
            for (j, a) in k.args.iter().enumerate() {
                if let RefArg::Expr(e) = a {
                    exprs.push((format!("{key}.args[{j}]"), e));
                }
            }
        }
    }
    if let Some(l) = &cfg.lift {
        for (i, k) in l.kernels.iter().enumerate() {
            let key = format!("lift.kernels[{i}]");
            exprs.extend(k.global.iter().flatten().map(|e| (format!("{key}.global"), e)));
            exprs.extend(k.local.iter().flatten().map(|e| (format!("{key}.local"), e)));
        }
    }
    exprs.extend(cfg.flops.iter().map(|e| ("metrics.flops".to_string(), e)));
    exprs.extend(cfg.bytes.iter().map(|e| ("metrics.bytes".to_string(), e)));
    for (preset, binds) in &cfg.sizes {
        for (key, e) in &exprs {
            if let Err(err) = e.eval_with(&|n| binds.get(n).copied()) {
                return Err(cx.err(key.clone(), format!("`{e}` under size preset `{preset}`: {err}")));
            }
        }
    }
    Ok(())
}

/// Evaluates an expression with a preset's sizes.
pub fn eval(e: &ArithExpr, sizes: &BTreeMap<String, i64>) -> Result<i64, crate::arith::EvalError> {
    e.eval_with(&|n| sizes.get(n).copied())
}
