//! Where a candidate's inputs and expected result come from: random inputs
//! and the interpreter's result of the original def, or a [`Reference`]
//! (a benchmark config's generators, Rust gold and tolerances, which the
//! harness provides), and how its output is compared with the expected one.

use super::compare::{compare, compare_scaled, Check};
use super::rng::SplitMix64;
use crate::ir::Program;
use crate::passes::sizes_fit::MAX_ELEMS;
use crate::types::{Arrays, HostArray, ScalarType, Sizes, Type};
use std::collections::BTreeMap;

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
/// def, compared with rtol 1e-4, atol 1e-5. `Reference`: its inputs,
/// expected result and tolerances.
#[derive(Clone, Copy)]
pub enum Oracle<'a> {
    Interpreter,
    Reference(&'a dyn Reference),
}

/// A validation size's inputs, expected result and its error scale.
pub type Expected = (Arrays, HostArray, Option<HostArray>);

impl Oracle<'_> {
    /// Arrays of `def` at `sizes`.
    pub fn inputs(&self, prog: &Program, def: &str, sizes: &Sizes, seed: u64) -> Result<Arrays, String> {
        match self {
            Oracle::Interpreter => make_inputs(prog, def, sizes, seed),
            Oracle::Reference(r) => r.inputs(sizes).map_err(|e| e.to_string()),
        }
    }

    /// Arrays and the expected result at `sizes`.
    pub fn expected(&self, prog: &Program, def: &str, sizes: &Sizes, seed: u64) -> Result<Expected, String> {
        let inputs = self.inputs(prog, def, sizes, seed)?;
        match self {
            Oracle::Interpreter => {
                let out = gold(prog, def, &inputs, sizes)?;
                Ok((inputs, out, None))
            }
            Oracle::Reference(r) => {
                let (out, scale) = r.expected(&inputs, sizes).map_err(|e| e.to_string())?;
                Ok((inputs, out, scale))
            }
        }
    }

    /// Compares a candidate's output with the expected one.
    pub fn check(&self, out: &HostArray, want: &HostArray, scale: Option<&HostArray>) -> Check {
        match self {
            Oracle::Interpreter => compare(out, want, 1e-4, 1e-5),
            Oracle::Reference(r) => {
                let (rtol, atol) = r.tolerances();
                compare_scaled(out, want, scale, rtol, atol)
            }
        }
    }
}

/// Random inputs for every parameter of `def` at `sizes`: floats uniform in
/// [0, 1) (well-conditioned sums, so a reordered reduction validates with a
/// tight tolerance), ints uniform in `[0, m)` where `m` is the shortest
/// outer length of any parameter: a program that indexes one input with
/// another (MD's neighbour lists) gets valid, varied indices, so a candidate
/// that reads the wrong neighbour fails validation (all-zero indices, as
/// before, let it pass).
pub fn make_inputs(prog: &Program, def: &str, sizes: &Sizes, seed: u64) -> Result<Arrays, String> {
    let d = prog.def(def).ok_or_else(|| format!("no def `{def}`"))?;
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

/// Why [`input_counts`] refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputSizeError {
    /// The def, a type or a size is missing (reported elsewhere first).
    #[error("{0}")]
    Unknown(String),
    /// The sizes are known and too large to allocate.
    #[error("{0}")]
    TooLarge(String),
}

impl From<InputSizeError> for String {
    fn from(e: InputSizeError) -> String {
        e.to_string()
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
    use InputSizeError::{TooLarge, Unknown};
    let d = prog.def(def).ok_or_else(|| Unknown(format!("no def `{def}`")))?;
    let mut out = Vec::new();
    let mut total: u64 = 0;
    for p in &d.params {
        let ty = p.ty.as_ref().ok_or_else(|| Unknown(format!("parameter `{}` has no type", p.name)))?;
        let mut n: i64 = match ty.base_elem() {
            Type::Vector(_, w) => i64::from(*w),
            _ => 1,
        };
        for l in ty.lengths() {
            let v = l
                .eval_with(&|v| sizes.get(v).copied())
                .map_err(|e| Unknown(format!("length of `{}`: {e}", p.name)))?;
            n = n.checked_mul(v).filter(|n| *n <= MAX_ELEMS).ok_or_else(|| {
                TooLarge(format!("parameter `{}` has more than {MAX_ELEMS} scalars (32-bit indices)", p.name))
            })?;
        }
        let float = match ty.base_elem() {
            Type::Scalar(s) | Type::Vector(s, _) => *s == ScalarType::Float,
            _ => {
                return Err(Unknown(format!(
                    "parameter `{}`: only arrays of scalars or vectors are generated",
                    p.name
                )))
            }
        };
        let n = usize::try_from(n)
            .map_err(|_| TooLarge(format!("parameter `{}` has a negative size", p.name)))?;
        total = total.saturating_add(n as u64 * 4);
        out.push((p.name.clone(), n, float));
    }
    crate::types::check_host_bytes("the inputs", total).map_err(|e| TooLarge(e.to_string()))?;
    Ok(out)
}

/// The interpreter's result of `def` on `inputs`.
pub fn gold(prog: &Program, def: &str, inputs: &Arrays, sizes: &Sizes) -> Result<HostArray, String> {
    let d = prog.def(def).ok_or_else(|| format!("no def `{def}`"))?;
    let mut args = BTreeMap::new();
    for p in &d.params {
        let ty = p.ty.as_ref().ok_or("untyped parameter")?;
        let v = crate::interp::value_from_flat(ty, &inputs[&p.name], sizes).map_err(|e| e.to_string())?;
        args.insert(p.name.clone(), v);
    }
    let v = crate::interp::eval_def(prog, def, &args, sizes).map_err(|e| format!("interpreter: {e}"))?;
    Ok(crate::interp::value_to_flat(&v))
}
