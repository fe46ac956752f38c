//! `slideSeqPlus(size, step, f)`: `mapSeq(f) o slide(size, step)` as one
//! sequential loop whose current window lives in private memory (the
//! register reuse of stencils along a sequential dimension).
//!
//! ```text
//! T window[size];
//! window[0 .. size-step) = xs[0 .. size-step)           // before the loop
//! for i in 0..windows:
//!     window[size-step .. size) = xs[i*step + size-step ..][..step]
//!     out[i] = f(window)
//!     window[0 .. size-step) = window[step .. size)      // shift down
//! ```
//!
//! Each element of `xs` is thus read once instead of `size / step` times.
//! The copies are unrolled (the window has a size known at compile time),
//! so that the window stays in registers. With `step >= size` nothing is
//! kept and each iteration loads a whole window.

use super::loops::{rc, MAX_UNROLL};
use super::{Call, Lowerer};
use crate::arith::ArithExpr;
use crate::codegen::{CompileError, Unsupported};
use crate::ir::c::{BinOp, CExpr, Stmt};
use crate::ir::{FunDecl, MapKind, Span};
use crate::passes::AddressSpace;
use crate::types::Type;
use crate::view::View;
use std::rc::Rc;

impl<'a> Lowerer<'a> {
    /// Lowers `slideSeqPlus(size, step, g)` as `c` applies it; writes to
    /// `c.out` or to fresh memory in `c.space`.
    pub(crate) fn slide_seq(
        &mut self,
        (size, step): (&ArithExpr, &ArithExpr),
        g: &FunDecl,
        c: Call,
    ) -> Result<Rc<View>, CompileError> {
        let (xs, xs_ty, ty, out, space, span) = (c.arg()?, c.arg_ty()?, c.ty, c.out, c.space, c.span);
        let (Type::Array(elem, _), Type::Array(res_elem, windows)) = (xs_ty, ty) else {
            return Err(CompileError::Internal("slideSeqPlus over a non-array after type checking".into()));
        };
        let (Some(size), Some(step)) = (self.decide(size).as_cst(), self.decide(step).as_cst()) else {
            let (size, step) = (size.clone(), step.clone());
            return self.unsupported(span, Unsupported::WindowUnknown { size, step });
        };
        let window_ty = Type::array((**elem).clone(), ArithExpr::Cst(size));
        let scalars = self.decide(&window_ty.lengths().into_iter().fold(ArithExpr::Cst(1), ArithExpr::mul));
        match scalars.as_cst() {
            Some(c) if c <= MAX_UNROLL => {}
            Some(c) => {
                return self.unsupported(
                    span,
                    Unsupported::WindowTooLarge { window: window_ty, values: c, max: MAX_UNROLL },
                )
            }
            None => {
                return self
                    .unsupported(span, Unsupported::WindowUnsized { window: window_ty, values: scalars })
            }
        }
        let (elem, res_elem) = ((**elem).clone(), (**res_elem).clone());
        let windows = self.decide(windows);
        // With no window at all, the prologue must not read either.
        let guarded = !self.memo.prove_le(&ArithExpr::Cst(1), &windows);
        // The result is declared outside the guard: it is read after it.
        let target = match out {
            Some(o) => o,
            None => self.alloc(ty, space, span)?,
        };
        let (stmts, ()) = self.in_block(|l| {
            let window = l.alloc(&window_ty, AddressSpace::Private, span)?;
            let keep = (size - step).max(0);
            for j in 0..keep {
                let src = View::access(ArithExpr::Cst(j), (*xs).clone());
                l.copy(&src, &View::access(ArithExpr::Cst(j), (*window).clone()), &elem, span)?;
            }
            let t2 = target.clone();
            let mut body = |l: &mut Lowerer<'a>, i: ArithExpr| -> Result<(), CompileError> {
                for k in keep..size {
                    let at =
                        ArithExpr::add(ArithExpr::mul(i.clone(), ArithExpr::Cst(step)), ArithExpr::Cst(k));
                    let src = View::access(at, (*xs).clone());
                    l.copy(&src, &View::access(ArithExpr::Cst(k), (*window).clone()), &elem, span)?;
                }
                let o = rc(View::access(i, (*t2).clone()));
                let w = window.clone();
                l.apply(
                    g,
                    Call::inner(vec![w], std::slice::from_ref(&window_ty), &res_elem, Some(o), space, span),
                )?;
                for k in 0..keep {
                    let src = View::access(ArithExpr::Cst(k + step), (*window).clone());
                    l.copy(&src, &View::access(ArithExpr::Cst(k), (*window).clone()), &elem, span)?;
                }
                Ok(())
            };
            l.seq_loop(&windows, false, Some(MapKind::Seq), &mut body, span)
        })?;
        if guarded {
            let cond = CExpr::binary(BinOp::Lt, CExpr::raw("0"), CExpr::Arith(self.index(&windows)));
            self.emit(Stmt::If { cond, then: stmts, otherwise: Vec::new() });
        } else {
            if let Some(b) = self.blocks.last_mut() {
                b.extend(stmts);
            }
        }
        Ok(target)
    }

    /// Copies a value of type `t` (an array of known lengths is copied
    /// element by element, unrolled) from `src` to `dst`.
    fn copy(&mut self, src: &View, dst: &View, t: &Type, span: Span) -> Result<(), CompileError> {
        match t {
            Type::Array(e, n) => {
                let Some(n) = self.decide(n).as_cst() else {
                    return Err(CompileError::Internal("window element of symbolic length".into()));
                };
                for j in 0..n {
                    let (s, d) = (
                        View::access(ArithExpr::Cst(j), src.clone()),
                        View::access(ArithExpr::Cst(j), dst.clone()),
                    );
                    self.copy(&s, &d, e, span)?;
                }
                Ok(())
            }
            _ => {
                let v = self.read(src, t, span)?;
                self.write(dst, v, t, span)
            }
        }
    }
}
