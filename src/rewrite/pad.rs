//! `reduce-pad`: a reduction of an array whose length has few divisors
//! (12,345,677 = 29 x 425,713; a row of 1021) is the reduction of the
//! array padded with elements that change nothing. Splitting a reduction
//! (`reduce-partred`, `partred-split`) needs a chunk that divides the
//! length; padded to a multiple of a power of two, every chunk up to it
//! does.
//!
//! - `reduce(f, z) $ xs` becomes `reduce(f, z) $ padConst(0, p, z) $ xs`:
//!   the added elements are `z`, neutral for `f` (`reduce`'s promise).
//! - `reduce(f, z) $ map(g) $ xs` becomes `reduce(f, z) $ map(g) $
//!   padConst(0, p, v) $ xs` (for a `zip`, each array padded with its own
//!   component of `v`), for a `v` with `g(v) == z`: the map's result is
//!   the padded one and the map stays in front of the reduction, where the
//!   reduction shapes fuse it. The side condition is checked by evaluating
//!   `g` (`interp::apply_closed`), trying 0, 1 and `z` in each component's
//!   type; a `g` that reads anything but its argument (a def's scalar) is
//!   not padded.
//!
//! `padConst` is a view: the kernel reads `xs` where the index is inside it
//! and the constant elsewhere, so padding costs a comparison per element,
//! not memory.

use super::algorithmic::{map_parts, reduce_parts, rule, B, R};
use super::rule::{arg, Args, Builder, ParamSpec, Rule, Site};
use crate::ir::{Expr, ExprKind, FunKind, Literal, Pattern, ReduceKind, Value};
use crate::types::{ScalarType, Type};

pub static RULES: [Rule; 1] = [rule(
    "reduce-pad",
    "reduce(f, z) $ xs | reduce(f, z) o map(g) $ xs",
    "reduce(f, z) $ padConst(0, p, z) $ xs | reduce(f, z) o map(g) o padConst(0, p, v) $ xs   (g(v) = z)",
    &[ParamSpec { name: "p", what: "elements added at the end" }],
    m_reduce_pad,
    b_reduce_pad,
)];

/// What is padded, and with what: each array and its constant.
struct Plan<'a> {
    /// The map in front of the reduction, if any (it is rebuilt around the
    /// padded arrays).
    map: Option<&'a Expr>,
    /// The arrays padded: `xs`, or the arrays a `zip` combines.
    arrays: Vec<(&'a Expr, Literal)>,
    /// Whether the arrays are a `zip`'s (the zip is rebuilt).
    zipped: bool,
}

fn m_reduce_pad(s: &Site<'_>) -> R {
    plan(s).map(|_| ()).ok_or_else(|| no_pad(s))
}

fn no_pad(s: &Site<'_>) -> super::rule::RuleError {
    s.no_match(
        "reduce-pad",
        "a high-level `reduce(f, z)` with a constant `z`, of an array or of `map(g)` of one (or of a `zip`) \
         where `g` gives `z` for a constant element",
    )
}

fn b_reduce_pad(s: &Site<'_>, a: &Args, b: &mut Builder) -> B {
    // `plan` is the match: computed once (it evaluates the map's function).
    let plan = plan(s).ok_or_else(|| no_pad(s))?;
    let p = arg("reduce-pad", a, "p")?;
    b.non_negative("reduce-pad", &p)?;
    let (_, f, z, _, span) = reduce_parts(s.expr).ok_or_else(|| s.no_match("reduce-pad", "a reduce"))?;
    let padded: Vec<Expr> = plan
        .arrays
        .iter()
        .map(|(e, v)| {
            let pc = Pattern::PadConst {
                left: crate::arith::ArithExpr::Cst(0),
                right: p.clone(),
                value: v.clone(),
            };
            b.pattern(pc, vec![(*e).clone()], span)
        })
        .collect();
    let inner = if plan.zipped {
        let n = padded.len();
        b.pattern(Pattern::Zip(n), padded, span)
    } else {
        padded.into_iter().next().ok_or_else(|| s.no_match("reduce-pad", "an array"))?
    };
    let arr = match plan.map {
        Some(m) => {
            let ExprKind::Call(mf, _) = &m.kind else { return Err(s.no_match("reduce-pad", "a map call")) };
            Expr { id: m.id, kind: ExprKind::Call(mf.clone(), vec![inner]), span: m.span }
        }
        None => inner,
    };
    let r = Pattern::Reduce { kind: ReduceKind::Reduce, f: Box::new(f.clone()) };
    Ok(b.pattern(r, vec![z.clone(), arr], span))
}

/// The padding of the reduction at the site, if it has one.
fn plan<'a>(s: &Site<'a>) -> Option<Plan<'a>> {
    let (kind, _, z, xs, _) = reduce_parts(s.expr)?;
    let ExprKind::Literal(zl) = &z.kind else { return None };
    if kind != ReduceKind::Reduce || !matches!(s.ty(xs), Some(Type::Array(..))) {
        return None;
    }
    let Some((_, g, ys, _)) = map_parts(xs) else {
        // Padded with `z` itself: a fold whose elements are not of `z`'s
        // type (`reduce(\(acc, x) -> ..., 0.0f)` over ints) is not padded.
        let same = matches!(s.ty(xs), Some(Type::Array(elem, _)) if **elem == zl.ty());
        return same.then(|| Plan { map: None, arrays: vec![(xs, zl.clone())], zipped: false });
    };
    let (arrays, zipped) = scalar_arrays(s, ys)?;
    let types: Vec<ScalarType> = arrays.iter().map(|(_, t)| *t).collect();
    let want = crate::interp::literal_value(zl);
    (0..3).find_map(|k| {
        let vs: Option<Vec<Literal>> = types.iter().map(|t| candidate(*t, zl, k)).collect();
        let vs = vs?;
        let vals: Vec<Value> = vs.iter().map(crate::interp::literal_value).collect();
        let arg = if zipped { Value::Tuple(vals) } else { vals.into_iter().next()? };
        let got = crate::interp::apply_closed(s.prog, g, vec![arg]).ok()?;
        (got == want).then(|| Plan {
            map: Some(xs),
            arrays: arrays.iter().map(|(e, _)| *e).zip(vs).collect(),
            zipped,
        })
    })
}

/// The arrays a map reads, `ys` (a `zip`'s, or `ys` itself), each with
/// its scalar element type, and whether they are a `zip`'s; none unless
/// every one is an array of scalars.
pub(super) fn scalar_arrays<'a>(s: &Site<'a>, ys: &'a Expr) -> Option<(Vec<(&'a Expr, ScalarType)>, bool)> {
    let (arrays, zipped): (Vec<&Expr>, bool) = match &ys.kind {
        ExprKind::Call(zf, zargs) if matches!(zf.kind, FunKind::Pattern(Pattern::Zip(_))) => {
            (zargs.iter().collect(), true)
        }
        _ => (vec![ys], false),
    };
    let typed = arrays
        .into_iter()
        .map(|e| match s.ty(e)? {
            Type::Array(elem, _) => match elem.as_ref() {
                Type::Scalar(t) => Some((e, *t)),
                _ => None,
            },
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some((typed, zipped))
}

/// The `k`-th constant tried for an element of type `t`: 0, 1, then `z`
/// where it has that type.
fn candidate(t: ScalarType, z: &Literal, k: usize) -> Option<Literal> {
    match (t, k, z) {
        (ScalarType::Float, 0, _) => Some(Literal::Float(0.0)),
        (ScalarType::Float, 1, _) => Some(Literal::Float(1.0)),
        (ScalarType::Float, _, Literal::Float(f)) => Some(Literal::Float(*f)),
        (ScalarType::Int, 0, _) => Some(Literal::Int(0)),
        (ScalarType::Int, 1, _) => Some(Literal::Int(1)),
        (ScalarType::Int, _, Literal::Int(i)) => Some(Literal::Int(*i)),
        _ => None,
    }
}
