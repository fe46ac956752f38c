//! The values Lift programs compute: what the interpreter and the
//! evaluation of user-function bodies (`c::eval`) produce.

/// A value: scalars, vectors (components are scalars), tuples and arrays.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Float(f32),
    Int(i32),
    Vector(Vec<Value>),
    Tuple(Vec<Value>),
    Array(Vec<Value>),
}

impl Value {
    /// Whether two values have the same kind and structure (the lengths
    /// of vectors, tuples and arrays), element values aside.
    pub fn same_shape(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Float(_), Value::Float(_)) | (Value::Int(_), Value::Int(_)) => true,
            (Value::Vector(a), Value::Vector(b))
            | (Value::Tuple(a), Value::Tuple(b))
            | (Value::Array(a), Value::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same_shape(y))
            }
            (Value::Float(_) | Value::Int(_) | Value::Vector(_) | Value::Tuple(_) | Value::Array(_), _) => {
                false
            }
        }
    }

    /// Flattens to f64s in memory order (arrays and vectors row-major,
    /// tuples field by field).
    pub fn flatten(&self, out: &mut Vec<f64>) {
        match self {
            Value::Float(f) => out.push(*f as f64),
            Value::Int(i) => out.push(*i as f64),
            Value::Vector(vs) | Value::Tuple(vs) | Value::Array(vs) => vs.iter().for_each(|v| v.flatten(out)),
        }
    }
}

impl Value {
    /// A short description for error messages (`an array of 99`).
    pub fn describe(&self) -> String {
        match self {
            Value::Float(f) => format!("the float {f}"),
            Value::Int(i) => format!("the int {i}"),
            Value::Vector(vs) => format!("a vector of {}", vs.len()),
            Value::Tuple(vs) => format!("a tuple of {}", vs.len()),
            Value::Array(vs) => format!("an array of {}", vs.len()),
        }
    }
}
