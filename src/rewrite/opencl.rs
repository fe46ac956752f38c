//! OpenCL-specific rules (ICFP 2015, Figure 4; CGO 2018, Section 4.3):
//! choosing how a map or reduction executes, where results are stored,
//! and vectorisation.

use super::algorithmic::map_parts;
use super::rule::{int_arg, view, Args, Builder, Family, Mem, ParamSpec, Rule, RuleError, Site, View};
use super::vectorize::{splat_fun, vectorise_fun};
use crate::arith::{self, ArithExpr};
use crate::ir::{Expr, FunDecl, FunId, FunKind, Literal, MapKind, Pattern, ReduceKind};
use crate::types::Type;

type R = Result<(), RuleError>;
type B = Result<Expr, RuleError>;

/// An OpenCL rule (also used by `slide_seq`).
pub(super) const fn rule(
    name: &'static str,
    lhs: &'static str,
    rhs: &'static str,
    params: &'static [ParamSpec],
    matches: fn(&Site<'_>) -> R,
    build: fn(&Site<'_>, &Args, &mut Builder) -> B,
) -> Rule {
    Rule { name, family: Family::OpenCl, lhs, rhs, params, matches, build }
}

const D: ParamSpec = ParamSpec { name: "d", what: "dimension 0, 1 or 2" };
const W: ParamSpec = ParamSpec { name: "n", what: "vector width 2, 3, 4, 8 or 16" };

pub static RULES: [Rule; 15] = [
    rule("map-glb", "map(f)", "mapGlb(d, f)", &[D], m_map, |s, a, b| lower_map(s, a, b, "map-glb")),
    rule("map-wrg", "map(f)", "mapWrg(d, f)", &[D], m_map, |s, a, b| lower_map(s, a, b, "map-wrg")),
    rule("map-lcl", "map(f)   (inside a mapWrg)", "mapLcl(d, f)", &[D], m_map, |s, a, b| {
        lower_map(s, a, b, "map-lcl")
    }),
    rule("map-seq", "map(f)", "mapSeq(f)", &[], m_map, |s, a, b| lower_map(s, a, b, "map-seq")),
    rule(
        "map-seq-unroll",
        "mapSeq(f)   (constant length)",
        "mapSeqUnroll(f)",
        &[],
        m_map_seq,
        b_map_seq_unroll,
    ),
    rule("reduce-seq", "reduce(f, z)", "reduceSeq(f, z)", &[], m_reduce, b_reduce_seq),
    rule(
        "reduce-seq-unroll",
        "reduceSeq(f, z)   (constant length)",
        "reduceSeqUnroll(f, z)",
        &[],
        m_reduce_seq,
        b_reduce_seq_unroll,
    ),
    rule("gather-id", "gather(\\i -> i)", "id", &[], m_gather_id, b_gather_id),
    rule("to-global", "mapX(f)", "toGlobal(mapX(f))", &[], m_low_map, |s, a, b| to_mem(s, a, b, Mem::Global)),
    rule("to-local", "mapX(f)", "toLocal(mapX(f))", &[], m_low_map, |s, a, b| to_mem(s, a, b, Mem::Local)),
    rule("to-private", "mapX(f)", "toPrivate(mapX(f))", &[], m_low_map, |s, a, b| {
        to_mem(s, a, b, Mem::Private)
    }),
    rule(
        "vectorize",
        "map(f)   (f on scalars, or a zip of scalars)",
        "asScalar o map(vect_n(f)) o asVector(n)",
        &[W],
        m_vec_map,
        b_vectorize,
    ),
    rule(
        "asvector-map",
        "asVector(n) o map(f)",
        "map(vect_n(f)) o asVector(n)",
        &[],
        m_asvector_map,
        b_asvector_map,
    ),
    rule(
        "vectorize-reduce",
        "reduce(f, z)   (f on scalars)",
        "reduce(f, z) o asScalar o reduce(vect_n(f), vect_n(z)) o asVector(n)",
        &[W],
        m_vec_reduce,
        b_vectorize_reduce,
    ),
    rule("reduce-one", "reduce(f, z) $ x   (x of length 1)", "x", &[], m_reduce_one, b_reduce_one),
];

fn m_map(s: &Site<'_>) -> R {
    match map_parts(s.expr) {
        Some((MapKind::Map, ..)) => Ok(()),
        _ => Err(s.no_match("map-*", "a high-level `map(f) $ x`")),
    }
}

/// Checks the thread hierarchy (ICFP 2015, Section 4.2): `mapLcl` only
/// inside a `mapWrg`, no parallel map of a dimension inside another of the
/// same dimension, no `mapGlb`/`mapWrg` inside work-group level maps.
fn lower_map(s: &Site<'_>, a: &Args, b: &mut Builder, rule: &'static str) -> B {
    m_map(s)?;
    let (_, f, xs, span) = map_parts(s.expr).ok_or_else(|| s.no_match(rule, "a map"))?;
    let outer = s.enclosing_maps();
    let side = |what: String| RuleError::SideCondition { rule, what };
    let kind = match rule {
        "map-seq" => MapKind::Seq,
        _ => {
            let d = int_arg(rule, a, "d", 0, 2)? as u8;
            let same = |k: &MapKind| match (rule, k) {
                ("map-glb", MapKind::Glb(e))
                | ("map-wrg", MapKind::Wrg(e))
                | ("map-lcl", MapKind::Lcl(e)) => *e == d,
                _ => false,
            };
            if outer.iter().any(same) {
                return Err(side(format!("already inside a parallel map of dimension {d}")));
            }
            match rule {
                "map-glb" | "map-wrg" => {
                    if outer.iter().any(|k| matches!(k, MapKind::Lcl(_) | MapKind::Seq | MapKind::SeqUnroll))
                    {
                        return Err(side(
                            "a global or work-group map must not be inside a local or sequential map".into(),
                        ));
                    }
                    let glb = rule == "map-glb";
                    let clash = if glb { "mapWrg" } else { "mapGlb" };
                    if outer.iter().any(|k| {
                        if glb {
                            matches!(k, MapKind::Wrg(_))
                        } else {
                            matches!(k, MapKind::Glb(_))
                        }
                    }) {
                        return Err(side(format!("cannot nest inside a {clash}")));
                    }
                    if glb {
                        MapKind::Glb(d)
                    } else {
                        MapKind::Wrg(d)
                    }
                }
                _ => {
                    if !outer.iter().any(|k| matches!(k, MapKind::Wrg(_))) {
                        return Err(side("mapLcl must be nested in a mapWrg".into()));
                    }
                    if outer.iter().any(|k| matches!(k, MapKind::Seq | MapKind::SeqUnroll)) {
                        return Err(side("mapLcl must not be inside a sequential map".into()));
                    }
                    MapKind::Lcl(d)
                }
            }
        }
    };
    Ok(b.pattern(Pattern::Map { kind, f: Box::new(f.clone()) }, vec![xs.clone()], span))
}

fn const_len(s: &Site<'_>, xs: &Expr, rule: &'static str) -> Result<i64, RuleError> {
    s.len(xs).and_then(|l| l.as_cst()).ok_or_else(|| RuleError::SideCondition {
        rule,
        what: "the length must be known at compile time to unroll".into(),
    })
}

fn m_map_seq(s: &Site<'_>) -> R {
    match map_parts(s.expr) {
        Some((MapKind::Seq, ..)) => Ok(()),
        _ => Err(s.no_match("map-seq-unroll", "`mapSeq(f) $ x`")),
    }
}

fn b_map_seq_unroll(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    m_map_seq(s)?;
    let (_, f, xs, span) = map_parts(s.expr).ok_or_else(|| s.no_match("map-seq-unroll", "a map"))?;
    const_len(s, xs, "map-seq-unroll")?;
    Ok(b.pattern(Pattern::Map { kind: MapKind::SeqUnroll, f: Box::new(f.clone()) }, vec![xs.clone()], span))
}

fn reduce_of(e: &Expr, want: ReduceKind) -> Option<(&FunDecl, &Expr, &Expr, crate::ir::Span)> {
    match view(e) {
        Some((View::Reduce { kind, f }, [z, xs], span)) if kind == want => Some((f, z, xs, span)),
        _ => None,
    }
}

fn m_reduce(s: &Site<'_>) -> R {
    reduce_of(s.expr, ReduceKind::Reduce)
        .map(|_| ())
        .ok_or_else(|| s.no_match("reduce-seq", "`reduce(f, z) $ x`"))
}

fn b_reduce_seq(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    let (f, z, xs, span) =
        reduce_of(s.expr, ReduceKind::Reduce).ok_or_else(|| s.no_match("reduce-seq", "a reduce"))?;
    Ok(b.pattern(
        Pattern::Reduce { kind: ReduceKind::Seq, f: Box::new(f.clone()) },
        vec![z.clone(), xs.clone()],
        span,
    ))
}

fn m_reduce_seq(s: &Site<'_>) -> R {
    reduce_of(s.expr, ReduceKind::Seq)
        .map(|_| ())
        .ok_or_else(|| s.no_match("reduce-seq-unroll", "`reduceSeq(f, z) $ x`"))
}

fn b_reduce_seq_unroll(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    let (f, z, xs, span) =
        reduce_of(s.expr, ReduceKind::Seq).ok_or_else(|| s.no_match("reduce-seq-unroll", "a reduceSeq"))?;
    const_len(s, xs, "reduce-seq-unroll")?;
    let p = Pattern::Reduce { kind: ReduceKind::SeqUnroll, f: Box::new(f.clone()) };
    Ok(b.pattern(p, vec![z.clone(), xs.clone()], span))
}

fn m_gather_id(s: &Site<'_>) -> R {
    if let Some((View::Gather(ix), [_], _)) = view(s.expr) {
        let i = ArithExpr::size(&ix.param);
        let mut m = std::collections::HashMap::new();
        m.insert(ix.param.clone(), i.clone());
        if arith::simplify(&ArithExpr::sub(ix.body.substitute(&m), i)).as_cst() == Some(0) {
            return Ok(());
        }
    }
    Err(s.no_match("gather-id", "`gather(\\i -> i) $ x`"))
}

fn b_gather_id(s: &Site<'_>, _: &Args, _: &mut Builder) -> B {
    m_gather_id(s)?;
    match view(s.expr) {
        Some((_, [x], _)) => Ok(x.clone()),
        _ => Err(s.no_match("gather-id", "a gather")),
    }
}

fn m_low_map(s: &Site<'_>) -> R {
    match map_parts(s.expr) {
        Some((kind, ..)) if kind != MapKind::Map => Ok(()),
        _ => Err(s.no_match("to-*", "an OpenCL map (`mapSeq`, `mapLcl`, ...) applied to data")),
    }
}

fn to_mem(s: &Site<'_>, _: &Args, b: &mut Builder, mem: Mem) -> B {
    m_low_map(s)?;
    let (kind, f, xs, span) = map_parts(s.expr).ok_or_else(|| s.no_match("to-*", "a map"))?;
    let inner = Box::new(FunDecl {
        id: FunId::FRESH,
        kind: FunKind::Pattern(Pattern::Map { kind, f: Box::new(f.clone()) }),
        span,
    });
    let p = match mem {
        Mem::Global => Pattern::ToGlobal(inner),
        Mem::Local => Pattern::ToLocal(inner),
        Mem::Private => Pattern::ToPrivate(inner),
    };
    Ok(b.pattern(p, vec![xs.clone()], span))
}

fn scalar_array(s: &Site<'_>, e: &Expr) -> bool {
    matches!(s.ty(e), Some(Type::Array(t, _)) if matches!(t.as_ref(), Type::Scalar(_)))
}

/// An array of tuples of scalars (what `asScalar` makes of an array of
/// tuples of vectors).
fn scalar_tuple_array(s: &Site<'_>, e: &Expr) -> bool {
    matches!(s.ty(e), Some(Type::Array(t, _))
        if matches!(t.as_ref(), Type::Tuple(ts) if ts.iter().all(|t| matches!(t, Type::Scalar(_)))))
}

/// `vectorize` matches a map over scalars, or over a `zip` of arrays of
/// scalars (each zipped array is viewed as vectors: `f` then takes a tuple
/// of vectors, as `asvector-map` makes it), to scalars or tuples of scalars.
fn m_vec_map(s: &Site<'_>) -> R {
    match map_parts(s.expr) {
        Some((_, _, xs, _))
            if (scalar_array(s, xs) || zipped_scalars(s, xs).is_some())
                && (scalar_array(s, s.expr) || scalar_tuple_array(s, s.expr)) =>
        {
            Ok(())
        }
        _ => Err(s.no_match(
            "vectorize",
            "`map(f) $ x` from scalars (or a zip of arrays of scalars) to scalars or tuples of scalars",
        )),
    }
}

/// `asVector(n)` of `xs`, or of each array `xs` zips.
fn as_vectors(s: &Site<'_>, b: &mut Builder, xs: &Expr, n: u8, span: crate::ir::Span) -> Expr {
    match zipped_scalars(s, xs) {
        Some(parts) => {
            let (k, zspan) = (parts.len(), xs.span);
            let vs = parts.iter().map(|p| b.pattern(Pattern::AsVector(n), vec![p.clone()], span)).collect();
            b.pattern(Pattern::Zip(k), vs, zspan)
        }
        None => b.pattern(Pattern::AsVector(n), vec![xs.clone()], span),
    }
}

fn width(a: &Args, rule: &'static str) -> Result<u8, RuleError> {
    let n = int_arg(rule, a, "n", 2, 16)? as u8;
    if !crate::types::VECTOR_WIDTHS.contains(&n) {
        return Err(RuleError::SideCondition {
            rule,
            what: format!("{n} is not a vector width (2, 3, 4, 8, 16)"),
        });
    }
    Ok(n)
}

fn b_vectorize(s: &Site<'_>, a: &Args, b: &mut Builder) -> B {
    m_vec_map(s)?;
    let (kind, f, xs, span) = map_parts(s.expr).ok_or_else(|| s.no_match("vectorize", "a map"))?;
    let n = width(a, "vectorize")?;
    let len = s.len(xs).ok_or_else(|| s.no_match("vectorize", "a map over an array"))?;
    b.divides("vectorize", &ArithExpr::Cst(n.into()), &len)?;
    let fv = vectorise_fun(b, s.prog, f, n)
        .map_err(|reason| RuleError::NoVectorVersion { rule: "vectorize", reason })?;
    let v = as_vectors(s, b, xs, n, span);
    let m = b.pattern(Pattern::Map { kind, f: Box::new(fv) }, vec![v], span);
    Ok(b.pattern(Pattern::AsScalar, vec![m], span))
}

/// The arrays of `zip(a, b, ...)` when each is an array of scalars.
fn zipped_scalars<'a>(s: &Site<'_>, xs: &'a Expr) -> Option<&'a [Expr]> {
    match super::rule::as_pattern(xs)? {
        (Pattern::Zip(_), parts, _) if parts.iter().all(|p| scalar_array(s, p)) => Some(parts),
        _ => None,
    }
}

fn m_asvector_map(s: &Site<'_>) -> R {
    if let Some((View::AsVector(_), [x], _)) = view(s.expr) {
        if let Some((_, _, xs, _)) = map_parts(x) {
            if scalar_array(s, xs) || zipped_scalars(s, xs).is_some() {
                return Ok(());
            }
        }
    }
    Err(s.no_match("asvector-map", "`asVector(n) $ map(f) $ x` over scalars"))
}

fn b_asvector_map(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    m_asvector_map(s)?;
    let Some((View::AsVector(n), [x], vspan)) = view(s.expr) else {
        return Err(s.no_match("asvector-map", "asVector"));
    };
    let (kind, f, xs, span) = map_parts(x).ok_or_else(|| s.no_match("asvector-map", "a map"))?;
    let fv = vectorise_fun(b, s.prog, f, n)
        .map_err(|reason| RuleError::NoVectorVersion { rule: "asvector-map", reason })?;
    // Over `zip(a, b)`: `map(vect_n(f)) $ zip(asVector(n) a, asVector(n) b)`.
    let v = as_vectors(s, b, xs, n, vspan);
    Ok(b.pattern(Pattern::Map { kind, f: Box::new(fv) }, vec![v], span))
}

fn m_vec_reduce(s: &Site<'_>) -> R {
    if let Some((View::Reduce { .. }, [z, xs], _)) = view(s.expr) {
        if scalar_array(s, xs) && matches!(z.kind, crate::ir::ExprKind::Literal(Literal::Float(_))) {
            return Ok(());
        }
    }
    Err(s.no_match("vectorize-reduce", "`reduce(f, z) $ x` over floats with a literal `z`"))
}

fn b_vectorize_reduce(s: &Site<'_>, a: &Args, b: &mut Builder) -> B {
    m_vec_reduce(s)?;
    let Some((View::Reduce { kind, f }, [z, xs], span)) = view(s.expr) else {
        return Err(s.no_match("vectorize-reduce", "a reduce"));
    };
    let n = width(a, "vectorize-reduce")?;
    let len = s.len(xs).ok_or_else(|| s.no_match("vectorize-reduce", "a reduce over an array"))?;
    b.divides("vectorize-reduce", &ArithExpr::Cst(n.into()), &len)?;
    let fv = vectorise_fun(b, s.prog, f, n)
        .map_err(|reason| RuleError::NoVectorVersion { rule: "vectorize-reduce", reason })?;
    let splat = splat_fun(b, n);
    let z2 = b.gen.refresh_expr(z);
    let zv = b.gen.call(FunDecl { id: FunId::FRESH, kind: FunKind::UserFun(splat), span }, vec![z2], span);
    let v = b.pattern(Pattern::AsVector(n), vec![xs.clone()], span);
    let inner = b.pattern(Pattern::Reduce { kind, f: Box::new(fv) }, vec![zv, v], span);
    let sc = b.pattern(Pattern::AsScalar, vec![inner], span);
    Ok(b.pattern(Pattern::Reduce { kind, f: Box::new(f.clone()) }, vec![z.clone(), sc], span))
}

fn m_reduce_one(s: &Site<'_>) -> R {
    if let Some((View::Reduce { .. }, [_, xs], _)) = view(s.expr) {
        if s.len(xs).and_then(|l| l.as_cst()) == Some(1)
            && s.ty(xs).zip(s.ty(s.expr)).is_some_and(|(a, b)| a == b)
        {
            return Ok(());
        }
    }
    Err(s.no_match("reduce-one", "`reduce(f, z) $ x` with x of one element of the result type"))
}

fn b_reduce_one(s: &Site<'_>, _: &Args, _: &mut Builder) -> B {
    m_reduce_one(s)?;
    match view(s.expr) {
        Some((_, [_, xs], _)) => Ok(xs.clone()),
        _ => Err(s.no_match("reduce-one", "a reduce")),
    }
}
