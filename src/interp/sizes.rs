//! Size inference: binds the size variables of a def's parameter types by
//! matching them against the argument values, then checks every length.

use super::error::{ArgumentProblem, InterpError};
use crate::arith::ArithExpr;
use crate::ir::Def;
use crate::ir::Value;
use crate::types::{ScalarType, Type};
use std::collections::BTreeMap;

/// Binds sizes from the arguments of `def`, keeping bindings already in
/// `sizes`, and checks every argument against its declared type.
pub fn infer_sizes(def: &Def, args: &BTreeMap<String, Value>) -> Result<BTreeMap<String, i64>, InterpError> {
    infer_with(def, args, BTreeMap::new())
}

pub(super) fn infer_with(
    def: &Def,
    args: &BTreeMap<String, Value>,
    mut sizes: BTreeMap<String, i64>,
) -> Result<BTreeMap<String, i64>, InterpError> {
    let mut pairs = Vec::new();
    for p in &def.params {
        let v = args.get(&p.name).ok_or_else(|| InterpError::Argument {
            name: p.name.clone(),
            problem: Box::new(ArgumentProblem::Missing),
        })?;
        let ty = p.ty.clone().ok_or_else(|| InterpError::Argument {
            name: p.name.clone(),
            problem: Box::new(ArgumentProblem::Untyped),
        })?;
        pairs.push((p.name.clone(), ty, v));
    }
    // First every length that is a single size binds it, then all are checked,
    // so that `[float](N/2)` may come before the parameter that binds `N`.
    for (_, ty, v) in &pairs {
        bind_sizes(ty, v, &mut sizes);
    }
    for (name, ty, v) in &pairs {
        check(ty, v, &sizes, ty)
            .map_err(|problem| InterpError::Argument { name: name.clone(), problem: Box::new(problem) })?;
    }
    Ok(sizes)
}

/// Binds unbound single-variable lengths of `ty` from `v`; ignores mismatches
/// (checking is separate).
pub(super) fn bind_sizes(ty: &Type, v: &Value, sizes: &mut BTreeMap<String, i64>) {
    match (ty, v) {
        (Type::Array(elem, len), Value::Array(vs)) => {
            if let ArithExpr::Var(var) = len {
                sizes.entry(var.name.clone()).or_insert(vs.len() as i64);
            }
            if let Some(first) = vs.first() {
                bind_sizes(elem, first, sizes);
            }
        }
        (Type::Tuple(ts), Value::Tuple(vs)) => ts.iter().zip(vs).for_each(|(t, v)| bind_sizes(t, v, sizes)),
        _ => {}
    }
}

fn bindings(whole: &Type, sizes: &BTreeMap<String, i64>) -> String {
    let mut names = Vec::new();
    crate::types::size_names(whole, &mut names);
    let parts: Vec<String> =
        names.iter().filter_map(|n| sizes.get(n).map(|v| format!("{n} = {v}"))).collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" with {}", parts.join(", "))
    }
}

fn scalar_ok(s: ScalarType, v: &Value) -> bool {
    matches!((s, v), (ScalarType::Float, Value::Float(_)) | (ScalarType::Int, Value::Int(_)))
}

/// Checks `v` against `ty`; the message names the whole declared type.
fn check(ty: &Type, v: &Value, sizes: &BTreeMap<String, i64>, whole: &Type) -> Result<(), ArgumentProblem> {
    let fail = || ArgumentProblem::Mismatch {
        whole: whole.clone(),
        bound: bindings(whole, sizes),
        found: v.describe(),
    };
    match (ty, v) {
        (Type::Scalar(s), _) if scalar_ok(*s, v) => Ok(()),
        (Type::Vector(s, n), Value::Vector(cs))
            if cs.len() == *n as usize && cs.iter().all(|c| scalar_ok(*s, c)) =>
        {
            Ok(())
        }
        (Type::Tuple(ts), Value::Tuple(vs)) if ts.len() == vs.len() => {
            ts.iter().zip(vs).try_for_each(|(t, v)| check(t, v, sizes, whole))
        }
        (Type::Array(elem, len), Value::Array(vs)) => {
            let want = len
                .eval_with(&|n| sizes.get(n).copied())
                .map_err(|source| ArgumentProblem::Length { source, whole: whole.clone() })?;
            if want != vs.len() as i64 {
                return Err(fail());
            }
            vs.iter().try_for_each(|x| check(elem, x, sizes, whole))
        }
        _ => Err(fail()),
    }
}
