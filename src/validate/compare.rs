//! Element-wise comparison of a kernel's output with the gold result.

use crate::types::HostArray;

/// The outcome of a comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    pub ok: bool,
    /// Largest |a - g| / |g| over elements with |g| > atol (elements near
    /// zero are judged by atol alone and would make the ratio meaningless).
    pub max_rel_error: f64,
    /// Why it failed, naming the first offending element.
    pub message: String,
}

fn as_f64(a: &HostArray) -> Vec<f64> {
    match a {
        HostArray::F32(v) => v.iter().map(|&x| x as f64).collect(),
        HostArray::I32(v) => v.iter().map(|&x| x as f64).collect(),
    }
}

/// Passes when |a - g| <= atol + rtol * |g| for every element. A NaN in
/// the output passes only where the gold result is NaN at the same
/// element (the same IEEE operation on the same inputs, `sqrt` of a
/// negative or `0 / 0`, is NaN on both sides); a NaN output where the
/// gold is a number fails, and so does a NaN gold against a number. A gold
/// result that is NaN at every element validates nothing (NaN inputs, a
/// kernel that ignores its input would pass): the check fails, see
/// [`all_nan`].
pub fn compare(actual: &HostArray, gold: &HostArray, rtol: f64, atol: f64) -> Check {
    compare_f64(&as_f64(actual), &as_f64(gold), rtol, atol)
}

/// [`compare`] with a per-element error scale from the gold function (the
/// sum of the magnitudes of the terms that make each element): then the
/// bound is atol + rtol * scale, the forward error bound of a float sum,
/// which stays tight where large terms cancel (MD's forces) and |g| alone
/// would force a loose rtol. `max_rel_error` is then |a - g| / scale.
pub fn compare_scaled(
    actual: &HostArray,
    gold: &HostArray,
    scale: Option<&HostArray>,
    rtol: f64,
    atol: f64,
) -> Check {
    match scale {
        None => compare(actual, gold, rtol, atol),
        Some(s) => compare_with(&as_f64(actual), &as_f64(gold), Some(&as_f64(s)), rtol, atol),
    }
}

pub fn compare_f64(a: &[f64], g: &[f64], rtol: f64, atol: f64) -> Check {
    compare_with(a, g, None, rtol, atol)
}

/// A non-empty gold result that is NaN at every element.
pub fn all_nan(g: &[f64]) -> bool {
    !g.is_empty() && g.iter().all(|x| x.is_nan())
}

fn compare_with(a: &[f64], g: &[f64], scale: Option<&[f64]>, rtol: f64, atol: f64) -> Check {
    if let Some(s) = scale.filter(|s| s.len() != g.len()) {
        return Check {
            ok: false,
            max_rel_error: f64::INFINITY,
            message: format!("the gold's error scale has {} elements, the gold result {}", s.len(), g.len()),
        };
    }
    if a.len() != g.len() {
        return Check {
            ok: false,
            max_rel_error: f64::INFINITY,
            message: format!("output has {} elements, the gold result {}", a.len(), g.len()),
        };
    }
    if all_nan(g) {
        return Check {
            ok: false,
            max_rel_error: f64::INFINITY,
            message: format!(
                "the gold result is NaN at all {} elements: nothing to validate against (are the inputs finite?)",
                g.len()
            ),
        };
    }
    let mut max_rel = 0.0f64;
    let mut first_bad: Option<(usize, f64, f64)> = None;
    let mut bad = 0usize;
    for (i, (&x, &y)) in a.iter().zip(g).enumerate() {
        // Identical values pass, NaN and infinities included (their
        // difference is NaN); a NaN or infinity against anything else fails.
        let same = x == y || (x.is_nan() && y.is_nan());
        let diff = if same { 0.0 } else { (x - y).abs() };
        let mag = scale.map_or(y.abs(), |s| s[i]);
        let pass = same || diff <= atol + rtol * mag;
        if mag > atol {
            max_rel = max_rel.max(diff / mag);
        }
        if !pass {
            bad += 1;
            if first_bad.is_none() {
                first_bad = Some((i, x, y));
            }
            if diff.is_nan() {
                max_rel = f64::INFINITY;
            }
        }
    }
    match first_bad {
        None => Check { ok: true, max_rel_error: max_rel, message: String::new() },
        Some((i, x, y)) => Check {
            ok: false,
            max_rel_error: max_rel,
            message: format!("{bad} of {} elements differ; first at [{i}]: got {x}, expected {y}", a.len()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerances_and_failures() {
        let g = HostArray::F32(vec![1.0, 0.0, 100.0]);
        let ok = compare(&HostArray::F32(vec![1.00001, 1e-7, 100.001]), &g, 1e-4, 1e-5);
        assert!(ok.ok && ok.max_rel_error < 2e-5, "{ok:?}");
        let bad = compare(&HostArray::F32(vec![1.0, 0.0, 101.0]), &g, 1e-4, 1e-5);
        assert!(!bad.ok && bad.message.contains("[2]"), "{bad:?}");
        let nan = compare(&HostArray::F32(vec![f32::NAN, 0.0, 100.0]), &g, 1e-4, 1e-5);
        assert!(!nan.ok && nan.max_rel_error.is_infinite());
        // Identical NaN and infinities are no mismatch; an infinity against a finite value is.
        let special = HostArray::F32(vec![f32::NAN, f32::INFINITY, f32::NEG_INFINITY]);
        let same = compare(&special, &special, 1e-4, 1e-5);
        assert!(same.ok && same.max_rel_error == 0.0, "{same:?}");
        let inf = compare(&HostArray::F32(vec![1.0, f32::INFINITY, 100.0]), &g, 1e-4, 1e-5);
        assert!(!inf.ok && inf.message.contains("[1]"), "{inf:?}");
        assert!(!compare(&HostArray::F32(vec![1.0]), &g, 1.0, 1.0).ok);
    }

    #[test]
    fn nan_passes_only_against_nan_and_an_all_nan_gold_fails() {
        let g = HostArray::F32(vec![f32::NAN, 2.0]);
        assert!(compare(&HostArray::F32(vec![f32::NAN, 2.0]), &g, 1e-4, 1e-5).ok);
        let c = compare(&HostArray::F32(vec![f32::NAN, f32::NAN]), &g, 1e-4, 1e-5);
        assert!(!c.ok && c.message.contains("first at [1]: got NaN, expected 2"), "{c:?}");
        assert!(!compare(&HostArray::F32(vec![1.0, 2.0]), &g, 1e-4, 1e-5).ok);
        let nan = HostArray::F32(vec![f32::NAN; 3]);
        let c = compare(&nan, &nan, 1e-4, 1e-5);
        assert!(!c.ok && c.message.starts_with("the gold result is NaN at all 3 elements"), "{c:?}");
        assert!(compare(&HostArray::F32(vec![]), &HostArray::F32(vec![]), 1e-4, 1e-5).ok);
    }

    #[test]
    fn error_scale_replaces_the_gold_magnitude() {
        // 0.01 is the cancelled sum of terms of magnitude 100: an error of
        // 1e-4 is a few ulps of those terms, not 1% of the result.
        let g = HostArray::F32(vec![0.01, 5.0]);
        let scale = HostArray::F32(vec![200.0, 5.0]);
        let a = HostArray::F32(vec![0.0101, 5.00001]);
        assert!(!compare(&a, &g, 1e-5, 0.0).ok);
        let c = compare_scaled(&a, &g, Some(&scale), 1e-5, 0.0);
        assert!(c.ok && (c.max_rel_error - 2e-6).abs() < 1e-7, "{c:?}");
        let off = compare_scaled(&HostArray::F32(vec![0.02, 5.0]), &g, Some(&scale), 1e-5, 0.0);
        assert!(!off.ok, "{off:?}");
        let short = compare_scaled(&a, &g, Some(&HostArray::F32(vec![1.0])), 1e-5, 0.0);
        assert!(!short.ok && short.message.contains("error scale"), "{short:?}");
    }
}
