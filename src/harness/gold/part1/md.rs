//! MD (SHOC): Lennard-Jones forces from each atom's M nearest neighbours.
//!
//! Positions are float4 (w unused, 0), uniform in a box of edge 20. The
//! neighbour list is neighbour-major: neighbour j of atom i at `j * N + i`.
//! For a pair with `d = p_i - p_j`, `r2 = |d|^2 < cutsq`, the force on i is
//! `d * r2inv * r6inv * (lj1 * r6inv - lj2)` (`r2inv = 1/r2`,
//! `r6inv = r2inv^3`). Output `force`: float4 per atom, w = 0, and
//! `force.scale`, each component's sum of term magnitudes (its error scale).
//!
//! Both generators rebuild the same positions from a fixed seed: each is
//! called on its own, with only the sizes and a per-input seed, and the
//! neighbour list must describe exactly the positions the kernel sees.

use super::{floats, ints, output, scalar, size, Rng};
use crate::harness::data::{Arrays, HostArray, Sizes};
use crate::harness::gold::GoldError;

/// Edge of the cubic box (SHOC's domain edge).
const BOX: f32 = 20.0;
/// The positions' seed, shared by `md_positions` and `md_neighbours`.
const SEED: u64 = 0x4d44_5f61_746f_6d73;

pub fn gold(inputs: &Arrays, sizes: &Sizes) -> Result<Arrays, GoldError> {
    let n = size(sizes, "N")?;
    let m = size(sizes, "M")?;
    let pos = floats(inputs, "pos", 4 * n)?;
    let neigh = ints(inputs, "neigh", m * n)?;
    let cutsq = scalar(inputs, "cutsq")?;
    let lj1 = scalar(inputs, "lj1")? as f64;
    let lj2 = scalar(inputs, "lj2")? as f64;

    let mut force = vec![0.0f32; 4 * n];
    // Per component, the sum of the magnitudes of its terms: the f32 error
    // of a sum is bounded relative to it (validate::compare_scaled).
    let mut scale = vec![0.0f32; 4 * n];
    for i in 0..n {
        let mut f = [0.0f64; 3];
        let mut fs = [0.0f64; 3];
        for j in 0..m {
            let k = neigh[j * n + i];
            let k = usize::try_from(k).ok().filter(|&k| k < n).ok_or(GoldError::Neighbour {
                j,
                atom: i,
                k,
                atoms: n,
            })?;
            // The difference in f32, as the kernel forms it (exact for
            // nearby atoms); the cutoff test on the f32 square, so a pair
            // right at the cutoff falls on the kernel's side of it.
            let d = [0, 1, 2].map(|c| pos[4 * i + c] - pos[4 * k + c]);
            let r2_f32 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            if r2_f32 >= cutsq {
                continue;
            }
            let d = d.map(f64::from);
            let r2inv = 1.0 / (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
            let r6inv = r2inv * r2inv * r2inv;
            let s = r2inv * r6inv * (lj1 * r6inv - lj2);
            for c in 0..3 {
                f[c] += d[c] * s;
                fs[c] += (d[c] * s).abs();
            }
        }
        for c in 0..3 {
            force[4 * i + c] = f[c] as f32;
            scale[4 * i + c] = fs[c] as f32;
        }
    }
    let mut out = output("force", HostArray::F32(force));
    out.insert("force.scale".into(), HostArray::F32(scale));
    Ok(out)
}

/// The N atoms: uniform in [0, BOX)^3, from the fixed seed.
fn atoms(n: usize) -> Vec<[f32; 3]> {
    let mut rng = Rng::new(SEED);
    (0..n).map(|_| [0, 1, 2].map(|_| rng.uniform(0.0, BOX))).collect()
}

/// `md_positions`: float4 [N], w = 0.
pub fn positions(sizes: &Sizes) -> Result<HostArray, GoldError> {
    let n = size(sizes, "N")?;
    Ok(HostArray::F32(atoms(n).iter().flat_map(|p| [p[0], p[1], p[2], 0.0]).collect()))
}

/// `md_neighbours`: int [M][N], the M nearest other atoms of every atom
/// (nearest first, ties by index), neighbour-major. Needs N > M.
pub fn neighbours(sizes: &Sizes) -> Result<HostArray, GoldError> {
    let n = size(sizes, "N")?;
    let m = size(sizes, "M")?;
    if n <= m {
        return Err(GoldError::TooFewAtoms { atoms: n, neighbours: m });
    }
    let atoms = atoms(n);
    let lists = nearest(&atoms, m);
    let mut out = vec![0i32; m * n];
    for (i, list) in lists.iter().enumerate() {
        for (j, &k) in list.iter().enumerate() {
            out[j * n + i] = k as i32;
        }
    }
    Ok(HostArray::I32(out))
}

/// The `m` nearest neighbours of every atom, found with a uniform grid of
/// cells (cell lists): only cells near an atom are searched, widening the
/// search until the m-th candidate is provably nearer than any atom outside.
fn nearest(atoms: &[[f32; 3]], m: usize) -> Vec<Vec<usize>> {
    let n = atoms.len();
    // Radius of a ball that holds m+1 atoms on average; cells a third of it
    // keep the candidate count at a small multiple of m.
    let density = n as f64 / (BOX as f64).powi(3);
    let radius = (3.0 * (m + 1) as f64 / (4.0 * std::f64::consts::PI * density)).cbrt();
    let g = ((BOX as f64 / (radius / 3.0)).floor() as usize).clamp(1, 128);
    let cell_edge = BOX as f64 / g as f64;
    let cell_of = |p: &[f32; 3]| p.map(|x| ((x as f64 / cell_edge) as usize).min(g - 1));
    let flat = |c: [usize; 3]| (c[2] * g + c[1]) * g + c[0];

    // Counting sort of the atoms by cell.
    let mut start = vec![0usize; g * g * g + 1];
    for p in atoms {
        start[flat(cell_of(p)) + 1] += 1;
    }
    for c in 0..g * g * g {
        start[c + 1] += start[c];
    }
    let mut fill = start.clone();
    let mut sorted = vec![0usize; n];
    for (i, p) in atoms.iter().enumerate() {
        let c = flat(cell_of(p));
        sorted[fill[c]] = i;
        fill[c] += 1;
    }

    // Written out, not as an iterator: this is the inner loop, and debug
    // builds (the test suite) do not inline iterator adaptors.
    let dist2 = |a: &[f32; 3], b: &[f32; 3]| -> f64 {
        let (dx, dy, dz) = (a[0] as f64 - b[0] as f64, a[1] as f64 - b[1] as f64, a[2] as f64 - b[2] as f64);
        dx * dx + dy * dy + dz * dz
    };
    let mut cands: Vec<(f64, usize)> = Vec::new();
    atoms
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let home = cell_of(p);
            let mut ring = 1usize;
            loop {
                let lo = home.map(|c| c.saturating_sub(ring));
                let hi = home.map(|c| (c + ring).min(g - 1));
                cands.clear();
                for z in lo[2]..=hi[2] {
                    for y in lo[1]..=hi[1] {
                        let row = flat([0, y, z]);
                        for &k in &sorted[start[row + lo[0]]..start[row + hi[0] + 1]] {
                            if k != i {
                                cands.push((dist2(p, &atoms[k]), k));
                            }
                        }
                    }
                }
                // Distance from p to the nearest face of the searched block
                // that has atoms behind it (faces on the box wall do not).
                let mut reach = f64::INFINITY;
                for c in 0..3 {
                    let x = p[c] as f64;
                    if lo[c] > 0 {
                        reach = reach.min(x - lo[c] as f64 * cell_edge);
                    }
                    if hi[c] < g - 1 {
                        reach = reach.min((hi[c] + 1) as f64 * cell_edge - x);
                    }
                }
                if cands.len() >= m {
                    let order = |a: &(f64, usize), b: &(f64, usize)| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1));
                    cands.select_nth_unstable_by(m - 1, order);
                    if cands[m - 1].0 <= reach * reach {
                        let mut best = cands[..m].to_vec();
                        best.sort_unstable_by(order);
                        return best.into_iter().map(|(_, k)| k).collect();
                    }
                }
                ring += 1;
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;

    fn inputs(pos: Vec<f32>, neigh: Vec<i32>) -> Arrays {
        arrays(vec![
            ("pos", HostArray::F32(pos)),
            ("neigh", HostArray::I32(neigh)),
            ("cutsq", HostArray::F32(vec![16.0])),
            ("lj1", HostArray::F32(vec![1.5])),
            ("lj2", HostArray::F32(vec![2.0])),
        ])
    }

    #[test]
    fn one_neighbour_at_unit_distance() {
        // d = p0 - p1 = (-1, 0, 0): r2inv = r6inv = 1, s = 1.5 - 2 = -0.5,
        // so f0 = (0.5, 0, 0) and f1 = -f0.
        let pos = vec![0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0];
        let out = gold(&inputs(pos, vec![1, 0]), &sizes(&[("N", 2), ("M", 1)])).unwrap();
        let f = f32s(&out, "force");
        let want = [0.5, 0.0, 0.0, 0.0, -0.5, 0.0, 0.0, 0.0];
        for (a, b) in f.iter().zip(want) {
            assert!(close(*a, b), "{f:?}");
        }
    }

    #[test]
    fn neighbours_beyond_the_cutoff_add_nothing() {
        // Atom 2 is 5 away from atom 0 (25 >= 16); atom 1 at distance 2:
        // r2inv = 1/4, r6inv = 1/64, s = (1/256) * (1.5/64 - 2).
        let pos = vec![0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 5.0, 0.0];
        let neigh = vec![1, 0, 0, 2, 2, 1];
        let out = gold(&inputs(pos, neigh), &sizes(&[("N", 3), ("M", 2)])).unwrap();
        let f = f32s(&out, "force");
        let s = (1.5 / 64.0 - 2.0) / 256.0;
        assert!(close(f[1], -2.0 * s), "{f:?}");
        assert!(close(f[0], 0.0) && close(f[2], 0.0));
    }

    #[test]
    fn bad_neighbour_index_is_an_error() {
        let r = gold(&inputs(vec![0.0; 8], vec![1, 2]), &sizes(&[("N", 2), ("M", 1)]));
        assert!(r.unwrap_err().to_string().contains("outside"));
    }

    #[test]
    fn cell_list_matches_all_pairs() {
        let s = sizes(&[("N", 700), ("M", 16)]);
        let HostArray::I32(list) = neighbours(&s).unwrap() else { panic!("ints expected") };
        let atoms = atoms(700);
        for i in (0..700).step_by(7) {
            let mut all: Vec<(f64, usize)> = (0..700)
                .filter(|&k| k != i)
                .map(|k| ((0..3).map(|c| (atoms[i][c] as f64 - atoms[k][c] as f64).powi(2)).sum(), k))
                .collect();
            all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let got: Vec<usize> = (0..16).map(|j| list[j * 700 + i] as usize).collect();
            let want: Vec<usize> = all[..16].iter().map(|x| x.1).collect();
            assert_eq!(got, want, "atom {i}");
        }
    }

    #[test]
    fn positions_match_the_neighbour_generator() {
        let HostArray::F32(p) = positions(&sizes(&[("N", 5)])).unwrap() else { panic!("floats expected") };
        let a = atoms(5);
        assert_eq!(p[4..7], a[1]);
        assert_eq!(p[7], 0.0);
        assert!(p.iter().all(|x| (0.0..BOX).contains(x)));
    }

    #[test]
    fn too_few_atoms_is_an_error() {
        assert!(neighbours(&sizes(&[("N", 10), ("M", 10)])).is_err());
    }
}
