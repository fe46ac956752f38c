//! OpenCL thread-count inference (the Lift pattern reference, Section 2.4).
//!
//! Thread counts are chosen to match the lengths the maps iterate over, so
//! that as many map loops as possible run exactly once: a `mapGlb` over `n`
//! elements gets `n` global threads in its dimension; a `mapWrg` over `n`
//! gets `n` work-groups; the local size is the most common length among the
//! `mapLcl`s of that dimension (ties go to the largest). A dimension whose
//! only maps are `mapLcl`s (several rows of one work-group: `mapLcl(1)`
//! inside `mapWrg(0)`) gets one work-group of that local size, so that its
//! `mapLcl` runs once per work-item there, as it does in the dimension of
//! the `mapWrg`. A dimension with no map gets one thread.

use super::typecheck::Types;
use crate::arith::{self, ArithExpr};
use crate::ir::{layout_pattern, Def, Expr, ExprKind, FunDecl, FunKind, MapKind, Pattern};
use crate::types::Type;
use std::collections::HashMap;

/// Inferred launch sizes, as expressions of the sizes.
#[derive(Clone, Debug, PartialEq)]
pub struct Launch {
    pub global: [ArithExpr; 3],
    /// `None` when the program uses only `mapGlb` (the driver may choose).
    pub local: Option<[ArithExpr; 3]>,
    /// The dimensions of one work-group (only `mapLcl`s name them): a
    /// local size given instead of the inferred one is their global size.
    pub one_group: [bool; 3],
}

#[derive(Default)]
struct Lengths {
    glb: [Vec<ArithExpr>; 3],
    wrg: [Vec<ArithExpr>; 3],
    lcl: [Vec<ArithExpr>; 3],
}

/// Infers the launch sizes of `def`.
pub fn infer(def: &Def, types: &Types) -> Launch {
    let mut w = Walker { types, lens: Lengths::default(), iter_first: HashMap::new() };
    w.expr(&def.body);
    let one = ArithExpr::Cst(1);
    let mut global = [one.clone(), one.clone(), one.clone()];
    let mut local = [one.clone(), one.clone(), one.clone()];
    let mut any_wrg = false;
    let mut one_group = [false; 3];
    for d in 0..3 {
        if let Some(g) = most_common(&w.lens.glb[d]) {
            global[d] = g;
        } else if let Some(n) = most_common(&w.lens.wrg[d]) {
            any_wrg = true;
            let l = most_common(&w.lens.lcl[d]).unwrap_or(one.clone());
            global[d] = arith::simplify(&ArithExpr::mul(n, l.clone()));
            local[d] = l;
        } else if let Some(l) = most_common(&w.lens.lcl[d]) {
            global[d] = l.clone();
            local[d] = l;
            one_group[d] = true;
        }
    }
    Launch { global, local: any_wrg.then_some(local), one_group }
}

/// The most frequent length; ties go to the largest constant, else the first.
fn most_common(lens: &[ArithExpr]) -> Option<ArithExpr> {
    let mut counts: Vec<(ArithExpr, usize)> = Vec::new();
    for l in lens {
        match counts.iter_mut().find(|(x, _)| x == l) {
            Some((_, c)) => *c += 1,
            None => counts.push((l.clone(), 1)),
        }
    }
    let best = counts.iter().map(|(_, c)| *c).max()?;
    let tied: Vec<&ArithExpr> = counts.iter().filter(|(_, c)| *c == best).map(|(x, _)| x).collect();
    let largest_cst = tied.iter().filter_map(|x| x.as_cst()).max();
    Some(largest_cst.map(ArithExpr::Cst).unwrap_or_else(|| tied[0].clone()))
}

struct Walker<'a> {
    types: &'a Types,
    lens: Lengths,
    /// Iterate length variable -> its value in the first iteration.
    iter_first: HashMap<String, ArithExpr>,
}

impl Walker<'_> {
    fn expr(&mut self, e: &Expr) {
        if let ExprKind::Call(f, args) = &e.kind {
            for a in args {
                self.expr(a);
            }
            let arg_types: Vec<Type> = args.iter().map(|a| self.types.of(a).clone()).collect();
            self.fun(f, &arg_types);
        }
    }

    fn record(&mut self, kind: MapKind, n: &ArithExpr) {
        // Lengths inside an iterate are counted at their first iteration.
        let n = arith::simplify(&n.substitute(&self.iter_first));
        match kind {
            MapKind::Glb(d) => self.lens.glb[d.min(2) as usize].push(n),
            MapKind::Wrg(d) => self.lens.wrg[d.min(2) as usize].push(n),
            MapKind::Lcl(d) => self.lens.lcl[d.min(2) as usize].push(n),
            MapKind::Map | MapKind::Seq | MapKind::SeqUnroll => {}
        }
    }

    fn fun(&mut self, f: &FunDecl, args: &[Type]) {
        match &f.kind {
            FunKind::UserFun(_) => {}
            FunKind::Lambda(l) => self.expr(&l.body),
            FunKind::Pattern(p) => match p {
                Pattern::Map { kind, f: g } => {
                    if let Some(Type::Array(elem, n)) = args.first() {
                        self.record(*kind, n);
                        self.fun(g, &[(**elem).clone()]);
                    }
                }
                Pattern::Reduce { f: g, .. } | Pattern::PartRed { f: g, .. } => {
                    if let [init, Type::Array(elem, _)] = args {
                        self.fun(g, &[init.clone(), (**elem).clone()]);
                    }
                }
                Pattern::Iterate { f: g, .. } => {
                    if let (Some(Type::Array(elem, n)), Some(var)) =
                        (args.first(), self.types.iterate_vars.get(&f.id))
                    {
                        self.iter_first.insert(var.name.clone(), n.clone());
                        self.fun(g, &[Type::array((**elem).clone(), ArithExpr::Var(var.clone()))]);
                    }
                }
                Pattern::ToGlobal(g) | Pattern::ToLocal(g) | Pattern::ToPrivate(g) => self.fun(g, args),
                Pattern::SlideSeq { size, f: g, .. } => {
                    if let Some(Type::Array(elem, _)) = args.first() {
                        self.fun(g, &[Type::array((**elem).clone(), size.clone())]);
                    }
                }
                Pattern::MapVec { .. } | Pattern::Generate { .. } | layout_pattern!() | Pattern::Id => {}
            },
        }
    }
}
