//! Reading and writing through views, and output views through layout
//! patterns.

use super::Lowerer;
use crate::arith::{ArithExpr, Pred};
use crate::codegen::c_type;
use crate::codegen::{CompileError, Unsupported};
use crate::ir::c::kernel::LOCAL_ALIGN_BYTES;
use crate::ir::c::{print, BinOp, CExpr, Stmt};
use crate::ir::{FunDecl, FunKind, Pattern, Span};
use crate::passes::AddressSpace;
use crate::types::Type;
use crate::view::{consume_in, Access, MemKind, View};
use std::rc::Rc;

/// Where `write_lanes` writes: `n` tuples of scalars from element `index`
/// of `mem` (through the tuple fields `fields`, which must be none).
struct Lanes<'v> {
    mem: &'v crate::view::Memory,
    index: &'v ArithExpr,
    n: u8,
    fields: &'v [usize],
}

impl Lowerer<'_> {
    fn consume(&mut self, v: &View, ty: &Type, span: Span) -> Result<Access, CompileError> {
        // Printing nested accesses (filter) needs the same index treatment.
        let simplify = self.inp.opts.arith_simplify;
        let known = &self.inp.opts.sizes;
        let memo = &self.memo;
        let printer = move |a: &Access| -> String {
            print::expr(&access_expr(a, &|e| finish_index(e, simplify, known, memo)))
        };
        let threads: Vec<_> = self.maps.iter().map(|m| (m.kind, m.var.clone())).collect();
        let a = consume_in(v, &[], Some(ty), &printer, memo, Some(&threads))
            .map_err(|e| CompileError::unsupported(e.into(), span))?;
        self.note_private_indices(&a);
        self.note_local_widths(&a);
        Ok(a)
    }

    /// Records the vector widths local arrays are accessed with (a padded
    /// row must keep every vector inside it: `codegen::banks`).
    fn note_local_widths(&mut self, a: &Access) {
        match a {
            Access::Mem { mem, vector, .. } if mem.space == AddressSpace::Local => {
                let facts = self.locals.entry(mem.name.clone()).or_default();
                facts.widths.insert(vector.map_or(1, i64::from));
            }
            Access::Select { then, .. } => self.note_local_widths(then),
            Access::Tuple { parts, .. } => parts.iter().for_each(|p| self.note_local_widths(p)),
            Access::Mem { .. } | Access::Value { .. } | Access::Call { .. } | Access::IndexValue(_) => {}
        }
    }

    /// Records loop variables that index private arrays, so their loops unroll.
    fn note_private_indices(&mut self, a: &Access) {
        match a {
            Access::Mem { mem, index, .. }
                if mem.space == AddressSpace::Private && mem.kind == MemKind::Array =>
            {
                for v in index.vars() {
                    self.private_index_vars.insert(v.name);
                }
            }
            Access::Select { then, .. } => self.note_private_indices(then),
            Access::Tuple { parts, .. } => parts.iter().for_each(|p| self.note_private_indices(p)),
            Access::Mem { .. } | Access::Value { .. } | Access::Call { .. } | Access::IndexValue(_) => {}
        }
    }

    /// The C expression reading a (non-array) value through `v`.
    pub(crate) fn read(&mut self, v: &View, ty: &Type, span: Span) -> Result<CExpr, CompileError> {
        if let Type::Array(..) = ty {
            return self.unsupported(span, Unsupported::ArrayAsValue { ty: ty.clone() });
        }
        let a = self.consume(v, ty, span)?;
        let (simplify, known, memo) = (self.inp.opts.arith_simplify, &self.inp.opts.sizes, &self.memo);
        Ok(access_expr(&a, &|e| finish_index(e, simplify, known, memo)))
    }

    /// Emits the write of `value` (of type `ty`) through output view `v`.
    pub(crate) fn write(
        &mut self,
        v: &View,
        value: CExpr,
        ty: &Type,
        span: Span,
    ) -> Result<(), CompileError> {
        let a = self.consume(v, ty, span)?;
        let (simplify, known, memo) = (self.inp.opts.arith_simplify, &self.inp.opts.sizes, &self.memo);
        let fin = |e: &ArithExpr| finish_index(e, simplify, known, memo);
        match a {
            Access::Mem { mem, index, vector: Some(n), fields, .. } if matches!(ty, Type::Tuple(_)) => {
                self.write_lanes(Lanes { mem: &mem, index: &index, n, fields: &fields }, value, ty, span)
            }
            Access::Mem { mem, index, vector, component, fields } => {
                let stmt = match (vector, component) {
                    (Some(n), _) if fields.is_empty() && through_cast(&mem, n) => Stmt::set(
                        CExpr::Index(
                            vector_base(&mem, n, ""),
                            fin(&ArithExpr::div(index, ArithExpr::Cst(n as i64))),
                        ),
                        value,
                    ),
                    (Some(n), _) if fields.is_empty() => Stmt::Expr(CExpr::call(
                        format!("vstore{n}"),
                        vec![
                            value,
                            CExpr::Arith(fin(&ArithExpr::div(index, ArithExpr::Cst(n as i64)))),
                            CExpr::raw(mem.name.clone()),
                        ],
                    )),
                    (None, Some((c, n))) => Stmt::set(
                        CExpr::Index(
                            format!("(({} {}*){})", mem.space.c_qualifier(), c_type(ty), addr(&mem)),
                            fin(&ArithExpr::add(ArithExpr::mul(index, ArithExpr::Cst(stored_lanes(n))), c)),
                        ),
                        value,
                    ),
                    _ => {
                        let mut lhs = match mem.kind {
                            MemKind::Variable => CExpr::raw(mem.name.clone()),
                            MemKind::Array | MemKind::Buffer => CExpr::Index(mem.name.clone(), fin(&index)),
                        };
                        for f in fields {
                            lhs = CExpr::field(lhs, format!("_{f}"));
                        }
                        Stmt::set(lhs, value)
                    }
                };
                self.emit(stmt);
                Ok(())
            }
            Access::Value { .. }
            | Access::Select { .. }
            | Access::Tuple { .. }
            | Access::Call { .. }
            | Access::IndexValue(_) => self.unsupported(span, Unsupported::ReadOnlyOutput),
        }
    }

    /// Writes a tuple of `n`-vectors `value` of type `ty` (the output of
    /// `asScalar` of tuples of vectors) as the `n` tuples of scalars that
    /// start at element `index` of `mem`: through a private copy, lane by
    /// lane and field by field (`mem[index + j]._k = tmp._k.sj`).
    fn write_lanes(&mut self, at: Lanes, value: CExpr, ty: &Type, span: Span) -> Result<(), CompileError> {
        let Lanes { mem, index, n, fields } = at;
        let Type::Tuple(ts) = ty else {
            return Err(CompileError::Internal("write_lanes of a non-tuple".into()));
        };
        // The memory must hold the tuples of scalars asScalar makes.
        let scalars = ty.as_scalar_elem().filter(|(_, w)| *w == n).map(|(t, _)| t);
        if !fields.is_empty() || mem.kind == MemKind::Variable || scalars.as_ref() != Some(&mem.elem) {
            let (ty, space, elem) = (ty.clone(), mem.space.c_qualifier(), mem.elem.clone());
            return self.unsupported(span, Unsupported::AsScalarWrite { ty, space, elem });
        }
        self.note_tuple(ty);
        let (simplify, known, memo) = (self.inp.opts.arith_simplify, &self.inp.opts.sizes, &self.memo);
        let tmp = self.names.fresh("lanes");
        let mut block = vec![Stmt::Decl {
            qualifier: None,
            ty: ty.clone(),
            pointer: false,
            name: tmp.clone(),
            len: None,
            init: Some(value),
        }];
        for j in 0..n {
            let at =
                finish_index(&ArithExpr::add(index.clone(), ArithExpr::Cst(j as i64)), simplify, known, memo);
            for k in 0..ts.len() {
                let field = |base: CExpr| CExpr::field(base, format!("_{k}"));
                block.push(Stmt::set(
                    field(CExpr::Index(mem.name.clone(), at.clone())),
                    CExpr::field(field(CExpr::raw(tmp.clone())), format!("s{j:x}")),
                ));
            }
        }
        self.emit(Stmt::Block(block));
        Ok(())
    }

    /// The output view for the argument of layout pattern `f` whose result
    /// is written through `out`; `None` when `f` is not such a pattern.
    pub(crate) fn invert_output(
        &mut self,
        f: &FunDecl,
        out: &Rc<View>,
        arg_ty: &Type,
        res_ty: &Type,
    ) -> Result<Option<View>, CompileError> {
        let p = match &f.kind {
            FunKind::Pattern(p) => p,
            FunKind::Lambda(l) => return self.invert_lambda(l, out),
            FunKind::UserFun(_) => return Ok(None),
        };
        let of = out.clone();
        Ok(match p {
            // Writing element [i][j] of join's argument writes element i*n+j.
            Pattern::Join => match arg_ty {
                Type::Array(inner, _) => match &**inner {
                    Type::Array(_, n) => Some(View::Split { n: n.clone(), of }),
                    _ => None,
                },
                _ => None,
            },
            Pattern::Split(n) => Some(View::Join { n: n.clone(), of }),
            Pattern::Scatter(g) => {
                let n = match arg_ty {
                    Type::Array(_, n) => n.clone(),
                    _ => return Err(CompileError::Internal("scatter of a non-array".into())),
                };
                self.check_index_fun("scatter", g, &n, f.span)?;
                Some(View::Gather { f: g.clone(), of })
            }
            Pattern::Transpose => Some(View::Transpose { of }),
            Pattern::AsVector(n) => Some(View::AsScalar { n: *n, of }),
            Pattern::AsScalar => match arg_ty {
                Type::Array(e, _) => e.as_scalar_elem().map(|(_, n)| View::AsVector { n, of }),
                _ => None,
            },
            // `map(g)` with an invertible layout `g`: invert per element.
            Pattern::Map { kind: crate::ir::MapKind::Map, f: g } => match (arg_ty, res_ty) {
                (Type::Array(ae, n), Type::Array(re, _)) => {
                    let var = self.names.fresh("m");
                    let h = ArithExpr::index(&var, ArithExpr::Cst(0), n.clone());
                    let elem_out = Rc::new(View::access(h, (**out).clone()));
                    self.invert_output(g, &elem_out, ae, re)?
                        .map(|body| View::MapLayout { var, body: Rc::new(body) })
                }
                _ => None,
            },
            Pattern::ToGlobal(_) | Pattern::ToLocal(_) | Pattern::ToPrivate(_) => None,
            Pattern::Map { .. }
            | Pattern::MapVec { .. }
            | Pattern::Reduce { .. }
            | Pattern::PartRed { .. }
            | Pattern::Iterate { .. }
            | Pattern::Gather(_)
            | Pattern::Zip(_)
            | Pattern::Get(_)
            | Pattern::At(_)
            | Pattern::Slide { .. }
            | Pattern::SlideSeq { .. }
            | Pattern::Pad { .. }
            | Pattern::PadConst { .. }
            | Pattern::Generate { .. }
            | Pattern::Filter
            | Pattern::Id => {
                let _ = res_ty;
                None
            }
        })
    }
}

impl Lowerer<'_> {
    /// Inverts a lambda that is a chain of invertible layout patterns
    /// ending in its parameter (`asScalar o join`).
    fn invert_lambda(&mut self, l: &crate::ir::Lambda, out: &Rc<View>) -> Result<Option<View>, CompileError> {
        let [param] = &l.params[..] else { return Ok(None) };
        let mut e = &*l.body;
        let mut cur = out.clone();
        loop {
            match &e.kind {
                crate::ir::ExprKind::Param(p) if *p == param.id => return Ok(Some((*cur).clone())),
                crate::ir::ExprKind::Call(g, args) if args.len() == 1 => {
                    let (a_ty, r_ty) = (self.inp.types.of(&args[0]).clone(), self.inp.types.of(e).clone());
                    match self.invert_output(g, &cur, &a_ty, &r_ty)? {
                        Some(v) => cur = Rc::new(v),
                        None => return Ok(None),
                    }
                    e = &args[0];
                }
                _ => return Ok(None),
            }
        }
    }
}

/// Substitutes known sizes and simplifies if enabled.
pub(crate) fn finish_index(
    e: &ArithExpr,
    simplify: bool,
    known: &std::collections::BTreeMap<String, i64>,
    memo: &crate::arith::Memo,
) -> ArithExpr {
    if simplify {
        memo.simplify_known(e, known)
    } else {
        let mut e = e.clone();
        e.substitute_known(known);
        e
    }
}

fn pred_expr(p: &Pred, fin: &dyn Fn(&ArithExpr) -> ArithExpr) -> CExpr {
    CExpr::binary(p.op.into(), CExpr::Arith(fin(&p.lhs)), CExpr::Arith(fin(&p.rhs)))
}

/// The C scalar type of a memory's elements (`float` for `float4` memory).
fn scalar_c_type(mem: &crate::view::Memory) -> String {
    match &mem.elem {
        Type::Vector(s, _) => s.c_name().to_string(),
        other => c_type(other),
    }
}

/// What a component access casts to a scalar pointer: an array's name, or
/// a (private vector) variable's address.
fn addr(mem: &crate::view::Memory) -> String {
    match mem.kind {
        MemKind::Variable => format!("&{}", mem.name),
        MemKind::Array | MemKind::Buffer => mem.name.clone(),
    }
}

/// Whether `n`-vectors of `mem` are accessed through a cast pointer
/// ([`vector_base`]) rather than `vloadn`/`vstoren`: for buffers (which
/// the host allocates aligned) and for local arrays of 4-byte scalars
/// (aligned to [`LOCAL_ALIGN_BYTES`]) up to that size, except width 3,
/// since a `float3` takes 16 bytes and a cast pointer would step past the
/// packed scalars. A vector access starts at a multiple of `n` scalars
/// (`index / n` below), so the cast pointer is aligned. Why not
/// `vloadn` everywhere: it only assumes the scalar's alignment, and
/// NVIDIA's compiler then splits a local `vload4` into four 32-bit
/// shared-memory loads (on the H200 a tiled 1024^3 product's local reads
/// as casts took 0.160 ms against 0.208 ms with `vload4`).
fn through_cast(mem: &crate::view::Memory, n: u8) -> bool {
    let local_fits = mem.space == AddressSpace::Local
        && mem.kind == MemKind::Array
        && 4 * u32::from(n) <= LOCAL_ALIGN_BYTES;
    (mem.kind == MemKind::Buffer || local_fits) && n != 3
}

/// A buffer of scalars seen as an array of `n`-vectors:
/// `((const global float4*)A)`; `constness` is `"const "` for reads.
fn vector_base(mem: &crate::view::Memory, n: u8, constness: &str) -> String {
    format!("(({constness}{} {}{n}*){})", mem.space.c_qualifier(), scalar_c_type(mem), mem.name)
}

/// Scalars an `n`-vector occupies in memory: a 3-vector takes 4 (OpenCL).
fn stored_lanes(n: u8) -> i64 {
    i64::from(if n == 3 { 4 } else { n })
}

/// Component `c` of each `n`-vector field of the tuple `mem[index]` (the
/// fields `fields` only, else all as a tuple of scalars): `asScalar` read
/// over memory of tuples of vectors. Every field is an `n`-vector of 4-byte
/// scalars, so the struct is an array of those scalars (a 3-vector takes
/// 4) and field `k` of element `i` starts at scalar `(i * fields + k) * w`.
fn tuple_component(
    mem: &crate::view::Memory,
    index: &ArithExpr,
    c: &ArithExpr,
    n: u8,
    fields: &[usize],
    fin: &dyn Fn(&ArithExpr) -> ArithExpr,
) -> CExpr {
    let ts = match &mem.elem {
        Type::Tuple(ts) => &ts[..],
        other => std::slice::from_ref(other),
    };
    let w = stored_lanes(n);
    let lane = |k: usize| {
        let scalar = match ts.get(k) {
            Some(Type::Vector(s, _)) => s.c_name().to_string(),
            other => other.map(c_type).unwrap_or_default(),
        };
        CExpr::Index(
            format!("(({} {scalar}*){})", mem.space.c_qualifier(), addr(mem)),
            fin(&ArithExpr::add(
                ArithExpr::mul(
                    ArithExpr::add(
                        ArithExpr::mul(index.clone(), ArithExpr::Cst(ts.len() as i64)),
                        ArithExpr::Cst(k as i64),
                    ),
                    ArithExpr::Cst(w),
                ),
                c.clone(),
            )),
        )
    };
    match fields {
        [k] => lane(*k),
        _ => {
            let scalars = mem.elem.as_scalar_elem().map(|(t, _)| t).unwrap_or_else(|| mem.elem.clone());
            CExpr::TupleLit(scalars, (0..ts.len()).map(lane).collect())
        }
    }
}

/// The C rvalue of an access.
pub(crate) fn access_expr(a: &Access, fin: &dyn Fn(&ArithExpr) -> ArithExpr) -> CExpr {
    match a {
        Access::Mem { mem, index, vector, component, fields } => {
            let mut e = match (vector, component) {
                (Some(n), _) if through_cast(mem, *n) => CExpr::Index(
                    vector_base(mem, *n, "const "),
                    fin(&ArithExpr::div(index.clone(), ArithExpr::Cst(*n as i64))),
                ),
                (Some(n), _) => CExpr::call(
                    format!("vload{n}"),
                    vec![
                        CExpr::Arith(fin(&ArithExpr::div(index.clone(), ArithExpr::Cst(*n as i64)))),
                        CExpr::raw(mem.name.clone()),
                    ],
                ),
                (None, Some((c, n))) if matches!(mem.elem, Type::Tuple(_)) => {
                    // The consumer checked the fields are n-vectors.
                    return tuple_component(mem, index, c, *n, fields, fin);
                }
                (None, Some((c, n))) => {
                    let scalar = scalar_c_type(mem);
                    CExpr::Index(
                        format!("(({} {scalar}*){})", mem.space.c_qualifier(), addr(mem)),
                        fin(&ArithExpr::add(
                            ArithExpr::mul(index.clone(), ArithExpr::Cst(stored_lanes(*n))),
                            c.clone(),
                        )),
                    )
                }
                (None, None) => match mem.kind {
                    MemKind::Variable => CExpr::raw(mem.name.clone()),
                    MemKind::Array | MemKind::Buffer => CExpr::Index(mem.name.clone(), fin(index)),
                },
            };
            for f in fields {
                e = CExpr::field(e, format!("_{f}"));
            }
            e
        }
        Access::Value { c, fields } => {
            let mut e = CExpr::raw(c.clone());
            for f in fields {
                e = CExpr::field(e, format!("_{f}"));
            }
            e
        }
        Access::Select { conds, then, otherwise } => {
            let mut cond: Option<CExpr> = None;
            for p in conds {
                let c = pred_expr(p, fin);
                cond = Some(match cond {
                    None => c,
                    Some(prev) => CExpr::binary(BinOp::And, prev, c),
                });
            }
            CExpr::ternary(
                cond.unwrap_or(CExpr::raw("1")),
                access_expr(then, fin),
                CExpr::raw(otherwise.clone()),
            )
        }
        Access::Tuple { parts, ty } => {
            CExpr::TupleLit(ty.clone(), parts.iter().map(|p| access_expr(p, fin)).collect())
        }
        Access::Call { fun, index } => CExpr::call(fun.clone(), vec![CExpr::Arith(fin(index))]),
        Access::IndexValue(e) => CExpr::Arith(fin(e)),
    }
}
