//! Reference build options and tuning parameters that depend on the size
//! preset and the device: `{expr}` placeholders in `build_options` (integer
//! expressions of the sizes, so a reference learns its sizes at compile
//! time exactly when the Lift program does), and `reference.params`
//! (tuning parameters: passed as `-D` definitions, usable in the
//! reference's expressions, overridden per device).

use super::data::Sizes;
use crate::arith::{parse_arith, ArithExpr, ArithParseError, EvalError};
use std::collections::BTreeMap;

/// Why a `build_options` template could not be read or expanded.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BuildOptsError {
    #[error("`{{` without `}}` in `{0}`")]
    Unclosed(String),
    #[error("`}}` without `{{` in `{0}`")]
    Unopened(String),
    #[error("`{{{text}}}`: bad expression: {source}")]
    BadExpression { text: String, source: ArithParseError },
    #[error("build option `{{{expr}}}`: {source}")]
    Eval { expr: ArithExpr, source: EvalError },
}

/// `template` as literal text and `{expr}` placeholders, in order.
fn pieces(template: &str) -> Result<Vec<(&str, Option<ArithExpr>)>, BuildOptsError> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let close = rest[open..].find('}').ok_or_else(|| BuildOptsError::Unclosed(template.into()))? + open;
        let text = &rest[open + 1..close];
        if rest[..open].contains('}') {
            break;
        }
        let e = parse_arith(text)
            .map_err(|source| BuildOptsError::BadExpression { text: text.into(), source })?;
        out.push((&rest[..open], Some(e)));
        rest = &rest[close + 1..];
    }
    if rest.contains('}') {
        return Err(BuildOptsError::Unopened(template.into()));
    }
    out.push((rest, None));
    Ok(out)
}

/// The `{expr}` placeholders of `template`, parsed.
pub fn placeholders(template: &str) -> Result<Vec<ArithExpr>, BuildOptsError> {
    Ok(pieces(template)?.into_iter().filter_map(|(_, e)| e).collect())
}

/// `template` with each `{expr}` replaced by its value under `sizes`.
pub fn expand(template: &str, sizes: &Sizes) -> Result<String, BuildOptsError> {
    let mut out = String::new();
    for (text, e) in pieces(template)? {
        out.push_str(text);
        if let Some(e) = e {
            let v = e
                .eval_with(&|n| sizes.get(n).copied())
                .map_err(|source| BuildOptsError::Eval { expr: e.clone(), source })?;
            out.push_str(&v.to_string());
        }
    }
    Ok(out)
}

/// The tuning parameters for a device: the defaults, overridden by the
/// first `per_device` entry whose key is a case-insensitive substring of
/// the device's name.
pub fn params_for(
    defaults: &BTreeMap<String, i64>,
    per_device: &[(String, BTreeMap<String, i64>)],
    device: &str,
) -> BTreeMap<String, i64> {
    let mut out = defaults.clone();
    let device = device.to_lowercase();
    if let Some((_, over)) = per_device.iter().find(|(k, _)| device.contains(&k.to_lowercase())) {
        out.extend(over.iter().map(|(k, v)| (k.clone(), *v)));
    }
    out
}

/// The sizes with the tuning parameters added, and the build options with
/// placeholders expanded and each parameter appended as `-DNAME=value`.
pub fn reference_build(
    template: &str,
    sizes: &Sizes,
    params: &BTreeMap<String, i64>,
) -> Result<(Sizes, String), BuildOptsError> {
    let mut all = sizes.clone();
    all.extend(params.iter().map(|(k, v)| (k.clone(), *v)));
    let mut opts = expand(template, &all)?;
    for (k, v) in params {
        if !opts.is_empty() {
            opts.push(' ');
        }
        opts.push_str(&format!("-D{k}={v}"));
    }
    Ok((all, opts))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::types::sizes_of as sizes;

    #[test]
    fn placeholders_are_expanded_per_preset() {
        let s = sizes(&[("N", 4096), ("M", 100)]);
        assert_eq!(
            expand("-cl-mad-enable -DSTATIC_N={N} -DX={M/4}", &s).unwrap(),
            "-cl-mad-enable -DSTATIC_N=4096 -DX=25"
        );
        assert_eq!(expand("-cl-mad-enable", &s).unwrap(), "-cl-mad-enable");
        assert!(expand("-DA={K}", &s).unwrap_err().to_string().contains("K"));
        assert!(placeholders("-DA={N").unwrap_err().to_string().contains("without"));
        assert!(placeholders("-DA=N}").unwrap_err().to_string().contains("without"));
        assert!(placeholders("-DA={N+}").unwrap_err().to_string().contains("bad expression"));
    }

    #[test]
    fn device_entries_override_defaults() {
        let d = BTreeMap::from([("WG".to_string(), 256), ("U".to_string(), 4)]);
        let per = vec![("NVIDIA".to_string(), BTreeMap::from([("WG".to_string(), 128)]))];
        assert_eq!(params_for(&d, &per, "NVIDIA H100 80GB HBM3")["WG"], 128);
        assert_eq!(params_for(&d, &per, "NVIDIA H100 80GB HBM3")["U"], 4);
        assert_eq!(params_for(&d, &per, "cpu-haswell")["WG"], 256);
        let (all, opts) =
            reference_build("-cl-mad-enable -DSTATIC_N={N*U}", &sizes(&[("N", 3)]), &d).unwrap();
        assert_eq!(opts, "-cl-mad-enable -DSTATIC_N=12 -DU=4 -DWG=256");
        assert_eq!(all["WG"], 256);
    }
}
