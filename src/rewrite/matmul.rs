//! Tiling a matrix product (`tile-mm`): the idea of Steuwer et al.,
//! "Matrix multiplication beyond auto-tuning" (CASES 2016), as one macro
//! rule. A product written as nested maps over the rows of `X` and of `Y`
//! with a reduction over their zipped rows,
//!
//! ```text
//! map(\a -> join o map(\b -> reduce(f, z) o map(g) $ zip(a, b)) $ Y) $ X
//! ```
//!
//! becomes, for tiles of `mt x nt` results with the reduction walked in
//! chunks of `kc`, and blocks of `rm x rn` results per (future) work-item:
//!
//! * the rows of `X` (of `Y`) in groups of `mt` (`nt`), each group
//!   transposed and split into chunks of `kc` steps (`[K/kc][kc][mt]`);
//! * per pair of groups, a sequential reduction over the zipped chunks
//!   whose accumulator is the tile of results as `[mt/rm][nt/rn][rm][rn]`
//!   blocks, starting from `z` everywhere (`map(id)` of a `generate`);
//! * per chunk, both chunk tiles bound by `let` (`aLoc`, `bLoc`: where
//!   `map-id-nd` and `to-local` put the copies to local memory), and per
//!   block a sequential reduction over the chunk's `kc` steps, each step an
//!   outer product of `rm` values of `X` and `rn` values of `Y` added into
//!   the block (`f(acc, g(x, y))`); block `(i, j)` holds the rows
//!   `i, i + mt/rm, ...` and columns `j, j + nt/rn, ...` of the tile
//!   (neighbouring blocks read neighbouring values: coalesced copies,
//!   local reads without bank conflicts);
//! * the blocks copied (`map(id)`, where `to-global` puts the result) and
//!   put back in place. A product written with a map after its reduction
//!   (`map(h) o reduce(f, z) o map(g) $ zip(a, b)`: a scale, an
//!   activation; `h` reads neither `a` nor `b`) has `h` in this copy
//!   instead of `id` (vectorised with the accumulators).
//!
//! Every result is still `f`-folded from `z` over `k = 0, 1, ..., K - 1`
//! in order, so the value is the same bit for bit (the property test
//! checks it). The reductions are `reduceSeq` already: their accumulators
//! are running blocks, not neutral elements, so no other lowering exists.
//!
//! For `wx = wy = 1` the rule is exactly a sequence of small rules (the
//! fold rules of `fold.rs` and `relayout.rs`, the layout rules of
//! `layout.rs`, `zips.rs`, `bind.rs` and older ones): ninety steps on an
//! 8 x 8 x 8 product give its right-hand side for `mt = nt = 4`, `kc = 2`,
//! `rm = rn = 2`, equal up to ids and parameter names (`ir::equiv`;
//! `tests/rewrite_rules.rs`, `matmul_tiling_rule` and
//! `tile_mm_small_steps_further`; `docs/REWRITE.md`, "tile-mm as small
//! steps"). It stays one rule for the search.

use super::algorithmic::map_parts;
use super::rule::{apply_fun, arg, Args, Builder, Family, ParamSpec, Rule, RuleError, Site};
use crate::arith::{self, ArithExpr};
use crate::ir::{
    Expr, ExprKind, FunDecl, FunKind, IdGen, Lambda, Literal, MapKind, Pattern, ReduceKind, Span,
};
use crate::types::Type;

type R = Result<(), RuleError>;
type B = Result<Expr, RuleError>;

const NAME: &str = "tile-mm";

pub static RULES: [Rule; 1] = [Rule {
    name: NAME,
    family: Family::Macro,
    lhs: "map(\\a -> join o map(\\b -> [map(h) o] reduce(f, z) o map(g) $ zip(a, b)) $ Y) $ X   (z a literal, g of two parameters, h of one reading neither a nor b)",
    rhs: "tiles of mt x nt results, the reduction in chunks of kc with both chunk tiles bound by let, \
          blocks of rm x rn results per chunk step (outer products): see docs/REWRITE.md",
    params: &[
        ParamSpec { name: "mt", what: "rows of X per tile" },
        ParamSpec { name: "nt", what: "rows of Y per tile" },
        ParamSpec { name: "kc", what: "reduction steps per chunk" },
        ParamSpec { name: "rm", what: "rows of a block" },
        ParamSpec { name: "rn", what: "columns of a block" },
        ParamSpec { name: "wx", what: "vector width of X's values in local memory (1: scalars)" },
        ParamSpec { name: "wy", what: "vector width of Y's values and the accumulators (1: scalars)" },
    ],
    matches: m_tile_mm,
    build: b_tile_mm,
}];

/// What the rule reads from its site.
struct Parts<'a> {
    xs: &'a Expr,
    ys: &'a Expr,
    f: &'a FunDecl,
    z: &'a Literal,
    g: &'a FunDecl,
    /// `h` of `map(h) o reduce(f, z)`: applied to each result as it is
    /// stored (a scale, an activation).
    epilogue: Option<&'a FunDecl>,
    span: Span,
}

fn lambda_of(f: &FunDecl, n: usize) -> Option<&Lambda> {
    match &f.kind {
        FunKind::Lambda(l) if l.params.len() == n => Some(l),
        FunKind::Lambda(_) | FunKind::Pattern(_) | FunKind::UserFun(_) => None,
    }
}

fn takes_two(s: &Site<'_>, f: &FunDecl) -> bool {
    match &f.kind {
        FunKind::Lambda(l) => l.params.len() == 2,
        FunKind::UserFun(id) => s.prog.user_funs.get(id.0 as usize).is_some_and(|u| u.params.len() == 2),
        FunKind::Pattern(_) => false,
    }
}

/// A function of one parameter that reads neither `a` nor `b` (it moves
/// out of their scope).
fn epilogue_fun(s: &Site<'_>, h: &FunDecl, a: crate::ir::ParamId, b: crate::ir::ParamId) -> bool {
    match &h.kind {
        FunKind::Lambda(l) => {
            l.params.len() == 1 && !crate::ir::visit::fun_uses(h, a) && !crate::ir::visit::fun_uses(h, b)
        }
        FunKind::UserFun(id) => s.prog.user_funs.get(id.0 as usize).is_some_and(|u| u.params.len() == 1),
        FunKind::Pattern(_) => false,
    }
}

/// The reduction of `\b -> ...` and the map after it, if any:
/// `map(h) o reduce(f, z) $ e` or `reduce(f, z) $ e`.
fn split_epilogue<'a>(
    s: &Site<'a>,
    body: &'a Expr,
    a: crate::ir::ParamId,
    b: crate::ir::ParamId,
) -> Option<(&'a Expr, Option<&'a FunDecl>)> {
    match map_parts(body) {
        Some((MapKind::Map, h, red, _)) => epilogue_fun(s, h, a, b).then_some((red, Some(h))),
        _ => Some((body, None)),
    }
}

fn parts<'a>(s: &Site<'a>) -> Option<Parts<'a>> {
    let e = s.expr;
    let (MapKind::Map, outer, xs, span) = map_parts(e)? else { return None };
    let la = lambda_of(outer, 1)?;
    let a = la.params[0].id;
    let (Pattern::Join, [inner]) = super::rule::as_pattern(&la.body).map(|(p, args, _)| (p, args))? else {
        return None;
    };
    let (MapKind::Map, per_b, ys, _) = map_parts(inner)? else { return None };
    if crate::ir::visit::count_uses(ys, a) != 0 {
        return None;
    }
    let lb = lambda_of(per_b, 1)?;
    let b = lb.params[0].id;
    let (red, epilogue) = split_epilogue(s, &lb.body, a, b)?;
    let ExprKind::Call(rf, rargs) = &red.kind else { return None };
    let (FunKind::Pattern(Pattern::Reduce { kind: ReduceKind::Reduce, f }), [zexpr, prods]) =
        (&rf.kind, rargs.as_slice())
    else {
        return None;
    };
    let ExprKind::Literal(z) = &zexpr.kind else { return None };
    let (MapKind::Map, g, zipped, _) = map_parts(prods)? else { return None };
    let (Pattern::Zip(2), [ea, eb]) = super::rule::as_pattern(zipped).map(|(p, args, _)| (p, args))? else {
        return None;
    };
    let is = |x: &Expr, p| matches!(x.kind, ExprKind::Param(q) if q == p);
    if !(is(ea, a) && is(eb, b) && takes_two(s, f) && takes_two(s, g)) {
        return None;
    }
    Some(Parts { xs, ys, f, z, g, epilogue, span })
}

fn m_tile_mm(s: &Site<'_>) -> R {
    parts(s).map(|_| ()).ok_or_else(|| {
        s.no_match(
            NAME,
            "`map(\\a -> join o map(\\b -> [map(h) o] reduce(f, z) o map(g) $ zip(a, b)) $ Y) $ X` (z a literal, g of two parameters, h of one)",
        )
    })
}

/// The epilogue over vectors of `w` accumulators: `mapVec(h)` for a user
/// function of one float (its vector version applies it to each component
/// where its body is more than one arithmetic `return`: an activation with
/// an `if`), else `h` vectorised as the update is.
fn vector_epilogue(b: &mut Builder, s: &Site<'_>, h: &FunDecl, w: u8) -> Result<FunDecl, RuleError> {
    if let FunKind::UserFun(id) = &h.kind {
        let u = &b.user_funs[id.0 as usize];
        if u.params.len() == 1 && u.params[0].1 == Type::FLOAT && u.ret == Type::FLOAT {
            return Ok(FunDecl {
                id: crate::ir::FunId::FRESH,
                kind: FunKind::Pattern(Pattern::MapVec { f: Box::new(h.clone()) }),
                span: h.span,
            });
        }
    }
    super::vectorize::vectorise_fun(b, s.prog, h, w)
        .map_err(|reason| RuleError::NoVectorVersion { rule: NAME, reason })
}

/// `(rows, row length)` of a 2D array.
fn dims(s: &Site<'_>, e: &Expr) -> Result<(ArithExpr, ArithExpr), RuleError> {
    match s.ty(e) {
        Some(Type::Array(row, n)) => match row.as_ref() {
            Type::Array(_, k) => Ok((arith::simplify(n), arith::simplify(k))),
            _ => Err(s.no_match(NAME, "X and Y two-dimensional")),
        },
        _ => Err(s.no_match(NAME, "X and Y two-dimensional")),
    }
}

/// A lambda of `n` fresh parameters (named when `names` says so: a `let`
/// keeps a named parameter through normalisation).
fn lam(
    g: &mut IdGen,
    span: Span,
    names: &[Option<&str>],
    body: impl FnOnce(&mut IdGen, Vec<Expr>) -> Expr,
) -> FunDecl {
    let params: Vec<_> = names
        .iter()
        .map(|n| match n {
            Some(n) => g.param(n, None, span),
            None => g.synthetic_param(span),
        })
        .collect();
    let vars = params.iter().map(|p| g.var(p)).collect();
    let b = body(g, vars);
    g.fun(FunKind::Lambda(Lambda { params, body: Box::new(b) }), span)
}

pub(super) fn map_with(g: &mut IdGen, f: FunDecl, x: Expr, span: Span) -> Expr {
    g.call_pattern(Pattern::Map { kind: MapKind::Map, f: Box::new(f) }, vec![x], span)
}

/// `map(p)` for a pattern `p` of one argument.
pub(super) fn map_pat(g: &mut IdGen, p: Pattern, x: Expr, span: Span) -> Expr {
    let f = g.lambda1(span, |g, v| g.call_pattern(p, vec![v], span));
    map_with(g, f, x, span)
}

/// `map(...map(id)...)` of depth `n` over `x`.
pub(super) fn copy_nd(g: &mut IdGen, n: usize, x: Expr, span: Span) -> Expr {
    let f = g.lambda1(span, |g, v| g.call_pattern(Pattern::Id, vec![v], span));
    map_nd(g, n, f, x, span)
}

/// `map(...map(f)...)` of depth `n` over `x`.
fn map_nd(g: &mut IdGen, n: usize, mut f: FunDecl, x: Expr, span: Span) -> Expr {
    for _ in 1..n {
        let inner = f;
        f = g.lambda1(span, |g, r| map_with(g, inner, r, span));
    }
    map_with(g, f, x, span)
}

/// The groups of `t` rows of `x`, each transposed and split into chunks of
/// `kc` steps: `map(\r -> split(kc) o transpose $ r) o split(t) $ x`.
fn groups(g: &mut IdGen, x: Expr, t: &ArithExpr, kc: &ArithExpr, span: Span) -> Expr {
    let sp = g.call_pattern(Pattern::Split(t.clone()), vec![x], span);
    let kc = kc.clone();
    let f = g.lambda1(span, |g, r| {
        let tr = g.call_pattern(Pattern::Transpose, vec![r], span);
        g.call_pattern(Pattern::Split(kc), vec![tr], span)
    });
    map_with(g, f, sp, span)
}

/// The strips of a chunk tile `[kc][t]` for `i` blocks, block `j` holding
/// columns `j, j + i, ...`: `transpose o map(\r -> transpose o split(i) $ r)`.
pub(super) fn strips(g: &mut IdGen, tile: Expr, i: &ArithExpr, span: Span) -> Expr {
    let i = i.clone();
    let f = g.lambda1(span, |g, r| {
        let sp = g.call_pattern(Pattern::Split(i), vec![r], span);
        g.call_pattern(Pattern::Transpose, vec![sp], span)
    });
    let m = map_with(g, f, tile, span);
    g.call_pattern(Pattern::Transpose, vec![m], span)
}

fn zip2(g: &mut IdGen, a: Expr, b: Expr, span: Span) -> Expr {
    g.call_pattern(Pattern::Zip(2), vec![a, b], span)
}

fn get(g: &mut IdGen, i: usize, t: &Expr, span: Span) -> Expr {
    let t = g.refresh_expr(t);
    g.call_pattern(Pattern::Get(i), vec![t], span)
}

fn reduce_seq(g: &mut IdGen, f: FunDecl, init: Expr, xs: Expr, span: Span) -> Expr {
    g.call_pattern(Pattern::Reduce { kind: ReduceKind::Seq, f: Box::new(f) }, vec![init, xs], span)
}

/// What `tile` builds besides the tiling: the update of one accumulator
/// by one value of `X` (the parameter `x`) and a value of `Y`, possibly
/// vectorised, and the user function splatting `z` (vectors only).
struct Step {
    x: crate::ir::Param,
    update: FunDecl,
    splat: Option<crate::ir::UserFunId>,
    /// The epilogue applied to one accumulator (vectorised with it).
    epilogue: Option<FunDecl>,
    wx: u8,
    wy: ArithExpr,
    /// A tile's shape: `mi x ni` register blocks of `rm x rn` results.
    shape: [ArithExpr; 4],
}

/// A vector width parameter: 1 (scalars), 2, 4, 8 or 16.
fn width(a: &Args, name: &'static str) -> Result<i64, RuleError> {
    let w = super::rule::int_arg(NAME, a, name, 1, 16)?;
    if !matches!(w, 1 | 2 | 4 | 8 | 16) {
        return Err(RuleError::SideCondition {
            rule: NAME,
            what: format!("`{name}` must be 1, 2, 4, 8 or 16, found {w}"),
        });
    }
    Ok(w)
}

fn b_tile_mm(s: &Site<'_>, a: &Args, b: &mut Builder) -> B {
    let p = parts(s).ok_or_else(|| s.no_match(NAME, "a matrix product"))?;
    let [mt, nt, kc, rm, rn] =
        ["mt", "nt", "kc", "rm", "rn"].map(|k| arg(NAME, a, k).map(|v| arith::simplify(&v)));
    let (mt, nt, kc, rm, rn) = (mt?, nt?, kc?, rm?, rn?);
    let (wx, w) = (width(a, "wx")?, width(a, "wy")?);
    let (m, k) = dims(s, p.xs)?;
    let (n, k2) = dims(s, p.ys)?;
    b.equal(NAME, &k, &k2, "X and Y rows of one length")?;
    b.divides(NAME, &mt, &m)?;
    b.divides(NAME, &nt, &n)?;
    b.divides(NAME, &kc, &k)?;
    b.divides(NAME, &rm, &mt)?;
    b.divides(NAME, &rn, &nt)?;
    let wa = ArithExpr::Cst(w);
    b.divides(NAME, &wa, &rn)?;
    b.divides(NAME, &ArithExpr::Cst(wx), &rm)?;
    let mi = arith::simplify(&ArithExpr::div(mt.clone(), rm.clone()));
    let ni = arith::simplify(&ArithExpr::div(nt.clone(), rn.clone()));
    let span = p.span;
    // `\(c, y) -> f(c, g(x, y))`, `x` bound later by the map over X's values.
    let x = b.gen.synthetic_param(span);
    let xv = b.gen.var(&x);
    let update = lam(&mut b.gen, span, &[None, None], |g, e| {
        let gx = apply_fun(g, p.g, vec![xv, e[1].clone()], span);
        apply_fun(g, p.f, vec![e[0].clone(), gx], span)
    });
    let (update, splat) = if w == 1 {
        (update, None)
    } else {
        if !matches!(p.z, Literal::Float(_)) {
            return Err(RuleError::SideCondition { rule: NAME, what: "vectors need a float `z`".into() });
        }
        let width = w as u8;
        let v = super::vectorize::vectorise_fun(b, s.prog, &update, width)
            .map_err(|reason| RuleError::NoVectorVersion { rule: NAME, reason })?;
        (v, Some(super::vectorize::splat_fun(b, width)))
    };
    let epilogue = match p.epilogue {
        None => None,
        Some(h) if w == 1 => Some(h.clone()),
        Some(h) => Some(vector_epilogue(b, s, h, w as u8)?),
    };
    let step = Step { x, update, splat, epilogue, wx: wx as u8, wy: wa, shape: [mi, ni, rm, rn] };
    let g = &mut b.gen;
    let tiles_x = groups(g, p.xs.clone(), &mt, &kc, span);
    let tiles_y = groups(g, p.ys.clone(), &nt, &kc, span);
    let per_x = g.lambda1(span, |g, at| {
        let per_y = g.lambda1(span, |g, bt| tile(g, &p, &step, at, bt, span));
        let m = map_with(g, per_y, tiles_y, span);
        let tr = g.call_pattern(Pattern::Transpose, vec![m], span);
        map_pat(g, Pattern::Join, tr, span)
    });
    let m = map_with(g, per_x, tiles_x, span);
    Ok(g.call_pattern(Pattern::Join, vec![m], span))
}

/// The `mt x nt` results of one pair of row groups `at`, `bt`.
fn tile(g: &mut IdGen, p: &Parts<'_>, st: &Step, at: Expr, bt: Expr, span: Span) -> Expr {
    let [mi, ni, rm, rn] = &st.shape;
    // The accumulator: [mi][ni][rm][rn / w] copies of z (splat to vectors).
    let rnw = arith::simplify(&ArithExpr::div(rn.clone(), st.wy.clone()));
    let mut zeros = g.lambda1(span, |g, _| g.expr(ExprKind::Literal(p.z.clone()), span));
    for len in [&rnw, rm, ni] {
        let f = zeros;
        let gen = g.call_pattern(Pattern::Generate { len: len.clone(), f: Box::new(f) }, vec![], span);
        zeros = g.lambda1(span, |_, _| gen);
    }
    let gen = g.call_pattern(Pattern::Generate { len: mi.clone(), f: Box::new(zeros) }, vec![], span);
    let init = match st.splat {
        None => copy_nd(g, 4, gen, span),
        Some(u) => {
            let leaf = g.lambda1(span, |g, v| {
                let f = g.fun(FunKind::UserFun(u), span);
                g.call(f, vec![v], span)
            });
            map_nd(g, 4, leaf, gen, span)
        }
    };
    let chunk = lam(g, span, &[None, None], |g, v| {
        let (acc, ab) = (&v[0], &v[1]);
        let ga = get(g, 0, ab, span);
        let gb = get(g, 1, ab, span);
        let acc = acc.clone();
        let with_b = lam(g, span, &[Some("aLoc")], |g, al| {
            let al = al[0].clone();
            let items = lam(g, span, &[Some("bLoc")], |g, bl| {
                let bl = bl[0].clone();
                let rows = lam(g, span, &[None, None], |g, r| {
                    let (acc_r, a_cols) = (r[0].clone(), r[1].clone());
                    let block = lam(g, span, &[None, None], |g, c| {
                        let (acc_b, b_cols) = (c[0].clone(), c[1].clone());
                        let step = lam(g, span, &[None, None], |g, w| outer(g, st, &w[0], &w[1], span));
                        let z = zip2(g, a_cols, b_cols, span);
                        let r = reduce_seq(g, step, acc_b, z, span);
                        g.call_pattern(Pattern::Join, vec![r], span)
                    });
                    let bl = match st.wy.as_cst() {
                        Some(1) => bl,
                        _ => map_pat(g, Pattern::AsVector(st.wy.as_cst().unwrap_or(1) as u8), bl, span),
                    };
                    let sb = strips(g, bl, ni, span);
                    let z = zip2(g, acc_r, sb, span);
                    map_with(g, block, z, span)
                });
                let al = if st.wx == 1 { al } else { map_pat(g, Pattern::AsVector(st.wx), al, span) };
                let sa = strips(g, al, mi, span);
                let z = zip2(g, acc, sa, span);
                map_with(g, rows, z, span)
            });
            g.call(items, vec![gb], span)
        });
        g.call(with_b, vec![ga], span)
    });
    let z = zip2(g, at, bt, span);
    let red = reduce_seq(g, chunk, init, z, span);
    let joined = g.call_pattern(Pattern::Join, vec![red], span);
    // The copy out applies the epilogue (`map(h)` after the reduction):
    // each result is `h` of its fold, as before.
    let out = match &st.epilogue {
        None => copy_nd(g, 4, joined, span),
        Some(h) => {
            let leaf = g.lambda1(span, |g, v| apply_fun(g, h, vec![v], span));
            map_nd(g, 4, leaf, joined, span)
        }
    };
    // [mi][ni][rm][rn] -> [mt][nt]: row (r / wx * mi + i) * wx + r % wx,
    // column s * ni + j (vectors: column (s * ni + j) * wy + c). The rows
    // are split by wx even for wx = 1, so that positions inside do not
    // depend on it.
    untile(g, out, st.wx, st.splat.is_some(), span)
}

/// `untile`: `[mi][ni][rm][rn]` blocks back to the `[mt][nt]` tile, block
/// `(i, j)` holding rows `i, i + mi, ...` and columns `j, j + ni, ...`
/// (`asScalar` first for vectors). Also the inverse layout of
/// `reduce-seq-block` (`wx = 1`).
pub(super) fn untile(g: &mut IdGen, blocks: Expr, wx: u8, vec: bool, span: Span) -> Expr {
    let wx = ArithExpr::Cst(i64::from(wx));
    let per_row = g.lambda1(span, |g, blk| {
        let t = g.call_pattern(Pattern::Transpose, vec![blk], span);
        let t = map_pat(g, Pattern::Transpose, t, span);
        let t = map_pat(g, Pattern::Join, t, span);
        let t = if vec { map_pat(g, Pattern::AsScalar, t, span) } else { t };
        g.call_pattern(Pattern::Split(wx), vec![t], span)
    });
    let rows = map_with(g, per_row, blocks, span);
    let t = g.call_pattern(Pattern::Transpose, vec![rows], span);
    let t = map_pat(g, Pattern::Join, t, span);
    g.call_pattern(Pattern::Join, vec![t], span)
}

/// One step of a block: `let aP = map(id) $ get(0, kab) in map(\\(cRow,
/// x) -> map(update) $ zip(cRow, get(1, kab))) $ zip(c, aP)` (`asScalar $
/// aP` for vectors of X's values), `update` = `\\(c, y) -> f(c, g(x, y))`
/// (vectorised for vectors of Y's values). `aP` is where `to-private` puts
/// the block's values of X.
fn outer(g: &mut IdGen, st: &Step, c: &Expr, kab: &Expr, span: Span) -> Expr {
    let xs = get(g, 0, kab, span);
    let copy = copy_nd(g, 1, xs, span);
    let ys = get(g, 1, kab, span);
    let c = c.clone();
    let wx = st.wx;
    let with_a = lam(g, span, &[Some("aP")], |g, ap| {
        let ap = ap[0].clone();
        let xs = if wx == 1 { ap } else { g.call_pattern(Pattern::AsScalar, vec![ap], span) };
        let c_row = g.synthetic_param(span);
        let cv = g.var(&c_row);
        let z = zip2(g, cv, ys, span);
        let update = g.refresh_fun(&st.update);
        let body = map_with(g, update, z, span);
        let per_row =
            g.fun(FunKind::Lambda(Lambda { params: vec![c_row, st.x.clone()], body: Box::new(body) }), span);
        let z = zip2(g, c, xs, span);
        map_with(g, per_row, z, span)
    });
    g.call(with_a, vec![copy], span)
}
