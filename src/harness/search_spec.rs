//! `explored.explore:` of a config, as written and once checked: what the
//! harness's search (`search`) explores where a device has no committed
//! program. Apart from the search itself so that the config loader, which
//! checks the block, does not import the code that runs it.

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

/// A problem of the block: (key, the value written, message), so that the
/// loader can name the line.
pub(crate) type SpecError = (String, String, String);

/// Checks `explored.explore:`. `presets` are the config's size presets;
/// `rust_gold` whether its gold is a Rust function (`oracle: config` needs
/// one).
pub(crate) fn parse_spec(
    raw: &RawSearch,
    root: &Path,
    presets: &[&str],
    rust_gold: bool,
) -> Result<SearchSpec, SpecError> {
    let key = |k: &str| format!("explored.explore.{k}");
    super::confine::check_inside(root, &raw.program)
        .map_err(|e| (key("program"), raw.program.clone(), e.to_string()))?;
    let program = if root == Path::new(".") { PathBuf::from(&raw.program) } else { root.join(&raw.program) };
    let parsed = crate::parse::load_program(&program).map_err(|e| {
        let first = e.to_string().lines().next().unwrap_or_default().to_string();
        (key("program"), raw.program.clone(), format!("expected a readable Lift program: {first}"))
    })?;
    let (_, parsed) = parsed;
    if parsed.def(&raw.def).is_none() {
        return Err((key("def"), raw.def.clone(), format!("expected a def of {}", raw.program)));
    }
    for (i, t) in raw.then.iter().enumerate() {
        if parsed.def(t).is_none() {
            return Err((
                format!("{}[{i}]", key("then")),
                t.clone(),
                format!("expected a def of {}", raw.program),
            ));
        }
    }
    let preset = |k: String, p: &String| {
        if presets.contains(&p.as_str()) {
            Ok(p.clone())
        } else {
            Err((
                k,
                p.clone(),
                format!("`{p}`: expected a size preset of this config ({})", presets.join(", ")),
            ))
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
        Some("config") => {
            return Err((
                key("oracle"),
                "config".into(),
                "`config` needs a Rust gold (`validation.gold: rust:NAME`); use `interpreter`".into(),
            ))
        }
        Some(o) => {
            return Err((key("oracle"), o.into(), format!("`{o}`: expected `config` or `interpreter`")))
        }
    };
    Ok(SearchSpec { program, def: raw.def.clone(), then: raw.then.clone(), at, valid_at, oracle })
}
