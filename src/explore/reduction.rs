//! Macro shapes for full reductions (ICFP 2015, Figure 9): a def whose body
//! is `reduce(f, z) $ map(g, xs)` has no parallel single-kernel lowering,
//! and the derivations that make it parallel are 6 to 40 small steps long,
//! beyond breadth-first enumeration. Each shape here is a fixed sequence of
//! existing rules (a macro rule, as the paper's are) with its numeric
//! parameters as tuner slots, ending in `extract`: the kernel leaves one
//! partial result per chunk or work-group, and the fixed second stage
//! (`lift explore --then DEF`) adds them up.
//!
//! * `chunks(c)`: each of `len / c` chunks of `c` consecutive elements is
//!   reduced by one work-item (the CPU form, Figure 9c); the lowering stage
//!   then chooses how the chunks map to the thread hierarchy.
//! * `chunks-vec(c, w)`: the same with `w`-wide vector loads and a vector
//!   accumulator (`vectorize-reduce`, `asvector-map`).
//! * `strided(c)`: work-item `t` of `T = len / c` reduces elements
//!   `t, t + T, t + 2T, ...` (`reorder-stride` first: coalesced on a GPU).
//! * `wg-tree(c, l)` and `wg-tree-strided(c, l)`: a work-group of `l`
//!   work-items reduces `c * l` elements, each work-item `c` of them
//!   (consecutive, or strided by `l`), into local memory, then a halving
//!   tree of `log2 l` steps (`partred-iterate`) in local memory, and one
//!   result per work-group (the GPU form, Figure 9a). Fully lowered here:
//!   the lowering stage has no `toLocal` choice.
//!
//! Each shape is a strategy (`strategy`, built by [`recipe`]): focused on
//! the first high-level reduction (the def's body, or under a map over its
//! one result), each step is placed by a move down from where its part
//! starts (ELEVATE's traversals, `Site::Below`); `extract` makes the
//! partial results the body. The moves depend only on the shape
//! `reduce(f, z) $ map(g, xs)`, not on `f`, `g`, `xs` or the slot values.
//! A shape whose strategy fails on a program (it is not such a reduction)
//! is not offered.

use super::space::{divisors, pow2, slot, Arg, Shape, Slot};
use super::strategy::{apply_with, shape_of, Site, Strategy};
use crate::arith::ArithExpr;
use crate::ir::visit::Path;
use crate::ir::{ExprKind, FunKind, Pattern, Program, ReduceKind};
use crate::rewrite;
use crate::types::Sizes;

/// One step of a recipe: rule name (`extract` for the extract step),
/// position relative to the root, parameters.
pub(super) type RStep = (&'static str, &'static str, Vec<(&'static str, Arg)>);

/// The steps that turn `reduce(f, z) $ map(g, xs)` into
/// `join o map(\t -> partRed(f, z, 1) o map(g) $ t) o split(c) $ xs`
/// (Figure 8, (1) to (5), then `extract`); `c` is slot `c`, `m = len / c`.
pub(super) fn chunk_steps(len: &ArithExpr, c: usize) -> Vec<RStep> {
    vec![
        ("reduce-partred", "root", vec![("m", Arg::LenOver(len.clone(), vec![c]))]),
        ("partred-split", "2", vec![("n", Arg::Slot(c))]),
        ("split-join", "2.1.1.1", vec![("n", Arg::Slot(c))]),
        ("split-join-id", "2.1.1", vec![]),
        ("map-fusion", "2.1", vec![]),
        ("extract", "2", vec![]),
    ]
}

/// `reduce(f, z) $ gather(stride) $ xs`'s map moved back in front:
/// `reorder-stride` (stride `s`), then `reorder-map`.
pub(super) fn stride_steps(s: Arg) -> Vec<RStep> {
    vec![("reorder-stride", "root", vec![("s", s)]), ("reorder-map", "2", vec![])]
}

/// The work-group tree after `chunk_steps` with chunks of `c * l`
/// elements: the per-work-item chunks of `c` (strided by `l` when
/// `strided`), the tree, and the lowering of all of it (as
/// `benchmarks/derivations/dot.txt`, which starts one step later).
fn wg_tree_steps(c: usize, l: usize, strided: bool) -> Vec<RStep> {
    let mut v: Vec<RStep> = Vec::new();
    if strided {
        v.push(("reorder-stride", "1.0.0.0", vec![("s", Arg::Slot(l))]));
        v.push(("reorder-map", "1.0.0.0.2", vec![]));
    }
    v.extend([
        ("partred-reduce", "1.0.0.0", vec![]),
        ("reduce-partred", "1.0.0.0", vec![("m", Arg::Slot(l))]),
        ("partred-split", "1.0.0.0.2", vec![("n", Arg::Slot(c))]),
        ("split-join", "1.0.0.0.2.1.1.1", vec![("n", Arg::Slot(c))]),
        ("split-join-id", "1.0.0.0.2.1.1", vec![]),
        ("map-fusion", "1.0.0.0.2.1", vec![]),
        ("reduce-to-partred", "1.0.0.0", vec![]),
        ("partred-iterate", "1.0.0.0", vec![("n", Arg::Log2(l)), ("k", Arg::Fixed(2))]),
        // Lowering: a work-group per chunk of c * l ...
        ("map-wrg", "1", vec![("d", Arg::Fixed(0))]),
        // ... each work-item's sequential, fused reduction into local memory ...
        ("partred-reduce", "1.0.0.0.1.1.0.0.0", vec![]),
        ("map-seq", "1.0.0.0.1.1.0.0.0.2", vec![]),
        ("reduce-seq", "1.0.0.0.1.1.0.0.0", vec![]),
        ("reduce-map-fusion", "1.0.0.0.1.1.0.0.0", vec![]),
        ("map-id", "1.0.0.0.1.1.0.0.0", vec![]),
        ("map-seq", "1.0.0.0.1.1.0.0.0", vec![]),
        ("to-local", "1.0.0.0.1.1.0.0.0", vec![]),
        ("map-lcl", "1.0.0.0.1.1", vec![("d", Arg::Fixed(0))]),
        // ... the halving tree in local memory ...
        ("partred-reduce", "1.0.0.0.0.0.0.1.0.0.0", vec![]),
        ("reduce-seq", "1.0.0.0.0.0.0.1.0.0.0", vec![]),
        ("map-id", "1.0.0.0.0.0.0.1.0.0.0", vec![]),
        ("map-seq", "1.0.0.0.0.0.0.1.0.0.0", vec![]),
        ("to-local", "1.0.0.0.0.0.0.1.0.0.0", vec![]),
        ("map-lcl", "1.0.0.0.0.0.0.1", vec![("d", Arg::Fixed(0))]),
        // ... and the work-group's result to global memory.
        ("map-id", "1.0.0.0", vec![]),
        ("split-join", "1.0.0.0", vec![("n", Arg::Fixed(1))]),
        ("map-lcl", "1.0.0.0.1", vec![("d", Arg::Fixed(0))]),
        ("map-seq", "1.0.0.0.1.0.0.0", vec![]),
        ("to-global", "1.0.0.0.1", vec![]),
    ]);
    v
}

/// `chunks-vec`: the chunk's `partRed` as a reduction of `w`-vectors.
fn vec_steps(w: usize) -> Vec<RStep> {
    vec![
        ("partred-reduce", "1.0.0.0", vec![]),
        ("vectorize-reduce", "1.0.0.0", vec![("n", Arg::Slot(w))]),
        ("asvector-map", "1.0.0.0.2.1.2", vec![]),
    ]
}

/// Recipe positions taken where the part starts.
pub(super) const ROOT: &[u16] = &[];
/// Where `vectorize-reduce` leaves the inner reduction over vectors, which
/// has the root's shape `reduce(f, z) $ map(g, xs)`.
const VECTOR_INNER: &[u16] = &[2, 1];

/// A recipe and where its positions start, found on the program as it
/// stands when the part begins (a move down from the enclosing focus, or a
/// site found by structure such as the next reduction).
pub(super) type Part = (Vec<RStep>, Site);

/// A part whose positions are below `moves` from the enclosing focus.
pub(super) fn below(recipe: Vec<RStep>, moves: &[u16]) -> Part {
    (recipe, Site::Below(moves.to_vec()))
}

/// The strategy of the parts, in order, focused on each position `anchor`
/// gives (the reduction, found by structure): each part's steps at their
/// positions below where the part starts; after `extract` the partial
/// results are the def's body and the positions are below it.
pub(super) fn recipe(parts: Vec<Part>, anchor: Site) -> Option<Strategy> {
    let mut seq = Vec::new();
    for (steps, start) in parts {
        let mut then = Vec::new();
        for (name, path, args) in steps {
            let moves: Path = path.parse().ok()?;
            let site = Site::Below(moves.0);
            then.push(if name == "extract" {
                Strategy::Extract(site)
            } else if name == "reduce-pad" {
                padding(site, args)
            } else {
                rewrite::find_rule(name)?;
                apply_with(name, site, args)
            });
        }
        seq.push(Strategy::Within { site: start, rule: "", then: Box::new(Strategy::Seq(then)) });
    }
    Some(Strategy::Within { site: anchor, rule: "", then: Box::new(Strategy::Seq(seq)) })
}

/// Padding the reduction at `site` with elements that change nothing:
/// with a constant (`reduce-pad`), or, where no constant is known to work
/// for every value the map reads (a softmax's `exp(x - m)`), with a mask
/// (`reduce-pad-mask`).
pub(super) fn padding(site: Site, args: Vec<(&'static str, Arg)>) -> Strategy {
    Strategy::Choice(vec![
        apply_with("reduce-pad", site.clone(), args.clone()),
        apply_with("reduce-pad-mask", site, args),
    ])
}

/// The shape the parts' strategy records on `base` (none where it does not
/// apply at the slots' defaults).
pub(super) fn build(
    base: &Program,
    def: &str,
    parts: Vec<Part>,
    anchor: Site,
    slots: &[Slot],
) -> Option<Shape> {
    shape_of(base, def, &recipe(parts, anchor)?, slots)
}

/// Where a full reduction sits in the def: at the root, or under a map
/// over its one result (`map(h) $ reduce(f, z) $ xs`, a norm's square
/// root: the derived second stage applies `h`, see `finish`).
pub(super) fn reduction_at(body: &crate::ir::Expr) -> Option<(&crate::ir::Expr, &'static [u16])> {
    if is_reduce(body) {
        return Some((body, ROOT));
    }
    let ExprKind::Call(m, args) = &body.kind else { return None };
    let FunKind::Pattern(Pattern::Map { .. }) = &m.kind else { return None };
    match args.as_slice() {
        [r] if is_reduce(r) => Some((r, UNDER_MAP)),
        _ => None,
    }
}

/// Whether `e` is a call of the high-level `reduce`.
pub(super) fn is_reduce(e: &crate::ir::Expr) -> bool {
    matches!(&e.kind, ExprKind::Call(f, _) if matches!(f.kind, FunKind::Pattern(Pattern::Reduce { kind: ReduceKind::Reduce, .. })))
}

/// The reduction's position under a root `map(h) $ reduce(...)`.
const UNDER_MAP: &[u16] = &[1];

/// The length of `xs` in `reduce(f, z) $ map(g, xs)` (see
/// [`reduction_at`] for where), whether the map is missing
/// (`reduce(f, z) $ xs`: the shapes then start with `map-id`, which gives
/// the reduction its map of `id`), and the reduction's position.
fn reduced_len(base: &Program, def: &str) -> Option<(ArithExpr, bool)> {
    let d = base.def(def)?;
    let (red, _) = reduction_at(&d.body)?;
    let (n, mapped) = reduced_array(base, d, red)?;
    Some((n, !mapped))
}

/// The length of the array the reduction `red` (a call in `d`'s body)
/// reduces, and whether that array is a map.
pub(super) fn reduced_array(
    base: &Program,
    d: &crate::ir::Def,
    red: &crate::ir::Expr,
) -> Option<(ArithExpr, bool)> {
    let ExprKind::Call(_, args) = &red.kind else { return None };
    let arr = args.last()?;
    let mapped =
        matches!(&arr.kind, ExprKind::Call(m, _) if matches!(m.kind, FunKind::Pattern(Pattern::Map { .. })));
    let types = crate::passes::typecheck::typecheck_def(base, d).ok()?;
    match types.exprs.get(&arr.id)? {
        crate::types::Type::Array(_, n) => Some((crate::arith::simplify(n), mapped)),
        _ => None,
    }
}

/// Lengths padded by `reduce-pad` become multiples of a power of two up to
/// this: every chunk and work-group of the shapes below up to it divides
/// them.
const PAD_TO: i64 = 1 << 16;

/// Lengths that are multiples of this keep their shapes unpadded only: the
/// powers of two up to it divide them already.
const PAD_BELOW: i64 = 1 << 10;

/// Whether a reduction of `n` elements also gets its shapes padded: not a
/// multiple of 1024, and not shorter (a stencil's window of 5 is no
/// reduction to chunk).
pub(super) fn pads(n: i64) -> bool {
    n >= PAD_BELOW && n % PAD_BELOW != 0
}

/// The length `len` (`n` at the timed sizes) padded to a multiple of the
/// largest power of two up to `n / 64` (from 16 to [`PAD_TO`]: at most
/// 1/64 more elements, which cost a comparison each, no memory), and the
/// elements added (`reduce-pad`'s `p`). 12,345,677 becomes a multiple of
/// 65,536, a column of 7001 one of 64.
pub(super) fn padded(len: &ArithExpr, n: i64) -> (ArithExpr, ArithExpr) {
    padded_to(len, 1i64 << (n / 64).clamp(16, PAD_TO).ilog2())
}

/// `len` padded to a multiple of `q`, and the elements added.
pub(super) fn padded_to(len: &ArithExpr, q: i64) -> (ArithExpr, ArithExpr) {
    let q = ArithExpr::Cst(q);
    let p = crate::arith::simplify(&ArithExpr::modulo(
        ArithExpr::sub(q.clone(), ArithExpr::modulo(len.clone(), q.clone())),
        q,
    ));
    (crate::arith::simplify(&ArithExpr::add(len.clone(), p.clone())), p)
}

/// The reduction shapes for `def` (none unless its body is a full
/// reduction of a map); each replays with its default slot values. Where
/// the length at `sizes` is above 1024 and not a multiple of it ([`pads`]; 12,345,677 elements:
/// no chunk from 16 to 65,536 divides it but 29), the same shapes are also
/// offered on the reduction padded to a multiple of a power of two with
/// elements that change nothing (`reduce-pad`, [`padded`]).
pub fn reduction_shapes(base: &Program, def: &str, sizes: &Sizes) -> Vec<Shape> {
    let Some((len, add_map)) = reduced_len(base, def) else { return Vec::new() };
    lengths(&len, sizes).into_iter().flat_map(|(l, n, p)| shapes_of(base, def, (&l, n), p, add_map)).collect()
}

/// The lengths a reduction's shapes are built for: `len` itself, and where
/// it [`pads`] at `sizes`, `len` padded ([`padded`]) with the elements
/// added; each with its value at `sizes`.
pub(super) fn lengths(len: &ArithExpr, sizes: &Sizes) -> Vec<(ArithExpr, Option<i64>, Option<ArithExpr>)> {
    let at = |l: &ArithExpr| l.eval_with(&|v| sizes.get(v).copied()).ok();
    let n = at(len);
    let mut out = vec![(len.clone(), n, None)];
    if let Some(n) = n.filter(|n| pads(*n)) {
        let (len_p, p) = padded(len, n);
        out.push((len_p.clone(), at(&len_p), Some(p)));
    }
    out
}

/// The shapes on a reduction of `len` elements (`n` at the timed sizes),
/// padded first by `pad` elements where given.
fn shapes_of(
    base: &Program,
    def: &str,
    (len, n): (&ArithExpr, Option<i64>),
    pad: Option<ArithExpr>,
    add_map: bool,
) -> Vec<Shape> {
    let len = len.clone();
    let chunk = |lo, hi, d| slot("c", divisors(lo, hi, n), d);
    let mut out = Vec::new();
    let mut push = |mut parts: Vec<Part>, slots: Vec<Option<Slot>>| {
        let Some(slots) = slots.into_iter().collect::<Option<Vec<Slot>>>() else { return };
        // A vector load across a pad's edge is not compiled: a padded
        // shape has no vector form.
        let vector =
            parts.iter().any(|(steps, _)| steps.iter().any(|(name, ..)| *name == "vectorize-reduce"));
        if pad.is_some() && vector {
            return;
        }
        if add_map {
            parts.insert(0, below(vec![("map-id", "2", vec![])], ROOT));
        }
        if let Some(p) = &pad {
            parts.insert(0, below(vec![("reduce-pad", "root", vec![("p", Arg::Expr(p.clone()))])], ROOT));
        }
        out.extend(build(base, def, parts, Site::NextReduce, &slots));
    };
    // chunks(c)
    push(vec![below(chunk_steps(&len, 0), ROOT)], vec![chunk(16, 1 << 16, 2048)]);
    // chunks-vec(c, w)
    let mut r = chunk_steps(&len, 0);
    r.extend(vec_steps(1));
    push(vec![below(r, ROOT)], vec![chunk(16, 1 << 16, 2048), slot("w", vec![2, 4, 8, 16], 4)]);
    // vec-chunks(c, w): vectorised first, at the root, then chunked; the
    // kernel leaves `w`-vectors of partial sums.
    let vectorize = |w: usize| -> Vec<RStep> {
        vec![("vectorize-reduce", "root", vec![("n", Arg::Slot(w))]), ("asvector-map", "2.1.2", vec![])]
    };
    let mut cs = chunk_steps(&len, 0);
    cs[0].2 = vec![("m", Arg::LenOver(len.clone(), vec![0, 1]))];
    push(
        vec![below(vectorize(1), ROOT), below(cs, VECTOR_INNER)],
        vec![chunk(4, 1 << 14, 512), slot("w", vec![4, 8, 16], 8)],
    );
    // strided(c)
    let mut r = stride_steps(Arg::LenOver(len.clone(), vec![0]));
    r.extend(chunk_steps(&len, 0));
    push(vec![below(r, ROOT)], vec![chunk(4, 1 << 12, 64)]);
    // wg-tree(c, l), consecutive and strided per work-item
    for strided in [true, false] {
        let mut r = Vec::new();
        let mut cs = chunk_steps(&len, 0);
        // Chunks of c * l: slot 0 is c, slot 1 is l.
        cs[0].2 = vec![("m", Arg::LenOver(len.clone(), vec![0, 1]))];
        for s in cs.iter_mut().skip(1).take(2) {
            s.2 = vec![("n", Arg::Prod(vec![0, 1]))];
        }
        r.extend(cs);
        r.extend(wg_tree_steps(0, 1, strided));
        push(vec![below(r, ROOT)], vec![chunk(2, 256, 16), slot("l", pow2(16, 1024, None), 128)]);
    }
    // wg-tree-vec(c, l, w): `vectorize-reduce` at the root first, then the
    // strided work-group tree over the `w`-vectors (each work-item loads
    // whole vectors, `l` apart: coalesced and wide, as the clBLAS-style
    // references do); the kernel leaves `w`-vectors of partial sums.
    let mut cs = chunk_steps(&len, 0);
    cs[0].2 = vec![("m", Arg::LenOver(len.clone(), vec![0, 1, 2]))];
    for s in cs.iter_mut().skip(1).take(2) {
        s.2 = vec![("n", Arg::Prod(vec![0, 1]))];
    }
    // `extract` makes the partial results the new root: the tree's
    // positions are the same as without vectors.
    push(
        vec![below(vectorize(2), ROOT), below(cs, VECTOR_INNER), below(wg_tree_steps(0, 1, true), ROOT)],
        vec![chunk(1, 256, 8), slot("l", pow2(32, 1024, None), 256), slot("w", vec![2, 4], 4)],
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sum whose map reads a def's scalar (`exp(x - c)`), at a length
    /// above 1024 and not a multiple of it: the padded shapes pad with a
    /// mask (no constant gives 0 for every `c`), and replay.
    #[test]
    fn a_map_reading_a_scalar_is_padded_with_a_mask() {
        let src = "userfun add(x: float, y: float): float { return x + y; }\n\
                   userfun expm(x: float, m: float): float { return exp(x - m); }\n\
                   def s(c: float, x: [float]N) = reduce(add, 0.0f) o map(\\v -> expm(v, c)) $ x\n";
        let p = crate::parse::parse_program(&crate::ir::SourceFile::new("t.lift", src.to_string())).unwrap();
        let b = rewrite::prepare(&p, "s").unwrap();
        let sizes: Sizes = [("N".into(), 5000)].into();
        let shapes = reduction_shapes(&b, "s", &sizes);
        let first = |s: &Shape| s.steps.first().and_then(|s| s.rule).map(|r| r.name);
        let masked: Vec<&Shape> = shapes.iter().filter(|s| first(s) == Some("reduce-pad-mask")).collect();
        assert!(!masked.is_empty(), "{:?}", shapes.iter().map(first).collect::<Vec<_>>());
        // None pads with a constant, and the unpadded shapes are there too.
        assert!(shapes.iter().all(|s| first(s) != Some("reduce-pad")));
        assert!(masked.len() < shapes.len());
        for s in masked {
            s.instantiate(&b, "s", &s.defaults()).unwrap();
        }
    }
}
