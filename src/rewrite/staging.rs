//! Staging a work-group's row in local memory (`row-to-local`): a row
//! function that reads its row several times (a softmax: the maximum, the
//! sum of exponentials, then every element again; a layer norm: the mean,
//! the variance, then every element) reads it from global memory each
//! time. Copied once into local memory by the work-group's items
//! (coalesced), the later passes read the copy: one pass over global
//! memory instead of several.
//!
//! `mapWrg(d, \r -> b) $ xs` becomes `mapWrg(d, \r -> let rLoc =
//! toLocal(mapLcl(0, id)) $ r in b[r := rLoc]) $ xs`, where `r` is a
//! one-dimensional array of scalars read at least twice in `b`. Values are
//! unchanged (a copy); the barrier pass puts a barrier after the copy,
//! since other work-items read what each wrote. The local array holds the
//! whole row: a row longer than the device's local memory is refused when
//! the kernel is compiled for its sizes.

use super::algorithmic::map_parts;
use super::opencl::rule;
use super::rule::{Args, Builder, Rule, RuleError, Site};
use crate::ir::visit::{count_uses, substitute};
use crate::ir::{Expr, FunDecl, FunId, FunKind, Lambda, MapKind, Pattern, Span};
use crate::types::Type;
use std::collections::HashMap;

type R = Result<(), RuleError>;
type B = Result<Expr, RuleError>;

pub static RULES: [Rule; 1] = [rule(
    ROW_TO_LOCAL,
    "mapWrg(d, \\r -> b) $ xs   (r a row of scalars, read at least twice in b)",
    "mapWrg(d, \\r -> let rLoc = toLocal(mapLcl(0, id)) $ r in b[r := rLoc]) $ xs",
    &[],
    m_row_to_local,
    b_row_to_local,
)];

const ROW_TO_LOCAL: &str = "row-to-local";

/// The row function's lambda, the map's kind, its array and span of
/// `mapWrg(d, \r -> b) $ xs` whose rows are arrays of scalars.
fn row_lambda<'a>(s: &Site<'a>) -> Option<(&'a Lambda, MapKind, &'a Expr, Span)> {
    let (kind @ MapKind::Wrg(_), f, xs, span) = map_parts(s.expr)? else { return None };
    let FunKind::Lambda(l) = &f.kind else { return None };
    let [_] = l.params.as_slice() else { return None };
    let Some(Type::Array(row, _)) = s.ty(xs) else { return None };
    matches!(row.as_ref(), Type::Array(t, _) if matches!(t.as_ref(), Type::Scalar(_)))
        .then_some((l, kind, xs, span))
}

fn m_row_to_local(s: &Site<'_>) -> R {
    row_lambda(s)
        .map(|_| ())
        .ok_or_else(|| s.no_match(ROW_TO_LOCAL, "`mapWrg(d, \\r -> b) $ xs` over rows of scalars"))
}

fn b_row_to_local(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    let (l, kind, xs, span) = row_lambda(s)
        .ok_or_else(|| s.no_match(ROW_TO_LOCAL, "`mapWrg(d, \\r -> b) $ xs` over rows of scalars"))?;
    let r = &l.params[0];
    let reads = count_uses(&l.body, r.id);
    if reads < 2 {
        return Err(RuleError::SideCondition {
            rule: ROW_TO_LOCAL,
            what: format!("`{}` is read {reads} time(s): a copy would only add a pass", r.name),
        });
    }
    let g = &mut b.gen;
    // A name unique from its id, as `let-bind` makes its own: the printed
    // program reads back with the same bindings.
    let mut loc = g.param("rLoc", None, span);
    loc.name = format!("{}Loc{}", r.name.trim_start_matches('_'), loc.id.0);
    let body = substitute(&l.body, &HashMap::from([(r.id, g.var(&loc))]), g);
    let id = g.lambda1(span, |g, x| g.call_pattern(Pattern::Id, vec![x], span));
    let copy = FunDecl {
        id: FunId::FRESH,
        kind: FunKind::Pattern(Pattern::Map { kind: MapKind::Lcl(0), f: Box::new(id) }),
        span,
    };
    let rv = g.var(r);
    let staged = g.call_pattern(Pattern::ToLocal(Box::new(copy)), vec![rv], span);
    let bind = g.fun(FunKind::Lambda(Lambda { params: vec![loc], body: Box::new(body) }), span);
    let row_body = g.call(bind, vec![staged], span);
    let f = g.fun(FunKind::Lambda(Lambda { params: vec![r.clone()], body: Box::new(row_body) }), span);
    Ok(g.call_pattern(Pattern::Map { kind, f: Box::new(f) }, vec![xs.clone()], span))
}
