//! `iterate` with double buffering (CGO 2017, Figure 7, lines 17-29).
//!
//! The body is emitted once, inside a loop, typed with a length variable
//! (`iter_len_k`) that holds the current input length at run time. Two
//! buffers alternate as outputs; the input of the first iteration is the
//! iterate's argument when it is a plain array in the same address space,
//! otherwise the first iteration is peeled off and reads the argument's
//! view directly.

use super::loops::rc;
use super::{Call, Lowerer};
use crate::arith::ArithExpr;
use crate::codegen::{CompileError, Unsupported};
use crate::ir::c::{BinOp, CExpr, Stmt};
use crate::ir::{FunDecl, Span};
use crate::passes::AddressSpace;
use crate::types::Type;
use crate::view::{consume, Access, MemKind, Memory, View};
use std::collections::HashMap;
use std::rc::Rc;

/// What the iterations of one `iterate` share.
struct Iteration<'g> {
    /// The body.
    g: &'g FunDecl,
    /// The arrays' element type.
    elem: Type,
    /// The input length of the current iteration (`iter_len_k`).
    lvar: ArithExpr,
    /// The body's result type, of length `step_len`.
    body_ty: Type,
    step_len: ArithExpr,
    space: AddressSpace,
    span: Span,
}

impl<'a> Lowerer<'a> {
    /// `iterate(n, g)` as `c` applies it (the pattern's declaration `f`
    /// names its length variable).
    pub(crate) fn iterate(
        &mut self,
        f: &FunDecl,
        n: u32,
        g: &FunDecl,
        c: Call,
    ) -> Result<Rc<View>, CompileError> {
        let v = match n {
            0 => c.arg()?,
            _ => self.double_buffered(f, n, g, &c)?,
        };
        self.finish_value(v, c.out, c.ty, c.span)
    }

    fn double_buffered(
        &mut self,
        f: &FunDecl,
        n: u32,
        g: &FunDecl,
        c: &Call,
    ) -> Result<Rc<View>, CompileError> {
        let (input, in_ty, space, span) = (c.arg()?, c.arg_ty()?, c.space, c.span);
        let Some(var) = self.inp.types.iterate_vars.get(&f.id).cloned() else {
            return Err(CompileError::Internal("iterate without a length variable".into()));
        };
        let Type::Array(elem, l0) = in_ty else {
            return Err(CompileError::Internal("iterate over a non-array".into()));
        };
        if space == AddressSpace::Private {
            return self.unsupported(span, Unsupported::IterateBuffers);
        }
        // The body's output length as a function of its input length.
        let body_ty = self.body_type(g, &var, elem, span)?;
        let Type::Array(_, step_len) = &body_ty else {
            return Err(CompileError::Internal("iterate body does not return an array".into()));
        };
        let it = Iteration {
            g,
            elem: (**elem).clone(),
            lvar: ArithExpr::Var(var.clone()),
            step_len: step_len.clone(),
            body_ty: body_ty.clone(),
            space,
            span,
        };
        let first_out = self.decide(&step_len.substitute(&HashMap::from([(var.name.clone(), l0.clone())])));
        self.note_iter_lens(&var.name, l0, step_len, n);
        let buf_a = self.alloc(&Type::array(it.elem.clone(), first_out), space, span)?;
        let buf_b = self.alloc(&Type::array(it.elem.clone(), l0.clone()), space, span)?;
        // Inside parallel maps the buffers are multiplied (one slice per
        // thread or row); the pointers start at this slice.
        let bufs = [self.slice_start(&buf_a, span)?, self.slice_start(&buf_b, span)?];
        let ptrs = [self.names.fresh("in"), self.names.fresh("out")];
        let mut remaining = n;
        let first_in = self.plain_memory(&input, in_ty, space);
        self.emit(Stmt::Decl {
            qualifier: None,
            ty: Type::INT,
            pointer: false,
            name: var.name.clone(),
            len: None,
            init: Some(CExpr::Arith(self.index(l0))),
        });
        let init_in = match &first_in {
            Some(name) => name.clone(),
            None => {
                self.peel_first(&it, &var.name, input, &buf_a)?;
                remaining -= 1;
                bufs[0].clone()
            }
        };
        let init_out = if first_in.is_some() { &bufs[0] } else { &bufs[1] };
        for (p, init) in ptrs.iter().zip([&init_in, init_out]) {
            self.emit(Stmt::Decl {
                qualifier: Some(space.c_qualifier()),
                ty: it.elem.clone(),
                pointer: true,
                name: p.clone(),
                len: None,
                init: Some(CExpr::raw(init.clone())),
            });
        }
        if remaining > 0 {
            self.iteration_loop(&it, &var.name, &ptrs, &bufs, remaining)?;
        } else {
            self.emit(Stmt::set(CExpr::raw(ptrs[0].clone()), CExpr::raw(bufs[0].clone())));
        }
        let [in_p, _] = ptrs;
        let result = Rc::new(Memory { name: in_p, space, elem: it.elem, kind: MemKind::Array });
        Ok(rc(View::Mem { mem: result, ty: c.ty.clone() }))
    }

    /// The first iteration, peeled off: it reads the argument's view.
    /// Found by fuzzing (`toLocal(toGlobal(id))` in dot's iterate):
    /// per-thread slices of the buffers with an input in another memory
    /// were an internal error. A per-thread slice is written through its
    /// own view: only inner lengths enter its indices, and they are the body's.
    fn peel_first(
        &mut self,
        it: &Iteration,
        len_name: &str,
        input: Rc<View>,
        buf_a: &Rc<View>,
    ) -> Result<(), CompileError> {
        let out_view = match buf_a.mem_ref() {
            Ok(mem) => rc(View::Mem { mem, ty: it.body_ty.clone() }),
            Err(_) => buf_a.clone(),
        };
        let in_ty = [Type::array(it.elem.clone(), it.lvar.clone())];
        self.apply(it.g, Call::inner(vec![input], &in_ty, &it.body_ty, Some(out_view), it.space, it.span))?;
        self.emit(Stmt::set(CExpr::raw(len_name), CExpr::Arith(self.index(&it.step_len))));
        Ok(())
    }

    /// The remaining iterations: the body from pointer `in` to pointer
    /// `out`, then the length updated and the pointers swapped between the
    /// two buffers.
    fn iteration_loop(
        &mut self,
        it: &Iteration,
        len_name: &str,
        [in_p, out_p]: &[String; 2],
        [name_a, name_b]: &[String; 2],
        remaining: u32,
    ) -> Result<(), CompileError> {
        let mem = |name: &String| {
            Rc::new(Memory {
                name: name.clone(),
                space: it.space,
                elem: it.elem.clone(),
                kind: MemKind::Array,
            })
        };
        let in_ty = [Type::array(it.elem.clone(), it.lvar.clone())];
        let in_view = rc(View::Mem { mem: mem(in_p), ty: in_ty[0].clone() });
        let out_view = rc(View::Mem { mem: mem(out_p), ty: it.body_ty.clone() });
        let iter = self.names.fresh("iter");
        let (mut body, _) = self.in_block(|l| {
            l.apply(it.g, Call::inner(vec![in_view], &in_ty, &it.body_ty, Some(out_view), it.space, it.span))
        })?;
        body.push(Stmt::set(CExpr::raw(len_name), CExpr::Arith(self.index(&it.step_len))));
        body.push(Stmt::set(CExpr::raw(in_p.clone()), CExpr::raw(out_p.clone())));
        body.push(Stmt::set(
            CExpr::raw(out_p.clone()),
            CExpr::ternary(
                CExpr::binary(BinOp::Eq, CExpr::raw(in_p.clone()), CExpr::raw(name_a.clone())),
                CExpr::raw(name_b.clone()),
                CExpr::raw(name_a.clone()),
            ),
        ));
        self.emit(Stmt::CountedFor {
            var: iter,
            init: CExpr::raw("0"),
            bound: CExpr::raw(remaining.to_string()),
            step: CExpr::raw("1"),
            body,
        });
        Ok(())
    }

    /// Records the lengths the input of each iteration has: `l0`, then the
    /// body's output length `step` of the previous one (the type checker
    /// bounds how many differ).
    fn note_iter_lens(&mut self, var: &str, l0: &ArithExpr, step: &ArithExpr, n: u32) {
        let mut lens = vec![self.decide(l0)];
        for _ in 1..n {
            let last = lens[lens.len() - 1].clone();
            let next = self.decide(&step.substitute(&HashMap::from([(var.to_string(), last.clone())])));
            if next == last {
                break;
            }
            lens.push(next);
        }
        self.iter_lens.insert(var.to_string(), lens);
    }

    /// The body's result type for input length `var`.
    fn body_type(
        &self,
        g: &FunDecl,
        var: &crate::arith::Var,
        elem: &Type,
        span: Span,
    ) -> Result<Type, CompileError> {
        // The type checker typed the body's expressions with `var`; for a
        // lambda body the result is its body expression's type.
        match &g.kind {
            crate::ir::FunKind::Lambda(l) => Ok(self.inp.types.of(&l.body).clone()),
            crate::ir::FunKind::Pattern(_) | crate::ir::FunKind::UserFun(_) => {
                let _ = (var, elem);
                self.unsupported(span, Unsupported::IterateFunction)
            }
        }
    }

    /// C text of a pointer to element 0 of the array view `v`.
    fn slice_start(&mut self, v: &View, span: Span) -> Result<String, CompileError> {
        let a = consume(v, &[ArithExpr::Cst(0)], None, &|_| String::new(), &self.memo)
            .map_err(|e| CompileError::unsupported(e.into(), span))?;
        match a {
            Access::Mem { mem, index, .. } => {
                let off = self.decide(&index);
                Ok(if off == ArithExpr::Cst(0) {
                    mem.name.clone()
                } else {
                    format!("({} + {})", mem.name, off)
                })
            }
            _ => Err(CompileError::Internal("iterate buffer is not a memory".into())),
        }
    }

    /// A pointer to the array `v` shows when it shows a memory unchanged
    /// (element `k` at offset + `k`) in `space`.
    fn plain_memory(&mut self, v: &View, ty: &Type, space: AddressSpace) -> Option<String> {
        let k = ArithExpr::index("k_probe", ArithExpr::Cst(0), ty.lengths().first()?.clone());
        let at =
            |i: &ArithExpr| consume(v, std::slice::from_ref(i), None, &|_| String::new(), &self.memo).ok();
        match (at(&k)?, at(&ArithExpr::Cst(0))?) {
            (
                Access::Mem { mem, index, vector: None, component: None, fields },
                Access::Mem { index: base, .. },
            ) if fields.is_empty()
                && mem.space == space
                && !self.is_input_buffer(&mem)
                && matches!(mem.kind, MemKind::Array | MemKind::Buffer)
                && self.memo.simplify(&ArithExpr::sub(index.clone(), base.clone())) == k =>
            {
                let off = self.decide(&base);
                Some(if off == ArithExpr::Cst(0) {
                    mem.name.clone()
                } else {
                    format!("({} + {})", mem.name, off)
                })
            }
            _ => None,
        }
    }
}

impl Lowerer<'_> {
    /// Whether `mem` is one of the kernel's input buffers (`const global T*
    /// restrict`). The double-buffering pointers must never point into one:
    /// NVIDIA's compiler then read the pointer's later targets, written in
    /// the same kernel, through the read-only cache and got stale values
    /// (random programs on the H100; PoCL computed them right).
    fn is_input_buffer(&self, mem: &Rc<Memory>) -> bool {
        self.env.values().any(|v| matches!(&**v, View::Mem { mem: m, .. } if Rc::ptr_eq(m, mem)))
    }
}

impl View {
    fn mem_ref(&self) -> Result<Rc<Memory>, CompileError> {
        match self {
            View::Mem { mem, .. } => Ok(mem.clone()),
            _ => Err(CompileError::Internal("expected a plain memory view".into())),
        }
    }
}
