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

use crate::ir::visit::{count_uses, has_parallel_map};
use crate::ir::{
    layout_pattern, Def, Expr, ExprId, ExprKind, FunDecl, FunKind, MapKind, ParamId, Pattern, Visitor,
};
use std::collections::HashSet;

/// The `mapLcl` calls (by expression id) after which no barrier is needed.
pub fn eliminable(def: &Def) -> HashSet<ExprId> {
    let mut finder = Eliminable(HashSet::new());
    finder.visit_expr(&def.body);
    finder.0
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
            Pattern::Map { kind: MapKind::Lcl(_), f: g } => has_parallel_map(g),
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
        if chain[i + 1..=next_kept].iter().any(|(_, w)| count_uses(w, p) > 0) {
            next_kept = i;
        } else {
            out.insert(v.id);
        }
    }
}

/// Collects the `mapLcl` calls whose barrier can go.
struct Eliminable(HashSet<ExprId>);

impl<'ir> Visitor<'ir> for Eliminable {
    fn visit_expr(&mut self, e: &'ir Expr) {
        let out = &mut self.0;
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
        }
        self.super_expr(e);
    }
}
