//! Matrix-vector and matrix-matrix golds (gemv, atax, gesummv, mm).

use super::{floats, par_rows, product, scalar, single, size, GoldError};
use crate::harness::data::{Arrays, Sizes};

/// `A v` in f64 for a row-major `m x n` matrix.
fn matvec(a: &[f32], v: &[f64], n: usize) -> Vec<f64> {
    a.chunks_exact(n).map(|row| row.iter().zip(v).map(|(&x, &y)| f64::from(x) * y).sum()).collect()
}

/// `A^T v` in f64 for a row-major `m x n` matrix (`v` has `m` elements):
/// walks A by rows so reads stay sequential.
fn matvec_t(a: &[f32], v: &[f64], n: usize) -> Vec<f64> {
    let mut out = vec![0f64; n];
    for (row, &vi) in a.chunks_exact(n).zip(v) {
        out.iter_mut().zip(row).for_each(|(o, &x)| *o += f64::from(x) * vi);
    }
    out
}

fn widen(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| f64::from(x)).collect()
}

/// `out = alpha * A x + beta * y`, A is M x N.
pub fn gemv(inputs: &Arrays, sizes: &Sizes) -> Result<Arrays, GoldError> {
    let (m, n) = (size(sizes, "M")?, size(sizes, "N")?);
    let a = floats(inputs, "A", product(&[m, n])?)?;
    let x = widen(floats(inputs, "x", n)?);
    let y = floats(inputs, "y", m)?;
    let (alpha, beta) = (scalar(inputs, "alpha")?, scalar(inputs, "beta")?);
    let ax = matvec(a, &x, n);
    let out = ax.iter().zip(y).map(|(&s, &yi)| (alpha * s + beta * f64::from(yi)) as f32).collect();
    Ok(single("out", out))
}

/// `y = A^T (A x)`, A is M x N. The intermediate `A x` stays in f64.
pub fn atax(inputs: &Arrays, sizes: &Sizes) -> Result<Arrays, GoldError> {
    let (m, n) = (size(sizes, "M")?, size(sizes, "N")?);
    let a = floats(inputs, "A", product(&[m, n])?)?;
    let x = widen(floats(inputs, "x", n)?);
    let tmp = matvec(a, &x, n);
    let y = matvec_t(a, &tmp, n);
    Ok(single("y", y.iter().map(|&v| v as f32).collect()))
}

/// `y = alpha * A x + beta * B x`, A and B are M x N.
pub fn gesummv(inputs: &Arrays, sizes: &Sizes) -> Result<Arrays, GoldError> {
    let (m, n) = (size(sizes, "M")?, size(sizes, "N")?);
    let len = product(&[m, n])?;
    let (a, b) = (floats(inputs, "A", len)?, floats(inputs, "B", len)?);
    let x = widen(floats(inputs, "x", n)?);
    let (alpha, beta) = (scalar(inputs, "alpha")?, scalar(inputs, "beta")?);
    let (ax, bx) = (matvec(a, &x, n), matvec(b, &x, n));
    Ok(single("y", ax.iter().zip(&bx).map(|(&p, &q)| (alpha * p + beta * q) as f32).collect()))
}

/// Column block of C kept in f64 accumulators while K is walked.
const JB: usize = 256;
/// K block: a KB x JB slice of B (128 KiB) stays in cache while every row
/// quad of the row block reuses it.
const KB: usize = 128;
/// Rows of C per cache block.
const IB: usize = 64;

/// `C = A B` with A given transposed: `At` is K x M, B is K x N, C is M x N.
pub fn mm(inputs: &Arrays, sizes: &Sizes) -> Result<Arrays, GoldError> {
    let (m, n, k) = (size(sizes, "M")?, size(sizes, "N")?, size(sizes, "K")?);
    let at = floats(inputs, "At", product(&[k, m])?)?;
    let b = floats(inputs, "B", product(&[k, n])?)?;
    let mut c = vec![0f32; product(&[m, n])?];
    let operands = MmOperands { at, b, m, n, k };
    par_rows(&mut c, n, |first, rows| mm_rows(&operands, first, rows));
    Ok(single("C", c))
}

/// `mm`'s operands and sizes, shared read-only by every thread.
struct MmOperands<'a> {
    at: &'a [f32],
    b: &'a [f32],
    m: usize,
    n: usize,
    k: usize,
}

/// Computes rows `first..` of C into `out` (whole rows of N).
fn mm_rows(ops: &MmOperands, first: usize, out: &mut [f32]) {
    let MmOperands { at, b, m, n, k } = *ops;
    let rows = out.len() / n;
    // acc[r * JB + j]: row r of the block, column j of the column block; the
    // inner loop works on 4 rows at once so each load of B feeds 4 rows.
    let mut acc = vec![[0f64; 4]; IB.div_ceil(4) * JB];
    for i0 in (0..rows).step_by(IB) {
        let ib = IB.min(rows - i0);
        for j0 in (0..n).step_by(JB) {
            let jw = JB.min(n - j0);
            acc.iter_mut().for_each(|q| *q = [0.0; 4]);
            for k0 in (0..k).step_by(KB) {
                for q in 0..ib.div_ceil(4) {
                    let quad = &mut acc[q * JB..q * JB + jw];
                    // Rows of this quad past the block read row 0's A values;
                    // their accumulators are never copied out.
                    let row = |r: usize| first + i0 + (4 * q + r).min(ib - 1);
                    for kk in k0..(k0 + KB).min(k) {
                        let arow = &at[kk * m..(kk + 1) * m];
                        let a = [0, 1, 2, 3].map(|r| f64::from(arow[row(r)]));
                        let brow = &b[kk * n + j0..kk * n + j0 + jw];
                        for (cq, &bv) in quad.iter_mut().zip(brow) {
                            let bv = f64::from(bv);
                            cq[0] += a[0] * bv;
                            cq[1] += a[1] * bv;
                            cq[2] += a[2] * bv;
                            cq[3] += a[3] * bv;
                        }
                    }
                }
            }
            for r in 0..ib {
                let dst = &mut out[(i0 + r) * n + j0..(i0 + r) * n + j0 + jw];
                let src = &acc[(r / 4) * JB..(r / 4) * JB + jw];
                dst.iter_mut().zip(src).for_each(|(d, s)| *d = s[r % 4] as f32);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::gold;
    use crate::harness::data::{Arrays, HostArray};

    use crate::types::sizes_of as sizes;

    fn arrays(pairs: &[(&str, Vec<f32>)]) -> Arrays {
        pairs.iter().map(|(k, v)| (k.to_string(), HostArray::F32(v.clone()))).collect()
    }

    fn run(name: &str, inputs: &[(&str, Vec<f32>)], s: &[(&str, i64)], out: &str) -> Vec<f32> {
        match gold(name, &arrays(inputs), &sizes(s)).unwrap().unwrap().remove(out) {
            Some(HostArray::F32(v)) => v,
            other => panic!("unexpected output {other:?}"),
        }
    }

    #[test]
    fn gemv_by_hand() {
        // A = [[1 2 3] [4 5 6]], x = [1 0 -1], y = [10 20]
        // A x = [-2 -2]; 2 * A x + 0.5 * y = [1 6].
        let v = run(
            "gemv",
            &[
                ("A", vec![1., 2., 3., 4., 5., 6.]),
                ("x", vec![1., 0., -1.]),
                ("y", vec![10., 20.]),
                ("alpha", vec![2.]),
                ("beta", vec![0.5]),
            ],
            &[("M", 2), ("N", 3)],
            "out",
        );
        assert_eq!(v, vec![1., 6.]);
    }

    #[test]
    fn atax_by_hand() {
        // A = [[1 2] [3 4] [5 6]] (3 x 2), x = [1 1]: A x = [3 7 11];
        // A^T [3 7 11] = [3 + 21 + 55, 6 + 28 + 66] = [79 100].
        let v = run(
            "atax",
            &[("A", vec![1., 2., 3., 4., 5., 6.]), ("x", vec![1., 1.])],
            &[("M", 3), ("N", 2)],
            "y",
        );
        assert_eq!(v, vec![79., 100.]);
    }

    #[test]
    fn gesummv_by_hand() {
        // A = I, B = [[0 1] [1 0]], x = [3 5]: A x = [3 5], B x = [5 3];
        // 2 A x - 1 B x = [1 7].
        let v = run(
            "gesummv",
            &[
                ("A", vec![1., 0., 0., 1.]),
                ("B", vec![0., 1., 1., 0.]),
                ("x", vec![3., 5.]),
                ("alpha", vec![2.]),
                ("beta", vec![-1.]),
            ],
            &[("M", 2), ("N", 2)],
            "y",
        );
        assert_eq!(v, vec![1., 7.]);
    }

    #[test]
    fn mm_by_hand() {
        // A = [[1 2] [3 4]] so At = [[1 3] [2 4]]; B = [[5 6] [7 8]];
        // A B = [[19 22] [43 50]].
        let v = run(
            "mm",
            &[("At", vec![1., 3., 2., 4.]), ("B", vec![5., 6., 7., 8.])],
            &[("M", 2), ("N", 2), ("K", 2)],
            "C",
        );
        assert_eq!(v, vec![19., 22., 43., 50.]);
    }

    #[test]
    fn mm_blocked_matches_naive_across_block_edges() {
        // Sizes straddle every block (IB = 64, JB = 256, KB = 128) and the
        // quad of 4 rows, with integer-valued data so f32 results are exact.
        let (m, n, k) = (67usize, 259usize, 131usize);
        let at: Vec<f32> = (0..k * m).map(|i| ((i * 7) % 5) as f32 - 2.0).collect();
        let b: Vec<f32> = (0..k * n).map(|i| ((i * 3) % 7) as f32 - 3.0).collect();
        let c = run(
            "mm",
            &[("At", at.clone()), ("B", b.clone())],
            &[("M", m as i64), ("N", n as i64), ("K", k as i64)],
            "C",
        );
        for i in 0..m {
            for j in 0..n {
                let want: f32 = (0..k).map(|kk| at[kk * m + i] * b[kk * n + j]).sum();
                assert_eq!(c[i * n + j], want, "C[{i}][{j}]");
            }
        }
    }

    #[test]
    fn mm_rejects_mismatched_shapes() {
        let r = gold(
            "mm",
            &arrays(&[("At", vec![0.; 6]), ("B", vec![0.; 4])]),
            &sizes(&[("M", 2), ("N", 2), ("K", 2)]),
        );
        assert!(r.unwrap().unwrap_err().to_string().contains("`At`"));
    }
}
