//! `explored.explore:` of a config, as written and once checked: what the
//! harness's search (`search`) explores where a device has no committed
//! program. Apart from the search itself so that the config loader, which
//! checks the block, does not import the code that runs it.

use super::config_problem::{ConfigProblem as P, SpecError};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// `explored.explore:` as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSearch {
    program: String,
    def: String,
    #[serde(default)]
    then: Vec<String>,
    at: String,
    #[serde(default)]
    valid_at: Vec<String>,
    #[serde(default)]
    oracle: Option<String>,
}

/// What validates the candidates of the search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Oracle {
    /// The config's input generators, Rust gold and tolerances
    /// (`lift explore --config`).
    Config,
    /// Random inputs against the interpreter (`lift explore` alone).
    Interpreter,
}

/// The checked block.
#[derive(Clone, Debug)]
pub struct SearchSpec {
    /// The high-level program (its path as the config resolves it).
    pub program: PathBuf,
    pub def: String,
    /// Fixed second stages (`--then`); empty: none.
    pub then: Vec<String>,
    /// The size preset candidates are timed at.
    pub at: String,
    /// Other presets the kept program must fit (`--valid-at`).
    pub valid_at: Vec<String>,
    pub oracle: Oracle,
}

/// Checks `explored.explore:`; errors name the value written, so that the
/// loader can name the line. `presets` are the config's size presets;
/// `rust_gold` whether its gold is a Rust function (`oracle: config` needs
/// one).
pub(crate) fn parse_spec(
    raw: &RawSearch,
    root: &Path,
    presets: &[&str],
    rust_gold: bool,
) -> Result<SearchSpec, SpecError> {
    let key = |k: &str| format!("explored.explore.{k}");
    let no_def = || P::NoDef { program: raw.program.clone() };
    super::confine::check_inside(root, &raw.program)
        .map_err(|e| SpecError::at(key("program"), &raw.program, P::Confine(e)))?;
    let program = if root == Path::new(".") { PathBuf::from(&raw.program) } else { root.join(&raw.program) };
    let parsed = crate::parse::load_program(&program)
        .map_err(|error| SpecError::at(key("program"), &raw.program, P::Unreadable { error }))?;
    let (_, parsed) = parsed;
    if parsed.def(&raw.def).is_none() {
        return Err(SpecError::at(key("def"), &raw.def, no_def()));
    }
    for (i, t) in raw.then.iter().enumerate() {
        if parsed.def(t).is_none() {
            return Err(SpecError::at(format!("{}[{i}]", key("then")), t, no_def()));
        }
    }
    let preset = |k: String, p: &String| {
        if presets.contains(&p.as_str()) {
            Ok(p.clone())
        } else {
            let all = presets.iter().map(|s| s.to_string()).collect();
            Err(SpecError::at(k, p, P::NotPreset { found: p.clone(), presets: all }))
        }
    };
    let at = preset(key("at"), &raw.at)?;
    let valid_at = raw
        .valid_at
        .iter()
        .enumerate()
        .map(|(i, p)| preset(format!("{}[{i}]", key("valid_at")), p))
        .collect::<Result<Vec<_>, _>>()?;
    let oracle = match raw.oracle.as_deref() {
        None | Some("interpreter") => Oracle::Interpreter,
        Some("config") if rust_gold => Oracle::Config,
        Some("config") => return Err(SpecError::at(key("oracle"), "config", P::OracleWithoutRustGold)),
        Some(o) => {
            let what = "`config` or `interpreter`";
            return Err(SpecError::at(key("oracle"), o, P::Expected { found: o.into(), what }));
        }
    };
    Ok(SearchSpec { program, def: raw.def.clone(), then: raw.then.clone(), at, valid_at, oracle })
}
