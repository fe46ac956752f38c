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
//! Of consecutive `let`s that each copy into local memory with a `mapLcl`
//! (the tiles of a matrix product), only the last needs its barrier, as long
//! as no copy before that barrier reads a tile whose barrier was dropped.

use crate::ir::{layout_pattern, Def, Expr, ExprId, ExprKind, FunDecl, FunKind, MapKind, ParamId, Pattern};
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
        FunKind::Pattern(p) => match p {
            Pattern::Map { kind: MapKind::Lcl(d), .. } => Some(*d),
            Pattern::ToGlobal(g) | Pattern::ToLocal(g) | Pattern::ToPrivate(g) => lcl_dim(g),
            Pattern::Map { .. }
            | Pattern::MapVec { .. }
            | Pattern::Reduce { .. }
            | Pattern::PartRed { .. }
            | Pattern::Iterate { .. }
            | Pattern::SlideSeq { .. }
            | Pattern::Generate { .. }
            | layout_pattern!()
            | Pattern::Id => None,
        },
        FunKind::Lambda(_) | FunKind::UserFun(_) => None,
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
        FunKind::Pattern(p) => match p {
            Pattern::Map { kind: MapKind::Lcl(_), f: g } => contains_parallel(g),
            Pattern::ToGlobal(g) | Pattern::ToLocal(g) | Pattern::ToPrivate(g) => nested_parallel(g),
            Pattern::Map { .. }
            | Pattern::MapVec { .. }
            | Pattern::Reduce { .. }
            | Pattern::PartRed { .. }
            | Pattern::Iterate { .. }
            | Pattern::SlideSeq { .. }
            | Pattern::Generate { .. }
            | layout_pattern!()
            | Pattern::Id => true,
        },
        FunKind::Lambda(_) | FunKind::UserFun(_) => true,
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

/// Whether `e` is `toLocal(mapLcl(...)) $ x`: it ends with a barrier on
/// local memory unless that barrier is eliminated.
fn is_local_copy(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Call(f, _) => {
            matches!(&f.kind, FunKind::Pattern(Pattern::ToLocal(g)) if lcl_dim(g).is_some())
        }
        ExprKind::Literal(_) | ExprKind::Param(_) => false,
    }
}

/// `let p = v in body` as (p, v, body).
fn as_let(e: &Expr) -> Option<(ParamId, &Expr, &Expr)> {
    match &e.kind {
        ExprKind::Call(f, args) => match &f.kind {
            FunKind::Lambda(l) => match (l.params.as_slice(), args.as_slice()) {
                ([p], [v]) => Some((p.id, v, &l.body)),
                _ => None,
            },
            FunKind::Pattern(_) | FunKind::UserFun(_) => None,
        },
        ExprKind::Literal(_) | ExprKind::Param(_) => None,
    }
}

fn uses_param(e: &Expr, p: ParamId) -> bool {
    match &e.kind {
        ExprKind::Literal(_) => false,
        ExprKind::Param(q) => *q == p,
        ExprKind::Call(f, args) => fun_uses_param(f, p) || args.iter().any(|a| uses_param(a, p)),
    }
}

fn fun_uses_param(f: &FunDecl, p: ParamId) -> bool {
    match &f.kind {
        FunKind::UserFun(_) => false,
        FunKind::Lambda(l) => uses_param(&l.body, p),
        FunKind::Pattern(pat) => pat.nested_fun().is_some_and(|g| fun_uses_param(g, p)),
    }
}

/// The chain of `let`s starting at `e` whose values are local copies: the
/// barrier of a copy is dropped when no copy up to the next kept barrier
/// reads it. Decided from the last copy backwards (the last one keeps its
/// barrier), so a sub-chain gets the same answer for its copies.
fn local_copy_chain(e: &Expr, out: &mut HashSet<ExprId>) {
    let mut chain: Vec<(ParamId, &Expr)> = Vec::new();
    let mut cur = e;
    while let Some((p, v, body)) = as_let(cur) {
        if !is_local_copy(v) {
            break;
        }
        chain.push((p, v));
        cur = body;
    }
    let Some(mut next_kept) = chain.len().checked_sub(1) else { return };
    for i in (0..next_kept).rev() {
        let (p, v) = chain[i];
        if chain[i + 1..=next_kept].iter().any(|(_, w)| uses_param(w, p)) {
            next_kept = i;
        } else {
            out.insert(v.id);
        }
    }
}

fn visit_expr(e: &Expr, out: &mut HashSet<ExprId>) {
    local_copy_chain(e, out);
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
