//! A `mapWrg` or `mapGlb` nested in another parallel map of its level
//! spreads its elements over work-groups (global threads): each computes
//! only its share. Its result can be the enclosing function's result (a
//! two-dimensional grid, written to memory), but nothing inside that
//! function may read it again: no barrier joins work-groups, so the reader
//! would see elements another work-group has not written (a softmax whose
//! exponentials were lowered by a nested `mapWrg` and then summed by every
//! work-group computed wrong values on the H100 and on PoCL).
//!
//! "The result" is the function's body up to what only rearranges or
//! copies it: layout patterns, `toGlobal`/`toLocal`/`toPrivate`, a
//! high-level `map` of a layout pattern (`map(join)`), and the body of a
//! `let` (`(\x -> body)(value)`: the value is read again by the body).

use super::wellformed::{BrokenRule, WellFormedError};
use crate::ir::{layout_pattern, Expr, ExprId, ExprKind, FunDecl, FunKind, MapKind, Pattern};
use std::collections::HashSet;

/// The first nested `mapWrg`/`mapGlb` in `body` (a parallel map's
/// function) whose result is read again inside it.
pub fn check_function(outer: MapKind, body: &Expr) -> Result<(), WellFormedError> {
    let mut tails = HashSet::new();
    tails_of(body, &mut tails);
    first_read_again(body, &tails).map_or(Ok(()), |(map, span)| {
        Err(WellFormedError { rule: BrokenRule::ReadAgain { map, outer }, span })
    })
}

/// The nested grid map a call `e` is, if any: `mapWrg(f) $ x`, or one
/// wrapped in a copy (`toGlobal(mapWrg(f)) $ x`).
fn grid_map(e: &Expr) -> Option<MapKind> {
    let ExprKind::Call(f, _) = &e.kind else { return None };
    grid_fun(f)
}

fn grid_fun(f: &FunDecl) -> Option<MapKind> {
    match &f.kind {
        FunKind::Pattern(Pattern::Map { kind: k @ (MapKind::Wrg(_) | MapKind::Glb(_)), .. }) => Some(*k),
        FunKind::Pattern(Pattern::ToGlobal(g) | Pattern::ToLocal(g) | Pattern::ToPrivate(g)) => grid_fun(g),
        FunKind::Pattern(_) | FunKind::Lambda(_) | FunKind::UserFun(_) => None,
    }
}

/// Whether `f` only rearranges or copies its argument.
fn passes_through(f: &FunDecl) -> bool {
    match &f.kind {
        FunKind::Pattern(p) => match p {
            layout_pattern!() | Pattern::Id => true,
            Pattern::ToGlobal(_) | Pattern::ToLocal(_) | Pattern::ToPrivate(_) => true,
            Pattern::Map { kind: MapKind::Map, f } => layout_fun(f),
            _ => false,
        },
        FunKind::Lambda(_) | FunKind::UserFun(_) => false,
    }
}

/// A layout pattern, or a lambda whose body only rearranges its
/// parameter (`\x -> asScalar(join(x))`).
fn layout_fun(f: &FunDecl) -> bool {
    match &f.kind {
        FunKind::Pattern(p) => matches!(p, layout_pattern!()),
        FunKind::Lambda(l) => layout_expr(&l.body),
        FunKind::UserFun(_) => false,
    }
}

fn layout_expr(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Param(_) => true,
        ExprKind::Call(g, args) => layout_fun(g) && args.iter().all(layout_expr),
        ExprKind::Literal(_) => false,
    }
}

/// The expressions in tail position of `e`: `e`, and through what passes
/// its argument through, and a `let`'s body.
fn tails_of(e: &Expr, out: &mut HashSet<ExprId>) {
    out.insert(e.id);
    let ExprKind::Call(f, args) = &e.kind else { return };
    if grid_map(e).is_some() {
        return;
    }
    if let FunKind::Lambda(l) = &f.kind {
        tails_of(&l.body, out);
    } else if passes_through(f) {
        args.iter().for_each(|a| tails_of(a, out));
    }
}

/// The first grid map under `e` (not under a nested grid map's own
/// function, which its own check covers) that is not a tail.
fn first_read_again(e: &Expr, tails: &HashSet<ExprId>) -> Option<(MapKind, crate::ir::Span)> {
    let ExprKind::Call(f, args) = &e.kind else { return None };
    if let Some(k) = grid_map(e) {
        if !tails.contains(&e.id) {
            return Some((k, e.span));
        }
        return args.iter().find_map(|a| first_read_again(a, tails));
    }
    args.iter().find_map(|a| first_read_again(a, tails)).or_else(|| fun_read_again(f, tails))
}

fn fun_read_again(f: &FunDecl, tails: &HashSet<ExprId>) -> Option<(MapKind, crate::ir::Span)> {
    match &f.kind {
        FunKind::Lambda(l) => first_read_again(&l.body, tails),
        FunKind::Pattern(p) => p.nested_fun().and_then(|g| fun_read_again(g, tails)),
        FunKind::UserFun(_) => None,
    }
}
