//! A two-dimensional map whose tiles are staged in local memory
//! (`staged-2d`): `tile-2d` at the outermost `map(map(f))` whose tile
//! argument can be copied (`map-id-nd` applies to it), work-groups over the
//! tiles (`mapWrg(1)`, `mapWrg(0)`), each tile's elements copied to local
//! memory by the work-group, then `f` applied per element (`mapLcl(1,
//! mapLcl(0, f))`) reading the copy.
//!
//! Where `f` reads its tile through a transpose (`map(map(id)) o transpose
//! $ a`), reading it directly puts the work-items of a warp a row of memory
//! apart; the copy reads the tile in memory order instead. Which order that
//! is (local dimension 0 along the tile's rows or its columns) depends on
//! the layout behind the tile, so `copy_order` compiles the default point
//! both ways and keeps the one whose global accesses are more often
//! coalesced (`codegen::coalescing`), as the tiled products do. A copy
//! stored a tile row apart per work-item is padded by the compiler
//! (`codegen::banks`). Offered only where its default point replays.

use super::space::{pow2, rel_path, rule_step, slot, Arg, Shape, Slot, Step};
use crate::ir::visit::Path;
use crate::ir::Program;
use crate::rewrite;
use crate::types::Sizes;

/// The steps at `p` (the position of the `map(map(f))`); `chunk_first`:
/// the copy's local dimension 0 walks the tile's outer index.
fn steps(p: &Path, chunk_first: bool) -> Option<Vec<Step>> {
    let d = |v: i64| vec![("d", Arg::Fixed(v))];
    // After `tile-2d` (`join o map(untile) o map(map(map(map(f)))) o tile`):
    // the map over rows of tiles, over tiles of a row, per tile, and the
    // tile argument.
    let rows = rel_path(p, "1.1");
    let tiles = rel_path(&rows, "0.0.0");
    let per = rel_path(&tiles, "0.0.0");
    let copy = rel_path(&per, "1");
    let (outer, inner) = if chunk_first { (0, 1) } else { (1, 0) };
    Some(vec![
        rule_step("tile-2d", p.clone(), vec![("n", Arg::Slot(0)), ("m", Arg::Slot(1))])?,
        rule_step("map-wrg", rows, d(1))?,
        rule_step("map-wrg", tiles, d(0))?,
        rule_step("map-id-nd", copy.clone(), vec![])?,
        rule_step("map-lcl", copy.clone(), d(outer))?,
        rule_step("map-lcl", rel_path(&copy, "0.0.0"), d(inner))?,
        rule_step("to-local", copy, vec![])?,
        rule_step("map-lcl", per.clone(), d(1))?,
        rule_step("map-lcl", rel_path(&per, "0.0.0"), d(0))?,
    ])
}

/// The steps at `p` where the copy reads with local dimension 0 along
/// the tile's outer index (a transpose's), each work-item moving `r`
/// (slot 2) elements: the copy's rows split in `r` (`mapLcl(1)` over the
/// groups, `mapSeq` in a group), and `f` applied column by column
/// (`map-interchange`: `mapLcl(0)` over the columns, so the writes stay
/// coalesced) with the rows split the same way. The work-group is
/// `n x m / r` instead of `n x m`.
fn steps_several(p: &Path) -> Option<Vec<Step>> {
    let d = |v: i64| vec![("d", Arg::Fixed(v))];
    let r = || vec![("n", Arg::Slot(2))];
    let rows = rel_path(p, "1.1");
    let tiles = rel_path(&rows, "0.0.0");
    let per = rel_path(&tiles, "0.0.0");
    let copy = rel_path(&per, "1");
    let copy_row = rel_path(&copy, "0.0.0");
    let groups = rel_path(&copy_row, "1");
    // After `map-interchange` and `mapLcl(0)` over the columns: a column,
    // then its groups of `r`.
    let column = rel_path(&per, "1.0.0.0");
    let col_groups = rel_path(&column, "1");
    Some(vec![
        rule_step("tile-2d", p.clone(), vec![("n", Arg::Slot(0)), ("m", Arg::Slot(1))])?,
        rule_step("map-wrg", rows, d(1))?,
        rule_step("map-wrg", tiles, d(0))?,
        rule_step("map-id-nd", copy.clone(), vec![])?,
        rule_step("split-join", copy_row, r())?,
        rule_step("map-lcl", copy.clone(), d(0))?,
        rule_step("map-lcl", groups.clone(), d(1))?,
        rule_step("map-seq", rel_path(&groups, "0.0.0"), vec![])?,
        rule_step("to-local", copy, vec![])?,
        rule_step("map-interchange", per.clone(), vec![])?,
        rule_step("map-lcl", rel_path(&per, "1"), d(0))?,
        rule_step("split-join", column, r())?,
        rule_step("map-lcl", col_groups.clone(), d(1))?,
        rule_step("map-seq", rel_path(&col_groups, "0.0.0"), vec![])?,
    ])
}

/// The staged shape for `def` (none where `tile-2d` does not apply or its
/// default point does not replay).
pub fn staged_shapes(base: &Program, def: &str, sizes: &Sizes) -> Vec<Shape> {
    let Ok(cands) = rewrite::applicable(base, def) else { return Vec::new() };
    let Some(p) = cands.into_iter().find(|c| c.rule.name == "tile-2d").map(|c| c.path) else {
        return Vec::new();
    };
    let Some((lengths, _)) = super::space::lengths_at(base, def, &p, sizes) else { return Vec::new() };
    let [n, m, ..] = lengths[..] else { return Vec::new() };
    let slots: Option<Vec<Slot>> =
        vec![slot("staged-2d:n", pow2(4, 64, n), 32), slot("staged-2d:m", pow2(4, 64, m), 32)]
            .into_iter()
            .collect();
    let Some(slots) = slots else { return Vec::new() };
    let Some((shape, chunk_first)) = copy_order(base, def, &p, sizes, &slots) else { return Vec::new() };
    let mut out = vec![shape];
    // Where the copy reads along the tile's outer index, also the shape
    // moving several elements per work-item.
    if chunk_first {
        let mut slots = slots;
        slots.extend(slot("staged-2d:r", pow2(2, 8, None), 4));
        if let Some(steps) = steps_several(&p) {
            let shape = Shape { algorithmic: steps.len(), steps, slots };
            if shape.instantiate(base, def, &shape.defaults()).is_ok() {
                out.push(shape);
            }
        }
    }
    out
}

/// The shape whose default kernel's global accesses are more often
/// coalesced of the two copy orders (the first on a tie), and whether its
/// copy reads along the tile's outer index.
fn copy_order(base: &Program, def: &str, p: &Path, sizes: &Sizes, slots: &[Slot]) -> Option<(Shape, bool)> {
    let mut best: Option<((Shape, bool), f64)> = None;
    for chunk_first in [false, true] {
        let Some(steps) = steps(p, chunk_first) else { continue };
        let shape = Shape { algorithmic: steps.len(), steps, slots: slots.to_vec() };
        let Ok(inst) = shape.instantiate(base, def, &shape.defaults()) else { continue };
        let Ok(k) = crate::compile::compile(&inst.program, def, &Default::default()) else { continue };
        let share = crate::codegen::coalescing::coalesced_share(&k.accesses, sizes).unwrap_or(0.0);
        if best.as_ref().is_none_or(|(_, b)| share > b + 1e-9) {
            best = Some(((shape, chunk_first), share));
        }
    }
    best.map(|(s, _)| s)
}

#[cfg(test)]
mod tests {
    use super::super::space::prepared;
    use super::*;

    #[test]
    fn a_transpose_is_staged_with_coalesced_reads_and_writes() {
        let sizes: Sizes = [("M".into(), 96), ("N".into(), 64)].into();
        let b = prepared("benchmarks/generality/transpose.lift", "transpose");
        let shapes = staged_shapes(&b, "transpose", &sizes);
        assert_eq!(shapes.len(), 2);
        // The map is over the transposed array: N rows of M.
        assert_eq!(shapes[0].slots[0].domain, vec![4, 8, 16, 32, 64]);
        assert_eq!(shapes[0].slots[1].domain, vec![4, 8, 16, 32]);
        let inst = shapes[0].instantiate(&b, "transpose", &shapes[0].defaults()).unwrap();
        let k = crate::compile::compile(&inst.program, "transpose", &Default::default()).unwrap();
        let share = crate::codegen::coalescing::coalesced_share(&k.accesses, &sizes).unwrap();
        assert_eq!(share, 1.0, "{}", k.source);
        // The copy's rows are padded: work-items store a tile row apart.
        assert!(k.source.contains("local float loc_0[1056]"), "{}", k.source);
        // Four elements per work-item: a work-group of 32 x 8, as coalesced.
        let inst = shapes[1].instantiate(&b, "transpose", &shapes[1].defaults()).unwrap();
        let k = crate::compile::compile(&inst.program, "transpose", &Default::default()).unwrap();
        assert!(k.source.contains("reqd_work_group_size(32, 8, 1)"), "{}", k.source);
        let share = crate::codegen::coalescing::coalesced_share(&k.accesses, &sizes).unwrap();
        assert_eq!(share, 1.0, "{}", k.source);
    }

    #[test]
    fn no_staged_shape_without_a_two_dimensional_map() {
        let sizes: Sizes = [("N".into(), 1024)].into();
        let b = prepared("benchmarks/generality/saxpy.lift", "saxpy");
        assert!(staged_shapes(&b, "saxpy", &sizes).is_empty());
    }
}
