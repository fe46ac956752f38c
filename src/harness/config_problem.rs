//! What is wrong with a config key, as data: the config loader and the
//! section parsers (`blas_spec`, `explored_spec`, `halide_spec`,
//! `search_spec`) say which problem, and `ConfigError` names the file, line
//! and key around it. Each variant renders the text users have always seen
//! (the robustness tests pin it), so callers can match on the problem
//! without parsing a sentence.

use super::buildopts::BuildOptsError;
use super::confine::ConfineError;
use crate::arith::{ArithExpr, ArithParseError, EvalError};
use crate::parse::LoadError;
use std::sync::Arc;

/// What a key naming an array must name (`is not an input or buffer`).
pub(crate) const INPUT_OR_BUFFER: &str = "an input or buffer";

/// The problem with one key of a config.
#[derive(Clone, Debug, thiserror::Error)]
pub enum ConfigProblem {
    /// A value of a fixed form that is not of it (`what`: the form, with examples).
    #[error("`{found}`: expected {what}")]
    Expected { found: String, what: &'static str },
    /// A value that is not one of a fixed set or kind (`what`: the set).
    #[error("`{found}` is not {what}")]
    Not { found: String, what: &'static str },
    /// A variant that the config's Lift section does not define.
    #[error("`{found}` is not one of {}", .allowed.join(", "))]
    NotOneOf { found: String, allowed: Vec<String> },
    #[error("`{found}`: expected a size preset of this config ({})", .presets.join(", "))]
    NotPreset { found: String, presets: Vec<String> },
    #[error("`{found}` is neither a number nor a scalar input")]
    NotScalar { found: String },
    /// A reference kernel argument that is no array, number or expression.
    #[error("`{found}` is not an input, buffer, number or size expression ({error})")]
    NotRefArg { found: String, error: ArithParseError },
    #[error("`{name}` is declared twice")]
    DeclaredTwice { name: String },
    /// A benchmark name an earlier config file (`first`) already has.
    #[error("`{name}` is also the name of {first}: one config per benchmark")]
    NameTaken { name: String, first: String },
    #[error("`{name}` is a size name; a tuning parameter needs its own")]
    SizeNameAsParam { name: String },
    /// A list that must not be empty (`what`: one of its entries).
    #[error("at least one {what} is needed")]
    Needed { what: &'static str },
    #[error("missing")]
    Missing,
    #[error("bad expression: {error}")]
    BadExpression { error: ArithParseError },
    /// An expression that has no value under one size preset.
    #[error("`{expr}` under size preset `{preset}`: {error}")]
    Unevaluable { expr: ArithExpr, preset: String, error: EvalError },
    /// A path outside the repository, or a name unfit for a file name.
    #[error("{0}")]
    Confine(ConfineError),
    #[error("{0}")]
    BuildOptions(BuildOptsError),
    #[error("file `{path}` not found (paths are relative to the repository root)")]
    FileNotFound { path: String },
    /// `explored.kernels[i].program`, whose message never had the hint.
    #[error("file `{path}` not found")]
    ProgramNotFound { path: String },
    #[error("expected a readable Lift program: {}", first_line(.error))]
    Unreadable { error: LoadError },
    #[error("expected a def of {program}")]
    NoDef { program: String },
    #[error("expected a map of size names to integers: {error}")]
    NotSizeMap { error: Arc<serde_yaml::Error> },
    #[error("preset names must be strings")]
    PresetNameNotString,
    #[error("sizes must be >= 1, got {value}")]
    SizeBelowOne { value: i64 },
    /// A generator bound the element type (`ty`: `float` or `int`) cannot hold.
    #[error("bound {value} is not a finite {ty} (expected {lo:e} to {hi:e})")]
    BoundOutOfRange { value: f64, ty: &'static str, lo: f64, hi: f64 },
    #[error("{value} is not a finite {ty} (expected {lo:e} to {hi:e})")]
    ConstOutOfRange { value: f64, ty: &'static str, lo: f64, hi: f64 },
    #[error("min is larger than max")]
    MinAboveMax,
    #[error("expected exactly one of random, const, iota, generator")]
    InitNotOne,
    #[error("missing: random, const, iota or generator")]
    InitMissing,
    #[error("`reference` needs a `reference:` section")]
    GoldWithoutReference,
    #[error("rtol and atol must be finite non-negative numbers")]
    BadTolerance,
    #[error("expected 1 to 3 expressions")]
    GlobalArity,
    #[error("must have as many entries as `global`")]
    LocalArity,
    #[error("expected a def name or a non-empty list of them")]
    NoDefs,
    #[error("no kernel comes from the device's file (omit `program:`)")]
    NoDeviceKernel,
    #[error("`config` needs a Rust gold (`validation.gold: rust:NAME`); use `interpreter`")]
    OracleWithoutRustGold,
}

/// A load error's first line: the rest quotes the program's source, which
/// a config message does not repeat.
fn first_line(error: &LoadError) -> String {
    error.to_string().lines().next().unwrap_or_default().to_string()
}

/// A problem found by a section parser: the key, and the value written
/// there when the loader should name its line.
#[derive(Clone, Debug)]
pub(crate) struct SpecError {
    pub key: String,
    pub value: Option<String>,
    /// Boxed as in `ConfigError`, to keep every parser's result small.
    pub problem: Box<ConfigProblem>,
}

impl SpecError {
    pub fn new(key: impl Into<String>, problem: ConfigProblem) -> Self {
        SpecError { key: key.into(), value: None, problem: Box::new(problem) }
    }
    /// A problem whose line is the one where `value` is written.
    pub fn at(key: impl Into<String>, value: &str, problem: ConfigProblem) -> Self {
        SpecError { key: key.into(), value: Some(value.to_string()), problem: Box::new(problem) }
    }
}

#[cfg(test)]
mod tests {
    use super::ConfigProblem as P;
    use crate::arith::{parse_arith, EvalError};

    /// The texts no other test pins in full, as `format!` wrote them
    /// before the problems were data (icfp15, robustness, harness_config
    /// and harness_errors pin the rest through `lift`).
    #[test]
    fn problems_render_their_messages() {
        let s = |v: &str| v.to_string();
        let bad = parse_arith("N +").unwrap_err();
        let file = crate::ir::SourceFile::new("a.lift", "def f(");
        let error = crate::parse::parse_program(&file).unwrap_err();
        let unreadable = crate::parse::LoadError::Syntax { at: file.location(error.span.start), error };
        // The load error's first line only: the rest quotes the source.
        let first = unreadable.to_string().lines().next().map(str::to_string).unwrap_or_default();
        let cases = [
            (
                P::NotOneOf { found: s("turbo"), allowed: vec![s("all"), s("lift-naive")] },
                "`turbo` is not one of all, lift-naive".to_string(),
            ),
            (P::NotScalar { found: s("q") }, s("`q` is neither a number nor a scalar input")),
            (
                P::NotRefArg { found: s("N +"), error: bad.clone() },
                format!("`N +` is not an input, buffer, number or size expression ({bad})"),
            ),
            (P::DeclaredTwice { name: s("x") }, s("`x` is declared twice")),
            (P::SizeNameAsParam { name: s("N") }, s("`N` is a size name; a tuning parameter needs its own")),
            (P::Needed { what: "size preset" }, s("at least one size preset is needed")),
            (P::BadExpression { error: bad.clone() }, format!("bad expression: {bad}")),
            (
                P::Unevaluable {
                    expr: parse_arith("N").unwrap(),
                    preset: s("small"),
                    error: EvalError::Unbound(s("N")),
                },
                s("`N` under size preset `small`: unbound variable `N`"),
            ),
            (
                P::FileNotFound { path: s("a.cl") },
                s("file `a.cl` not found (paths are relative to the repository root)"),
            ),
            (P::ProgramNotFound { path: s("a.lift") }, s("file `a.lift` not found")),
            (P::Unreadable { error: unreadable }, format!("expected a readable Lift program: {first}")),
            (P::NoDef { program: s("a.lift") }, s("expected a def of a.lift")),
            (P::PresetNameNotString, s("preset names must be strings")),
            (P::SizeBelowOne { value: 0 }, s("sizes must be >= 1, got 0")),
            (
                P::ConstOutOfRange { value: 3e9, ty: "int", lo: i32::MIN as f64, hi: i32::MAX as f64 },
                s("3000000000 is not a finite int (expected -2.147483648e9 to 2.147483647e9)"),
            ),
            (P::MinAboveMax, s("min is larger than max")),
            (P::InitNotOne, s("expected exactly one of random, const, iota, generator")),
            (P::InitMissing, s("missing: random, const, iota or generator")),
            (P::GoldWithoutReference, s("`reference` needs a `reference:` section")),
            (P::BadTolerance, s("rtol and atol must be finite non-negative numbers")),
            (P::GlobalArity, s("expected 1 to 3 expressions")),
            (P::LocalArity, s("must have as many entries as `global`")),
            (
                P::OracleWithoutRustGold,
                s("`config` needs a Rust gold (`validation.gold: rust:NAME`); use `interpreter`"),
            ),
            (P::Expected { found: s("v"), what: "int:<integer>" }, s("`v`: expected int:<integer>")),
            (P::Not { found: s("z"), what: super::INPUT_OR_BUFFER }, s("`z` is not an input or buffer")),
        ];
        for (problem, want) in cases {
            assert_eq!(problem.to_string(), want);
        }
    }
}
