//! The type language of Lift (CGO 2017, Section 5.1): scalars, OpenCL
//! vectors, tuples, and arrays whose length is a symbolic expression.
//!
//! Type *inference* lives in `passes::typecheck`; this module only holds the
//! data types, their printing and C names, and [`HostArray`], the flat host
//! form of their values.

mod host;

pub use host::{check_host_bytes, host_cap_bytes, sizes_of, Arrays, HostArray, HostMemError, Sizes};

use crate::arith::ArithExpr;
use std::fmt;

/// Scalar element types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarType {
    Float,
    Int,
}

impl ScalarType {
    pub fn c_name(self) -> &'static str {
        match self {
            ScalarType::Float => "float",
            ScalarType::Int => "int",
        }
    }
}

/// A Lift type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    Scalar(ScalarType),
    /// An OpenCL vector such as `float4`; the width is 2, 3, 4, 8 or 16.
    Vector(ScalarType, u8),
    /// A tuple; becomes a struct with fields `_0`, `_1`, ... in OpenCL.
    Tuple(Vec<Type>),
    /// `[elem]len`.
    Array(Box<Type>, ArithExpr),
}

/// Vector widths OpenCL C provides.
pub const VECTOR_WIDTHS: [u8; 5] = [2, 3, 4, 8, 16];

impl Type {
    pub const FLOAT: Type = Type::Scalar(ScalarType::Float);
    pub const INT: Type = Type::Scalar(ScalarType::Int);

    pub fn array(elem: Type, len: ArithExpr) -> Type {
        Type::Array(Box::new(elem), len)
    }

    /// Size in bytes of one value, as an expression (arrays multiply out).
    /// Tuples are laid out as OpenCL structs (fields aligned to their size).
    pub fn size_in_bytes(&self) -> ArithExpr {
        match self {
            Type::Array(elem, len) => ArithExpr::mul(len.clone(), elem.size_in_bytes()),
            other => ArithExpr::Cst(other.scalar_like_bytes().unwrap_or(0)),
        }
    }

    /// Byte size of a non-array type, following OpenCL's layout rules.
    pub fn scalar_like_bytes(&self) -> Option<i64> {
        match self {
            Type::Scalar(_) => Some(4),
            // A 3-component vector occupies the space of a 4-component one.
            Type::Vector(_, n) => Some(4 * if *n == 3 { 4 } else { *n as i64 }),
            Type::Tuple(ts) => {
                let mut off = 0i64;
                let mut align = 1i64;
                for t in ts {
                    let sz = t.scalar_like_bytes()?;
                    let a = t.alignment()?;
                    off = (off + a - 1) / a * a + sz;
                    align = align.max(a);
                }
                Some((off + align - 1) / align * align)
            }
            Type::Array(..) => None,
        }
    }

    fn alignment(&self) -> Option<i64> {
        match self {
            Type::Scalar(_) => Some(4),
            Type::Vector(..) => self.scalar_like_bytes(),
            Type::Tuple(ts) => ts.iter().map(|t| t.alignment()).try_fold(1, |a, b| Some(a.max(b?))),
            Type::Array(..) => None,
        }
    }

    /// What `asScalar` makes of an element of this type, with the vector
    /// width `n` it multiplies the length by: a vector `<s>n` gives `s`, a
    /// tuple whose fields are all vectors of one width `n` the tuple of
    /// their scalars; `None` for anything else.
    pub fn as_scalar_elem(&self) -> Option<(Type, u8)> {
        match self {
            Type::Vector(s, n) => Some((Type::Scalar(*s), *n)),
            Type::Tuple(ts) => {
                let mut width = None;
                let mut fields = Vec::with_capacity(ts.len());
                for t in ts {
                    let Type::Vector(s, n) = t else { return None };
                    if *width.get_or_insert(*n) != *n {
                        return None;
                    }
                    fields.push(Type::Scalar(*s));
                }
                Some((Type::Tuple(fields), width?))
            }
            Type::Scalar(_) | Type::Array(..) => None,
        }
    }

    /// The innermost non-array element type.
    pub fn base_elem(&self) -> &Type {
        match self {
            Type::Array(e, _) => e.base_elem(),
            t => t,
        }
    }

    /// Array lengths from the outside in (`[[float]M]N` gives `[N, M]`).
    pub fn lengths(&self) -> Vec<ArithExpr> {
        let mut out = Vec::new();
        let mut t = self;
        while let Type::Array(e, n) = t {
            out.push(n.clone());
            t = e;
        }
        out
    }
}

/// The OpenCL C type of a non-array type; arrays give their element's type.
pub fn c_type(t: &Type) -> String {
    match t {
        Type::Scalar(s) => s.c_name().to_string(),
        Type::Vector(s, n) => format!("{}{}", s.c_name(), n),
        Type::Tuple(ts) => {
            // User-function bodies name tuple structs this way too
            // ([`type_from_c_name`] reads it back).
            let parts: Vec<String> = ts.iter().map(c_type).collect();
            format!("Tuple{}_{}", ts.len(), parts.join("_"))
        }
        Type::Array(e, _) => c_type(e),
    }
}

/// The scalar or vector type a name denotes (`float`, `int`, `float4`, ...).
pub fn named_type(name: &str) -> Option<Type> {
    let (scalar, rest) = if let Some(r) = name.strip_prefix("float") {
        (ScalarType::Float, r)
    } else if let Some(r) = name.strip_prefix("int") {
        (ScalarType::Int, r)
    } else {
        return None;
    };
    if rest.is_empty() {
        return Some(Type::Scalar(scalar));
    }
    let w: u8 = rest.parse().ok()?;
    VECTOR_WIDTHS.contains(&w).then_some(Type::Vector(scalar, w))
}

/// The inverse of [`c_type`] for the names a user-function body may use
/// (and the generator casts to): scalars, vectors and tuples of them.
pub fn type_from_c_name(name: &str) -> Option<Type> {
    if let Some(t) = named_type(name) {
        return Some(t);
    }
    let rest = name.strip_prefix("Tuple")?;
    let (count, fields) = rest.split_once('_')?;
    let n: usize = count.parse().ok()?;
    let ts: Option<Vec<Type>> = fields.split('_').map(named_type).collect();
    let ts = ts?;
    (ts.len() == n && n >= 2).then_some(Type::Tuple(ts))
}

/// The size names that occur in a type's array lengths, in order.
pub fn size_names(ty: &Type, out: &mut Vec<String>) {
    match ty {
        Type::Scalar(_) | Type::Vector(..) => {}
        Type::Tuple(ts) => ts.iter().for_each(|t| size_names(t, out)),
        Type::Array(elem, len) => {
            for v in len.vars() {
                if !out.contains(&v.name) {
                    out.push(v.name);
                }
            }
            size_names(elem, out)
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Scalar(s) => write!(f, "{}", s.c_name()),
            Type::Vector(s, n) => write!(f, "{}{}", s.c_name(), n),
            Type::Tuple(ts) => {
                write!(f, "(")?;
                for (i, t) in ts.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{t}")?;
                }
                write!(f, ")")
            }
            Type::Array(e, n) => {
                let simple = matches!(n, ArithExpr::Cst(_) | ArithExpr::Var(_));
                if simple {
                    write!(f, "[{e}]{n}")
                } else {
                    write!(f, "[{e}]({n})")
                }
            }
        }
    }
}
