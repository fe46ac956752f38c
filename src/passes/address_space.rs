//! Address-space inference (CGO 2017, Algorithm 1).
//!
//! Array parameters live in global memory, scalars and literals in private
//! memory. A user function writes where the enclosing `toGlobal`/`toLocal`/
//! `toPrivate` says, or else where its arguments live if they all agree, or
//! else in global memory; one called as an argument of another user
//! function writes to private memory (its value is read by that call alone). A reduction writes into its initialiser's memory;
//! maps and iterations write where their function writes; data-layout
//! patterns keep their argument's space.

use super::typecheck::Types;
use crate::ir::{layout_pattern, Def, Expr, ExprId, ExprKind, FunDecl, FunKind, ParamId, Pattern};
use crate::types::Type;
use std::collections::HashMap;

/// An OpenCL address space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddressSpace {
    Global,
    Local,
    Private,
}

impl AddressSpace {
    pub fn c_qualifier(self) -> &'static str {
        match self {
            AddressSpace::Global => "global",
            AddressSpace::Local => "local",
            AddressSpace::Private => "private",
        }
    }
}

/// The address space of every expression (and of implicit applications:
/// the body of a map has the space of the map call).
#[derive(Clone, Debug, Default)]
pub struct AddressSpaces {
    pub exprs: HashMap<ExprId, AddressSpace>,
    pub params: HashMap<ParamId, AddressSpace>,
}

impl AddressSpaces {
    pub fn of(&self, e: &Expr) -> AddressSpace {
        self.exprs.get(&e.id).copied().unwrap_or(AddressSpace::Global)
    }
}

/// Runs Algorithm 1 over `def`.
pub fn infer(def: &Def, types: &Types) -> AddressSpaces {
    let mut a = Inference { out: AddressSpaces::default() };
    for p in &def.params {
        let space = match types.params.get(&p.id) {
            Some(Type::Array(..)) => AddressSpace::Global,
            _ => AddressSpace::Private,
        };
        a.out.params.insert(p.id, space);
    }
    a.expr(&def.body, None);
    a.out
}

struct Inference {
    out: AddressSpaces,
}

impl Inference {
    fn expr(&mut self, e: &Expr, write_to: Option<AddressSpace>) -> AddressSpace {
        let space = match &e.kind {
            ExprKind::Literal(_) => AddressSpace::Private,
            ExprKind::Param(p) => self.out.params.get(p).copied().unwrap_or(AddressSpace::Private),
            ExprKind::Call(f, args) => {
                let spaces: Vec<AddressSpace> = args
                    .iter()
                    .map(|a| {
                        let space = self.expr(a, write_to);
                        // A user function's value passed straight to another
                        // (`f(x, g(y))`) is read by that call alone, in the
                        // same work-item: private, never a global temporary.
                        // The outer call still writes where Algorithm 1 says
                        // (the space `g` would have had).
                        if matches!(f.kind, FunKind::UserFun(_)) && calls_user_fun(a) {
                            self.out.exprs.insert(a.id, AddressSpace::Private);
                        }
                        space
                    })
                    .collect();
                self.call(f, &spaces, write_to)
            }
        };
        self.out.exprs.insert(e.id, space);
        space
    }

    /// The space a call of `f` writes to, given its arguments' spaces.
    fn call(&mut self, f: &FunDecl, args: &[AddressSpace], write_to: Option<AddressSpace>) -> AddressSpace {
        match &f.kind {
            FunKind::UserFun(_) => write_to.unwrap_or_else(|| from_args(args)),
            FunKind::Lambda(l) => {
                for (p, s) in l.params.iter().zip(args) {
                    self.out.params.insert(p.id, *s);
                }
                self.expr(&l.body, write_to)
            }
            FunKind::Pattern(p) => match p {
                Pattern::ToPrivate(g) => self.call(g, args, Some(AddressSpace::Private)),
                Pattern::ToLocal(g) => self.call(g, args, Some(AddressSpace::Local)),
                Pattern::ToGlobal(g) => self.call(g, args, Some(AddressSpace::Global)),
                Pattern::Reduce { f: g, .. } | Pattern::PartRed { f: g, .. } => {
                    let init = args.first().copied().unwrap_or(AddressSpace::Private);
                    self.call(g, &[init, args.get(1).copied().unwrap_or(init)], Some(init));
                    init
                }
                // `slideSeqPlus` is given the spaces of `mapSeq(f) o slide`
                // (its private window is the lowering's business), so that
                // the rule introducing it keeps every allocation.
                Pattern::Map { f: g, .. }
                | Pattern::Iterate { f: g, .. }
                | Pattern::SlideSeq { f: g, .. } => self.call(g, args, write_to),
                Pattern::MapVec { f: g } => {
                    self.call(g, args, write_to);
                    write_to.unwrap_or_else(|| from_args(args))
                }
                Pattern::Generate { f: g, .. } => {
                    self.call(g, &[AddressSpace::Private], write_to);
                    AddressSpace::Private
                }
                Pattern::Id => write_to.unwrap_or_else(|| from_args(args)),
                layout_pattern!() => from_args(args),
            },
        }
    }
}

/// Whether `e` is a call of a user function.
fn calls_user_fun(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Call(g, _) if matches!(g.kind, FunKind::UserFun(_)))
}

/// The common space of the arguments, or global when they differ.
fn from_args(args: &[AddressSpace]) -> AddressSpace {
    match args.split_first() {
        Some((first, rest)) if rest.iter().all(|s| s == first) => *first,
        Some(_) => AddressSpace::Global,
        None => AddressSpace::Private,
    }
}
