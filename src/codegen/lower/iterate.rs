//! `iterate` with double buffering (CGO 2017, Figure 7, lines 17-29).
//!
//! The body is emitted once, inside a loop, typed with a length variable
//! (`iter_len_k`) that holds the current input length at run time. Two
//! buffers alternate as outputs; the input of the first iteration is the
//! iterate's argument when it is a plain array in the same address space,
//! otherwise the first iteration is peeled off and reads the argument's
//! view directly.

use super::loops::rc;
use super::Lowerer;
use crate::arith::ArithExpr;
use crate::codegen::ast::{CExpr, Stmt};
use crate::codegen::c_type;
use crate::codegen::CompileError;
use crate::ir::{FunDecl, Span};
use crate::passes::AddressSpace;
use crate::types::Type;
use crate::view::{consume, Access, MemKind, Memory, View};
use std::collections::HashMap;
use std::rc::Rc;

impl<'a> Lowerer<'a> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn iterate(
        &mut self,
        f: &FunDecl,
        n: u32,
        g: &FunDecl,
        input: Rc<View>,
        in_ty: &Type,
        out_ty: &Type,
        space: AddressSpace,
        span: Span,
    ) -> Result<Rc<View>, CompileError> {
        if n == 0 {
            return Ok(input);
        }
        let Some(var) = self.inp.types.iterate_vars.get(&f.id).cloned() else {
            return Err(CompileError::Internal("iterate without a length variable".into()));
        };
        let Type::Array(elem, l0) = in_ty else {
            return Err(CompileError::Internal("iterate over a non-array".into()));
        };
        if space == AddressSpace::Private {
            return self.unsupported(
                span,
                "iterate needs its buffers in local or global memory (use toLocal or toGlobal)",
            );
        }
        let lvar = ArithExpr::Var(var.clone());
        // The body's output length as a function of its input length.
        let body_ty = self.body_type(g, &var, elem, span)?;
        let Type::Array(_, step_len) = &body_ty else {
            return Err(CompileError::Internal("iterate body does not return an array".into()));
        };
        let first_out = self.decide(&step_len.substitute(&HashMap::from([(var.name.clone(), l0.clone())])));
        self.note_iter_lens(&var.name, l0, step_len, n);
        let elem_c = c_type(elem);
        let buf_a = self.alloc(&Type::array((**elem).clone(), first_out), space, span)?;
        let buf_b = self.alloc(&Type::array((**elem).clone(), l0.clone()), space, span)?;
        // Inside parallel maps the buffers are multiplied (one slice per
        // thread or row); the pointers start at this slice.
        let name_a = self.slice_start(&buf_a, span)?;
        let name_b = self.slice_start(&buf_b, span)?;
        let q = space.c_qualifier();
        let in_p = self.names.fresh("in");
        let out_p = self.names.fresh("out");
        let len_name = var.name.clone();

        let mut remaining = n;
        let first_in = self.plain_memory(&input, in_ty, space);
        self.emit(Stmt::Decl {
            qualifier: None,
            ty: "int".into(),
            name: len_name.clone(),
            len: None,
            init: Some(CExpr::Arith(self.index(l0))),
        });
        let init_in = match &first_in {
            Some(name) => name.clone(),
            None => {
                // Peel the first iteration: it reads the argument's view.
                // Found by fuzzing (`toLocal(toGlobal(id))` in dot's
                // iterate): per-thread slices of the buffers with an input
                // in another memory were an internal error.
                // A per-thread slice is written through its own view: only
                // inner lengths enter its indices, and they are the body's.
                let out_view = match buf_a.mem_ref() {
                    Ok(mem) => rc(View::Mem { mem, ty: body_ty.clone() }),
                    Err(_) => buf_a.clone(),
                };
                self.apply(
                    g,
                    vec![input.clone()],
                    &[Type::array((**elem).clone(), lvar.clone())],
                    &body_ty,
                    Some(out_view),
                    space,
                    None,
                    span,
                )?;
                self.emit(Stmt::Assign {
                    lhs: CExpr::raw(len_name.clone()),
                    rhs: CExpr::Arith(self.index(step_len)),
                });
                remaining -= 1;
                name_a.clone()
            }
        };
        let init_out = if first_in.is_some() { name_a.clone() } else { name_b.clone() };
        self.emit(Stmt::Decl {
            qualifier: Some(q),
            ty: format!("{elem_c}*"),
            name: in_p.clone(),
            len: None,
            init: Some(CExpr::raw(init_in)),
        });
        self.emit(Stmt::Decl {
            qualifier: Some(q),
            ty: format!("{elem_c}*"),
            name: out_p.clone(),
            len: None,
            init: Some(CExpr::raw(init_out)),
        });
        if remaining > 0 {
            let in_mem =
                Rc::new(Memory { name: in_p.clone(), space, elem: (**elem).clone(), kind: MemKind::Array });
            let out_mem =
                Rc::new(Memory { name: out_p.clone(), space, elem: (**elem).clone(), kind: MemKind::Array });
            let in_view = rc(View::Mem { mem: in_mem, ty: Type::array((**elem).clone(), lvar.clone()) });
            let out_view = rc(View::Mem { mem: out_mem, ty: body_ty.clone() });
            let it = self.names.fresh("iter");
            let (mut body, _) = self.in_block(|l| {
                l.apply(
                    g,
                    vec![in_view],
                    &[Type::array((**elem).clone(), lvar.clone())],
                    &body_ty,
                    Some(out_view),
                    space,
                    None,
                    span,
                )
            })?;
            body.push(Stmt::Assign {
                lhs: CExpr::raw(len_name.clone()),
                rhs: CExpr::Arith(self.index(step_len)),
            });
            body.push(Stmt::Assign { lhs: CExpr::raw(in_p.clone()), rhs: CExpr::raw(out_p.clone()) });
            body.push(Stmt::Assign {
                lhs: CExpr::raw(out_p.clone()),
                rhs: CExpr::Ternary {
                    cond: Box::new(CExpr::binary("==", CExpr::raw(in_p.clone()), CExpr::raw(name_a.clone()))),
                    then: Box::new(CExpr::raw(name_b.clone())),
                    otherwise: Box::new(CExpr::raw(name_a.clone())),
                },
            });
            self.emit(Stmt::For {
                var: it,
                init: CExpr::raw("0"),
                bound: CExpr::raw(remaining.to_string()),
                step: CExpr::raw("1"),
                body,
            });
        } else {
            self.emit(Stmt::Assign { lhs: CExpr::raw(in_p.clone()), rhs: CExpr::raw(name_a.clone()) });
        }
        let result = Rc::new(Memory { name: in_p, space, elem: (**elem).clone(), kind: MemKind::Array });
        Ok(rc(View::Mem { mem: result, ty: out_ty.clone() }))
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
                self.unsupported(span, "iterate takes a lambda or a composition (f o g)")
            }
        }
    }

    /// C text of a pointer to element 0 of the array view `v`.
    fn slice_start(&mut self, v: &View, span: Span) -> Result<String, CompileError> {
        let a = consume(v, &[ArithExpr::Cst(0)], None, &|_| String::new(), &self.memo)
            .map_err(|e| CompileError::Unsupported { msg: e.0, span })?;
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
