//! The OpenCL C 1.2 built-ins a user-function body may call (spec §6.12,
//! restricted to the `float` and `int` element types of Lift), with their
//! overloads, and the overload resolution an OpenCL compiler does on a
//! call. The parser refuses a call that resolves to no overload or to
//! several equally good ones (the driver would refuse the kernel); the
//! interpreter converts the arguments to the parameter types of the
//! overload this resolution picks, so the two agree by construction.
//!
//! Resolution follows the C++-style ranking clang applies to OpenCL's
//! overloaded built-ins: per argument an exact match beats a promotion
//! (`float` to `double`), which beats a scalar conversion (`int` to
//! `float`), which beats a splat of a scalar to a vector (checked on PoCL:
//! `clamp(float4, int, int)` picks `(float4, float, float)`). Vectors never
//! convert to other vectors. Besides the `float` overloads, most math
//! built-ins have `double` ones (so `fabs(int)` is ambiguous, and an
//! unsuffixed literal `1.0` is a `double`, so `fmax(x, 1.0)` of a float
//! `x` is ambiguous too); `native_*`, `half_*` and `fast_length` have none.
//! Integer built-ins also exist for `uint`, `long`, ... (so `abs(float)` is
//! ambiguous); those are the [`P::OtherInt`] candidates here.

use crate::types::{ScalarType, Type};

/// The type of a C value in a user-function body as overload resolution
/// sees it: a Lift type, or `double` (an unsuffixed floating literal and
/// arithmetic on it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CType {
    Lift(Type),
    Double,
}

impl CType {
    /// The type the interpreter computes in (`double` is evaluated in f32).
    pub fn lift(&self) -> Type {
        match self {
            CType::Lift(t) => t.clone(),
            CType::Double => Type::FLOAT,
        }
    }

    /// The OpenCL C name (`float4`, `double`, `Tuple2_float_int`).
    pub fn c_name(&self) -> String {
        match self {
            CType::Lift(t) => crate::types::c_type(t),
            CType::Double => "double".to_string(),
        }
    }
}

/// Which element types a built-in's gentype ranges over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    /// `float`, `floatn`, and `double`, `doublen` overloads.
    Float,
    /// `float`, `floatn` only (`native_*`, `half_*`, `fast_length`).
    FloatOnly,
    /// `int`, `intn` (and other integer types).
    Int,
    /// Both float (with double) and integer overloads (`min`, `max`, `clamp`, `select`).
    Both,
}

/// The argument shapes of a built-in; `G` is the gentype (scalar or
/// vector), `S` its element type, `IG` an `int` of `G`'s width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// `G f(G)`.
    Unary,
    /// `G f(G, G)`.
    Binary,
    /// `G f(G, G)` and `Gn f(Gn, S)` (`fmin`, `fmax`, `min`, `max`).
    BinaryOrScalar,
    /// `G f(G, IG)` (`pown`).
    PowN,
    /// `G f(G, G)` and `Gn f(S, Gn)` (`step`).
    Step,
    /// `G f(G, G, G)` (`mad`, `fma`).
    Ternary,
    /// `G f(G, G, G)` and `Gn f(Gn, Gn, S)` (`mix`).
    Mix,
    /// `G f(G, G, G)` and `Gn f(Gn, S, S)` (`clamp`).
    Clamp,
    /// `G f(G, G, IG)` (`select`; the test is an integer).
    Select,
    /// `S f(G, G)` for widths 1 to 4 (`dot`, `distance`).
    Dot,
    /// `S f(G)` for widths 1 to 4 (`length`, `fast_length`).
    Length,
    /// `G f(G)` for widths 1 to 4 (`normalize`).
    Normalize,
    /// `G f(G, G)` for widths 3 and 4 (`cross`).
    Cross,
}

use Family::{Both, Float, FloatOnly, Int};
use Shape::*;

/// Every built-in a body may call.
const TABLE: [(&str, Shape, Family); 66] = [
    ("sqrt", Unary, Float),
    ("native_sqrt", Unary, FloatOnly),
    ("half_sqrt", Unary, FloatOnly),
    ("rsqrt", Unary, Float),
    ("native_rsqrt", Unary, FloatOnly),
    ("half_rsqrt", Unary, FloatOnly),
    ("fabs", Unary, Float),
    ("exp", Unary, Float),
    ("native_exp", Unary, FloatOnly),
    ("half_exp", Unary, FloatOnly),
    ("exp2", Unary, Float),
    ("native_exp2", Unary, FloatOnly),
    ("exp10", Unary, Float),
    ("log", Unary, Float),
    ("native_log", Unary, FloatOnly),
    ("log2", Unary, Float),
    ("native_log2", Unary, FloatOnly),
    ("log10", Unary, Float),
    ("cos", Unary, Float),
    ("native_cos", Unary, FloatOnly),
    ("sin", Unary, Float),
    ("native_sin", Unary, FloatOnly),
    ("tan", Unary, Float),
    ("native_tan", Unary, FloatOnly),
    ("acos", Unary, Float),
    ("asin", Unary, Float),
    ("atan", Unary, Float),
    ("cosh", Unary, Float),
    ("sinh", Unary, Float),
    ("tanh", Unary, Float),
    ("floor", Unary, Float),
    ("ceil", Unary, Float),
    ("round", Unary, Float),
    ("trunc", Unary, Float),
    ("native_recip", Unary, FloatOnly),
    ("half_recip", Unary, FloatOnly),
    ("cbrt", Unary, Float),
    ("sign", Unary, Float),
    ("pow", Binary, Float),
    ("powr", Binary, Float),
    ("native_powr", Binary, FloatOnly),
    ("pown", PowN, Float),
    ("fmin", BinaryOrScalar, Float),
    ("fmax", BinaryOrScalar, Float),
    ("fmod", Binary, Float),
    ("atan2", Binary, Float),
    ("hypot", Binary, Float),
    ("copysign", Binary, Float),
    ("native_divide", Binary, FloatOnly),
    ("half_divide", Binary, FloatOnly),
    ("step", Step, Float),
    ("fdim", Binary, Float),
    ("min", BinaryOrScalar, Both),
    ("max", BinaryOrScalar, Both),
    // `abs` returns the unsigned type in OpenCL; Lift has none, so it is an
    // `int` here (the two differ only for `abs(INT_MIN)`).
    ("abs", Unary, Int),
    ("clamp", Clamp, Both),
    ("mad", Ternary, Float),
    ("fma", Ternary, Float),
    ("mix", Mix, Float),
    ("select", Select, Both),
    ("dot", Dot, Float),
    ("length", Length, Float),
    ("distance", Dot, Float),
    ("normalize", Normalize, Float),
    ("cross", Cross, Float),
    ("fast_length", Length, FloatOnly),
];

/// The names of all built-ins, in table order.
pub fn names() -> impl Iterator<Item = &'static str> {
    TABLE.iter().map(|(n, _, _)| *n)
}

/// Whether `name` is a built-in a body may call.
pub fn is_builtin(name: &str) -> bool {
    TABLE.iter().any(|(n, _, _)| *n == name)
}

/// A parameter type of a candidate overload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum P {
    /// `float`/`int` (width 1) or a vector of them.
    Lift(ScalarType, u8),
    /// `double` (width 1) or `doublen`.
    Double(u8),
    /// One of the other integer types (`uint`, `long`, ...) of a width:
    /// only ever reached by a conversion, so it only makes calls ambiguous.
    OtherInt(u8),
}

impl P {
    fn width(self) -> u8 {
        match self {
            P::Lift(_, n) | P::Double(n) | P::OtherInt(n) => n,
        }
    }

    fn scalar(self) -> P {
        match self {
            P::Lift(s, _) => P::Lift(s, 1),
            P::Double(_) => P::Double(1),
            P::OtherInt(_) => P::OtherInt(1),
        }
    }

    fn int_of_width(self) -> P {
        P::Lift(ScalarType::Int, self.width())
    }

    fn ctype(self) -> CType {
        match self {
            P::Lift(s, 1) => CType::Lift(Type::Scalar(s)),
            P::Lift(s, n) => CType::Lift(Type::Vector(s, n)),
            P::Double(_) => CType::Double,
            P::OtherInt(_) => CType::Lift(Type::INT),
        }
    }
}

/// The argument as resolution sees it: a scalar (`int`, `float`,
/// `double`), a vector, or something no built-in takes (a tuple).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum A {
    Int,
    Float,
    Double,
    Vector(ScalarType, u8),
    Other,
}

fn arg_kind(t: &CType) -> A {
    match t {
        CType::Double => A::Double,
        CType::Lift(Type::Scalar(ScalarType::Int)) => A::Int,
        CType::Lift(Type::Scalar(ScalarType::Float)) => A::Float,
        CType::Lift(Type::Vector(s, n)) => A::Vector(*s, *n),
        CType::Lift(Type::Tuple(_) | Type::Array(..)) => A::Other,
    }
}

/// How an argument reaches a parameter; lower is better. `None`: not at all.
fn rank(a: A, p: P) -> Option<u8> {
    const EXACT: u8 = 0;
    const PROMOTION: u8 = 1;
    const CONVERSION: u8 = 2;
    const SPLAT: u8 = 3;
    let scalar = matches!(a, A::Int | A::Float | A::Double);
    match (a, p) {
        (A::Other, _) => None,
        (A::Vector(s, n), P::Lift(t, m)) => (s == t && n == m && m > 1).then_some(EXACT),
        (A::Vector(..), P::Double(_) | P::OtherInt(_)) => None,
        (_, p) if p.width() > 1 => scalar.then_some(SPLAT),
        (A::Int, P::Lift(ScalarType::Int, _))
        | (A::Float, P::Lift(ScalarType::Float, _))
        | (A::Double, P::Double(_)) => Some(EXACT),
        (A::Float, P::Double(_)) => Some(PROMOTION),
        _ => Some(CONVERSION),
    }
}

/// One candidate overload: parameter types and result type.
struct Overload {
    params: Vec<P>,
    ret: P,
}

/// The candidates of a built-in, of gentype width `only` where given.
fn overloads(shape: Shape, family: Family, only: Option<u8>) -> Vec<Overload> {
    let mut gentypes: Vec<P> = Vec::new();
    let widths: &[u8] = match shape {
        Dot | Length | Normalize => &[1, 2, 3, 4],
        Cross => &[3, 4],
        _ => &[1, 2, 3, 4, 8, 16],
    };
    for &w in widths.iter().filter(|w| only.is_none_or(|o| o == **w)) {
        if matches!(family, Float | FloatOnly | Both) {
            gentypes.push(P::Lift(ScalarType::Float, w));
            if family != FloatOnly {
                gentypes.push(P::Double(w));
            }
        }
        if matches!(family, Int | Both) {
            gentypes.push(P::Lift(ScalarType::Int, w));
            gentypes.push(P::OtherInt(w));
        }
    }
    let mut out = Vec::new();
    for g in gentypes {
        let s = g.scalar();
        let vector = g.width() > 1;
        let mut add = |params: Vec<P>, ret: P| out.push(Overload { params, ret });
        match shape {
            Unary | Normalize => add(vec![g], g),
            Binary | Cross => add(vec![g, g], g),
            BinaryOrScalar => {
                add(vec![g, g], g);
                if vector {
                    add(vec![g, s], g);
                }
            }
            PowN => add(vec![g, g.int_of_width()], g),
            Step => {
                add(vec![g, g], g);
                if vector {
                    add(vec![s, g], g);
                }
            }
            Ternary => add(vec![g, g, g], g),
            Mix => {
                add(vec![g, g, g], g);
                if vector {
                    add(vec![g, g, s], g);
                }
            }
            Clamp => {
                add(vec![g, g, g], g);
                if vector {
                    add(vec![g, s, s], g);
                }
            }
            Select => {
                // The test is `int`/`intn` or `uint`/`uintn` of G's width.
                add(vec![g, g, g.int_of_width()], g);
                add(vec![g, g, P::OtherInt(g.width())], g);
            }
            Dot => add(vec![g, g], s),
            Length => add(vec![g], s),
        }
    }
    out
}

/// The overload a call resolves to: its parameter types (what the
/// interpreter converts the arguments to) and its result type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    pub params: Vec<CType>,
    pub ret: CType,
}

/// Why a call resolves to no overload: a one-line explanation of what the
/// built-in accepts (the caller adds the position and the call found).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoOverload {
    pub expected: String,
}

/// Resolves a call of built-in `name` with arguments of types `args`, as an
/// OpenCL C compiler does.
pub fn resolve(name: &str, args: &[CType]) -> Result<Resolved, NoOverload> {
    let Some((_, shape, family)) = TABLE.iter().find(|(n, _, _)| *n == name) else {
        return Err(NoOverload { expected: "an OpenCL built-in".to_string() });
    };
    let kinds: Vec<A> = args.iter().map(arg_kind).collect();
    // Only overloads of a vector argument's width can take it; with scalar
    // arguments only, a scalar overload beats every vector one (it needs
    // no splat), so those need not be tried (the interpreter resolves every
    // call it evaluates). `cross` has no scalar overload.
    let vector_width = kinds.iter().find_map(|a| match a {
        A::Vector(_, n) => Some(*n),
        A::Int | A::Float | A::Double | A::Other => None,
    });
    let only = vector_width.or((*shape != Cross).then_some(1));
    let viable: Vec<(Overload, Vec<u8>)> = overloads(*shape, *family, only)
        .into_iter()
        .filter(|o| o.params.len() == kinds.len())
        .filter_map(|o| {
            let ranks: Option<Vec<u8>> = kinds.iter().zip(&o.params).map(|(a, p)| rank(*a, *p)).collect();
            ranks.map(|r| (o, r))
        })
        .collect();
    // Better: no argument worse, at least one better.
    let better =
        |x: &[u8], y: &[u8]| x.iter().zip(y).all(|(a, b)| a <= b) && x.iter().zip(y).any(|(a, b)| a < b);
    let best: Vec<&(Overload, Vec<u8>)> = viable
        .iter()
        .filter(|(_, r)| viable.iter().all(|(_, q)| std::ptr::eq(r, q) || better(r, q)))
        .collect();
    let fail = |why: &str| NoOverload { expected: format!("{} ({why})", signature(name, *shape, *family)) };
    match best.as_slice() {
        [(o, _)] if !o.params.iter().chain([&o.ret]).any(|p| matches!(p, P::OtherInt(_))) => {
            Ok(Resolved { params: o.params.iter().map(|p| p.ctype()).collect(), ret: o.ret.ctype() })
        }
        [_] => Err(fail("the best match is an integer type Lift does not have")),
        _ if viable.is_empty() => match arity(name) {
            Some(n) if n != args.len() => {
                Err(fail(&format!("it takes {n} argument{}", if n == 1 { "" } else { "s" })))
            }
            _ => Err(fail("no overload takes these arguments")),
        },
        _ => Err(fail(
            "several overloads match equally well: OpenCL also has double and unsigned ones, \
             so write 1.0f rather than 1.0 and cast with (float) or (int)",
        )),
    }
}

/// How many arguments every overload of built-in `name` takes.
pub fn arity(name: &str) -> Option<usize> {
    let (_, shape, family) = TABLE.iter().find(|(n, _, _)| *n == name)?;
    overloads(*shape, *family, None).first().map(|o| o.params.len())
}

/// What a built-in accepts, for error messages:
/// `fmin(G, G) or fmin(Gn, S) for G float or floatn (n = 2, 3, 4, 8, 16), S float`.
fn signature(name: &str, shape: Shape, family: Family) -> String {
    let forms: &[&str] = match shape {
        Unary | Normalize | Length => &["G"],
        Binary | Cross | Dot => &["G, G"],
        BinaryOrScalar => &["G, G", "Gn, S"],
        PowN => &["G, intn of G's width"],
        Step => &["G, G", "S, Gn"],
        Ternary => &["G, G, G"],
        Mix => &["G, G, G", "Gn, Gn, S"],
        Clamp => &["G, G, G", "Gn, S, S"],
        Select => &["G, G, intn of G's width"],
    };
    let calls: Vec<String> = forms.iter().map(|f| format!("{name}({f})")).collect();
    let widths = match shape {
        Dot | Length | Normalize => "n = 2, 3, 4",
        _ => "n = 2, 3, 4, 8, 16",
    };
    let g = match (shape, family) {
        (Cross, _) => "float3 or float4".to_string(),
        (Select, _) | (_, Both) => format!("int, float, intn or floatn ({widths})"),
        (_, Float | FloatOnly) => format!("float or floatn ({widths})"),
        (_, Int) => format!("int or intn ({widths})"),
    };
    let s = match family {
        _ if !forms.iter().any(|f| f.contains('S')) => "",
        Both => ", S the element type of Gn",
        Float | FloatOnly | Int => ", S float",
    };
    let ret = if matches!(shape, Dot | Length) { "; the result is a float" } else { "" };
    format!("{} for G {g}{s}{ret}", calls.join(" or "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(a: &str) -> CType {
        if a == "1.0" {
            return CType::Double;
        }
        let (s, w) = match a.as_bytes()[0] {
            b'i' => (ScalarType::Int, &a[1..]),
            _ => (ScalarType::Float, &a[1..]),
        };
        match w.parse::<u8>() {
            Ok(n) => CType::Lift(Type::Vector(s, n)),
            Err(_) => CType::Lift(Type::Scalar(s)),
        }
    }

    /// Resolution agrees with what PoCL's compiler builds, call by call.
    #[test]
    fn resolution_matches_the_calls_pocl_builds() {
        let mut checked = 0;
        for line in include_str!("builtins_pocl.txt").lines().filter(|l| !l.starts_with('#')) {
            let (verdict, call) = line.split_once(' ').unwrap();
            let (name, rest) = call.split_once('(').unwrap();
            let args: Vec<CType> =
                rest.trim_end_matches(')').split(',').filter(|a| !a.is_empty()).map(ty).collect();
            let got = resolve(name, &args);
            assert_eq!(got.is_ok(), verdict == "OK", "{call}: {got:?}");
            checked += 1;
        }
        assert!(checked > 200, "{checked} calls");
    }

    #[test]
    fn picks_the_overload_whose_parameters_the_interpreter_converts_to() {
        let f4 = CType::Lift(Type::Vector(ScalarType::Float, 4));
        let int = CType::Lift(Type::INT);
        let float = CType::Lift(Type::FLOAT);
        let r = resolve("clamp", &[f4.clone(), int.clone(), int.clone()]).unwrap();
        assert_eq!(r.params, vec![f4.clone(), float.clone(), float.clone()]);
        assert_eq!(r.ret, f4);
        let r = resolve("pown", &[float.clone(), float.clone()]).unwrap();
        assert_eq!(r.params, vec![float.clone(), int.clone()]);
        assert_eq!(resolve("dot", &[f4.clone(), f4.clone()]).unwrap().ret, float);
        assert_eq!(resolve("sqrt", &[CType::Double]).unwrap().ret, CType::Double);
        assert_eq!(resolve("abs", std::slice::from_ref(&int)).unwrap().ret, int);
    }

    #[test]
    fn every_builtin_has_overloads() {
        for (name, shape, family) in TABLE {
            assert!(!overloads(shape, family, None).is_empty(), "{name}");
        }
    }
}
