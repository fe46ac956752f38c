//! Second stages derived from the def itself, so that a full reduction
//! needs no `--then`: a def whose body is `reduce(f, z) $ xs` (one value)
//! gets two defs over its partial results, built from the same `f` and
//! `z` (the ICFP 2015 derivation's outer reduction, Figure 9):
//!
//! * `<def>_then_tree`: one work-group of 256 work-items, lane `t` reducing
//!   partials `t, t + 256, ...` (coalesced) into local memory, then a
//!   halving tree of 8 steps; the partials padded with `z` to a multiple of
//!   256 (`padConst`, a view), so any count.
//! * `<def>_then_seq`: one work-item reduces them all; any count.
//!
//! Each candidate that leaves partial results gets the first that fits its
//! count (`measure::Finisher`), as with `--then tree,seq`. The derived
//! defs are added to the program as text and parsed, so `best.lift` holds
//! them and re-parses with them (the printer's output is the parser's
//! input). Both are correct only when `f` combines partials as it combines
//! elements (associative, `z` neutral: the precondition of `reduce`); a
//! candidate for which that fails does not validate against the
//! interpreter's left fold, so it is never kept.

use crate::ir::{ExprKind, FunKind, Pattern, Program, ReduceKind, SourceFile};
use crate::types::Type;

/// The program with the derived second stages added, and their names in
/// the order they are tried.
pub struct Derived {
    pub program: Program,
    pub defs: Vec<String>,
}

/// The work-items of the tree stage (a power of two; 8 halving steps).
const TREE_LANES: u32 = 256;

/// The derived second stages of `def`, or `None` when its body is not a
/// full reduction whose function and initial value stand alone (a user
/// function or a closed lambda; a literal) over scalar values.
pub fn derive(program: &Program, def: &str) -> Option<Derived> {
    let base = crate::rewrite::prepare(program, def).ok()?;
    let d = base.def(def)?;
    if let Some((red, post)) = super::partials::reduction_under_map(&d.body) {
        return derive_rows(program, &base, def, red, post);
    }
    let (red, at) = super::reduction::reduction_at(&d.body)?;
    let (f, z, acc) = parts_of(&base, def, red)?;
    // A map over the one result (`map(h) $ reduce(...)`) is applied by the
    // second stage, after the last reduction; at the root only the def's
    // parameters are in scope, and of them `h` may read scalars only.
    let post = match &d.body.kind {
        ExprKind::Call(m, _) if !at.is_empty() => match &m.kind {
            FunKind::Pattern(Pattern::Map { f: h, .. }) => Some(h),
            _ => return None,
        },
        _ => None,
    };
    // `h` may read the def's scalars (a mean's `1 / N`): the stages take
    // them by name, as the rows stage does.
    let scalars = match post {
        None => String::new(),
        Some(h) => scalars_read(d, h)?,
    };
    let last = post.map_or_else(|| "id".to_string(), |h| crate::parse::print_fun_in(&base, d, h));
    let seq = fresh_name(program, &format!("{def}_then_seq"));
    let tree = fresh_name(program, &format!("{def}_then_tree"));
    let lanes = TREE_LANES;
    let steps = lanes.trailing_zeros();
    // The partials padded with `z` (neutral for `f`) to whole lanes: the
    // stage takes any count, so it adds no constraint to the candidate's
    // (unpadded, a multiple of 256 partials raised a chunk of 2048's
    // smallest validation size to 2^19 elements, and a full reduction's
    // search spent a third of its time on the interpreter's golds there).
    let whole = format!("((P + {}) / {lanes}) * {lanes}", lanes - 1);
    let mut text = crate::parse::print_program(program);
    text.push_str(&format!(
        "// Second stages derived by `lift explore` from `{def}`'s reduction.\n\
         def {seq}(p: [{acc}]P{scalars}) =\n  toGlobal(mapSeq({last})) o reduceSeq({f}, {z}) $ p\n\
         def {tree}(p: [{acc}]P{scalars}) =\n  join o mapWrg(0, \\all ->\n    \
         toGlobal(mapLcl(0, mapSeq({last}))) o split(1) o\n    \
         iterate({steps}, \\xs -> join o mapLcl(0, \\two -> toLocal(mapSeq(id)) o reduceSeq({f}, {z}) $ two) o split(2) $ xs) o\n    \
         join o mapLcl(0, \\lane -> toLocal(mapSeq(id)) o reduceSeq({f}, {z}) $ lane) o transpose o split({lanes}) $ all\n  \
         ) o split({whole}) o padConst(0, {whole} - P, {z}) $ p\n"
    ));
    let file = SourceFile::new(format!("<second stages of {def}>"), text);
    let program = crate::parse::parse_program(&file).ok()?;
    Some(Derived { program, defs: vec![tree, seq] })
}

/// The reduction's function and initial value, printed, and its
/// accumulator type, when they stand alone (a user function or a closed
/// lambda; a literal over scalar values) and do not use `def`'s
/// parameters (the second stage has only the partials).
fn parts_of(base: &Program, def: &str, red: &crate::ir::Expr) -> Option<(String, String, Type)> {
    let d = base.def(def)?;
    let ExprKind::Call(fd, args) = &red.kind else { return None };
    let FunKind::Pattern(Pattern::Reduce { kind: ReduceKind::Reduce, f }) = &fd.kind else { return None };
    let [z, _] = args.as_slice() else { return None };
    let ExprKind::Literal(lit) = &z.kind else { return None };
    let acc = lit.ty();
    let scalars = match &acc {
        Type::Scalar(_) => true,
        Type::Tuple(ts) => ts.iter().all(|t| matches!(t, Type::Scalar(_))),
        _ => false,
    };
    if !scalars || d.params.iter().any(|p| crate::ir::visit::fun_uses(f, p.id)) {
        return None;
    }
    Some((crate::parse::print_fun(base, f), crate::parse::print_expr(base, z), acc))
}

/// The second stages of a map of reductions split into chunks
/// (`partials`): one work-item per reduction adds up its partial results,
/// then applies the map `post` that followed each reduction, if any. The
/// results are a row per reduction, `<def>_then_rows(p: [[acc]P]Q)`, or,
/// where the kernel wrote them transposed (a row per chunk, coalesced for
/// reductions down columns), a column per reduction,
/// `<def>_then_cols(p: [[acc]Q]P)`, read coalesced too. Both bind a 2D
/// output; the search gives a candidate the one that leaves the def's
/// number of results (`measure::Bench::evaluate`). The stage also takes the def's
/// scalar parameters that `post` reads (a column's mean scales its sum by
/// a given `inv`), by their names, which the search binds to the def's
/// own inputs (`measure::Finisher`).
fn derive_rows(
    program: &Program,
    base: &Program,
    def: &str,
    red: &crate::ir::Expr,
    post: Option<&crate::ir::FunDecl>,
) -> Option<Derived> {
    let (f, z, acc) = parts_of(base, def, red)?;
    let d = base.def(def)?;
    let (last, scalars) = match post {
        None => ("id".to_string(), String::new()),
        Some(h) => (crate::parse::print_fun_in(base, d, h), scalars_read(d, h)?),
    };
    let rows = fresh_name(program, &format!("{def}_then_rows"));
    let cols = fresh_name(program, &format!("{def}_then_cols"));
    let per = format!("\\r -> toGlobal(mapSeq({last})) o reduceSeq({f}, {z}) $ r");
    let mut text = crate::parse::print_program(program);
    text.push_str(&format!(
        "// The second stages derived by `lift explore` from `{def}`'s reductions.\n\
         def {rows}(p: [[{acc}]P]Q{scalars}) =\n  join o mapGlb(0, {per}) $ p\n\
         def {cols}(p: [[{acc}]Q]P{scalars}) =\n  join o mapGlb(0, {per}) o transpose $ p\n"
    ));
    let file = SourceFile::new(format!("<second stages of {def}>"), text);
    let program = crate::parse::parse_program(&file).ok()?;
    Some(Derived { program, defs: vec![rows, cols] })
}

/// The def's parameters that `h` reads, as a stage's extra parameters
/// (`, inv: float`), if all are scalars (only they travel to a stage, by
/// name) and none is named `p` (the stage's own).
fn scalars_read(d: &crate::ir::Def, h: &crate::ir::FunDecl) -> Option<String> {
    let mut scalars = String::new();
    for q in d.params.iter().filter(|q| crate::ir::visit::fun_uses(h, q.id)) {
        let ty = q.ty.as_ref()?;
        if !matches!(ty, Type::Scalar(_)) || q.name == "p" {
            return None;
        }
        scalars.push_str(&format!(", {}: {ty}", q.name));
    }
    Some(scalars)
}

/// `name`, or `name2`, `name3`, ... where a def of that name exists.
pub(super) fn fresh_name(program: &Program, name: &str) -> String {
    super::epilogue::first_free(name, |n| {
        program.defs.iter().any(|d| d.name == n) || program.user_funs.iter().any(|u| u.name == n)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(src: &str) -> Program {
        crate::parse::parse_program(&SourceFile::new("t.lift", src.to_string())).unwrap()
    }

    const FUNS: &str = "userfun add(x: float, y: float): float { return x + y; }\n\
                        userfun sq(x: float): float { return x * x; }\n";

    #[test]
    fn a_full_reduction_gets_a_tree_and_a_sequential_stage() {
        let p = parse(&format!("{FUNS}def s(x: [float]N) = reduce(add, 0.0f) o map(sq) $ x\n"));
        let d = derive(&p, "s").expect("derived");
        assert_eq!(d.defs, ["s_then_tree", "s_then_seq"]);
        for name in &d.defs {
            let k = crate::compile::compile(&d.program, name, &Default::default()).unwrap();
            assert!(k.source.contains("add("), "{}", k.source);
        }
        // A closed lambda works as well as a user function.
        let p = parse("def m(x: [int]N) = reduce(\\(a, b) -> a, 0) $ x\n");
        assert!(derive(&p, "m").is_some());
    }

    /// The tree stage pads its partials to whole lanes with the initial
    /// value: any count gives the reduction of all of them (a sum, and a
    /// max whose padding must not win).
    #[test]
    fn the_tree_takes_any_count_of_partials() {
        let src = format!(
            "{FUNS}userfun mx(x: float, y: float): float {{ return fmax(x, y); }}\n\
             def s(x: [float]N) = reduce(add, 0.0f) $ x\n\
             def m(x: [float]N) = reduce(mx, -3.0e38f) $ x\n"
        );
        let p = parse(&src);
        let want = |def: &str, n: i64| if def == "m" { -(n as f32) } else { (n * (n - 1) / 2) as f32 };
        for def in ["s", "m"] {
            let d = derive(&p, def).expect("derived");
            for n in [1_i64, 255, 1000, 1024] {
                let values: Vec<f32> =
                    (0..n).map(|i| if def == "m" { -(n as f32) - i as f32 } else { i as f32 }).collect();
                let inputs = [("p".to_string(), crate::types::HostArray::F32(values))].into();
                let sizes = [("P".to_string(), n)].into();
                let out = crate::validate::gold(&d.program, &d.defs[0], &inputs, &sizes).unwrap();
                assert_eq!(out, crate::types::HostArray::F32(vec![want(def, n)]), "{def} of {n}");
            }
        }
    }

    #[test]
    fn a_mean_takes_its_scale_into_both_stages() {
        let p = parse(&format!(
            "{FUNS}def mean(inv: float, x: [float]N) = map(\\s -> add(s, inv)) o reduce(add, 0.0f) $ x\n"
        ));
        let d = derive(&p, "mean").expect("derived");
        for name in &d.defs {
            let k = crate::compile::compile(&d.program, name, &Default::default()).unwrap();
            assert!(k.source.contains("float inv"), "{}", k.source);
        }
        // An array read after the reduction does not travel to a stage.
        let p = parse(&format!(
            "{FUNS}def m(w: [float]4, x: [float]N) = map(\\s -> add(s, at(0, w))) o reduce(add, 0.0f) $ x\n"
        ));
        assert!(derive(&p, "m").is_none());
    }

    #[test]
    fn other_defs_get_none() {
        // Not a reduction at the root; a reduction per row; a function that
        // uses a def parameter; a def name already taken.
        let p = parse(&format!(
            "{FUNS}def a(x: [float]N) = map(sq) $ x\n\
             def b(x: [[float]N]M) = map(\\r -> reduce(add, 0.0f) $ r) $ x\n\
             def c(x: [float]N, y: [float]N) = reduce(\\(acc, v) -> add(acc, v), 0.0f) $ x\n"
        ));
        assert!(derive(&p, "a").is_none());
        // A map of reductions gets the rows of its partials added up.
        let rows = derive(&p, "b").expect("rows");
        assert_eq!(rows.defs, ["b_then_rows", "b_then_cols"]);
        let k = crate::compile::compile(&rows.program, "b_then_rows", &Default::default()).unwrap();
        assert!(k.source.contains("add("), "{}", k.source);
        // The partials transposed: each work-item walks down its column,
        // neighbours reading neighbouring elements.
        let k = crate::compile::compile(&rows.program, "b_then_cols", &Default::default()).unwrap();
        assert!(k.source.contains("p[Q * i_0 + gl_id_0]"), "{}", k.source);
        // A map after each reduction that reads a scalar of the def: the
        // stage applies it and takes that scalar by name.
        let p2 = parse(&format!(
            "{FUNS}def g(k: float, x: [[float]N]M) = map(\\r -> map(\\s -> add(s, k)) o reduce(add, 0.0f) $ r) $ x\n"
        ));
        let rows = derive(&p2, "g").expect("rows with a map after them");
        let k = crate::compile::compile(&rows.program, "g_then_rows", &Default::default()).unwrap();
        assert!(k.source.contains("float k"), "{}", k.source);
        // `c`'s lambda is closed: it mentions only its own parameters.
        assert!(derive(&p, "c").is_some());
        let p =
            parse(&format!("{FUNS}def e(x: [float]N, k: float) = reduce(\\(a, v) -> add(a, k), 0.0f) $ x\n"));
        assert!(derive(&p, "e").is_none());
        let p = parse(&format!(
            "{FUNS}def s(x: [float]N) = reduce(add, 0.0f) $ x\n\
             def s_then_seq(x: [float]N) = reduce(add, 0.0f) $ x\n"
        ));
        assert_eq!(derive(&p, "s").unwrap().defs, ["s_then_tree", "s_then_seq2"]);
    }
}
