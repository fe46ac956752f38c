//! Loops for maps and reductions, with control-flow simplification
//! (CGO 2017, Section 5.5) and unrolling.
//!
//! A parallel map over `n` elements is a loop starting at the thread's id
//! and striding by the thread count. When the thread count provably equals
//! `n`, every thread runs the body exactly once: the loop becomes a block.
//! When it is provably at least `n`, the loop becomes an `if`. Sequential
//! loops of one iteration become blocks; loops marked for unrolling, and
//! loops whose variable indexes a private array, are unrolled when their
//! length is a constant.

use super::divergence::DivergentLoop;
use super::{Lowerer, MapCtx};
use crate::arith::{ArithExpr, Range, Var, VarKind};
use crate::codegen::{CompileError, Unsupported};
use crate::ir::c::{BinOp, CExpr, Stmt};
use crate::ir::{MapKind, Span};
use crate::passes::AddressSpace;
use crate::types::Type;
use crate::view::View;
use std::rc::Rc;

/// Loops longer than this are not unrolled for private memory.
pub(crate) const MAX_UNROLL: i64 = 512;

/// Most loop iterations one kernel unrolls in all (nested unrolled loops
/// multiply): beyond, `mapSeqUnroll`/`reduceSeqUnroll` are refused and
/// private-memory loops stay loops, so the kernel text stays bounded.
pub(crate) const MAX_UNROLLED: usize = 65_536;

/// What a body generator receives: the loop index (a variable or, when
/// unrolled, a constant).
pub(crate) type Body<'b, 'a> = dyn FnMut(&mut Lowerer<'a>, ArithExpr) -> Result<(), CompileError> + 'b;

/// A loop body lowered once with its index as the variable `name`.
struct Symbolic<'s> {
    name: &'s str,
    stmts: &'s [Stmt],
    /// The iterations unrolled inside the body, which every copy repeats.
    inner: usize,
}

impl<'a> Lowerer<'a> {
    /// Thread-id function, stride function and thread count of a parallel map kind.
    fn thread_loop(&self, kind: MapKind) -> Option<(String, String, Option<ArithExpr>)> {
        let dim = |d: u8| (d.min(2)) as usize;
        match kind {
            MapKind::Glb(d) => Some((
                format!("get_global_id({d})"),
                format!("get_global_size({d})"),
                Some(self.inp.global[dim(d)].clone()),
            )),
            MapKind::Wrg(d) => Some((
                format!("get_group_id({d})"),
                format!("get_num_groups({d})"),
                self.inp
                    .local
                    .as_ref()
                    .map(|l| ArithExpr::div(self.inp.global[dim(d)].clone(), l[dim(d)].clone())),
            )),
            MapKind::Lcl(d) => Some((
                format!("get_local_id({d})"),
                format!("get_local_size({d})"),
                self.inp.local.as_ref().map(|l| l[dim(d)].clone()),
            )),
            MapKind::Map | MapKind::Seq | MapKind::SeqUnroll => None,
        }
    }

    /// Whether every thread runs a parallel map of `kind` over `n` elements
    /// exactly once (its thread count provably equals `n`).
    pub(crate) fn runs_once(&self, kind: MapKind, n: &ArithExpr) -> bool {
        let Some((_, _, Some(count))) = self.thread_loop(kind) else { return false };
        let (c, n) = (self.decide(&count), self.decide(n));
        self.memo.prove_le(&c, &n) && self.memo.prove_le(&n, &c)
    }

    /// Emits a map loop of `kind` over `n` elements; `body` is run with the
    /// loop index.
    pub(crate) fn map_loop(
        &mut self,
        kind: MapKind,
        n: &ArithExpr,
        body: &mut Body<'_, 'a>,
        span: Span,
    ) -> Result<(), CompileError> {
        let n_dec = self.decide(n);
        match self.thread_loop(kind) {
            Some((start, step, count)) => {
                let prefix = match kind {
                    MapKind::Glb(_) => "gl_id",
                    MapKind::Wrg(_) => "wg_id",
                    _ => "l_id",
                };
                let name = self.names.fresh(prefix);
                let var = ArithExpr::Var(Var {
                    name: name.clone(),
                    kind: VarKind::Index,
                    range: Range::new(ArithExpr::Cst(0), n_dec.clone()),
                });
                let exactly_once = self.runs_once(kind, n);
                self.maps.push(MapCtx { kind, var: var.clone() });
                let count = count.map(|c| self.decide(&c));
                // Lcl and Glb loops have thread-dependent trip counts, unless
                // every thread provably runs the body exactly once: then a
                // barrier inside is reached by all threads, loop or not.
                let divergent = matches!(kind, MapKind::Lcl(_) | MapKind::Glb(_)) && !exactly_once;
                if let (MapKind::Lcl(_), Some(l)) = (kind, &self.divergent_loop) {
                    if l.unsynced() {
                        let reason = Unsupported::BarrierInDivergentLoop { dim: l.dim, len: l.len.clone() };
                        return Err(CompileError::unsupported(reason, span));
                    }
                }
                if divergent {
                    self.divergence += 1;
                    if let (MapKind::Lcl(dim), None) = (kind, &self.divergent_loop) {
                        self.divergent_loop = Some(DivergentLoop::new(dim, n_dec.clone()));
                    }
                }
                let r = self.in_block(|l| body(l, var.clone()));
                let closed = if divergent { self.leave_divergent() } else { None };
                self.maps.pop();
                let (mut stmts, ()) = r?;
                if let Some(l) = closed {
                    Self::check_left_out(&mut stmts, l)?;
                }
                let decl = Stmt::Decl {
                    qualifier: None,
                    ty: Type::INT,
                    pointer: false,
                    name: name.clone(),
                    len: None,
                    init: Some(CExpr::raw(start.clone())),
                };
                let simplify = self.inp.opts.cf_simplify;
                let once = simplify && exactly_once;
                let at_most_once = simplify && count.as_ref().is_some_and(|c| self.memo.prove_le(&n_dec, c));
                // A work-group that runs its body once has nothing after its
                // last barrier: no thread reads what the others wrote.
                if (once || at_most_once) && matches!(kind, MapKind::Wrg(_)) && self.inp.opts.barrier_elim {
                    if let Some(Stmt::Barrier { .. }) = stmts.last() {
                        stmts.pop();
                    }
                }
                if once {
                    let mut b = vec![decl];
                    b.extend(stmts);
                    self.emit(Stmt::Block(b));
                } else if at_most_once {
                    let mut b = vec![decl];
                    b.extend(stmts);
                    self.emit(Stmt::If {
                        cond: CExpr::binary(BinOp::Lt, CExpr::raw(start), CExpr::Arith(self.index(&n_dec))),
                        then: b,
                        otherwise: Vec::new(),
                    });
                } else {
                    // A local size known when compiling becomes the literal
                    // stride of a mapLcl loop over a tile of known length:
                    // the driver can then count the trip of a tile copy and
                    // unroll it (with `get_local_size` it cannot). Loops of
                    // unknown length keep the query (the gather transposition
                    // lost 15% on NVIDIA to the unrolled form), and so do
                    // global and work-group loops: they usually run once, and
                    // unrolling them only costs registers (seen for NN).
                    let step = match (&count, &n_dec, kind) {
                        (Some(ArithExpr::Cst(c)), ArithExpr::Cst(_), MapKind::Lcl(_)) if simplify => {
                            c.to_string()
                        }
                        _ => step,
                    };
                    self.emit(Stmt::CountedFor {
                        var: name,
                        init: CExpr::raw(start),
                        bound: CExpr::Arith(self.index(&n_dec)),
                        step: CExpr::raw(step),
                        body: stmts,
                    });
                }
                Ok(())
            }
            None => {
                let unroll = matches!(kind, MapKind::SeqUnroll);
                self.seq_loop(&n_dec, unroll, Some(kind), body, span)
            }
        }
    }

    /// Leaves a thread-dependent loop: the outermost one's record, whose
    /// left-out barriers its body is then checked for.
    fn leave_divergent(&mut self) -> Option<DivergentLoop> {
        self.divergence -= 1;
        if self.divergence == 0 {
            self.divergent_loop.take()
        } else {
            None
        }
    }

    /// The loop's own barrier follows (`barrier_after`): what its body
    /// left out must not be needed inside it. Removes the markers.
    fn check_left_out(stmts: &mut Vec<Stmt>, l: DivergentLoop) -> Result<(), CompileError> {
        match super::divergence::misplaced(stmts, &l) {
            Some(at) => {
                let reason = Unsupported::ReadInDivergentLoop { dim: l.dim, len: l.len };
                Err(CompileError::unsupported(reason, at))
            }
            None => Ok(()),
        }
    }

    /// A sequential loop over `n` iterations (maps and reductions).
    pub(crate) fn seq_loop(
        &mut self,
        n: &ArithExpr,
        unroll: bool,
        map: Option<MapKind>,
        body: &mut Body<'_, 'a>,
        span: Span,
    ) -> Result<(), CompileError> {
        let count = n.as_cst();
        if unroll && count.is_none() {
            return self.unsupported(span, Unsupported::UnrollSymbolic { len: n.clone() });
        }
        if let Some(c) = count {
            if c <= 0 {
                return Ok(());
            }
            if unroll && self.unrolled_iters.saturating_add(c as usize) > MAX_UNROLLED {
                return self.unsupported(span, Unsupported::UnrollTooMany { count: c, max: MAX_UNROLLED });
            }
            if c == 1 && (unroll || self.inp.opts.cf_simplify) {
                return self.unrolled(c, map, body);
            }
        }
        let name = self.names.fresh("i");
        let var = ArithExpr::Var(Var {
            name: name.clone(),
            kind: VarKind::Index,
            range: Range::new(ArithExpr::Cst(0), n.clone()),
        });
        let (locals, temps, iters) = (self.local_decls.len(), self.temps.len(), self.unrolled_iters);
        if let Some(kind) = map {
            self.maps.push(MapCtx { kind, var: var.clone() });
        }
        let r = self.in_block(|l| body(l, var.clone()));
        if map.is_some() {
            self.maps.pop();
        }
        let stmts = match (r, count) {
            (Ok((stmts, ())), _) => stmts,
            // A body marked for unrolling may be refused with its index
            // symbolic where a check needs the index's value: then each
            // copy is lowered with its constant, and refused by the copy
            // that fails (or accepted).
            (Err(_), Some(c)) if unroll => {
                self.local_decls.truncate(locals);
                self.temps.truncate(temps);
                self.unrolled_iters = iters;
                return self.unrolled(c, map, body);
            }
            (Err(e), _) => return Err(e),
        };
        if let Some(c) = count {
            // A loop that indexes private memory runs from registers only when unrolled.
            let private = self.private_index_vars.contains(&name)
                && c <= MAX_UNROLL
                && self.unrolled_iters + c as usize <= MAX_UNROLLED;
            if unroll || private {
                let inner = self.unrolled_iters - iters;
                return self.copies_of(Symbolic { name: &name, stmts: &stmts, inner }, c, map, body);
            }
        }
        self.emit(Stmt::CountedFor {
            var: name,
            init: CExpr::raw("0"),
            bound: CExpr::Arith(self.index(n)),
            step: CExpr::raw("1"),
            body: stmts,
        });
        Ok(())
    }

    fn unrolled(
        &mut self,
        count: i64,
        map: Option<MapKind>,
        body: &mut Body<'_, 'a>,
    ) -> Result<(), CompileError> {
        self.unrolled_iters += count.max(0) as usize;
        for k in 0..count {
            let idx = ArithExpr::Cst(k);
            if let Some(kind) = map {
                self.maps.push(MapCtx { kind, var: idx.clone() });
            }
            let r = self.in_block(|l| body(l, idx));
            if map.is_some() {
                self.maps.pop();
            }
            let (stmts, ()) = r?;
            // A block keeps each iteration's private declarations apart.
            self.emit(Stmt::Block(stmts));
        }
        Ok(())
    }

    /// The unrolled copies of a loop whose body was lowered once with its
    /// index symbolic (see `unroll`): the body with each constant in turn.
    fn copies_of(
        &mut self,
        sym: Symbolic,
        count: i64,
        map: Option<MapKind>,
        body: &mut Body<'_, 'a>,
    ) -> Result<(), CompileError> {
        let Symbolic { name, stmts, inner } = sym;
        if super::unroll::names_outside_indices(stmts, name) {
            return self.unrolled(count, map, body);
        }
        let c = count.max(0) as usize;
        self.unrolled_iters += c + c.saturating_sub(1) * inner;
        for k in 0..count {
            let put = |v: &str| (v == name).then_some(ArithExpr::Cst(k));
            let simplify = self.inp.opts.arith_simplify;
            let memo = &self.memo;
            let fin = |e: &ArithExpr| -> ArithExpr {
                let mut e = e.clone();
                e.substitute_with(&put);
                match e {
                    ArithExpr::Cst(_) => e,
                    _ if simplify => memo.simplify(&e),
                    _ => e,
                }
            };
            let copy = super::unroll::instantiate(stmts, &fin);
            // A block keeps each iteration's private declarations apart.
            self.emit(Stmt::Block(copy));
        }
        Ok(())
    }

    /// Emits a barrier after a `mapLcl` that wrote `out`, unless barrier
    /// elimination showed it unnecessary or threads may diverge here.
    pub(crate) fn barrier_after(&mut self, out: &View, eliminable: bool, span: Span) {
        if eliminable && self.inp.opts.barrier_elim {
            // A nested mapLcl's barrier that ends this map's body stood in
            // for this map's own barrier: it goes too.
            self.strip_trailing_barrier();
            return;
        }
        if self.divergence > 0 {
            // Left out: the barrier after the enclosing loop covers this
            // map, unless something follows it inside the loop (a marker
            // stands in its place until the loop is complete).
            if let Some(l) = &mut self.divergent_loop {
                let marker = l.drop_barrier(span);
                self.emit(marker);
            }
            return;
        }
        let space = root_space(out);
        // A map whose body already ends with a barrier (a nested mapLcl's)
        // needs no second one. A map writing private memory still needs its
        // barrier: it may have read local memory that the next statements
        // overwrite (a tile reloaded in the next iteration of a loop).
        if self.ends_with_barrier() {
            return;
        }
        self.emit(Stmt::Barrier {
            local: space != Some(AddressSpace::Global),
            global: space == Some(AddressSpace::Global),
        });
    }
}

impl Lowerer<'_> {
    /// Removes the barrier that the last statement emitted ends with, when
    /// that statement is a block (a map every thread runs once) ending with one.
    fn strip_trailing_barrier(&mut self) {
        fn strip(b: &mut Vec<Stmt>) {
            match b.last_mut() {
                Some(Stmt::Barrier { .. }) => {
                    b.pop();
                }
                Some(Stmt::Block(inner)) => strip(inner),
                _ => {}
            }
        }
        if let Some(Stmt::Block(b)) = self.blocks.last_mut().and_then(|b| b.last_mut()) {
            strip(b);
        }
    }

    /// Whether the last statement emitted is, or ends (as a block or a loop
    /// every thread runs alike) with, a barrier.
    fn ends_with_barrier(&self) -> bool {
        fn ends(s: &Stmt) -> bool {
            match s {
                Stmt::Barrier { .. } => true,
                Stmt::Block(b) | Stmt::CountedFor { body: b, .. } => b.last().is_some_and(ends),
                Stmt::Decl { .. }
                | Stmt::Assign { .. }
                | Stmt::Expr(_)
                | Stmt::If { .. }
                | Stmt::Comment(_) => false,
                Stmt::For { .. } | Stmt::Return(_) => s.user_only(),
            }
        }
        self.blocks.last().and_then(|b| b.last()).is_some_and(ends)
    }
}

/// The address space of the memory a view finally reaches (the first one).
pub(crate) fn root_space(v: &View) -> Option<AddressSpace> {
    match v {
        View::Mem { mem, .. } => Some(mem.space),
        View::Zip { of } => of.first().and_then(|v| root_space(v)),
        _ => v.wrapped().and_then(root_space),
    }
}

/// The memory a view finally addresses, if one (none through a `zip`).
pub(crate) fn root_mem(v: &View) -> Option<&crate::view::Memory> {
    match v {
        View::Mem { mem, .. } => Some(mem),
        _ => v.wrapped().and_then(root_mem),
    }
}

/// Keeps `Rc` in scope for callers building views.
pub(crate) fn rc(v: View) -> Rc<View> {
    Rc::new(v)
}
