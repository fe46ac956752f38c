//! NN (Rodinia) and MRI-Q (Parboil): gold functions over plain random
//! inputs, no generators needed.

use super::{floats, output, scalar, size};
use crate::harness::data::{Arrays, HostArray, Sizes};
use crate::harness::gold::GoldError;

/// NN: `distances[i] = sqrt((lat - locations[i].x)^2 + (lng - locations[i].y)^2)`
/// for N float2 records.
pub fn nn_gold(inputs: &Arrays, sizes: &Sizes) -> Result<Arrays, GoldError> {
    let n = size(sizes, "N")?;
    let loc = floats(inputs, "locations", 2 * n)?;
    let lat = scalar(inputs, "lat")? as f64;
    let lng = scalar(inputs, "lng")? as f64;
    let d = loc
        .chunks_exact(2)
        .map(|r| ((lat - r[0] as f64).powi(2) + (lng - r[1] as f64).powi(2)).sqrt() as f32)
        .collect();
    Ok(output("distances", HostArray::F32(d)))
}

/// MRI-Q: with `phiMag[k] = phiR[k]^2 + phiI[k]^2`, for each of X voxels
/// `Q = sum_k phiMag[k] * (cos, sin)(2*pi*(kx*x + ky*y + kz*z))` over K
/// samples. Output `Q`: float2 [X], (Qr, Qi) per voxel.
pub fn mri_q_gold(inputs: &Arrays, sizes: &Sizes) -> Result<Arrays, GoldError> {
    let x_len = size(sizes, "X")?;
    let k_len = size(sizes, "K")?;
    let get_k = |name| floats(inputs, name, k_len);
    let (kx, ky, kz) = (get_k("kx")?, get_k("ky")?, get_k("kz")?);
    let (phi_r, phi_i) = (get_k("phiR")?, get_k("phiI")?);
    let get_x = |name| floats(inputs, name, x_len);
    let (x, y, z) = (get_x("x")?, get_x("y")?, get_x("z")?);

    let phi_mag: Vec<f64> =
        phi_r.iter().zip(phi_i).map(|(&r, &i)| (r as f64).powi(2) + (i as f64).powi(2)).collect();
    let mut q = Vec::with_capacity(2 * x_len);
    for v in 0..x_len {
        let (xv, yv, zv) = (x[v] as f64, y[v] as f64, z[v] as f64);
        // f64 sums: K terms of both signs that largely cancel.
        let (mut re, mut im) = (0.0f64, 0.0f64);
        for k in 0..k_len {
            let arg = std::f64::consts::TAU * (kx[k] as f64 * xv + ky[k] as f64 * yv + kz[k] as f64 * zv);
            let (s, c) = arg.sin_cos();
            re += phi_mag[k] * c;
            im += phi_mag[k] * s;
        }
        q.push(re as f32);
        q.push(im as f32);
    }
    Ok(output("Q", HostArray::F32(q)))
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;

    #[test]
    fn nn_distances_are_euclidean() {
        let inputs = arrays(vec![
            ("locations", HostArray::F32(vec![3.0, 4.0, 0.0, 0.0, -1.0, 1.0])),
            ("lat", HostArray::F32(vec![0.0])),
            ("lng", HostArray::F32(vec![1.0])),
        ]);
        let d = f32s(&nn_gold(&inputs, &sizes(&[("N", 3)])).unwrap(), "distances");
        // (3,4)-(0,1): sqrt(9+9); (0,0): 1; (-1,1): 1.
        assert!(close(d[0], 18f64.sqrt()) && close(d[1], 1.0) && close(d[2], 1.0), "{d:?}");
    }

    fn mri_inputs(k: [f32; 3], phi: (f32, f32), xyz: [f32; 3]) -> Arrays {
        let one = |v: f32| HostArray::F32(vec![v]);
        arrays(vec![
            ("kx", one(k[0])),
            ("ky", one(k[1])),
            ("kz", one(k[2])),
            ("phiR", one(phi.0)),
            ("phiI", one(phi.1)),
            ("x", one(xyz[0])),
            ("y", one(xyz[1])),
            ("z", one(xyz[2])),
        ])
    }

    #[test]
    fn mri_q_one_sample_one_voxel() {
        // phiMag = 1 + 4 = 5; k.x = 0.5*0.25 + 0 + 0.25*0.5 = 0.25: a quarter
        // turn, so Q = 5 * (cos, sin)(pi/2) = (0, 5).
        let s = sizes(&[("X", 1), ("K", 1)]);
        let q =
            f32s(&mri_q_gold(&mri_inputs([0.5, 2.0, 0.25], (1.0, 2.0), [0.25, 0.0, 0.5]), &s).unwrap(), "Q");
        assert!(close(q[0], 0.0) && close(q[1], 5.0), "{q:?}");
        // At the origin every sample is in phase: Q = (phiMag, 0).
        let q = f32s(&mri_q_gold(&mri_inputs([0.5, 2.0, 0.25], (1.0, 2.0), [0.0; 3]), &s).unwrap(), "Q");
        assert!(close(q[0], 5.0) && close(q[1], 0.0), "{q:?}");
    }

    #[test]
    fn mri_q_missing_sample_array_is_an_error() {
        let mut inputs = mri_inputs([0.0; 3], (0.0, 0.0), [0.0; 3]);
        inputs.remove("kz");
        let err = mri_q_gold(&inputs, &sizes(&[("X", 1), ("K", 1)])).unwrap_err();
        assert!(err.to_string().contains("kz"));
    }
}
