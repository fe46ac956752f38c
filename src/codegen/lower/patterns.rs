//! Lowering of each pattern.

use super::loops::rc;
use super::Lowerer;
use crate::arith::ArithExpr;
use crate::codegen::ast::CExpr;
use crate::codegen::CompileError;
use crate::ir::{layout_pattern, ExprId, ExprKind, FunDecl, FunKind, MapKind, Pattern, ReduceKind, Span};
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

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn pattern(
        &mut self,
        f: &FunDecl,
        p: &Pattern,
        args: Vec<Rc<View>>,
        arg_types: &[Type],
        ty: &Type,
        out: Option<Rc<View>>,
        space: AddressSpace,
        id: Option<ExprId>,
        span: Span,
    ) -> Result<Rc<View>, CompileError> {
        let arg = || {
            args.first()
                .cloned()
                .ok_or_else(|| CompileError::Internal("pattern applied to no argument".into()))
        };
        let arg_ty = || {
            arg_types
                .first()
                .cloned()
                .ok_or_else(|| CompileError::Internal("pattern argument has no type".into()))
        };
        match p {
            Pattern::Map { kind: MapKind::Map, f: g } => {
                if !super::is_layout_only(g) {
                    return self.unsupported(
                        span,
                        "a high-level `map` whose function computes must be lowered to mapGlb, mapWrg, mapLcl or mapSeq first",
                    );
                }
                let v = self.map_layout(g, arg()?, &arg_ty()?, ty, span)?;
                self.finish_value(v, out, ty, span)
            }
            Pattern::Map { kind, f: g } => {
                let xs = arg()?;
                let at = arg_ty()?;
                let (Some((elem, n)), Some((res_elem, _))) = (elem_of(&at), elem_of(ty)) else {
                    return Err(CompileError::Internal("map over a non-array after type checking".into()));
                };
                let target = match out {
                    Some(o) => o,
                    None if space == AddressSpace::Private && parallel(*kind) && self.runs_once(*kind, n) => {
                        // Each thread keeps only its own elements: drop the
                        // dimensions of this and directly nested parallel maps.
                        let (t, nested) = self.private_elem(g, res_elem);
                        let mut v = self.alloc(&t, space, span)?;
                        // Innermost first: consumption pops the outermost index first.
                        for k in nested.iter().rev().chain([kind]) {
                            v = rc(View::DropIndex { of: v, kind: *k, keep: false, depth: 0 });
                        }
                        v
                    }
                    None if space == AddressSpace::Private && parallel(*kind) => {
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
                        for (depth, k) in [*kind].into_iter().chain(nested_parallel(g)).enumerate() {
                            v = rc(View::DropIndex { of: v, kind: k, keep: true, depth });
                        }
                        v
                    }
                    None => self.alloc(ty, space, span)?,
                };
                if let MapKind::Lcl(d) = kind {
                    self.check_no_redundant_update(*d, &xs, &target, span)?;
                }
                let (elem, res_elem) = (elem.clone(), res_elem.clone());
                let t2 = target.clone();
                let mut body = |l: &mut Lowerer<'a>, i: ArithExpr| -> Result<(), CompileError> {
                    let x = rc(View::access(i.clone(), (*xs).clone()));
                    let o = rc(View::access(i, (*t2).clone()));
                    l.apply(g, vec![x], std::slice::from_ref(&elem), &res_elem, Some(o), space, None, span)?;
                    Ok(())
                };
                self.map_loop(*kind, n, &mut body, span)?;
                if let MapKind::Lcl(_) = kind {
                    let elim = id.is_some_and(|i| self.inp.no_barrier.contains(&i));
                    self.barrier_after(&target, elim);
                }
                Ok(target)
            }
            Pattern::MapVec { f: g } => {
                let FunKind::UserFun(uf) = &g.kind else {
                    return self.unsupported(
                        span,
                        "mapVec applies a user function; wrap other functions in a user function",
                    );
                };
                let Type::Vector(_, w) = arg_ty()? else {
                    return Err(CompileError::Internal(
                        "mapVec over a non-vector after type checking".into(),
                    ));
                };
                if !self.vector_funs.contains(&(*uf, w)) {
                    self.vector_funs.push((*uf, w));
                }
                let name = crate::codegen::lower::vector_fun_name(&self.inp.program.user_fun(*uf).name, w);
                let x = self.read(&*arg()?, &arg_ty()?, span)?;
                let target = match out {
                    Some(o) => o,
                    None => self.alloc(ty, space, span)?,
                };
                self.write(&target, CExpr::call(name, vec![x]), ty, span)?;
                Ok(target)
            }
            Pattern::Reduce { kind: ReduceKind::Reduce, .. } | Pattern::PartRed { .. } => self.unsupported(
                span,
                "the high-level `reduce`/`partRed` must be lowered to reduceSeq (inside maps) first",
            ),
            Pattern::Reduce { kind, f: g } => {
                let [init, xs] = &args[..] else {
                    return Err(CompileError::Internal("reduction without init and array".into()));
                };
                let (Some(acc_ty), Some((elem, n))) = (arg_types.first(), arg_types.get(1).and_then(elem_of))
                else {
                    return Err(CompileError::Internal("reduction argument types".into()));
                };
                let (acc_ty, elem, n) = (acc_ty.clone(), elem.clone(), n.clone());
                // The accumulator lives in private memory (Algorithm 1:
                // a reduction writes into its initialiser's memory).
                // An array accumulator is updated in place in the memory its
                // initialiser was written to; a single value is copied into a
                // fresh private variable.
                let acc = if let Type::Array(..) = acc_ty {
                    if super::loops::root_space(init).is_none() {
                        return self.unsupported(span, "an array accumulator must be computed into memory first, e.g. with toPrivate(mapSeq(...))");
                    }
                    init.clone()
                } else {
                    let acc = self.alloc(&acc_ty, AddressSpace::Private, span)?;
                    let v0 = self.read(init, &acc_ty, span)?;
                    self.write(&acc, v0, &acc_ty, span)?;
                    acc
                };
                let xs = xs.clone();
                let acc2 = acc.clone();
                let mut body = |l: &mut Lowerer<'a>, i: ArithExpr| -> Result<(), CompileError> {
                    let x = rc(View::access(i, (*xs).clone()));
                    l.apply(
                        g,
                        vec![acc2.clone(), x],
                        &[acc_ty.clone(), elem.clone()],
                        &acc_ty,
                        Some(acc2.clone()),
                        AddressSpace::Private,
                        None,
                        span,
                    )?;
                    Ok(())
                };
                let n = self.decide(&n);
                self.seq_loop(&n, matches!(kind, ReduceKind::SeqUnroll), None, &mut body, span)?;
                // The result is the accumulator seen as a one-element array.
                let result = match &*acc {
                    View::Mem { mem, .. } => rc(View::Mem { mem: mem.clone(), ty: ty.clone() }),
                    _ => rc(View::Split { n: acc_len(arg_types), of: acc.clone() }),
                };
                match out {
                    None => Ok(result),
                    // An array accumulator updated in place where the result goes.
                    Some(o)
                        if matches!(acc_ty, Type::Array(..))
                            && self.same_place(&o, &acc, acc_ty.lengths().len())? =>
                    {
                        Ok(o)
                    }
                    Some(o) => {
                        let et = elem_of(ty).map(|(e, _)| e.clone()).unwrap_or(Type::FLOAT);
                        let v = self.read(&View::access(ArithExpr::Cst(0), (*result).clone()), &et, span)?;
                        self.write(&View::access(ArithExpr::Cst(0), (*o).clone()), v, &et, span)?;
                        Ok(o)
                    }
                }
            }
            Pattern::SlideSeq { size, step, f: g } => {
                self.slide_seq(size, step, g, arg()?, &arg_ty()?, ty, out, space, span)
            }
            Pattern::Iterate { n, f: g } => {
                let v = self.iterate(f, *n, g, arg()?, &arg_ty()?, ty, space, span)?;
                self.finish_value(v, out, ty, span)
            }
            Pattern::ToGlobal(g) => self.apply(g, args, arg_types, ty, out, AddressSpace::Global, id, span),
            Pattern::ToLocal(g) => self.apply(g, args, arg_types, ty, out, AddressSpace::Local, id, span),
            Pattern::ToPrivate(g) => self.apply(g, args, arg_types, ty, out, AddressSpace::Private, id, span),
            Pattern::Id => {
                if let Type::Array(..) = ty {
                    return self
                        .unsupported(span, "`id` copies single values; copy an array with a map of id");
                }
                let v = self.read(&*arg()?, ty, span)?;
                let target = match out {
                    Some(o) => o,
                    None => self.alloc(ty, space, span)?,
                };
                self.write(&target, v, ty, span)?;
                Ok(target)
            }
            Pattern::Generate { f: g, len } => {
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
                        let elem = elem_of(ty).map(|(e, _)| e.clone()).unwrap_or(Type::INT);
                        let body = self.apply(g, vec![rc(View::IndexValue(h))], &[Type::INT], &elem, None, AddressSpace::Private, None, span)?;
                        rc(View::MapLayout { var, body })
                    }
                    FunKind::Lambda(_) | FunKind::Pattern(_) => return self.unsupported(span, "generate takes a user function of the index, or a lambda that computes nothing (a literal, another generate)"),
                };
                self.finish_value(v, out, ty, span)
            }
            layout_pattern!() => {
                let v = self.layout(p, &args, arg_types, span)?;
                self.finish_value(v, out, ty, span)
            }
        }
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
            vec![x],
            std::slice::from_ref(elem),
            res_elem,
            None,
            AddressSpace::Private,
            None,
            span,
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
            Pattern::Scatter(_) => {
                return self.unsupported(
                    span,
                    "scatter only reorders where results are written; use gather to reorder reads",
                )
            }
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
            return self.unsupported(
                span,
                format!(
                    "mapLcl({d}) updates `{}` in place, but it is not inside a mapLcl({e}): all {} work-items \
                     of dimension {e} would run it and race; nest it in mapLcl({e}) or write to a new array",
                    out.name,
                    self.decide(&local[e as usize])
                ),
            );
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
