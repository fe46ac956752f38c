//! The OpenCL built-in functions user-function bodies may call, evaluated
//! component-wise on vectors with scalar arguments broadcast, as in OpenCL.
//! Which calls are valid, and the parameter types the arguments convert
//! to, come from the table of `ir::c::builtins` (the parser's check uses the
//! same table).

use super::builtins::{self, CType};
use super::eval::convert;
use super::fault::Fault;
use crate::ir::Value;
use crate::types::{ScalarType, Type};

type F1 = fn(f32) -> f32;
type F2 = fn(f32, f32) -> f32;

/// One-argument float functions.
const UNARY: [(&str, F1); 38] = [
    ("sqrt", f32::sqrt),
    ("native_sqrt", f32::sqrt),
    ("half_sqrt", f32::sqrt),
    ("rsqrt", |x| 1.0 / x.sqrt()),
    ("native_rsqrt", |x| 1.0 / x.sqrt()),
    ("half_rsqrt", |x| 1.0 / x.sqrt()),
    ("fabs", f32::abs),
    ("exp", f32::exp),
    ("native_exp", f32::exp),
    ("half_exp", f32::exp),
    ("exp2", f32::exp2),
    ("native_exp2", f32::exp2),
    ("exp10", |x| 10f32.powf(x)),
    ("log", f32::ln),
    ("native_log", f32::ln),
    ("log2", f32::log2),
    ("native_log2", f32::log2),
    ("log10", f32::log10),
    ("cos", f32::cos),
    ("native_cos", f32::cos),
    ("sin", f32::sin),
    ("native_sin", f32::sin),
    ("tan", f32::tan),
    ("native_tan", f32::tan),
    ("acos", f32::acos),
    ("asin", f32::asin),
    ("atan", f32::atan),
    ("cosh", f32::cosh),
    ("sinh", f32::sinh),
    ("tanh", f32::tanh),
    ("floor", f32::floor),
    ("ceil", f32::ceil),
    ("round", f32::round),
    ("trunc", f32::trunc),
    ("native_recip", |x| 1.0 / x),
    ("half_recip", |x| 1.0 / x),
    ("cbrt", f32::cbrt),
    ("sign", |x| {
        if x > 0.0 {
            1.0
        } else if x < 0.0 {
            -1.0
        } else {
            0.0
        }
    }),
];

/// Two-argument float functions.
const BINARY: [(&str, F2); 14] = [
    ("pow", f32::powf),
    ("powr", f32::powf),
    ("native_powr", f32::powf),
    ("pown", f32::powf),
    ("fmin", f32::min),
    ("fmax", f32::max),
    ("fmod", |a, b| a % b),
    ("atan2", f32::atan2),
    ("hypot", f32::hypot),
    ("copysign", f32::copysign),
    ("native_divide", |a, b| a / b),
    ("half_divide", |a, b| a / b),
    ("step", |edge, x| if x < edge { 0.0 } else { 1.0 }),
    ("fdim", |a, b| if a > b { a - b } else { 0.0 }),
];

const OTHER: [&str; 14] = [
    "min",
    "max",
    "abs",
    "clamp",
    "mad",
    "fma",
    "mix",
    "select",
    "dot",
    "length",
    "distance",
    "normalize",
    "cross",
    "fast_length",
];

/// Whether `name` is a built-in this evaluator implements (every name of
/// `builtins`, checked by a test).
pub fn is_builtin(name: &str) -> bool {
    UNARY.iter().any(|(n, _)| *n == name) || BINARY.iter().any(|(n, _)| *n == name) || OTHER.contains(&name)
}

fn as_f32(v: &Value) -> Result<f32, Fault> {
    match v {
        Value::Float(f) => Ok(*f),
        Value::Int(i) => Ok(*i as f32),
        other => Err(Fault::NotANumber(other.clone())),
    }
}

/// The vector width of the arguments (1 for all scalars); vectors must agree.
fn width(args: &[Value]) -> Result<Option<usize>, Fault> {
    let mut w = None;
    for a in args {
        match a {
            Value::Vector(cs) => match w {
                Some(n) if n != cs.len() => return Err(Fault::ArgumentWidths),
                _ => w = Some(cs.len()),
            },
            Value::Float(_) | Value::Int(_) => {}
            other => return Err(Fault::NotNumeric(other.clone())),
        }
    }
    Ok(w)
}

fn component(v: &Value, i: usize) -> &Value {
    match v {
        Value::Vector(cs) => cs.get(i).unwrap_or(v),
        other => other,
    }
}

/// Applies `f` component-wise, broadcasting scalars.
pub fn componentwise(args: &[Value], f: &dyn Fn(&[&Value]) -> Result<Value, Fault>) -> Result<Value, Fault> {
    match width(args)? {
        None => f(&args.iter().collect::<Vec<_>>()),
        Some(n) => Ok(Value::Vector(
            (0..n)
                .map(|i| f(&args.iter().map(|a| component(a, i)).collect::<Vec<_>>()))
                .collect::<Result<_, _>>()?,
        )),
    }
}

fn floats(xs: &[&Value]) -> Result<Vec<f32>, Fault> {
    xs.iter().map(|x| as_f32(x)).collect()
}

fn components(v: &Value) -> Result<Vec<f32>, Fault> {
    match v {
        Value::Vector(cs) => cs.iter().map(as_f32).collect(),
        other => Ok(vec![as_f32(other)?]),
    }
}

fn dot(a: &Value, b: &Value) -> Result<f32, Fault> {
    let (a, b) = (components(a)?, components(b)?);
    if a.len() != b.len() {
        return Err(Fault::DotWidths);
    }
    Ok(a.iter().zip(&b).map(|(x, y)| x * y).sum())
}

/// The C type of a value, for overload resolution (a tuple is no argument
/// any built-in takes).
fn value_type(v: &Value) -> CType {
    CType::Lift(match v {
        Value::Int(_) => Type::INT,
        Value::Float(_) => Type::FLOAT,
        Value::Vector(cs) => {
            let s =
                if matches!(cs.first(), Some(Value::Int(_))) { ScalarType::Int } else { ScalarType::Float };
            Type::Vector(s, cs.len() as u8)
        }
        Value::Tuple(_) | Value::Array(_) => Type::Tuple(Vec::new()),
    })
}

/// Calls built-in `name`: resolves the overload as OpenCL does
/// (`ir::c::builtins`), converts the arguments to its parameter types
/// (`pown(x, 2.5f)` takes 2) and evaluates. The error is a message for the
/// caller to locate.
pub fn call_builtin(name: &str, args: &[Value]) -> Result<Value, Fault> {
    let args = resolve_args(name, args)?;
    let args = args.as_slice();
    if let Some((_, f)) = UNARY.iter().find(|(n, _)| *n == name) {
        arity(name, args, 1)?;
        return componentwise(args, &|x| Ok(Value::Float(f(as_f32(x[0])?))));
    }
    if let Some((_, f)) = BINARY.iter().find(|(n, _)| *n == name) {
        arity(name, args, 2)?;
        return componentwise(args, &|x| Ok(Value::Float(f(as_f32(x[0])?, as_f32(x[1])?))));
    }
    match name {
        "select" => select(args),
        "cross" => cross(args),
        "dot" | "length" | "fast_length" | "distance" | "normalize" => geometric(name, args),
        _ => common(name, args),
    }
}

/// The arguments converted to the parameter types of the overload of
/// `name` that OpenCL would call.
fn resolve_args(name: &str, args: &[Value]) -> Result<Vec<Value>, Fault> {
    let types: Vec<CType> = args.iter().map(value_type).collect();
    let resolved = builtins::resolve(name, &types).map_err(|e| {
        let found: Vec<String> = args
            .iter()
            .zip(&types)
            .map(|(v, t)| match v {
                Value::Tuple(_) | Value::Array(_) => v.describe(),
                Value::Int(_) | Value::Float(_) | Value::Vector(_) => t.c_name(),
            })
            .collect();
        Fault::NoOverload { name: name.to_string(), found, expected: e.expected }
    })?;
    args.iter().zip(&resolved.params).map(|(v, p)| convert(v.clone(), &p.lift())).collect()
}

fn arity(name: &str, args: &[Value], n: usize) -> Result<(), Fault> {
    if args.len() == n {
        Ok(())
    } else {
        Err(Fault::BuiltinArity { name: name.to_string(), want: n, got: args.len() })
    }
}

/// The common functions of OpenCL (integer and float), component by
/// component; any other name is unknown.
fn common(name: &str, args: &[Value]) -> Result<Value, Fault> {
    match name {
        "min" | "max" => {
            arity(name, args, 2)?;
            let is_min = name == "min";
            componentwise(args, &|x| {
                if let (Value::Int(a), Value::Int(b)) = (x[0], x[1]) {
                    return Ok(Value::Int(if is_min { *a.min(b) } else { *a.max(b) }));
                }
                let (a, b) = (as_f32(x[0])?, as_f32(x[1])?);
                Ok(Value::Float(if is_min { a.min(b) } else { a.max(b) }))
            })
        }
        "abs" => {
            arity(name, args, 1)?;
            componentwise(args, &|x| match x[0] {
                Value::Int(i) => Ok(Value::Int(i.wrapping_abs())),
                other => Ok(Value::Float(as_f32(other)?.abs())),
            })
        }
        "clamp" => {
            arity(name, args, 3)?;
            componentwise(args, &|x| {
                if let (Value::Int(v), Value::Int(lo), Value::Int(hi)) = (x[0], x[1], x[2]) {
                    return Ok(Value::Int(*v.max(lo).min(hi)));
                }
                let v = floats(x)?;
                Ok(Value::Float(v[0].max(v[1]).min(v[2])))
            })
        }
        "mad" | "fma" => {
            arity(name, args, 3)?;
            componentwise(args, &|x| {
                let v = floats(x)?;
                Ok(Value::Float(v[0].mul_add(v[1], v[2])))
            })
        }
        "mix" => {
            arity(name, args, 3)?;
            componentwise(args, &|x| {
                let v = floats(x)?;
                Ok(Value::Float(v[0] + (v[1] - v[0]) * v[2]))
            })
        }
        _ => Err(Fault::UnknownBuiltin(name.to_string())),
    }
}

/// `select(a, b, c)`: `c ? b : a`; for vectors the test is the sign bit.
fn select(args: &[Value]) -> Result<Value, Fault> {
    arity("select", args, 3)?;
    let vector = matches!(args[2], Value::Vector(_));
    componentwise(args, &|x| {
        let c = match x[2] {
            Value::Int(i) => {
                if vector {
                    *i < 0
                } else {
                    *i != 0
                }
            }
            other => as_f32(other)? != 0.0,
        };
        Ok(if c { x[1].clone() } else { x[0].clone() })
    })
}

/// The geometric functions of OpenCL, over whole vectors.
fn geometric(name: &str, args: &[Value]) -> Result<Value, Fault> {
    match name {
        "dot" => {
            arity(name, args, 2)?;
            Ok(Value::Float(dot(&args[0], &args[1])?))
        }
        "length" | "fast_length" => {
            arity(name, args, 1)?;
            Ok(Value::Float(dot(&args[0], &args[0])?.sqrt()))
        }
        "distance" => {
            arity(name, args, 2)?;
            let (a, b) = (components(&args[0])?, components(&args[1])?);
            Ok(Value::Float(a.iter().zip(&b).map(|(x, y)| (x - y) * (x - y)).sum::<f32>().sqrt()))
        }
        "normalize" => {
            arity(name, args, 1)?;
            let len = dot(&args[0], &args[0])?.sqrt();
            componentwise(args, &|x| Ok(Value::Float(as_f32(x[0])? / len)))
        }
        _ => Err(Fault::UnknownBuiltin(name.to_string())),
    }
}

fn cross(args: &[Value]) -> Result<Value, Fault> {
    arity("cross", args, 2)?;
    let (a, b) = (components(&args[0])?, components(&args[1])?);
    if a.len() < 3 || b.len() != a.len() {
        return Err(Fault::Cross);
    }
    let mut out = vec![a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
    out.resize(a.len(), 0.0);
    Ok(Value::Vector(out.into_iter().map(Value::Float).collect()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn implements_exactly_the_builtins_of_the_c_subset() {
        for name in crate::ir::c::builtins::names() {
            assert!(super::is_builtin(name), "`{name}` is not implemented");
        }
        let implemented = super::UNARY.iter().map(|(n, _)| *n).chain(super::BINARY.iter().map(|(n, _)| *n));
        for name in implemented.chain(super::OTHER) {
            assert!(crate::ir::c::is_builtin(name), "`{name}` is not in ir::c::builtins");
        }
    }
}
