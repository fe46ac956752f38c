//! The fourteen stencils of the suite, point by point in f64 (the same
//! formulas as the user functions of `benchmarks/cgo18/*.lift`).

use super::{floats, grid, map3, Boundary, GoldError, Grid};
use crate::harness::data::{Arrays, Sizes};

/// 2D stencil over a clamped grid `a`.
fn stencil_2d(
    inputs: &Arrays,
    sizes: &Sizes,
    f: impl Fn(&Grid, isize, isize) -> f64 + Sync,
) -> Result<Vec<f32>, GoldError> {
    let a = grid(inputs, sizes, "a", Boundary::Clamp)?;
    Ok(map3(1, a.h, a.w, |_, y, x| f(&a, y, x)))
}

/// 3D stencil over a clamped grid `a`.
fn stencil_3d(
    inputs: &Arrays,
    sizes: &Sizes,
    f: impl Fn(&dyn Fn(isize, isize, isize) -> f64) -> f64 + Sync,
) -> Result<Vec<f32>, GoldError> {
    let a = grid(inputs, sizes, "a", Boundary::Clamp)?;
    Ok(map3(a.d, a.h, a.w, |z, y, x| f(&|dz, dy, dx| a.at(z + dz, y + dy, x + dx))))
}

/// SHOC Stencil2D: the interior of an `H x W` grid whose outer ring is a
/// given halo; output `(H-2) x (W-2)`.
pub fn stencil2d(inputs: &Arrays, sizes: &Sizes) -> Result<Vec<f32>, GoldError> {
    let a = grid(inputs, sizes, "a", Boundary::Clamp)?;
    if a.h < 3 || a.w < 3 {
        return Err(GoldError::Stencil2dTooSmall);
    }
    Ok(map3(1, a.h - 2, a.w - 2, |_, y, x| {
        let p = |dy: isize, dx: isize| a.at2(y + 1 + dy, x + 1 + dx);
        0.25 * p(0, 0)
            + 0.15 * (p(-1, 0) + p(1, 0) + p(0, -1) + p(0, 1))
            + 0.05 * (p(-1, -1) + p(-1, 1) + p(1, -1) + p(1, 1))
    }))
}

/// Rodinia SRAD, first kernel: the diffusion coefficient of each pixel.
pub fn srad1(inputs: &Arrays, sizes: &Sizes) -> Result<Vec<f32>, GoldError> {
    let j = grid(inputs, sizes, "J", Boundary::Clamp)?;
    let q0sqr = f64::from(floats(inputs, "q0sqr", 1)?[0]);
    Ok(map3(1, j.h, j.w, |_, y, x| {
        let c = j.at2(y, x);
        let (dn, ds, dw, de) =
            (j.at2(y - 1, x) - c, j.at2(y + 1, x) - c, j.at2(y, x - 1) - c, j.at2(y, x + 1) - c);
        let g2 = (dn * dn + ds * ds + dw * dw + de * de) / (c * c);
        let l = (dn + ds + dw + de) / c;
        let num = 0.5 * g2 - (1.0 / 16.0) * (l * l);
        let den = 1.0 + 0.25 * l;
        let qsqr = num / (den * den);
        let den = (qsqr - q0sqr) / (q0sqr * (1.0 + q0sqr));
        (1.0 / (1.0 + den)).clamp(0.0, 1.0)
    }))
}

/// Rodinia SRAD, second kernel: the image update from the coefficients
/// (the derivatives recomputed from `J`).
pub fn srad2(inputs: &Arrays, sizes: &Sizes) -> Result<Vec<f32>, GoldError> {
    let j = grid(inputs, sizes, "J", Boundary::Clamp)?;
    let c = grid(inputs, sizes, "c", Boundary::Clamp)?;
    Ok(map3(1, j.h, j.w, |_, y, x| {
        let jc = j.at2(y, x);
        let (dn, ds, dw, de) =
            (j.at2(y - 1, x) - jc, j.at2(y + 1, x) - jc, j.at2(y, x - 1) - jc, j.at2(y, x + 1) - jc);
        let (cn, cs, cw, ce) = (c.at2(y, x), c.at2(y + 1, x), c.at2(y, x), c.at2(y, x + 1));
        jc + 0.25 * 0.5 * (cn * dn + cs * ds + cw * dw + ce * de)
    }))
}

/// Rodinia Hotspot, one step.
pub fn hotspot2d(inputs: &Arrays, sizes: &Sizes) -> Result<Vec<f32>, GoldError> {
    let t = grid(inputs, sizes, "temp", Boundary::Clamp)?;
    let p = grid(inputs, sizes, "power", Boundary::Clamp)?;
    Ok(map3(1, t.h, t.w, |_, y, x| {
        let c = t.at2(y, x);
        let (n, s, w, e) = (t.at2(y - 1, x), t.at2(y + 1, x), t.at2(y, x - 1), t.at2(y, x + 1));
        c + 0.5 * (p.at2(y, x) + (s + n - 2.0 * c) * 0.12 + (e + w - 2.0 * c) * 0.1 + (80.0 - c) * 0.0125)
    }))
}

/// Rodinia Hotspot3D, one step.
pub fn hotspot3d(inputs: &Arrays, sizes: &Sizes) -> Result<Vec<f32>, GoldError> {
    let t = grid(inputs, sizes, "temp", Boundary::Clamp)?;
    let p = grid(inputs, sizes, "power", Boundary::Clamp)?;
    Ok(map3(t.d, t.h, t.w, |z, y, x| {
        let a = |dz, dy, dx| t.at(z + dz, y + dy, x + dx);
        0.41 * a(0, 0, 0)
            + 0.1 * a(0, 0, -1)
            + 0.1 * a(0, 0, 1)
            + 0.12 * a(0, 1, 0)
            + 0.12 * a(0, -1, 0)
            + 0.05 * a(-1, 0, 0)
            + 0.05 * a(1, 0, 0)
            + 0.5 * p.at(z, y, x)
            + 0.05 * 80.0
    }))
}

/// Room acoustics (CGO 2018, Section 3.5): zero outside the room; `nn`
/// counts the neighbours inside it; boundary points lose energy.
pub fn acoustic(inputs: &Arrays, sizes: &Sizes) -> Result<Vec<f32>, GoldError> {
    let cur = grid(inputs, sizes, "cur", Boundary::Zero)?;
    let prev = grid(inputs, sizes, "prev", Boundary::Zero)?;
    let l2 = 1.0 / 3.0;
    Ok(map3(cur.d, cur.h, cur.w, |z, y, x| {
        let inside = |v: isize, n: usize| f64::from(u8::from((0..n as isize).contains(&v)));
        let nn = inside(z - 1, cur.d)
            + inside(z + 1, cur.d)
            + inside(y - 1, cur.h)
            + inside(y + 1, cur.h)
            + inside(x - 1, cur.w)
            + inside(x + 1, cur.w);
        let sum = cur.at(z - 1, y, x)
            + cur.at(z + 1, y, x)
            + cur.at(z, y - 1, x)
            + cur.at(z, y + 1, x)
            + cur.at(z, y, x - 1)
            + cur.at(z, y, x + 1);
        let (cf1, cf2) = if nn < 6.0 { (0.99, 1.01) } else { (1.0, 1.0) };
        cf1 * ((2.0 - l2 * nn) * cur.at(z, y, x) + l2 * sum - cf2 * prev.at(z, y, x))
    }))
}

/// 5 x 5 weighted sum with the weights of input `weights` (row-major).
pub fn gaussian(inputs: &Arrays, sizes: &Sizes) -> Result<Vec<f32>, GoldError> {
    let wts = floats(inputs, "weights", 25)?;
    stencil_2d(inputs, sizes, |a, y, x| {
        let mut acc = 0.0;
        for dy in -2..=2isize {
            for dx in -2..=2isize {
                acc += f64::from(wts[((dy + 2) * 5 + dx + 2) as usize]) * a.at2(y + dy, x + dx);
            }
        }
        acc
    })
}

pub fn gradient(inputs: &Arrays, sizes: &Sizes) -> Result<Vec<f32>, GoldError> {
    stencil_2d(inputs, sizes, |a, y, x| {
        let c = a.at2(y, x);
        let sq = |v: f64| (c - v) * (c - v);
        c + 1.0
            / (1e-4 + sq(a.at2(y - 1, x)) + sq(a.at2(y + 1, x)) + sq(a.at2(y, x - 1)) + sq(a.at2(y, x + 1)))
                .sqrt()
    })
}

pub fn jacobi2d5(inputs: &Arrays, sizes: &Sizes) -> Result<Vec<f32>, GoldError> {
    stencil_2d(inputs, sizes, |a, y, x| {
        (5.1 * a.at2(y - 1, x)
            + 12.1 * a.at2(y, x - 1)
            + 15.0 * a.at2(y, x)
            + 12.2 * a.at2(y, x + 1)
            + 5.2 * a.at2(y + 1, x))
            / 118.0
    })
}

pub fn jacobi2d9(inputs: &Arrays, sizes: &Sizes) -> Result<Vec<f32>, GoldError> {
    stencil_2d(inputs, sizes, |a, y, x| {
        (7.1 * a.at2(y - 2, x)
            + 5.1 * a.at2(y - 1, x)
            + 9.2 * a.at2(y, x - 2)
            + 12.1 * a.at2(y, x - 1)
            + 15.0 * a.at2(y, x)
            + 12.2 * a.at2(y, x + 1)
            + 9.3 * a.at2(y, x + 2)
            + 5.2 * a.at2(y + 1, x)
            + 7.2 * a.at2(y + 2, x))
            / 118.0
    })
}

pub fn jacobi3d7(inputs: &Arrays, sizes: &Sizes) -> Result<Vec<f32>, GoldError> {
    stencil_3d(inputs, sizes, |a| {
        0.161 * a(0, 0, 1)
            + 0.162 * a(0, 0, -1)
            + 0.163 * a(0, 1, 0)
            + 0.164 * a(0, -1, 0)
            + 0.165 * a(1, 0, 0)
            + 0.166 * a(-1, 0, 0)
            - 1.67 * a(0, 0, 0)
    })
}

pub fn jacobi3d13(inputs: &Arrays, sizes: &Sizes) -> Result<Vec<f32>, GoldError> {
    stencil_3d(inputs, sizes, |a| {
        0.25 * a(0, 0, 0)
            + 0.061 * a(0, 0, -1)
            + 0.062 * a(0, 0, 1)
            + 0.063 * a(0, -1, 0)
            + 0.064 * a(0, 1, 0)
            + 0.065 * a(-1, 0, 0)
            + 0.066 * a(1, 0, 0)
            + 0.031 * a(0, 0, -2)
            + 0.032 * a(0, 0, 2)
            + 0.033 * a(0, -2, 0)
            + 0.034 * a(0, 2, 0)
            + 0.035 * a(-2, 0, 0)
            + 0.036 * a(2, 0, 0)
    })
}

pub fn poisson(inputs: &Arrays, sizes: &Sizes) -> Result<Vec<f32>, GoldError> {
    stencil_3d(inputs, sizes, |a| {
        let faces = a(0, 0, -1) + a(0, 0, 1) + a(0, -1, 0) + a(0, 1, 0) + a(-1, 0, 0) + a(1, 0, 0);
        let edges = a(0, -1, -1)
            + a(0, -1, 1)
            + a(0, 1, -1)
            + a(0, 1, 1)
            + a(-1, 0, -1)
            + a(-1, 0, 1)
            + a(1, 0, -1)
            + a(1, 0, 1)
            + a(-1, -1, 0)
            + a(-1, 1, 0)
            + a(1, -1, 0)
            + a(1, 1, 0);
        2.666 * a(0, 0, 0) - 0.166 * faces - 0.0833 * edges
    })
}

pub fn heat(inputs: &Arrays, sizes: &Sizes) -> Result<Vec<f32>, GoldError> {
    stencil_3d(inputs, sizes, |a| {
        let c = a(0, 0, 0);
        c + 0.125 * (a(1, 0, 0) - 2.0 * c + a(-1, 0, 0))
            + 0.125 * (a(0, 1, 0) - 2.0 * c + a(0, -1, 0))
            + 0.125 * (a(0, 0, 1) - 2.0 * c + a(0, 0, -1))
    })
}
