//! The OpenCL rule of the Lift pattern reference (Section 2.2.2) that fuses a sequential map
//! over sliding windows into `slideSeqPlus`, whose lowering keeps the
//! current window in private memory and loads only `step` new elements per
//! iteration (the register reuse of stencils along a sequential dimension).
//! The seed writes `slide(step, size)`; this language's `slide` takes the
//! size first, and so does `slideSeqPlus(size, step, f)`.

use super::algorithmic::{map_parts, B, R};
use super::opencl::rule;
use super::rule::{view, Args, Builder, Rule, RuleError, Site, View};
use crate::ir::{Expr, FunDecl, MapKind, Pattern, Span};

pub static RULES: [Rule; 1] = [rule(
    "slide-seq-plus",
    "mapSeq(f) $ slide(size, step) $ xs   (f without parallel maps)",
    "slideSeqPlus(size, step, f) $ xs",
    &[],
    m_slide_seq,
    b_slide_seq,
)];

/// `(f, slide, xs, span)` of `mapSeq(f) $ slide(size, step) $ xs`.
fn parts(e: &Expr) -> Option<(&FunDecl, &Expr, &Expr, Span)> {
    let (MapKind::Seq, f, windows, span) = map_parts(e)? else { return None };
    let (View::Slide { .. }, [xs], _) = view(windows)? else { return None };
    Some((f, windows, xs, span))
}

fn m_slide_seq(s: &Site<'_>) -> R {
    match parts(s.expr) {
        Some(_) => Ok(()),
        None => Err(s.no_match("slide-seq-plus", "`mapSeq(f) $ slide(size, step) $ xs`")),
    }
}

fn b_slide_seq(s: &Site<'_>, _: &Args, b: &mut Builder) -> B {
    m_slide_seq(s)?;
    let (f, windows, xs, span) = parts(s.expr).ok_or_else(|| s.no_match("slide-seq-plus", "a mapSeq"))?;
    let Some((View::Slide { size, step }, _, _)) = view(windows) else {
        return Err(s.no_match("slide-seq-plus", "a slide"));
    };
    // The window lives in one thread's private memory.
    if crate::ir::visit::has_parallel_map(f) {
        return Err(RuleError::SideCondition {
            rule: "slide-seq-plus",
            what: "the function contains a parallel map, but the window is private to one thread".into(),
        });
    }
    let p = Pattern::SlideSeq { size: size.clone(), step: step.clone(), f: Box::new(f.clone()) };
    Ok(b.pattern(p, vec![xs.clone()], span))
}
