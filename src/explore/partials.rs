//! A map of reductions whose reductions are long and few (the sums of a
//! matrix's 4,096 columns, each over 8,192 rows): one work-item per
//! reduction leaves most of a GPU idle. Each reduction is split into
//! chunks, the kernel leaves one partial result per chunk and reduction,
//! and a second stage derived from the same `reduce` (`finish`, the rows
//! of partials) adds them up: the per-reduction form of the ICFP 2015
//! derivation that `reduction` applies to a single reduction.
//!
//! `map(\x -> reduce(f, z) $ e(x)) $ xs` becomes, by the chunk steps under
//! the map (Figure 8, (1) to (5)), `map-fission` and `extract @ 1`,
//!
//! ```text
//! map(\x -> join o map(\t -> partRed(f, z, 1) $ t) o split(c) $ e(x)) $ xs
//! ```
//!
//! of type `[[acc]len/c]n`: the lowering stage then chooses how the
//! reductions and their chunks map to the thread hierarchy (a 2D global
//! range, the reductions along dimension 0, keeps a column reduction's
//! reads coalesced). `partials-strided` reduces elements `k, k + P, ...`
//! instead (`reorder-stride` first). Each also comes transposed
//! (`transpose-pair` before the `extract`, which keeps the inner
//! transpose): `[[acc]n]len/c`, a row per chunk.
//!
//! The steps are a strategy (`strategy`, via `reduction::recipe`): the
//! reduction's steps start at the first reduction, whatever `f`, `z`, `e`
//! and `xs` are; a shape that does not replay on a def is not offered.

use super::reduction::{below, build, chunk_steps, is_reduce, stride_steps, Part, RStep, ROOT};
use super::space::{divisors, slot, Arg, Shape};
use super::strategy::Site;
use crate::arith::ArithExpr;
use crate::ir::{Expr, ExprKind, FunDecl, FunKind, MapKind, Pattern, Program};
use crate::types::Sizes;

/// The reduction of `map(\x -> reduce(f, z) $ e) $ xs` (a high-level map
/// of one parameter whose body is the reduction), if the body is that;
/// or of `map(\x -> map(h) $ reduce(f, z) $ e) $ xs`, with `h` (a map
/// over each reduction's one result that does not use `x`: the second
/// stage applies it after its reduction, as `finish` does for a full
/// reduction's `map(h)`).
pub(super) fn reduction_under_map(body: &Expr) -> Option<(&Expr, Option<&FunDecl>)> {
    let ExprKind::Call(m, args) = &body.kind else { return None };
    let FunKind::Pattern(Pattern::Map { kind: MapKind::Map, f }) = &m.kind else { return None };
    let ([_], FunKind::Lambda(l)) = (args.as_slice(), &f.kind) else { return None };
    let [x] = l.params.as_slice() else { return None };
    if is_reduce(&l.body) {
        return Some((&l.body, None));
    }
    let ExprKind::Call(post, inner) = &l.body.kind else { return None };
    let FunKind::Pattern(Pattern::Map { kind: MapKind::Map, f: h }) = &post.kind else { return None };
    match inner.as_slice() {
        [r] if is_reduce(r) && !crate::ir::visit::fun_uses(h, x.id) => Some((r, Some(h))),
        _ => None,
    }
}

/// The length each reduction reduces, whether its array is a map already
/// (else the shapes start with `map-id`, as `reduction`'s do), and whether
/// a map follows each reduction.
fn reduced(base: &Program, def: &str) -> Option<(ArithExpr, bool, bool)> {
    let d = base.def(def)?;
    let (red, post) = reduction_under_map(&d.body)?;
    let (len, mapped) = super::reduction::reduced_array(base, d, red)?;
    Some((len, mapped, post.is_some()))
}

/// The partial-result shapes for `def` (none unless its body is a map of
/// reductions); each replays with its default slot value.
pub fn partial_shapes(base: &Program, def: &str, sizes: &Sizes) -> Vec<Shape> {
    let Some((len, mapped, post)) = reduced(base, def) else { return Vec::new() };
    // Reductions of a length with few divisors (a column of 7001) also get
    // the shapes on the reductions padded as `reduction` pads a whole one.
    super::reduction::lengths(&len, sizes)
        .into_iter()
        .flat_map(|(l, n, p)| shapes_of(base, def, (&l, n), p, (mapped, post)))
        .collect()
}

/// The shapes on reductions of `len` elements (`n` at the timed sizes),
/// each padded first by `pad` elements where given; `mapped`: whether each
/// reduction's array is a map already, `post`: whether a map follows it.
fn shapes_of(
    base: &Program,
    def: &str,
    (len, n): (&ArithExpr, Option<i64>),
    pad: Option<ArithExpr>,
    (mapped, post): (bool, bool),
) -> Vec<Shape> {
    let split: Vec<RStep> = vec![("map-fission", "root", vec![]), ("extract", "1", vec![])];
    // A map after each reduction is split off and left out first, the same
    // way (the second stage applies it): the rest is the plain map of
    // reductions.
    let first = if post { split.clone() } else { Vec::new() };
    // Transposed, the partial results of a chunk are a row: written side
    // by side where the reductions are columns (their work-items
    // neighbours), and read down the columns by the second stage
    // (`finish`'s `then_cols`).
    let transposed: Vec<RStep> =
        vec![("map-fission", "root", vec![]), ("transpose-pair", "1", vec![]), ("extract", "1.1", vec![])];
    let mut out = Vec::new();
    for (strided, last) in [(false, &split), (true, &split), (false, &transposed), (true, &transposed)] {
        let mut under: Vec<RStep> = Vec::new();
        if let Some(p) = &pad {
            under.push(("reduce-pad", "root", vec![("p", Arg::Expr(p.clone()))]));
        }
        if !mapped {
            under.push(("map-id", "2", vec![]));
        }
        if strided {
            under.extend(stride_steps(Arg::LenOver(len.clone(), vec![0])));
        }
        let mut chunks = chunk_steps(len, 0);
        // The chunk steps end with the whole reduction's `extract`; here
        // the map's reductions stay, split off by `map-fission`.
        chunks.pop();
        under.extend(chunks);
        // The reductions' steps start at the first reduction (the body of
        // the map's lambda, once a map after it is split off).
        let parts: Vec<Part> =
            vec![below(first.clone(), ROOT), (under, Site::NextReduce), below(last.clone(), ROOT)];
        let Some(c) = slot("c", divisors(4, 4096, n), 64) else { continue };
        out.extend(build(base, def, parts, Site::Root, &[c]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::SourceFile;
    use crate::types::sizes_of;

    fn base(src: &str, def: &str) -> Program {
        let p = crate::parse::parse_program(&SourceFile::new("t.lift", src.to_string())).unwrap();
        crate::rewrite::prepare(&p, def).unwrap()
    }

    const ADD: &str = "userfun add(x: float, y: float): float { return x + y; }\n\
                       userfun mul(x: float, y: float): float { return x * y; }\n";

    #[test]
    fn column_and_row_reductions_leave_partials_per_chunk() {
        let sizes = sizes_of(&[("M", 512), ("N", 96)]);
        for (src, partials) in [
            ("def c(a: [[float]N]M) = map(\\c -> reduce(add, 0.0f) $ c) o transpose $ a", "[[float](M / 64)]N"),
            ("def c(a: [[float]N]M, x: [float]M) = map(\\c -> reduce(add, 0.0f) o map(\\(p, q) -> mul(p, q)) $ zip(c, x)) o transpose $ a", "[[float](M / 64)]N"),
            ("def c(a: [[float]N]M) = map(\\r -> reduce(add, 0.0f) $ r) $ a", "[[float](N / 16)]M"),
            // A map after each reduction (a column's mean): left to the
            // second stage.
            ("def c(k: float, a: [[float]N]M) = map(\\c -> map(\\s -> mul(s, k)) o reduce(add, 0.0f) $ c) o transpose $ a", "[[float](M / 64)]N"),
        ] {
            let b = base(&format!("{ADD}{src}"), "c");
            let shapes = partial_shapes(&b, "c", &sizes);
            assert_eq!(shapes.len(), 4, "{src}");
            let ty = |s: &Shape| {
                let inst = s.instantiate(&b, "c", &s.defaults()).unwrap();
                let d = inst.program.def("c").unwrap();
                let t = crate::passes::typecheck::typecheck_def(&inst.program, d).unwrap();
                t.of(&d.body).to_string()
            };
            assert_eq!(ty(&shapes[0]), partials, "{src}");
            // The transposed shapes: a row per chunk.
            let (rows, per) = partials.trim_start_matches("[[float]").split_once(']').unwrap();
            assert_eq!(ty(&shapes[2]), format!("[[float]{}]{rows}", per), "{src}");
        }
        // Not a map of reductions.
        let b = base(&format!("{ADD}def s(x: [float]N) = reduce(add, 0.0f) $ x"), "s");
        assert!(partial_shapes(&b, "s", &sizes).is_empty());
    }
}
