//! Gold functions of the ICFP 2015 suite that no other suite has: `asum`
//! and `dot` reduced to one scalar (the CGO 2017 `dot` keeps 128-element
//! partial sums) and BlackScholes. scal, gemv and MD reuse the CGO 2017
//! golds (`scal`, `gemv`, `md`): the same computation on the same names.
//! Sums are accumulated in f64, so a config's tolerance measures the
//! kernel's float error alone.

mod blackscholes;

use super::part1::{floats, output, size};
use super::GoldError;
use crate::harness::data::{Arrays, HostArray, Sizes};

/// Gold functions: `icfp15_asum`, `icfp15_dot`, `blackscholes`.
pub fn gold(name: &str, inputs: &Arrays, sizes: &Sizes) -> Option<Result<Arrays, GoldError>> {
    let result = match name {
        "icfp15_asum" => asum(inputs, sizes),
        "icfp15_dot" => dot(inputs, sizes),
        "blackscholes" => blackscholes::gold(inputs, sizes),
        _ => return None,
    };
    Some(result.map_err(|e| GoldError::In { name: name.into(), source: Box::new(e) }))
}

/// `out[0] = sum |x[i]|`.
fn asum(inputs: &Arrays, sizes: &Sizes) -> Result<Arrays, GoldError> {
    let n = size(sizes, "N")?;
    let x = floats(inputs, "x", n)?;
    let s: f64 = x.iter().map(|&v| f64::from(v).abs()).sum();
    Ok(output("out", HostArray::F32(vec![s as f32])))
}

/// `out[0] = sum x[i] * y[i]`.
fn dot(inputs: &Arrays, sizes: &Sizes) -> Result<Arrays, GoldError> {
    let n = size(sizes, "N")?;
    let (x, y) = (floats(inputs, "x", n)?, floats(inputs, "y", n)?);
    let s: f64 = x.iter().zip(y).map(|(&a, &b)| f64::from(a) * f64::from(b)).sum();
    Ok(output("out", HostArray::F32(vec![s as f32])))
}

#[cfg(test)]
mod tests {
    use super::super::part1::test_util::{arrays, f32s, sizes};
    use super::*;

    #[test]
    fn reductions_by_hand() {
        let s = sizes(&[("N", 4)]);
        let a = arrays(vec![
            ("x", HostArray::F32(vec![1.0, -2.0, 3.5, -0.5])),
            ("y", HostArray::F32(vec![2.0; 4])),
        ]);
        assert_eq!(f32s(&gold("icfp15_asum", &a, &s).unwrap().unwrap(), "out"), vec![7.0]);
        assert_eq!(f32s(&gold("icfp15_dot", &a, &s).unwrap().unwrap(), "out"), vec![4.0]);
        assert!(gold("nope", &a, &s).is_none());
        let short = arrays(vec![("x", HostArray::F32(vec![1.0]))]);
        assert!(gold("icfp15_asum", &short, &s).unwrap().unwrap_err().to_string().contains("expected 4"));
    }
}
