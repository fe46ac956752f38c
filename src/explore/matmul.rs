//! Macro shapes for a matrix product (`map(\a -> join o map(\b ->
//! reduce(f, z) o map(g) $ zip(a, b)) $ Y) $ X`, such as `mmNvidiaHigh`).
//! Stages 1 and 2 reach one result per work-item (or a row per
//! work-group), each reading its row and column from global memory; the
//! fast programs tile: a work-group computes a tile of results, walks the
//! reduction in chunks whose tiles of both operands it copies to local
//! memory, and each work-item keeps a block of results in private memory
//! (CGO 2018's tiling and register blocking; Steuwer et al., CASES 2016).
//!
//! `mm-tiled(mt, nt, kc, rm, rn, wx, wy)`: `tile-mm` (`src/rewrite/matmul.rs`) at
//! the product, then its fixed lowering: `mapWrg(1)` over the tiles of
//! rows, `mapWrg(0)` over those of columns; per work-item (`mapLcl(1,
//! mapLcl(0, ...))`) the zeros of its block (`toPrivate(mapSeq(mapSeq))`)
//! and the copy of its block out (`toGlobal`); per chunk both chunk tiles
//! copied to local memory (`map-id-nd`, `mapLcl`, `to-local`; the compiler
//! puts the barriers); per work-item its chunk of outer products
//! (`reduceSeq` over the chunk; per step its values of `X` copied to
//! private memory, `toPrivate(mapSeq(mapSeq))` of the update, the
//! `rm x rn` loops unrolled by the compiler). `mm-tiled-u` also unrolls the
//! chunk's `kc` steps (`reduce-seq-unroll`). The work-group is `nt/rn x
//! mt/rm` work-items, as the launch inference finds (its most common
//! `mapLcl` lengths: the zeros, the blocks and the copy out).
//!
//! With `wx`, `wy` > 1 a work-item reads `X`'s and `Y`'s values `wx`, `wy`
//! at a time (vloadw from local memory) and keeps its accumulators as
//! vectors of `wy` (`add_vecw`, `mult_vecw`, made by `tile-mm`); at 4 and
//! 4 this is mm-nvidia's layout.
//!
//! The register prefetch of the next chunk is the compiler's (`codegen::prefetch`).
//!
//! Each shape is a strategy (`strategy`): the recipe's steps relative to
//! the product (`strategy::relative`, `Site::Below` moves), focused where
//! `tile-mm` applies at the root or at the body of the root map's function
//! (a batch of products, whose map becomes `mapWrg(2)`); a shape is
//! offered only where the strategy replays with default slot values.

use super::space::{divisors, pow2, rel_path, rule_step, slot, Arg, Shape, Slot, Step};
use super::strategy::{apply_with, relative, shape_of, Site, Strategy};
use crate::ir::visit::Path;
use crate::ir::Program;
use crate::rewrite;
use crate::types::Sizes;

/// The slots, in this order (`cv` only in the shapes whose copies are
/// vectorised).
const SLOTS: [&str; 8] = ["mt", "nt", "kc", "rm", "rn", "wx", "wy", "cv"];

/// How a work-group copies one chunk tile (`[kc][mt]` of X, `[kc][nt]`
/// of Y) to local memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Copy {
    /// Local dimension 0 along the tile's rows (`mt` or `nt`): coalesced
    /// where the operand is stored K-major (X as `transpose $ a`).
    Rows,
    /// Local dimension 0 along the chunk (`kc`): coalesced where the
    /// operand is stored with its rows along K (X as `a`, `[[_]K]M`), read
    /// through a transpose by the tile.
    Chunk,
    /// As `Rows`, `cv` values at a time (one vector load and store).
    Vector,
}

/// The steps of `mm-tiled` at `p` (`unroll`: the chunk's steps unrolled;
/// `copies`: how the chunk tiles of X and of Y are copied).
/// The relative positions are those of `tile-mm`'s result (the listing of
/// `lift rewrite --apply benchmarks/derivations/mm-tiled.txt`).
fn steps(p: &Path, unroll: bool, copies: [Copy; 2]) -> Option<Vec<Step>> {
    let slot = |i: usize| (SLOTS[i], Arg::Slot(i));
    let d = |v: i64| vec![("d", Arg::Fixed(v))];
    let lcl2 = |q: &Path| {
        Some([rule_step("map-lcl", q.clone(), d(1))?, rule_step("map-lcl", rel_path(q, "0.0.0"), d(0))?])
    };
    // The copy out (`w`), the reduction over chunks (`r`), the two `let`s
    // of the chunk tiles (`l1`, `l2`), the blocks (`i`) and their
    // reduction over a chunk (`ir`).
    let w = rel_path(p, "1.0.0.0.1.1.0.0.0.1.1.1.1");
    let r = rel_path(&w, "1.1");
    let l1 = rel_path(&r, "0.0.0");
    let l2 = rel_path(&l1, "0.0");
    let i = rel_path(&l2, "0.0");
    let ir = rel_path(&i, "0.0.0.0.0.0.1");
    let mut v = vec![
        rule_step("tile-mm", p.clone(), (0..7).map(slot).collect())?,
        rule_step("map-wrg", rel_path(p, "1"), d(1))?,
        rule_step("map-wrg", rel_path(p, "1.0.0.0.1.1"), d(0))?,
    ];
    v.extend(lcl2(&w)?);
    v.extend([
        rule_step("map-seq", rel_path(&w, "0.0.0.0.0.0"), vec![])?,
        rule_step("map-seq", rel_path(&w, "0.0.0.0.0.0.0.0.0"), vec![])?,
        rule_step("to-global", rel_path(&w, "0.0.0.0.0.0"), vec![])?,
    ]);
    let zeros = rel_path(&r, "1");
    v.extend(lcl2(&zeros)?);
    v.extend([
        rule_step("map-seq", rel_path(&zeros, "0.0.0.0.0.0"), vec![])?,
        rule_step("map-seq", rel_path(&zeros, "0.0.0.0.0.0.0.0.0"), vec![])?,
        rule_step("to-private", rel_path(&zeros, "0.0.0.0.0.0"), vec![])?,
    ]);
    // `l1` binds X's chunk tile (`aLoc`), `l2` Y's (`bLoc`).
    for (l, how) in [(&l1, copies[0]), (&l2, copies[1])] {
        let copy = rel_path(l, "1");
        v.push(rule_step("map-id-nd", copy.clone(), vec![])?);
        match how {
            Copy::Rows => v.extend(lcl2(&copy)?),
            Copy::Chunk => v.extend([
                rule_step("map-lcl", copy.clone(), d(0))?,
                rule_step("map-lcl", rel_path(&copy, "0.0.0"), d(1))?,
            ]),
            Copy::Vector => {
                // The rows' copy as `asScalar o map(id) o asVector(cv)`: one
                // vector load and store per work-item and step.
                let row = rel_path(&copy, "0.0.0");
                v.push(rule_step("map-lcl", copy.clone(), d(1))?);
                v.push(rule_step("vectorize", row.clone(), vec![("n", Arg::Slot(7))])?);
                v.push(rule_step("map-lcl", rel_path(&row, "1"), d(0))?);
            }
        }
        v.push(rule_step("to-local", copy, vec![])?);
    }
    v.extend(lcl2(&i)?);
    // The block's values of X copied to private memory (`aP`), then
    // the outer product into the accumulators.
    let ap = rel_path(&ir, "0.0.0");
    v.extend([
        rule_step("map-seq", rel_path(&ap, "1"), vec![])?,
        rule_step("to-private", rel_path(&ap, "1"), vec![])?,
        rule_step("map-seq", rel_path(&ap, "0.0"), vec![])?,
        rule_step("map-seq", rel_path(&ap, "0.0.0.0.0"), vec![])?,
        rule_step("to-private", rel_path(&ap, "0.0"), vec![])?,
    ]);
    if unroll {
        v.push(rule_step("reduce-seq-unroll", ir, vec![])?);
    }
    Some(v)
}

/// The body of the root map's function (`map(\x -> BODY) $ xs`: the
/// call's function, its lambda, the lambda's body).
const MAP_BODY: [u16; 3] = [0, 0, 0];

/// `mm-tiled` as a strategy: [`steps`] relative to the product, which is
/// found where `tile-mm` applies at the def's root, or as the body of the
/// root map's function (a batch of products, `map(\(x, y) -> PRODUCT) $
/// zip(a, b)`), whose map then becomes `mapWrg(2)` (a work-group's third
/// dimension walks the batch). A product elsewhere gets no shape: a map
/// around it is not a batch.
fn strategy(unroll: bool, copies: [Copy; 2]) -> Option<Strategy> {
    let body = relative(&steps(&Path::root(), unroll, copies)?);
    let at = |site| Strategy::Within { site, rule: "", then: Box::new(body.clone()) };
    let batch = apply_with("map-wrg", Site::Root, vec![("d", Arg::Fixed(2))]);
    Some(Strategy::Choice(vec![
        at(Site::Root),
        Strategy::Seq(vec![at(Site::Below(MAP_BODY.to_vec())), batch]),
    ]))
}

/// The shape `mm-tiled` records on `base` with `slots` (none where it does
/// not replay at their defaults).
fn shape(base: &Program, def: &str, unroll: bool, copies: [Copy; 2], slots: &[Slot]) -> Option<Shape> {
    shape_of(base, def, &strategy(unroll, copies)?, slots)
}

/// A slot named for the shape family in the CSV (`mm-tiled:mt`).
fn mm_slot(name: &str, domain: Vec<i64>, default: i64) -> Option<Slot> {
    slot(&format!("mm-tiled:{name}"), domain, default)
}

/// `(M, N, K)` of the product at `p`: the rows of X, of Y, and their length.
/// `map(F, X)`: X (`[[_]K]M`) is the map's argument, and the result
/// (`[[_]N]M`) gives N.
fn dims(base: &Program, def: &str, p: &Path, sizes: &Sizes) -> Option<[Option<i64>; 3]> {
    let (result, x) = super::space::lengths_at(base, def, p, sizes)?;
    let (&[m, k], &[m2, n]) = (x?.get(..2)?, result.get(..2)?) else { return None };
    (m == m2).then_some([m, n, k])
}

/// The matrix-product shapes for `def` (none unless `tile-mm` applies),
/// each replaying with its default slot values.
pub fn matmul_shapes(base: &Program, def: &str, sizes: &Sizes) -> Vec<Shape> {
    let Ok(cands) = rewrite::applicable(base, def) else { return Vec::new() };
    let Some(p) = cands.into_iter().find(|c| c.rule.name == "tile-mm").map(|c| c.path) else {
        return Vec::new();
    };
    // Where the strategy finds no product (`strategy`), no defaults need fitting.
    if !(p.0.is_empty() || p.0 == MAP_BODY) {
        return Vec::new();
    }
    let Some([m, n, k]) = dims(base, def, &p, sizes) else { return Vec::new() };
    let mut out = Vec::new();
    for vector in [false, true] {
        // The defaults are the first point measured, and with a short
        // budget often the only one near the best: 64 x 128 tiles of 128
        // work-items, 8 x 8 results each, K in chunks of 16 copied as
        // float4s. On the H200 (with the compiler's register prefetch of
        // the chunk tiles, `codegen::prefetch`) this point took 0.065 ms
        // at 1024^3 and 3.02 ms at 4096^3, where 64 x 64 tiles of 4 x 4
        // took 0.072-0.080 ms and 4.0-4.5 ms.
        // Larger products start from 128 x 128 tiles where those still
        // give 256 work-groups or more (two per multiprocessor of a large
        // GPU): at 4096^3 on the H100 they won two of the four layouts'
        // 60 s searches, whose other two never left the default
        // (`reports/nvidia-h100-80gb-hbm3/mm-4096-5006e42/`).
        let large = m.zip(n).is_some_and(|(m, n)| (m / 128) * (n / 128) >= 256);
        let mt_default = if large { 128 } else { 64 };
        let mut slots = vec![
            mm_slot("mt", divisors(16, 256, m), mt_default),
            mm_slot("nt", divisors(16, 256, n), 128),
            mm_slot("kc", divisors(4, 32, k), 16),
            mm_slot("rm", pow2(1, 8, None), 8),
            mm_slot("rn", pow2(1, 8, None), 8),
            mm_slot("wx", pow2(1, 8, None), 4),
            mm_slot("wy", pow2(1, 8, None), 4),
        ];
        if vector {
            slots.push(mm_slot("cv", pow2(2, 4, None), 4));
        }
        let Some(mut slots) = slots.into_iter().collect::<Option<Vec<Slot>>>() else { continue };
        // Defaults that replay (`fit_defaults`): where the sizes are not
        // powers of two (1000^3), 8 x 8 blocks of 4-wide vectors divide
        // no tile, and the shape would not be offered at all.
        // The probe's steps are placed at the product's position: the
        // strategy records nothing where the defaults do not replay.
        if let Some(steps) = steps(&p, false, [Copy::Rows, Copy::Rows]) {
            let mut probe = Shape { algorithmic: steps.len(), steps, slots };
            super::space::fit_defaults(&mut probe, base, def, &[sizes]);
            slots = probe.slots;
        }
        let Some(copies) = copies_for(base, def, sizes, vector, &slots) else { continue };
        out.extend([false, true].into_iter().filter_map(|unroll| shape(base, def, unroll, copies, &slots)));
    }
    out
}

/// How the two chunk tiles are copied: of the ways that replay with the
/// default slot values, the one whose kernel reads global memory most
/// often coalesced (`codegen::coalescing`), preferring vector copies
/// (`vector`) and then rows on dimension 0. Whether an operand's rows run
/// along K (`a` in `A B`, `b` in `A Bᵀ`) is a matter of layout the
/// program's text does not settle at the product's site, so the kernels
/// decide. `None` where `vector` is asked and no copy can be vectorised.
fn copies_for(base: &Program, def: &str, sizes: &Sizes, vector: bool, slots: &[Slot]) -> Option<[Copy; 2]> {
    let ways: &[Copy] =
        if vector { &[Copy::Vector, Copy::Rows, Copy::Chunk] } else { &[Copy::Rows, Copy::Chunk] };
    let mut best: Option<([Copy; 2], f64)> = None;
    for &x in ways {
        for &y in ways {
            let copies = [x, y];
            if vector && !copies.contains(&Copy::Vector) {
                continue;
            }
            let Some(shape) = shape(base, def, false, copies, slots) else { continue };
            let Ok(inst) = shape.instantiate(base, def, &shape.defaults()) else { continue };
            let Ok(k) = crate::compile::compile(&inst.program, def, &Default::default()) else { continue };
            let share = crate::codegen::coalescing::coalesced_share(&k.accesses, sizes).unwrap_or(0.0);
            if best.is_none_or(|(_, b)| share > b + 1e-9) {
                best = Some((copies, share));
            }
        }
    }
    best.map(|(c, _)| c)
}

#[cfg(test)]
mod tests {
    use super::super::space::prepared;
    use super::*;

    fn unrolled(shape: &Shape) -> bool {
        shape.steps.last().and_then(|s| s.rule).is_some_and(|r| r.name == "reduce-seq-unroll")
    }

    #[test]
    fn shapes_replay_the_committed_derivation() {
        let sizes: Sizes = [("M".into(), 1024), ("N".into(), 1024), ("K".into(), 1024)].into();
        let b = prepared("benchmarks/mm-nvidia.lift", "mmNvidiaHigh");
        let shapes = matmul_shapes(&b, "mmNvidiaHigh", &sizes);
        assert_eq!(shapes.len(), 4);
        assert!(!unrolled(&shapes[0]) && unrolled(&shapes[1]));
        // The plain shape at 128, 128, 16, 8, 8 is a committed derivation,
        // with scalars or float4.
        for (w, file) in [(1, "mm-tiled.txt"), (4, "mm-tiled-vec.txt")] {
            let inst = shapes[0].instantiate(&b, "mmNvidiaHigh", &[128, 128, 16, 8, 8, w, w]).unwrap();
            let file = format!("{}/benchmarks/derivations/{file}", env!("CARGO_MANIFEST_DIR"));
            let text = std::fs::read_to_string(file).unwrap();
            let lines: Vec<&str> =
                text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()).collect();
            assert_eq!(inst.derivation, lines);
        }
        // wy must divide rn, wx rm.
        assert!(shapes[0].instantiate(&b, "mmNvidiaHigh", &[128, 128, 16, 8, 2, 1, 4]).is_err());
        assert!(shapes[0].instantiate(&b, "mmNvidiaHigh", &[128, 128, 16, 2, 8, 4, 1]).is_err());
        assert_eq!(shapes[0].slots[0].domain, vec![16, 32, 64, 128, 256]);
        assert_eq!(shapes[0].slots[2].domain, vec![4, 8, 16, 32]);
    }

    #[test]
    fn domains_follow_the_sizes() {
        // 96 = 32 * 3: tiles of 16, 24, 32 and 48 rows (per power-of-two
        // band the divisors with most and fewest factors two); K = 40 =
        // 8 * 5: chunks of 4, 5, 8, 10 and 20; N = 64: powers of two.
        let sizes: Sizes = [("M".into(), 96), ("N".into(), 64), ("K".into(), 40)].into();
        let b = prepared("benchmarks/mm-nvidia.lift", "mmNvidiaHigh");
        let shapes = matmul_shapes(&b, "mmNvidiaHigh", &sizes);
        assert_eq!(shapes.len(), 4);
        assert_eq!(shapes[0].slots[0].domain, vec![16, 24, 32, 48]);
        assert_eq!(shapes[0].slots[1].domain, vec![16, 32, 64]);
        assert_eq!(shapes[0].slots[2].domain, vec![4, 5, 8, 10, 20]);
    }

    #[test]
    fn large_products_start_from_square_tiles() {
        let b = prepared("benchmarks/mm-nvidia.lift", "mmNvidiaHigh");
        for (size, mt) in [(1024, 64), (2048, 128), (4096, 128)] {
            let sizes: Sizes = [("M".into(), size), ("N".into(), size), ("K".into(), 1024)].into();
            let shapes = matmul_shapes(&b, "mmNvidiaHigh", &sizes);
            assert_eq!(shapes[0].defaults()[..2], [mt, 128], "{size}");
        }
    }

    #[test]
    fn no_shapes_without_a_product() {
        let sizes: Sizes = [("M".into(), 64), ("N".into(), 64)].into();
        assert!(matmul_shapes(&prepared("benchmarks/gemv.lift", "gemvHigh"), "gemvHigh", &sizes).is_empty());
    }

    #[test]
    fn a_batch_of_products_gets_tiled_shapes_over_a_third_dimension() {
        let src = "userfun add(x: float, y: float): float { return x + y; }\n\
                   userfun mul(x: float, y: float): float { return x * y; }\n\
                   def bmm(a: [[[float]K]M]B, b: [[[float]N]K]B) =\n  map(\\(x, y) -> map(\\r -> \
                   map(\\c -> reduce(add, 0.0f) o map(\\(p, q) -> mul(p, q)) $ zip(r, c)) o \
                   transpose $ y) $ x) $ zip(a, b)\n";
        let p = crate::parse::parse_program(&crate::ir::SourceFile::new("t.lift", src.to_string())).unwrap();
        let sizes: Sizes =
            [("B", 3), ("M", 64), ("N", 32), ("K", 16)].into_iter().map(|(k, v)| (k.into(), v)).collect();
        let joined = super::super::flatten::joined_products(&p, "bmm", &sizes).expect("joined");
        let base = rewrite::prepare(&joined, "bmm").unwrap();
        let shapes = matmul_shapes(&base, "bmm", &sizes);
        assert_eq!(shapes.len(), 4);
        let inst = shapes[0].instantiate(&base, "bmm", &[32, 32, 8, 4, 4, 1, 1]).unwrap();
        assert_eq!(inst.derivation.last().map(String::as_str), Some("map-wrg @ root d=2"));
        let k = crate::compile::compile(&inst.program, "bmm", &Default::default()).unwrap();
        assert!(k.source.contains("get_group_id(2)"), "{}", k.source);
    }

    /// The four layouts of `generality/mm_*.lift`: every shape's default
    /// kernel reads both operands coalesced, and the vector shapes exist
    /// where an operand's rows do not run along K.
    #[test]
    fn every_layout_copies_its_tiles_coalesced() {
        let sizes: Sizes = [("M".into(), 256), ("N".into(), 256), ("K".into(), 256)].into();
        for (name, vector_shapes) in [("mm_nn", 2), ("mm_nt", 0), ("mm_tn", 2), ("mm_tt", 2)] {
            let user = prepared(&format!("benchmarks/generality/{name}.lift"), name);
            let joined = super::super::flatten::joined_products(&user, name, &sizes).expect("a product");
            let b = rewrite::prepare(&joined, name).unwrap();
            let shapes = matmul_shapes(&b, name, &sizes);
            assert_eq!(shapes.len(), 2 + vector_shapes, "{name}");
            for s in &shapes {
                let inst = s.instantiate(&b, name, &s.defaults()).unwrap();
                let k = crate::compile::compile(&inst.program, name, &Default::default()).unwrap();
                // The reads of the operands (the results' blocks are
                // written 8 apart).
                let reads: Vec<_> = k.accesses.iter().filter(|a| a.buffer != "out").cloned().collect();
                assert!(!reads.is_empty(), "{name}");
                let share = crate::codegen::coalescing::coalesced_share(&reads, &sizes).unwrap();
                assert_eq!(share, 1.0, "{name}: {:?}", inst.derivation);
            }
        }
    }
}
