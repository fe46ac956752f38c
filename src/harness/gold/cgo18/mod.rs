//! Gold functions of the stencil suite (CGO 2018, Table 1). Every stencil
//! reads its grids through [`Grid`] (clamped or zero boundaries), accumulates
//! in f64 and rounds to f32 once, so the gold is at least as accurate as any
//! kernel and each config's tolerance only covers the kernel's own f32
//! rounding. The formulas and constants are the ones of the Lift programs in
//! `benchmarks/cgo18/` (each config's header says where they come from).
//!
//! Grids are row-major `[D][H][W]` (`[H][W]` in 2D): `x` runs along `W`.

mod formulas;

use super::{floats, size, GoldError};
use crate::harness::data::{Arrays, HostArray, Sizes};

pub fn gold(name: &str, inputs: &Arrays, sizes: &Sizes) -> Option<Result<Arrays, GoldError>> {
    let f: fn(&Arrays, &Sizes) -> Result<Vec<f32>, GoldError> = match name {
        "stencil2d" => formulas::stencil2d,
        "srad1" => formulas::srad1,
        "srad2" => formulas::srad2,
        "hotspot2d" => formulas::hotspot2d,
        "hotspot3d" => formulas::hotspot3d,
        "acoustic" => formulas::acoustic,
        "gaussian" => formulas::gaussian,
        "gradient" => formulas::gradient,
        "jacobi2d-5pt" => formulas::jacobi2d5,
        "jacobi2d-9pt" => formulas::jacobi2d9,
        "jacobi3d-7pt" => formulas::jacobi3d7,
        "jacobi3d-13pt" => formulas::jacobi3d13,
        "poisson" => formulas::poisson,
        "heat" => formulas::heat,
        _ => return None,
    };
    Some(f(inputs, sizes).map(|v| Arrays::from([("out".to_string(), HostArray::F32(v))])))
}

/// Structured inputs: `acoustic_neighbours` gives every point of a
/// `D x H x W` room the number of its 6 neighbours inside the room.
pub fn generate(name: &str, _input: &str, sizes: &Sizes, _seed: u64) -> Option<Result<HostArray, GoldError>> {
    if name != "acoustic_neighbours" {
        return None;
    }
    let dims = (|| Ok::<_, GoldError>((size(sizes, "D")?, size(sizes, "H")?, size(sizes, "W")?)))();
    Some(dims.map(|(d, h, w)| {
        let faces = |v: usize, n: usize| i32::from(v > 0) + i32::from(v + 1 < n);
        let mut out = Vec::with_capacity(d * h * w);
        for z in 0..d {
            for y in 0..h {
                for x in 0..w {
                    out.push(faces(z, d) + faces(y, h) + faces(x, w));
                }
            }
        }
        HostArray::I32(out)
    }))
}

/// What lies outside a grid.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Boundary {
    /// The nearest element inside (`pad(.., clamp)`).
    Clamp,
    /// Zero (`padConst(.., 0.0f)`).
    Zero,
}

/// A read-only grid of `d x h x w` floats with a boundary rule.
pub struct Grid<'a> {
    pub data: &'a [f32],
    pub w: usize,
    pub h: usize,
    pub d: usize,
    pub boundary: Boundary,
}

impl Grid<'_> {
    /// The element at (z, y, x), which may lie outside.
    pub fn at(&self, z: isize, y: isize, x: isize) -> f64 {
        let inside = |v: isize, n: usize| (0..n as isize).contains(&v);
        if self.boundary == Boundary::Zero && !(inside(z, self.d) && inside(y, self.h) && inside(x, self.w)) {
            return 0.0;
        }
        let c = |v: isize, n: usize| v.clamp(0, n as isize - 1) as usize;
        f64::from(self.data[(c(z, self.d) * self.h + c(y, self.h)) * self.w + c(x, self.w)])
    }

    /// 2D access (the grid's only plane).
    pub fn at2(&self, y: isize, x: isize) -> f64 {
        self.at(0, y, x)
    }
}

/// Input `name` as a grid of the sizes `W`, `H` and (when bound) `D`.
pub fn grid<'a>(
    inputs: &'a Arrays,
    sizes: &Sizes,
    name: &str,
    boundary: Boundary,
) -> Result<Grid<'a>, GoldError> {
    let w = size(sizes, "W")?;
    let h = size(sizes, "H")?;
    let d = if sizes.contains_key("D") { size(sizes, "D")? } else { 1 };
    Ok(Grid { data: floats(inputs, name, w * h * d)?, w, h, d, boundary })
}

/// Applies `f(z, y, x)` at every point of a `d x h x w` output, rows
/// spread over the cores (a 512^3 grid is 134M points).
pub fn map3(d: usize, h: usize, w: usize, f: impl Fn(isize, isize, isize) -> f64 + Sync) -> Vec<f32> {
    let mut out = vec![0f32; d * h * w];
    super::par_rows(&mut out, w, |first, rows| {
        for (i, row) in rows.chunks_mut(w).enumerate() {
            let (z, y) = ((first + i) / h.max(1), (first + i) % h.max(1));
            for (x, o) in row.iter_mut().enumerate() {
                *o = f(z as isize, y as isize, x as isize) as f32;
            }
        }
    });
    out
}
