//! `halide:` of a config, as written and once checked (the peer's inputs,
//! output and executable; `halide` runs it). Apart from the runner so that
//! the config loader, which checks the section, does not import the code
//! that runs the peer.

use super::config_problem::{ConfigProblem as P, SpecError, INPUT_OR_BUFFER};
use super::run_error::Unavailable;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// `halide:` as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawHalide {
    inputs: Vec<String>,
    output: String,
    #[serde(default)]
    executable: Option<String>,
    /// How the pipeline is scheduled (autoscheduler or tuned tiles), for the record.
    #[serde(default)]
    schedule: String,
}

/// The peer of one benchmark.
#[derive(Clone, Debug)]
pub struct HalideSpec {
    /// Arrays passed as `.npy` files, in order.
    pub inputs: Vec<String>,
    /// The buffer the result is validated as.
    pub output: String,
    /// Where to look for the executable, first match wins.
    pub candidates: Vec<PathBuf>,
    /// The name looked up on the PATH when no candidate exists (only with
    /// `Trust::executables`).
    pub path_name: Option<String>,
    /// Without `Trust::executables`: the repository's `peers/`, which the
    /// executable must resolve into when it runs (links may change after
    /// the config is loaded).
    pub confine_to: Option<PathBuf>,
    pub schedule: String,
}

/// Where a config's executables live, relative to the repository root.
const PEERS_DIR: &str = "peers";

/// Checks `halide:`; errors name the value at fault.
/// `benchmark` is a checked name (`confine::check_name`).
pub(crate) fn parse_spec(
    raw: &RawHalide,
    benchmark: &str,
    root: &Path,
    trust: super::confine::Trust,
    is_array: &dyn Fn(&str) -> bool,
) -> Result<HalideSpec, SpecError> {
    for (i, n) in raw.inputs.iter().enumerate() {
        if !is_array(n) {
            let problem = P::Not { found: n.clone(), what: INPUT_OR_BUFFER };
            return Err(SpecError::at(format!("halide.inputs[{i}]"), n, problem));
        }
    }
    if !is_array(&raw.output) {
        let problem = P::Not { found: raw.output.clone(), what: "a buffer" };
        return Err(SpecError::at("halide.output", &raw.output, problem));
    }
    let mut candidates = Vec::new();
    if let Some(e) = &raw.executable {
        if !trust.executables {
            super::confine::check_inside_dir(root, PEERS_DIR, e)
                .map_err(|err| SpecError::at("halide.executable", e, P::Confine(err)))?;
        }
        candidates.push(root.join(e));
    }
    candidates.push(root.join(PEERS_DIR).join("halide").join("bin").join(benchmark));
    Ok(HalideSpec {
        inputs: raw.inputs.clone(),
        output: raw.output.clone(),
        candidates,
        path_name: trust.executables.then(|| format!("lift-halide-{benchmark}")),
        confine_to: (!trust.executables).then(|| root.join(PEERS_DIR)),
        schedule: raw.schedule.clone(),
    })
}

impl HalideSpec {
    /// The executable to run, or why there is none.
    pub fn executable(&self) -> Result<PathBuf, Unavailable> {
        if let Some(p) = self.candidates.iter().find(|p| p.is_file()) {
            if let Some(dir) = &self.confine_to {
                if !super::confine::resolves_under(dir, p) {
                    return Err(Unavailable::Outside { exe: p.clone(), dir: dir.clone() });
                }
            }
            return Ok(p.clone());
        }
        let tried = self.candidates.clone();
        let Some(name) = &self.path_name else {
            return Err(Unavailable::NoExecutable { tried });
        };
        which::which(name).map_err(|_| Unavailable::NotOnPath { tried, name: name.clone() })
    }
}
