//! N-Body, one step (both the NVIDIA and the AMD benchmark).
//!
//! Bodies are float4: xyz position, w mass. The acceleration of body i is
//! `sum_j m_j * r / (|r|^2 + espSqr)^(3/2)` with `r = p_j - p_i` over all
//! bodies, itself included (r = 0 adds nothing; the softening keeps the
//! denominator positive). The update:
//! `pos' = pos + vel*dt + acc*dt^2/2`, `vel' = vel + acc*dt`, w unchanged.
//! Output `out`: `[N][2]` float4, position then velocity per body, and
//! `out.scale`, each component's error scale: the magnitudes of the
//! update's terms, with the acceleration's sum of term magnitudes weighted
//! by sqrt(N) (the probabilistic bound of an N-term f32 sum, whose errors
//! add like a random walk; the worst case, N, is far from what happens).

use super::{floats, output, scalar, size, Rng};
use crate::harness::data::{Arrays, HostArray, Sizes};
use crate::harness::gold::GoldError;

pub fn gold(inputs: &Arrays, sizes: &Sizes) -> Result<Arrays, GoldError> {
    let n = size(sizes, "N")?;
    let pos = floats(inputs, "pos", 4 * n)?;
    let vel = floats(inputs, "vel", 4 * n)?;
    let esp_sqr = scalar(inputs, "espSqr")? as f64;
    let dt = scalar(inputs, "deltaT")? as f64;

    // Per body 8 values then 8 error scales.
    let mut both = vec![0.0f32; 16 * n];
    // All pairs is O(N^2): spread the bodies over the host's cores.
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get()).min(64);
    let per = n.div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        for (t, chunk) in both.chunks_mut(16 * per).enumerate() {
            let (pos, vel) = (&pos, &vel);
            scope.spawn(move || {
                for (k, o) in chunk.chunks_exact_mut(16).enumerate() {
                    body(pos, vel, t * per + k, esp_sqr, dt, o);
                }
            });
        }
    });
    let (out, scale): (Vec<_>, Vec<_>) = both.chunks_exact(16).map(|b| (&b[..8], &b[8..])).unzip();
    let mut result = output("out", HostArray::F32(out.concat()));
    result.insert("out.scale".into(), HostArray::F32(scale.concat()));
    Ok(result)
}

/// The new position and velocity of body `i` (8 floats into `o`), then
/// their error scales (8 more).
fn body(pos: &[f32], vel: &[f32], i: usize, esp_sqr: f64, dt: f64, o: &mut [f32]) {
    let pi = &pos[4 * i..4 * i + 4];
    // f64 accumulation: the sum has N terms of both signs.
    let mut acc = [0.0f64; 3];
    let mut mag = [0.0f64; 3];
    for pj in pos.chunks_exact(4) {
        let r = [0, 1, 2].map(|c| pj[c] as f64 - pi[c] as f64);
        let dist_sqr = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + esp_sqr;
        let inv = 1.0 / dist_sqr.sqrt();
        let s = pj[3] as f64 * inv * inv * inv;
        for c in 0..3 {
            acc[c] += r[c] * s;
            mag[c] += (r[c] * s).abs();
        }
    }
    let vi = &vel[4 * i..4 * i + 4];
    let walk = (pos.len() as f64 / 4.0).sqrt();
    for c in 0..3 {
        let (p, v) = (pi[c] as f64, vi[c] as f64);
        o[c] = (p + v * dt + 0.5 * acc[c] * dt * dt) as f32;
        o[4 + c] = (v + acc[c] * dt) as f32;
        o[8 + c] = (p.abs() + (v * dt).abs() + 0.5 * walk * mag[c] * dt * dt) as f32;
        o[12 + c] = (v.abs() + walk * mag[c] * dt.abs()) as f32;
    }
    o[3] = pi[3];
    o[7] = vi[3];
    // Copied: exact.
    o[11] = 0.0;
    o[15] = 0.0;
}

/// `nbody_bodies`: N float4 bodies, positions uniform in the cube
/// [-50, 50)^3 and masses uniform in [0.5, 1.5) (positive, unlike a plain
/// random init of all four components). With espSqr = 500 this gives
/// accelerations large enough that one step changes the velocities
/// measurably, so validation sees the interaction, not just the update.
pub fn bodies(sizes: &Sizes, seed: u64) -> Result<HostArray, GoldError> {
    let n = size(sizes, "N")?;
    let mut rng = Rng::new(seed);
    let mut out = Vec::with_capacity(4 * n);
    for _ in 0..n {
        for _ in 0..3 {
            out.push(rng.uniform(-50.0, 50.0));
        }
        out.push(rng.uniform(0.5, 1.5));
    }
    Ok(HostArray::F32(out))
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;

    fn scalars(pos: Vec<f32>, vel: Vec<f32>, esp: f32, dt: f32) -> Arrays {
        arrays(vec![
            ("pos", HostArray::F32(pos)),
            ("vel", HostArray::F32(vel)),
            ("espSqr", HostArray::F32(vec![esp])),
            ("deltaT", HostArray::F32(vec![dt])),
        ])
    }

    #[test]
    fn two_bodies_attract_each_other() {
        // Body 0 at the origin (mass 1), body 1 at x = 3 (mass 2); with
        // espSqr = 16 the distance term is (9 + 16)^(3/2) = 125.
        // acc0 = 2 * 3 / 125 = 0.048 in +x; acc1 = 1 * (-3) / 125 = -0.024.
        let pos = vec![0.0, 0.0, 0.0, 1.0, 3.0, 0.0, 0.0, 2.0];
        let vel = vec![1.0, 0.0, 0.0, 7.0, 0.0, 0.0, 0.0, 0.0];
        let out = gold(&scalars(pos, vel, 16.0, 0.5), &sizes(&[("N", 2)])).unwrap();
        let o = f32s(&out, "out");
        // Body 0: x' = 0 + 1*0.5 + 0.048*0.25/2 = 0.506; vx' = 1 + 0.024.
        assert!(close(o[0], 0.506));
        assert!(close(o[3], 1.0), "mass is kept");
        assert!(close(o[4], 1.024));
        assert!(close(o[7], 7.0), "velocity w is kept");
        // Body 1: x' = 3 - 0.024*0.125 = 2.997; vx' = -0.012.
        assert!(close(o[8], 2.997));
        assert!(close(o[12], -0.012));
        assert!(close(o[9], 0.0) && close(o[13], 0.0));
    }

    #[test]
    fn lone_body_moves_in_a_straight_line() {
        let out = gold(
            &scalars(vec![1.0, 2.0, 3.0, 5.0], vec![0.5, -1.0, 2.0, 0.0], 500.0, 0.1),
            &sizes(&[("N", 1)]),
        )
        .unwrap();
        let o = f32s(&out, "out");
        let want = [1.05, 1.9, 3.2, 5.0, 0.5, -1.0, 2.0, 0.0];
        for (a, b) in o.iter().zip(want) {
            assert!(close(*a, b), "{o:?}");
        }
    }

    #[test]
    fn wrong_lengths_are_errors() {
        let r = gold(&scalars(vec![0.0; 4], vec![0.0; 8], 1.0, 1.0), &sizes(&[("N", 2)]));
        assert!(r.unwrap_err().to_string().contains("pos"));
    }

    #[test]
    fn bodies_have_positive_masses_and_repeat() {
        let s = sizes(&[("N", 100)]);
        let a = bodies(&s, 3).unwrap();
        assert_eq!(a, bodies(&s, 3).unwrap());
        let HostArray::F32(v) = a else { panic!("floats expected") };
        assert_eq!(v.len(), 400);
        assert!(v.chunks(4).all(|b| (0.5..1.5).contains(&b[3]) && b[..3].iter().all(|x| x.abs() <= 50.0)));
    }
}
