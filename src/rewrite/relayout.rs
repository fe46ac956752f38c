//! `reduce-seq-block` (one of the fold rules of `src/rewrite/fold.rs`):
//! a fold's accumulator in another layout. A fold from `z` by `h` is, for
//! any `V` with a left inverse `U` (`U(V(t)) = t`), the fold from `V(z)`
//! by `\(acc, x) -> V(h(U(acc), x))` with `U` applied to its result: by
//! induction the new accumulator is `V` of the old one after every step.
//! Here `V` is `tile-mm`'s register blocking of an `[M][N]` tile into
//! `[M/rm][N/rn][rm][rn]` blocks, block `(i, j)` holding rows `i, i +
//! M/rm, ...` and columns `j, j + N/rn, ...` (step 6 of "tile-mm as small
//! steps", `docs/REWRITE.md`), and `U` is `tile-mm`'s `untile`.

use super::algorithmic::{B, R};
use super::fold::seq_parts;
use super::matmul::{map_with, strips, untile};
use super::rule::{apply_fun, arg, Args, Builder, RuleError, Site};
use crate::arith::{self, ArithExpr};
use crate::ir::{Expr, FunKind, IdGen, Lambda, Pattern, Span};
use crate::types::Type;

const BLOCK: &str = "reduce-seq-block";

/// `V(t)`: `map(\rs -> strips(ni, rs)) $ transpose $ split(mi, t)`, where
/// `transpose $ split(mi, t)` groups the rows `i, i + mi, ...` and
/// `strips(ni, row group)` the columns `j, j + ni, ...` of each.
pub(super) fn blocks(g: &mut IdGen, t: Expr, mi: &ArithExpr, ni: &ArithExpr, span: Span) -> Expr {
    let sp = g.call_pattern(Pattern::Split(mi.clone()), vec![t], span);
    let rows = g.call_pattern(Pattern::Transpose, vec![sp], span);
    let ni = ni.clone();
    let f = g.lambda1(span, |g, rs| strips(g, rs, &ni, span));
    map_with(g, f, rows, span)
}

/// `(M, N)` of a two-dimensional accumulator.
fn dims(s: &Site<'_>, z: &Expr) -> Result<(ArithExpr, ArithExpr), RuleError> {
    if let Some(Type::Array(row, m)) = s.ty(z) {
        if let Type::Array(_, n) = row.as_ref() {
            return Ok((arith::simplify(m), arith::simplify(n)));
        }
    }
    let found = s.ty(z).map_or_else(|| "no type".to_string(), |t| t.to_string());
    Err(RuleError::SideCondition {
        rule: BLOCK,
        what: format!("the accumulator must be a two-dimensional array, found {found}"),
    })
}

pub(super) fn m_block(s: &Site<'_>) -> R {
    seq_parts(s.expr).map(|_| ()).ok_or_else(|| s.no_match(BLOCK, "`reduceSeq(h, z) $ xs` (either unrolled)"))
}

/// `U(V(t)) = t`: element `[i][j][r][s]` of `V(t)` is `t[r*mi + i][s*ni +
/// j]`, and `untile` puts it back there. `rm` and `rn` must divide the
/// tile's sides.
pub(super) fn b_block(s: &Site<'_>, a: &Args, b: &mut Builder) -> B {
    let (kind, h, z, xs, span) = seq_parts(s.expr).ok_or_else(|| s.no_match(BLOCK, "a reduceSeq"))?;
    let (rm, rn) = (arg(BLOCK, a, "rm")?, arg(BLOCK, a, "rn")?);
    let (m, n) = dims(s, z)?;
    b.divides(BLOCK, &rm, &m)?;
    b.divides(BLOCK, &rn, &n)?;
    let mi = arith::simplify(&ArithExpr::div(m, rm));
    let ni = arith::simplify(&ArithExpr::div(n, rn));
    let g = &mut b.gen;
    let (acc, x) = (g.synthetic_param(span), g.synthetic_param(span));
    let (va, vx) = (g.var(&acc), g.var(&x));
    let old = untile(g, va, 1, false, span);
    let next = apply_fun(g, h, vec![old, vx], span);
    let next = blocks(g, next, &mi, &ni, span);
    let step = g.fun(FunKind::Lambda(Lambda { params: vec![acc, x], body: Box::new(next) }), span);
    let init = blocks(g, z.clone(), &mi, &ni, span);
    let red = g.call_pattern(Pattern::Reduce { kind, f: Box::new(step) }, vec![init, xs.clone()], span);
    let back = g.lambda1(span, |g, t| untile(g, t, 1, false, span));
    Ok(map_with(g, back, red, span))
}
