//! Macro shapes for a reduction nested in a map over rows (matrix-vector
//! products: `join o map(\row -> map(post) o reduce(f, z) o map(g) $ ...)`).
//! Stages 1 and 2 only reach one work-item per row, walking its row
//! sequentially (uncoalesced on a GPU); these shapes give every row a
//! work-group, as `reduction`'s work-group trees do for a whole array,
//! built from the same small rules with their numbers as tuner slots.
//!
//! * `row-wg-tree(l)`: the outer map becomes
//!   `mapWrg(0)`; lane `t` of `l` work-items reduces elements `t, t + l,
//!   ...` of the row (`reduce-lanes`: coalesced, and `N / l` stays
//!   symbolic, so any `N` that `l` divides works) into local memory; then a
//!   halving tree of `log2 l` steps (`partred-iterate`, k = 2); one
//!   work-item applies the row's post-map and writes to global memory (to
//!   local memory where the row function reads the result on).
//!   The rows count `M` is unconstrained.
//! * `row-wg-tree-vec(l)`: the same over float4s
//!   (`vectorize-reduce` n = 4, `asvector-map`: each lane loads four
//!   elements at a time), the row's four vector sums added by a final
//!   `reduceSeq`. Needs `N % (4 * l) == 0`.
//! * `row-wg-tree-odd(l)`, for rows whose length has few factors two
//!   (3000 = 8 x 375: no power of two from 16 up divides it): `l` lanes
//!   with an odd part `o` from 3 to 63 (`l = 8 x 15 = 120`); the reduction
//!   of the lanes' partials becomes a reduction of `o` partial results
//!   (`reduce-partred` m = o), a halving tree of `log2(l / o)` steps leaves
//!   those `o` in local memory, and one work-item adds them (`reduceSeq`).
//!   Offered only where such `l` divide the row.
//!
//! * The same with several rows per work-group, for rows shorter than
//!   1024 before padding (attention scores of 197): the rows are split
//!   into groups of `g` (2 to 16, dividing the rows; `split-join`) first,
//!   the groups' map becomes `mapWrg(0)` and a group's rows `mapLcl(1)`,
//!   each row with 4 to 64 lanes; local size `(l, g)`. With one row per
//!   work-group of 32 lanes, a core holds too few work-items to hide
//!   memory latency. The launch inference gives dimension 1 one
//!   work-group of `g` (no `mapWrg(1)` names it), so the `mapLcl(1)` runs
//!   once per work-item and the tree keeps its barriers.
//!
//! Not offered: one work-item adding the `l` partials sequentially
//! (`partred-iterate` n = 1, k = l). Its
//! steps replay and validate, but the launch inference takes the most
//! common `mapLcl` length (1) as the local size, and a local size given to
//! the compiler keeps the inferred global size (M work-items: M / l
//! work-groups looping over the rows).
//!
//! The shapes apply where every high-level `reduce` of the def sits under
//! exactly one high-level `map` (the rows, the same map for all), or
//! under a batch's map too (`mapWrg(1)`: a batch of matrix-vector
//! products, each element with its own rows); they give lanes to all the
//! row's reductions, and to the first alone. A reduction whose parent is a
//! `map` has its post-map; `map-id` supplies one otherwise, and one in
//! front where the reduction's argument is no `map` (`map(\r -> reduce(max,
//! z) $ r)`).
//!
//! Each shape is a strategy (`strategy`, [`row_strategy`]): the analysis
//! above picks the recipe, and the strategy finds its positions: each
//! reduction in turn (the next high-level one), the rows map and a batch's
//! around it (`Site::Enclosing`), the post-map one move up
//! (`Site::Parent`), the recipe's own steps as moves below the reduction.
//! A shape is offered only where the strategy replays with default slot
//! values.

use super::space::{divisors, pow2, rel_path, rule_step, slot, Arg, Shape, Slot, Step};
use super::strategy::{apply, apply_with, relative, shape_of, Site as StrategySite, Strategy};
use crate::ir::visit::{self, Node, Path};
use crate::ir::{ExprKind, FunDecl, FunKind, MapKind, Pattern, Program, ReduceKind};
use crate::types::Sizes;

/// Where the shapes start: the rows map `o`, the reduction `r` (somewhere
/// in `o`'s function), and whether `r`'s parent is a map over its result.
struct Site {
    o: Path,
    /// The map over a batch whose every element has its own rows (`map(\(m,
    /// v) -> map(\r -> reduce ...) $ m) $ zip(a, x)`), if the rows map sits
    /// in one: it becomes `mapWrg(1)`, a work-group per row and batch element.
    batch: Option<Path>,
    r: Path,
    post: bool,
    /// Whether `r` reduces a map (`reduce(f, z) o map(g)`); a plain
    /// `reduce(f, z) $ row` gets `map(id)` first (`map-id`).
    mapped: bool,
}

fn is_map_call(e: &crate::ir::Expr) -> bool {
    matches!(&e.kind, ExprKind::Call(f, _)
        if matches!(&f.kind, FunKind::Pattern(Pattern::Map { kind: MapKind::Map, .. })))
}

/// Every high-level `reduce` under exactly one high-level `map` (the
/// rows), in the order the positions list them, if they share that map
/// (softmax's row maximum and row sum); empty where a reduction sits under
/// no map or under several.
fn find_sites(base: &Program, def: &str) -> Vec<Site> {
    let Some(d) = base.def(def) else { return Vec::new() };
    let body = &d.body;
    let mut sites: Vec<Site> = Vec::new();
    for (path, e) in visit::expr_positions(body) {
        let ExprKind::Call(f, args) = &e.kind else { continue };
        if !matches!(&f.kind, FunKind::Pattern(Pattern::Reduce { kind: ReduceKind::Reduce, .. })) {
            continue;
        }
        let Some(site) = site_at(body, path, args.last().is_some_and(is_map_call)) else {
            return Vec::new();
        };
        if sites.first().is_some_and(|s| s.o != site.o || s.batch != site.batch) {
            return Vec::new();
        }
        sites.push(site);
    }
    sites
}

/// The site of the reduction at `path`, if exactly one map holds it (the
/// rows), or two whose outer one is a batch (its element's rows are the
/// inner map's array).
fn site_at(body: &crate::ir::Expr, path: Path, mapped: bool) -> Option<Site> {
    let (_, above) = visit::node_at(body, &path).ok()?;
    let maps = above
        .iter()
        .filter(|n| matches!(n, Node::Fun(FunDecl { kind: FunKind::Pattern(Pattern::Map { .. }), .. })))
        .count();
    if maps == 0 || maps > 2 {
        return None;
    }
    // The map calls whose function holds `r`, innermost first: the rows
    // map, then the batch's.
    let mut calls = (0..path.0.len())
        .rev()
        .filter(|&k| path.0[k] == 0)
        .map(|k| Path(path.0[..k].to_vec()))
        .filter(|p| visit::expr_at(body, p).is_ok_and(is_map_call));
    let o = calls.next()?;
    let batch = match maps {
        1 => None,
        _ => Some(calls.next().filter(|b| batch_of(body, b, &o))?),
    };
    let parent = Path(path.0[..path.0.len() - 1].to_vec());
    let post = path.0.len() > o.0.len() + 1
        && path.0.last() == Some(&1)
        && visit::expr_at(body, &parent).is_ok_and(is_map_call);
    Some(Site { o, batch, r: path, post, mapped })
}

/// Whether the map at `b` is a batch for the rows map at `o`: the rows
/// map's array reads `b`'s element (each element has its own rows; a
/// product's columns map reads a fixed array and is not one).
fn batch_of(body: &crate::ir::Expr, b: &Path, o: &Path) -> bool {
    let (Ok(be), Ok(oe)) = (visit::expr_at(body, b), visit::expr_at(body, o)) else { return false };
    let (ExprKind::Call(bf, _), ExprKind::Call(_, rows)) = (&be.kind, &oe.kind) else { return false };
    let FunKind::Pattern(Pattern::Map { f, .. }) = &bf.kind else { return false };
    let (FunKind::Lambda(l), Some(rows)) = (&f.kind, rows.first()) else { return false };
    l.params.iter().any(|p| visit::count_uses(rows, p.id) > 0)
}

/// How a row's lanes combine their partial results in local memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tree {
    /// A halving tree of `log2 l` steps (`l` a power of two).
    Halving,
    /// A halving tree over `l`'s factors two, then one work-item adds the
    /// values it leaves (`l = 8 x 15`: three halvings leave 15): lanes for
    /// rows whose length has few factors two (3000 = 8 x 375).
    HalvingThenSeq,
}

/// One reduction's strategy, `lanes` the slot of `l`: focused on the next
/// high-level reduction (`Site::NextReduce`; the row's reductions before
/// it are lowered by then), its steps relative to it. The rows map, and a
/// batch's around it, are found from there (`Site::Enclosing`, lowered
/// where `first`), and so is the reduction's post-map (`Site::Parent`).
/// What the recipe holds (a `map-id`, the tree, the memory the result
/// goes to) is decided by the analysis of `site`.
fn row_strategy(
    site: &Site,
    lanes: usize,
    tree: Tree,
    vec4: bool,
    pad: Option<&crate::arith::ArithExpr>,
    lower: Option<Lower>,
) -> Option<Strategy> {
    let here = Path::root();
    let mut head = Vec::new();
    if !site.mapped {
        head.push(rule_step("map-id", rel_path(&here, "2"), vec![])?);
    }
    // row-wg-vec: the lanes reduce float4s (`vectorize-reduce`, loads of
    // four elements); the four sums of the row's vector are added last.
    let r = &if vec4 {
        head.push(rule_step("vectorize-reduce", here.clone(), vec![("n", Arg::Fixed(4))])?);
        head.push(rule_step("asvector-map", rel_path(&here, "2.1.2"), vec![])?);
        rel_path(&here, "2.1")
    } else {
        here.clone()
    };
    head.extend([
        rule_step("reduce-lanes", r.clone(), vec![("m", Arg::Slot(lanes))])?,
        rule_step("split-join", rel_path(r, "2.1.1.1.1"), vec![("n", Arg::Slot(lanes))])?,
        rule_step("split-join-id", rel_path(r, "2.1.1.1"), vec![])?,
        rule_step("transpose-map", rel_path(r, "2.1.1"), vec![])?,
        rule_step("map-fusion", rel_path(r, "2.1"), vec![])?,
    ]);
    let odd_tail = tree == Tree::HalvingThenSeq;
    // Where the tree sits: at `r`, or, after the odd part is split off as
    // the partial results of `r`'s reduction, at its array.
    let (reduce_at, r) = (r.clone(), &if odd_tail { rel_path(r, "2") } else { r.clone() });
    head.extend(match tree {
        Tree::Halving => vec![
            rule_step("reduce-to-partred", r.clone(), vec![])?,
            rule_step("partred-iterate", r.clone(), vec![("n", Arg::Log2(lanes)), ("k", Arg::Fixed(2))])?,
        ],
        Tree::HalvingThenSeq => vec![
            rule_step("reduce-partred", reduce_at.clone(), vec![("m", Arg::OddPart(lanes))])?,
            rule_step("partred-iterate", r.clone(), vec![("n", Arg::TwoExp(lanes)), ("k", Arg::Fixed(2))])?,
        ],
    });
    // Padded with elements that change nothing: where no constant works
    // for every value the map reads (a softmax's `exp(x - m)`), with a
    // mask (`reduce-pad-mask`).
    let padding =
        pad.map(|p| super::reduction::padding(StrategySite::Focus, vec![("p", Arg::Expr(p.clone()))]));
    let mut seq: Vec<Strategy> = padding.into_iter().collect();
    seq.push(relative(&head));
    if let Some(lower) = lower {
        seq.push(lower_rows(lower));
    }
    seq.push(relative(&lane_steps(r, odd_tail.then_some(&reduce_at), vec4)?));
    // The row's post-map by one work-item, to global memory. The row's
    // result goes to global memory; a value the row function reads on (a
    // softmax's maximum, bound by `let`) to local memory, where the
    // work-group reads it back without a global fence.
    let q = if site.post { Path(site.r.0[..site.r.0.len() - 1].to_vec()) } else { site.r.clone() };
    let mem = if q == rel_path(&site.o, "0.0.0") { "to-global" } else { "to-local" };
    let d0 = || vec![("d", Arg::Fixed(0))];
    let out = relative(&[
        rule_step("split-join", here.clone(), vec![("n", Arg::Fixed(1))])?,
        rule_step("map-lcl", rel_path(&here, "1"), d0())?,
        rule_step("map-seq", rel_path(&here, "1.0.0.0"), vec![])?,
        rule_step(mem, rel_path(&here, "1"), vec![])?,
    ]);
    if site.post {
        seq.push(Strategy::Within { site: StrategySite::Parent, rule: "", then: Box::new(out) });
    } else {
        seq.extend([apply("map-id", StrategySite::Focus), out]);
    }
    Some(Strategy::Within { site: StrategySite::NextReduce, rule: "", then: Box::new(Strategy::Seq(seq)) })
}

/// How the maps around a row's reductions are lowered (with its first
/// reduction).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lower {
    /// A work-group per row: the rows map becomes `mapWrg(0)`.
    Row,
    /// A work-group per row of a batch element: the rows map becomes
    /// `mapWrg(0)`, the batch's map around it `mapWrg(1)`.
    Batch,
    /// Several rows per work-group (rows split into groups first,
    /// [`group_rows`]): the map over a group's rows becomes `mapLcl(1)`,
    /// the map over the groups `mapWrg(0)`; local size `(l, g)`.
    Grouped,
    /// [`Lower::Grouped`] under a batch's map, which becomes `mapWrg(1)`:
    /// dimension 1 then counts batch elements by work-group and a group's
    /// rows within it (a 3D tensor summed along its last axis: 65,536 rows
    /// of 256 as 256 batches of 256 rows).
    GroupedBatch,
}

/// The maps around the focused reduction, lowered as `lower` says.
fn lower_rows(lower: Lower) -> Strategy {
    let on = |kind: &'static str, d: i64| apply_with(kind, StrategySite::Focus, vec![("d", Arg::Fixed(d))]);
    let around =
        |then: Strategy| Strategy::Within { site: StrategySite::Enclosing, rule: "", then: Box::new(then) };
    around(Strategy::Seq(match lower {
        Lower::Row => vec![on("map-wrg", 0)],
        Lower::Batch => vec![on("map-wrg", 0), around(on("map-wrg", 1))],
        // The groups' map first: a `mapLcl` outside any `mapWrg` is refused.
        Lower::Grouped => vec![around(on("map-wrg", 0)), on("map-lcl", 1)],
        Lower::GroupedBatch => {
            vec![around(Strategy::Seq(vec![on("map-wrg", 0), around(on("map-wrg", 1))])), on("map-lcl", 1)]
        }
    }))
}

/// The rows map around the first reduction split into groups of the
/// slot `group`'s rows (`split-join`): a map over groups of a map over
/// rows, before anything else is lowered.
fn group_rows(group: usize) -> Strategy {
    let split = apply_with("split-join", StrategySite::Focus, vec![("n", Arg::Slot(group))]);
    let rows = Strategy::Within { site: StrategySite::Enclosing, rule: "", then: Box::new(split) };
    Strategy::Within { site: StrategySite::NextReduce, rule: "", then: Box::new(rows) }
}

/// The lowering below the reduction whose tree sits at `r`: each lane's
/// sequential reduction, the tree (or the one sequential sum), then the
/// odd part's partials (reduced at `odd`) and a vector's four sums (at the
/// focus) added by one work-item.
fn lane_steps(r: &Path, odd: Option<&Path>, vec4: bool) -> Option<Vec<Step>> {
    let d0 = || vec![("d", Arg::Fixed(0))];
    // Each lane's sequential, fused reduction into local memory ...
    let lane = rel_path(r, "1.1.0.0.0");
    let mut v = vec![
        rule_step("partred-reduce", lane.clone(), vec![])?,
        rule_step("map-seq", rel_path(&lane, "2"), vec![])?,
        rule_step("reduce-seq", lane.clone(), vec![])?,
        rule_step("reduce-map-fusion", lane.clone(), vec![])?,
        rule_step("map-id", lane.clone(), vec![])?,
        rule_step("map-seq", lane.clone(), vec![])?,
        rule_step("to-local", lane.clone(), vec![])?,
        rule_step("map-lcl", rel_path(r, "1.1"), d0())?,
    ];
    // ... the tree (or the one sequential sum) in local memory ...
    let node = rel_path(r, "0.0.0.1.0.0.0");
    v.extend([
        rule_step("partred-reduce", node.clone(), vec![])?,
        rule_step("reduce-seq", node.clone(), vec![])?,
        rule_step("map-id", node.clone(), vec![])?,
        rule_step("map-seq", node.clone(), vec![])?,
        rule_step("to-local", node.clone(), vec![])?,
        rule_step("map-lcl", rel_path(r, "0.0.0.1"), d0())?,
    ]);
    if let Some(at) = odd {
        v.push(rule_step("reduce-seq", at.clone(), vec![])?);
    }
    if vec4 {
        v.push(rule_step("reduce-seq", Path::root(), vec![])?);
    }
    Some(v)
}

/// The lane counts of `Tree::HalvingThenSeq` for rows of `n`: divisors of
/// `n` from 16 to 1024 (`space::divisors`) with at least one factor two (a
/// halving step) and an odd part from 3 to 63 (the values one work-item
/// adds). Used where no power-of-two lane count divides the row.
fn odd_lanes(n: Option<i64>) -> Vec<i64> {
    let Some(n) = n else { return Vec::new() };
    let odd = |l: i64| l >> l.trailing_zeros();
    divisors(16, 1024, Some(n)).into_iter().filter(|&l| l % 2 == 0 && (3..=63).contains(&odd(l))).collect()
}

/// The local size of a row shape: its `l` lanes (what the launch
/// inference gives the tree too: ties of `mapLcl` lengths go to the
/// largest), by its `g` rows where it has several per work-group.
pub fn local_of(shape: &Shape, values: &[i64]) -> Option<[i64; 3]> {
    let at = |name: &str| shape.slots.iter().position(|s| s.name == name).map(|i| values[i]);
    Some([at("row-lanes")?, at("row-group").unwrap_or(1), 1])
}

/// The length of the array the call at `r` reduces or maps over (a row,
/// or the rows), and its value at `sizes`.
fn row_len(base: &Program, def: &str, r: &Path, sizes: &Sizes) -> Option<(crate::arith::ArithExpr, i64)> {
    let d = base.def(def)?;
    let types = crate::passes::typecheck::typecheck_def(base, d).ok()?;
    let ExprKind::Call(_, args) = &visit::expr_at(&d.body, r).ok()?.kind else { return None };
    match types.exprs.get(&args.last()?.id)? {
        crate::types::Type::Array(_, n) => {
            let n = crate::arith::simplify(n);
            let v = n.eval_with(&|v| sizes.get(v).copied()).ok()?;
            Some((n, v))
        }
        _ => None,
    }
}

/// The row shapes for `def`: on the rows as they are, and, where no power
/// of two from 16 divides a row of 64 or more (a prime 1021), also on the
/// rows padded with elements that change nothing (`reduce-pad`, to a
/// multiple of a power of two: 1021 becomes 1024).
pub fn row_shapes(base: &Program, def: &str, sizes: &Sizes) -> Vec<Shape> {
    let sites = find_sites(base, def);
    let Some(first) = sites.first() else { return Vec::new() };
    let len = row_len(base, def, &first.r, sizes);
    let rows = row_len(base, def, &first.o, sizes).map(|l| l.1);
    // Short by the row's own length, before any padding (1000 padded to 1024).
    let short = len.as_ref().is_some_and(|l| l.1 < SHORT_ROW);
    let mut out = shapes_of(base, def, &sites, Lens { n: len.as_ref().map(|l| l.1), rows, short }, None);
    if let Some((len, n)) = len.filter(|(_, n)| *n >= 64 && pow2(16, 1024, Some(*n)).is_empty()) {
        // A multiple of the largest power of two up to a quarter of the
        // row, at most 1024 (the lanes of a work-group): 3000 becomes 3072,
        // 50257 51200 (a row of a vocabulary: up to 1024 lanes).
        let (len_p, p) = super::reduction::padded_to(&len, 1i64 << (n / 4).clamp(16, 1024).ilog2());
        let n_p = len_p.eval_with(&|v| sizes.get(v).copied()).ok();
        out.extend(shapes_of(base, def, &sites, Lens { n: n_p, rows, short }, Some(p)));
    }
    out
}

/// The lengths a row shape's slots are chosen for, at the search's sizes:
/// a row's (after padding) and the number of rows.
#[derive(Clone, Copy, Debug)]
struct Lens {
    n: Option<i64>,
    rows: Option<i64>,
    /// Whether the row, before padding, is shorter than [`SHORT_ROW`].
    short: bool,
}

/// Rows shorter than this (attention scores of 197, hidden sizes of 768)
/// also get several rows per work-group: one row's lanes alone make
/// work-groups too small to fill a GPU's cores (a core holds a bounded
/// number of work-groups).
const SHORT_ROW: i64 = 1024;

/// The row-reduction shapes for `def` at `sites` (none unless it reduces
/// inside a map over rows), at `lens`, each reduction padded first by
/// `pad` elements where given; each replays with its default slot values.
fn shapes_of(
    base: &Program,
    def: &str,
    sites: &[Site],
    lens: Lens,
    pad: Option<crate::arith::ArithExpr>,
) -> Vec<Shape> {
    let mut out = Vec::new();
    let mut push = |strategy: Strategy, slots: Vec<Option<Slot>>| {
        let Some(slots) = slots.into_iter().collect::<Option<Vec<Slot>>>() else { return };
        out.extend(shape_of(base, def, &strategy, &slots));
    };
    // The reductions that get lanes: all of them, with the same lanes
    // (softmax's maximum, then its sum of exponentials: a reduction left
    // to `reduceSeq` is walked whole by every work-item of the row's
    // work-group), then, where there are several, the first alone.
    let mut groups = vec![sites];
    if sites.len() > 1 {
        groups.push(&sites[..1]);
    }
    let n = lens.n;
    let grouped = if sites[0].batch.is_some() { Lower::GroupedBatch } else { Lower::Grouped };
    // A sequential sum of all `l` partials is not offered (module comment).
    for group in groups {
        for (tree, vec4) in [(Tree::Halving, false), (Tree::Halving, true), (Tree::HalvingThenSeq, false)] {
            // A vector load across a pad's edge is not compiled.
            if vec4 && pad.is_some() {
                continue;
            }
            // row-wg-tree and its -vec form: slot 0 is l, from `lo` to `hi`.
            let lanes_in = |lo: i64, hi: i64| match (tree, vec4, n) {
                // Only where no power-of-two lanes divide the row.
                (Tree::HalvingThenSeq, _, n) if pow2(16, 1024, n).is_empty() => {
                    odd_lanes(n).into_iter().filter(|&l| l <= hi).collect()
                }
                (Tree::HalvingThenSeq, _, _) => Vec::new(),
                (_, true, Some(n)) if n % 4 != 0 => Vec::new(),
                (_, true, n) => pow2(lo, hi, n.map(|n| n / 4)),
                (_, false, n) => pow2(lo, hi, n),
            };
            let lanes = lanes_in(16, 1024);
            // Each reduction in turn; the rows map is lowered with the
            // first.
            let first = if sites[0].batch.is_some() { Lower::Batch } else { Lower::Row };
            let Some(steps) = reductions(group, tree, vec4, pad.as_ref(), first) else { continue };
            // The same with the row staged in local memory first, where the
            // row function reads it several times (`row-to-local`, at the
            // rows' `mapWrg`, the first place it matches).
            let staged = |mut steps: Vec<Strategy>| {
                steps.push(apply("row-to-local", StrategySite::First));
                Strategy::Seq(steps)
            };
            push(Strategy::Seq(steps.clone()), vec![slot("row-lanes", lanes.clone(), 128)]);
            push(staged(steps), vec![slot("row-lanes", lanes, 128)]);
            if !lens.short {
                continue;
            }
            // Several rows per work-group: 4 to 64 lanes each (a row of 48
            // is 12 float4s), 2 to 16 rows (at most 1024 work-items).
            let Some(mut steps) = reductions(group, tree, vec4, pad.as_ref(), grouped) else {
                continue;
            };
            steps.insert(0, group_rows(1));
            let few = lanes_in(4, 64);
            let slots =
                || vec![slot("row-lanes", few.clone(), 32), slot("row-group", pow2(2, 16, lens.rows), 4)];
            push(Strategy::Seq(steps.clone()), slots());
            push(staged(steps), slots());
        }
    }
    out
}

/// Each reduction of `group` in turn with `row_strategy`, lanes in slot 0,
/// the maps around them lowered with the first as `first` says.
fn reductions(
    group: &[Site],
    tree: Tree,
    vec4: bool,
    pad: Option<&crate::arith::ArithExpr>,
    first: Lower,
) -> Option<Vec<Strategy>> {
    group
        .iter()
        .enumerate()
        .map(|(i, site)| row_strategy(site, 0, tree, vec4, pad, (i == 0).then_some(first)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::space::{prepared, prepared_text};
    use super::*;

    #[test]
    fn row_shapes_replay_on_both_gemv_defs() {
        let sizes: Sizes = [("M".into(), 37), ("N".into(), 1024)].into();
        for (file, def) in [("benchmarks/icfp15/gemv.lift", "gemv"), ("benchmarks/gemv.lift", "gemvHigh")] {
            let b = prepared(file, def);
            let shapes = row_shapes(&b, def, &sizes);
            assert_eq!(shapes.len(), 2, "{def}");
            for (k, s) in shapes.iter().enumerate() {
                // The -vec shape (1) splits N / 4 float4s.
                let top = if k < 1 { 1024 } else { 256 };
                assert_eq!(s.slots[0].domain, pow2(16, top, None));
                let lanes_at = if k < 1 { "1.0.0.0.1" } else { "1.0.0.0.1.2.1" };
                for &l in &s.slots[0].domain {
                    let inst = s.instantiate(&b, def, &[l]).unwrap_or_else(|e| panic!("{def} l={l}: {e}"));
                    let lanes = format!("reduce-lanes @ {lanes_at} m={l}");
                    assert!(inst.derivation.contains(&lanes), "{:?}", inst.derivation);
                    // N % l is the only constraint: any M.
                    assert!(inst.constraints.iter().all(|c| !c.text.contains('M')), "{:?}", inst.constraints);
                }
                assert_eq!(local_of(s, &[64]), Some([64, 1, 1]));
            }
        }
    }

    #[test]
    fn vec_shapes_need_n_a_multiple_of_4() {
        let lanes = |s: &Shape| s.slots[0].domain.clone();
        let sizes: Sizes = [("M".into(), 37), ("N".into(), 1026)].into();
        let b = prepared("benchmarks/icfp15/gemv.lift", "gemv");
        // No power of two from 16 divides 1026 = 2 x 27 x 19: the odd
        // tail's lanes (one halving, then 9, 27 or 57 partials), and the
        // rows padded to 1280 (a multiple of 256), scalar lanes only (no
        // vector load across the pad's edge).
        let shapes = row_shapes(&b, "gemv", &sizes);
        assert_eq!(
            shapes.iter().map(lanes).collect::<Vec<_>>(),
            [vec![18, 54, 114], vec![16, 32, 64, 128, 256]]
        );
        let padded = |s: &Shape| s.steps[0].rule.is_some_and(|r| r.name == "reduce-pad");
        assert_eq!(shapes.iter().map(padded).collect::<Vec<_>>(), [false, true]);
        let sizes: Sizes = [("M".into(), 37), ("N".into(), 1040)].into();
        // 1040 = 16 * 65: the scalar shapes (l = 16), not the vector ones
        // (260 float4s), and no odd tail where a power of two divides.
        let shapes = row_shapes(&b, "gemv", &sizes);
        assert_eq!(shapes.iter().map(lanes).collect::<Vec<_>>(), [vec![16]]);
    }

    /// The odd tail's lanes: even, with an odd part from 3 to 63; none on
    /// a power-of-two row. Its derivation cuts the odd part off first,
    /// then halves what remains.
    #[test]
    fn rows_of_few_factors_two_get_lanes_with_an_odd_tail() {
        assert_eq!(odd_lanes(Some(3000)), [24, 40, 50, 120, 200]);
        assert_eq!(odd_lanes(Some(4096)), Vec::<i64>::new());
        let src = "userfun add(x: float, y: float): float { return x + y; }\n\
                   def rowsum(a: [[float]N]M) = map(\\r -> reduce(add, 0.0f) $ r) $ a\n";
        let b = prepared_text("t.lift", src, "rowsum");
        let sizes: Sizes = [("M".into(), 37), ("N".into(), 3000)].into();
        let shapes = row_shapes(&b, "rowsum", &sizes);
        // The odd tail (the row is read once: no staged form), then the
        // padded rows' lanes.
        assert_eq!(shapes.len(), 2);
        let inst = shapes[0].instantiate(&b, "rowsum", &[120]).unwrap();
        let lines = inst.derivation.join(" ; ");
        assert!(lines.contains("reduce-partred @ ") && lines.contains(" m=15 ;"), "{lines}");
        assert!(lines.contains("partred-iterate @ ") && lines.contains(" k=2 n=3"), "{lines}");
        crate::compile::compile(&inst.program, "rowsum", &Default::default()).unwrap();
    }

    #[test]
    fn a_plain_reduction_per_row_gets_its_map_from_map_id() {
        let src = "userfun mx(x: float, y: float): float { return fmax(x, y); }\n\
                   def rowmax(a: [[float]N]M) = map(\\r -> reduce(mx, -3.0e38f) $ r) $ a\n";
        let b = prepared_text("t.lift", src, "rowmax");
        let sizes: Sizes = [("M".into(), 37), ("N".into(), 1024)].into();
        // The scalar lanes (the float4 form needs a vector `map(id)`).
        let shapes = row_shapes(&b, "rowmax", &sizes);
        assert!(!shapes.is_empty());
        for s in &shapes {
            let inst = s.instantiate(&b, "rowmax", &s.defaults()).unwrap();
            assert!(inst.derivation[0].starts_with("map-id @ "), "{:?}", inst.derivation);
            crate::compile::compile(&inst.program, "rowmax", &Default::default()).unwrap();
        }
    }

    #[test]
    fn a_batch_of_matrix_vector_products_gets_a_work_group_per_row_and_element() {
        let funs = "userfun add(x: float, y: float): float { return x + y; }\n\
                    userfun mul(x: float, y: float): float { return x * y; }\n";
        let src = format!(
            "{funs}def bgemv(a: [[[float]N]M]B, x: [[float]N]B) = map(\\(m, v) -> map(\\r -> reduce(add, 0.0f) o map(\\(p, q) -> mul(p, q)) $ zip(r, v)) $ m) $ zip(a, x)\n"
        );
        let b = prepared_text("t.lift", src, "bgemv");
        let sizes: Sizes = [("B".into(), 3), ("M".into(), 37), ("N".into(), 1024)].into();
        let shapes = row_shapes(&b, "bgemv", &sizes);
        assert_eq!(shapes.len(), 2);
        for s in &shapes {
            let inst = s.instantiate(&b, "bgemv", &s.defaults()).unwrap();
            assert!(inst.derivation.iter().any(|d| d == "map-wrg @ root d=1"), "{:?}", inst.derivation);
            let k = crate::compile::compile(&inst.program, "bgemv", &Default::default()).unwrap();
            // Rows along 0 (`l` lanes each), the batch along 1.
            assert_eq!(k.global[1].to_string(), "B", "{:?}", k.global);
        }
        // A product's map over columns reads a fixed array: not a batch.
        let mm = format!(
            "{funs}def mm(a: [[float]K]M, b: [[float]K]N) = map(\\r -> map(\\c -> reduce(add, 0.0f) o map(\\(p, q) -> mul(p, q)) $ zip(r, c)) $ b) $ a\n"
        );
        let b = prepared_text("t.lift", mm, "mm");
        let sizes: Sizes = [("M".into(), 64), ("N".into(), 64), ("K".into(), 64)].into();
        assert!(row_shapes(&b, "mm", &sizes).is_empty());
    }

    #[test]
    fn every_reduction_of_a_row_gets_the_lanes() {
        let b = prepared("benchmarks/generality/softmax.lift", "softmax");
        let sizes: Sizes = [("M".into(), 37), ("N".into(), 1024)].into();
        let shapes = row_shapes(&b, "softmax", &sizes);
        // Both reductions with lanes, then the first alone, each with and
        // without float4s, each with the row read from global memory or
        // staged in local memory (the row is read three times).
        let lanes: Vec<(usize, bool)> = shapes
            .iter()
            .map(|s| {
                // Its first lowering (the normalising map's) compiles.
                let low = &super::super::space::lowerings(&b, "softmax", s, 4)[0];
                let inst = low.instantiate(&b, "softmax", &low.defaults()).unwrap();
                let k = crate::compile::compile(&inst.program, "softmax", &Default::default()).unwrap();
                let staged = inst.derivation.iter().any(|l| l.starts_with("row-to-local"));
                // The staged row is local memory the launch sizes.
                let local = k.params.iter().any(|p| matches!(p, crate::compile::KernelParam::Local { .. }));
                assert_eq!(staged, local, "{}", k.source);
                // The trees' local arrays: 16 floats (or float4s) at 32
                // lanes, two buffers and the result, for each reduction.
                assert!(k.static_local_bytes >= 2 * 16 * 4, "{}", k.source);
                // Declared 16-byte aligned, as the static local arrays are
                // (float4 accesses through cast pointers).
                assert_eq!(staged, k.source.contains("local float4* restrict loc_0_arg"), "{}", k.source);
                // The maximum and the sum, read on by the row, stay in
                // local memory: no global temporary.
                let temps = k.params.iter().any(|p| matches!(p, crate::compile::KernelParam::Temp { .. }));
                assert!(!temps, "{}", k.source);
                (inst.derivation.iter().filter(|l| l.starts_with("reduce-lanes")).count(), staged)
            })
            .collect();
        let (f, t) = (false, true);
        assert_eq!(lanes, [(2, f), (2, t), (2, f), (2, t), (1, f), (1, t), (1, f), (1, t)]);
    }

    #[test]
    fn no_row_shapes_without_a_row_reduction() {
        let sizes: Sizes = [("N".into(), 1024)].into();
        assert!(row_shapes(&prepared("benchmarks/icfp15/dot.lift", "dot"), "dot", &sizes).is_empty());
        assert!(row_shapes(&prepared("benchmarks/icfp15/scal.lift", "scal"), "scal", &sizes).is_empty());
    }

    /// Rows of a prime length whose function has two reductions: each is
    /// padded before its own steps (the second is found unpadded, once the
    /// first is lowered), and the shape compiles.
    #[test]
    fn both_reductions_of_a_padded_row_get_their_pad() {
        let src = "userfun add(x: float, y: float): float { return x + y; }\n\
                   userfun mx(x: float, y: float): float { return fmax(x, y); }\n\
                   userfun mul(x: float, y: float): float { return x * y; }\n\
                   def g(a: [[float]N]M) = map(\\r -> let s = at(0, reduce(add, 0.0f) $ r) in \
                   map(\\x -> mul(x, s)) o reduce(mx, -3.0e38f) $ r) $ a\n";
        let b = prepared_text("t.lift", src, "g");
        let sizes: Sizes = [("M".into(), 37), ("N".into(), 1021)].into();
        let shapes = row_shapes(&b, "g", &sizes);
        let pads =
            |s: &Shape| s.steps.iter().filter(|s| s.rule.is_some_and(|r| r.name == "reduce-pad")).count();
        let both = shapes.iter().find(|s| pads(s) == 2).expect("a shape padding both reductions");
        let inst = both.instantiate(&b, "g", &both.defaults()).unwrap();
        let lines = &inst.derivation;
        let at = |name: &str| -> Vec<usize> {
            lines.iter().enumerate().filter(|(_, l)| l.starts_with(name)).map(|(i, _)| i).collect()
        };
        let (pad, lanes) = (at("reduce-pad"), at("reduce-lanes"));
        assert!(pad.len() == 2 && lanes.len() == 2 && pad[0] < lanes[0] && lanes[0] < pad[1], "{lines:?}");
        crate::compile::compile(&inst.program, "g", &Default::default()).unwrap();
    }

    #[test]
    fn short_rows_also_get_several_rows_per_work_group() {
        let src = "userfun mx(x: float, y: float): float { return fmax(x, y); }\n\
                   def rowmax(a: [[float]N]M) = map(\\r -> reduce(mx, -3.0e38f) $ r) $ a\n";
        let b = prepared_text("t.lift", src, "rowmax");
        let grouped = |sizes: &Sizes| -> Vec<Shape> {
            let shapes = row_shapes(&b, "rowmax", sizes);
            shapes.into_iter().filter(|s| s.slots.iter().any(|x| x.name == "row-group")).collect()
        };
        let sizes: Sizes = [("M".into(), 96), ("N".into(), 192)].into();
        let shapes = grouped(&sizes);
        assert!(!shapes.is_empty());
        for s in &shapes {
            // Up to 64 lanes (the float4 form's: 16 of 48 vectors).
            let l = *s.slots[0].domain.last().unwrap();
            assert!(l == 64 || l == 16, "{:?}", s.slots[0].domain);
            assert_eq!(s.slots[1].domain, [2, 4, 8, 16]);
            assert_eq!(local_of(s, &[l, 4]), Some([l, 4, 1]));
            let inst = s.instantiate(&b, "rowmax", &[l, 4]).unwrap();
            let lines = inst.derivation.join(" ; ");
            // The rows split into groups of 4 first; the groups' map is the
            // work-groups, a group's rows dimension 1 of each.
            assert!(
                inst.derivation[0].starts_with("split-join @ ") && inst.derivation[0].ends_with(" n=4"),
                "{lines}"
            );
            assert!(lines.contains(" d=1 ;") && lines.contains("map-wrg @ "), "{lines}");
            let opts = crate::compile::CompileOptions { local: Some([l, 4, 1]), ..Default::default() };
            let k = crate::compile::compile(&inst.program, "rowmax", &opts).unwrap();
            assert!(k.source.contains("barrier(CLK_LOCAL_MEM_FENCE)"), "{}", k.source);
        }
        // Rows of 1024 fill a work-group alone.
        let sizes: Sizes = [("M".into(), 96), ("N".into(), 1024)].into();
        assert!(grouped(&sizes).is_empty());
    }

    /// Short rows of every element of a batch: the groups of rows are
    /// work-groups along 0, the batch's elements along 1, a group's rows
    /// the local dimension 1.
    #[test]
    fn short_rows_of_a_batch_get_several_rows_per_work_group() {
        let src = "userfun add(x: float, y: float): float { return x + y; }\n\
                   def s(a: [[[float]Z]Y]X) = map(\\p -> map(\\r -> reduce(add, 0.0f) $ r) $ p) $ a\n";
        let b = prepared_text("t.lift", src, "s");
        let sizes: Sizes = [("X".into(), 6), ("Y".into(), 40), ("Z".into(), 96)].into();
        let shapes: Vec<Shape> = row_shapes(&b, "s", &sizes)
            .into_iter()
            .filter(|s| s.slots.iter().any(|x| x.name == "row-group"))
            .collect();
        assert!(!shapes.is_empty());
        for s in &shapes {
            // Groups of 2, 4 or 8 rows divide the 40 rows of an element.
            assert_eq!(s.slots[1].domain, [2, 4, 8]);
            let inst = s.instantiate(&b, "s", &[8, 4]).unwrap();
            let lines = inst.derivation.join(" ; ");
            assert!(lines.contains("map-wrg @ ") && lines.contains(" d=1 ;"), "{lines}");
            let opts = crate::compile::CompileOptions { local: Some([8, 4, 1]), ..Default::default() };
            let k = crate::compile::compile(&inst.program, "s", &opts).unwrap();
            assert!(
                k.source.contains("get_group_id(1)") && k.source.contains("get_local_id(1)"),
                "{}",
                k.source
            );
        }
    }
}
