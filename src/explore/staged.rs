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
//!
//! The steps are strategies (`explore::strategy`): each finds its
//! position on the program as the steps before left it (the next working
//! map, the argument it maps over, the map inside a copy), none is a path
//! written relative to the `map(map(f))`.

use super::space::{divisors, pow2, slot, Arg, Shape, Slot};
use super::strategy::{apply, apply_with, shape_of, Site, Strategy};
use crate::ir::Program;
use crate::rewrite;
use crate::types::Sizes;

/// A high-level map lowered as `kind` over dimension `d`, found by `site`.
fn lowered(kind: &'static str, d: i64, site: Site) -> Strategy {
    apply_with(kind, site, vec![("d", Arg::Fixed(d))])
}

/// The tile and work-group steps both staged shapes start with, at the
/// first `map(map(f))` `tile-2d` matches (its tile sizes slots 0 and 1):
/// after `tile-2d` (`join o map(untile) o map(map(map(map(f)))) o tile`),
/// work-groups over the rows of tiles and over the tiles of a row.
fn tiled(then: Vec<Strategy>) -> Strategy {
    let mut steps = vec![
        apply_with("tile-2d", Site::Focus, vec![("n", Arg::Slot(0)), ("m", Arg::Slot(1))]),
        lowered("map-wrg", 1, Site::NextMap),
        lowered("map-wrg", 0, Site::NextMap),
    ];
    steps.extend(then);
    Strategy::Within { site: Site::First, rule: "tile-2d", then: Box::new(Strategy::Seq(steps)) }
}

/// The staged shape's strategy; `chunk_first`: the copy's local
/// dimension 0 walks the tile's outer index. The tile the per-tile map
/// reads is copied (`map-id-nd`, two `mapLcl`, `to-local`), then the map
/// is `mapLcl(1, mapLcl(0, f))`.
fn staging(chunk_first: bool) -> Strategy {
    let (outer, inner) = if chunk_first { (0, 1) } else { (1, 0) };
    let copy = Strategy::Seq(vec![
        apply("map-id-nd", Site::Focus),
        lowered("map-lcl", outer, Site::Focus),
        lowered("map-lcl", inner, Site::NextMap),
        apply("to-local", Site::Focus),
    ]);
    tiled(vec![
        Strategy::Within { site: Site::NextMapArg, rule: "", then: Box::new(copy) },
        lowered("map-lcl", 1, Site::NextMap),
        lowered("map-lcl", 0, Site::NextMap),
    ])
}

/// The strategy where the copy reads with local dimension 0 along the
/// tile's outer index (a transpose's), each work-item moving `r` (slot 2)
/// elements: the copy's rows split in `r` (`mapLcl(1)` over the groups,
/// `mapSeq` in a group), and `f` applied column by column
/// (`map-interchange`: `mapLcl(0)` over the columns, so the writes stay
/// coalesced) with the rows split the same way. The work-group is `n x
/// m / r` instead of `n x m`.
fn staging_several() -> Strategy {
    let r = || vec![("n", Arg::Slot(2))];
    let copy = Strategy::Seq(vec![
        apply("map-id-nd", Site::Focus),
        apply_with("split-join", Site::InnerMap, r()),
        lowered("map-lcl", 0, Site::Focus),
        lowered("map-lcl", 1, Site::NextMap),
        apply("map-seq", Site::NextMap),
        apply("to-local", Site::Focus),
    ]);
    tiled(vec![
        Strategy::Within { site: Site::NextMapArg, rule: "", then: Box::new(copy) },
        apply("map-interchange", Site::NextMap),
        lowered("map-lcl", 0, Site::NextMap),
        apply_with("split-join", Site::NextMap, r()),
        lowered("map-lcl", 1, Site::NextMap),
        apply("map-seq", Site::NextMap),
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
        vec![slot("staged-2d:n", divisors(4, 64, n), 32), slot("staged-2d:m", divisors(4, 64, m), 32)]
            .into_iter()
            .collect();
    let Some(slots) = slots else { return Vec::new() };
    let Some((shape, chunk_first)) = copy_order(base, def, sizes, &slots) else { return Vec::new() };
    let mut out = vec![shape];
    // Where the copy reads along the tile's outer index, also the shape
    // moving several elements per work-item.
    if chunk_first {
        let mut slots = slots;
        slots.extend(slot("staged-2d:r", pow2(2, 8, None), 4));
        if let Some(shape) = shape_of(base, def, &staging_several(), &slots) {
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
fn copy_order(base: &Program, def: &str, sizes: &Sizes, slots: &[Slot]) -> Option<(Shape, bool)> {
    let mut best: Option<((Shape, bool), f64)> = None;
    for chunk_first in [false, true] {
        let Some(shape) = shape_of(base, def, &staging(chunk_first), slots) else { continue };
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
        // The map is over the transposed array: N rows of M (96 = 32 * 3:
        // tiles of 6, 12, 24 and 48 beside the powers of two).
        assert_eq!(shapes[0].slots[0].domain, vec![4, 8, 16, 32, 64]);
        assert_eq!(shapes[0].slots[1].domain, vec![4, 6, 8, 12, 16, 24, 32, 48]);
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
