//! K-Means (Rodinia), the membership step: for each of P points the index of
//! the nearest of C cluster centres over F features (squared Euclidean
//! distance, ties to the lower index).
//!
//! Layouts: `features` feature-major, `[F][P]` (feature f of point p at
//! `f * P + p`); `clusters` cluster-major, `[C][F]`. Output `membership`:
//! int [P].
//!
//! The generators put every point near a decision boundary: between two
//! centres a and b, with |x - a|^2 - |x - b|^2 a small but safe fraction of
//! the distances. A kernel that skips a feature, or a cluster, then
//! classifies many points wrongly; a correct kernel in any summation order
//! cannot, since the fraction (>= 1e-4) is far above the f32 error of a
//! 34-term sum of squares (<= about 36 u = 2e-6 relative, u = 2^-24). Both
//! generators rebuild the same centres from a fixed seed, since each is
//! called on its own.

use super::{floats, output, size, Rng};
use crate::harness::data::{Arrays, HostArray, Sizes};
use crate::harness::gold::GoldError;

/// Seed of the centres, shared by both generators.
const CENTRE_SEED: u64 = 0x6b6d_6561_6e73_0001;
/// Seed of the points' assignment and noise.
const POINT_SEED: u64 = 0x6b6d_6561_6e73_0002;
/// Half-width of the uniform noise added to a point, per feature; centres
/// are uniform in [0, 1) per feature.
const NOISE: f32 = 0.1;
/// The margin |d_a^2 - d_b^2| / d^2 of a point is log-uniform in
/// [MARGIN_MIN, MARGIN_MAX] (d^2 the squared distance to the boundary's
/// nearer centre).
const MARGIN_MIN: f64 = 1e-4;
const MARGIN_MAX: f64 = 1e-2;

pub fn gold(inputs: &Arrays, sizes: &Sizes) -> Result<Arrays, GoldError> {
    let p = size(sizes, "P")?;
    let c = size(sizes, "C")?;
    let f = size(sizes, "F")?;
    let features = floats(inputs, "features", f * p)?;
    let clusters = floats(inputs, "clusters", c * f)?;

    let membership = (0..p)
        .map(|pt| {
            let mut best = (f64::INFINITY, 0usize);
            for (k, centre) in clusters.chunks_exact(f).enumerate() {
                let d: f64 = (0..f).map(|l| (features[l * p + pt] as f64 - centre[l] as f64).powi(2)).sum();
                if d < best.0 {
                    best = (d, k);
                }
            }
            best.1 as i32
        })
        .collect();
    Ok(output("membership", HostArray::I32(membership)))
}

fn centres(c: usize, f: usize) -> Vec<f32> {
    let mut rng = Rng::new(CENTRE_SEED);
    (0..c * f).map(|_| rng.uniform(0.0, 1.0)).collect()
}

/// `kmeans_clusters`: float [C][F], uniform in [0, 1).
pub fn clusters(sizes: &Sizes) -> Result<HostArray, GoldError> {
    Ok(HostArray::F32(centres(size(sizes, "C")?, size(sizes, "F")?)))
}

/// `kmeans_features`: float [F][P], stored feature-major: each point on
/// the segment between two random centres, plus noise, moved along the
/// segment until its two nearest centres are those two and their squared
/// distances differ by the drawn margin (either may win).
pub fn features(sizes: &Sizes) -> Result<HostArray, GoldError> {
    let (p, c, f) = (size(sizes, "P")?, size(sizes, "C")?, size(sizes, "F")?);
    if c < 2 {
        return Err(GoldError::OneCluster(c));
    }
    let centres = centres(c, f);
    let centre = |k: usize| &centres[k * f..(k + 1) * f];
    let mut rng = Rng::new(POINT_SEED);
    let mut out = vec![0.0f32; f * p];
    let mut x = vec![0.0f32; f];
    for pt in 0..p {
        let mut tries = 0;
        loop {
            tries += 1;
            if tries > 1000 {
                return Err(GoldError::NoBoundaryPoint(pt));
            }
            let a = rng.below(c);
            let b = (a + 1 + rng.below(c - 1)) % c;
            let (ca, cb) = (centre(a), centre(b));
            let e: Vec<f64> = (0..f).map(|_| rng.uniform(-NOISE, NOISE) as f64).collect();
            // d_a^2 - d_b^2 at x = a + t (b - a) + e is
            // 2 (a + e).(b - a) + |a|^2 - |b|^2 + 2 t |b - a|^2: solve for t.
            let ab2: f64 = (0..f).map(|l| (cb[l] as f64 - ca[l] as f64).powi(2)).sum();
            let base: f64 = (0..f)
                .map(|l| {
                    let (al, bl) = (ca[l] as f64, cb[l] as f64);
                    2.0 * (al + e[l]) * (bl - al) + al * al - bl * bl
                })
                .sum();
            let margin = MARGIN_MIN * (MARGIN_MAX / MARGIN_MIN).powf(rng.uniform(0.0, 1.0) as f64);
            let sign = if rng.below(2) == 0 { -1.0 } else { 1.0 };
            let target = sign * margin * ab2 / 4.0;
            let t = (target - base) / (2.0 * ab2);
            for l in 0..f {
                x[l] = (ca[l] as f64 + t * (cb[l] as f64 - ca[l] as f64) + e[l]) as f32;
            }
            // Check on the rounded point: a and b nearest, their gap safe.
            let mut d: Vec<(f64, usize)> = (0..c)
                .map(|k| ((0..f).map(|l| (x[l] as f64 - centre(k)[l] as f64).powi(2)).sum(), k))
                .collect();
            d.sort_by(|u, v| u.0.total_cmp(&v.0));
            let pair = (d[0].1 == a && d[1].1 == b) || (d[0].1 == b && d[1].1 == a);
            if pair && d[1].0 - d[0].0 >= 0.5 * MARGIN_MIN * d[0].0 {
                break;
            }
        }
        for l in 0..f {
            out[l * p + pt] = x[l];
        }
    }
    Ok(HostArray::F32(out))
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;

    #[test]
    fn nearest_centre_with_feature_major_points() {
        // Two features, three points, two centres (0,0) and (4,4).
        // Points (1,1) -> 0, (3,5) -> 1, (2,2) -> tie (8 and 8) -> 0.
        let features = vec![1.0, 3.0, 2.0, 1.0, 5.0, 2.0];
        let clusters = vec![0.0, 0.0, 4.0, 4.0];
        let inputs =
            arrays(vec![("features", HostArray::F32(features)), ("clusters", HostArray::F32(clusters))]);
        let out = gold(&inputs, &sizes(&[("P", 3), ("C", 2), ("F", 2)])).unwrap();
        assert_eq!(out["membership"], HostArray::I32(vec![0, 1, 0]));
    }

    #[test]
    fn generated_points_lie_near_a_boundary_with_a_safe_margin() {
        let s = sizes(&[("P", 300), ("C", 5), ("F", 34)]);
        let HostArray::F32(x) = features(&s).unwrap() else { panic!("floats expected") };
        let HostArray::F32(cs) = clusters(&s).unwrap() else { panic!("floats expected") };
        let mut winners = [0usize; 5];
        for pt in 0..300 {
            let mut d: Vec<(f64, usize)> = cs
                .chunks(34)
                .enumerate()
                .map(|(k, c)| ((0..34).map(|l| (x[l * 300 + pt] as f64 - c[l] as f64).powi(2)).sum(), k))
                .collect();
            d.sort_by(|a, b| a.0.total_cmp(&b.0));
            let gap = (d[1].0 - d[0].0) / d[0].0;
            // Near the boundary, yet far above f32 rounding (~2e-6).
            assert!((0.4 * MARGIN_MIN..3.0 * MARGIN_MAX).contains(&gap), "point {pt}: gap {gap}");
            winners[d[0].1] += 1;
        }
        assert!(winners.iter().all(|&w| w > 20), "every cluster wins some points: {winners:?}");
    }
}
