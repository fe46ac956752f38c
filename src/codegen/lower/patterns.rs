//! Lowering of each pattern.

use super::loops::rc;
use super::{Call, Lowerer};
use crate::arith::ArithExpr;
use crate::codegen::{CompileError, Unsupported};
use crate::ir::c::CExpr;
use crate::ir::{layout_pattern, ExprKind, FunDecl, FunKind, MapKind, Pattern, ReduceKind, Span};
use crate::passes::AddressSpace;
use crate::types::Type;
use crate::view::View;
use std::rc::Rc;

fn elem_of(t: &Type) -> Option<(&Type, &ArithExpr)> {
    match t {
        Type::Array(e, n) => Some((e, n)),
        _ => None,
    }
}

fn parallel(kind: MapKind) -> bool {
    matches!(kind, MapKind::Glb(_) | MapKind::Wrg(_) | MapKind::Lcl(_))
}

/// The length of an array accumulator (for viewing it as `[[a]n]1`).
fn acc_len(arg_types: &[Type]) -> ArithExpr {
    match arg_types.first() {
        Some(Type::Array(_, n)) => n.clone(),
        _ => ArithExpr::Cst(1),
    }
}

impl<'a> Lowerer<'a> {
    /// The element type left after stripping the directly nested parallel
    /// maps of `g` (looking through `toX` and lambdas whose body is such a
    /// map) that every thread runs exactly once, and their kinds (outermost first).
    /// A map a thread may run several times keeps its dimension: dropping it
    /// would make the thread's elements share one private location.
    fn private_elem(&self, g: &FunDecl, ty: &Type) -> (Type, Vec<MapKind>) {
        match &g.kind {
            FunKind::Pattern(Pattern::Map { kind, f }) if parallel(*kind) => match ty {
                Type::Array(e, n) if self.runs_once(*kind, n) => {
                    let (t, mut d) = self.private_elem(f, e);
                    d.insert(0, *kind);
                    (t, d)
                }
                other => (other.clone(), Vec::new()),
            },
            FunKind::Pattern(Pattern::ToGlobal(h) | Pattern::ToLocal(h) | Pattern::ToPrivate(h)) => {
                self.private_elem(h, ty)
            }
            // `\x -> mapLcl(f) $ e`: the lambda's result is the nested map's,
            // element for element.
            FunKind::Lambda(l) => match &l.body.kind {
                ExprKind::Call(h, _) => self.private_elem(h, ty),
                ExprKind::Literal(_) | ExprKind::Param(_) => (ty.clone(), Vec::new()),
            },
            FunKind::Pattern(_) | FunKind::UserFun(_) => (ty.clone(), Vec::new()),
        }
    }

    /// Lowers a pattern: one arm per pattern, each calling the lowering of
    /// its family (maps, reductions, iteration, writes of single values,
    /// generated arrays, layout patterns as views).
    pub(crate) fn pattern(&mut self, f: &FunDecl, p: &Pattern, c: Call) -> Result<Rc<View>, CompileError> {
        match p {
            Pattern::Map { kind: MapKind::Map, f: g } => self.high_level_map(g, c),
            Pattern::Map { kind, f: g } => self.map(*kind, g, c),
            Pattern::MapVec { f: g } => self.map_vec(g, c),
            Pattern::Reduce { kind: ReduceKind::Reduce, .. } | Pattern::PartRed { .. } => {
                self.unsupported(c.span, Unsupported::HighLevelReduce)
            }
            Pattern::Reduce { kind, f: g } => self.reduce_seq(*kind, g, c),
            Pattern::SlideSeq { size, step, f: g } => self.slide_seq((size, step), g, c),
            Pattern::Iterate { n, f: g } => self.iterate(f, *n, g, c),
            Pattern::ToGlobal(g) => self.apply(g, Call { space: AddressSpace::Global, ..c }),
            Pattern::ToLocal(g) => self.apply(g, Call { space: AddressSpace::Local, ..c }),
            Pattern::ToPrivate(g) => self.apply(g, Call { space: AddressSpace::Private, ..c }),
            Pattern::Id => self.id(c),
            Pattern::Generate { f: g, len } => self.generate(g, len, c),
            layout_pattern!() => {
                let v = self.layout(p, &c.args, c.arg_types, c.span)?;
                self.finish_value(v, c.out, c.ty, c.span)
            }
        }
    }

    /// The high-level `map`, of a function that only rearranges data.
    fn high_level_map(&mut self, g: &FunDecl, c: Call) -> Result<Rc<View>, CompileError> {
        if !super::is_layout_only(g) {
            return self.unsupported(c.span, Unsupported::HighLevelMap);
        }
        let v = self.map_layout(g, c.arg()?, c.arg_ty()?, c.ty, c.span)?;
        self.finish_value(v, c.out, c.ty, c.span)
    }

    /// A parallel or sequential map: a loop (or block, or guard) writing
    /// element `i` of its target.
    fn map(&mut self, kind: MapKind, g: &FunDecl, c: Call) -> Result<Rc<View>, CompileError> {
        let xs = c.arg()?;
        let at = c.arg_ty()?;
        let (Some((elem, n)), Some((res_elem, _))) = (elem_of(at), elem_of(c.ty)) else {
            return Err(CompileError::Internal("map over a non-array after type checking".into()));
        };
        let target = self.map_target(kind, g, n, res_elem, &c)?;
        if let MapKind::Lcl(d) = kind {
            self.check_no_redundant_update(d, &xs, &target, c.span)?;
        }
        let (elem, res_elem, space, span) = (elem.clone(), res_elem.clone(), c.space, c.span);
        let t2 = target.clone();
        let mut body = |l: &mut Lowerer<'a>, i: ArithExpr| -> Result<(), CompileError> {
            let x = rc(View::access(i.clone(), (*xs).clone()));
            let o = rc(View::access(i, (*t2).clone()));
            l.apply(g, Call::inner(vec![x], std::slice::from_ref(&elem), &res_elem, Some(o), space, span))?;
            Ok(())
        };
        self.map_loop(kind, n, &mut body, span)?;
        if let MapKind::Lcl(_) = kind {
            let elim = c.id.is_some_and(|i| self.inp.no_barrier.contains(&i));
            self.barrier_after(&target, elim, span);
        }
        Ok(target)
    }

    /// Where a map writes: the output view, or fresh memory; in private
    /// memory, each thread's part of the result only.
    fn map_target(
        &mut self,
        kind: MapKind,
        g: &FunDecl,
        n: &ArithExpr,
        res_elem: &Type,
        c: &Call,
    ) -> Result<Rc<View>, CompileError> {
        let (ty, space, span) = (c.ty, c.space, c.span);
        Ok(match &c.out {
            Some(o) => o.clone(),
            None if space == AddressSpace::Private && parallel(kind) && self.runs_once(kind, n) => {
                // Each thread keeps only its own elements: drop the
                // dimensions of this and directly nested parallel maps.
                let (t, nested) = self.private_elem(g, res_elem);
                let mut v = self.alloc(&t, space, span)?;
                // Innermost first: consumption pops the outermost index first.
                for k in nested.iter().rev().chain([&kind]) {
                    v = rc(View::DropIndex { of: v, kind: *k, keep: false, depth: 0 });
                }
                v
            }
            None if space == AddressSpace::Private && parallel(kind) => {
                // Each thread's array has room for every element but
                // holds only those of its own iterations: reads are
                // checked like those of the case above (found by
                // fuzzing: a mapLcl over 4 rows read back by a mapLcl
                // over their 12 elements read other threads' rows).
                // Directly nested parallel maps give each thread only
                // its own inner elements too: their indices are
                // checked as well (found by fuzzing: a mapLcl(0)
                // inside such a mapLcl(1), read back by a mapLcl(2),
                // read the other threads' columns).
                let mut v = self.alloc(ty, space, span)?;
                for (depth, k) in [kind].into_iter().chain(nested_parallel(g)).enumerate() {
                    v = rc(View::DropIndex { of: v, kind: k, keep: true, depth });
                }
                v
            }
            None => self.alloc(ty, space, span)?,
        })
    }

    /// `mapVec(uf)`: the vectorised version of the user function.
    fn map_vec(&mut self, g: &FunDecl, c: Call) -> Result<Rc<View>, CompileError> {
        let FunKind::UserFun(uf) = &g.kind else {
            return self.unsupported(c.span, Unsupported::MapVecFunction);
        };
        let Type::Vector(_, w) = c.arg_ty()?.clone() else {
            return Err(CompileError::Internal("mapVec over a non-vector after type checking".into()));
        };
        if !self.vector_funs.contains(&(*uf, w)) {
            self.vector_funs.push((*uf, w));
        }
        let name = crate::codegen::lower::vector_fun_name(&self.inp.program.user_fun(*uf).name, w);
        let x = self.read(&*c.arg()?, c.arg_ty()?, c.span)?;
        let target = match c.out {
            Some(o) => o,
            None => self.alloc(c.ty, c.space, c.span)?,
        };
        self.write(&target, CExpr::call(name, vec![x]), c.ty, c.span)?;
        Ok(target)
    }

    /// `reduceSeq(g)` (or its unrolled form) of `[init, xs]`: a loop
    /// updating an accumulator in private memory.
    fn reduce_seq(&mut self, kind: ReduceKind, g: &FunDecl, c: Call) -> Result<Rc<View>, CompileError> {
        let [init, xs] = &c.args[..] else {
            return Err(CompileError::Internal("reduction without init and array".into()));
        };
        let (Some(acc_ty), Some((elem, n))) = (c.arg_types.first(), c.arg_types.get(1).and_then(elem_of))
        else {
            return Err(CompileError::Internal("reduction argument types".into()));
        };
        let (acc_ty, elem, n, span) = (acc_ty.clone(), elem.clone(), n.clone(), c.span);
        let acc = self.accumulator(init, &acc_ty, span)?;
        let xs = xs.clone();
        let acc2 = acc.clone();
        let types = [acc_ty.clone(), elem];
        let mut body = |l: &mut Lowerer<'a>, i: ArithExpr| -> Result<(), CompileError> {
            let x = rc(View::access(i, (*xs).clone()));
            let args = vec![acc2.clone(), x];
            l.apply(g, Call::inner(args, &types, &acc_ty, Some(acc2.clone()), AddressSpace::Private, span))?;
            Ok(())
        };
        let n = self.decide(&n);
        self.seq_loop(&n, matches!(kind, ReduceKind::SeqUnroll), None, &mut body, span)?;
        self.reduction_result(acc, &types[0], c)
    }

    /// The accumulator of a reduction, in private memory (Algorithm 1: a
    /// reduction writes into its initialiser's memory). An array
    /// accumulator is updated in place in the memory its initialiser was
    /// written to; a single value is copied into a fresh private variable.
    fn accumulator(&mut self, init: &Rc<View>, acc_ty: &Type, span: Span) -> Result<Rc<View>, CompileError> {
        if let Type::Array(..) = acc_ty {
            if super::loops::root_space(init).is_none() {
                return self.unsupported(span, Unsupported::ArrayAccumulator);
            }
            return Ok(init.clone());
        }
        let acc = self.alloc(acc_ty, AddressSpace::Private, span)?;
        let v0 = self.read(init, acc_ty, span)?;
        self.write(&acc, v0, acc_ty, span)?;
        Ok(acc)
    }

    /// The result of a reduction: the accumulator seen as a one-element
    /// array, copied to the output view when there is one elsewhere.
    fn reduction_result(&mut self, acc: Rc<View>, acc_ty: &Type, c: Call) -> Result<Rc<View>, CompileError> {
        let result = match &*acc {
            View::Mem { mem, .. } => rc(View::Mem { mem: mem.clone(), ty: c.ty.clone() }),
            _ => rc(View::Split { n: acc_len(c.arg_types), of: acc.clone() }),
        };
        match c.out {
            None => Ok(result),
            // An array accumulator updated in place where the result goes.
            Some(o)
                if matches!(acc_ty, Type::Array(..))
                    && self.same_place(&o, &acc, acc_ty.lengths().len())? =>
            {
                Ok(o)
            }
            Some(o) => {
                let et = elem_of(c.ty).map(|(e, _)| e.clone()).unwrap_or(Type::FLOAT);
                let v = self.read(&View::access(ArithExpr::Cst(0), (*result).clone()), &et, c.span)?;
                self.write(&View::access(ArithExpr::Cst(0), (*o).clone()), v, &et, c.span)?;
                Ok(o)
            }
        }
    }

    /// `id` of a single value: a copy.
    fn id(&mut self, c: Call) -> Result<Rc<View>, CompileError> {
        if let Type::Array(..) = c.ty {
            return self.unsupported(c.span, Unsupported::IdOfArray);
        }
        let v = self.read(&*c.arg()?, c.ty, c.span)?;
        let target = match c.out {
            Some(o) => o,
            None => self.alloc(c.ty, c.space, c.span)?,
        };
        self.write(&target, v, c.ty, c.span)?;
        Ok(target)
    }

    /// `generate(len, g)`: a view whose element `i` is `g(i)`.
    fn generate(&mut self, g: &FunDecl, len: &ArithExpr, c: Call) -> Result<Rc<View>, CompileError> {
        let span = c.span;
        let v = match &g.kind {
            FunKind::UserFun(uf) => rc(View::Generate { fun: self.inp.program.user_fun(*uf).name.clone() }),
            // `generate(n, id)`: the indices themselves.
            FunKind::Pattern(Pattern::Id) => {
                let var = self.names.fresh("g");
                let h = ArithExpr::index(&var, ArithExpr::Cst(0), len.clone());
                rc(View::MapLayout { var, body: rc(View::IndexValue(h)) })
            }
            FunKind::Lambda(_) | FunKind::Pattern(_) if super::is_layout_only(g) => {
                // Element i is g applied to the index value i.
                let var = self.names.fresh("g");
                let h = ArithExpr::index(&var, ArithExpr::Cst(0), len.clone());
                let elem = elem_of(c.ty).map(|(e, _)| e.clone()).unwrap_or(Type::INT);
                let args = vec![rc(View::IndexValue(h))];
                let body =
                    self.apply(g, Call::inner(args, &[Type::INT], &elem, None, AddressSpace::Private, span))?;
                rc(View::MapLayout { var, body })
            }
            FunKind::Lambda(_) | FunKind::Pattern(_) => {
                return self.unsupported(span, Unsupported::GenerateFunction)
            }
        };
        self.finish_value(v, c.out, c.ty, span)
    }

    /// `map(g)` where `g` only rearranges data: a view, no loop (CGO 2018,
    /// Section 3.4 builds multi-dimensional stencils this way).
    fn map_layout(
        &mut self,
        g: &FunDecl,
        xs: Rc<View>,
        at: &Type,
        ty: &Type,
        span: Span,
    ) -> Result<Rc<View>, CompileError> {
        let (Some((elem, n)), Some((res_elem, _))) = (elem_of(at), elem_of(ty)) else {
            return Err(CompileError::Internal("map over a non-array after type checking".into()));
        };
        let var = self.names.fresh("m");
        let h = ArithExpr::index(&var, ArithExpr::Cst(0), n.clone());
        let x = rc(View::access(h, (*xs).clone()));
        let body = self.apply(
            g,
            Call::inner(vec![x], std::slice::from_ref(elem), res_elem, None, AddressSpace::Private, span),
        )?;
        Ok(rc(View::MapLayout { var, body }))
    }

    /// Whether two views of arrays reach the same memory locations (probed
    /// at element 0 and at a symbolic element).
    fn same_place(&mut self, result: &View, acc: &View, dims: usize) -> Result<bool, CompileError> {
        // `result` is `[acc]1`: one more leading index than `acc`.
        let probe = |v: &View, lead: usize, i: &ArithExpr| {
            let mut idx = vec![ArithExpr::Cst(0); dims + lead];
            if let Some(last) = idx.last_mut() {
                *last = i.clone();
            }
            crate::view::consume(v, &idx, None, &|_| String::new(), &self.memo)
        };
        let k = ArithExpr::index("k_probe", ArithExpr::Cst(0), ArithExpr::Cst(2));
        for i in [ArithExpr::Cst(0), k] {
            let (x, y) = match (probe(result, 1, &i), probe(acc, 0, &i)) {
                (Ok(x), Ok(y)) => (x, y),
                _ => return Ok(false),
            };
            match (x, y) {
                (
                    crate::view::Access::Mem { mem: m1, index: i1, .. },
                    crate::view::Access::Mem { mem: m2, index: i2, .. },
                ) => {
                    if m1.name != m2.name || self.decide(&i1) != self.decide(&i2) {
                        return Ok(false);
                    }
                }
                _ => return Ok(false),
            }
        }
        Ok(true)
    }

    /// The view a layout pattern gives its argument(s).
    pub(crate) fn layout(
        &mut self,
        p: &Pattern,
        args: &[Rc<View>],
        arg_types: &[Type],
        span: Span,
    ) -> Result<Rc<View>, CompileError> {
        let of = args
            .first()
            .cloned()
            .ok_or_else(|| CompileError::Internal("layout pattern without argument".into()))?;
        let at = arg_types.first().cloned().unwrap_or(Type::FLOAT);
        let inner_len = |t: &Type| match t {
            Type::Array(e, _) => match &**e {
                Type::Array(_, m) => Some(m.clone()),
                _ => None,
            },
            _ => None,
        };
        let len_of = |t: &Type| elem_of(t).map(|(_, n)| n.clone()).unwrap_or(ArithExpr::Cst(1));
        Ok(rc(match p {
            Pattern::Split(n) => View::Split { n: n.clone(), of },
            Pattern::Join => match inner_len(&at) {
                Some(n) => View::Join { n, of },
                None => return Err(CompileError::Internal("join of a flat array".into())),
            },
            Pattern::Gather(g) => {
                self.check_index_fun("gather", g, &len_of(&at), span)?;
                View::Gather { f: g.clone(), of }
            }
            Pattern::Scatter(_) => return self.unsupported(span, Unsupported::ScatterReads),
            Pattern::Transpose => View::Transpose { of },
            Pattern::Zip(_) => View::Zip { of: args.to_vec() },
            Pattern::Get(k) => View::Get { k: *k, of },
            Pattern::At(i) => {
                self.check_at(i, &len_of(&at), span)?;
                View::Access { index: i.clone(), of }
            }
            Pattern::AsVector(n) => View::AsVector { n: *n, of },
            Pattern::AsScalar => match elem_of(&at).and_then(|(e, _)| e.as_scalar_elem()) {
                Some((_, n)) => View::AsScalar { n, of },
                None => return Err(CompileError::Internal("asScalar of non-vectors".into())),
            },
            Pattern::Slide { step, .. } => View::Slide { step: step.clone(), of },
            Pattern::Pad { left, mode, .. } => {
                View::Pad { left: left.clone(), len: len_of(&at), mode: *mode, of }
            }
            Pattern::PadConst { left, value, .. } => {
                View::PadConst { left: left.clone(), len: len_of(&at), value: super::literal_c(value), of }
            }
            Pattern::Filter => {
                let idx = args
                    .get(1)
                    .cloned()
                    .ok_or_else(|| CompileError::Internal("filter without indices".into()))?;
                View::Filter { of, idx, of_len: len_of(&at) }
            }
            Pattern::Map { .. }
            | Pattern::MapVec { .. }
            | Pattern::Reduce { .. }
            | Pattern::PartRed { .. }
            | Pattern::Iterate { .. }
            | Pattern::SlideSeq { .. }
            | Pattern::ToGlobal(_)
            | Pattern::ToLocal(_)
            | Pattern::ToPrivate(_)
            | Pattern::Generate { .. }
            | Pattern::Id => return Err(CompileError::Internal("not a layout pattern".into())),
        }))
    }
}

/// The kinds of the parallel maps directly nested in `g` (the function of
/// a map), outermost first.
fn nested_parallel(g: &FunDecl) -> Vec<MapKind> {
    match &g.kind {
        FunKind::Pattern(Pattern::Map { kind, f }) if parallel(*kind) => {
            let mut v = vec![*kind];
            v.extend(nested_parallel(f));
            v
        }
        FunKind::Pattern(Pattern::ToGlobal(h) | Pattern::ToLocal(h) | Pattern::ToPrivate(h)) => {
            nested_parallel(h)
        }
        FunKind::Lambda(l) => match &l.body.kind {
            ExprKind::Call(h, _) => nested_parallel(h),
            ExprKind::Literal(_) | ExprKind::Param(_) => Vec::new(),
        },
        FunKind::Pattern(_) | FunKind::UserFun(_) => Vec::new(),
    }
}

impl Lowerer<'_> {
    /// A `mapLcl(d)` that is not inside a `mapLcl` of another dimension `e`
    /// whose local size exceeds 1 runs once per work-item of `e`: harmless
    /// where each copy writes what it read from elsewhere, but a race where
    /// it updates shared memory in place (a `reduceSeq` accumulator updated
    /// by `mapLcl(1)` in a work-group of 32 x 1 work-items added each tile
    /// 32 times; found by fuzzing).
    fn check_no_redundant_update(
        &mut self,
        d: u8,
        xs: &View,
        target: &View,
        span: Span,
    ) -> Result<(), CompileError> {
        let Some(local) = self.inp.local.clone() else { return Ok(()) };
        let Some(out) = super::loops::root_mem(target) else { return Ok(()) };
        if out.space == AddressSpace::Private {
            return Ok(());
        }
        let mut read = Vec::new();
        mems_of(xs, &mut read);
        if !read.iter().any(|m| m.name == out.name) {
            return Ok(());
        }
        for e in 0..3u8 {
            let covered = self.maps.iter().any(|m| m.kind == MapKind::Lcl(e));
            if e == d || covered || self.decide(&local[e as usize]) == ArithExpr::Cst(1) {
                continue;
            }
            let (array, items) = (out.name.clone(), self.decide(&local[e as usize]));
            return self.unsupported(span, Unsupported::InPlaceRace { dim: d, array, other: e, items });
        }
        Ok(())
    }
}

/// Every memory a view reads from.
fn mems_of<'v>(v: &'v View, out: &mut Vec<&'v crate::view::Memory>) {
    match v {
        View::Mem { mem, .. } => out.push(mem),
        View::Zip { of } => of.iter().for_each(|x| mems_of(x, out)),
        View::Filter { of, idx, .. } => {
            mems_of(of, out);
            mems_of(idx, out);
        }
        _ => {
            if let Some(w) = v.wrapped() {
                mems_of(w, out)
            }
        }
    }
}
