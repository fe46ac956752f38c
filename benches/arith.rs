//! Times the arithmetic simplifier on the paper's Figure 6 transposition
//! index and on a large index of the shape slide/pad/split/join views build
//! for a tiled 2D stencil.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use lift::arith::{parse_arith_with, simplify, ArithExpr as E, CmpOp, Pred, Range, Var, VarKind};

fn idx(name: &str, start: E, stop: E) -> Var {
    Var { name: name.to_string(), kind: VarKind::Index, range: Range::new(start, stop) }
}

fn figure6() -> E {
    let vars = [idx("wg_id", E::cst(0), E::size("N")), idx("l_id", E::cst(0), E::size("M"))];
    let text = "(((wg_id*M + l_id)/M + ((wg_id*M + l_id) % M)*N) / N) * N \
                + ((wg_id*M + l_id)/M + ((wg_id*M + l_id) % M)*N) % N";
    parse_arith_with(text, &vars).unwrap_or(E::cst(0))
}

/// Clamp padding by one element: `p - 1` clamped into `[0, n)`.
fn clamp(p: E, n: &E) -> E {
    let q = E::sub(p, E::cst(1));
    let zero = Pred { lhs: q.clone(), op: CmpOp::Lt, rhs: E::cst(0) };
    let high = Pred { lhs: q.clone(), op: CmpOp::Ge, rhs: n.clone() };
    let inner = E::if_then_else(high, E::sub(n.clone(), E::cst(1)), q);
    E::if_then_else(zero, E::cst(0), inner)
}

/// One dimension of an overlapped-tiled 3-point stencil over a padded
/// array: tile `t`, window `w` inside the tile, neighbour `k`; the tile and
/// window positions pass through split/join views before being combined.
fn dim(t: &str, w: &str, k: &str, n: &E) -> E {
    let tiles = E::div(E::sub(n.clone(), E::cst(2)), E::cst(14));
    let tv = E::Var(idx(t, E::cst(0), tiles));
    let wv = E::Var(idx(w, E::cst(0), E::cst(14)));
    let kv = E::Var(idx(k, E::cst(0), E::cst(3)));
    // split 16 of the padded array, then the window of the tile, then join.
    let flat = E::add(E::mul(tv, E::cst(14)), E::add(wv, kv));
    let re = E::add(E::mul(E::div(flat.clone(), E::cst(16)), E::cst(16)), E::modulo(flat, E::cst(16)));
    clamp(re, n)
}

fn stencil2d() -> E {
    let n = E::size("N");
    let row = dim("t0", "w0", "k0", &n);
    let col = dim("t1", "w1", "k1", &n);
    // join of the 2D array, read back through a split by N.
    let flat = E::add(E::mul(row, n.clone()), col);
    E::add(E::mul(E::div(flat.clone(), n.clone()), n.clone()), E::modulo(flat, n))
}

fn bench(c: &mut Criterion) {
    let f6 = figure6();
    c.bench_function("simplify_figure6", |b| b.iter(|| simplify(black_box(&f6))));
    let st = stencil2d();
    c.bench_function("simplify_stencil2d_index", |b| b.iter(|| simplify(black_box(&st))));
}

criterion_group!(benches, bench);
criterion_main!(benches);
