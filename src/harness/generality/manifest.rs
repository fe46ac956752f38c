//! `benchmarks/generality/suite.yaml`: the programs of the generality
//! suite, their sizes on a GPU and on a CPU device, and, where compute
//! bounds them, the floating-point operations they must do.

use crate::arith::ArithExpr;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The manifest's folder, relative to the repository root.
pub const SUITE_DIR: &str = "benchmarks/generality";
/// The manifest's file name inside [`SUITE_DIR`].
pub const MANIFEST: &str = "suite.yaml";

/// Why the manifest cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("{file}: {msg}")]
    Read { file: String, msg: String },
    #[error("{file}: {msg}")]
    Syntax { file: String, msg: String },
    #[error("{file}: program `{name}`: {msg}")]
    Entry { file: String, name: String, msg: String },
    #[error("{file}: no program named `{name}` (the suite has: {known})")]
    Unknown { file: String, name: String, known: String },
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

/// Reads the manifest under `root` and keeps the programs of `only` (all
/// when empty), in the manifest's order.
pub fn load(root: &Path, only: &[String]) -> Result<Vec<Entry>, ManifestError> {
    let path = root.join(SUITE_DIR).join(MANIFEST);
    let file = path.display().to_string();
    let text = crate::ir::read_text(&path)
        .map_err(|e| ManifestError::Read { file: file.clone(), msg: e.to_string() })?;
    let raw: RawManifest = serde_yaml::from_str(&text)
        .map_err(|e| ManifestError::Syntax { file: file.clone(), msg: e.to_string() })?;
    let mut out: Vec<Entry> = Vec::new();
    for r in raw.programs {
        let bad = |msg: String| ManifestError::Entry { file: file.clone(), name: r.name.clone(), msg };
        super::super::confine::check_name(&r.name).map_err(|e| bad(e.to_string()))?;
        if out.iter().any(|e| e.name == r.name) {
            return Err(bad("declared twice".into()));
        }
        for (k, v) in r.sizes.iter().chain(&r.cpu) {
            if !(1..=MAX_SIZE).contains(v) {
                return Err(bad(format!("size {k} = {v}: expected 1 to {MAX_SIZE}")));
            }
        }
        if r.sizes.keys().ne(r.cpu.keys()) {
            return Err(bad("`sizes` and `cpu` must name the same sizes".into()));
        }
        let flops = match &r.flops {
            Some(t) => Some(crate::arith::parse_arith(t).map_err(|e| bad(format!("flops `{t}`: {e}")))?),
            None => None,
        };
        out.push(Entry {
            file: root.join(SUITE_DIR).join(format!("{}.lift", r.name)),
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
