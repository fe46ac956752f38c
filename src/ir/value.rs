//! The values Lift programs compute: what the interpreter and the
//! evaluation of user-function bodies (`c::eval`) produce.

use std::sync::Arc;

/// A value: scalars, vectors (components are scalars), tuples and arrays.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Float(f32),
    Int(i32),
    Vector(Vec<Value>),
    Tuple(Vec<Value>),
    Array(Elems),
}

/// The elements of an array value, shared between copies: a `slide`'s
/// windows, a parameter read in every iteration of a map, and an element
/// taken by `at` refer to the same rows instead of copying them (deep
/// copies of a 3D stencil's windows took most of the interpreter's time
/// and memory).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Elems(Arc<Vec<Value>>);

impl Elems {
    /// The elements, copied only where another value shares them.
    pub fn into_vec(self) -> Vec<Value> {
        Arc::unwrap_or_clone(self.0)
    }
}

impl std::ops::Deref for Elems {
    type Target = Vec<Value>;
    fn deref(&self) -> &Vec<Value> {
        &self.0
    }
}

impl From<Vec<Value>> for Elems {
    fn from(v: Vec<Value>) -> Elems {
        Elems(Arc::new(v))
    }
}

impl FromIterator<Value> for Elems {
    fn from_iter<I: IntoIterator<Item = Value>>(it: I) -> Elems {
        Elems(Arc::new(it.into_iter().collect()))
    }
}

impl<'a> IntoIterator for &'a Elems {
    type Item = &'a Value;
    type IntoIter = std::slice::Iter<'a, Value>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl Value {
    /// An array value of `elems`.
    pub fn array(elems: Vec<Value>) -> Value {
        Value::Array(elems.into())
    }

    /// Whether two values have the same kind and structure (the lengths
    /// of vectors, tuples and arrays), element values aside.
    pub fn same_shape(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Float(_), Value::Float(_)) | (Value::Int(_), Value::Int(_)) => true,
            (Value::Vector(a), Value::Vector(b)) | (Value::Tuple(a), Value::Tuple(b)) => same_shapes(a, b),
            (Value::Array(a), Value::Array(b)) => same_shapes(a, b),
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
            Value::Vector(vs) | Value::Tuple(vs) => vs.iter().for_each(|v| v.flatten(out)),
            Value::Array(vs) => vs.iter().for_each(|v| v.flatten(out)),
        }
    }
}

fn same_shapes(a: &[Value], b: &[Value]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same_shape(y))
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
