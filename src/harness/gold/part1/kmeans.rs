//! K-Means (Rodinia), the membership step: for each of P points the index of
//! the nearest of C cluster centres over F features (squared Euclidean
//! distance, ties to the lower index).
//!
//! Layouts: `features` feature-major, `[F][P]` (feature f of point p at
//! `f * P + p`); `clusters` cluster-major, `[C][F]`. Output `membership`:
//! int [P].
//!
//! The generators draw the points around the centres, so each point's
//! nearest centre wins by a wide margin: with independent uniform points, a
//! few of 800K points would have two centres within float rounding of each
//! other, and a correct kernel could pick either. Both generators rebuild the
//! same centres from a fixed seed, since each is called on its own.

use super::{floats, output, size, Rng};
use crate::harness::data::{Arrays, HostArray, Sizes};

/// Seed of the centres, shared by both generators.
const CENTRE_SEED: u64 = 0x6b6d_6561_6e73_0001;
/// Seed of the points' assignment and noise.
const POINT_SEED: u64 = 0x6b6d_6561_6e73_0002;
/// Half-width of the uniform noise around a centre, per feature; centres are
/// uniform in [0, 1) per feature, so in 34 dimensions centres lie about 2.4
/// apart and points within about 0.3 of theirs.
const NOISE: f32 = 0.1;

pub fn gold(inputs: &Arrays, sizes: &Sizes) -> Result<Arrays, String> {
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
pub fn clusters(sizes: &Sizes) -> Result<HostArray, String> {
    Ok(HostArray::F32(centres(size(sizes, "C")?, size(sizes, "F")?)))
}

/// `kmeans_features`: float [F][P]: each point a random centre plus uniform
/// noise in [-NOISE, NOISE) per feature, stored feature-major.
pub fn features(sizes: &Sizes) -> Result<HostArray, String> {
    let (p, c, f) = (size(sizes, "P")?, size(sizes, "C")?, size(sizes, "F")?);
    let centres = centres(c, f);
    let mut rng = Rng::new(POINT_SEED);
    let mut out = vec![0.0f32; f * p];
    for pt in 0..p {
        let k = rng.below(c);
        for l in 0..f {
            out[l * p + pt] = centres[k * f + l] + rng.uniform(-NOISE, NOISE);
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
    fn generated_points_belong_to_their_centres_clearly() {
        let s = sizes(&[("P", 300), ("C", 5), ("F", 34)]);
        let HostArray::F32(x) = features(&s).unwrap() else { panic!("floats expected") };
        let HostArray::F32(cs) = clusters(&s).unwrap() else { panic!("floats expected") };
        for pt in 0..300 {
            let mut d: Vec<f64> = cs
                .chunks(34)
                .map(|c| (0..34).map(|l| (x[l * 300 + pt] as f64 - c[l] as f64).powi(2)).sum())
                .collect();
            d.sort_by(f64::total_cmp);
            // The runner-up is far behind: no float rounding can swap them.
            assert!(d[1] > 2.0 * d[0], "point {pt}: {d:?}");
        }
    }
}
