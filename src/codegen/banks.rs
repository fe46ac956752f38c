//! Local-memory bank conflicts, and the row padding that removes them.
//!
//! Local memory is spread over 32 banks of 4 bytes; the work-items of a
//! warp (or wavefront) that touch different words of one bank wait for
//! each other. A tile copied with local dimension 0 along its columns
//! (`loc[64 * k + m]`, `k` the work-item) or read along them (a transpose
//! through local memory) puts every work-item on the same bank: a 16- or
//! 32-way conflict. Padding the rows of the array (`64` to `68` scalars)
//! spreads them over the banks without changing what the kernel computes:
//! every access goes through the memory's view, which flattens indices
//! with the padded row length (`view::consume`).
//!
//! [`pads`] finds the local arrays to pad in a lowered kernel: those with an
//! access whose index moves by a multiple of 8 scalars from one work-item of
//! dimension 0 to the next (an 8-way conflict or worse). A vector access
//! reads `w` consecutive scalars from a multiple of `w`; it stays inside
//! one padded row, and aligned, when `w` divides both the row and the pad:
//! the pad is the least common multiple of the widths the lowering saw
//! (1 for scalars only), and an array whose row some width does not divide
//! is left as it is.

use crate::arith::ArithExpr;
use crate::ir::c::Stmt;
use std::collections::{BTreeMap, BTreeSet};

/// Strides (in scalars) from one work-item to the next at which an access
/// conflicts 8-way or worse.
const CONFLICT_STRIDE: i64 = 8;

/// What the lowering knows of one local array.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LocalArray {
    /// The length of its rows: its innermost arrays longer than one (those
    /// of one element are a row's elements), where it has two or more
    /// dimensions and that length is a constant.
    pub row: Option<i64>,
    /// The vector widths it is read or written with (1: scalars).
    pub widths: BTreeSet<i64>,
}

/// Per local array to pad (by name), the elements to add to its rows.
pub fn pads(body: &[Stmt], locals: &BTreeMap<String, LocalArray>) -> BTreeMap<String, i64> {
    let mut w = Conflicts { locals, conflicts: BTreeMap::new(), escaped: BTreeSet::new() };
    super::coalescing::walk(body, &mut w);
    let mut out = BTreeMap::new();
    for (name, strides) in &w.conflicts {
        let Some(LocalArray { row: Some(row), widths }) = locals.get(name) else { continue };
        if w.escaped.contains(name) {
            continue;
        }
        // Longer rows help where work-items are whole rows apart.
        let across_rows = strides.iter().all(|s| s % row == 0);
        let pad = widths.iter().fold(1, |a, &b| lcm(a, b));
        if across_rows && widths.iter().all(|w| *w > 0 && row % w == 0) {
            out.insert(name.clone(), pad);
        }
    }
    out
}

fn lcm(a: i64, b: i64) -> i64 {
    fn gcd(a: i64, b: i64) -> i64 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    a / gcd(a, b) * b
}

struct Conflicts<'l> {
    /// The kernel's local arrays (the lowering's facts, by name).
    locals: &'l BTreeMap<String, LocalArray>,
    /// Per array, the strides (in its elements) of its conflicting accesses.
    conflicts: BTreeMap<String, BTreeSet<i64>>,
    /// Arrays named other than as an indexed base (a pointer into one that
    /// `iterate` swaps, `vload8(i, loc_0)`): their layout is left alone.
    escaped: BTreeSet<String>,
}

impl super::coalescing::LaneVisitor for Conflicts<'_> {
    fn raw(&mut self, text: &str) {
        for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            if self.locals.contains_key(word) {
                self.escaped.insert(word.to_string());
            }
        }
    }

    fn index(&mut self, base: &str, index: &ArithExpr, at: &super::coalescing::Place) {
        // `((local float4*)loc_0)[i]` is printed from a raw base.
        let (name, width) = match cast_base(base) {
            Some(x) => x,
            None if self.locals.contains_key(base) => (base, 1),
            None => return self.raw(base),
        };
        if !self.locals.contains_key(name) {
            return;
        }
        let Some(lane) = at.lane.last() else { return };
        // A lane variable below 1 (`l < 1`): one work-item, no conflict.
        let one_lane = index.vars().iter().any(|v| {
            v.name == *lane && v.range.stop.as_ref().and_then(|s| s.as_cst()).is_some_and(|s| s <= 1)
        });
        if one_lane {
            return;
        }
        let at = |l: i64| index.eval_with(&|v| Some(if v == lane { l } else { 0 })).ok();
        if let (Some(a), Some(b)) = (at(0), at(1)) {
            let stride = (b - a).abs() * width;
            if stride >= CONFLICT_STRIDE && stride % CONFLICT_STRIDE == 0 {
                self.conflicts.entry(name.to_string()).or_default().insert(stride);
            }
        }
    }
}

/// `((local float4*)loc_0)` (or `((const local float4*)loc_0)`) as
/// (`loc_0`, 4).
fn cast_base(base: &str) -> Option<(&str, i64)> {
    let rest = base.strip_prefix("((const local ").or_else(|| base.strip_prefix("((local "))?;
    let (ty, name) = rest.split_once("*)")?;
    let name = name.strip_suffix(')')?;
    let width = ty.trim_start_matches(|c: char| c.is_ascii_alphabetic()).parse().ok()?;
    Some((name, width))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::c::CExpr;

    fn lane_loop(body: Vec<Stmt>) -> Stmt {
        Stmt::CountedFor {
            var: "l".into(),
            init: CExpr::raw("get_local_id(0)"),
            bound: CExpr::Arith(ArithExpr::Cst(16)),
            step: CExpr::raw("16"),
            body,
        }
    }

    fn decl(name: &str) -> Stmt {
        Stmt::Decl {
            qualifier: Some("local"),
            ty: crate::types::Type::FLOAT,
            pointer: false,
            name: name.into(),
            len: Some(ArithExpr::Cst(1024)),
            init: None,
        }
    }

    fn store(base: &str, index: ArithExpr) -> Stmt {
        Stmt::set(CExpr::Index(base.into(), index), CExpr::raw("0.0f"))
    }

    #[test]
    fn a_column_walk_pads_and_a_row_walk_does_not() {
        let l = || ArithExpr::index("l", ArithExpr::Cst(0), ArithExpr::Cst(16));
        let body = vec![
            decl("loc_0"),
            decl("loc_1"),
            lane_loop(vec![
                store("loc_0", ArithExpr::mul(ArithExpr::Cst(64), l())),
                store("loc_1", ArithExpr::add(l(), ArithExpr::Cst(64))),
                store("((local float4*)loc_0)", l()),
            ]),
        ];
        let facts = |row, widths: &[i64]| LocalArray { row, widths: widths.iter().copied().collect() };
        let locals: BTreeMap<String, LocalArray> =
            [("loc_0".to_string(), facts(Some(64), &[1, 4])), ("loc_1".to_string(), facts(Some(64), &[1]))]
                .into();
        assert_eq!(pads(&body, &locals), [("loc_0".to_string(), 4)].into());
        // A width that does not divide the row: no pad (a vector would
        // cross it); nor for a one-dimensional array.
        let odd: BTreeMap<String, LocalArray> = [("loc_0".to_string(), facts(Some(6), &[1, 4]))].into();
        assert!(pads(&body, &odd).is_empty());
        let flat: BTreeMap<String, LocalArray> = [("loc_0".to_string(), facts(None, &[1]))].into();
        assert!(pads(&body, &flat).is_empty());
    }

    #[test]
    fn an_array_used_through_a_pointer_is_not_padded() {
        let l = ArithExpr::index("l", ArithExpr::Cst(0), ArithExpr::Cst(16));
        let body = vec![
            decl("loc_0"),
            lane_loop(vec![store("loc_0", ArithExpr::mul(ArithExpr::Cst(64), l))]),
            Stmt::Expr(CExpr::call("vstore8", vec![CExpr::raw("v"), CExpr::raw("0"), CExpr::raw("loc_0")])),
        ];
        let locals: BTreeMap<String, LocalArray> =
            [("loc_0".to_string(), LocalArray { row: Some(64), widths: [1].into() })].into();
        assert!(pads(&body, &locals).is_empty());
    }

    #[test]
    fn cast_bases_name_their_array_and_width() {
        assert_eq!(cast_base("((local float4*)loc_3)"), Some(("loc_3", 4)));
        assert_eq!(cast_base("((const local float2*)loc_0)"), Some(("loc_0", 2)));
        assert_eq!(cast_base("loc_3"), None);
    }
}
