//! `benchmarks/generality/suite.yaml`: the programs of the generality
//! suite, their sizes on a GPU and on a CPU device, and, where compute
//! bounds them, the floating-point operations they must do.

use crate::arith::ArithExpr;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The generality suite's folder, relative to the repository root (the
/// default of `lift generality --suite`).
pub const SUITE_DIR: &str = "benchmarks/generality";
/// The manifest's file name inside [`SUITE_DIR`].
pub const MANIFEST: &str = "suite.yaml";

/// Why the manifest cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// The read error names the file itself.
    #[error(transparent)]
    Read(crate::ir::ReadError),
    #[error("{file}: {source}")]
    Syntax { file: String, source: serde_yaml::Error },
    #[error("{file}: program `{name}`: {problem}")]
    Entry {
        file: String,
        name: String,
        /// Boxed: the flops' parse error would make every result large.
        #[source]
        problem: Box<EntryProblem>,
    },
    #[error("{file}: no program named `{name}` (the suite has: {known})")]
    Unknown { file: String, name: String, known: String },
}

/// What is wrong with one program's entry.
#[derive(Debug, thiserror::Error)]
pub enum EntryProblem {
    #[error(transparent)]
    Name(#[from] crate::harness::confine::ConfineError),
    #[error("declared twice")]
    Twice,
    #[error("size {size} = {value}: expected 1 to {MAX_SIZE}")]
    SizeRange { size: String, value: i64 },
    #[error("`sizes` and `cpu` must name the same sizes")]
    SizeNames,
    #[error("flops `{text}`: {source}")]
    Flops { text: String, source: crate::arith::ArithParseError },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    programs: Vec<RawEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    name: String,
    class: String,
    sizes: BTreeMap<String, i64>,
    cpu: BTreeMap<String, i64>,
    flops: Option<String>,
}

/// One program of the suite.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The file `<name>.lift` and its `def <name>`.
    pub name: String,
    pub class: String,
    /// The `.lift` file (under the root).
    pub file: PathBuf,
    /// Sizes on a GPU.
    pub gpu_sizes: BTreeMap<String, i64>,
    /// Sizes on a CPU device.
    pub cpu_sizes: BTreeMap<String, i64>,
    /// The floating-point operations it must do at least.
    pub flops: Option<ArithExpr>,
}

impl Entry {
    /// The sizes for a device.
    pub fn sizes(&self, gpu: bool) -> &BTreeMap<String, i64> {
        if gpu {
            &self.gpu_sizes
        } else {
            &self.cpu_sizes
        }
    }
}

/// The largest size value (32-bit indices).
const MAX_SIZE: i64 = i32::MAX as i64;

/// Reads the manifest of the suite folder `suite` (its `suite.yaml`, the
/// programs beside it; `ROOT/benchmarks/generality` for the generality
/// suite) and keeps the programs of `only` (all when empty), in the
/// manifest's order.
pub fn load(suite: &Path, only: &[String]) -> Result<Vec<Entry>, ManifestError> {
    let path = suite.join(MANIFEST);
    let file = path.display().to_string();
    let text = crate::ir::read_text(&path).map_err(ManifestError::Read)?;
    let raw: RawManifest =
        serde_yaml::from_str(&text).map_err(|source| ManifestError::Syntax { file: file.clone(), source })?;
    let mut out: Vec<Entry> = Vec::new();
    for r in raw.programs {
        let bad = |problem| ManifestError::Entry {
            file: file.clone(),
            name: r.name.clone(),
            problem: Box::new(problem),
        };
        super::super::confine::check_name(&r.name).map_err(|e| bad(e.into()))?;
        if out.iter().any(|e| e.name == r.name) {
            return Err(bad(EntryProblem::Twice));
        }
        for (k, v) in r.sizes.iter().chain(&r.cpu) {
            if !(1..=MAX_SIZE).contains(v) {
                return Err(bad(EntryProblem::SizeRange { size: k.clone(), value: *v }));
            }
        }
        if r.sizes.keys().ne(r.cpu.keys()) {
            return Err(bad(EntryProblem::SizeNames));
        }
        let flops = match &r.flops {
            Some(t) => Some(
                crate::arith::parse_arith(t)
                    .map_err(|source| bad(EntryProblem::Flops { text: t.clone(), source }))?,
            ),
            None => None,
        };
        out.push(Entry {
            file: suite.join(format!("{}.lift", r.name)),
            name: r.name,
            class: r.class,
            gpu_sizes: r.sizes,
            cpu_sizes: r.cpu,
            flops,
        });
    }
    if only.is_empty() {
        return Ok(out);
    }
    for n in only {
        if !out.iter().any(|e| &e.name == n) {
            let known = out.iter().map(|e| e.name.as_str()).collect::<Vec<_>>().join(", ");
            return Err(ManifestError::Unknown { file, name: n.clone(), known });
        }
    }
    out.retain(|e| only.contains(&e.name));
    Ok(out)
}

/// The entry messages no integration test pins, rendered as before.
#[cfg(test)]
mod tests {
    use super::*;

    fn entry(problem: EntryProblem) -> String {
        ManifestError::Entry { file: "suite.yaml".into(), name: "a".into(), problem: Box::new(problem) }
            .to_string()
    }

    #[test]
    fn size_names_differ() {
        assert_eq!(
            entry(EntryProblem::SizeNames),
            "suite.yaml: program `a`: `sizes` and `cpu` must name the same sizes"
        );
    }

    #[test]
    fn flops_do_not_parse() {
        let source = crate::arith::parse_arith("N +").unwrap_err();
        let want = format!("suite.yaml: program `a`: flops `N +`: {source}");
        assert_eq!(entry(EntryProblem::Flops { text: "N +".into(), source }), want);
    }
}
