//! BlackScholes: for every stock price `s[i]` the call and put prices of a
//! European option with strike `x`, `t` years to expiry, riskless rate `r`
//! and volatility `v` (scalar inputs), interleaved in `out` (float2 per
//! option). The cumulative normal distribution is the Abramowitz-Stegun
//! polynomial (26.2.17) that the kernels use, evaluated in f64: the gold
//! differs from the kernels by their f32 rounding only, not by the
//! polynomial's own error (below 7.5e-8).

use super::super::part1::{floats, output, scalar, size};
use crate::harness::data::{Arrays, HostArray, Sizes};
use crate::harness::gold::GoldError;

fn cnd(d: f64) -> f64 {
    let k = 1.0 / (1.0 + 0.2316419 * d.abs());
    let poly =
        k * (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429))));
    let c = 0.398_942_280_401_432_7 * (-0.5 * d * d).exp() * poly;
    if d > 0.0 {
        1.0 - c
    } else {
        c
    }
}

/// (call, put) of one option.
pub fn price(s: f64, x: f64, t: f64, r: f64, v: f64) -> (f64, f64) {
    let sqrt_t = t.sqrt();
    let d1 = ((s / x).ln() + (r + 0.5 * v * v) * t) / (v * sqrt_t);
    let d2 = d1 - v * sqrt_t;
    let (c1, c2) = (cnd(d1), cnd(d2));
    let discounted = x * (-r * t).exp();
    (s * c1 - discounted * c2, discounted * (1.0 - c2) - s * (1.0 - c1))
}

pub fn gold(inputs: &Arrays, sizes: &Sizes) -> Result<Arrays, GoldError> {
    let n = size(sizes, "N")?;
    let s = floats(inputs, "s", n)?;
    let [x, t, r, v] = ["x", "t", "r", "v"].map(|k| scalar(inputs, k).map(f64::from));
    let (x, t, r, v) = (x?, t?, r?, v?);
    if x <= 0.0 || t <= 0.0 || v <= 0.0 {
        return Err(GoldError::BlackScholesDomain { x, t, v });
    }
    let mut out = Vec::with_capacity(2 * n);
    for &si in s {
        let (call, put) = price(f64::from(si), x, t, r, v);
        out.push(call as f32);
        out.push(put as f32);
    }
    Ok(output("out", HostArray::F32(out)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn put_call_parity_and_a_textbook_value() {
        // Hull's example: S = 42, K = 40, T = 0.5, r = 0.1, sigma = 0.2
        // gives a call of 4.76 and a put of 0.81.
        let (c, p) = price(42.0, 40.0, 0.5, 0.1, 0.2);
        assert!((c - 4.76).abs() < 5e-3 && (p - 0.81).abs() < 5e-3, "{c} {p}");
        // c - p = S - K e^{-rT} holds exactly for any CND with cnd(-d) = 1 - cnd(d).
        for s in [5.0, 20.0, 30.0] {
            let (c, p) = price(s, 20.0, 2.0, 0.02, 0.3);
            assert!((c - p - (s - 20.0 * (-0.04f64).exp())).abs() < 1e-9);
        }
    }
}
