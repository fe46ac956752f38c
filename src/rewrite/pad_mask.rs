//! `reduce-pad-mask`: padding a reduction behind a map that no constant
//! element takes to the neutral element, because the map reads a value
//! bound outside it (a softmax's `exp(x - m)`, `m` the row's maximum):
//! `reduce-pad` needs a `v` with `g(v) == z` for every `m`, which
//! evaluating `g` cannot show.
//!
//! `reduce(f, z) o map(g) $ xs` becomes
//! `reduce(f, z) o map(\t -> pick(get(1, t), g(get(0, t)), z)) $
//! zip(padConst(0, p, 0) $ xs, padConst(0, p, 0) $ generate(n, \i -> 1))`:
//! each element is zipped with a mask, 1 for the array's own `n` elements
//! and 0 for the `p` added ones, and `pick` (a user function the rule adds:
//! `k != 0 ? a : b`) keeps `g`'s value where the mask is 1 and gives `z`
//! where it is 0. `g` is still applied to the padding (to 0), and its value
//! discarded; no floating-point value can make the padding count, so the
//! rule holds for any `g`. (An integer `g` that divides by its element
//! faults on the padding in the interpreter: such a candidate fails its
//! validation and is never kept.) For a `zip`, each array is padded and the mask
//! is one more component; where `g` takes the zip's tuple as one parameter
//! (`\p -> h(get(0, p), get(1, p))`, as users write it), the padded zip
//! is zipped with the mask and `g` gets `get(0, t)`, the tuple. Both
//! `padConst`s and the `generate` are views: the padding costs
//! comparisons, not memory.

use super::algorithmic::{map_parts, reduce_parts, rule, B, R};
use super::rule::{apply_fun, arg, Args, Builder, ParamSpec, Rule, Site};
use crate::arith::ArithExpr;
use crate::ir::c::ast::{BinOp, CExpr, Stmt};
use crate::ir::{
    Expr, ExprKind, FunDecl, FunKind, Literal, MapKind, Pattern, ReduceKind, Span, UserFun, UserFunId,
};
use crate::types::{ScalarType, Type};

const NAME: &str = "reduce-pad-mask";

pub static RULES: [Rule; 1] = [rule(
    NAME,
    "reduce(f, z) o map(g) $ xs",
    "reduce(f, z) o map(\\t -> pick(get(1, t), g(get(0, t)), z)) $ zip(padConst(0, p, 0) $ xs, padConst(0, p, 0) $ generate(n, \\i -> 1))",
    &[ParamSpec { name: "p", what: "elements added at the end" }],
    m_pad_mask,
    b_pad_mask,
)];

/// What the rule pads: the map's function, the arrays (a `zip`'s, or the
/// one array) with their element types, their length `n` and `z`'s type.
struct Plan<'a> {
    g: &'a FunDecl,
    arrays: Vec<(&'a Expr, ScalarType)>,
    n: ArithExpr,
    z: ScalarType,
    /// `g` takes a zip's tuple whole: the padded arrays stay one zip.
    whole: bool,
}

fn no_match(s: &Site<'_>) -> super::rule::RuleError {
    s.no_match(
        NAME,
        "a high-level `reduce(f, z)` with a scalar constant `z` of `map(g)` of an array of scalars (or of a \
         `zip` of them, `g` taking one parameter per array)",
    )
}

fn m_pad_mask(s: &Site<'_>) -> R {
    plan(s).map(|_| ()).ok_or_else(|| no_match(s))
}

fn plan<'a>(s: &Site<'a>) -> Option<Plan<'a>> {
    let (kind, _, z, xs, _) = reduce_parts(s.expr)?;
    let z = match (&z.kind, kind) {
        (ExprKind::Literal(Literal::Float(_)), ReduceKind::Reduce) => ScalarType::Float,
        (ExprKind::Literal(Literal::Int(_)), ReduceKind::Reduce) => ScalarType::Int,
        _ => return None,
    };
    // `pick` takes `g`'s value and `z` alike: a fold whose elements are
    // not of `z`'s type (`reduce(\(acc, x) -> ..., 0.0f)` over ints) is
    // not padded.
    match s.ty(xs)? {
        Type::Array(elem, _) if **elem == Type::Scalar(z) => {}
        _ => return None,
    }
    let (_, g, ys, _) = map_parts(xs)?;
    let n = s.len(ys)?;
    let (arrays, zipped) = super::pad::scalar_arrays(s, ys)?;
    // A zip's elements are passed to `g` one per parameter.
    let arity = match &g.kind {
        FunKind::Lambda(l) => l.params.len(),
        FunKind::UserFun(id) => s.prog.user_fun(*id).params.len(),
        FunKind::Pattern(_) => 1,
    };
    let whole = zipped && arity == 1 && arrays.len() > 1;
    if zipped && arity != arrays.len() && !whole {
        return None;
    }
    Some(Plan { g, arrays, n, z, whole })
}

fn zero(t: ScalarType) -> Literal {
    match t {
        ScalarType::Float => Literal::Float(0.0),
        ScalarType::Int => Literal::Int(0),
    }
}

fn b_pad_mask(s: &Site<'_>, a: &Args, b: &mut Builder) -> B {
    let plan = plan(s).ok_or_else(|| no_match(s))?;
    let p = arg(NAME, a, "p")?;
    b.non_negative(NAME, &p)?;
    let (_, f, z, _, span) = reduce_parts(s.expr).ok_or_else(|| no_match(s))?;
    let pad = |b: &mut Builder, e: Expr, value: Literal| {
        let pc = Pattern::PadConst { left: ArithExpr::Cst(0), right: p.clone(), value };
        b.pattern(pc, vec![e], span)
    };
    let mut parts = Vec::new();
    for (e, t) in &plan.arrays {
        parts.push(pad(b, (*e).clone(), zero(*t)));
    }
    if plan.whole {
        let n = parts.len();
        parts = vec![b.pattern(Pattern::Zip(n), parts, span)];
    }
    let one = b.gen.lambda1(span, |g, _| g.expr(ExprKind::Literal(Literal::Int(1)), span));
    let ones = b.pattern(Pattern::Generate { len: plan.n.clone(), f: Box::new(one) }, vec![], span);
    parts.push(pad(b, ones, Literal::Int(0)));
    let k = parts.len();
    let zipped = b.pattern(Pattern::Zip(k), parts, span);
    let pick = pick_fun(b, plan.z);
    let fun = b.gen.lambda1(span, |gen, t| {
        let mut get = |i: usize| {
            let ti = gen.refresh_expr(&t);
            gen.call_pattern(Pattern::Get(i), vec![ti], span)
        };
        let elems: Vec<Expr> = (0..k - 1).map(&mut get).collect();
        let mask = get(k - 1);
        let value = apply_fun(gen, plan.g, elems, span);
        let zc = gen.refresh_expr(z);
        let pf = gen.fun(FunKind::UserFun(pick), span);
        gen.call(pf, vec![mask, value, zc], span)
    });
    let map = Pattern::Map { kind: MapKind::Map, f: Box::new(fun) };
    let mapped = b.pattern(map, vec![zipped], span);
    let r = Pattern::Reduce { kind: ReduceKind::Reduce, f: Box::new(f.clone()) };
    Ok(b.pattern(r, vec![z.clone(), mapped], span))
}

/// `userfun pick_T(k: int, a: T, b: T): T { return k != 0 ? a : b; }`,
/// added once (another name where the program has a different one).
fn pick_fun(b: &mut Builder, t: ScalarType) -> UserFunId {
    let ty = Type::Scalar(t);
    let tname = match t {
        ScalarType::Float => "float",
        ScalarType::Int => "int",
    };
    let body_text = " return k != 0 ? a : b; ".to_string();
    let params =
        vec![("k".to_string(), Type::INT), ("a".to_string(), ty.clone()), ("b".to_string(), ty.clone())];
    let same = |u: &UserFun| u.params == params && u.ret == ty && u.body_text == body_text;
    if let Some(i) = b.user_funs.iter().position(same) {
        return UserFunId(i as u32);
    }
    let mut name = format!("pick_{tname}");
    let mut k = 2;
    while b.user_funs.iter().any(|u| u.name == name) {
        name = format!("pick_{tname}_{k}");
        k += 1;
    }
    let var = |n: &str| CExpr::Var(n.to_string());
    let cond = CExpr::binary(BinOp::Ne, var("k"), CExpr::Int(0));
    let body = vec![Stmt::Return(CExpr::ternary(cond, var("a"), var("b")))];
    b.user_funs.push(UserFun { name, params, ret: ty, body_text, body, span: Span::default() });
    UserFunId(b.user_funs.len() as u32 - 1)
}
