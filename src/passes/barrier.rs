//! Barrier elimination (CGO 2017, Section 5.4).
//!
//! A barrier follows every `mapLcl` by default. Data can only move between
//! threads through `split`, `join`, `gather`, `scatter` and the other
//! layout patterns, so when a `mapLcl` consumes the output of another
//! `mapLcl` of the same dimension directly, each thread reads exactly what
//! it wrote itself and the first barrier is not needed. Of two `mapLcl`s
//! that are the branches of one `zip`, the first needs no barrier: the
//! branches are independent and the barrier after the second covers both.
//! The hand-over is thread-private only when neither map nests another
//! parallel map (then each element is written and read by one thread).

use crate::ir::{Def, Expr, ExprId, ExprKind, FunDecl, FunKind, MapKind, Pattern};
use std::collections::HashSet;

/// The `mapLcl` calls (by expression id) after which no barrier is needed.
pub fn eliminable(def: &Def) -> HashSet<ExprId> {
    let mut out = HashSet::new();
    visit_expr(&def.body, &mut out);
    out
}

/// The dimension of the `mapLcl` that `f` is, looking through `toX`.
fn lcl_dim(f: &FunDecl) -> Option<u8> {
    match &f.kind {
        FunKind::Pattern(Pattern::Map { kind: MapKind::Lcl(d), .. }) => Some(*d),
        FunKind::Pattern(Pattern::ToGlobal(g) | Pattern::ToLocal(g) | Pattern::ToPrivate(g)) => lcl_dim(g),
        _ => None,
    }
}

fn call_lcl_dim(e: &Expr) -> Option<u8> {
    match &e.kind {
        ExprKind::Call(f, _) => lcl_dim(f),
        _ => None,
    }
}

/// Whether the function of the `mapLcl` that `f` is contains another
/// parallel map: then one element is written, or read, by several threads,
/// and the hand-over is not thread-private.
fn nested_parallel(f: &FunDecl) -> bool {
    match &f.kind {
        FunKind::Pattern(Pattern::Map { kind: MapKind::Lcl(_), f: g }) => contains_parallel(g),
        FunKind::Pattern(Pattern::ToGlobal(g) | Pattern::ToLocal(g) | Pattern::ToPrivate(g)) => {
            nested_parallel(g)
        }
        _ => true,
    }
}

fn call_nested_parallel(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Call(f, _) => nested_parallel(f),
        _ => true,
    }
}

fn contains_parallel(f: &FunDecl) -> bool {
    match &f.kind {
        FunKind::UserFun(_) => false,
        FunKind::Lambda(l) => expr_contains_parallel(&l.body),
        FunKind::Pattern(Pattern::Map {
            kind: MapKind::Glb(_) | MapKind::Wrg(_) | MapKind::Lcl(_), ..
        }) => true,
        FunKind::Pattern(p) => p.nested_fun().is_some_and(contains_parallel),
    }
}

fn expr_contains_parallel(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Literal(_) | ExprKind::Param(_) => false,
        ExprKind::Call(f, args) => contains_parallel(f) || args.iter().any(expr_contains_parallel),
    }
}

fn visit_expr(e: &Expr, out: &mut HashSet<ExprId>) {
    if let ExprKind::Call(f, args) = &e.kind {
        if let Some(d) = lcl_dim(f) {
            for a in args {
                if call_lcl_dim(a) == Some(d) && !nested_parallel(f) && !call_nested_parallel(a) {
                    out.insert(a.id);
                }
            }
        }
        if let FunKind::Pattern(Pattern::Zip(_)) = &f.kind {
            let lcl: Vec<&Expr> = args.iter().filter(|a| call_lcl_dim(a).is_some()).collect();
            if lcl.len() >= 2 {
                for a in &lcl[..lcl.len() - 1] {
                    out.insert(a.id);
                }
            }
        }
        visit_fun(f, out);
        for a in args {
            visit_expr(a, out);
        }
    }
}

fn visit_fun(f: &FunDecl, out: &mut HashSet<ExprId>) {
    match &f.kind {
        FunKind::Lambda(l) => visit_expr(&l.body, out),
        FunKind::UserFun(_) => {}
        FunKind::Pattern(p) => {
            if let Some(g) = p.nested_fun() {
                visit_fun(g, out);
            }
        }
    }
}
