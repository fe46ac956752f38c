//! Where a candidate's inputs and expected result come from: random inputs
//! and the interpreter's result of the original def, or a [`Reference`]
//! (a benchmark config's generators, Rust gold and tolerances, which the
//! harness provides), and how its output is compared with the expected one.

use super::compare::{compare, compare_scaled, Check};
use super::rng::SplitMix64;
use crate::arith::EvalError;
use crate::interp::InterpError;
use crate::ir::Program;
use crate::passes::sizes_fit::MAX_ELEMS;
use crate::types::{Arrays, HostArray, HostMemError, ScalarType, Sizes, Type};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Arrays and expected results from outside the program: a benchmark
/// config's input generators, its Rust gold (with its per-element error
/// scale) and its tolerances, so that the search validates as the harness
/// does (`lift explore --config`; MD's random positions put atoms almost on
/// top of each other, whose cancelling forces failed the fixed tolerance).
/// A reference's own error, whole until it is shown: the layer that
/// implements [`Reference`] (the harness) types it, this one cannot name it.
pub type ReferenceError = Box<dyn std::error::Error + Send + Sync>;

pub trait Reference: std::fmt::Debug + Send + Sync {
    /// The inputs at `sizes`.
    fn inputs(&self, sizes: &Sizes) -> Result<Arrays, ReferenceError>;
    /// The expected result on `inputs` and its error scale, if any.
    fn expected(
        &self,
        inputs: &Arrays,
        sizes: &Sizes,
    ) -> Result<(HostArray, Option<HostArray>), ReferenceError>;
    /// The relative and absolute tolerance.
    fn tolerances(&self) -> (f64, f64);
}

/// Where inputs and expected results come from. `Interpreter`: random
/// inputs ([`make_inputs`]) and the interpreter's result of the original
/// def, compared with atol 1e-5 and rtol [`interpreter_rtol`] (1e-4, more
/// for long sums). `Reference`: its inputs, expected result and
/// tolerances.
#[derive(Clone, Copy)]
pub enum Oracle<'a> {
    Interpreter,
    Reference(&'a dyn Reference),
}

/// Why the oracle has no inputs or expected result at some sizes. Clone:
/// the search keeps a size's expected result, or this, for every candidate.
#[derive(Clone, Debug, thiserror::Error)]
pub enum OracleError {
    #[error("no def `{0}`")]
    NoDef(String),
    #[error(transparent)]
    Sizes(#[from] InputSizeError),
    #[error("untyped parameter")]
    Untyped,
    /// An input that does not fit its parameter's type.
    #[error(transparent)]
    Value(InterpError),
    #[error("interpreter: {0}")]
    Interpreter(InterpError),
    /// A [`Reference`]'s own error.
    #[error("{0}")]
    Reference(Arc<dyn std::error::Error + Send + Sync>),
}

/// A validation size's inputs, expected result and its error scale.
pub type Expected = (Arrays, HostArray, Option<HostArray>);

impl Oracle<'_> {
    /// Arrays of `def` at `sizes`.
    pub fn inputs(&self, prog: &Program, def: &str, sizes: &Sizes, seed: u64) -> Result<Arrays, OracleError> {
        match self {
            Oracle::Interpreter => make_inputs(prog, def, sizes, seed),
            Oracle::Reference(r) => r.inputs(sizes).map_err(|e| OracleError::Reference(e.into())),
        }
    }

    /// Arrays and the expected result at `sizes`.
    pub fn expected(
        &self,
        prog: &Program,
        def: &str,
        sizes: &Sizes,
        seed: u64,
    ) -> Result<Expected, OracleError> {
        let inputs = self.inputs(prog, def, sizes, seed)?;
        match self {
            Oracle::Interpreter => {
                let out = gold(prog, def, &inputs, sizes)?;
                Ok((inputs, out, None))
            }
            Oracle::Reference(r) => {
                let (out, scale) =
                    r.expected(&inputs, sizes).map_err(|e| OracleError::Reference(e.into()))?;
                Ok((inputs, out, scale))
            }
        }
    }

    /// Compares a candidate's output with the expected one; `longest` is
    /// the longest reduction of the def at the sizes compared
    /// ([`longest_reduction`]).
    pub fn check(&self, out: &HostArray, want: &HostArray, scale: Option<&HostArray>, longest: u64) -> Check {
        match self {
            Oracle::Interpreter => compare(out, want, interpreter_rtol(longest), 1e-5),
            Oracle::Reference(r) => {
                let (rtol, atol) = r.tolerances();
                compare_scaled(out, want, scale, rtol, atol)
            }
        }
    }
}

/// The relative tolerance against the interpreter for a def whose longest
/// reduction adds `n` terms: 1e-4, or `2 sqrt(n)` float epsilons where
/// that is more. The interpreter folds left in `float`, and the rounding
/// of a long left fold of positive terms adds up: 1,041,408 absolute
/// differences of uniform inputs folded left are 9e-5 below their exact
/// sum, and a 2,082,816-element one failed every tree-reduced candidate
/// on the H100 (1.1e-4 apart, the GPU's the nearer to the exact sum).
/// From about 176,000 terms on, the tolerance grows as that error does.
pub fn interpreter_rtol(n: u64) -> f64 {
    (2.0 * (n as f64).sqrt() * f64::from(f32::EPSILON)).max(1e-4)
}

/// The number of terms of the longest reduction in `def` at `sizes` (its
/// array's length), 0 where it has none or a length does not evaluate.
pub fn longest_reduction(prog: &Program, def: &str, sizes: &Sizes) -> u64 {
    longest_at(&reduction_lengths(prog, def), sizes)
}

/// The lengths of the arrays `def`'s reductions reduce, in its sizes
/// (none where it does not type-check).
pub fn reduction_lengths(prog: &Program, def: &str) -> Vec<crate::arith::ArithExpr> {
    use crate::ir::{ExprKind, FunKind, Pattern};
    let Some(d) = prog.def(def) else { return Vec::new() };
    let Ok(types) = crate::passes::typecheck::typecheck_def(prog, d) else { return Vec::new() };
    crate::ir::visit::expr_positions(&d.body)
        .into_iter()
        .filter_map(|(_, e)| match &e.kind {
            ExprKind::Call(f, args) if matches!(f.kind, FunKind::Pattern(Pattern::Reduce { .. })) => {
                match types.exprs.get(&args.last()?.id) {
                    Some(Type::Array(_, n)) => Some(n.clone()),
                    _ => None,
                }
            }
            ExprKind::Call(..) | ExprKind::Literal(_) | ExprKind::Param(_) => None,
        })
        .collect()
}

/// The longest of `lengths` at `sizes`, 0 where none evaluates.
pub fn longest_at(lengths: &[crate::arith::ArithExpr], sizes: &Sizes) -> u64 {
    let at = |n: &crate::arith::ArithExpr| n.eval_with(&|v| sizes.get(v).copied()).ok();
    lengths.iter().filter_map(at).max().map_or(0, |n| n.max(0) as u64)
}

/// Random inputs for every parameter of `def` at `sizes`: floats uniform in
/// [0, 1) (well-conditioned sums, so a reordered reduction validates with a
/// tight tolerance), ints uniform in `[0, m)` where `m` is the shortest
/// outer length of any parameter: a program that indexes one input with
/// another (MD's neighbour lists) gets valid, varied indices, so a candidate
/// that reads the wrong neighbour fails validation (all-zero indices, as
/// before, let it pass).
pub fn make_inputs(prog: &Program, def: &str, sizes: &Sizes, seed: u64) -> Result<Arrays, OracleError> {
    let d = prog.def(def).ok_or_else(|| OracleError::NoDef(def.into()))?;
    let mut out = Arrays::new();
    let mut index_bound = i64::MAX;
    for p in &d.params {
        if let Some(l) = p.ty.as_ref().and_then(|t| t.lengths().first().cloned()) {
            if let Ok(v) = l.eval_with(&|v| sizes.get(v).copied()) {
                index_bound = index_bound.min(v.max(1));
            }
        }
    }
    let index_bound = if index_bound == i64::MAX { 1 } else { index_bound } as u64;
    let counts = input_counts(prog, def, sizes)?;
    for (i, (p, (_, n, float))) in d.params.iter().zip(counts).enumerate() {
        let mut rng = SplitMix64::new(seed.wrapping_add(i as u64));
        out.insert(
            p.name.clone(),
            if float {
                HostArray::F32((0..n).map(|_| rng.next_f64() as f32).collect())
            } else {
                HostArray::I32((0..n).map(|_| (rng.next_u64() % index_bound) as i32).collect())
            },
        );
    }
    Ok(out)
}

/// Why [`input_counts`] refused: something unknown (the def, a type, a
/// size: reported elsewhere first, [`InputSizeError::is_unknown`]), or
/// sizes that are known and too large to allocate.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputSizeError {
    #[error("no def `{0}`")]
    NoDef(String),
    #[error("parameter `{0}` has no type")]
    Untyped(String),
    #[error("length of `{param}`: {source}")]
    Length { param: String, source: EvalError },
    #[error("parameter `{0}`: only arrays of scalars or vectors are generated")]
    NotScalars(String),
    #[error("parameter `{0}` has more than {MAX_ELEMS} scalars (32-bit indices)")]
    TooMany(String),
    #[error("parameter `{0}` has a negative size")]
    Negative(String),
    #[error(transparent)]
    Host(#[from] HostMemError),
}

impl InputSizeError {
    /// The def, a type or a size is missing, rather than too large.
    pub fn is_unknown(&self) -> bool {
        use InputSizeError::*;
        match self {
            NoDef(_) | Untyped(_) | Length { .. } | NotScalars(_) => true,
            TooMany(_) | Negative(_) | Host(_) => false,
        }
    }
}

/// Each parameter's name, scalar count and whether it is float, at
/// `sizes`: checked against 32-bit indices and, together, the host cap
/// ([`crate::types::host_cap_bytes`]) before anything is allocated.
pub fn input_counts(
    prog: &Program,
    def: &str,
    sizes: &Sizes,
) -> Result<Vec<(String, usize, bool)>, InputSizeError> {
    use InputSizeError::{Length, Negative, NoDef, NotScalars, TooMany, Untyped};
    let d = prog.def(def).ok_or_else(|| NoDef(def.into()))?;
    let mut out = Vec::new();
    let mut total: u64 = 0;
    for p in &d.params {
        let ty = p.ty.as_ref().ok_or_else(|| Untyped(p.name.clone()))?;
        let mut n: i64 = match ty.base_elem() {
            Type::Vector(_, w) => i64::from(*w),
            _ => 1,
        };
        for l in ty.lengths() {
            let v = l
                .eval_with(&|v| sizes.get(v).copied())
                .map_err(|source| Length { param: p.name.clone(), source })?;
            n = n.checked_mul(v).filter(|n| *n <= MAX_ELEMS).ok_or_else(|| TooMany(p.name.clone()))?;
        }
        let float = match ty.base_elem() {
            Type::Scalar(s) | Type::Vector(s, _) => *s == ScalarType::Float,
            _ => return Err(NotScalars(p.name.clone())),
        };
        let n = usize::try_from(n).map_err(|_| Negative(p.name.clone()))?;
        total = total.saturating_add(n as u64 * 4);
        out.push((p.name.clone(), n, float));
    }
    crate::types::check_host_bytes("the inputs", total)?;
    Ok(out)
}

/// The interpreter's result of `def` on `inputs`.
pub fn gold(prog: &Program, def: &str, inputs: &Arrays, sizes: &Sizes) -> Result<HostArray, OracleError> {
    let d = prog.def(def).ok_or_else(|| OracleError::NoDef(def.into()))?;
    let mut args = BTreeMap::new();
    for p in &d.params {
        let ty = p.ty.as_ref().ok_or(OracleError::Untyped)?;
        let v = crate::interp::value_from_flat(ty, &inputs[&p.name], sizes).map_err(OracleError::Value)?;
        args.insert(p.name.clone(), v);
    }
    let v = crate::interp::eval_def(prog, def, &args, sizes).map_err(OracleError::Interpreter)?;
    Ok(crate::interp::value_to_flat(&v))
}
