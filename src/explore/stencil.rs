//! The stencil tuning space (CGO 2018, Sections 4 and 6): shapes built from
//! a high-level stencil def (`map_n(f) o slide_n o pad_n`), searched by the
//! same tuner as every other def (`docs/EXPLORE.md`, "Stencils").
//!
//! Shapes, each a derivation with slots:
//!
//! * `glb`: one output per work-item, `mapGlb` over every dimension; the
//!   local size `(tx, ty)` is a pair of slots.
//! * `rows-k`: `register-blocking` (k rows per block) on the outer two
//!   maps, so a work-item computes k outputs along y (2D) or, in 3D, along
//!   z (`planes-k`) or y; the k outputs are a `mapSeqUnroll`, so the loads
//!   of neighbouring rows are plain expressions the OpenCL compiler can
//!   share between them.
//! * `tiled`: `overlapped-tiling-2d-rect` with the tile steps `vy`, `vx`
//!   as slots (`u = v + size - step` per dimension, non-square tiles), on
//!   one grid or zipped ones; in 3D after `stencil-3d-planes`, on the two
//!   inner dimensions. Each slid grid's tile is copied to local memory
//!   (`map-id-nd`, `to-local`; several bound by `let-local-copies`), a
//!   work-group per tile, a work-item per output. Tiling is one choice among the others, never forced.
//! * `strips` (2D): each column cut into strips of `s` rows, a
//!   work-item walking one with its window of neighbourhood rows in
//!   registers (`slide-seq-plus`); `s`, `tx`, `ty` slots.
//! * `slideseq` (3D, one grid): `stencil-3d-columns` then `slide-seq-plus`:
//!   a work-item per (y, x) walks z keeping its window of planes in
//!   registers (the 2.5D technique of the Lift pattern reference); `tx`, `ty` slots.
//!
//! A shape is offered only where its steps replay; slot domains hold the
//! values whose rule constraints hold at the timed size and every
//! `--valid-at` size.
//!
//! Every reduction becomes `reduceSeqUnroll` (Section 4.3) where its length
//! is a constant, with a sequential map feeding it fused in
//! (`reduce-map-fusion`).

use super::space::{does_work, most_twos, Arg, Shape, Slot, Step};
use super::strategy::{self, apply, apply_with, Site, Strategy, Trace};
use crate::arith;
use crate::ir::visit::{self, Path};
use crate::ir::{ExprKind, FunKind, MapKind, Pattern, Program};
use crate::rewrite::{self, Args};
use crate::types::Sizes;

/// The local-size slots of a stencil shape: one value per power-of-two band
/// `[p, 2p)` (`banded_divisors`); `tx` 0 (the driver's choice) and `ty` 1
/// are always offered.
const TX_BANDS: [i64; 6] = [8, 16, 32, 64, 128, 256];
const TY_BANDS: [i64; 4] = [2, 4, 8, 16];
/// Outputs per work-item.
const KS: [i64; 3] = [2, 4, 8];

/// The number of dimensions (2 or 3) of a stencil def: its body slides and
/// its first parameter is a 2D or 3D array.
pub fn stencil_dims(base: &Program, def: &str) -> Option<usize> {
    base.def(def)?.params.first()?.ty.as_ref()?;
    let dims = param_dims(base, def);
    (slide_count(base, def) > 0 && (2..=3).contains(&dims)).then_some(dims)
}

/// How many `slide`s the def's body holds.
fn slide_count(base: &Program, def: &str) -> usize {
    let Some(d) = base.def(def) else { return 0 };
    visit::expr_positions(&d.body)
        .iter()
        .filter(|(_, e)| {
            matches!(&e.kind, ExprKind::Call(f, _) if matches!(&f.kind, FunKind::Pattern(Pattern::Slide { .. })))
        })
        .count()
}

/// A 1D stencil (a def over a 1D array that slides, or one that applies
/// such a stencil to every row of a 2D array, the rows then a `mapGlb(1)`
/// with the local size's `ty`): k outputs per work-item, in two orders.
/// Contiguous: `overlapped-tiling` with tiles of k outputs (`u = k + size - step`), the loads neighbouring outputs share
/// are plain expressions the OpenCL compiler reuses (a CPU's order).
/// Strided: `map-stride` (s = N / k) then `split-join` (k), so a work-item's
/// outputs are N / k apart and neighbouring work-items read and write
/// neighbouring elements (a GPU's order). Either way the tiles or chunks are
/// a `mapGlb(0)` and the k outputs a `mapSeqUnroll` (k loads in flight per
/// work-item). Slots `k` (2, 4, 8, dividing the length at every size) and
/// the local size `tx`. Offered beside the generic space's shapes (which
/// hold one output per work-item), not instead of them.
pub fn one_dim_shapes(base: &Program, def: &str, sizes: &Sizes, valid_at: &[Sizes]) -> Vec<Shape> {
    let Some(site) = one_dim_site(base, def) else { return Vec::new() };
    let Some(ov) = overlap(base, def) else { return Vec::new() };
    // The slid dimension is the innermost; the outer ones are rows.
    let dims = param_dims(base, def);
    let inner = dims - 1;
    let len = match param_len_expr(base, def, inner) {
        Some(n) => n,
        None => return Vec::new(),
    };
    let all: Vec<&Sizes> = std::iter::once(sizes).chain(valid_at).collect();
    let lens: Vec<Option<i64>> = all.iter().map(|s| param_len(base, def, inner, s)).collect();
    let rows: Vec<Option<i64>> = if dims == 2 { vec![param_len(base, def, 0, sizes)] } else { vec![None] };
    // Rows over global dimension 1, the blocks of k outputs over 0.
    let plan: Vec<Exec> =
        (1..dims).map(|d| Exec::Glb(d as i64)).chain([Exec::Glb(0), Exec::SeqUnroll]).collect();
    let mut out = Vec::new();
    for strided in [false, true] {
        let mut b = Build::new(base, def);
        let Some(k) = b.slot("k", dividing(&KS, &lens), 4) else { return Vec::new() };
        let xs = blocked(&[param_len(base, def, inner, sizes)], &b.t.shape.slots[k].domain);
        if b.local_slots(&xs, &rows).is_none() {
            continue;
        }
        let shaped = if strided {
            b.step("map-stride", &site, vec![("s", Arg::LenOver(len.clone(), vec![k]))])
                .and_then(|()| b.step("split-join", &site.child(1), vec![("n", Arg::Slot(k))]))
        } else {
            let tiling = vec![("u", Arg::SlotPlus(k, ov)), ("v", Arg::Slot(k))];
            b.step("overlapped-tiling", &site, tiling)
        };
        if shaped.is_some() {
            out.extend(b.lower(&plan));
        }
    }
    out
}

/// Where a 1D neighbourhood's map is: the def slides once (one slid
/// dimension), its first parameter is a 1D array (the map at the root) or
/// a 2D one whose rows are each such a stencil (the map inside the map
/// over the rows), and `overlapped-tiling` applies there.
fn one_dim_site(base: &Program, def: &str) -> Option<Path> {
    let dims = param_dims(base, def);
    if slide_count(base, def) != 1 || !(1..=2).contains(&dims) {
        return None;
    }
    let b = Build::new(base, def);
    let site = b.sites("overlapped-tiling").into_iter().next()?;
    // The site lies inside exactly dims - 1 working maps (the rows').
    let outer = strategy::maps_above(&b.t.prog, def, &site)?;
    (outer == dims - 1).then_some(site)
}

/// The number of array dimensions of the def's first parameter.
fn param_dims(base: &Program, def: &str) -> usize {
    let mut t = base.def(def).and_then(|d| d.params.first()).and_then(|p| p.ty.as_ref());
    let mut dims = 0;
    while let Some(crate::types::Type::Array(e, _)) = t {
        dims += 1;
        t = Some(e.as_ref());
    }
    dims
}

/// The length (an expression of the sizes) of the array at `dim` of the
/// def's first parameter.
fn param_len_expr(base: &Program, def: &str, dim: usize) -> Option<crate::arith::ArithExpr> {
    let mut t = base.def(def)?.params.first()?.ty.as_ref()?;
    for _ in 0..dim {
        let crate::types::Type::Array(e, _) = t else { return None };
        t = e.as_ref();
    }
    match t {
        crate::types::Type::Array(_, n) => Some(n.clone()),
        _ => None,
    }
}

/// `size - step` of the first slide of the def (the overlap of tiles).
fn overlap(base: &Program, def: &str) -> Option<i64> {
    let d = base.def(def)?;
    visit::expr_positions(&d.body).iter().find_map(|(_, e)| match &e.kind {
        ExprKind::Call(f, _) => match &f.kind {
            FunKind::Pattern(Pattern::Slide { size, step }) => {
                Some(arith::simplify(size).as_cst()? - arith::simplify(step).as_cst()?)
            }
            _ => None,
        },
        ExprKind::Literal(_) | ExprKind::Param(_) => None,
    })
}

/// How one high-level map executes.
#[derive(Clone, Copy)]
enum Exec {
    Glb(i64),
    Wrg(i64),
    Lcl(i64),
    SeqUnroll,
}

/// The strategy lowering one working map (the first, pre-order) as
/// `how`; a sequential one unrolled where its length is a constant, a
/// plain loop otherwise.
fn exec(how: Exec) -> Strategy {
    let d = |d: i64| vec![("d", Arg::Fixed(d))];
    match how {
        Exec::Glb(k) => apply_with("map-glb", Site::NextMap, d(k)),
        Exec::Wrg(k) => apply_with("map-wrg", Site::NextMap, d(k)),
        Exec::Lcl(k) => apply_with("map-lcl", Site::NextMap, d(k)),
        Exec::SeqUnroll => Strategy::Seq(vec![
            apply("map-seq", Site::NextMap),
            Strategy::Try(Box::new(apply("map-seq-unroll", Site::Previous))),
        ]),
    }
}

/// Steps a lowering repeats at most (maps, reductions, fusions).
const REPEAT: usize = 16;

/// The working maps lowered in order with `plan`, the rest sequentially,
/// then every reduction to `reduceSeqUnroll` (or `reduceSeq`).
fn lowering(plan: &[Exec]) -> Strategy {
    let mut steps: Vec<Strategy> = plan.iter().map(|h| exec(*h)).collect();
    steps.push(Strategy::Repeat(Box::new(exec(Exec::SeqUnroll)), REPEAT));
    let reduce = Strategy::Seq(vec![
        apply("reduce-seq", Site::NextReduce),
        Strategy::Try(Box::new(apply("reduce-seq-unroll", Site::Previous))),
    ]);
    steps.push(Strategy::Repeat(Box::new(reduce), REPEAT));
    Strategy::Seq(steps)
}

/// Every sequential map that feeds a reduction fused into it.
fn fusing() -> Strategy {
    Strategy::Repeat(Box::new(apply("reduce-map-fusion", Site::First)), REPEAT)
}

/// A walk: the two maps above it over global dimensions `dims` (outer
/// first), the walk itself a `slideSeqPlus` (its window in registers).
fn walking(dims: [i64; 2]) -> Strategy {
    Strategy::Seq(vec![
        exec(Exec::Glb(dims[0])),
        exec(Exec::Glb(dims[1])),
        apply("map-seq", Site::NextMap),
        apply("slide-seq-plus", Site::Previous),
    ])
}

/// The map over columns outside, each column's windows of rows slid
/// (`strips`, before its tiling).
fn columns_outside() -> Strategy {
    Strategy::Seq(vec![
        apply("slide-transpose", Site::First),
        apply("map-interchange", Site::Root),
        apply("transpose-transpose-id", Site::First),
        apply("map-fusion", Site::First),
    ])
}

/// Whether a high-level map that does work or a high-level reduction is
/// left in the def (its lowering then failed).
fn first_left(prog: &Program, def: &str) -> bool {
    strategy::next_map(prog, def).is_some() || strategy::next_reduce(prog, def).is_some()
}

/// A shape under construction: the steps so far and the program they give
/// at the slots' defaults (to find the positions of later steps).
struct Build<'a> {
    def: &'a str,
    /// The program, the shape's steps and slots, the last step's position.
    t: Trace,
}

impl<'a> Build<'a> {
    fn new(base: &Program, def: &'a str) -> Self {
        Build { def, t: Trace::new(base.clone(), Shape::empty()) }
    }

    fn slot(&mut self, name: &str, domain: Vec<i64>, default: i64) -> Option<usize> {
        if domain.is_empty() {
            return None;
        }
        let default = if domain.contains(&default) { default } else { domain[domain.len() / 2] };
        self.t.shape.slots.push(Slot { name: name.into(), domain, default });
        Some(self.t.shape.slots.len() - 1)
    }

    fn step(&mut self, rule: &str, path: &Path, args: Vec<(&'static str, Arg)>) -> Option<()> {
        let rule = rewrite::find_rule(rule)?;
        let defaults = self.t.shape.defaults();
        let mut a = Args::new();
        for (k, v) in &args {
            a.insert(k.to_string(), v.value(&defaults));
        }
        let applied = rewrite::apply(&self.t.prog, self.def, rule, path, &a).ok()?;
        self.t.prog = applied.program;
        self.t.shape.steps.push(Step { rule: Some(rule), path: path.clone(), args });
        self.t.last = Some(path.clone());
        Some(())
    }

    /// Positions where `rule` applies, outermost first.
    fn sites(&self, rule: &str) -> Vec<Path> {
        strategy::sites(self.def, &self.t, rule, &Site::Each)
    }

    /// Applies `s` and keeps its first alternative (a stencil shape is
    /// one derivation); `None` where it fails, the build unchanged.
    fn run(&mut self, s: &Strategy) -> Option<()> {
        self.t = s.first(self.def, self.t.clone())?;
        Some(())
    }

    /// The position of the last step.
    fn last(&self) -> Option<Path> {
        self.t.last.clone()
    }

    /// The shape, once `lowering(plan)` has lowered every working map and
    /// reduction, with sequential maps fused into the reductions they feed.
    fn lower(mut self, plan: &[Exec]) -> Option<Shape> {
        self.run(&lowering(plan))?;
        if first_left(&self.t.prog, self.def) {
            return None;
        }
        // A sequential map feeding a reduction is fused into it: the
        // neighbourhood's mapped values (a weighted or scaled
        // neighbourhood) never become an array in local or global memory.
        self.run(&fusing())?;
        Some(self.t.shape)
    }

    /// A walk's lowering (`walking`), then the rest as `lower` does.
    fn walk(mut self, dims: [i64; 2]) -> Option<Shape> {
        self.run(&walking(dims))?;
        self.lower(&[])
    }

    /// The parameter of the lambda that a map at `path` applies.
    fn tile_param(&self, path: &Path) -> Option<crate::ir::ParamId> {
        let e = visit::expr_at(&self.t.prog.def(self.def)?.body, path).ok()?;
        let ExprKind::Call(f, _) = &e.kind else { return None };
        let FunKind::Pattern(Pattern::Map { f, .. }) = &f.kind else { return None };
        match &f.kind {
            FunKind::Lambda(l) => l.params.first().map(|p| p.id),
            FunKind::UserFun(_) | FunKind::Pattern(_) => None,
        }
    }

    /// The tile's slid grids, where `map-id-nd` copies them: the tile
    /// parameter `id` itself, or `get(i, id)` of zipped tiles (`Some(i)`),
    /// as the argument of the map that slides it (the grids read without
    /// halo are not copied).
    fn copy_sites(&self, id: crate::ir::ParamId) -> Vec<(Option<usize>, Path)> {
        let Some(d) = self.t.prog.def(self.def) else { return Vec::new() };
        let grid = |e: &crate::ir::Expr| match &e.kind {
            ExprKind::Param(q) if *q == id => Some(None),
            ExprKind::Call(f, args) => match (&f.kind, args.as_slice()) {
                (FunKind::Pattern(Pattern::Get(i)), [x]) if matches!(x.kind, ExprKind::Param(q) if q == id) => {
                    Some(Some(*i))
                }
                _ => None,
            },
            ExprKind::Param(_) | ExprKind::Literal(_) => None,
        };
        let slid_by_map = |p: &Path| {
            visit::node_at(&d.body, p).ok().and_then(|(_, above)| above.last().copied()).is_some_and(|n| {
                matches!(n, visit::Node::Expr(crate::ir::Expr { kind: ExprKind::Call(f, _), .. })
                    if matches!(&f.kind, FunKind::Pattern(Pattern::Map { kind: MapKind::Map, f }) if !does_work(f)))
            })
        };
        self.sites("map-id-nd")
            .into_iter()
            .filter_map(|p| {
                let e = visit::expr_at(&d.body, &p).ok()?;
                let w = grid(e)?;
                slid_by_map(&p).then_some((w, p))
            })
            .collect()
    }

    /// `tx` and `ty` from the values that divide the lengths of x (`xs`)
    /// and y (`ys`) (`tx` 0 always: the driver's choice).
    fn local_slots(&mut self, xs: &[Option<i64>], ys: &[Option<i64>]) -> Option<()> {
        let tx: Vec<i64> = std::iter::once(0).chain(banded_divisors(&TX_BANDS, xs)).collect();
        let ty: Vec<i64> = std::iter::once(1).chain(banded_divisors(&TY_BANDS, ys)).collect();
        self.slot("tx", tx, 32)?;
        self.slot("ty", ty, 4)?;
        Some(())
    }
}

/// The length of the array at `dim` (0 = outermost) of the def's first
/// parameter at `sizes`.
fn param_len(base: &Program, def: &str, dim: usize, sizes: &Sizes) -> Option<i64> {
    param_len_expr(base, def, dim)?.eval_with(&|v| sizes.get(v).copied()).ok()
}

/// The number of blocks of the largest k of `ks` along a dimension of
/// length `ys` (fewer blocks for every smaller k of the domain divide it).
fn blocked(ys: &[Option<i64>; 1], ks: &[i64]) -> [Option<i64>; 1] {
    let kmax = ks.iter().copied().max().unwrap_or(1);
    [ys[0].map(|l| l / kmax)]
}

/// One value per power-of-two band `[p, 2p)` that divides every length (and
/// is below it): the one with the most factors of two (whole warps, aligned
/// rows), the largest among those. On power-of-two lengths these are the
/// powers of two; on others a band still offers a divisor (srad's 504
/// columns: 8, 24, 56, 72, 168), where powers of two would leave 8. A band
/// with no divisor offers `p` itself where the launch rounded up to whole
/// work-groups idles few work-items (`rounded`).
fn banded_divisors(bands: &[i64], lens: &[Option<i64>]) -> Vec<i64> {
    bands
        .iter()
        .filter_map(|&p| {
            most_twos((p..2 * p).filter(|&v| dividing(&[v], lens) == [v])).or_else(|| rounded(p, lens))
        })
        .collect()
}

/// `p` as a local extent that divides no length: `compile_for_launch`
/// rounds the global size up to whole work-groups and the extra work-items
/// do nothing (the maps keep their bound checks). Offered where every
/// length is known, above `p`, and rounding adds at most an eighth of it:
/// a 3001 x 2999 image (both prime) had only the driver's choice, which
/// was work-groups of one work-item (5.4 ms for a 3 x 3 blur on the H100).
fn rounded(p: i64, lens: &[Option<i64>]) -> Option<i64> {
    let few_idle = |l: i64| p < l && ((l + p - 1) / p * p - l) * 8 <= l;
    (!lens.is_empty() && lens.iter().all(|l| l.is_some_and(few_idle))).then_some(p)
}

/// The values that divide every length (and are below it).
fn dividing(values: &[i64], lens: &[Option<i64>]) -> Vec<i64> {
    values.iter().copied().filter(|v| lens.iter().all(|l| l.is_some_and(|l| l % v == 0 && *v < l))).collect()
}

/// The shapes of a stencil def (see the module comment), `None` when the
/// def is no stencil. `base` is in the rules' normal form.
pub fn shapes(base: &Program, def: &str, sizes: &Sizes, valid_at: &[Sizes]) -> Option<Vec<Shape>> {
    let dims = stencil_dims(base, def)?;
    // Lengths of a dimension at the timed size and every `valid_at` size.
    let all: Vec<&Sizes> = std::iter::once(sizes).chain(valid_at).collect();
    let lens =
        |dim: usize| -> Vec<Option<i64>> { all.iter().map(|s| param_len(base, def, dim, s)).collect() };
    let mut out = Vec::new();
    let glb: Vec<Exec> = (0..dims).rev().map(|d| Exec::Glb(d as i64)).collect();
    // Local sizes only at the timed size: the harness falls back to the
    // driver's choice where one does not divide another size's range.
    let (xs, ys) = ([param_len(base, def, dims - 1, sizes)], [param_len(base, def, dims - 2, sizes)]);
    // One output per work-item.
    let mut b = Build::new(base, def);
    if b.local_slots(&xs, &ys).is_some() {
        out.extend(b.lower(&glb));
    }
    // k outputs per work-item along the outermost dimension (y in 2D, z in 3D).
    let mut b = Build::new(base, def);
    if let Some(k) = b.slot("k", dividing(&KS, &lens(0)), 4) {
        // In 2D the blocks are along y: ty divides the number of blocks.
        let ys = if dims == 2 { blocked(&ys, &b.t.shape.slots[k].domain) } else { ys };
        if b.local_slots(&xs, &ys).is_some()
            && b.step("register-blocking", &Path::root(), vec![("n", Arg::Slot(k))]).is_some()
        {
            // 2D: blocks, columns, the k outputs. 3D: a block is [H][k][W]
            // after the rule; `map-interchange` on its [k][W] rows makes
            // them [W][k], so the k outputs are innermost: blocks, rows,
            // columns, the k outputs (a parallel map may not sit in a
            // sequential one).
            let plan = if dims == 2 {
                Some(vec![Exec::Glb(1), Exec::Glb(0), Exec::SeqUnroll])
            } else {
                let site = b.sites("map-interchange").get(1).cloned();
                site.and_then(|p| b.step("map-interchange", &p, Vec::new()))
                    .map(|()| vec![Exec::Glb(2), Exec::Glb(1), Exec::Glb(0), Exec::SeqUnroll])
            };
            if let Some(plan) = plan {
                out.extend(b.lower(&plan));
            }
        }
    }
    // 3D: k outputs along y in every plane.
    if dims == 3 {
        let mut b = Build::new(base, def);
        if let Some(k) = b.slot("k", dividing(&KS, &lens(1)), 4) {
            let inner = b.sites("register-blocking").into_iter().find(|p| *p != Path::root());
            let ys = blocked(&ys, &b.t.shape.slots[k].domain);
            if let (Some(p), Some(())) = (inner, b.local_slots(&xs, &ys)) {
                if b.step("register-blocking", &p, vec![("n", Arg::Slot(k))]).is_some() {
                    let plan = [Exec::Glb(2), Exec::Glb(1), Exec::Glb(0), Exec::SeqUnroll];
                    out.extend(b.lower(&plan));
                }
            }
        }
    }
    // Overlapped tiling in local memory, tiles of vy x vx outputs.
    if let Some(ov) = overlap(base, def) {
        out.extend(tiled(base, def, &all, ov, dims));
    }
    // 2D: strips of s rows walked per column (slideSeqPlus).
    if dims == 2 {
        if let Some(ov) = overlap(base, def) {
            out.extend(strips(Build::new(base, def), &all, &xs, ov));
        }
    }
    // 3D: the z-walk (slideSeqPlus) per (y, x) column.
    if dims == 3 {
        let mut b = Build::new(base, def);
        if b.local_slots(&xs, &ys).is_some() {
            out.extend(slideseq(b));
        }
    }
    Some(out)
}

/// The z-walk: `stencil-3d-columns` makes the stencil a map over (y, x)
/// columns of `map(f) o slide` along z, `mapGlb(1)`, `mapGlb(0)` over the
/// columns and `slide-seq-plus` over the walk (the window of planes stays
/// in registers, each step loads one plane's neighbourhood).
fn slideseq(mut b: Build<'_>) -> Option<Shape> {
    b.run(&apply("stencil-3d-columns", Site::Root))?;
    b.walk([1, 0])
}

/// Rows per strip of the 2D walk.
const SS: [i64; 5] = [4, 8, 16, 32, 64];

/// The 2D walk: each work-item computes a strip of `s` outputs down one
/// column, its window of neighbourhood rows in registers, loading one row
/// of its neighbourhood per output (the z-walk of `slideseq` in 2D, cut
/// into strips so that a 4,096-column image has more than 4,096
/// work-items). From `map_2(f) o map(transpose) o slide(size, step) o
/// map(slide(size, step))`: `slide-transpose` makes the outer slide one
/// per column of row windows, `map-interchange` with
/// `transpose-transpose-id` puts the map over columns outside (the
/// result written transposed), `map-fusion` joins it with the column's
/// slide, `overlapped-tiling` cuts each column into strips (`u = s +
/// size - step`, `v = s`); `mapGlb(0)` over columns (coalesced),
/// `mapGlb(1)` over strips, `slide-seq-plus` on the walk. On the H100 a
/// 3 x 3 box filter at 4096 x 4096 took 0.0548 to 0.0554 ms with strips
/// of 8 or 16 in groups of 64 x 4, against 0.0587 for the best `rows-k`
/// (both in one device command).
/// `all`: the timed size and every `--valid-at` size; `xs`: the row
/// length at the timed size. The values of `s` are those for which the
/// tiling's constraints hold at every size (strips of whole outputs: a
/// def without padding has fewer output rows than input rows).
fn strips(mut b: Build<'_>, all: &[&Sizes], xs: &[Option<i64>; 1], ov: i64) -> Option<Shape> {
    b.run(&columns_outside())?;
    let tile = strategy::sites(b.def, &b.t, "overlapped-tiling", &Site::UnderMaps(1)).into_iter().next()?;
    let rule = rewrite::find_rule("overlapped-tiling")?;
    let holds = |v: i64| {
        let a: Args =
            [("u", v + ov), ("v", v)].map(|(k, v)| (k.to_string(), arith::ArithExpr::Cst(v))).into();
        rewrite::apply(&b.t.prog, b.def, rule, &tile, &a)
            .is_ok_and(|r| all.iter().all(|s| super::space::constraints_hold(&r.constraints, s)))
    };
    let domain: Vec<i64> = SS.iter().copied().filter(|&v| holds(v)).collect();
    // ty divides the number of strips for every s: the outputs per column
    // over the largest.
    let rows = output_rows(&b.t.prog, b.def, all.first()?);
    let count = [rows.zip(domain.iter().max()).map(|(r, m)| r / m)];
    let s = b.slot("s", domain, 16)?;
    b.local_slots(xs, &count)?;
    b.step("overlapped-tiling", &tile, vec![("u", Arg::SlotPlus(s, ov)), ("v", Arg::Slot(s))])?;
    b.walk([0, 1])
}

/// The number of rows of the def's result at `sizes` (its outer length).
fn output_rows(prog: &Program, def: &str, sizes: &Sizes) -> Option<i64> {
    match crate::passes::typecheck::def_result(prog, def)? {
        crate::types::Type::Array(_, n) => n.eval_with(&|v| sizes.get(v).copied()).ok(),
        _ => None,
    }
}

/// Tile steps tried along y and x (outputs per tile side; non-powers of
/// two for widths such as srad's 504 = 9 * 56).
const VY: [i64; 4] = [2, 4, 8, 16];
const VX: [i64; 5] = [8, 16, 32, 56, 64];
/// Work-items of a tile's work-group at most (the H100's and most GPUs'
/// maximum).
const MAX_WG: i64 = 1024;
/// Local memory a tile may take: below the 48 KiB of current GPUs with
/// room for the compiler's own.
const LOCAL_BYTES: i64 = 32 * 1024;

/// Overlapped tiling: 2D at the root; 3D on the two inner dimensions,
/// after `stencil-3d-planes` (or directly where the def is written with z
/// outermost, as `heatHighZ` of heat.lift). `overlapped-tiling-2d-rect`
/// with the tile steps `vy`, `vx` as slots (`u = v + size - step`), also
/// over zipped grids; a work-group per tile, each slid grid's tile copied
/// element by element into local memory (`map-id-nd`, `to-local`), a
/// work-item per output. Slot values are those whose rule constraints
/// hold at every size in `all`.
fn tiled(base: &Program, def: &str, all: &[&Sizes], ov: i64, dims: usize) -> Option<Shape> {
    let mut b = Build::new(base, def);
    let at = if dims == 2 { Path::root() } else { Path::root().child(0).child(0).child(0) };
    if dims == 3 && b.sites("stencil-3d-planes").contains(&Path::root()) {
        b.step("stencil-3d-planes", &Path::root(), Vec::new())?;
    }
    if !b.sites(RECT).contains(&at) {
        return None;
    }
    let rule = rewrite::find_rule(RECT)?;
    // The values of each slot for which the tiling's constraints hold at
    // every size (they are per dimension, so any pair of them holds).
    let holds = |vy: i64, vx: i64| {
        let a: Args = [("uy", vy + ov), ("vy", vy), ("ux", vx + ov), ("vx", vx)]
            .map(|(k, v)| (k.to_string(), arith::ArithExpr::Cst(v)))
            .into();
        rewrite::apply(&b.t.prog, def, rule, &at, &a)
            .is_ok_and(|r| all.iter().all(|s| super::space::constraints_hold(&r.constraints, s)))
    };
    let vys: Vec<i64> = VY.iter().copied().filter(|&vy| VX.iter().any(|&vx| holds(vy, vx))).collect();
    let vxs: Vec<i64> = VX.iter().copied().filter(|&vx| VY.iter().any(|&vy| holds(vy, vx))).collect();
    let vy = b.slot("vy", vys, 4)?;
    let vx = b.slot("vx", vxs, 32)?;
    let args = vec![
        ("uy", Arg::SlotPlus(vy, ov)),
        ("vy", Arg::Slot(vy)),
        ("ux", Arg::SlotPlus(vx, ov)),
        ("vx", Arg::Slot(vx)),
    ];
    b.step(RECT, &at, args)?;
    if dims == 3 {
        b.run(&exec(Exec::Wrg(2)))?;
    }
    b.run(&exec(Exec::Wrg(1)))?;
    b.run(&exec(Exec::Wrg(0)))?;
    let tile = b.last()?;
    // Each slid grid's tile, copied element by element into local memory.
    let id = b.tile_param(&tile)?;
    let grids: Vec<Option<usize>> = b.copy_sites(id).into_iter().map(|(w, _)| w).collect();
    let copies = grids.len();
    if copies == 0 {
        return None;
    }
    for which in grids {
        let copy = b.copy_sites(id).into_iter().find(|(w, _)| *w == which)?.1;
        b.step("map-id-nd", &copy, Vec::new())?;
        b.step("map-lcl", &copy, vec![("d", Arg::Fixed(1))])?;
        let inner = copy.child(0).child(0).child(0);
        b.step("map-lcl", &inner, vec![("d", Arg::Fixed(0))])?;
        if dims == 3 {
            // The column of values along z each tile element holds.
            b.step("map-seq", &inner.child(0).child(0).child(0), Vec::new())?;
        }
        b.step("to-local", &copy, Vec::new())?;
    }
    // Several copies bound with `let` before the work-items' map: written
    // one after the other behind one barrier (srad2's two grids).
    if copies > 1 {
        b.run(&apply("let-local-copies", Site::NextMap))?;
    }
    // The largest tile must fit in local memory (in 3D each element is a
    // column of `ov + 1` values, the window along z) and its work-group (a
    // work-item per input of the tile) in MAX_WG: the widest tiles go
    // first, then the tallest.
    let column = if dims == 3 { ov + 1 } else { 1 };
    let fits = |vy: i64, vx: i64| {
        let inputs = (vy + ov) * (vx + ov);
        inputs <= MAX_WG && inputs * column * 4 * copies as i64 <= LOCAL_BYTES
    };
    loop {
        let (dy, dx) = (&b.t.shape.slots[vy].domain, &b.t.shape.slots[vx].domain);
        let (my, mx) = (*dy.iter().max()?, *dx.iter().max()?);
        if fits(my, mx) {
            break;
        }
        let (slot, v) = if dx.len() > 1 { (vx, mx) } else { (vy, my) };
        b.t.shape.slots[slot].domain.retain(|&x| x != v);
    }
    for slot in [vy, vx] {
        let d = &mut b.t.shape.slots[slot];
        if !d.domain.contains(&d.default) {
            d.default = *d.domain.last()?;
        }
    }
    b.lower(&[Exec::Lcl(1), Exec::Lcl(0)])
}

const RECT: &str = "overlapped-tiling-2d-rect";

/// The local size a stencil shape's slots give (`tx` 0: the driver's).
pub fn local_of(shape: &Shape, values: &[i64]) -> Option<[i64; 3]> {
    let get = |n: &str| shape.slots.iter().position(|s| s.name == n).map(|i| values[i]);
    match (get("tx"), get("ty")) {
        (Some(tx), Some(ty)) if tx > 0 => Some([tx, ty, 1]),
        _ => None,
    }
}

/// Whether the shape has its own local-size slots.
pub fn has_local_slots(shape: &Shape) -> bool {
    shape.slots.iter().any(|s| s.name == "tx")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::{compile, CompileOptions};

    /// Local extents: powers of two on power-of-two lengths, the largest
    /// divisor of each band on others (the band's power of two, rounded up
    /// to whole work-groups, where none divides: srad's 504 columns get
    /// 256), none where a length is unknown.
    #[test]
    fn local_extents_divide_the_lengths_one_per_band() {
        assert_eq!(banded_divisors(&TX_BANDS, &[Some(4096)]), vec![8, 16, 32, 64, 128, 256]);
        assert_eq!(banded_divisors(&TX_BANDS, &[Some(504)]), vec![8, 24, 56, 72, 168, 256]);
        assert_eq!(banded_divisors(&TX_BANDS, &[Some(504), Some(112)]), vec![8, 28, 56]);
        // No divisor in any band: the powers of two, rounded up to whole
        // work-groups; not where rounding would idle more than an eighth.
        assert_eq!(banded_divisors(&TY_BANDS, &[Some(229)]), vec![2, 4, 8, 16]);
        assert_eq!(banded_divisors(&TX_BANDS, &[Some(2999)]), vec![8, 16, 32, 64, 128, 256]);
        assert_eq!(banded_divisors(&TX_BANDS, &[Some(257)]), vec![8, 16, 32]);
        assert_eq!(rounded(256, &[Some(257)]), None);
        assert_eq!(banded_divisors(&TY_BANDS, &[None]), Vec::<i64>::new());
    }

    /// A 1D stencil gets its two blocked shapes; the strided one reads and
    /// writes coalesced, the contiguous one does not (its work-items are k
    /// elements apart). So does a 1D stencil applied to every row.
    #[test]
    fn a_1d_stencil_is_blocked_contiguously_and_strided() {
        let base = super::super::space::prepared("benchmarks/generality/blur1d.lift", "blur1d");
        let sizes = Sizes::from([("N".to_string(), 1 << 20)]);
        let shapes = one_dim_shapes(&base, "blur1d", &sizes, &[]);
        assert_eq!(shapes.len(), 2);
        let share = |s: &Shape| {
            let inst = s.instantiate(&base, "blur1d", &s.defaults()).unwrap();
            let k = compile(&inst.program, "blur1d", &CompileOptions::default()).unwrap();
            (
                inst.derivation.join(" ; "),
                crate::codegen::coalescing::coalesced_share(&k.accesses, &sizes).unwrap(),
            )
        };
        let (contiguous, c) = share(&shapes[0]);
        let (strided, s) = share(&shapes[1]);
        assert!(contiguous.starts_with("overlapped-tiling @ root u=6 v=4"), "{contiguous}");
        assert!(strided.starts_with("map-stride @ root s=N/4 ; split-join @ 1 n=4"), "{strided}");
        assert!(c < 0.5 && s == 1.0, "contiguous {c}, strided {s}");
        // A 1D stencil in every row of an image: the same two shapes on
        // the rows' map, rows over dimension 1, the strided one coalesced.
        let hb = super::super::space::prepared("benchmarks/holdout/hblur3.lift", "hblur3");
        let sizes2 = Sizes::from([("H".to_string(), 96), ("W".to_string(), 1 << 12)]);
        let rows = one_dim_shapes(&hb, "hblur3", &sizes2, &[]);
        assert_eq!(rows.len(), 2);
        let inst = rows[1].instantiate(&hb, "hblur3", &rows[1].defaults()).unwrap();
        let der = inst.derivation.join(" ; ");
        assert!(
            der.starts_with("map-stride @ 0.0.0 s=W/4 ; split-join @ 0.0.0.1 n=4 ; map-glb @ root d=1"),
            "{der}"
        );
        let k = compile(&inst.program, "hblur3", &CompileOptions::default()).unwrap();
        assert_eq!(crate::codegen::coalescing::coalesced_share(&k.accesses, &sizes2).unwrap(), 1.0);
        // A 2D stencil is not 1D.
        let lap = super::super::space::prepared("benchmarks/generality/lap2d.lift", "lap2d");
        let sizes = Sizes::from([("H".to_string(), 64), ("W".to_string(), 64)]);
        assert!(one_dim_shapes(&lap, "lap2d", &sizes, &[]).is_empty());
    }

    /// A 2D stencil gets the strips shape: columns over dimension 0 (reads
    /// and writes coalesced), strips over 1, each strip a `slideSeqPlus`
    /// walk whose window is a private array; `s` divides the height at
    /// every size.
    #[test]
    fn a_2d_stencil_gets_strips_walked_down_its_columns() {
        let base = super::super::space::prepared("benchmarks/generality/box2d.lift", "box2d");
        let sizes = Sizes::from([("H".to_string(), 96), ("W".to_string(), 64)]);
        let valid = Sizes::from([("H".to_string(), 40), ("W".to_string(), 24)]);
        let all = shapes(&base, "box2d", &sizes, std::slice::from_ref(&valid)).unwrap();
        let strip = all.iter().find(|s| s.slots.iter().any(|slot| slot.name == "s")).expect("a strips shape");
        let s = strip.slots.iter().find(|slot| slot.name == "s").unwrap();
        assert_eq!(s.domain, [4, 8]);
        let inst = strip.instantiate(&base, "box2d", &strip.defaults()).unwrap();
        let der = inst.derivation.join(" ; ");
        assert!(der.contains("slide-seq-plus"), "{der}");
        let k = compile(&inst.program, "box2d", &CompileOptions::default()).unwrap();
        assert!(k.source.contains("float priv_0[9];"), "{}", k.source);
        assert_eq!(crate::codegen::coalescing::coalesced_share(&k.accesses, &sizes).unwrap(), 1.0);
        // 3D stencils walk whole columns (`slideseq`) instead.
        let heat = super::super::space::prepared("benchmarks/generality/heat3d.lift", "heat3d");
        let s3 = Sizes::from([("X".to_string(), 32), ("Y".to_string(), 32), ("Z".to_string(), 32)]);
        let all = shapes(&heat, "heat3d", &s3, &[]).unwrap();
        assert!(all.iter().all(|s| s.slots.iter().all(|slot| slot.name != "s")));
    }
}
