//! Gold functions of the harness's own first benchmarks (dot, transpose,
//! scal).

use super::{BasicLookup, GoldError};
use crate::harness::data::{Arrays, HostArray, Sizes};

fn f32s<'a>(inputs: &'a Arrays, name: &str) -> Result<&'a [f32], GoldError> {
    match inputs.get(name) {
        Some(HostArray::F32(v)) => Ok(v),
        Some(HostArray::I32(_)) => Err(BasicLookup::NotFloat(name.into()).into()),
        None => Err(BasicLookup::MissingInput(name.into()).into()),
    }
}

fn size(sizes: &Sizes, name: &str) -> Result<usize, GoldError> {
    sizes
        .get(name)
        .and_then(|&v| usize::try_from(v).ok())
        .ok_or_else(|| BasicLookup::MissingSize(name.into()).into())
}

fn one(name: &str, v: Vec<f32>) -> Arrays {
    Arrays::from([(name.to_string(), HostArray::F32(v))])
}

/// `None`: not one of these benchmarks.
pub fn gold(name: &str, inputs: &Arrays, sizes: &Sizes) -> Option<Result<Arrays, GoldError>> {
    Some(match name {
        "dot" => dot(inputs, sizes),
        "transpose" => transpose(inputs, sizes),
        "scal" => scal(inputs, sizes),
        _ => return None,
    })
}

/// Partial dot products of consecutive 128-element chunks (Listing 1).
fn dot(inputs: &Arrays, sizes: &Sizes) -> Result<Arrays, GoldError> {
    let (x, y) = (f32s(inputs, "x")?, f32s(inputs, "y")?);
    let n = size(sizes, "N")?;
    if x.len() != n || y.len() != n || n % 128 != 0 {
        return Err(GoldError::DotLength(n));
    }
    // Accumulate in f64 so the gold is closer to exact than any kernel.
    let partial = x
        .chunks(128)
        .zip(y.chunks(128))
        .map(|(a, b)| a.iter().zip(b).map(|(&p, &q)| p as f64 * q as f64).sum::<f64>() as f32)
        .collect();
    Ok(one("partial", partial))
}

/// `x` has M rows of N; the result has N rows of M.
fn transpose(inputs: &Arrays, sizes: &Sizes) -> Result<Arrays, GoldError> {
    let x = f32s(inputs, "x")?;
    let (m, n) = (size(sizes, "M")?, size(sizes, "N")?);
    if x.len() != m * n {
        return Err(GoldError::TransposeLength { expected: m * n, len: x.len() });
    }
    let mut out = vec![0.0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            out[j * m + i] = x[i * n + j];
        }
    }
    Ok(one("out", out))
}

fn scal(inputs: &Arrays, _sizes: &Sizes) -> Result<Arrays, GoldError> {
    let alpha = *f32s(inputs, "alpha")?.first().ok_or(GoldError::EmptyScalar("alpha"))?;
    Ok(one("out", f32s(inputs, "x")?.iter().map(|&v| alpha * v).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_cases() {
        let sizes = Sizes::from([("M".to_string(), 2), ("N".to_string(), 3)]);
        let x = Arrays::from([("x".to_string(), HostArray::F32(vec![1., 2., 3., 4., 5., 6.]))]);
        let t = transpose(&x, &sizes).unwrap();
        assert_eq!(t["out"], HostArray::F32(vec![1., 4., 2., 5., 3., 6.]));
        let mut s = x.clone();
        s.insert("alpha".into(), HostArray::F32(vec![2.0]));
        assert_eq!(scal(&s, &sizes).unwrap()["out"], HostArray::F32(vec![2., 4., 6., 8., 10., 12.]));
        let n = 256;
        let ones = HostArray::F32(vec![1.0; n]);
        let d = Arrays::from([("x".to_string(), ones.clone()), ("y".to_string(), ones)]);
        let p = dot(&d, &Sizes::from([("N".to_string(), n as i64)])).unwrap();
        assert_eq!(p["partial"], HostArray::F32(vec![128.0, 128.0]));
        assert!(gold("nope", &d, &sizes).is_none());
    }
}
