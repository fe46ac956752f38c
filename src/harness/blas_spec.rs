//! The library baselines' calls as a config writes them (`clblast:` and
//! `cublas:`, the same schema): BLAS routines in single precision,
//! row-major, on the config's inputs and buffers. Both library variants run
//! the same calls, so their rows validate against the same gold.

use super::arrays::ArraySpec;
use super::config_problem::{ConfigProblem as P, SpecError};
use crate::arith::{parse_arith, ArithExpr};
use serde::Deserialize;

/// One call as written (`routine: gemv`, `gemm`, `scal`, `asum` or `dot`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawBlasCall {
    routine: String,
    #[serde(default)]
    trans_a: bool,
    #[serde(default)]
    trans_b: bool,
    #[serde(default)]
    m: Option<String>,
    n: String,
    #[serde(default)]
    k: Option<String>,
    #[serde(default)]
    alpha: Option<String>,
    #[serde(default)]
    a: Option<String>,
    #[serde(default)]
    x: Option<String>,
    #[serde(default)]
    b: Option<String>,
    #[serde(default)]
    beta: Option<String>,
    #[serde(default)]
    y: Option<String>,
    #[serde(default)]
    c: Option<String>,
    /// The one-element buffer a reduction (`asum`, `dot`) writes.
    #[serde(default)]
    result: Option<String>,
    #[serde(default)]
    init_from: Option<String>,
}

/// `clblast:` or `cublas:` as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawBlas {
    calls: Vec<RawBlasCall>,
    output: String,
}

/// A scalar of a BLAS call: a number or a scalar input.
#[derive(Clone, Debug, PartialEq)]
pub enum BlasScalar {
    Value(f32),
    Input(String),
}

/// One BLAS call (single precision, row-major). `init_from` names an
/// array copied into the output before the call, for routines that update
/// their output in place (`y = alpha A x + beta y`, `x = alpha x`).
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
    /// `x = alpha * x` over `n` elements.
    Scal { n: ArithExpr, alpha: BlasScalar, x: String, init_from: Option<String> },
    /// `result[0] = sum |x[i]|`.
    Asum { n: ArithExpr, x: String, result: String },
    /// `result[0] = sum x[i] * y[i]`.
    Dot { n: ArithExpr, x: String, y: String, result: String },
}

impl BlasCall {
    /// The (source, target) of the untimed copy before the call, if any.
    pub fn init_copy(&self) -> Option<(&str, &str)> {
        match self {
            BlasCall::Gemv { init_from: Some(f), y: t, .. }
            | BlasCall::Gemm { init_from: Some(f), c: t, .. }
            | BlasCall::Scal { init_from: Some(f), x: t, .. } => Some((f, t)),
            BlasCall::Gemv { .. }
            | BlasCall::Gemm { .. }
            | BlasCall::Scal { .. }
            | BlasCall::Asum { .. }
            | BlasCall::Dot { .. } => None,
        }
    }
}

/// A `clblast:` or `cublas:` section: calls run in order, then `output` is
/// validated.
#[derive(Clone, Debug)]
pub struct BlasSpec {
    pub calls: Vec<BlasCall>,
    pub output: String,
}

/// Checks a section called `section`.
pub(crate) fn parse_blas(
    section: &str,
    raw: &RawBlas,
    inputs: &[ArraySpec],
    buffers: &[ArraySpec],
) -> Result<BlasSpec, SpecError> {
    let all = || inputs.iter().chain(buffers);
    let missing = |key: &String| SpecError::new(key, P::Missing);
    let array = |key: String, name: &Option<String>| -> Result<String, SpecError> {
        let name = name.clone().ok_or_else(|| missing(&key))?;
        match all().find(|a| a.name == name) {
            Some(a) if !a.is_scalar() => Ok(name),
            _ => Err(SpecError::new(key, P::Not { found: name, what: "an input or buffer array" })),
        }
    };
    let scalar = |key: String, text: &Option<String>| -> Result<BlasScalar, SpecError> {
        let text = text.as_deref().ok_or_else(|| missing(&key))?;
        if let Ok(v) = text.trim().parse::<f32>() {
            return Ok(BlasScalar::Value(v));
        }
        match inputs.iter().find(|a| a.name == text.trim()) {
            Some(a) if a.is_scalar() => Ok(BlasScalar::Input(a.name.clone())),
            _ => Err(SpecError::new(key, P::NotScalar { found: text.to_string() })),
        }
    };
    let expr = |key: String, text: &Option<String>| -> Result<ArithExpr, SpecError> {
        let text = text.as_deref().ok_or_else(|| missing(&key))?;
        parse_arith(text).map_err(|error| SpecError::new(key, P::BadExpression { error }))
    };
    let mut calls = Vec::new();
    for (i, c) in raw.calls.iter().enumerate() {
        let k = format!("{section}.calls[{i}]");
        let init_from = match &c.init_from {
            None => None,
            Some(_) => Some(array(format!("{k}.init_from"), &c.init_from)?),
        };
        let n = expr(format!("{k}.n"), &Some(c.n.clone()))?;
        calls.push(match c.routine.as_str() {
            "gemv" => BlasCall::Gemv {
                trans_a: c.trans_a,
                m: expr(format!("{k}.m"), &c.m)?,
                n,
                alpha: scalar(format!("{k}.alpha"), &c.alpha)?,
                a: array(format!("{k}.a"), &c.a)?,
                x: array(format!("{k}.x"), &c.x)?,
                beta: scalar(format!("{k}.beta"), &c.beta)?,
                y: array(format!("{k}.y"), &c.y)?,
                init_from,
            },
            "gemm" => BlasCall::Gemm {
                trans_a: c.trans_a,
                trans_b: c.trans_b,
                m: expr(format!("{k}.m"), &c.m)?,
                n,
                k: expr(format!("{k}.k"), &c.k)?,
                alpha: scalar(format!("{k}.alpha"), &c.alpha)?,
                a: array(format!("{k}.a"), &c.a)?,
                b: array(format!("{k}.b"), &c.b)?,
                beta: scalar(format!("{k}.beta"), &c.beta)?,
                c: array(format!("{k}.c"), &c.c)?,
                init_from,
            },
            "scal" => BlasCall::Scal {
                n,
                alpha: scalar(format!("{k}.alpha"), &c.alpha)?,
                x: array(format!("{k}.x"), &c.x)?,
                init_from,
            },
            "asum" => BlasCall::Asum {
                n,
                x: array(format!("{k}.x"), &c.x)?,
                result: array(format!("{k}.result"), &c.result)?,
            },
            "dot" => BlasCall::Dot {
                n,
                x: array(format!("{k}.x"), &c.x)?,
                y: array(format!("{k}.y"), &c.y)?,
                result: array(format!("{k}.result"), &c.result)?,
            },
            other => {
                let what = "gemv, gemm, scal, asum or dot";
                return Err(SpecError::new(
                    format!("{k}.routine"),
                    P::Expected { found: other.into(), what },
                ));
            }
        });
    }
    let output = array(format!("{section}.output"), &Some(raw.output.clone()))?;
    Ok(BlasSpec { calls, output })
}
