//! Conversions between values and flat host arrays (row-major, vector
//! components and tuple fields consecutive), for the harness and `lift exec`.

use super::error::{DataProblem, InterpError};
use crate::ir::Value;
use crate::types::{HostArray, ScalarType, Type};
use std::collections::BTreeMap;

/// Builds a value of type `ty` from flat data; array lengths are evaluated
/// with `sizes` and the data must have exactly the needed element count.
/// Float slots read from int data convert; int slots read from float data
/// must hold whole numbers.
pub fn value_from_flat(
    ty: &Type,
    data: &HostArray,
    sizes: &BTreeMap<String, i64>,
) -> Result<Value, InterpError> {
    let mut pos = 0usize;
    let v = read(ty, data, sizes, &mut pos)?;
    if pos != data.len() {
        return Err(data_err(DataProblem::Count { ty: ty.clone(), used: pos, len: data.len() }));
    }
    Ok(v)
}

fn data_err(problem: DataProblem) -> InterpError {
    InterpError::Data(Box::new(problem))
}

fn read(
    ty: &Type,
    data: &HostArray,
    sizes: &BTreeMap<String, i64>,
    pos: &mut usize,
) -> Result<Value, InterpError> {
    match ty {
        Type::Scalar(s) => scalar(*s, data, pos),
        Type::Vector(s, n) => {
            Ok(Value::Vector((0..*n).map(|_| scalar(*s, data, pos)).collect::<Result<_, _>>()?))
        }
        Type::Tuple(ts) => {
            Ok(Value::Tuple(ts.iter().map(|t| read(t, data, sizes, pos)).collect::<Result<_, _>>()?))
        }
        Type::Array(elem, len) => {
            let n = len
                .eval_with(&|name| sizes.get(name).copied())
                .map_err(|source| data_err(DataProblem::Length { ty: ty.clone(), source }))?;
            if n < 0 || n as usize > data.len() {
                return Err(data_err(DataProblem::LengthFit { n, ty: ty.clone(), len: data.len() }));
            }
            Ok(Value::array((0..n).map(|_| read(elem, data, sizes, pos)).collect::<Result<_, _>>()?))
        }
    }
}

fn scalar(s: ScalarType, data: &HostArray, pos: &mut usize) -> Result<Value, InterpError> {
    let i = *pos;
    *pos += 1;
    let short = || data_err(DataProblem::Short { len: data.len() });
    match (s, data) {
        (ScalarType::Float, HostArray::F32(v)) => v.get(i).map(|x| Value::Float(*x)).ok_or_else(short),
        (ScalarType::Float, HostArray::I32(v)) => v.get(i).map(|x| Value::Float(*x as f32)).ok_or_else(short),
        (ScalarType::Int, HostArray::I32(v)) => v.get(i).map(|x| Value::Int(*x)).ok_or_else(short),
        (ScalarType::Int, HostArray::F32(v)) => {
            let x = *v.get(i).ok_or_else(short)?;
            if x.fract() != 0.0 || x.abs() > i32::MAX as f32 {
                return Err(data_err(DataProblem::NotInt { i, x }));
            }
            Ok(Value::Int(x as i32))
        }
    }
}

/// Flattens a value; any float inside makes the result `F32` (ints convert),
/// otherwise it is `I32`.
pub fn value_to_flat(v: &Value) -> HostArray {
    fn has_float(v: &Value) -> bool {
        match v {
            Value::Float(_) => true,
            Value::Int(_) => false,
            Value::Vector(vs) | Value::Tuple(vs) => vs.iter().any(has_float),
            Value::Array(vs) => vs.iter().any(has_float),
        }
    }
    fn walk(v: &Value, f: &mut dyn FnMut(&Value)) {
        match v {
            Value::Float(_) | Value::Int(_) => f(v),
            Value::Vector(vs) | Value::Tuple(vs) => vs.iter().for_each(|x| walk(x, f)),
            Value::Array(vs) => vs.iter().for_each(|x| walk(x, f)),
        }
    }
    if has_float(v) {
        let mut out = Vec::new();
        walk(v, &mut |x| {
            out.push(match x {
                Value::Float(f) => *f,
                Value::Int(i) => *i as f32,
                _ => 0.0,
            })
        });
        HostArray::F32(out)
    } else {
        let mut out = Vec::new();
        walk(v, &mut |x| {
            if let Value::Int(i) = x {
                out.push(*i)
            }
        });
        HostArray::I32(out)
    }
}
