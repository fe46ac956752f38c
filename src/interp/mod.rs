//! The reference interpreter: evaluates any Lift program, high-level or
//! low-level, on the CPU from the patterns' meanings (every map variant is a
//! map; address-space wrappers are the identity). It is the oracle of tests
//! and of the harness's validation.
//!
//! STUB (harness branch): the functions below only declare the interface the
//! harness calls and always fail; the lead replaces them with the parser and
//! interpreter helper's module at merge. Do not add work here.

mod value;

pub use value::Value;

use crate::harness::data::HostArray;
use crate::ir::{Def, Program};
use crate::types::Type;
use std::collections::BTreeMap;

/// Why an evaluation failed.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{0}")]
pub struct InterpError(pub String);

fn unavailable() -> InterpError {
    InterpError("the Lift interpreter is not available in this build (stub)".into())
}

/// STUB: evaluates `def` of `program` on `args` with the given sizes.
pub fn eval_def(
    program: &Program,
    def: &str,
    args: &BTreeMap<String, Value>,
    sizes: &BTreeMap<String, i64>,
) -> Result<Value, InterpError> {
    let _ = (program, def, args, sizes);
    Err(unavailable())
}

/// STUB: binds the size variables of `def`'s parameter types from the
/// argument values' shapes.
pub fn infer_sizes(def: &Def, args: &BTreeMap<String, Value>) -> Result<BTreeMap<String, i64>, InterpError> {
    let _ = (def, args);
    Err(unavailable())
}

/// STUB: builds a value of type `ty` from a flat host array.
pub fn value_from_flat(
    ty: &Type,
    flat: &HostArray,
    sizes: &BTreeMap<String, i64>,
) -> Result<Value, InterpError> {
    let _ = (ty, flat, sizes);
    Err(unavailable())
}

/// STUB: flattens a value into a host array (memory order).
pub fn value_to_flat(value: &Value) -> HostArray {
    let mut out = Vec::new();
    value.flatten(&mut out);
    HostArray::F32(out.into_iter().map(|x| x as f32).collect())
}
