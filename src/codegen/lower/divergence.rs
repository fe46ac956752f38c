//! Barriers left out inside a `mapLcl` loop that work-items run different
//! numbers of times (a barrier there would hang the work-group).
//!
//! Leaving out the barrier after a `mapLcl` in such a loop is only right
//! where nothing in the loop's body reads what that map wrote: the barrier
//! after the whole loop then orders the writes before every read. The
//! lowering marks each left-out barrier with a marker statement where the
//! barrier would stand; when the loop's body is complete, a marker that is
//! not the last thing the body does (through blocks, guards and the loops
//! of other parallel maps) means a later statement may read what the map
//! wrote, and the program is refused. The markers never reach the kernel.

use crate::arith::ArithExpr;
use crate::ir::c::Stmt;
use crate::ir::Span;

/// The text of a marker statement, followed by the left-out barrier's
/// index in [`DivergentLoop::dropped`]. It starts with a control character
/// no comment the lowering writes has.
const MARKER: &str = "\u{1}lift:barrier left out:";

/// A `mapLcl(dim)` loop over `len` that work-items run different numbers
/// of times, and the `mapLcl`s inside it that left out their barrier.
pub(super) struct DivergentLoop {
    pub(super) dim: u8,
    pub(super) len: ArithExpr,
    /// Where each left-out barrier's `mapLcl` is, in the order of their
    /// markers.
    pub(super) dropped: Vec<Span>,
}

impl DivergentLoop {
    pub(super) fn new(dim: u8, len: ArithExpr) -> DivergentLoop {
        DivergentLoop { dim, len, dropped: Vec::new() }
    }

    /// Whether a `mapLcl` inside the loop has left out its barrier.
    pub(super) fn unsynced(&self) -> bool {
        !self.dropped.is_empty()
    }

    /// Records a left-out barrier of the `mapLcl` at `span`; the statement
    /// to emit where it would stand.
    pub(super) fn drop_barrier(&mut self, span: Span) -> Stmt {
        self.dropped.push(span);
        Stmt::Comment(format!("{MARKER}{}", self.dropped.len() - 1))
    }
}

/// The span of the first `mapLcl` whose left-out barrier something after
/// it in `body` (the loop's body) may need, if any; the markers are
/// removed from `body` either way.
pub(super) fn misplaced(body: &mut Vec<Stmt>, l: &DivergentLoop) -> Option<Span> {
    let mut late = Vec::new();
    find(body, true, &mut late);
    strip(body);
    late.into_iter().min().and_then(|k| l.dropped.get(k).copied())
}

/// The markers of `stmts` not in last place, where `tail` says whether
/// `stmts` itself ends the loop's body.
fn find(stmts: &mut [Stmt], tail: bool, late: &mut Vec<usize>) {
    let n = stmts.len();
    for (i, s) in stmts.iter_mut().enumerate() {
        let last = tail && i + 1 == n;
        if let Stmt::Comment(c) = s {
            if let Some(k) = c.strip_prefix(MARKER).and_then(|k| k.parse::<usize>().ok()) {
                if !last {
                    late.push(k);
                }
            }
        }
        for b in s.bodies_mut() {
            find(b, last, late);
        }
    }
}

fn strip(stmts: &mut Vec<Stmt>) {
    stmts.retain(|s| !matches!(s, Stmt::Comment(c) if c.starts_with(MARKER)));
    for s in stmts.iter_mut() {
        for b in s.bodies_mut() {
            strip(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::c::CExpr;

    fn span(start: u32) -> Span {
        Span { start, end: start + 1 }
    }

    #[test]
    fn a_marker_is_fine_last_and_refused_before_a_statement() {
        let mut l = DivergentLoop::new(1, ArithExpr::Cst(4));
        let m0 = l.drop_barrier(span(3));
        let read = Stmt::Expr(CExpr::raw("read()"));
        // Last, inside a block inside a loop: nothing after it reads.
        let mut fine = vec![
            read.clone(),
            Stmt::Block(vec![Stmt::CountedFor {
                var: "i".into(),
                init: CExpr::raw("0"),
                bound: CExpr::raw("4"),
                step: CExpr::raw("1"),
                body: vec![read.clone(), m0.clone()],
            }]),
        ];
        assert_eq!(misplaced(&mut fine, &l), None);
        assert!(!format!("{fine:?}").contains(MARKER), "markers are removed: {fine:?}");
        // A statement after the block may read what the map wrote.
        let m1 = l.drop_barrier(span(7));
        let mut late = vec![Stmt::Block(vec![m0, read.clone()]), m1, read];
        assert_eq!(misplaced(&mut late, &l), Some(span(3)));
        assert!(!format!("{late:?}").contains(MARKER), "markers are removed: {late:?}");
    }
}
