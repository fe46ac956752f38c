//! The reference interpreter: evaluates any Lift program, high-level or
//! low-level, on the CPU from the patterns' meanings (every map variant is a
//! map; address-space wrappers are the identity). It is the oracle of tests
//! and of the harness's validation.
//!
//! Files: `eval` (expressions and functions), `patterns` (the meaning of
//! each pattern), `sizes` (size inference and argument checks), `flat`
//! (conversion to and from flat host arrays). User-function bodies are
//! evaluated by `ir::c::eval`.

mod error;
mod eval;
mod patterns;
pub use eval::MAX_WORK;
mod flat;
mod sizes;

pub use error::{ArgumentProblem, DataProblem, InterpError, RuntimeProblem};
pub use eval::{call_user_fun, literal_value};
pub use flat::{value_from_flat, value_to_flat};
pub use sizes::infer_sizes;

use crate::ir::{Program, Value};
use std::collections::{BTreeMap, HashMap};

/// Evaluates `def` on named arguments. Sizes in `sizes` are taken as given;
/// the others are inferred from the arguments, and every argument is
/// checked against its declared type.
pub fn eval_def(
    program: &Program,
    def: &str,
    args: &BTreeMap<String, Value>,
    sizes: &BTreeMap<String, i64>,
) -> Result<Value, InterpError> {
    eval_def_within(program, def, args, sizes, MAX_WORK)
}

/// [`eval_def`] refusing to produce more than `budget` array elements in
/// all (see [`MAX_WORK`]).
pub fn eval_def_within(
    program: &Program,
    def: &str,
    args: &BTreeMap<String, Value>,
    sizes: &BTreeMap<String, i64>,
    budget: u64,
) -> Result<Value, InterpError> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(eval::MAX_THREADS);
    eval_def_threads(program, def, args, sizes, (budget, threads))
}

/// `f` applied to `args` outside any def: no parameter of a def is bound
/// and no size is known, so a function that reads one (a lambda capturing a
/// def's scalar) is an error. A rewrite's side condition uses it to ask
/// what a map's function gives for a value (`reduce-pad`).
pub fn apply_closed(
    program: &Program,
    f: &crate::ir::FunDecl,
    args: Vec<Value>,
) -> Result<Value, InterpError> {
    let mut it = eval::Interp {
        program,
        env: HashMap::new(),
        sizes: BTreeMap::new(),
        work: 0,
        budget: MAX_WORK,
        threads: 1,
    };
    it.apply(f, args, f.span)
}

/// [`eval_def_within`] with `budget` and the number of threads a map may be
/// spread over (`limits`); the value is the same for any number.
pub fn eval_def_threads(
    program: &Program,
    def: &str,
    args: &BTreeMap<String, Value>,
    sizes: &BTreeMap<String, i64>,
    (budget, threads): (u64, usize),
) -> Result<Value, InterpError> {
    let d = program.def(def).ok_or_else(|| InterpError::NoSuchDef(def.to_string()))?;
    let sizes = sizes::infer_with(d, args, sizes.clone())?;
    let mut env = HashMap::new();
    for p in &d.params {
        if let Some(v) = args.get(&p.name) {
            env.insert(p.id, v.clone());
        }
    }
    let mut it = eval::Interp { program, env, sizes, work: 0, budget, threads: threads.max(1) };
    it.eval(&d.body)
}
