//! Whether concrete sizes fit a program: every size is positive and fits a
//! C `int`, and with the sizes substituted the def still type-checks (a
//! `split(128)` of 1000 elements does not: the divisibility and range facts
//! the type checker derives are checked at the given sizes) and has no
//! negative or over-long array. `lift exec` and the harness both check this
//! before they allocate or launch anything.

use crate::arith::ArithExpr;
use crate::ir::{Def, Expr, ExprKind, FunDecl, FunKind, MutVisitor, Param, Pattern, Program, Span};
use crate::passes::typecheck::typecheck_def;
use crate::types::Type;
use std::collections::{BTreeMap, HashMap};

/// Why the sizes do not fit; `span` is the place in the program when there
/// is one.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{misfit}")]
pub struct SizeFitError {
    pub span: Option<Span>,
    pub misfit: Misfit,
}

/// A size value out of range, or a fact of the program that fails at the
/// given `sizes`.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Misfit {
    #[error("size {name} = {value} exceeds {MAX_ELEMS}: kernels index with 32-bit ints")]
    TooLarge { name: String, value: i64 },
    #[error("size {name} = {value} must be at least 1")]
    TooSmall { name: String, value: i64 },
    #[error("the sizes do not fit the program ({}): {source}", show(sizes))]
    Type { sizes: BTreeMap<String, i64>, source: crate::passes::typecheck::TypeError },
    /// An array whose length, at these sizes, is negative or beyond `int`.
    #[error(
        "the sizes do not fit the program ({}): an array of {elems} elements{}",
        show(sizes),
        if *elems < 0 { "" } else { " (more than 32-bit indices reach)" }
    )]
    Array { sizes: BTreeMap<String, i64>, elems: i64 },
}

/// Every size is at least 1 (the arithmetic assumes it) and fits an `int`:
/// the one check of size values, made wherever sizes enter (`lift exec`,
/// the harness, and `compile` for its known sizes, so `lift compile`,
/// `lift explore` and configs too).
pub fn check_values(sizes: &BTreeMap<String, i64>) -> Result<(), SizeFitError> {
    for (k, v) in sizes {
        let (name, value) = (k.clone(), *v);
        let misfit = if value > MAX_ELEMS {
            Misfit::TooLarge { name, value }
        } else if value < 1 {
            Misfit::TooSmall { name, value }
        } else {
            continue;
        };
        return Err(SizeFitError { span: None, misfit });
    }
    Ok(())
}

/// `ty` with every size variable in `sizes` replaced by its value.
fn subst_type(ty: &Type, m: &HashMap<String, ArithExpr>) -> Type {
    match ty {
        Type::Array(e, n) => Type::array(subst_type(e, m), crate::arith::simplify(&n.substitute(m))),
        Type::Tuple(ts) => Type::Tuple(ts.iter().map(|t| subst_type(t, m)).collect()),
        Type::Scalar(_) | Type::Vector(..) => ty.clone(),
    }
}

fn show(sizes: &BTreeMap<String, i64>) -> String {
    sizes.iter().map(|(k, v)| format!("{k} = {v}")).collect::<Vec<_>>().join(", ")
}

/// Largest element count a kernel can index: indices are C `int`s.
pub const MAX_ELEMS: i64 = i32::MAX as i64;

/// Every size of `def` is known and positive, fits an `int`, and with the
/// sizes substituted the def still type-checks (a `split(128)` of 1000
/// elements does not) and has no negative or over-long array.
pub fn sizes_fit(program: &Program, def: &Def, sizes: &BTreeMap<String, i64>) -> Result<(), SizeFitError> {
    let misfit = |span: Span, misfit| SizeFitError { span: Some(span), misfit };
    check_values(sizes)?;
    let m: HashMap<String, ArithExpr> = sizes.iter().map(|(k, v)| (k.clone(), ArithExpr::Cst(*v))).collect();
    let mut concrete = def.clone();
    for p in &mut concrete.params {
        p.ty = p.ty.as_ref().map(|t| subst_type(t, &m));
    }
    subst_annotations(&mut concrete.body, &m);
    let types = typecheck_def(program, &concrete)
        .map_err(|e| misfit(e.span, Misfit::Type { sizes: sizes.clone(), source: e }))?;
    // Lengths that became constants must be usable.
    let mut stack: Vec<&Expr> = vec![&def.body];
    while let Some(e) = stack.pop() {
        if let Some(t) = types.exprs.get(&e.id) {
            for n in t.lengths() {
                if let Ok(c) = n.eval_with(&|v| sizes.get(v).copied()) {
                    if !(0..=MAX_ELEMS).contains(&c) {
                        return Err(misfit(e.span, Misfit::Array { sizes: sizes.clone(), elems: c }));
                    }
                }
            }
        }
        if let ExprKind::Call(f, args) = &e.kind {
            stack.extend(args.iter());
            push_fun(f, &mut stack);
        }
    }
    Ok(())
}

/// Substitutes the sizes in the annotated lambda parameters of `e` (the
/// parameters of inlined defs keep their declared types).
fn subst_annotations(e: &mut Expr, m: &HashMap<String, ArithExpr>) {
    Subst(m).visit_expr(e);
}

/// Substitutes sizes in the annotations and the pattern parameters it meets.
struct Subst<'a>(&'a HashMap<String, ArithExpr>);

impl MutVisitor<'_> for Subst<'_> {
    fn visit_param(&mut self, p: &mut Param) {
        p.ty = p.ty.as_ref().map(|t| subst_type(t, self.0));
    }

    /// Substitutes the sizes in a pattern's parameters (`split(N / 2)`,
    /// `generate(N * 4, ...)`), then in its nested function.
    fn visit_pattern(&mut self, p: &mut Pattern, span: Span) {
        let m = self.0;
        let s = |e: &mut ArithExpr| *e = crate::arith::simplify(&e.substitute(m));
        match p {
            Pattern::PartRed { m: k, .. } | Pattern::Split(k) | Pattern::At(k) => s(k),
            Pattern::Generate { len, .. } => s(len),
            Pattern::Gather(g) | Pattern::Scatter(g) => s(&mut g.body),
            Pattern::Slide { size, step } | Pattern::SlideSeq { size, step, .. } => {
                s(size);
                s(step);
            }
            Pattern::Pad { left, right, .. } | Pattern::PadConst { left, right, .. } => {
                s(left);
                s(right);
            }
            Pattern::Map { .. }
            | Pattern::MapVec { .. }
            | Pattern::Reduce { .. }
            | Pattern::Iterate { .. }
            | Pattern::ToGlobal(_)
            | Pattern::ToLocal(_)
            | Pattern::ToPrivate(_)
            | Pattern::Join
            | Pattern::Transpose
            | Pattern::Zip(_)
            | Pattern::Get(_)
            | Pattern::AsVector(_)
            | Pattern::AsScalar
            | Pattern::Filter
            | Pattern::Id => {}
        }
        self.super_pattern(p, span);
    }
}

fn push_fun<'a>(f: &'a FunDecl, stack: &mut Vec<&'a Expr>) {
    match &f.kind {
        FunKind::Lambda(l) => stack.push(&l.body),
        FunKind::Pattern(p) => {
            if let Some(g) = p.nested_fun() {
                push_fun(g, stack);
            }
        }
        FunKind::UserFun(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An over-long array names the sizes and says why; a negative one
    /// only its length.
    #[test]
    fn array_misfit_renders_as_before() {
        let sizes = BTreeMap::from([("N".to_string(), 3_000_000_000_i64)]);
        let long = Misfit::Array { sizes: sizes.clone(), elems: 3_000_000_000 };
        assert_eq!(
            long.to_string(),
            "the sizes do not fit the program (N = 3000000000): an array of 3000000000 elements (more than 32-bit indices reach)"
        );
        let negative = Misfit::Array { sizes, elems: -2 };
        assert_eq!(
            negative.to_string(),
            "the sizes do not fit the program (N = 3000000000): an array of -2 elements"
        );
    }
}
